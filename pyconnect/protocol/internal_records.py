"""Keys and values of the three internal topics (configs, offsets, status), byte-compatible with Java.

Size: over 600 lines because every record of the three internal topics is one table of keys and schemas,
the same bytes as Java's ``KafkaConfigBackingStore``, ``KafkaStatusBackingStore`` and offsets.

Java writes every value with ``JsonConverter`` (``schemas.enable=false``) and every config/status key
with ``StringSerializer``; offsets-topic keys are JSON arrays ``[connector, partition]``. This module is
the one place that knows those bytes:

* :func:`dumps` writes JSON exactly as Jackson does inside ``JsonConverter``: compact, object members
  in the order given (Java writes struct fields in schema order and maps in their iteration order),
  non-ASCII characters raw except characters outside the BMP, which Jackson writes as a pair of
  ``\\uXXXX`` surrogate escapes; control characters as ``\\n``/``\\t``/``\\r``/``\\b``/``\\f`` or
  ``\\u00XX`` (upper-case hex); doubles formatted like ``Double.toString`` (``1.0E7``, ``9.99E-4``),
  NaN and infinities as strings (``"NaN"``).
* :func:`loads` reads JSON like ``JsonConverter.toConnectData``: empty input and ``null`` are a null
  value (a tombstone for the readers), integers become signed 64-bit (Java ``Long``), content after
  the first JSON value is ignored; anything else raises :class:`InternalRecordError`.
* ``encode_*`` return ``(key, value)`` bytes; ``decode_*`` accept what Java's readers accept (fall back
  to defaults where Java does) and raise :class:`InternalRecordError` where Java would log and skip.

Sans-IO, standard library only. The readers (``pyconnect.stores``) own the state machines.
"""

from __future__ import annotations

import base64
import binascii
import decimal
import enum
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyconnect.protocol.javahash import default_hash_order, java_string_hash
from pyconnect.protocol.task_id import ConnectorTaskId


class InternalRecordError(ValueError):
    """A record of an internal topic that cannot be used (Java logs such a record and skips it).

    ``converted`` tells whether Java's ``JsonConverter`` would still have accepted the value bytes;
    the config topic reader advances its offset for such records (Java does), not for unparsable JSON.
    """

    def __init__(self, message: str, *, key: str | None = None, converted: bool = True) -> None:
        super().__init__(message)
        self.key = key
        self.converted = converted


# --------------------------------------------------------------------------------------------------
# Jackson-compatible JSON

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\U00010000-\U0010ffff\ud800-\udfff]')


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    code = ord(char)
    if code >= 0x10000:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04X}\\u{0xDC00 + (code & 0x3FF):04X}"
    return f"\\u{code:04X}"


def _string(value: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, value) + '"'


def java_double_str(value: float) -> str:
    """``Double.toString(value)`` with shortest round-trip digits (JDK 19+; Python's ``repr`` digits).

    Plain notation for magnitudes in [1e-3, 1e7), else ``d.dddE<n>``; always at least one fraction digit.
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0.0"
    if abs(value) == 5e-324:
        return sign + "4.9E-324"
    _, digit_tuple, exp = decimal.Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    assert isinstance(exp, int)
    exponent = len("".join(map(str, digit_tuple))) + exp - 1
    if -3 <= exponent < 7:
        if exponent >= 0:
            integer = digits[: exponent + 1].ljust(exponent + 1, "0")
            fraction = digits[exponent + 1 :] or "0"
        else:
            integer, fraction = "0", "0" * (-exponent - 1) + digits
        return f"{sign}{integer}.{fraction}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def _encode(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        text = java_double_str(value)
        out.append(text if math.isfinite(value) else f'"{text}"')  # Jackson quotes NaN and infinities
    elif isinstance(value, Mapping):
        out.append("{")
        first = True
        for k, v in value.items():
            if not isinstance(k, str):
                raise InternalRecordError(f"JSON object keys must be strings, not {type(k).__name__}")
            if not first:
                out.append(",")
            first = False
            out.append(_string(k))
            out.append(":")
            _encode(v, out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode(item, out)
        out.append("]")
    else:
        raise InternalRecordError(f"cannot write a {type(value).__name__} as JSON")


def dumps(value: Any) -> bytes:
    """``value`` as the bytes Java's ``JsonConverter`` (schemaless) writes for the same data."""
    out: list[str] = []
    _encode(value, out)
    try:
        return "".join(out).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InternalRecordError(f"cannot encode JSON text as UTF-8: {exc}") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON number {name}")


