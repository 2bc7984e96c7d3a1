"""MirrorMaker 2 connector configuration (Kafka 4.3.1 ``MirrorConnectorConfig`` and its three subclasses).

Size: over 600 lines because MirrorMaker's config tables (Java's MirrorConnectorConfig and its three
subclasses) share their keys and defaults.

Every key is declared once below, with the names, types, defaults, importance and documentation of the
4.3.1 jars (checked by ``tests/unit/mirror/test_mirror_config.py`` against ``tests/golden/mirror_policy``). The
``*_KEYS`` tuples hold only the MirrorMaker rows (what ``Connector.config()`` returns; REST adds the framework
keys); the ``*_CONFIG_DEF`` tables add the Connect framework keys, as Java's ``CONNECTOR_CONFIG_DEF`` does, and
are what the typed configs parse (so ``name`` and ``connector.class`` are required, as in Java).

Typed configs (:class:`MirrorSourceConfig`, :class:`MirrorCheckpointConfig`, :class:`MirrorHeartbeatConfig`
and the two task configs) parse once at construction and raise :class:`~pyconnect.errors.ConfigError` on the
first problem. They keep the *originals* (the raw string map); pluggable parts (replication policy, filters)
are configured with the originals, like Java's ``getConfiguredInstance``.

The ``*_config`` methods (``source_consumer_config`` ... ``offset_syncs_topic_admin_config``) return the client
maps of the connectors and tasks, assembled by the rules of :mod:`pyconnect.config.client_configs`
(``source.cluster.``/``target.cluster.`` connectivity keys < ``<role>.*`` < ``<cluster>.<role>.*``, then the
``client.id`` label); the methods only pick the cluster, the role and the ``client.id`` suffix.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any, ClassVar

from connectors.mirror.filters import (
    CONFIG_PROPERTY_FILTER_CLASS,
    GROUP_FILTER_CLASS,
    TOPIC_FILTER_CLASS,
    ConfigPropertyFilter,
    GroupFilter,
    TopicFilter,
    config_property_filter,
    group_filter,
    known_filter,
    topic_filter,
)
from connectors.mirror.policy import ReplicationPolicy, is_known_policy, replication_policy
from pyconnect.config.client_configs import mirror_client_id, mirror_connector_client_config
from pyconnect.config.connector_keys import CONNECTOR_KEYS
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.security_keys import SECURITY_KEYS
from pyconnect.config.types import Importance, Type
from pyconnect.config.validators import ValidList, ValidString
from pyconnect.config.worker_keys import WORKER_KEYS

_ANY_LIST = ValidList.any_non_duplicate_values(allow_empty=True, allow_null=False)

_CONSUMER_POLL_TIMEOUT = ConfigKey(
    "consumer.poll.timeout.ms",
    Type.LONG,
    default=1000,
    importance=Importance.LOW,
    documentation="Timeout when polling source cluster.",
)
_OFFSET_SYNCS_TOPIC_LOCATION = ConfigKey(
    "offset-syncs.topic.location",
    Type.STRING,
    default="source",
    importance=Importance.LOW,
    documentation="The location (source/target) of the offset-syncs topic.",
    validator=ValidString("source", "target"),
)
_TOPIC_FILTER_CLASS = ConfigKey(
    "topic.filter.class",
    Type.CLASS,
    default="org.apache.kafka.connect.mirror.DefaultTopicFilter",
    importance=Importance.LOW,
    documentation="TopicFilter to use. Selects topics to replicate.",
    loadable=known_filter(TOPIC_FILTER_CLASS),
)

FORWARDING_ADMIN_CLASSES = frozenset({"org.apache.kafka.clients.admin.ForwardingAdmin", "ForwardingAdmin"})
"""The admin this runtime uses for topic, config and ACL changes: Kafka's own (no external system)."""

# Keys the mirror connectors share with the worker, declared once in the worker table.
_WORKER_KEY = {key.name: key for key in WORKER_KEYS}

