"""Request bodies bound to what a resource takes, as Java's Jackson binds them, with 400 for what
Jackson cannot bind (Java answers 500 there; the message keeps Jackson's wording where clients see it).

What Jackson accepts, we accept: a JSON number or boolean bound to a ``String`` becomes its text
(numbers as written). What Jackson refuses (an object or array where a string is expected, a field the
entity does not declare) is refused here, before any herder lookup, as Jackson refuses it before the
resource method runs. Checks Java makes later, after it looked the connector up (a ``null`` partition,
a config ``name`` that differs from the URL), are not made here: an unknown connector answers 404
first, as in Java.

Every binder is a pure function of the parsed JSON value (pyconnect.rest.request_body).
"""

from __future__ import annotations

from typing import Any

from pyconnect.errors import BadRequestError
from pyconnect.rest.errors import MalformedRequest
from pyconnect.rest.request_body import number_text

ENTITIES = "org.apache.kafka.connect.runtime.rest.entities"
NO_OFFSETS = "Partitions / offsets need to be provided for an alter offsets request"

OffsetPair = tuple[dict[str, Any] | None, dict[str, Any] | None]


def _text(value: Any) -> str | None:
    """A JSON scalar as Jackson binds it to ``String``; None for anything else."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return number_text(value)
    return None


def string_map(value: Any, what: str) -> dict[str, str]:
    """A connector config: a JSON object whose values are strings (numbers and booleans are accepted
    and rendered as Java's Jackson binds them to String: numbers as written, ``true``/``false``)."""
    if not isinstance(value, dict):
        raise MalformedRequest(f"{what} must be a JSON object of string keys and string values")
    out: dict[str, str] = {}
    for key, item in value.items():
        text = _text(item)
        if text is not None:
            out[key] = text
        elif item is None:
            raise BadRequestError(f"Null value can not be supplied as the configuration value for {key}.")
        else:
            raise MalformedRequest(f"{what}: the value of {key} must be a string, not {type(item).__name__}")
    return out


def nullable_string_map(value: Any, what: str) -> dict[str, str | None]:
    """Like ``string_map``, but ``null`` values are kept (PATCH removes them, validate reports them)."""
    if not isinstance(value, dict):
        raise MalformedRequest(f"{what} must be a JSON object of string keys and string values")
    nulls = {k: None for k, v in value.items() if v is None}
    present = string_map({k: v for k, v in value.items() if v is not None}, what)
    return {k: present.get(k) for k in value} if nulls else dict(present)


def _unrecognized(body: dict[str, Any], entity: str, known: tuple[str, ...]) -> None:
    """Jackson's ``UnrecognizedPropertyException`` for the first undeclared field, as Java words it."""
    unknown = next((key for key in body if key not in known), None)
    if unknown is None:
        return
    if len(known) == 1:
        listing = f'one known property: "{known[0]}"'
    else:
        listing = f"{len(known)} known properties: " + ", ".join(f'"{k}"' for k in known)
    raise MalformedRequest(
        f'Unrecognized field "{unknown}" (class {ENTITIES}.{entity}), not marked as ignorable ({listing})'
    )


def offsets_body(body: Any) -> list[OffsetPair]:
    """``{"offsets":[{"partition":{...}|null,"offset":{...}|null}]}`` (KIP-875 ``ConnectorOffsets``).

    Raises ``MalformedRequest`` for what Jackson cannot bind (fields ``ConnectorOffsets`` and
    ``ConnectorOffset`` do not declare included) and ``BadRequestError`` with Java's message for no
    offsets. A ``null`` or missing partition binds (Java's resource passes it on); the herder refuses
    it once it knows the connector."""
    if not isinstance(body, dict):
        raise MalformedRequest('Request body must be a JSON object {"offsets": [...]}')
    _unrecognized(body, "ConnectorOffsets", ("offsets",))
    entries = body.get("offsets")
    if entries is not None and not isinstance(entries, list):
        raise MalformedRequest("offsets must be a JSON array of {partition, offset} objects")
    pairs: list[OffsetPair] = []
    for entry in entries or []:
        if not isinstance(entry, dict):
            raise MalformedRequest("every element of offsets must be a JSON object {partition, offset}")
        _unrecognized(entry, "ConnectorOffset", ("partition", "offset"))
        partition, offset = entry.get("partition"), entry.get("offset")
        if partition is not None and not isinstance(partition, dict):
            raise MalformedRequest("partition must be a JSON object or null")
        if offset is not None and not isinstance(offset, dict):
            raise MalformedRequest("offset must be a JSON object or null")
        pairs.append((partition, offset))
    if not pairs:
        raise BadRequestError(NO_OFFSETS)
    return pairs


def logger_level_body(body: Any) -> str:
    """``PUT /admin/loggers/{name}``: the ``level`` of a body Java binds as ``Map<String, String>``
    (a number or boolean level is its text, which then names no level: 404, as in Java)."""
    fields = nullable_string_map(body, "logger level request")
    level = fields.get("level")
    if level is None:
        raise BadRequestError("Desired 'level' parameter was not specified in request.")
    return level
