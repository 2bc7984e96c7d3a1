"""MirrorHeartbeatConnector and MirrorHeartbeatTask: prove a flow is alive (spec §2.4, §3.6).

Connector contract (Java's ``MirrorHeartbeatConnector``):

* ``start`` creates the heartbeats topic (``policy.heartbeats_topic()``, 1 partition, compacted,
  ``heartbeats.topic.replication.factor``) on the target cluster, bounded by ``admin.timeout.ms`` and
  only logged on failure. ``enabled`` is ignored on purpose: heartbeats flow even for disabled flows.
* ``task_configs`` is ``[]`` when ``emit.heartbeats.enabled=false``, else exactly one config equal to
  the connector config (no ``task.index``), whatever ``tasks.max`` says.

Task contract (Java's ``MirrorHeartbeatTask``): every ``emit.heartbeats.interval.seconds`` ``poll``
returns one record to partition 0 of the heartbeats topic: BYTES key/value of
:class:`~connectors.mirror.checkpoint_records.Heartbeat` ``(source alias, target alias, now)``, record
timestamp ``now``, source partition ``{sourceClusterAlias, targetClusterAlias}`` and offset
``{offset: 0}``. Run it with ByteArrayConverter. Between heartbeats ``poll`` returns ``None`` at
least once a second so that stop stays responsive.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Any

import pyconnect
from connectors.mirror.checkpoint_records import SOURCE_CLUSTER_ALIAS_KEY, TARGET_CLUSTER_ALIAS_KEY, Heartbeat
from connectors.mirror.config import MIRROR_HEARTBEAT_CONFIG_DEF, MirrorHeartbeatConfig
from connectors.mirror.records import OFFSET_KEY, RecordFormatError, validate_source_offset
from connectors.mirror.scheduler import Scheduler
from pyconnect.api.connector import SourceConnector
from pyconnect.api.data import BYTES_SCHEMA
from pyconnect.api.source import SourceRecord, SourceTask
from pyconnect.config.definition import ConfigDef
from pyconnect.errors import ConnectError
from pyconnect.kafka.access import cluster_label
from pyconnect.kafka.mirror_admin import MirrorAdmin, NewTopicSpec

log = logging.getLogger(__name__)

MAX_POLL_WAIT_S = 1.0


async def create_compacted_topic(admin: MirrorAdmin, topic: str, replication_factor: int) -> None:
    """The MM2 internal-topic helper: 1 partition, ``cleanup.policy=compact``; "exists" is success."""
    await admin.start()
    results = await admin.create_topics(
        [NewTopicSpec(topic, 1, replication_factor, {"cleanup.policy": "compact"})]
    )
    error = results.get(topic)
    if error is not None:
        raise ConnectError(f"Error while attempting to create/find topic '{topic}': {error}")


def require_string_key(partition: Mapping[str, Any], key: str) -> None:
    """Java ``MirrorUtils.validateSourcePartitionString`` (raises :class:`ConnectError`)."""
    if key not in partition:
        raise ConnectError(
            f"Source partition {dict(partition)} is missing the '{key}' key, which is required"
        )
    if not isinstance(partition[key], str):
        raise ConnectError(
            f"Source partition {dict(partition)} has an invalid value {partition[key]} for the '{key}' key, "
            "which must be a string"
        )


def validate_offset_zero(partition: Mapping[str, Any], offset: Mapping[str, Any]) -> None:
    try:
        validate_source_offset(partition, offset, only_offset_zero=True)
    except RecordFormatError as exc:
        raise ConnectError(str(exc)) from None


class MirrorHeartbeatConnector(SourceConnector):
    """Creates the heartbeats topic on the target cluster; one task emits the heartbeats."""

    def __init__(self) -> None:
        self._config: MirrorHeartbeatConfig | None = None
        self._admin: MirrorAdmin | None = None

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    def task_class(self) -> type:
        return MirrorHeartbeatTask

    def config(self) -> ConfigDef:
        return MIRROR_HEARTBEAT_CONFIG_DEF

    async def start(self, props: Mapping[str, str]) -> None:
        config = self._config = MirrorHeartbeatConfig({k: v for k, v in props.items() if v is not None})
        name = str(config.originals.get("name", "MirrorHeartbeatConnector"))
        target = config.target_admin_config()
        admin = self._admin = MirrorAdmin(
            target, cluster_label(target, config.target_cluster_alias, "target")
        )
        topic = config.heartbeats_topic

        async def create() -> None:
            await create_compacted_topic(admin, topic, config.heartbeats_topic_replication_factor)
            log.info("%s: heartbeats topic %s is ready", name, topic)

        try:
            await Scheduler(name, config.admin_timeout_s).execute(create, "creating heartbeats topic")
        except BaseException:  # cancelled (the runtime stopping it meanwhile): no unclosed admin
            await self.stop()
            raise

    async def stop(self) -> None:
        admin, self._admin = self._admin, None
        if admin is not None:
            with contextlib.suppress(Exception):
                await admin.close()

    def alter_offsets(
        self, config: Mapping[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        """KIP-875: Java's format checks; the task keeps no state in these offsets."""
        for partition, offset in offsets:
            if offset is None:
                continue
            if partition is None:
                raise ConnectError("Source partitions may not be null")
            require_string_key(partition, SOURCE_CLUSTER_ALIAS_KEY)
            require_string_key(partition, TARGET_CLUSTER_ALIAS_KEY)
            validate_offset_zero(partition, offset)
        return True

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        config = self._config
        if config is None or not config.emit_heartbeats_enabled:
            return []
        return [dict(config.originals)]


class MirrorHeartbeatTask(SourceTask):
    """Emits one heartbeat per interval; see the module docstring."""

    java_class = "org.apache.kafka.connect.mirror.MirrorHeartbeatTask"

    def __init__(self) -> None:
        self._stopped = asyncio.Event()
        self._next_due = 0.0

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    async def start(self, props: Mapping[str, str]) -> None:
        config = MirrorHeartbeatConfig({k: v for k, v in props.items() if v is not None})
        self._source_alias = config.source_cluster_alias
        self._target_alias = config.target_cluster_alias
        self._topic = config.heartbeats_topic
        self._interval_s = max(float(config.emit_heartbeats_interval_s or 0.0), 0.0)
        self._next_due = time.monotonic() + self._interval_s
        self._stopped = asyncio.Event()

    async def poll(self) -> list[SourceRecord] | None:
        wait = self._next_due - time.monotonic()
        if wait > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), min(wait, MAX_POLL_WAIT_S))
            if self._next_due > time.monotonic():
                return None
        if self._stopped.is_set():
            return None
        self._next_due = time.monotonic() + self._interval_s
        now = int(time.time() * 1000)
        heartbeat = Heartbeat(self._source_alias, self._target_alias, now)
        return [
            SourceRecord(
                heartbeat.connect_partition(),
                {OFFSET_KEY: 0},
                self._topic,
                0,
                BYTES_SCHEMA,
                heartbeat.record_key(),
                BYTES_SCHEMA,
                heartbeat.record_value(),
                now,
            )
        ]

    async def stop(self) -> None:
        self._stopped.set()