BASE_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "enabled",
        Type.BOOLEAN,
        default=True,
        importance=Importance.LOW,
        documentation="Whether to replicate source->target.",
    ),
    ConfigKey(
        "source.cluster.alias",
        Type.STRING,
        importance=Importance.HIGH,
        documentation="Alias of source cluster",
    ),
    ConfigKey(
        "target.cluster.alias",
        Type.STRING,
        default="target",
        importance=Importance.HIGH,
        documentation="Alias of target cluster. Used in metrics reporting.",
    ),
    ConfigKey(
        "admin.timeout.ms",
        Type.LONG,
        default=60000,
        importance=Importance.LOW,
        documentation="Timeout for administrative tasks, e.g. detecting new topics.",
    ),
    ConfigKey(
        "replication.policy.class",
        Type.CLASS,
        default="org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
        importance=Importance.LOW,
        documentation="Class which defines the remote topic naming convention.",
        loadable=is_known_policy,
    ),
    ConfigKey(
        "replication.policy.separator",
        Type.STRING,
        default=".",
        importance=Importance.LOW,
        documentation="Separator used in remote topic naming convention.",
    ),
    ConfigKey(
        "replication.policy.internal.topic.separator.enabled",
        Type.BOOLEAN,
        default=True,
        importance=Importance.LOW,
        documentation="Whether to use replication.policy.separator to control the names of topics used for checkpoints and offset syncs. By default, custom separators are used in these topic names; however, if upgrading MirrorMaker 2 from older versions that did not allow for these topic names to be customized, it may be necessary to set this property to 'false' in order to continue using the same names for those topics.",
    ),
    ConfigKey(
        "forwarding.admin.class",
        Type.CLASS,
        default="org.apache.kafka.clients.admin.ForwardingAdmin",
        importance=Importance.LOW,
        documentation="Class which extends ForwardingAdmin to define custom cluster resource management (topics, configs, etc). The class must have a constructor with signature <code>(Map<String, Object> config)</code> that is used to configure a KafkaAdminClient and may also be used to configure clients for external systems if necessary.",
        loadable=lambda name: name in FORWARDING_ADMIN_CLASSES,
    ),
    _WORKER_KEY["metric.reporters"],
    _WORKER_KEY["security.protocol"],
    _WORKER_KEY["config.providers"],
    *SECURITY_KEYS,
)

