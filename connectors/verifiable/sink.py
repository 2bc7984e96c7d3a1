"""Port of Java's ``VerifiableSinkConnector`` / ``VerifiableSinkTask`` (``org.apache.kafka.connect.tools``):
the counterpart of the verifiable source, which relies on the framework's offset management and so
shows its delivery guarantee.

Task config keys: ``name`` (connector name) and ``id`` (task number, added per task by the
connector). For each record ``put`` emits one JSON line ``{"name", "task" (the record key: the
source task), "sinkTask", "topic", "time_ms", "seqno" (the record value), "offset"}`` and, when its
partition is flushed, the same line again with ``"flushed": true`` and the flush time, in Java's key
order (a ``HashMap``'s). Java prints them to stdout; here they go to the
``connectors.verifiable.sink`` logger at DEBUG, and also to stdout with ``verifiable.stdout=true``
(an addition of this port, as for the source).
"""

from __future__ import annotations

import logging
import re
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pyconnect
from pyconnect.api.converters.jackson import dumps
from pyconnect.api.data import Struct
from pyconnect.api.sink import SinkConnector, SinkRecord, SinkTask, TopicPartition
from pyconnect.config.definition import ConfigDef
from pyconnect.errors import ConnectError
from pyconnect.protocol.javahash import hash_order, java_string_hash

log = logging.getLogger(__name__)

NAME_CONFIG = "name"
ID_CONFIG = "id"
STDOUT_CONFIG = "verifiable.stdout"
_KEYS = ("name", "task", "sinkTask", "topic", "time_ms", "seqno", "offset")
_ORDER = hash_order(list(_KEYS), java_string_hash)
_FLUSHED_ORDER = hash_order([*_KEYS, "flushed"], java_string_hash)
_JAVA_INT = re.compile(r"[+-]?\d+")


def _json_value(value: Any) -> Any:
    if isinstance(value, Struct):
        return {f.name: _json_value(value.get(f.name)) for f in value.schema.fields}
    return value


class VerifiableSinkConnector(SinkConnector):
    """Creates ``tasks.max`` tasks, each the connector config plus its ``id``."""

    def __init__(self) -> None:
        self._config: dict[str, str] = {}

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    def start(self, props: Mapping[str, str]) -> None:
        self._config = dict(props)

    def task_class(self) -> type:
        return VerifiableSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self._config, ID_CONFIG: str(i)} for i in range(max_tasks)]

    def stop(self) -> None:
        return None

    def config(self) -> ConfigDef:
        return ConfigDef()


class VerifiableSinkTask(SinkTask):
    java_class = "org.apache.kafka.connect.tools.VerifiableSinkTask"

    def __init__(self) -> None:
        self._unflushed: dict[TopicPartition, list[dict[str, Any]]] = {}
        self.stdout = False

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    def start(self, props: Mapping[str, str]) -> None:
        self.name = props.get(NAME_CONFIG)
        raw_id = props.get(ID_CONFIG)
        if raw_id is None or not _JAVA_INT.fullmatch(raw_id) or not -(2**31) <= int(raw_id) < 2**31:
            raise ConnectError("Invalid VerifiableSourceTask configuration")
        self.id = int(raw_id)
        self.stdout = str(props.get(STDOUT_CONFIG)).lower() == "true"

    def _emit(self, data: dict[str, Any], order: list[str]) -> None:
        line = dumps({k: _json_value(data[k]) for k in order}).decode()
        log.debug("%s", line)
        if self.stdout:
            sys.stdout.write(line + "\n")

    def put(self, records: Sequence[SinkRecord]) -> None:
        now_ms = int(time.time() * 1000)
        for record in records:
            data = {
                "name": self.name,
                "task": record.key,
                "sinkTask": self.id,
                "topic": record.topic,
                "time_ms": now_ms,
                "seqno": record.value,
                "offset": record.kafka_offset,
            }
            self._emit(data, _ORDER)
            partition = TopicPartition(record.topic, record.kafka_partition or 0)
            self._unflushed.setdefault(partition, []).append(data)
        if self.stdout:
            sys.stdout.flush()

    def flush(self, current_offsets: Mapping[TopicPartition, int]) -> None:
        now_ms = int(time.time() * 1000)
        for partition in current_offsets:
            for data in self._unflushed.pop(partition, ()):
                data["time_ms"] = now_ms
                data["flushed"] = True
                self._emit(data, _FLUSHED_ORDER)
        if self.stdout:
            sys.stdout.flush()

    def stop(self) -> None:
        return None