def _wrap_long(text: str) -> int:
    value = int(text)
    if _INT64_MIN <= value <= _INT64_MAX:
        return value
    return ((value - _INT64_MIN) % 2**64) + _INT64_MIN


_DECODER = json.JSONDecoder(parse_int=_wrap_long, parse_constant=_reject_constant)
_WHITESPACE = b" \t\n\r"


def loads(data: bytes | None) -> Any:
    """Parse a value like ``JsonConverter.toConnectData``; ``None``/empty/``null`` give ``None``."""
    if data is None:
        return None
    stripped = data.strip(_WHITESPACE)
    if not stripped:
        return None
    try:
        text = stripped.decode("utf-8")
        value, _end = _DECODER.raw_decode(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise InternalRecordError(f"value is not JSON: {exc}", converted=False) from None
    return value


def java_hash_map_order(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """``mapping`` re-ordered like a default ``java.util.HashMap`` holding the same entries.

    Writers that must produce the exact bytes a Java component writes for a map it builds as a
    ``HashMap`` (e.g. MirrorMaker 2's source partitions) serialize the result of this function.
    """
    return {k: mapping[k] for k in default_hash_order(list(mapping), java_string_hash)}


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "Boolean", int: "Long", float: "Double", str: "String", list: "List", dict: "Map"}.get(
        type(value), type(value).__name__
    )


def _java_split(text: str, sep: str) -> list[str]:
    """``String.split`` with a literal separator: trailing empty strings are removed."""
    parts = text.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


_JAVA_INT = re.compile(r"[+-]?[0-9]+")


def _java_parse_int(text: str) -> int | None:
    if not _JAVA_INT.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**31) <= value < 2**31 else None


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


# --------------------------------------------------------------------------------------------------
# Config topic

CONNECTOR_PREFIX = "connector-"
TASK_PREFIX = "task-"
COMMIT_TASKS_PREFIX = "commit-"
TARGET_STATE_PREFIX = "target-state-"
TASK_COUNT_RECORD_PREFIX = "tasks-fencing-"
SESSION_KEY_KEY = "session-key"
RESTART_PREFIX = "restart-connector-"
LOGGER_CLUSTER_PREFIX = "logger-cluster-"


class TargetState(enum.Enum):
    """What the cluster wants a connector to do (REST's ``RUNNING`` is ``STARTED``)."""

    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"


Properties = Mapping[str, str | None]


def _properties(value: Any, what: str, key: str) -> dict[str, str | None]:
    if not isinstance(value, dict):
        raise InternalRecordError(
            f"Ignoring {what} because the value is not a Map but is {_type_name(value)}", key=key
        )
    props = value.get("properties")
    if not isinstance(props, dict):
        raise InternalRecordError(
            f"Invalid data for {what}: 'properties' field should be a Map but is {_type_name(props)}", key=key
        )
    # Java keeps such a map as is (its values are not checked until the config is parsed), so the
    # record still counts; a non-string value is kept as its JSON text.
    return {k: v if v is None or isinstance(v, str) else dumps(v).decode("utf-8") for k, v in props.items()}


@dataclass(frozen=True, slots=True)
class ConnectorConfigRecord:
    """``connector-C``: the raw connector config; ``properties=None`` is the deletion tombstone."""

    connector: str
    properties: Properties | None

    @property
    def key(self) -> str:
        return CONNECTOR_PREFIX + self.connector

    def value(self) -> Any:
        return None if self.properties is None else {"properties": dict(self.properties)}