SOURCE_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "topics",
        Type.LIST,
        default=[".*"],
        importance=Importance.HIGH,
        documentation="Topics to replicate. Supports comma-separated topic names and regexes.",
        validator=_ANY_LIST,
    ),
    ConfigKey(
        "topics.exclude",
        Type.LIST,
        default=["mm2.*\\.internal", ".*\\.replica", "__.*"],
        importance=Importance.HIGH,
        documentation="Excluded topics. Supports comma-separated topic names and regexes. Excludes take precedence over includes.",
        validator=_ANY_LIST,
    ),
    ConfigKey(
        "config.properties.exclude",
        Type.LIST,
        default=[
            "follower.replication.throttled.replicas",
            "leader.replication.throttled.replicas",
            "message.timestamp.difference.max.ms",
            "log.message.timestamp.before.max.ms",
            "log.message.timestamp.after.max.ms",
            "message.timestamp.type",
            "unclean.leader.election.enable",
            "min.insync.replicas",
        ],
        importance=Importance.HIGH,
        documentation="Topic config properties that should not be replicated. Supports comma-separated property names and regexes.",
        validator=_ANY_LIST,
    ),
    _TOPIC_FILTER_CLASS,
    ConfigKey(
        "config.property.filter.class",
        Type.CLASS,
        default="org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter",
        importance=Importance.LOW,
        documentation="ConfigPropertyFilter to use. Selects topic config  properties to replicate.",
        loadable=known_filter(CONFIG_PROPERTY_FILTER_CLASS),
    ),
    _CONSUMER_POLL_TIMEOUT,
    ConfigKey(
        "refresh.topics.enabled",
        Type.BOOLEAN,
        default=True,
        importance=Importance.LOW,
        documentation="Whether to periodically check for new topics and partitions.",
    ),
    ConfigKey(
        "refresh.topics.interval.seconds",
        Type.LONG,
        default=600,
        importance=Importance.LOW,
        documentation="Frequency of topic refresh.",
    ),
    ConfigKey(
        "sync.topic.configs.enabled",
        Type.BOOLEAN,
        default=True,
        importance=Importance.LOW,
        documentation="Whether to periodically configure remote topics to match their corresponding upstream topics.",
    ),
    ConfigKey(
        "sync.topic.configs.interval.seconds",
        Type.LONG,
        default=600,
        importance=Importance.LOW,
        documentation="Frequency of topic config sync.",
    ),
    ConfigKey(
        "sync.topic.acls.enabled",
        Type.BOOLEAN,
        default=True,
        importance=Importance.LOW,
        documentation="Whether to periodically configure remote topic ACLs to match their corresponding upstream topics.",
    ),
    ConfigKey(
        "sync.topic.acls.interval.seconds",
        Type.LONG,
        default=600,
        importance=Importance.LOW,
        documentation="Frequency of topic ACL sync.",
    ),
    ConfigKey(
        "replication.factor",
        Type.INT,
        default=2,
        importance=Importance.LOW,
        documentation="Replication factor for newly created remote topics.",
    ),
    ConfigKey(
        "offset-syncs.topic.replication.factor",
        Type.SHORT,
        default=3,
        importance=Importance.LOW,
        documentation="Replication factor for offset-syncs topic.",
    ),
    ConfigKey(
        "offset.lag.max",
        Type.LONG,
        default=100,
        importance=Importance.LOW,
        documentation="How out-of-sync a remote partition can be before it is resynced.",
    ),
    _OFFSET_SYNCS_TOPIC_LOCATION,
    ConfigKey(
        "emit.offset-syncs.enabled",
        Type.BOOLEAN,
        default=True,
        importance=Importance.LOW,
        documentation="Whether to store the new offset of the replicated records in offset-syncs topic or not. MirrorCheckpointConnector will not be able to sync group offsets or emit checkpoints if emit.checkpoints.enabled and/or sync.group.offsets.enabled are enabled while emit.offset-syncs.enabled is disabled.",
    ),
    ConfigKey(
        "heartbeats.replication.enabled",
        Type.BOOLEAN,
        default=True,
        importance=Importance.LOW,
        documentation="Whether to replicate the heartbeats topics even when the topic filter does not include them. If set to true, heartbeats topics identified by the replication policy will always be replicated, regardless of the topic filter configuration. If set to false, heartbeats topics will only be replicated if the topic filter allows.",
    ),
    ConfigKey(
        "metric.names.formats",
        Type.LIST,
        default=["legacy"],
        importance=Importance.LOW,
        documentation='Deprecated. The formats in which metrics are emitted. Valid values are legacy and new. When set to legacy, the metrics have the following name "kafka.connect.mirror:type=MirrorSourceConnector,source={SOURCE},target={TARGET},topic={TOPIC},partition={PARTITION}". When set to new, the metrics have the following name "kafka.connect:type=plugins,connector={CONNECTOR},task={TASK},source={SOURCE},target={TARGET},topic={TOPIC},partition={PARTITION}". When set to "legacy,new" the connector will emit metrics with both names, this can be useful when migrating to the new format but it doubles the amount of metrics that are emitted.\nIn Kafka 5.0 the legacy format and this configuration will be removed and the metrics will always use the new names.',
        validator=ValidList.in_("legacy", "new", allow_empty=False),
    ),
)

