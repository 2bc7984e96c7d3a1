"""MirrorSourceConnector: discover source topics, create and sync remote topics, deal partitions to
tasks (spec §2.2); its tasks are connectors.mirror.source_task.MirrorSourceTask.

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

"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import pyconnect
from connectors.mirror import raw_copy, reachability, truncation
from connectors.mirror.config import (
    MIRROR_SOURCE_CONFIG_DEF,
    MirrorSourceConfig,
    source_connector_validation_errors,
)
from connectors.mirror.policy import is_cycle
from connectors.mirror.records import (
    RecordFormatError,
    TopicPartition,
    validate_source_offset,
    validate_source_partition,
)
from connectors.mirror.remote_topics import RemoteTopics
from connectors.mirror.routed_topics import (
    builtin_transformation,
    connector_transformations,
    routed_topics,
    routing_errors,
)
from connectors.mirror.scheduler import Job, ScheduledConnector, Scheduler
from connectors.mirror.source_task import (  # noqa: F401  (the task is reached through this module too)
    TASK_INDEX,
    MirrorSourceTask,
    offset_syncs_cluster,
)
from pyconnect.api.connector import ExactlyOnceSupport
from pyconnect.config.client_configs import mirror_connector_client_config
from pyconnect.config.definition import ConfigDef, ConfigValue
from pyconnect.errors import ConnectError
from pyconnect.kafka.access import cluster_label
from pyconnect.kafka.acls import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    SecurityDisabled,
)
from pyconnect.kafka.mirror_admin import (
    OP_DELETE,
    OP_SET,
    STATIC_BROKER_CONFIG,
    ConfigEntry,
    MirrorAdmin,
    NewTopicSpec,
)
from pyconnect.mirror_status.core import (
    HEARTBEATS_MAX_AGE_CONFIG,
    TARGET_LATENCY_CONFIG,
    heartbeats_max_age_error,
    target_latency_error,
)
from pyconnect.protocol.javahash import default_hash_order, hash_order, java_string_hash

log = logging.getLogger(__name__)

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
        scheduler = self._scheduler = self._scheduler_for(self._name, config.admin_timeout_ms / 1000)
        async with self._stopped_unless_started():
            await self._start_jobs(config, scheduler)
        log.info(
            "Started %s with %d topic-partitions in %.0f ms.",
            self._name,
            len(self.known_source_partitions),
            (time.monotonic() - started) * 1000,
        )

    async def _start_jobs(self, config: MirrorSourceConfig, scheduler: Scheduler) -> None:
        steps: list[tuple[Job, str]] = []
        if config.emit_offset_syncs_enabled:
            steps.append((self._create_offset_syncs_topic, "creating upstream offset-syncs topic"))
        steps += [
            (self._load_topic_partitions, "loading initial set of topic-partitions"),
            (self.compute_and_create_topic_partitions, "creating downstream topic-partitions"),
            (self._refresh_known_target_topics, "refreshing known target topics"),
        ]
        await self._start_steps(scheduler, steps, lambda: self._schedule_jobs(config, scheduler))

    def _schedule_jobs(self, config: MirrorSourceConfig, scheduler: Scheduler) -> None:
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
        return is_cycle(self._policy, self._cfg.target_cluster_alias, topic)

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
            grow.update(await self._created_short(new_topics, source_counts))
        if grow:
            results = await (await self._admin(self._target_admin)).create_partitions(grow)
            for topic, error in results.items():
                if error is None:
                    log.info("%s: increased size of %s to %d partitions.", self._name, topic, grow[topic])
                else:
                    log.warning("%s: could not create topic-partitions for %s: %s", self._name, topic, error)
        await self._create_routed_topics(source_counts, remote)

    async def _created_short(self, topics: list[str], counts: Mapping[str, int]) -> dict[str, int]:
        """Beyond Java: the remote topics of ``topics`` with fewer partitions than their source right
        after the create, with the count they need. One created elsewhere meanwhile (a consumer on the
        target while the broker creates topics on first use) answers "already exists"; Java leaves it
        short until the next topic refresh (10 minutes by default) while the tasks wait."""
        described = await (await self._admin(self._target_admin)).topic_partitions()
        short = {}
        for topic in topics:
            remote, wanted = self._remote(topic), counts[topic]
            present = len(described.get(remote, ())) or wanted
            if present < wanted:
                log.info(
                    "%s: remote topic %s was created elsewhere with %d partition(s)",
                    self._name,
                    remote,
                    present,
                )
                short[remote] = wanted
        return short

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
