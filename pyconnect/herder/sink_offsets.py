"""KIP-875 for sink connectors: their offsets are their consumer group's (``connect-<name>``, or the
connector's ``consumer.override.group.id``), read and changed with an admin client (Java
``Worker.sinkConnectorOffsets`` / ``modifySinkConnectorOffsets`` and ``SinkUtils``).

Contract:
- :func:`sink_connector_offsets` answers ``GET /connectors/{c}/offsets``:
  ``{"offsets":[{"partition":{"kafka_topic","kafka_partition"},"offset":{"kafka_offset"}}]}``, one
  entry per committed partition, sorted by topic and partition.
- :func:`parse_sink_offsets` checks a ``PATCH`` body's pairs with Java's 400 messages (partition and
  offset values may be JSON numbers or numeric strings).
- :func:`modify_sink_offsets` runs once the herder accepted the request (connector STOPPED, no
  tasks): the connector's ``alter_offsets(config, {TopicPartition: offset | None})`` first (``None``
  for every partition on a reset: Java lists the group's partitions first), then the group is altered
  (``None`` offsets deleted) or, for a reset, deleted. A group that still has members answers Java's
  "tasks haven't stopped completely" error. The reply message is the source connectors' one.
- Admin clients use the worker's ``admin.*`` settings and the connector's ``admin.override.*``.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pyconnect.api.sink import TopicPartition
from pyconnect.config.client_configs import client_overrides
from pyconnect.errors import BadRequestError, ConnectError
from pyconnect.kafka.sink_group import GroupNotEmpty, SinkGroupAdmin
from pyconnect.protocol.javahash import hash_order, java_string_hash
from pyconnect.worker.sink_config import sink_group_id

if TYPE_CHECKING:
    from pyconnect.worker.worker import Worker

KAFKA_TOPIC_KEY = "kafka_topic"
KAFKA_PARTITION_KEY = "kafka_partition"
KAFKA_OFFSET_KEY = "kafka_offset"
_PARTITION_KEYS = hash_order([KAFKA_TOPIC_KEY, KAFKA_PARTITION_KEY], java_string_hash)
_ZOMBIES = (
    "Failed to {verb} consumer group offsets for connector {name} either because its tasks haven't stopped "
    "completely yet or the connector was resumed before the request to {verb} its offsets could be successfully "
    "completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't "
    "eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks."
)
_JAVA_INTEGER = r"[+-]?\d+"

OffsetPairs = Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]]


def _admin(worker: Worker, name: str, config: Mapping[str, str], role: str) -> SinkGroupAdmin:
    overrides = client_overrides(config, worker.config.connector_client_config_override_policy, role="admin")
    admin_config = worker.config.admin_configs(f"{role}-{name}", worker.kafka_cluster_id, overrides)
    return SinkGroupAdmin(admin_config)


def offsets_body(offsets: Mapping[TopicPartition, int]) -> dict[str, Any]:
    entries = []
    for partition in sorted(offsets):
        values = {KAFKA_TOPIC_KEY: partition.topic, KAFKA_PARTITION_KEY: partition.partition}
        entries.append(
            {
                "partition": {k: values[k] for k in _PARTITION_KEYS},
                "offset": {KAFKA_OFFSET_KEY: offsets[partition]},
            }
        )
    return {"offsets": entries}


async def sink_connector_offsets(worker: Worker, name: str, config: Mapping[str, str]) -> dict[str, Any]:
    try:
        async with _admin(worker, name, config, "connector-worker-adminclient") as admin:
            found = await admin.offsets(sink_group_id(name, config))
    except ConnectError:
        raise
    except Exception as exc:
        raise ConnectError(
            f"Failed to retrieve consumer group offsets for sink connector {name}: {exc}"
        ) from exc
    return offsets_body(found)


def _java_int(text: str, bits: int) -> int | None:
    if not re.fullmatch(_JAVA_INTEGER, text):
        return None
    value = int(text)
    return value if -(2 ** (bits - 1)) <= value < 2 ** (bits - 1) else None


def _java_text(value: Any) -> str:
    """``String.valueOf`` of a JSON value as Jackson read it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def parse_sink_offsets(pairs: OffsetPairs) -> dict[TopicPartition, int | None]:
    parsed: dict[TopicPartition, int | None] = {}
    for partition_map, offset_map in pairs:
        if partition_map is None:
            raise BadRequestError("The partition for a sink connector offset cannot be null or missing")
        if KAFKA_TOPIC_KEY not in partition_map or KAFKA_PARTITION_KEY not in partition_map:
            raise BadRequestError(
                f"The partition for a sink connector offset must contain the keys '{KAFKA_TOPIC_KEY}' and "
                f"'{KAFKA_PARTITION_KEY}'"
            )
        if partition_map[KAFKA_TOPIC_KEY] is None:
            raise BadRequestError("Kafka topic names must be valid strings and may not be null")
        if partition_map[KAFKA_PARTITION_KEY] is None:
            raise BadRequestError("Kafka partitions must be valid numbers and may not be null")
        raw_partition = partition_map[KAFKA_PARTITION_KEY]
        partition = None if isinstance(raw_partition, bool) else _java_int(_java_text(raw_partition), 32)
        if partition is None:
            raise BadRequestError(
                f"Failed to parse the following Kafka partition value in the provided offsets: "
                f"'{_java_text(raw_partition)}'. Partition values for sink connectors need to be integers."
            )
        tp = TopicPartition(_java_text(partition_map[KAFKA_TOPIC_KEY]), partition)
        if offset_map is None:
            parsed[tp] = None
            continue
        if KAFKA_OFFSET_KEY not in offset_map:
            raise BadRequestError(
                f"The offset for a sink connector should either be null or contain the key '{KAFKA_OFFSET_KEY}'"
            )
        raw_offset = offset_map[KAFKA_OFFSET_KEY]
        offset = None if isinstance(raw_offset, bool) else _java_int(_java_text(raw_offset), 64)
        if offset is None:
            raise BadRequestError(
                f"Failed to parse the following Kafka offset value in the provided offsets: "
                f"'{_java_text(raw_offset)}'. Offset values for sink connectors need to be integers."
            )
        parsed[tp] = offset
    return parsed


async def modify_sink_offsets(
    worker: Worker,
    name: str,
    config: Mapping[str, str],
    pairs: OffsetPairs | None,
    alter_hook: Callable[[dict[TopicPartition, int | None]], Awaitable[bool]],
) -> bool:
    """Alter (``pairs``) or reset (``None``) the group; returns what the connector's hook said."""
    verb = "alter" if pairs is not None else "reset"
    group = sink_group_id(name, config)
    async with _admin(worker, name, config, "connector-adminclient") as admin:
        if pairs is None:
            try:
                offsets: dict[TopicPartition, int | None] = dict.fromkeys(await admin.offsets(group))
            except ConnectError:
                raise
            except Exception as exc:
                raise ConnectError(
                    f"Failed to list offsets prior to resetting offsets for sink connector {name}: {exc}"
                ) from exc
        else:
            offsets = parse_sink_offsets(pairs)
        handled = await alter_hook(offsets)
        try:
            if pairs is None:
                await admin.delete_group(group)
            else:
                await admin.alter(group, offsets)
        except GroupNotEmpty as exc:
            raise ConnectError(_ZOMBIES.format(verb=verb, name=name)) from exc
        except ConnectError as exc:
            what = "sink connector " if pairs is None else "connector "
            raise ConnectError(f"Failed to {verb} consumer group offsets for {what}{name}: {exc}") from exc
    return handled