CHECKPOINT_KEYS: tuple[ConfigKey, ...] = (
    _CONSUMER_POLL_TIMEOUT,
    ConfigKey(
        "groups",
        Type.LIST,
        default=[".*"],
        importance=Importance.HIGH,
        documentation="Consumer groups to replicate. Supports comma-separated group IDs and regexes.",
        validator=_ANY_LIST,
    ),
    ConfigKey(
        "groups.exclude",
        Type.LIST,
        default=["console-consumer-.*", "connect-.*", "__.*"],
        importance=Importance.HIGH,
        documentation="Exclude groups. Supports comma-separated group IDs and regexes. Excludes take precedence over includes.",
        validator=_ANY_LIST,
    ),
    ConfigKey(
        "group.filter.class",
        Type.CLASS,
        default="org.apache.kafka.connect.mirror.DefaultGroupFilter",
        importance=Importance.LOW,
        documentation="GroupFilter to use. Selects consumer groups to replicate.",
        loadable=known_filter(GROUP_FILTER_CLASS),
    ),
    ConfigKey(
        "refresh.groups.enabled",
        Type.BOOLEAN,
        default=True,
        importance=Importance.LOW,
        documentation="Whether to periodically check for new consumer groups.",
    ),
    ConfigKey(
        "refresh.groups.interval.seconds",
        Type.LONG,
        default=600,
        importance=Importance.LOW,
        documentation="Frequency of group refresh.",
    ),
    ConfigKey(
        "emit.checkpoints.enabled",
        Type.BOOLEAN,
        default=True,
        importance=Importance.LOW,
        documentation="Whether to replicate consumer offsets to target cluster.",
    ),
    ConfigKey(
        "emit.checkpoints.interval.seconds",
        Type.LONG,
        default=60,
        importance=Importance.LOW,
        documentation="Frequency of checkpoints.",
    ),
    ConfigKey(
        "sync.group.offsets.enabled",
        Type.BOOLEAN,
        default=False,
        importance=Importance.LOW,
        documentation="Whether to periodically write the translated offsets to __consumer_offsets topic in target cluster, as long as no active consumers in that group are connected to the target cluster",
    ),
    ConfigKey(
        "sync.group.offsets.interval.seconds",
        Type.LONG,
        default=60,
        importance=Importance.LOW,
        documentation="Frequency of consumer group offset sync.",
    ),
    ConfigKey(
        "checkpoints.topic.replication.factor",
        Type.SHORT,
        default=3,
        importance=Importance.LOW,
        documentation="Replication factor for checkpoints topic.",
    ),
    _OFFSET_SYNCS_TOPIC_LOCATION,
    _TOPIC_FILTER_CLASS,
    ConfigKey(
        "metric.names.formats",
        Type.LIST,
        default=["legacy"],
        importance=Importance.LOW,
        documentation='Deprecated. The formats in which metrics are emitted. Valid values are legacy and new. When set to legacy, the metrics have the following name "kafka.connect.mirror:type=MirrorCheckpointConnector,source={SOURCE},target={TARGET},group={GROUP},topic={TOPIC},partition={PARTITION}". When set to new, the metrics have the following name "kafka.connect:type=plugins,connector={CONNECTOR},task={TASK},source={SOURCE},target={TARGET},group={GROUP},topic={TOPIC},partition={PARTITION}". When set to "legacy,new" the connector will emit metrics with both names, this can be useful when migrating to the new format but it doubles the amount of metrics that are emitted.\nIn Kafka 5.0 the legacy format and this configuration will be removed and the metrics will always use the new names.',
        validator=ValidList.in_("legacy", "new", allow_empty=False),
    ),
)

HEARTBEAT_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "emit.heartbeats.enabled",
        Type.BOOLEAN,
        default=True,
        importance=Importance.LOW,
        documentation="Whether to emit heartbeats to target cluster.",
    ),
    ConfigKey(
        "emit.heartbeats.interval.seconds",
        Type.LONG,
        default=1,
        importance=Importance.LOW,
        documentation="Frequency of heartbeats.",
    ),
    ConfigKey(
        "heartbeats.topic.replication.factor",
        Type.SHORT,
        default=3,
        importance=Importance.LOW,
        documentation="Replication factor for heartbeats topic.",
    ),
)

SOURCE_TASK_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "task.assigned.partitions",
        Type.LIST,
        importance=Importance.LOW,
        documentation="Topic-partitions assigned to this task to replicate.",
        validator=ValidList.any_non_duplicate_values(allow_empty=False, allow_null=False),
    ),
    ConfigKey(
        "task.index", Type.INT, default=None, importance=Importance.LOW, documentation="The index of the task"
    ),
)

CHECKPOINT_TASK_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "task.assigned.groups",
        Type.LIST,
        importance=Importance.LOW,
        documentation="Consumer groups assigned to this task to replicate.",
        validator=ValidList.any_non_duplicate_values(allow_empty=False, allow_null=False),
    ),
    ConfigKey(
        "task.index", Type.INT, default=None, importance=Importance.LOW, documentation="The index of the task"
    ),
)

#: MirrorMaker rows only (``Connector.config()``).
MIRROR_SOURCE_CONFIG_DEF = ConfigDef(BASE_KEYS + SOURCE_KEYS)
MIRROR_CHECKPOINT_CONFIG_DEF = ConfigDef(BASE_KEYS + CHECKPOINT_KEYS)
MIRROR_HEARTBEAT_CONFIG_DEF = ConfigDef(BASE_KEYS + HEARTBEAT_KEYS)