@dataclass(frozen=True, slots=True)
class TaskConfigRecord:
    """``task-C-N``: one task's config, staged until the next ``commit-C``. ``None`` = tombstone (ignored)."""

    task_id: ConnectorTaskId
    properties: Properties | None

    @property
    def key(self) -> str:
        return f"{TASK_PREFIX}{self.task_id.connector}-{self.task_id.task}"

    def value(self) -> Any:
        return None if self.properties is None else {"properties": dict(self.properties)}


@dataclass(frozen=True, slots=True)
class CommitRecord:
    """``commit-C``: applies the staged task configs ``0..tasks-1`` of ``connector``."""

    connector: str
    tasks: int

    @property
    def key(self) -> str:
        return COMMIT_TASKS_PREFIX + self.connector

    def value(self) -> Any:
        return {"tasks": self.tasks}


@dataclass(frozen=True, slots=True)
class TargetStateRecord:
    """``target-state-C``; ``state=None`` is the tombstone written when the connector is deleted.

    Written as ``{"state": <v1>, "state.v2": <state>}`` where v1 is ``PAUSED`` for ``STOPPED`` so that
    pre-3.5 workers pause the connector.
    """

    connector: str
    state: TargetState | None

    @property
    def key(self) -> str:
        return TARGET_STATE_PREFIX + self.connector

    def value(self) -> Any:
        if self.state is None:
            return None
        v1 = TargetState.PAUSED if self.state is TargetState.STOPPED else self.state
        return {"state": v1.value, "state.v2": self.state.value}


@dataclass(frozen=True, slots=True)
class TaskCountRecord:
    """``tasks-fencing-C`` (KIP-618): the task count whose zombies were fenced out."""

    connector: str
    task_count: int

    @property
    def key(self) -> str:
        return TASK_COUNT_RECORD_PREFIX + self.connector

    def value(self) -> Any:
        return {"task-count": self.task_count}


@dataclass(frozen=True, slots=True)
class SessionKeyRecord:
    """``session-key`` (KIP-507): the raw key, its JCA algorithm name and creation time (epoch ms)."""

    key_bytes: bytes
    algorithm: str
    creation_timestamp: int

    @property
    def key(self) -> str:
        return SESSION_KEY_KEY

    def value(self) -> Any:
        return {
            "key": base64.b64encode(self.key_bytes).decode("ascii"),
            "algorithm": self.algorithm,
            "creation-timestamp": self.creation_timestamp,
        }


@dataclass(frozen=True, slots=True)
class RestartRequest:
    """``restart-connector-C``: restart the connector (and its tasks if ``include_tasks``)."""

    connector: str
    only_failed: bool = False
    include_tasks: bool = False

    @property
    def key(self) -> str:
        return RESTART_PREFIX + self.connector

    def value(self) -> Any:
        return {"include-tasks": self.include_tasks, "only-failed": self.only_failed}


@dataclass(frozen=True, slots=True)
class LoggerLevelRecord:
    """``logger-cluster-<namespace>`` (KIP-976): a cluster-wide log level for a logger namespace."""

    namespace: str
    level: str

    @property
    def key(self) -> str:
        return LOGGER_CLUSTER_PREFIX + self.namespace

    def value(self) -> Any:
        return {"level": self.level}


ConfigRecord = (
    ConnectorConfigRecord
    | TaskConfigRecord
    | CommitRecord
    | TargetStateRecord
    | TaskCountRecord
    | SessionKeyRecord
    | RestartRequest
    | LoggerLevelRecord
)


def encode_config_record(record: ConfigRecord) -> tuple[bytes, bytes | None]:
    """Key and value bytes of a config topic record (value ``None`` = tombstone)."""
    value = record.value()
    return record.key.encode("utf-8"), None if value is None else dumps(value)


def decode_key(key: bytes | None) -> str:
    """A config/status key as Java's ``StringDeserializer`` reads it."""
    if key is None:
        raise InternalRecordError("record has a null key")
    return key.decode("utf-8", errors="replace")


def parse_task_key(key: str) -> ConnectorTaskId | None:
    """``task-C-N`` -> ``ConnectorTaskId(C, N)`` as Java parses it (``None`` when it cannot)."""
    parts = _java_split(key, "-")
    if len(parts) < 3:
        return None
    number = _java_parse_int(parts[-1])
    if number is None:
        return None
    return ConnectorTaskId("-".join(parts[1:-1]), number)


