"""MirrorSourceConnector and MirrorSourceTask: replicate topics from a source cluster (spec §2.2, §3.1).

Connector contract (Java's ``MirrorSourceConnector``):

* ``start`` runs, each bounded by ``admin.timeout.ms`` and only logged on failure (Java's
  ``Scheduler.execute``): create the offset-syncs topic (1 partition, compacted) on its location
  cluster, load the source and target topic-partitions, create missing remote topics (source partition
  count, ``replication.factor``, the source's non-default replicable configs) and grow remote topics
  with fewer partitions. Then, on one serialized scheduler: topic ACL sync at once and every
  ``sync.topic.acls.interval.seconds``, topic config sync at once and every
  ``sync.topic.configs.interval.seconds``, topic discovery after one and every
  ``refresh.topics.interval.seconds``. A change in the source partitions, or partitions missing on the
  target, re-runs creation and asks the runtime for new task configs.
* ``task_configs`` deals the known partitions round robin (element ``i`` to task ``i mod n``) in
  Java's order (the ``HashMap`` order of Java's describe-topics result), each task config being the
  connector config plus ``task.assigned.partitions`` and ``task.index``.
* ACL sync (Java's ``syncTopicAcls``): the source's topic ACLs (any name, any pattern type) are read;
  literal-pattern ones whose topic is replicated, except ``ALLOW WRITE``, are created on the target for
  the remote topic name, ``ALLOW ALL`` downgraded to ``ALLOW READ`` (``DENY`` kept as is). ACLs are
  only ever added, never removed. A source without an authorizer is logged once at INFO (then at DEBUG
  on each later try) and the sync skipped; the connector keeps running.

Task contract (Java's ``MirrorSourceTask``):

* ``start`` assigns ``task.assigned.partitions`` on a consumer of the source cluster, seeks each
  partition with a committed Connect offset ``o >= 0`` to ``o + 1`` (offsets are read under Java's
  partition map, so a Java deployment's offsets are resumed) and leaves the others to
  ``auto.offset.reset``.
* Gaps (connectors.mirror.truncation, beyond Java, which skips them in silence): from ``start`` (a
  check of its own, bounded by ``TARGET_CHECK_TIMEOUT_S``: ``start`` never waits for the target, and
  polls copy nothing before the check is done, or it would see the new copies), a partition whose remote
  partition on the target is missing or empty behind its committed offset (the target was rebuilt);
  in ``poll``, a position the source refuses as out of range (records deleted before they were
  copied, or the topic recreated). Each gap is logged at WARN naming the
  task, the topic-partition and the offsets, counted in the ``truncated-record-count`` and
  ``truncation-count`` metrics, and handled by ``pyconnect.mirror.truncation.policy``: ``continue``
  (the default) resumes where Java's flow would (the log start, or after the committed offset for a
  rebuilt target; a refused position resumes at the log start whatever the consumer's
  ``auto.offset.reset``, which places only partitions without a committed offset); ``fail`` fails the
  task with every gap of the poll in its trace and does not move past them. All refused positions of
  one poll are handled together, with the same poll's records of the other partitions.
* ``poll`` converts one consumer batch in one pass: remote topic, same partition, key/value/headers as
  raw bytes (BYTES schemas: run it with ByteArrayConverter), same timestamp, source partition
  ``{cluster, partition, topic}`` and offset ``{offset}``.
* Raw path (:mod:`connectors.mirror.raw_copy`, beyond Java): when the worker allows raw batches
  (ByteArrayConverter everywhere, no transformation) and ``pyconnect.mirror.raw.batches.enable`` is
  not false, ``poll`` fetches record batches as bytes (:mod:`pyconnect.kafka.raw_source_fetch`: the
  consumer keeps assignment, positions, resets and the out-of-range handling above, its partitions
  paused) and returns whole batches as :class:`~pyconnect.api.source.RawRecordBatch` items beside
  the records of the batches it decodes; ``commit_raw_batch`` queues the batch's offset syncs as one
  run and counts its records. Metrics of a copied batch: ``byte-count`` counts the batch's bytes (not
  its value bytes) and its record ages and replication latency are those of its first and max
  timestamps (an approximation: the records between are not read).
* Refusals (:class:`~pyconnect.errors.KafkaAccessError`, named after the cluster): a refused login or
  ACL in the connector's start fails the start, and in a later scheduled job fails the connector
  (``context.raise_error``); Java logs them and leaves the connector RUNNING (no tasks). A task stays
  RUNNING and retrying, as Java's, but says why on its condition board (:mod:`connectors.mirror.source_watch`:
  its RUNNING trace and ``GET /mirrors``): a refused login of its clients (SOURCE_AUTH_FAILED, tried
  again with backoff), a topic refused READ (ACL_DENIED; its partitions held back and probed, the
  other topics flowing), a deleted topic (TOPIC_DELETED), an unreachable source (SOURCE_UNREACHABLE)
  and every gap (TRUNCATED); each is cleared by the repair. Other refusals still fail the task.
* Metrics (:mod:`connectors.mirror.metrics`, in the worker's hub from ``start`` to ``stop``): ages
  and value bytes per polled partition batch, count and replication latency per acknowledged batch.
* ``commit_record`` feeds the :class:`OffsetSyncWriter` (upstream offset, downstream offset from the
  producer's metadata); ``commit`` promotes delayed syncs. Offset syncs go to partition 0 of
  ``mm2-offset-syncs.<other alias>.internal`` through the task's own producer on the
  ``offset-syncs.topic.location`` cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter, countOf
from typing import Any

import pyconnect
from connectors.mirror import raw_copy, reachability, truncation
from connectors.mirror.config import (
    MIRROR_SOURCE_CONFIG_DEF,
    MirrorSourceConfig,
    MirrorSourceTaskConfig,
    source_connector_validation_errors,
)
from connectors.mirror.metrics import MirrorSourceMetrics
from connectors.mirror.offsets.sync_batches import send_offset_syncs
from connectors.mirror.offsets.sync_writer import OffsetSyncWriter, SendDone
from connectors.mirror.record_copy import copied
from connectors.mirror.records import (
    OFFSET_KEY,
    PARTITION_KEY,
    TOPIC_KEY,
    OffsetSync,
    RecordFormatError,
    TopicPartition,
    decode_topic_partition,
    unwrap_offset,
    validate_source_offset,
    validate_source_partition,
    wrap_partition,
)
from connectors.mirror.remote_topics import RemoteTopics
from connectors.mirror.routed_topics import (
    builtin_transformation,
    connector_transformations,
    routed_topics,
    routing_errors,
)
from connectors.mirror.scheduler import ScheduledConnector, Scheduler
from connectors.mirror.source_watch import SourceWatch
from pyconnect.api.connector import ExactlyOnceSupport
from pyconnect.api.source import (
    RawBatchTarget,
    RawRecordBatch,
    RecordMetadata,
    SourceRecord,
    SourceTask,
)
from pyconnect.concurrency import TaskSet, cancel_and_wait
from pyconnect.conditions import ConditionBoard
from pyconnect.config.client_configs import mirror_connector_client_config
from pyconnect.config.definition import ConfigDef, ConfigValue
from pyconnect.errors import AuthenticationError, ConnectError
from pyconnect.kafka.access import cluster_label
from pyconnect.kafka.mirror_admin import (
    OP_DELETE,
    OP_SET,
    STATIC_BROKER_CONFIG,
    AclBinding,
    AclOperation,
    AclPermissionType,
    ConfigEntry,
    MirrorAdmin,
    NewTopicSpec,
    PatternType,
    PositionOutOfRange,
    ResourceType,
    SecurityDisabled,
    SourceConsumer,
    log_bounds_of,
    start_producer,
)
from pyconnect.kafka.raw_source_fetch import RawSourceFetch
from pyconnect.kafka.source_faults import principal_of, unreachable
from pyconnect.metrics.client_metrics import value_bytes
from pyconnect.mirror_status.core import (
    HEARTBEATS_MAX_AGE_CONFIG,
    TARGET_LATENCY_CONFIG,
    heartbeats_max_age_error,
    target_latency_error,
    target_latency_ms,
)
from pyconnect.protocol.javahash import default_hash_order, hash_order, java_string_hash

log = logging.getLogger(__name__)

_SOURCE_PARTITION = attrgetter("source_partition")
"""Read in a C loop over a batch whose value bytes the consumer did not measure."""


def _source_offset(record: SourceRecord) -> int | None:
    """The source offset a record of this task carries (``None`` for a record of another origin)."""
    offset = record.source_offset
    if type(offset) is not dict:  # the task's own records carry a dict; no ABC check on this path
        offset = dict(offset) if isinstance(offset, Mapping) else {}
    found = offset.get(OFFSET_KEY)
    return found if type(found) is int else None


TASK_INDEX = "task.index"
READ_COMMITTED = "read_committed"
EXACTLY_ONCE_SUPPORT = "exactly.once.support"


def java_describe_topics_order(topics: Iterable[str]) -> list[str]:
    """The order Java's ``describeTopics(topics).allTopicNames().get().values()`` iterates in.

    ``Collectors.toSet()`` -> ``new HashMap<>(n)`` of futures -> its copy -> ``new HashMap<>(n)`` of
    descriptions; each step is a ``HashMap`` whose iteration order depends on its table size.
    """
    as_set = default_hash_order(topics, java_string_hash)
    n = len(as_set)
    futures = hash_order(as_set, java_string_hash, n)
    copied = hash_order(futures, java_string_hash, int(n / 0.75 + 1))
    return hash_order(copied, java_string_hash, n)


def offset_syncs_cluster(config: MirrorSourceConfig, client_config: Mapping[str, str]) -> str:
    """The cluster of the offset-syncs topic, as error messages name it (``target cluster B (...)``)."""
    side = str(config.offset_syncs_topic_location)
    alias = config.source_cluster_alias if side == "source" else config.target_cluster_alias
    return cluster_label(client_config, alias, side)


class MirrorSourceConnector(ScheduledConnector):
    """Discovers source topics, creates and configures remote topics, deals partitions to tasks.

    Beyond Java: remote topics are created and their configs synced with what the target accepts
    (a refused config is dropped, logged once at WARN and kept as the connector's ``CONFIG_DRIFT``
    condition: connectors.mirror.topic_configs, remote_topics), and the topics the connector's
    transformations route remote topics to are created like them (connectors.mirror.routed_topics)."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._config: MirrorSourceConfig | None = None
        self._scheduler: Scheduler | None = None
        self._source_admin: MirrorAdmin | None = None
        self._target_admin: MirrorAdmin | None = None
        self.known_source_partitions: list[TopicPartition] = []
        self.known_target_partitions: list[TopicPartition] = []
        self._no_acl_authorizer = False
        self._remote_topics: RemoteTopics | None = None

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    def task_class(self) -> type:
        return MirrorSourceTask

    def config(self) -> ConfigDef:
        return MIRROR_SOURCE_CONFIG_DEF

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport | None:
        level = mirror_connector_client_config(props, "source", "consumer").get("isolation.level")
        return ExactlyOnceSupport.SUPPORTED if level == READ_COMMITTED else ExactlyOnceSupport.UNSUPPORTED

    def validate(self, props: Mapping[str, str | None]) -> dict[str, ConfigValue]:
        """Java's checks on top of the config table: the offset-syncs keys with
        ``emit.offset-syncs.enabled=false``, and ``exactly.once.support=required`` without read_committed.
        Ours: the status view's target latency (``pyconnect.mirror.target.latency.ms``), reported only
        when it is given and invalid, so a Java-known config validates exactly as in Java."""
        values = super().validate(props)
        present = {k: v for k, v in props.items() if v is not None}
        extra = dict(source_connector_validation_errors(present))
        latency_error = target_latency_error(present.get(TARGET_LATENCY_CONFIG))
        if latency_error is not None:
            extra[TARGET_LATENCY_CONFIG] = latency_error
        heartbeats_error = heartbeats_max_age_error(present.get(HEARTBEATS_MAX_AGE_CONFIG))
        if heartbeats_error is not None:
            extra[HEARTBEATS_MAX_AGE_CONFIG] = heartbeats_error
        policy_error = truncation.policy_error(present.get(truncation.TRUNCATION_POLICY_CONFIG))
        if policy_error is not None:
            extra[truncation.TRUNCATION_POLICY_CONFIG] = policy_error
        unreachable_error = reachability.unreachable_after_error(
            present.get(reachability.UNREACHABLE_AFTER_CONFIG)
        )
        if unreachable_error is not None:
            extra[reachability.UNREACHABLE_AFTER_CONFIG] = unreachable_error
        raw_error = raw_copy.enabled_error(present.get(raw_copy.RAW_BATCHES_CONFIG))
        if raw_error is not None:
            extra[raw_copy.RAW_BATCHES_CONFIG] = raw_error
        extra.update(routing_errors(present, builtin_transformation))
        if present.get(EXACTLY_ONCE_SUPPORT) == "required" and self.exactly_once_support(present) != (
            ExactlyOnceSupport.SUPPORTED
        ):
            extra[EXACTLY_ONCE_SUPPORT] = (
                "MirrorSourceConnector can only provide exactly-once guarantees when its source consumer is "
                "configured with isolation.level set to 'read_committed'; otherwise, records from aborted and "
                "uncommitted transactions will be replicated from the source cluster to the target cluster."
            )
        for name, message in extra.items():
            values.setdefault(name, ConfigValue(name, present.get(name))).errors.append(message)
        return values

    def alter_offsets(
        self, config: Mapping[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        """KIP-875: Java's checks of each partition/offset; MM2 keeps no external offsets."""
        for partition, offset in offsets:
            if offset is None:
                continue
            try:
                validate_source_partition(partition)
                validate_source_offset(partition, offset)
            except RecordFormatError as exc:
                raise ConnectError(str(exc)) from None
        return True

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def _cfg(self) -> MirrorSourceConfig:
        if self._config is None:
            raise ConnectError("MirrorSourceConnector is not started")
        return self._config

    async def start(self, props: Mapping[str, str]) -> None:
        started = time.monotonic()
        self._props = {k: v for k, v in props.items() if v is not None}
        config = self._config = MirrorSourceConfig(self._props)
        if not config.enabled:
            return
        self._name = str(self._props.get("name", "MirrorSourceConnector"))
        self._policy = config.replication_policy
        self._topic_filter = config.topic_filter
        self._property_filter = config.config_property_filter
        source = config.source_admin_config("replication-source-admin")
        target = config.target_admin_config("replication-target-admin")
        self._source_admin = MirrorAdmin(source, cluster_label(source, config.source_cluster_alias, "source"))
        self._target_admin = MirrorAdmin(target, cluster_label(target, config.target_cluster_alias, "target"))
        self._remote_topics = RemoteTopics(
            self._name,
            config.target_cluster_alias,
            target.get("client.id"),
            getattr(self.context, "conditions", None),
        )
        scheduler = self._scheduler = Scheduler(self._name, config.admin_timeout_ms / 1000, self._fail)
        async with self._stopped_unless_started():
            await self._start_jobs(config, scheduler)
        log.info(
            "Started %s with %d topic-partitions in %.0f ms.",
            self._name,
            len(self.known_source_partitions),
            (time.monotonic() - started) * 1000,
        )

    async def _start_jobs(self, config: MirrorSourceConfig, scheduler: Scheduler) -> None:
        if config.emit_offset_syncs_enabled:
            await scheduler.execute(self._create_offset_syncs_topic, "creating upstream offset-syncs topic")
        await scheduler.execute(self._load_topic_partitions, "loading initial set of topic-partitions")
        await scheduler.execute(
            self.compute_and_create_topic_partitions, "creating downstream topic-partitions"
        )
        await scheduler.execute(self._refresh_known_target_topics, "refreshing known target topics")
        scheduler.schedule_repeating(
            self.sync_topic_acls, config.sync_topic_acls_interval_s, "syncing topic ACLs"
        )
        scheduler.schedule_repeating(
            self.sync_topic_configs, config.sync_topic_configs_interval_s, "syncing topic configs"
        )
        scheduler.schedule_repeating(
            self.refresh_topic_partitions,
            config.refresh_topics_interval_s,
            "refreshing topics",
            delayed=True,
        )

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """Runs on a plugin thread: reads one snapshot of the partitions the loop's discovery replaces."""
        known = self.known_source_partitions
        if self._config is None or not self._config.enabled or not known:
            return []
        count = min(max_tasks, len(known))
        by_task: list[list[TopicPartition]] = [[] for _ in range(count)]
        for i, partition in enumerate(known):
            by_task[i % count].append(partition)
        return [
            self._config.task_config([str(tp) for tp in assigned], index)
            for index, assigned in enumerate(by_task)
        ]

    # -- discovery -----------------------------------------------------------------------------

    async def _admin(self, admin: MirrorAdmin | None) -> MirrorAdmin:
        if admin is None:
            raise ConnectError("admin client is closed")
        await admin.start()
        return admin

    def should_replicate_topic(self, topic: str) -> bool:
        cfg = self._cfg
        return (
            (
                self._topic_filter.should_replicate_topic(topic)
                or (cfg.heartbeats_replication_enabled and self._policy.is_heartbeats_topic(topic))
            )
            and not self._policy.is_internal_topic(topic)
            and not self.is_cycle(topic)
        )

    def is_cycle(self, topic: str) -> bool:
        """True when ``topic`` (or any topic upstream of it) came from the target cluster."""
        target = self._cfg.target_cluster_alias
        seen = 0
        while seen < 1000:
            seen += 1
            source = self._policy.topic_source(topic)
            if source is None:
                return False
            if source == target:
                return True
            upstream = self._policy.upstream_topic(topic)
            if upstream is None or upstream == topic:
                return False
            topic = upstream
        return False

    @staticmethod
    def _expand(described: Mapping[str, list[int]], topics: Iterable[str]) -> list[TopicPartition]:
        return [
            TopicPartition(topic, partition)
            for topic in java_describe_topics_order(topics)
            for partition in described[topic]
        ]

    async def find_source_topic_partitions(self) -> list[TopicPartition]:
        described = await (await self._admin(self._source_admin)).topic_partitions()
        return self._expand(described, [t for t in described if self.should_replicate_topic(t)])

    async def find_target_topic_partitions(self) -> list[TopicPartition]:
        cfg = self._cfg
        checkpoints = self._policy.checkpoints_topic(cfg.source_cluster_alias)
        described = await (await self._admin(self._target_admin)).topic_partitions()
        topics = [
            t
            for t in described
            if self._policy.topic_source(t) == cfg.source_cluster_alias and t != checkpoints
        ]
        return self._expand(described, topics)

    async def _load_topic_partitions(self) -> None:
        self.known_source_partitions = await self.find_source_topic_partitions()
        self.known_target_partitions = await self.find_target_topic_partitions()

    async def _refresh_known_target_topics(self) -> None:
        self.known_target_partitions = await self.find_target_topic_partitions()

    async def refresh_topic_partitions(self) -> None:
        source = await self.find_source_topic_partitions()
        target = await self.find_target_topic_partitions()
        upstream_of_target = set()
        for tp in target:
            upstream = self._policy.upstream_topic(tp.topic)
            if upstream is not None:
                upstream_of_target.add(TopicPartition(upstream, tp.partition))
        source_set, known_set = set(source), set(self.known_source_partitions)
        missing = source_set - upstream_of_target
        self.known_target_partitions = target
        if source_set != known_set or missing:
            log.info(
                "%s: found %d new topic-partitions on %s, %d deleted topic-partitions on %s, "
                "%d topic-partitions missing on %s.",
                self._name,
                len(source_set - known_set),
                self._cfg.source_cluster_alias,
                len(known_set - source_set),
                self._cfg.source_cluster_alias,
                len(missing),
                self._cfg.target_cluster_alias,
            )
            self.known_source_partitions = source
            await self.compute_and_create_topic_partitions()
            if self.context is not None:
                self.context.request_task_reconfiguration()

    # -- remote topics and their configs -------------------------------------------------------

    def _remote(self, topic: str) -> str:
        return self._policy.format_remote_topic(self._cfg.source_cluster_alias, topic)

    def _should_replicate_source_default(self, name: str) -> bool:
        check = getattr(self._property_filter, "should_replicate_source_default", None)
        return bool(check(name)) if check is not None else False

    def target_config(self, entries: Iterable[ConfigEntry], incremental: bool) -> list[ConfigEntry]:
        """Java's ``targetConfig``: the source entries a remote topic should carry."""
        return [
            e
            for e in entries
            if (incremental or not e.is_default or self._should_replicate_source_default(e.name))
            and not e.read_only
            and not e.sensitive
            and e.source != STATIC_BROKER_CONFIG
            and self._property_filter.should_replicate_config_property(e.name)
        ]

    async def compute_and_create_topic_partitions(self) -> None:
        source_counts = Counter(tp.topic for tp in self.known_source_partitions)
        target_counts = Counter(tp.topic for tp in self.known_target_partitions)
        remote = {topic: self._remote(topic) for topic in source_counts}
        new_topics = [t for t in source_counts if remote[t] not in target_counts]
        grow = {
            remote[t]: count
            for t, count in source_counts.items()
            if remote[t] in target_counts and count > target_counts[remote[t]]
        }
        if new_topics:
            await self._create_new_topics(new_topics, source_counts)
        if grow:
            results = await (await self._admin(self._target_admin)).create_partitions(grow)
            for topic, error in results.items():
                if error is None:
                    log.info("%s: increased size of %s to %d partitions.", self._name, topic, grow[topic])
                else:
                    log.warning("%s: could not create topic-partitions for %s: %s", self._name, topic, error)
        await self._create_routed_topics(source_counts, remote)

    async def _create_routed_topics(self, counts: Mapping[str, int], remote: Mapping[str, str]) -> None:
        """Beyond Java: the topics the connector's transformations route remote topics to are created
        (and grown) like them (connectors.mirror.routed_topics). A chain that cannot be built is left
        to the tasks, which fail on it."""
        if self._remote_topics is None or not self._props.get("transforms"):
            return
        try:
            chain = connector_transformations(self._props)
        except ConnectError as exc:
            log.debug("%s: no routed topics, the transformations cannot be built: %s", self._name, exc)
            return
        try:
            routed = routed_topics(chain, remote, self._cfg.source_cluster_alias, int(time.time() * 1000))
        finally:
            with contextlib.suppress(Exception):
                chain.close()
        await self._remote_topics.create_routed(
            await self._admin(self._source_admin),
            await self._admin(self._target_admin),
            routed,
            counts,
            self._cfg.replication_factor,
            self._new_topic_configs,
        )

    def _new_topic_configs(self, entries: Iterable[ConfigEntry]) -> dict[str, str]:
        """The configs a new remote topic is created with, from its source topic's ``entries``."""
        return {e.name: e.value for e in self.target_config(entries, False) if e.value is not None}

    async def _create_new_topics(self, topics: list[str], counts: Mapping[str, int]) -> None:
        configs = await (await self._admin(self._source_admin)).describe_topic_configs(topics)
        specs = [
            NewTopicSpec(
                self._remote(topic),
                counts[topic],
                self._cfg.replication_factor,
                self._new_topic_configs(configs.get(topic, [])),
            )
            for topic in topics
        ]
        if self._remote_topics is not None:
            await self._remote_topics.create(await self._admin(self._target_admin), specs)

    def topics_being_replicated(self) -> list[str]:
        target_topics = {tp.topic for tp in self.known_target_partitions}
        return [
            t
            for t in dict.fromkeys(tp.topic for tp in self.known_source_partitions)
            if self._remote(t) in target_topics
        ]

    async def sync_topic_configs(self) -> None:
        topics = self.topics_being_replicated()
        remote_topics = self._remote_topics
        if not topics or remote_topics is None:
            return
        source_configs = await (await self._admin(self._source_admin)).describe_topic_configs(topics)
        operations: dict[str, list[tuple[str, int, str | None]]] = {}
        for topic, entries in source_configs.items():
            operations[self._remote(topic)] = [
                (
                    e.name,
                    OP_DELETE
                    if e.is_default and not self._should_replicate_source_default(e.name)
                    else OP_SET,
                    e.value,
                )
                for e in self.target_config(entries, True)
            ]
            for routed in remote_topics.routes.get(topic, ()):
                operations[routed] = operations[self._remote(topic)]
        results = await remote_topics.sync(await self._admin(self._target_admin), operations)
        for topic, error in results.items():
            if error is None:
                continue
            if "UNSUPPORTED_VERSION" in error.upper() or "error code 35" in error:
                if self.context is not None:
                    self.context.raise_error(
                        ConnectError(
                            f"the target cluster '{self._cfg.target_cluster_alias}' is not compatible "
                            "with IncrementalAlterConfigs API"
                        )
                    )
                return
            log.warning("%s: could not alter configuration of topic %s: %s", self._name, topic, error)

    # -- topic ACLs ----------------------------------------------------------------------------

    @staticmethod
    def should_replicate_acl(binding: AclBinding) -> bool:
        """Java's ``shouldReplicateAcl``: every entry but ``ALLOW WRITE`` (only MirrorMaker writes to
        remote topics)."""
        return not (
            binding.permission_type == AclPermissionType.ALLOW and binding.operation == AclOperation.WRITE
        )

    def target_acl_binding(self, source: AclBinding) -> AclBinding:
        """Java's ``targetAclBinding``: the literal ACL on the remote topic; ``ALLOW ALL`` becomes
        ``ALLOW READ``, principal, host and every other entry are kept."""
        operation = source.operation
        if source.permission_type == AclPermissionType.ALLOW and operation == AclOperation.ALL:
            operation = AclOperation.READ
        return AclBinding(
            ResourceType.TOPIC,
            self._remote(source.name or ""),
            PatternType.LITERAL,
            source.principal,
            source.host,
            operation,
            source.permission_type,
        )

    def target_acl_bindings(self, source: Iterable[AclBinding]) -> list[AclBinding]:
        """The bindings ``sync_topic_acls`` creates on the target for the source's ``source`` ACLs, in
        their order: literal topic ACLs that pass :meth:`should_replicate_acl` and whose topic is
        replicated (:meth:`should_replicate_topic`), mapped by :meth:`target_acl_binding`."""
        return [
            self.target_acl_binding(b)
            for b in source
            if b.resource_type == ResourceType.TOPIC
            and b.pattern_type == PatternType.LITERAL
            and self.should_replicate_acl(b)
            and self.should_replicate_topic(b.name or "")
        ]

    async def sync_topic_acls(self) -> None:
        """Java's ``syncTopicAcls``: read the source's topic ACLs and create their remote counterparts
        on the target. Per-ACL failures are logged; a source without an authorizer skips the sync."""
        try:
            source = await (await self._admin(self._source_admin)).describe_topic_acls()
        except SecurityDisabled:
            if not self._no_acl_authorizer:
                self._no_acl_authorizer = True
                log.info(
                    "%s: No ACL authorizer is configured on the source Kafka cluster, so no topic ACL "
                    "syncing will take place. Consider disabling topic ACL syncing by setting "
                    "sync.topic.acls.enabled to 'false'.",
                    self._name,
                )
            else:
                log.debug(
                    "%s: source-side ACL authorizer still not found; skipping topic ACL sync", self._name
                )
            return
        bindings = self.target_acl_bindings(source)
        log.debug("%s: syncing %d topic ACL bindings.", self._name, len(bindings))
        if not bindings:
            return
        results = await (await self._admin(self._target_admin)).create_acls(bindings)
        for binding, error in results.items():
            if error is not None:
                log.warning("%s: could not sync ACL of topic %s: %s", self._name, binding.name, error)

    async def _create_offset_syncs_topic(self) -> None:
        cfg = self._cfg
        config = cfg.offset_syncs_topic_admin_config()
        admin = MirrorAdmin(config, offset_syncs_cluster(cfg, config))
        try:
            await admin.start()
            topic = cfg.offset_syncs_topic
            results = await admin.create_topics(
                [
                    NewTopicSpec(
                        topic, 1, cfg.offset_syncs_topic_replication_factor, {"cleanup.policy": "compact"}
                    )
                ]
            )
            error = results.get(topic)
            if error is not None:
                raise ConnectError(f"Error while attempting to create/find topic '{topic}': {error}")
            log.info("%s: offset-syncs topic %s is ready", self._name, topic)
        finally:
            await admin.close()


STOP_SYNC_DRAIN_S = 5.0
TARGET_CHECK_TIMEOUT_S = 30.0
"""Bound of the check for a rebuilt target made at start; past it the check is skipped with a WARN."""
OPEN_BACKOFF_FIRST_S = 1.0
OPEN_BACKOFF_MAX_S = 5.0
"""A task whose clients could not open tries again after 1 s, then twice as long each time up to this."""
TOPIC_CHECK_TIMEOUT_S = 8.0
"""Bound of one topic check (connectors.mirror.source_watch); past it the check is simply done again."""


def _open_failure(exc: BaseException, on_source: bool) -> str | None:
    """The condition a client's failed start is (``None``: none, it fails the task)."""
    side = "SOURCE" if on_source else "TARGET"
    if isinstance(exc, AuthenticationError):
        return f"{side}_AUTH_FAILED"
    return f"{side}_UNREACHABLE" if unreachable(exc) else None


def _open_failure_message(exc: BaseException, cluster: str, config: Mapping[str, Any]) -> str:
    if isinstance(exc, AuthenticationError):
        return str(exc)
    return f"{cluster} could not be reached to start client '{config.get('client.id') or ''}': {exc}"


class MirrorSourceTask(SourceTask):
    """Replicates the source partitions of ``task.assigned.partitions``; see the module docstring."""

    java_class = "org.apache.kafka.connect.mirror.MirrorSourceTask"

    def __init__(self) -> None:
        self._consumer: SourceConsumer | None = None
        self._producer: Any = None
        self._writer: OffsetSyncWriter | None = None
        self._sends = TaskSet(log)
        self._sync_outbox: list[tuple[OffsetSync, SendDone]] = []
        self._sync_pump: asyncio.Task[None] | None = None
        self._stopping = False
        self._routes: dict[tuple[str, int], tuple[str, dict[str, Any]]] = {}
        self._metrics: MirrorSourceMetrics | None = None
        self._target_check: asyncio.Task[None] | None = None
        self._watch: SourceWatch | None = None
        self._observed_at = 0.0
        self._checks = TaskSet(log)
        self._open_retry_at: float | None = None
        self._open_backoff_s = OPEN_BACKOFF_FIRST_S
        self.partitions: list[TopicPartition] = []
        self._raw_target: RawBatchTarget | None = None
        self._raw: RawSourceFetch | None = None
        self._raw_turn = 0

    def accept_raw_batches(self, target: RawBatchTarget | None) -> bool:
        """The worker's answer on raw batches (connectors.mirror.raw_copy), before ``start``: used
        unless ``pyconnect.mirror.raw.batches.enable`` is false (an invalid value fails ``start``)."""
        config = getattr(getattr(self, "context", None), "config", None) or {}
        try:
            wanted = raw_copy.enabled(config.get(raw_copy.RAW_BATCHES_CONFIG))
        except ValueError:
            wanted = False
        self._raw_target = target if wanted else None
        return self._raw_target is not None

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    async def start(self, props: Mapping[str, str]) -> None:
        config = MirrorSourceTaskConfig({k: v for k, v in props.items() if v is not None})
        try:
            self._truncation_policy = truncation.policy(props.get(truncation.TRUNCATION_POLICY_CONFIG))
            unreachable_after = reachability.unreachable_after_ms(
                props.get(reachability.UNREACHABLE_AFTER_CONFIG), target_latency_ms(props)
            )
            raw_enabled = raw_copy.enabled(props.get(raw_copy.RAW_BATCHES_CONFIG))
        except ValueError as exc:
            raise ConnectError(str(exc)) from None
        self._target_config = config.target_consumer_config("replication-target-probe")
        self._target_alias = config.target_cluster_alias
        self._source_alias = config.source_cluster_alias
        self._policy = config.replication_policy
        self._poll_timeout_ms = int(config.consumer_poll_timeout_ms)
        self._name = f"{props.get('name', 'MirrorSourceConnector')}-{props.get(TASK_INDEX, '?')}"
        self.partitions = list(
            dict.fromkeys(decode_topic_partition(p) for p in config.task_assigned_partitions)
        )
        self._task_config = config
        self._raw_enabled = raw_enabled
        consumer_config = self._consumer_config = config.source_consumer_config("replication-consumer")
        label = cluster_label(consumer_config, self._source_alias, "source")
        client = str(consumer_config.get("client.id") or "")
        self._watch = SourceWatch(
            self._name,
            self._source_alias,
            client,
            self._conditions(),
            reachability.Reachability(label, client, unreachable_after),
            cluster=label,
            principal=principal_of(consumer_config),
        )
        await self._open()

    async def _open(self) -> bool:
        """Open the offset-syncs producer and the replication consumer, then place the partitions (True
        once done). A refused login or a cluster found unreachable fails no task: it is a condition
        (SOURCE_AUTH_FAILED or SOURCE_UNREACHABLE; TARGET_ for a producer on the target;
        connectors.mirror.source_watch) and :meth:`poll` tries again after :data:`OPEN_BACKOFF_FIRST_S`,
        doubling up to :data:`OPEN_BACKOFF_MAX_S`, so a config put right, a password restored on the
        cluster or a broker started again resumes the copy (Java's task polls on). Other failures
        raise, as before."""
        config, watch = self._task_config, self._watch
        assert watch is not None
        if config.emit_offset_syncs_enabled and self._producer is None:
            producer_config = config.offset_syncs_topic_producer_config()
            label = offset_syncs_cluster(config, producer_config)
            on_source = str(config.offset_syncs_topic_location) == "source"
            try:
                producer = await start_producer(producer_config, label)
            except Exception as exc:
                code = _open_failure(exc, on_source)
                if code is None:
                    raise
                return self._open_failed(
                    code,
                    _open_failure_message(exc, label, producer_config),
                    self._source_alias if on_source else self._target_alias,
                    str(producer_config.get("client.id") or ""),
                )
            if self._stopping:
                await producer.stop()
                return False
            self._producer = producer
            self._offset_syncs_topic = config.offset_syncs_topic
            self._writer = OffsetSyncWriter(self._send_offset_sync, config.offset_lag_max, name=self._name)
        consumer = SourceConsumer(self._consumer_config, watch.cluster)
        try:
            await consumer.start()
        except BaseException as exc:
            await consumer.close()
            code = _open_failure(exc, on_source=True)
            if code is None:
                raise
            message = _open_failure_message(exc, watch.cluster, self._consumer_config)
            return self._open_failed(code, message, self._source_alias, watch.client)
        if self._stopping:
            await consumer.close()
            return False
        self._consumer = consumer
        self._open_retry_at = None
        watch.opened()
        await self._place(consumer)
        return True

    def _open_failed(self, code: str, message: str, alias: str, client: str) -> bool:
        """A client could not open (see :meth:`_open`): the condition, and the time of the next try."""
        if self._open_retry_at is None:
            self._open_backoff_s = OPEN_BACKOFF_FIRST_S
        else:
            self._open_backoff_s = min(OPEN_BACKOFF_MAX_S, self._open_backoff_s * 2)
        self._open_retry_at = time.monotonic() + self._open_backoff_s
        if self._watch is not None:
            self._watch.open_failed(code, message, cluster=alias, client=client)
        return False

    async def _reopen(self) -> None:
        """:meth:`poll` while the clients are not open: the next try once due (waits at most one poll
        timeout for it)."""
        due = self._open_retry_at
        wait = 0.0 if due is None else due - time.monotonic()
        if wait > 0:
            await asyncio.sleep(min(wait, self._poll_timeout_ms / 1000))
            if wait > self._poll_timeout_ms / 1000:
                return
        if not self._stopping:
            await self._open()

    async def _place(self, consumer: SourceConsumer) -> None:
        """Assign the partitions, seek those with committed offsets and start the target check."""
        config = self._task_config
        if self._raw_enabled and self._raw_target is not None:
            self._raw = RawSourceFetch(consumer)
        for tp in self.partitions:
            self._route(tp.topic, tp.partition)
        hub = getattr(getattr(self, "context", None), "metrics", None)
        if hub is not None and hub.recording:
            consumer.measure(hub)
            sources = {self._routes[(tp.topic, tp.partition)][0]: tp.topic for tp in self.partitions}

            def end_offset(remote: str, partition: int) -> int | None:
                topic = sources.get(remote)
                return consumer.highwater(topic, partition) if topic is not None else None

            self._metrics = MirrorSourceMetrics(
                hub,
                self._source_alias,
                config.target_cluster_alias,
                [(self._routes[(tp.topic, tp.partition)][0], tp.partition) for tp in self.partitions],
                end_offset=end_offset,
            )
        wrapped = [self._routes[tp][1] for tp in self.partitions]
        stored = await self.context.offset_storage_reader.offsets(wrapped) if wrapped else []
        consumer.assign(self.partitions)
        if self._raw is not None:
            self._raw.pause(self.partitions)
        uncommitted: list[TopicPartition] = []
        resumed: dict[TopicPartition, int] = {}
        for tp, offset in zip(self.partitions, stored, strict=True):
            committed = unwrap_offset(offset)
            if committed < 0:
                uncommitted.append(tp)
                continue
            resumed[tp] = committed
            consumer.seek(tp.topic, tp.partition, committed + 1)
            if self._metrics is not None:
                self._metrics.resumed(self._routes[(tp.topic, tp.partition)][0], tp.partition, committed)
        consumer.reset((tp.topic, tp.partition) for tp in uncommitted)
        if resumed:  # a start never waits for the target; poll copies once it is checked
            self._target_check = asyncio.create_task(self._check_target(resumed))
        log.info(
            "%s replicating %d topic-partitions %s->%s (%d without committed offsets, %s): %s.",
            self._name,
            len(self.partitions),
            self._source_alias,
            config.target_cluster_alias,
            len(uncommitted),
            "record batches copied as bytes where they can be"
            if self._raw is not None
            else "record by record",
            ",".join(map(str, self.partitions)),
        )

    async def _check_target(self, committed: Mapping[TopicPartition, int]) -> None:
        """Report the partitions whose remote partition is missing or empty behind their committed
        offset (a rebuilt target); the ``fail`` policy raises, ``continue`` keeps the seek. Runs as a
        task of its own after ``start``; :meth:`poll` copies nothing until it is done."""
        consumer = self._consumer
        if consumer is None:
            return
        try:
            remote, source = await asyncio.wait_for(self._bounds(consumer, committed), TARGET_CHECK_TIMEOUT_S)
        except (ConnectError, TimeoutError, OSError, RuntimeError) as exc:
            log.warning(
                "%s: could not check the target for partitions rebuilt behind the committed offsets: %s",
                self._name,
                exc,
            )
            return
        gaps = []
        for tp, offset in committed.items():
            bounds = remote.get((self._routes[(tp.topic, tp.partition)][0], tp.partition))
            start, end = source.get((tp.topic, tp.partition), (0, 0))
            gap = truncation.target_gap(
                tp.topic, tp.partition, offset, None if bounds is None else bounds[1], start, end
            )
            if gap is not None:
                gaps.append(gap)
        self._gaps(gaps)

    async def _bounds(
        self, consumer: SourceConsumer, committed: Mapping[TopicPartition, int]
    ) -> tuple[dict[tuple[str, int], tuple[int, int]], dict[tuple[str, int], tuple[int, int]]]:
        """Log bounds of the remote partitions (on the target) and of the source partitions."""
        remote = await log_bounds_of(
            self._target_config,
            cluster_label(self._target_config, self._target_alias, "target"),
            [(self._routes[(tp.topic, tp.partition)][0], tp.partition) for tp in committed],
        )
        return remote, await consumer.log_bounds((tp.topic, tp.partition) for tp in committed)

    def _gaps(self, gaps: Sequence[truncation.Gap]) -> None:
        """Report every gap (a WARN line each, metrics) and apply the policy to them together: under
        ``fail`` raise naming them all, without moving past any; else seek each to its resume offset (a
        rebuilt target's resume offset is the seek already made)."""
        failing = self._truncation_policy == truncation.FAIL
        for gap in gaps:
            log.warning(  # the subject names the partition: the log guard bounds repeats per subject
                "%s: %s; %s (%s=%s).",
                f"{self._name}, {gap.topic}-{gap.partition}",
                gap.message(),
                "failing the task" if failing else f"resuming at offset {gap.resume}",
                truncation.TRUNCATION_POLICY_CONFIG,
                self._truncation_policy,
            )
            if self._metrics is not None:
                remote = self._route(gap.topic, gap.partition)[0]
                moved = not failing and gap.kind != truncation.TARGET_REBUILT
                self._metrics.truncated(remote, gap.partition, gap.lost, gap.resume if moved else None)
        if self._watch is not None and gaps:
            self._watch.gaps(time.monotonic(), gaps)
        if failing and gaps:
            raise ConnectError(
                f"{self._name}: {'; '.join(g.message() for g in gaps)} "
                f"({truncation.TRUNCATION_POLICY_CONFIG}={truncation.FAIL})"
            )
        if self._consumer is not None:
            for gap in gaps:
                if gap.kind != truncation.TARGET_REBUILT:  # its resume offset is the start's seek
                    self._consumer.seek(gap.topic, gap.partition, gap.resume)

    def _out_of_range(self, refused: PositionOutOfRange) -> None:
        """Handle every position a poll met out of range at once (see :meth:`_gaps`)."""
        gaps = []
        for p in refused.partitions:
            gap = truncation.source_gap(p.topic, p.partition, p.position, p.log_start, p.log_end)
            if gap is not None:
                gaps.append(gap)
            elif self._consumer is not None:  # in range again (e.g. a leader change): fetch again
                self._consumer.seek(p.topic, p.partition, p.position)
        self._gaps(gaps)

    def _route(self, topic: str, partition: int) -> tuple[str, dict[str, Any]]:
        route = self._routes.get((topic, partition))
        if route is None:
            route = self._routes[(topic, partition)] = (
                self._policy.format_remote_topic(self._source_alias, topic),
                wrap_partition(topic, partition, self._source_alias),
            )
        return route

    async def _target_checked(self) -> bool:
        """Whether polls may copy: the start's target check is done (a ``fail`` raises here). Waits at
        most one poll timeout, so a stop is never held up; copying first would hide the gap (the
        target would hold the new records when asked)."""
        check = self._target_check
        if check is None:
            return True
        if not check.done():
            await asyncio.wait([check], timeout=self._poll_timeout_ms / 1000)
            if not check.done():
                return False
        self._target_check = None
        check.result()
        return True

    async def poll(self) -> list[SourceRecord | RawRecordBatch] | None:
        consumer = self._consumer
        if self._stopping:
            return None
        if consumer is None:  # a login was refused: try again once due
            if self._watch is not None:
                await self._reopen()
            return None
        if not await self._target_checked():
            return None
        if self._raw is not None:
            return await self._poll_raw(self._raw)
        try:
            batch = await consumer.poll(self._poll_timeout_ms)
        except PositionOutOfRange as refused:
            self._out_of_range(refused)
            batch = refused.batch  # the same poll's records of other partitions
        self._observe(consumer)
        if not batch or self._stopping:
            return None
        records: list[SourceRecord] = []
        metrics = self._metrics
        for tp, messages in batch.items():
            remote, source_partition = self._route(tp.topic, tp.partition)
            partition = tp.partition
            records.extend(copied(messages, source_partition, remote, partition))
            if metrics is not None and messages:
                metrics.record_polled(
                    remote,
                    partition,
                    [m.timestamp for m in messages],
                    value_bytes(messages),
                    messages[-1].offset,
                )
        return records or None  # type: ignore[return-value]

    async def _poll_raw(self, fetcher: RawSourceFetch) -> list[SourceRecord | RawRecordBatch] | None:
        """The raw path's poll (connectors.mirror.raw_copy): fetched batches copied or decoded, each
        partition's position moved past what was taken just before returning (nothing awaited after)."""
        target = self._raw_target
        assert target is not None
        try:
            fetched = await fetcher.fetch(self._poll_timeout_ms)
        except PositionOutOfRange as refused:
            self._out_of_range(refused)
            fetched = refused.raw  # the same fetch's answers for other partitions
        if self._consumer is not None:
            self._observe(self._consumer)
        if not fetched or self._stopping:
            return None
        items: list[SourceRecord | RawRecordBatch] = []
        metrics = self._metrics
        budget = self._consumer.max_poll_records if self._consumer is not None else None
        records_taken = 0  # max.poll.records caps a poll's records, as on the record path
        # ... shared among the partitions answered: a poll holding batches of several partitions lets
        # the worker fill each produce request with one batch of each (one per partition is the most a
        # request carries); a first partition taking the whole budget left one batch per request
        share = None if budget is None else max(1, -(-budget // len(fetched)))
        turn = self._raw_turn % len(fetched)  # the partition served first rotates: none starves
        self._raw_turn += 1
        fetched = fetched[turn:] + fetched[:turn]
        for answer in fetched:
            remote, source_partition = self._route(answer.topic, answer.partition)
            taken = raw_copy.take(
                answer.fetch,
                answer.position,
                target,
                read_committed=fetcher.read_committed,
                remote=remote,
                partition=answer.partition,
                source_partition=source_partition,
                max_records=None
                if budget is None or share is None
                else max(0, min(share, budget - records_taken)),
            )
            records_taken += taken.records
            items.extend(taken.items)
            if taken.rest is not None:  # the poll's max.poll.records reached: the rest for the next poll
                fetcher.hold(answer, taken.next_position, taken.rest, taken.end)
            if taken.next_position != answer.position:
                fetcher.advance(answer.topic, answer.partition, taken.next_position, taken.records)
            if metrics is not None:
                if taken.copied_batches or taken.decoded_batches:
                    metrics.raw_batches(remote, answer.partition, taken.copied_batches, taken.decoded_batches)
                if taken.timestamps and taken.last_offset is not None:
                    metrics.record_polled(
                        remote, answer.partition, taken.timestamps, taken.size, taken.last_offset
                    )
        if items:  # the next fetch goes out while these are sent
            fetcher.prefetch(self._poll_timeout_ms)
        return items or None

    def commit_raw_batch(self, batch: RawRecordBatch, base_offset: int) -> None:
        """A batch copied as bytes is acknowledged at ``base_offset``: its records are the consecutive
        offsets from ``batch.first_offset`` (one offset-sync run) and its metrics count them all."""
        if self._stopping:
            return
        last = batch.first_offset + batch.record_count - 1
        if self._metrics is not None:
            self._metrics.record_acknowledged(batch.topic, batch.kafka_partition, batch.record_count, last)
        writer = self._writer
        source = batch.source_partition
        if writer is None or source is None:
            return
        tp = TopicPartition(source[TOPIC_KEY], source[PARTITION_KEY])
        writer.queue_run(tp, batch.first_offset, batch.record_count, base_offset)
        writer.fire_pending_offset_syncs()

    def _observe(self, consumer: SourceConsumer) -> None:
        """At most once a second: the source conditions from what the consumer met (refused READs,
        late partitions, the topic check when due, the hold of old gaps; connectors.mirror.source_watch)."""
        watch = self._watch
        now = time.monotonic()
        if watch is None or now - self._observed_at < 1.0:
            return
        self._observed_at = now
        watch.read_refused(consumer.refused_topics())
        late = consumer.unanswered(watch.check_after_ms)
        if not late:
            watch.answered()
        wanted = watch.check_due(now, {topic for topic, _ in late})
        if wanted and not self._checks.running():
            self._checks.spawn(self._check_topics(consumer, wanted), name=f"{self._name}-topic-check")
        watch.late(now, consumer.unanswered(watch.reachability.after_ms) if late else [])
        watch.expire(now)

    async def _check_topics(self, consumer: SourceConsumer, topics: set[str]) -> None:
        """The topic check (connectors.mirror.source_watch), bounded by :data:`TOPIC_CHECK_TIMEOUT_S`."""
        try:
            check = await asyncio.wait_for(consumer.check_topics(topics), TOPIC_CHECK_TIMEOUT_S)
        except TimeoutError:
            return
        if self._watch is not None and not self._stopping:
            self._watch.checked(check, topics)

    def _conditions(self) -> ConditionBoard | None:
        """The task's conditions (pyconnect.conditions), ``None`` outside a worker."""
        return getattr(getattr(self, "context", None), "conditions", None)

    def _acknowledged(self, record: SourceRecord, written: int) -> None:
        """The metrics of ``record`` and the ``written`` (0: dropped or failed) records before it since
        the last call for its partition; keyed by the record as polled (Java's ``commitRecord`` sees the
        record before transformations)."""
        offset = _source_offset(record)
        if self._metrics is not None and offset is not None and record.kafka_partition is not None:
            self._metrics.record_acknowledged(record.topic, record.kafka_partition, written, offset)

    async def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        if self._stopping:
            return
        self._acknowledged(record, 0 if metadata is None else 1)
        if metadata is None:
            return
        writer = self._writer
        if writer is None:
            return
        partition, offset = record.source_partition, record.source_offset
        if partition is None or offset is None:
            return
        writer.maybe_queue_offset_syncs(
            TopicPartition(partition[TOPIC_KEY], partition[PARTITION_KEY]),
            offset[OFFSET_KEY],
            metadata.offset,
        )
        writer.fire_pending_offset_syncs()

    def commit_record_batch(
        self, records: Sequence[SourceRecord], topic: str, partition: int, base_offset: int
    ) -> None:
        """The batch form of ``commit_record``: one acknowledged producer batch holds records of one
        source partition (a remote partition has one source partition), copied to consecutive offsets."""
        if self._stopping or not records:
            return
        source = records[0].source_partition
        uniform = source is not None and countOf(map(_SOURCE_PARTITION, records), source) == len(records)
        if self._metrics is not None:
            if uniform:
                self._acknowledged(records[-1], len(records))
            else:
                for record in records:
                    self._acknowledged(record, 1)
        writer = self._writer
        if writer is None or source is None:
            return
        if not uniform:
            for position, record in enumerate(records):
                self._queue_one(record, base_offset + position)
        else:
            tp = TopicPartition(source[TOPIC_KEY], source[PARTITION_KEY])
            first = records[0].source_offset[OFFSET_KEY]  # type: ignore[index]
            last = records[-1].source_offset[OFFSET_KEY]  # type: ignore[index]
            if last - first == len(records) - 1:  # one poll's offsets, increasing: consecutive
                writer.queue_run(tp, first, len(records), base_offset)
            else:  # a gap (a transformation dropped records)
                offsets = [r.source_offset[OFFSET_KEY] for r in records]  # type: ignore[index]
                writer.queue_batch(tp, offsets, base_offset)
        writer.fire_pending_offset_syncs()

    def _queue_one(self, record: SourceRecord, downstream: int) -> None:
        partition, offset = record.source_partition, record.source_offset
        if partition is not None and offset is not None and self._writer is not None:
            self._writer.maybe_queue_offset_syncs(
                TopicPartition(partition[TOPIC_KEY], partition[PARTITION_KEY]), offset[OFFSET_KEY], downstream
            )

    async def commit(self) -> None:
        writer = self._writer
        if writer is not None:
            writer.promote_delayed_offset_syncs()
            writer.fire_pending_offset_syncs()

    def _send_offset_sync(self, sync: OffsetSync, done: SendDone) -> None:
        """The writer's ``send``: ``sync`` joins the outbox of the one offset-sync pump, so the syncs
        handed over while a batch of them is on its way leave together in the next batch."""
        self._sync_outbox.append((sync, done))
        if self._sync_pump is None or self._sync_pump.done():
            self._sync_pump = self._sends.spawn(self._pump_offset_syncs(), name=f"{self._name}-offset-syncs")

    async def _pump_offset_syncs(self) -> None:
        while self._sync_outbox:
            group, self._sync_outbox = self._sync_outbox, []
            await send_offset_syncs(self._producer, self._offset_syncs_topic, group)

    async def _drain_offset_syncs(self, timeout_s: float) -> None:
        """Send the queued offset syncs (the final commit promoted the delayed ones) as permits free up,
        for at most ``timeout_s``: unlike Java, a stopping task does not drop the syncs it still holds."""
        writer = self._writer
        deadline = time.monotonic() + timeout_s
        while True:
            if writer is not None:
                writer.fire_pending_offset_syncs()
            remaining = deadline - time.monotonic()
            sends = self._sends.running()
            if not sends or remaining <= 0:
                break
            await asyncio.wait(sends, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        left = len(writer.pending_syncs()) if writer is not None else 0
        if left:
            log.warning("%s: %d offset syncs not sent before stopping", self._name, left)

    async def stop(self) -> None:
        started = time.monotonic()
        self._stopping = True
        for running in self._checks.running():  # waited for at the end, whatever happens meanwhile
            running.cancel()
        check, self._target_check = self._target_check, None
        consumer, self._consumer = self._consumer, None
        raw, self._raw = self._raw, None
        try:
            await cancel_and_wait(check, log=None)  # its failure, if any, was the task's to report
            if raw is not None:
                await raw.close()
            if consumer is not None:
                with contextlib.suppress(Exception):
                    await consumer.close()
            if self._producer is not None:
                await self._drain_offset_syncs(STOP_SYNC_DRAIN_S)
        finally:  # even when the runtime cancels a stop that overran its graceful bound
            if consumer is not None:  # closed above unless cancelled first (closing twice is a no-op)
                with contextlib.suppress(Exception):
                    await consumer.close()
            metrics, self._metrics = self._metrics, None
            if metrics is not None:
                metrics.close()
            producer, self._producer = self._producer, None
            if producer is not None:
                with contextlib.suppress(Exception):
                    await producer.stop()
            await self._sends.close()
            await self._checks.close()
        log.info(
            "Stopping %s took %.0f ms.",
            getattr(self, "_name", "MirrorSourceTask"),
            (time.monotonic() - started) * 1000,
        )