#: Framework keys + MirrorMaker rows: Java's ``CONNECTOR_CONFIG_DEF`` / ``TASK_CONFIG_DEF``.
SOURCE_CONNECTOR_CONFIG_DEF = ConfigDef(CONNECTOR_KEYS + BASE_KEYS + SOURCE_KEYS)
CHECKPOINT_CONNECTOR_CONFIG_DEF = ConfigDef(CONNECTOR_KEYS + BASE_KEYS + CHECKPOINT_KEYS)
HEARTBEAT_CONNECTOR_CONFIG_DEF = ConfigDef(CONNECTOR_KEYS + BASE_KEYS + HEARTBEAT_KEYS)
SOURCE_TASK_CONFIG_DEF = ConfigDef(CONNECTOR_KEYS + BASE_KEYS + SOURCE_KEYS + SOURCE_TASK_KEYS)
CHECKPOINT_TASK_CONFIG_DEF = ConfigDef(CONNECTOR_KEYS + BASE_KEYS + CHECKPOINT_KEYS + CHECKPOINT_TASK_KEYS)

#: Every key of the three connector tables (framework keys included): what the dedicated driver copies
#: from the top level of ``mm2.properties`` (``MirrorMakerConfig.allConfigNames``).
ALL_CONNECTOR_CONFIG_NAMES: frozenset[str] = frozenset(
    SOURCE_CONNECTOR_CONFIG_DEF.names()
    + CHECKPOINT_CONNECTOR_CONFIG_DEF.names()
    + HEARTBEAT_CONNECTOR_CONFIG_DEF.names()
)

OFFSET_SYNCS_TOPIC_CONFIG_PREFIX = "offset-syncs.topic."
OFFSET_SYNCS_CLIENT_ROLE_PREFIX = "offset-syncs-"


class MirrorConnectorConfig:
    """Keys shared by the three connectors; subclasses pick the table (``DEFINITION``).

    Every key of the table is an attribute named with ``_`` for ``.`` and ``-`` (``config.topics``,
    ``config.offset_syncs_topic_location``, ``config.admin_timeout_ms``), holding the parsed value (lists
    are copies); ``config.values[name]`` is the same by key name. The methods below exist only where
    there is more than a read: seconds-or-``None`` intervals, derived topic names, client configs,
    pluggable parts built from the originals.
    """

    DEFINITION: ClassVar[ConfigDef] = HEARTBEAT_CONNECTOR_CONFIG_DEF
    _ATTRIBUTES: ClassVar[dict[str, str]] = DEFINITION.attribute_names()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._ATTRIBUTES = cls.DEFINITION.attribute_names()

    def __init__(self, props: Mapping[str, str]) -> None:
        self.originals: dict[str, str] = dict(props)
        self.values: dict[str, object] = self.DEFINITION.parse(self.originals)

    def __getattr__(self, attribute: str) -> Any:
        name = type(self)._ATTRIBUTES.get(attribute)
        values = self.__dict__.get("values")
        if name is None or values is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {attribute!r}")
        value = values[name]
        return list(value) if isinstance(value, list) else value

    def _seconds_if_enabled(self, feature: str) -> float | None:
        """``<feature>.interval.seconds`` as seconds, or ``None`` when ``<feature>.enabled`` is false."""
        if not self.values[f"{feature}.enabled"]:
            return None
        seconds = self.values[f"{feature}.interval.seconds"]
        assert isinstance(seconds, int)
        return float(seconds)

    @property
    def admin_timeout_s(self) -> float:
        return int(self.admin_timeout_ms) / 1000.0

    @cached_property
    def replication_policy(self) -> ReplicationPolicy:
        """Built once from the originals (the separator only counts when explicitly configured)."""
        return replication_policy(self.originals)

    def entity_label(self) -> str:
        """``<S>-><T>|<connector name>``; task configs append ``-<task index>``."""
        return f"{self.source_cluster_alias}->{self.target_cluster_alias}|{self.name}"

    def cluster_client_config(self, cluster: str, role: str, client_role: str | None) -> dict[str, str]:
        """The map for a ``role`` client on ``cluster``; ``client_role`` is the ``client.id`` suffix."""
        props = mirror_connector_client_config(self.originals, cluster, role)
        return mirror_client_id(props, self.entity_label(), client_role)

    def source_consumer_config(self, role: str | None = "replication-consumer") -> dict[str, str]:
        return self.cluster_client_config("source", "consumer", role)

    def source_producer_config(self, role: str | None = "offset-syncs-source-producer") -> dict[str, str]:
        return self.cluster_client_config("source", "producer", role)

    def source_admin_config(self, role: str | None = "replication-source-admin") -> dict[str, str]:
        return self.cluster_client_config("source", "admin", role)

    def target_consumer_config(self, role: str | None = "checkpoints-target-consumer") -> dict[str, str]:
        return self.cluster_client_config("target", "consumer", role)

    def target_producer_config(self, role: str | None = "offset-syncs-target-producer") -> dict[str, str]:
        return self.cluster_client_config("target", "producer", role)

    def target_admin_config(self, role: str | None = "replication-target-admin") -> dict[str, str]:
        return self.cluster_client_config("target", "admin", role)