def _int_field(value: Any, name: str, what: str, key: str) -> int:
    if not isinstance(value, dict):
        raise InternalRecordError(
            f"Ignoring {what} because it is in the wrong format: {_type_name(value)}", key=key
        )
    number = value.get(name)
    if isinstance(number, bool) or not isinstance(number, int):
        raise InternalRecordError(
            f"Ignoring {what}: '{name}' should be an integer but is {_type_name(number)}", key=key
        )
    return _int32(number)


def decode_config_value(key: str, value: Any) -> ConfigRecord:
    """The record for a config topic ``key`` and its parsed value (``loads``); ``None`` = tombstone.

    Prefixes are tested in the order of Java's reader. Raises :class:`InternalRecordError` for
    records Java's reader logs and ignores.
    """
    if key.startswith(TARGET_STATE_PREFIX):
        connector = key[len(TARGET_STATE_PREFIX) :]
        if value is None:
            return TargetStateRecord(connector, None)
        if not isinstance(value, dict):
            raise InternalRecordError(
                f"Ignoring target state for connector '{connector}' because it is in the wrong format: {_type_name(value)}",
                key=key,
            )
        state = value.get("state.v2")
        if not isinstance(state, str):
            state = value.get("state")
            if not isinstance(state, str):
                raise InternalRecordError(
                    f"Invalid data for target state for connector '{connector}': 'state' field should be a String "
                    f"but is {_type_name(state)}",
                    key=key,
                )
        try:
            return TargetStateRecord(connector, TargetState(state))
        except ValueError:
            raise InternalRecordError(
                f"Invalid target state for connector '{connector}': {state}", key=key
            ) from None
    if key.startswith(CONNECTOR_PREFIX):
        connector = key[len(CONNECTOR_PREFIX) :]
        if value is None:
            return ConnectorConfigRecord(connector, None)
        return ConnectorConfigRecord(
            connector, _properties(value, f"config for connector '{connector}'", key)
        )
    if key.startswith(TASK_PREFIX):
        task_id = parse_task_key(key)
        if task_id is None:
            raise InternalRecordError(
                f"Ignoring task configuration because {key} couldn't be parsed as a task config key", key=key
            )
        if value is None:
            return TaskConfigRecord(task_id, None)
        return TaskConfigRecord(task_id, _properties(value, f"config of task {task_id}", key))
    if key.startswith(COMMIT_TASKS_PREFIX):
        connector = key[len(COMMIT_TASKS_PREFIX) :]
        what = f"connector tasks configuration commit for connector '{connector}'"
        return CommitRecord(connector, _int_field(value, "tasks", what, key))
    if key.startswith(RESTART_PREFIX):
        connector = key[len(RESTART_PREFIX) :]
        if not isinstance(value, dict):
            raise InternalRecordError(
                f"Ignoring restart request because the value is not a Map but is {_type_name(value)}", key=key
            )
        only_failed = value.get("only-failed")
        include_tasks = value.get("include-tasks")
        return RestartRequest(
            connector,
            only_failed=only_failed if isinstance(only_failed, bool) else False,
            include_tasks=include_tasks if isinstance(include_tasks, bool) else False,
        )
    if key.startswith(TASK_COUNT_RECORD_PREFIX):
        connector = key[len(TASK_COUNT_RECORD_PREFIX) :]
        return TaskCountRecord(
            connector, _int_field(value, "task-count", f"task count record for connector '{connector}'", key)
        )
    if key == SESSION_KEY_KEY:
        if not isinstance(value, dict):
            raise InternalRecordError(
                f"Ignoring session key because the value is not a Map but is {_type_name(value)}", key=key
            )
        encoded, algorithm, created = (
            value.get("key"),
            value.get("algorithm"),
            value.get("creation-timestamp"),
        )
        if not isinstance(encoded, str):
            raise InternalRecordError("Invalid data for session key 'key' field should be a String", key=key)
        if not isinstance(algorithm, str):
            raise InternalRecordError(
                "Invalid data for session key 'algorithm' field should be a String", key=key
            )
        if isinstance(created, bool) or not isinstance(created, int):
            raise InternalRecordError(
                "Invalid data for session key 'creation-timestamp' field should be a long", key=key
            )
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise InternalRecordError(
                "Invalid data for session key 'key' field: not Base64", key=key
            ) from None
        return SessionKeyRecord(raw, algorithm, created)
    if key.startswith(LOGGER_CLUSTER_PREFIX):
        namespace = key[len(LOGGER_CLUSTER_PREFIX) :]
        if not isinstance(value, dict):
            raise InternalRecordError(
                f"Ignoring logging level for namespace {namespace} because the value is not a Map but is {_type_name(value)}",
                key=key,
            )
        level = value.get("level")
        if not isinstance(level, str):
            raise InternalRecordError(
                f"Invalid data for logging level key 'level' field with namespace {namespace}; should be a String",
                key=key,
            )
        return LoggerLevelRecord(namespace, level)
    raise InternalRecordError(f"Discarding config update record with invalid key: {key}", key=key)


