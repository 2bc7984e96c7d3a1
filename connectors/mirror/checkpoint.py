"""MirrorCheckpointConnector and MirrorCheckpointTask: translate consumer-group offsets (spec §2.3, §3.3-3.5).

Size: over 600 lines because the connector and its task still share this module (as Java's file pair
maps to one spec section); group offset sync already lives in group_watch.py / group_sync.py, and the
task is the next part to move out, with the worker redesign.

Connector contract (Java's ``MirrorCheckpointConnector``):

* ``start`` (inert when ``enabled=false``) creates ``<S>.checkpoints.internal`` on the target cluster
  (1 partition, compacted, ``checkpoints.topic.replication.factor``), loads the consumer groups of the
  source cluster and re-loads them after one and every ``refresh.groups.interval.seconds``; a change
  asks the runtime for new task configs. Each step is bounded by ``admin.timeout.ms`` and only logged
  on failure (Java's ``Scheduler``).
* A group is kept when it is a consumer group (protocol type ``consumer``: classic groups and
  ``group.protocol=consumer`` groups of KIP-848 alike), passes the group filter
  (``groups``/``groups.exclude``) and has a committed offset for a topic the topic filter accepts.
* ``task_configs``: ``[]`` when disabled, without groups or with ``emit.checkpoints.enabled=false``;
  raises :class:`~pyconnect.errors.RetriableError` while the first load has not succeeded (the
  runtime retries with backoff, KAFKA-17232). ``n = min(tasks.max, #groups)`` tasks; the groups, in
  Java's ``HashSet`` order, are cut into contiguous chunks (``ConnectorUtils.groupPartitions``: the
  first ``#groups mod n`` tasks get one more), encoded comma-joined in ``task.assigned.groups``, plus
  ``task.index``.

Task contract (Java's ``MirrorCheckpointTask``):

* ``start`` returns at once; in the background the task loads the last checkpoint per assigned group
  and target partition from the checkpoints topic (CheckpointStore, KAFKA-15905), then reads the
  offset-syncs topic (on the ``offset-syncs.topic.location`` cluster, partition 0) from the beginning
  to the end into an :class:`~connectors.mirror.offsets.translation.OffsetSyncStore` (latest sync only
  per partition when the checkpoints could not be loaded) and keeps tailing it. A missing offset-syncs
  topic is retried every few seconds (Java gives up after 30 s and stays silent forever).
* ``poll``: every ``emit.checkpoints.interval.seconds`` (once the store is ready), for each assigned
  group, one ListConsumerGroupOffsets on the source; each committed offset of a topic the topic filter
  accepts is translated; the checkpoint is emitted when it is the first for the group and target
  partition, when the group was rewound upstream, or when the downstream offset strictly advances.
  Records: partition 0 of the checkpoints topic, BYTES key/value, timestamp of the listing, source
  partition ``{partition, topic, group}``, offset ``{offset: 0}``. Run it with ByteArrayConverter.
* Translation mode: ``pyconnect.offset.translation`` (ours, not Java's) ``exact`` (default) or
  ``java``. ``java`` reproduces Java's answers bit for bit; ``exact`` answers the true position where
  the offset-sync stream proves it (no re-read after a fail-over) and otherwise at least Java's
  answer (see :mod:`connectors.mirror.offsets.translation` for the proof and its one assumption).
* ``sync.group.offsets.enabled``: every ``sync.group.offsets.interval.seconds`` (first after one
  interval) the checkpointed offsets are committed to the groups that are idle on the target, classic
  and KIP-848 consumer-protocol groups alike, never backwards and never to a group with members
  (:class:`~connectors.mirror.group_watch.PeriodicGroupSync`, Java's KAFKA-14095 and KAFKA-19794 fixed).
  With ``pyconnect.sync.group.offsets.continuous=true`` (ours) the sync is continuous instead: the
  source groups' commits are watched several times a second and committed on the target at their
  translation, share groups (KIP-932) included, which the connector then finds and assigns too
  (:class:`~connectors.mirror.group_watch.ContinuousGroupSync`, :mod:`connectors.mirror.share_group_sync`).
  A group not synced because it is active on the target (or, for a share group, because a cluster is
  older than Kafka 4.2) is the warning condition ``GROUP_SYNC_BLOCKED`` and one WARN line until it is
  synced again (:class:`~connectors.mirror.group_sync.SyncReport`).
* Metrics (:mod:`connectors.mirror.metrics`, in the worker's hub from ``start`` to ``stop``):
  checkpoint latency per group and partition of each acknowledged batch of checkpoints.
* Refusals (:class:`~pyconnect.errors.KafkaAccessError`): in the connector as in MirrorSourceConnector
  (start fails, later jobs fail the connector); in the task, a group or topic this principal may not
  access, while listing offsets or syncing them, is raised by the next ``poll`` and fails the task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pyconnect
from connectors.mirror.checkpoint_records import (
    CONSUMER_GROUP_ID_KEY,
    PARTITION_KEY,
    TOPIC_KEY,
    Checkpoint,
    RecordFormatError,
)
from connectors.mirror.config import (
    MIRROR_CHECKPOINT_CONFIG_DEF,
    SOURCE_KEYS,
    MirrorCheckpointConfig,
    MirrorCheckpointTaskConfig,
)
from connectors.mirror.group_sync import (
    CONTINUOUS_SYNC_CONFIG,
    CONTINUOUS_SYNC_KEY,
    SyncReport,
    assigned_groups,
    continuous_sync,
    continuous_sync_error,
    with_share_groups,
)
from connectors.mirror.group_sync import GROUP_SYNC_BLOCKED as GROUP_SYNC_BLOCKED
from connectors.mirror.group_watch import ContinuousGroupSync, PeriodicGroupSync, translator
from connectors.mirror.heartbeat import create_compacted_topic, require_string_key, validate_offset_zero
from connectors.mirror.metrics import MirrorCheckpointMetrics
from connectors.mirror.offsets.translation import DEFAULT_MAX_OFFSET_LAG, Mode, OffsetSyncStore
from connectors.mirror.records import OFFSET_KEY, OffsetSync
from connectors.mirror.scheduler import ScheduledConnector, Scheduler
from connectors.mirror.share_group_sync import find_share_groups
from pyconnect.api.data import BYTES_SCHEMA
from pyconnect.api.source import RecordMetadata, SourceRecord, SourceTask
from pyconnect.concurrency import cancel_and_wait
from pyconnect.config.definition import ConfigDef, ConfigKey, ConfigValue
from pyconnect.config.types import Importance, Type
from pyconnect.config.validators import ValidString
from pyconnect.errors import ConnectError, KafkaAccessError, RetriableError
from pyconnect.kafka.access import cluster_label
from pyconnect.kafka.group_admin import GroupAdmin
from pyconnect.kafka.group_offsets import SyncAdmin
from pyconnect.kafka.log import KafkaLog, LogRecord
from pyconnect.kafka.mirror_admin import MirrorAdmin
from pyconnect.protocol.javahash import default_hash_order, java_string_hash

log = logging.getLogger(__name__)
CHECKPOINTS_STALLED = "CHECKPOINTS_STALLED"
CHECKPOINTS_STALLED_AFTER_S = 30.0
"""How long checkpoints may fail to be emitted before the task raises ``CHECKPOINTS_STALLED``."""

CHECKPOINTS_TOPIC_WAIT_S = 5.0
"""How long the task looks for a checkpoints topic its connector just created before it translates
from the latest syncs only."""

OFFSET_TRANSLATION_CONFIG = "pyconnect.offset.translation"
OFFSET_TRANSLATION_KEY = ConfigKey(
    OFFSET_TRANSLATION_CONFIG,
    Type.STRING,
    default="exact",
    importance=Importance.LOW,
    documentation=(
        "How committed source offsets are translated (pyconnect only). 'java': Java MirrorMaker 2's "
        "answer (the newest offset sync at or below the offset, +1 unless it matches exactly), so a "
        "consumer may re-read up to offset.lag.max records or more, and after a rewind it lands on the "
        "later copy of a re-copied run. 'exact': never past the first copy of the group's next record; "
        "the true downstream position wherever the offset-sync stream proves the copy contiguous. Give "
        "the checkpoint connector the source connector's offset.lag.max when it is not the default."
    ),
    validator=ValidString("java", "exact"),
)
CHECKPOINT_CONNECTOR_DEF = MIRROR_CHECKPOINT_CONFIG_DEF.merge([OFFSET_TRANSLATION_KEY, CONTINUOUS_SYNC_KEY])
_TRANSLATION_DEF = ConfigDef([OFFSET_TRANSLATION_KEY])
_OFFSET_LAG_DEF = ConfigDef([key for key in SOURCE_KEYS if key.name == "offset.lag.max"])

OFFSET_SYNCS_RETRY_S = 5.0
MAX_POLL_WAIT_S = 1.0
STOP_GRACE_S = 2.0


def translation_mode(props: Mapping[str, str]) -> Mode:
    value = _TRANSLATION_DEF.parse(props)[OFFSET_TRANSLATION_CONFIG]
    return "java" if value == "java" else "exact"


def source_offset_lag_max(props: Mapping[str, str]) -> int:
    """The source connector's ``offset.lag.max`` as given to this connector (Java's default when absent):
    how far an unsynced copy can lie past its writer's last offset sync (exact translation's floor)."""
    value = _OFFSET_LAG_DEF.parse(props)["offset.lag.max"]
    return value if isinstance(value, int) else DEFAULT_MAX_OFFSET_LAG


def group_partitions(elements: Sequence[str], num_groups: int) -> list[list[str]]:
    """Java ``ConnectorUtils.groupPartitions``: contiguous chunks, the first ``len % n`` one longer."""
    if num_groups <= 0:
        raise ValueError("Number of groups must be positive.")
    per_group, leftover = divmod(len(elements), num_groups)
    result: list[list[str]] = []
    start = 0
    for index in range(num_groups):
        size = per_group + (1 if index < leftover else 0)
        result.append(list(elements[start : start + size]))
        start += size
    return result


class MirrorCheckpointConnector(ScheduledConnector):
    """Discovers the source cluster's consumer groups and deals them to checkpoint tasks."""

    def __init__(self) -> None:
        self._config: MirrorCheckpointConfig | None = None
        self._scheduler: Scheduler | None = None
        self._source_admin: SyncAdmin | None = None
        self._target_admin: MirrorAdmin | None = None
        self.known_groups: list[str] | None = None
        self.known_share_groups: list[str] = []
        self._continuous = False

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    def task_class(self) -> type:
        return MirrorCheckpointTask

    def config(self) -> ConfigDef:
        return CHECKPOINT_CONNECTOR_DEF

    def validate(self, props: Mapping[str, str | None]) -> dict[str, ConfigValue]:
        values = super().validate(props)
        present = {k: v for k, v in props.items() if v is not None}
        for name, message in MirrorCheckpointConfig.validate(present).items():
            values.setdefault(name, ConfigValue(name, present.get(name))).errors.append(message)
        combination = continuous_sync_error(present)
        if combination is not None and not values[CONTINUOUS_SYNC_CONFIG].errors:
            values[CONTINUOUS_SYNC_CONFIG].errors.append(combination)
        return values

    def alter_offsets(
        self, config: Mapping[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        """KIP-875: Java's format checks; the task keeps no state in these offsets."""
        for partition, offset in offsets:
            if offset is None:
                continue
            if partition is None:
                raise ConnectError("Source partitions may not be null")
            require_string_key(partition, CONSUMER_GROUP_ID_KEY)
            require_string_key(partition, TOPIC_KEY)
            value = partition.get(PARTITION_KEY)
            if PARTITION_KEY not in partition:
                raise ConnectError(
                    f"Source partition {dict(partition)} is missing the '{PARTITION_KEY}' key, which is required"
                )
            if isinstance(value, bool) or not isinstance(value, int) or value > 2**31 - 1:
                raise ConnectError(
                    f"Source partition {dict(partition)} has an invalid value {value} for the "
                    f"'{PARTITION_KEY}' key, which must be an integer"
                )
            if value < 0:
                raise ConnectError(
                    f"Source partition {dict(partition)} has an invalid value {value} for the "
                    f"'{PARTITION_KEY}' key, which cannot be negative"
                )
            validate_offset_zero(partition, offset)
        return True

    async def start(self, props: Mapping[str, str]) -> None:
        config = self._config = MirrorCheckpointConfig({k: v for k, v in props.items() if v is not None})
        translation_mode(config.originals)
        self._continuous = (
            continuous_sync(config.originals) and config.sync_group_offsets_interval_s is not None
        )
        if not config.enabled:
            return
        self._name = str(config.originals.get("name", "MirrorCheckpointConnector"))
        source, target = config.source_admin_config(), config.target_admin_config()
        self._source_admin = SyncAdmin(source, cluster_label(source, config.source_cluster_alias, "source"))
        self._target_admin = MirrorAdmin(target, cluster_label(target, config.target_cluster_alias, "target"))
        scheduler = self._scheduler = self._scheduler_for(self._name, config.admin_timeout_s)
        async with self._stopped_unless_started():
            await self._start_steps(
                scheduler,
                [
                    (self._create_checkpoints_topic, "creating checkpoints topic"),
                    (self._load_initial_groups, "loading initial consumer groups"),
                ],
                lambda: scheduler.schedule_repeating(
                    self.refresh_consumer_groups,
                    config.refresh_groups_interval_s,
                    "refreshing consumer groups",
                    delayed=True,
                ),
            )
        log.info(
            "Started %s with %s consumer groups.",
            self._name,
            "unknown" if self.known_groups is None else len(self.known_groups),
        )

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """Runs on a plugin thread: reads one snapshot of the groups the loop's discovery replaces."""
        config = self._config
        known = self.known_groups
        if config is None or not config.enabled or config.emit_checkpoints_interval_s is None:
            return []
        if known is None:
            raise RetriableError("Timeout while loading consumer groups.")
        groups = known + [g for g in self.known_share_groups if g not in known]
        if not groups:
            return []
        chunks = group_partitions(groups, min(max_tasks, len(groups)))
        return [
            with_share_groups(config.task_config(chunk, index), self.known_share_groups)
            for index, chunk in enumerate(chunks)
        ]

    @property
    def _cfg(self) -> MirrorCheckpointConfig:
        if self._config is None:
            raise ConnectError("MirrorCheckpointConnector is not started")
        return self._config

    async def _create_checkpoints_topic(self) -> None:
        admin = self._target_admin
        if admin is None:
            raise ConnectError("admin client is closed")
        cfg = self._cfg
        await create_compacted_topic(admin, cfg.checkpoints_topic, cfg.checkpoints_topic_replication_factor)

    async def find_consumer_groups(self) -> list[str]:
        """Groups to checkpoint, in Java's ``HashSet`` iteration order."""
        admin = self._source_admin
        if admin is None:
            raise ConnectError("admin client is closed")
        cfg = self._cfg
        group_filter, topic_filter = cfg.group_filter, cfg.topic_filter
        kept = []
        for group in await admin.list_consumer_groups():
            if not group_filter.should_replicate_group(group):
                continue
            offsets = await admin.committed_offsets(group)
            if any(topic_filter.should_replicate_topic(topic) for topic, _ in offsets):
                kept.append(group)
            else:
                log.debug("%s: ignoring group %s without replicated topics", self._name, group)
        return default_hash_order(kept, java_string_hash)

    async def find_share_groups(self) -> list[str]:
        """Share groups to sync (KIP-932): only in continuous group offset sync mode."""
        admin = self._source_admin
        if admin is None or not self._continuous:
            return []
        return await find_share_groups(admin, self._cfg.group_filter, self._cfg.topic_filter)

    async def _load_initial_groups(self) -> None:
        self.known_share_groups = await self.find_share_groups()
        self.known_groups = await self.find_consumer_groups()

    async def refresh_consumer_groups(self) -> None:
        found = await self.find_consumer_groups()
        shares = await self.find_share_groups()
        known = set(self.known_groups or ())
        if (
            self.known_groups is not None
            and set(found) == known
            and set(shares) == set(self.known_share_groups)
        ):
            self.known_share_groups = shares
            return
        self.known_share_groups = shares
        log.info(
            "%s: found %d new consumer groups, %d consumer groups gone.",
            self._name,
            len(set(found) - known),
            len(known - set(found)),
        )
        self.known_groups = found
        if self.context is not None:
            self.context.request_task_reconfiguration()


class MirrorCheckpointTask(SourceTask):
    """Emits checkpoints for ``task.assigned.groups``; see the module docstring."""

    java_class = "org.apache.kafka.connect.mirror.MirrorCheckpointTask"

    def __init__(self) -> None:
        self._stopping = False
        self._loaded = False
        self._next_due = 0.0
        self._wake = asyncio.Event()
        self._init: asyncio.Task[None] | None = None
        self._scheduler: Scheduler | None = None
        self._source_admin: GroupAdmin | None = None
        self._target_admin: SyncAdmin | None = None
        self._offset_syncs_log: KafkaLog | None = None
        self._refusal: KafkaAccessError | None = None
        self._metrics: MirrorCheckpointMetrics | None = None
        self.store = OffsetSyncStore()
        self.checkpoints: dict[str, dict[tuple[str, int], Checkpoint]] = {}
        self.groups: list[str] = []
        self.share_groups: list[str] = []
        self._report: SyncReport | None = None
        self._continuous: ContinuousGroupSync | None = None
        self._round_failing_since: float | None = None

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    async def start(self, props: Mapping[str, str]) -> None:
        config = self._config = MirrorCheckpointTaskConfig({k: v for k, v in props.items() if v is not None})
        self._name = f"{config.originals.get('name', 'MirrorCheckpointConnector')}-{config.task_index}"
        self.groups, self.share_groups = assigned_groups(config.task_assigned_groups, config.originals)
        self._source_alias = config.source_cluster_alias
        self._target_alias = config.target_cluster_alias
        self._policy = config.replication_policy
        self._topic_filter = config.topic_filter
        self._topic = config.checkpoints_topic
        self._interval_s = float(config.emit_checkpoints_interval_s or 0.0)
        self._next_due = time.monotonic() + self._interval_s
        self.store = OffsetSyncStore(
            translation_mode(config.originals), max_offset_lag=source_offset_lag_max(config.originals)
        )
        source, target = config.source_admin_config(), config.target_admin_config()
        self._source_admin = SyncAdmin(source, cluster_label(source, self._source_alias, "source"))
        self._target_admin = SyncAdmin(target, cluster_label(target, self._target_alias, "target"))
        self._scheduler = Scheduler(self._name, config.admin_timeout_s, self._refused)
        self._report = None
        if continuous_sync(config.originals) and config.sync_group_offsets_interval_s is not None:
            translate = translator(self.store, self._topic_filter, self.rename)
            admins = (self._source_admin, self._target_admin)
            self._continuous = ContinuousGroupSync(
                self._name,
                self.groups,
                admins,
                translate,
                self._sync_report,
                self._refused,
                shares=self.share_groups,
            )
        hub = getattr(getattr(self, "context", None), "metrics", None)
        if hub is not None and hub.recording:
            self._metrics = MirrorCheckpointMetrics(hub, self._source_alias, self._target_alias)
        self._init = asyncio.create_task(self._initialize(), name=f"{self._name}-init")
        log.info(
            "%s: checkpointing %d consumer groups %s->%s (%s translation): %s.",
            self._name,
            len(self.groups),
            self._source_alias,
            self._target_alias,
            self.store.mode,
            ",".join(self.groups),
        )

    # -- initialization ----------------------------------------------------------------------------

    async def _initialize(self) -> None:
        config = self._config
        ok = await self.load_checkpoints()
        self.store.start(must_read_to_end=not ok)
        failing_since: float | None = None
        while not self._stopping:
            sync_log = KafkaLog(
                config.offset_syncs_topic,
                config.offset_syncs_topic_consumer_config(),
                self._on_offset_syncs,
                partitions=[0],
                read_only=True,
                topic_wait_s=0,
            )
            try:
                await sync_log.start()
            except (LookupError, OSError, ConnectError) as exc:
                log.warning(
                    "%s: cannot read offset-syncs topic %s yet (%s); retrying in %.0f s",
                    self._name,
                    config.offset_syncs_topic,
                    exc,
                    OFFSET_SYNCS_RETRY_S,
                )
                failing_since = failing_since or time.monotonic()
                self._checkpoints_stalled(config.offset_syncs_topic, failing_since, str(exc))
                await self._pause(OFFSET_SYNCS_RETRY_S)
                continue
            except Exception as exc:
                log.exception(
                    "%s: reading offset-syncs topic %s failed", self._name, config.offset_syncs_topic
                )
                failing_since = failing_since or time.monotonic()
                self._checkpoints_stalled(config.offset_syncs_topic, failing_since, str(exc))
                await self._pause(OFFSET_SYNCS_RETRY_S)
                continue
            self._checkpoints_flowing(config.offset_syncs_topic)
            self._offset_syncs_log = sync_log
            self.store.mark_read_to_end()
            break
        if self._stopping:
            return
        self._loaded = True
        log.info(
            "%s: offset-syncs topic %s read to the end (%d partitions indexed, %d checkpoints loaded).",
            self._name,
            config.offset_syncs_topic,
            len(self.store.partitions()),
            sum(map(len, self.checkpoints.values())),
        )
        if self._continuous is not None:
            self._continuous.start()
        elif self._scheduler is not None and config.sync_group_offsets_interval_s is not None:
            self._scheduler.schedule_repeating(
                self.sync_group_offsets,
                config.sync_group_offsets_interval_s,
                "syncing consumer group offsets",
                delayed=True,
            )

    def _refused(self, exc: KafkaAccessError, description: str = "") -> None:
        """A scheduled job (group offset sync, ``description``) met a refusal: the next ``poll`` raises
        it (the task fails and says why: unlike the connector, a task's refusal is no state to wait in,
        since its group ACLs are what the operator grants for the checkpoints to flow at all)."""
        self._refusal = exc
        self._wake.set()

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)

    def _on_offset_syncs(self, records: Sequence[LogRecord]) -> None:
        for record in records:
            try:
                sync = OffsetSync.deserialize_record(record.key, record.value)
            except RecordFormatError as exc:
                log.warning("%s: skipping malformed offset sync at %d: %s", self._name, record.offset, exc)
                continue
            self.store.handle_sync(sync)

    async def load_checkpoints(self) -> bool:
        """CheckpointStore start: the last checkpoint per assigned group and target partition."""
        config = self._config
        wanted = set(self.groups)
        found: dict[str, dict[tuple[str, int], Checkpoint]] = {}
        skipped = 0

        def collect(records: Sequence[LogRecord]) -> None:
            nonlocal skipped
            for record in records:
                try:
                    checkpoint = Checkpoint.from_record(record.key, record.value)
                except RecordFormatError:
                    skipped += 1
                    continue
                if checkpoint.consumer_group_id in wanted:
                    found.setdefault(checkpoint.consumer_group_id, {})[
                        (checkpoint.topic, checkpoint.partition)
                    ] = checkpoint

        reader = KafkaLog(
            self._topic,
            config.target_consumer_config(),
            collect,
            partitions=[0],
            read_only=True,
            topic_wait_s=CHECKPOINTS_TOPIC_WAIT_S,
        )
        try:
            await asyncio.wait_for(reader.start(), config.admin_timeout_s)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.error(
                "%s: failed to read checkpoints topic %s; translating from the latest syncs only: %s",
                self._name,
                self._topic,
                exc,
            )
            self.checkpoints = {}
            return False
        finally:
            with contextlib.suppress(Exception):
                await reader.stop()
        if skipped:
            log.warning("%s: skipped %d undecodable checkpoint records", self._name, skipped)
        self.checkpoints = found
        return True

    # -- checkpoints -------------------------------------------------------------------------------

    def rename(self, topic: str) -> str:
        if self._policy.topic_source(topic) == self._target_alias:
            return self._policy.original_topic(topic)
        return self._policy.format_remote_topic(self._source_alias, topic)

    async def poll(self) -> list[SourceRecord] | None:
        """The due checkpoints, or ``None``; raises a cluster's refusal (a group or topic this principal
        may not access, here or in the group offset sync), which fails the task."""
        if self._refusal is not None:
            raise self._refusal
        wait = self._next_due - time.monotonic()
        if wait > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), min(wait, MAX_POLL_WAIT_S))
            if self._refusal is not None:
                raise self._refusal
            if self._next_due > time.monotonic():
                return None
        self._next_due = time.monotonic() + self._interval_s
        if self._stopping or not self._loaded:
            return None
        try:
            records = await self.checkpoint_records()
        except (asyncio.CancelledError, KafkaAccessError):
            raise
        except Exception as exc:
            log.exception("%s: error while emitting checkpoints", self._name)
            if self._round_failing_since is None:
                self._round_failing_since = time.monotonic()
            self._checkpoints_stalled(self._topic, self._round_failing_since, str(exc))
            return None
        self._round_failing_since = None
        self._checkpoints_flowing(self._topic)
        return records or None

    def _checkpoints_stalled(self, subject: str, since: float, why: str) -> None:
        """Checkpoints cannot be emitted (``subject``: the topic in the way) since ``since`` (monotonic):
        the condition ``CHECKPOINTS_STALLED`` once that lasts :data:`CHECKPOINTS_STALLED_AFTER_S`, so a
        flow whose offset-syncs topic is being created is no alarm."""
        board = getattr(getattr(self, "context", None), "conditions", None)
        if board is None or time.monotonic() - since < CHECKPOINTS_STALLED_AFTER_S:
            return
        board.set(
            CHECKPOINTS_STALLED,
            f"no checkpoint emitted for {time.monotonic() - since:.0f} s or more: {subject}: {why}".splitlines()[
                0
            ],
            subject=subject,
        )

    def _checkpoints_flowing(self, subject: str) -> None:
        board = getattr(getattr(self, "context", None), "conditions", None)
        if board is not None:
            board.clear(CHECKPOINTS_STALLED, subject)

    async def checkpoint_records(self) -> list[SourceRecord]:
        """One round: list, translate and filter; the store is updated only after the last await."""
        admin = self._source_admin
        if admin is None:
            return []
        emitted: list[tuple[Checkpoint, int]] = []
        for group in self.groups:
            started = int(time.time() * 1000)
            try:
                offsets = await admin.committed_offsets(group)
            except KafkaAccessError:
                raise
            except Exception as exc:
                log.warning("%s: could not list offsets of group %s: %s", self._name, group, exc)
                continue
            stored = self.checkpoints.get(group, {})
            for (topic, partition), committed in offsets.items():
                if not self._topic_filter.should_replicate_topic(topic):
                    continue
                downstream = self.store.translate_downstream(group, (topic, partition), committed.offset)
                if downstream is None or downstream < 0:
                    continue
                checkpoint = Checkpoint(
                    group,
                    self.rename(topic),
                    partition,
                    committed.offset,
                    downstream,
                    committed.metadata,
                )
                previous = stored.get((checkpoint.topic, partition))
                if (
                    previous is None
                    or checkpoint.upstream_offset < previous.upstream_offset
                    or checkpoint.downstream_offset > previous.downstream_offset
                ):
                    emitted.append((checkpoint, started))
        records = []
        for checkpoint, started in emitted:
            self.checkpoints.setdefault(checkpoint.consumer_group_id, {})[
                (checkpoint.topic, checkpoint.partition)
            ] = checkpoint
            records.append(
                SourceRecord(
                    checkpoint.connect_partition(),
                    {OFFSET_KEY: 0},
                    self._topic,
                    0,
                    BYTES_SCHEMA,
                    checkpoint.record_key(),
                    BYTES_SCHEMA,
                    checkpoint.record_value(),
                    started,
                )
            )
        return records

    async def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        if metadata is not None:
            self.commit_record_batch([record], record.topic, record.kafka_partition or 0, metadata.offset)

    def commit_record_batch(
        self, records: Sequence[SourceRecord], topic: str, partition: int, base_offset: int
    ) -> None:
        """Acknowledged checkpoints: their latency per group and partition (Java's ``commitRecord``)."""
        metrics = self._metrics
        if metrics is None:
            return
        by_key: dict[tuple[str, str, int], list[int]] = {}
        for record in records:
            wrapped = record.source_partition
            if wrapped is None or record.timestamp is None:
                continue
            key = (str(wrapped[CONSUMER_GROUP_ID_KEY]), str(wrapped[TOPIC_KEY]), int(wrapped[PARTITION_KEY]))
            by_key.setdefault(key, []).append(record.timestamp)
        for (group, group_topic, group_partition), timestamps in by_key.items():
            metrics.record_acknowledged(group, group_topic, group_partition, timestamps)

    # -- group offset sync ---------------------------------------------------------------------------

    def _conditions(self) -> Any:
        return getattr(getattr(self, "context", None), "conditions", None)

    @property
    def _sync_report(self) -> SyncReport:
        """How the groups not synced show (one per task, made on first use)."""
        if self._report is None:
            self._report = SyncReport(self._name, self._target_alias, self._conditions, log)
        return self._report

    async def sync_group_offsets(self) -> None:
        """One round of Java's group offset sync (:class:`~connectors.mirror.group_watch.PeriodicGroupSync`)."""
        admin = self._target_admin
        if admin is not None:
            await PeriodicGroupSync(self._name, self._sync_report, log).run(
                admin, self.groups, self.checkpoints
            )

    # -- shutdown ----------------------------------------------------------------------------------

    async def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        metrics, self._metrics = self._metrics, None
        if metrics is not None:
            metrics.close()
        init, self._init = self._init, None
        continuous, self._continuous = self._continuous, None
        try:
            if init is not None:
                # Let a client that is being started finish (cancelling it mid-start can leak it).
                await asyncio.wait({init}, timeout=STOP_GRACE_S)
        finally:  # every client is closed, even when this stop is cancelled
            await cancel_and_wait(init, log=log)
            if continuous is not None:
                await continuous.stop()
            scheduler, self._scheduler = self._scheduler, None
            if scheduler is not None:
                await scheduler.close()
            sync_log, self._offset_syncs_log = self._offset_syncs_log, None
            if sync_log is not None:
                with contextlib.suppress(Exception):
                    await sync_log.stop()
            for admin in (self._source_admin, self._target_admin):
                if admin is not None:
                    with contextlib.suppress(Exception):
                        await admin.close()
            self._source_admin = self._target_admin = None