class _OffsetSyncsLocation(MirrorConnectorConfig):
    """What the source and checkpoint configs share (both declare ``offset-syncs.topic.location``)."""

    @property
    def offset_syncs_topic(self) -> str:
        """Named after the alias of the cluster that does *not* host it."""
        other = (
            self.target_cluster_alias
            if self.offset_syncs_topic_location == "source"
            else self.source_cluster_alias
        )
        return self.replication_policy.offset_syncs_topic(other)

    @property
    def checkpoints_topic(self) -> str:
        return self.replication_policy.checkpoints_topic(self.source_cluster_alias)

    def offset_syncs_topic_admin_config(self) -> dict[str, str]:
        if self.offset_syncs_topic_location == "source":
            return self.source_admin_config(OFFSET_SYNCS_CLIENT_ROLE_PREFIX + "source-admin")
        return self.target_admin_config(OFFSET_SYNCS_CLIENT_ROLE_PREFIX + "target-admin")

    @property
    def consumer_poll_timeout_s(self) -> float:
        return int(self.consumer_poll_timeout_ms) / 1000.0

    @cached_property
    def topic_filter(self) -> TopicFilter:
        return topic_filter(self.originals)


class MirrorSourceConfig(_OffsetSyncsLocation):
    """``MirrorSourceConfig``. Intervals are seconds, or ``None`` when the matching ``*.enabled`` is false."""

    DEFINITION = SOURCE_CONNECTOR_CONFIG_DEF

    @cached_property
    def config_property_filter(self) -> ConfigPropertyFilter:
        return config_property_filter(self.originals)

    @property
    def refresh_topics_interval_s(self) -> float | None:
        return self._seconds_if_enabled("refresh.topics")

    @property
    def sync_topic_configs_interval_s(self) -> float | None:
        return self._seconds_if_enabled("sync.topic.configs")

    @property
    def sync_topic_acls_interval_s(self) -> float | None:
        return self._seconds_if_enabled("sync.topic.acls")

    @property
    def replication_factor_or_none(self) -> int | None:
        """``None`` when ``replication.factor`` is ``-1`` (let the broker pick), else the value."""
        factor = int(self.replication_factor)
        return None if factor == -1 else factor

    def offset_syncs_topic_producer_config(self) -> dict[str, str]:
        if self.offset_syncs_topic_location == "source":
            return self.source_producer_config(OFFSET_SYNCS_CLIENT_ROLE_PREFIX + "source-producer")
        return self.target_producer_config(OFFSET_SYNCS_CLIENT_ROLE_PREFIX + "target-producer")

    def task_config(self, encoded_partitions: list[str], task_index: int) -> dict[str, str]:
        """All originals plus ``task.assigned.partitions`` (comma-joined, already encoded) and ``task.index``."""
        props = dict(self.originals)
        props["task.assigned.partitions"] = ",".join(encoded_partitions)
        props["task.index"] = str(task_index)
        return props