def decode_config_record(key: bytes | None, value: bytes | None) -> ConfigRecord:
    """Decode one config topic record from its bytes (see :func:`decode_config_value`)."""
    return decode_config_value(decode_key(key), loads(value))


# --------------------------------------------------------------------------------------------------
# Offsets topic


def validate_offset_map(data: Mapping[str, Any] | None, what: str = "Offsets") -> None:
    """Java's ``OffsetUtils.validateFormat``: string keys and primitive (or null) values only."""
    if data is None:
        return
    if not isinstance(data, Mapping):
        raise InternalRecordError(f"{what} must be specified as a Map")
    for k, v in data.items():
        if not isinstance(k, str):
            raise InternalRecordError(f"{what} may only use String keys")
        if v is not None and not isinstance(v, str | int | float | bool):
            raise InternalRecordError(
                f"{what} may only contain primitive types as values, but field {k} contains {type(v).__name__}"
            )


def encode_offset_key(connector: str, partition: Mapping[str, Any] | None) -> bytes:
    """``[connector, partition]`` bytes; entries in ``partition`` iteration order (see :func:`java_hash_map_order`)."""
    validate_offset_map(partition, "Partitions")
    return dumps([connector, None if partition is None else dict(partition)])


def encode_offset_value(offset: Mapping[str, Any] | None) -> bytes | None:
    """The offset map's bytes; ``None`` (offset reset/deleted) is a tombstone."""
    validate_offset_map(offset)
    return None if offset is None else dumps(dict(offset))


def decode_offset_key(key: bytes | None) -> tuple[str, dict[str, Any] | None]:
    """``(connector, partition)`` of an offsets-topic key; raises for keys Java's partition tracking skips.

    Java requires a 2-element array whose first element is a string; a null partition is legal but
    is not tracked as a connector partition.
    """
    if key is None:
        raise InternalRecordError("Ignoring offset partition key with an unexpected null value")
    parsed = loads(key)
    if not isinstance(parsed, list):
        raise InternalRecordError(
            f"Ignoring offset partition key with an unexpected format: {_type_name(parsed)}"
        )
    if len(parsed) != 2:
        raise InternalRecordError(
            f"Ignoring offset partition key with an unexpected number of elements: {len(parsed)}"
        )
    connector, partition = parsed
    if not isinstance(connector, str):
        raise InternalRecordError(
            f"Ignoring offset partition key whose first element is a {_type_name(connector)}"
        )
    if partition is not None and not isinstance(partition, dict):
        raise InternalRecordError(
            f"Ignoring offset partition key whose second element is a {_type_name(partition)}"
        )
    return connector, partition


def decode_offset_value(value: bytes | None) -> dict[str, Any] | None:
    """The offset map (``None`` for a tombstone)."""
    parsed = loads(value)
    if parsed is not None and not isinstance(parsed, dict):
        raise InternalRecordError(f"offset value is a {_type_name(parsed)}, not a Map")
    return parsed