class MirrorCheckpointConfig(_OffsetSyncsLocation):
    """``MirrorCheckpointConfig``. Intervals are seconds, or ``None`` when disabled."""

    DEFINITION = CHECKPOINT_CONNECTOR_CONFIG_DEF

    @cached_property
    def group_filter(self) -> GroupFilter:
        return group_filter(self.originals)

    @property
    def refresh_groups_interval_s(self) -> float | None:
        return self._seconds_if_enabled("refresh.groups")

    @property
    def emit_checkpoints_interval_s(self) -> float | None:
        return self._seconds_if_enabled("emit.checkpoints")

    @property
    def sync_group_offsets_interval_s(self) -> float | None:
        return self._seconds_if_enabled("sync.group.offsets")

    def source_admin_config(self, role: str | None = "checkpoint-source-admin") -> dict[str, str]:
        return self.cluster_client_config("source", "admin", role)

    def target_admin_config(self, role: str | None = "checkpoint-target-admin") -> dict[str, str]:
        return self.cluster_client_config("target", "admin", role)

    def offset_syncs_topic_consumer_config(self) -> dict[str, str]:
        if self.offset_syncs_topic_location == "source":
            return self.source_consumer_config(OFFSET_SYNCS_CLIENT_ROLE_PREFIX + "source-consumer")
        return self.target_consumer_config(OFFSET_SYNCS_CLIENT_ROLE_PREFIX + "target-consumer")

    def task_config(self, groups: list[str], task_index: int) -> dict[str, str]:
        """All originals plus ``task.assigned.groups`` (comma-joined) and ``task.index``."""
        props = dict(self.originals)
        props["task.assigned.groups"] = ",".join(groups)
        props["task.index"] = str(task_index)
        return props

    @staticmethod
    def validate(props: Mapping[str, str]) -> dict[str, str]:
        """``MirrorCheckpointConfig.validate``: extra per-key errors (none when ``enabled`` is ``false``).

        Only the literal string ``false`` counts, as in Java.
        """
        errors: dict[str, str] = {}
        if props.get("enabled", "true") == "false":
            return errors
        if props.get("emit.checkpoints.enabled") == "false":
            errors["emit.checkpoints.enabled"] = (
                "MirrorCheckpointConnector can't run with emit.checkpoints.enabled set to false"
            )
        if props.get("emit.offset-syncs.enabled") == "false":
            errors["emit.offset-syncs.enabled"] = "MirrorCheckpointConnector can't run without offset syncs"
        return errors


class MirrorHeartbeatConfig(MirrorConnectorConfig):
    """``MirrorHeartbeatConfig``."""

    DEFINITION = HEARTBEAT_CONNECTOR_CONFIG_DEF

    @property
    def heartbeats_topic(self) -> str:
        return self.replication_policy.heartbeats_topic()

    @property
    def emit_heartbeats_interval_s(self) -> float | None:
        return self._seconds_if_enabled("emit.heartbeats")

    def target_admin_config(self, role: str | None = "heartbeats-target-admin") -> dict[str, str]:
        return self.cluster_client_config("target", "admin", role)


class _TaskLabel(MirrorConnectorConfig):
    def entity_label(self) -> str:
        index = "?" if self.task_index is None else str(self.task_index)
        return f"{super().entity_label()}-{index}"


class MirrorSourceTaskConfig(_TaskLabel, MirrorSourceConfig):
    """A source task's config: the connector's originals plus ``task.assigned.partitions`` (encoded
    ``topic-partition`` strings, required, non-empty) and ``task.index``."""

    DEFINITION = SOURCE_TASK_CONFIG_DEF


class MirrorCheckpointTaskConfig(_TaskLabel, MirrorCheckpointConfig):
    """A checkpoint task's config: originals plus ``task.assigned.groups`` (required, non-empty) and ``task.index``."""

    DEFINITION = CHECKPOINT_TASK_CONFIG_DEF


def source_connector_validation_errors(props: Mapping[str, str]) -> dict[str, str]:
    """Extra checks of ``MirrorSourceConnector.validate``: ``emit.offset-syncs.enabled=false`` (literal) with any
    ``offset-syncs.topic.*`` key present is an error on ``emit.offset-syncs.enabled``."""
    if props.get("emit.offset-syncs.enabled") != "false":
        return {}
    if any(
        k.startswith(OFFSET_SYNCS_TOPIC_CONFIG_PREFIX) or k.startswith(OFFSET_SYNCS_CLIENT_ROLE_PREFIX)
        for k in props
    ):
        return {
            "emit.offset-syncs.enabled": "MirrorSourceConnector can't setup offset-syncs feature while "
            "emit.offset-syncs.enabled set to false"
        }
    return {}