def freeze(value: Any) -> Any:
    """A hashable form of a parsed JSON value that compares like the Java objects do.

    ``1``, ``1.0`` and ``true`` are different keys in Java (``Long``, ``Double``, ``Boolean``); maps
    compare regardless of entry order.
    """
    if isinstance(value, dict):
        return ("map", frozenset((k, freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("list", tuple(freeze(v) for v in value))
    return (type(value).__name__, value)


# --------------------------------------------------------------------------------------------------
# Status topic

CONNECTOR_STATUS_PREFIX = "status-connector-"
TASK_STATUS_PREFIX = "status-task-"
TOPIC_STATUS_PREFIX = "status-topic-"
TOPIC_STATUS_SEPARATOR = ":connector-"


class State(enum.Enum):
    """Java ``AbstractStatus.State``. ``DESTROYED`` is never stored: it is written as a tombstone."""

    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    FAILED = "FAILED"
    DESTROYED = "DESTROYED"
    RESTARTING = "RESTARTING"
    STOPPED = "STOPPED"


@dataclass(frozen=True, slots=True)
class ConnectorStatus:
    """``status-connector-C``. ``version`` is the connector plugin version (null when not running)."""

    connector: str
    state: State
    worker_id: str | None
    generation: int
    trace: str | None = None
    version: str | None = None

    @property
    def key(self) -> str:
        return CONNECTOR_STATUS_PREFIX + self.connector


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """``status-task-C-N``; same value shape as :class:`ConnectorStatus`."""

    task_id: ConnectorTaskId
    state: State
    worker_id: str | None
    generation: int
    trace: str | None = None
    version: str | None = None

    @property
    def connector(self) -> str:
        return self.task_id.connector

    @property
    def key(self) -> str:
        return f"{TASK_STATUS_PREFIX}{self.task_id.connector}-{self.task_id.task}"


@dataclass(frozen=True, slots=True)
class TopicStatus:
    """``status-topic-<topic>:connector-C`` (KIP-558): a topic the connector's task ``task`` used."""

    topic: str
    connector: str
    task: int
    discover_timestamp: int

    @property
    def key(self) -> str:
        return topic_status_key(self.topic, self.connector)


def topic_status_key(topic: str, connector: str) -> str:
    return f"{TOPIC_STATUS_PREFIX}{topic}{TOPIC_STATUS_SEPARATOR}{connector}"


@dataclass(frozen=True, slots=True)
class StatusKey:
    """A parsed status topic key: connector status (``task``/``topic`` None), task status or topic status."""

    connector: str
    task: int | None = None
    topic: str | None = None
    raw: str = field(default="", compare=False)

    @property
    def task_id(self) -> ConnectorTaskId:
        assert self.task is not None
        return ConnectorTaskId(self.connector, self.task)


Status = ConnectorStatus | TaskStatus


def encode_status(status: Status) -> tuple[bytes, bytes | None]:
    """Key and value of a connector/task status; ``DESTROYED`` is a tombstone."""
    key = status.key.encode("utf-8")
    if status.state is State.DESTROYED:
        return key, None
    return key, dumps(
        {
            "state": status.state.value,
            "trace": status.trace,
            "worker_id": status.worker_id,
            "generation": status.generation,
            "version": status.version,
        }
    )


def encode_topic_status(status: TopicStatus) -> tuple[bytes, bytes]:
    return status.key.encode("utf-8"), dumps(
        {
            "topic": {
                "name": status.topic,
                "connector": status.connector,
                "task": status.task,
                "discoverTimestamp": status.discover_timestamp,
            }
        }
    )


def encode_topic_status_tombstone(topic: str, connector: str) -> tuple[bytes, None]:
    return topic_status_key(topic, connector).encode("utf-8"), None


def parse_status_key(key: str) -> StatusKey:
    """Parse a status key the way Java's ``KafkaStatusBackingStore.read`` does."""
    if key.startswith(CONNECTOR_STATUS_PREFIX):
        connector = key[len(CONNECTOR_STATUS_PREFIX) :]
        if not connector:
            raise InternalRecordError(f"Discarding record with invalid connector status key {key}", key=key)
        return StatusKey(connector, raw=key)
    if key.startswith(TASK_STATUS_PREFIX):
        parts = _java_split(key, "-")
        number = _java_parse_int(parts[-1]) if len(parts) >= 4 else None
        if number is None:
            raise InternalRecordError(f"Discarding record with invalid task status key {key}", key=key)
        return StatusKey("-".join(parts[2:-1]), task=number, raw=key)
    if key.startswith(TOPIC_STATUS_PREFIX):
        delimiter = key.find(":")
        begin = len(TOPIC_STATUS_PREFIX)
        if begin > delimiter:
            raise InternalRecordError(f"Discarding record with invalid topic status key {key}", key=key)
        topic = key[begin:delimiter]
        if not topic:
            raise InternalRecordError(
                f"Discarding record with invalid topic status key containing empty topic {key}", key=key
            )
        begin = delimiter + len(TOPIC_STATUS_SEPARATOR)
        if begin > len(key):
            raise InternalRecordError(f"Discarding record with invalid topic status key {key}", key=key)
        connector = key[begin:]
        if not connector:
            raise InternalRecordError(
                f"Discarding record with invalid topic status key containing empty connector {key}", key=key
            )
        return StatusKey(connector, topic=topic, raw=key)
    raise InternalRecordError(f"Discarding record with invalid key {key}", key=key)


def _status_fields(value: Any, key: str) -> tuple[State, str | None, str | None, int, str | None]:
    if not isinstance(value, dict):
        raise InternalRecordError(f"Invalid status type {_type_name(value)}", key=key)
    state, trace, worker, generation, version = (
        value.get("state"),
        value.get("trace"),
        value.get("worker_id"),
        value.get("generation"),
        value.get("version"),
    )
    if not isinstance(state, str) or state not in State.__members__:
        raise InternalRecordError(f"Failed to deserialize status: invalid state {state!r}", key=key)
    for name, text in (("trace", trace), ("worker_id", worker), ("version", version)):
        if text is not None and not isinstance(text, str):
            raise InternalRecordError(
                f"Failed to deserialize status: '{name}' is a {_type_name(text)}", key=key
            )
    if isinstance(generation, bool) or not isinstance(generation, int):
        raise InternalRecordError(
            f"Failed to deserialize status: 'generation' is a {_type_name(generation)}", key=key
        )
    return State(state), trace, worker, _int32(generation), version


def decode_status_value(key: StatusKey, value: Any) -> ConnectorStatus | TaskStatus | TopicStatus | None:
    """The status for a parsed key and parsed value; ``None`` for a tombstone."""
    if value is None:
        return None
    if key.topic is not None:
        inner = value.get("topic") if isinstance(value, dict) else None
        if not isinstance(inner, dict):
            raise InternalRecordError(f"Invalid topic status value {value!r}", key=key.raw)
        name, connector, task, discovered = (
            inner.get("name"),
            inner.get("connector"),
            inner.get("task"),
            inner.get("discoverTimestamp"),
        )
        if not (isinstance(name, str | None) and isinstance(connector, str | None)):
            raise InternalRecordError(
                "Failed to deserialize topic status: name/connector are not strings", key=key.raw
            )
        for number in (task, discovered):
            if isinstance(number, bool) or not isinstance(number, int):
                raise InternalRecordError(
                    "Failed to deserialize topic status: task/discoverTimestamp are not integers", key=key.raw
                )
        return TopicStatus(name, connector, _int32(task), discovered)  # type: ignore[arg-type]
    state, trace, worker, generation, version = _status_fields(value, key.raw)
    if key.task is not None:
        return TaskStatus(key.task_id, state, worker, generation, trace, version)
    return ConnectorStatus(key.connector, state, worker, generation, trace, version)


def decode_status_record(
    key: bytes | None, value: bytes | None
) -> tuple[StatusKey, ConnectorStatus | TaskStatus | TopicStatus | None]:
    """Parse a status topic record into its key and status (``None`` = tombstone)."""
    text = decode_key(key)
    parsed_key = parse_status_key(text)
    if value is None:
        return parsed_key, None
    parsed = loads(value)
    if parsed is None:
        raise InternalRecordError(f"Failed to deserialize status with key {text}: empty value", key=text)
    return parsed_key, decode_status_value(parsed_key, parsed)
