"""Remote-topic naming: ``ReplicationPolicy`` and its two stock implementations (``connect-mirror-client``).

Behaviour is that of Kafka 4.3.1, checked against the jars (``tests/golden/mirror_policy``):

* ``DefaultReplicationPolicy`` names a remote topic ``<alias><sep><topic>``; ``topic_source`` is the text
  before the first separator, computed like Java's ``Pattern.split`` (trailing empty pieces dropped, a
  leading empty piece kept; fewer than two pieces means "not remote"). An empty separator splits between
  every character, as Java does.
* The separator only applies when ``replication.policy.separator`` is present in the configuration;
  ``replication.policy.internal.topic.separator.enabled`` (read only in that case, ``Boolean.parseBoolean``
  semantics) decides whether internal topic names use it too.
* KIP-1074 (4.0): ``is_mm2_internal_topic`` is "starts with ``mm2`` and ends with ``<isep>internal``, or is
  a checkpoints topic"; ``is_internal_topic`` adds names starting with ``__`` or ``.``. User topics ending
  in ``.internal``/``-internal`` are not internal to the policy any more.
* ``IdentityReplicationPolicy`` keeps names unchanged except for topics that end with ``heartbeats`` (a plain
  suffix test), which are named like the default policy does.

Policies are immutable after construction and safe to share between tasks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from pyconnect.errors import ConfigError

REPLICATION_POLICY_CLASS = "replication.policy.class"
SEPARATOR_CONFIG = "replication.policy.separator"
SEPARATOR_DEFAULT = "."
INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG = "replication.policy.internal.topic.separator.enabled"
SOURCE_CLUSTER_ALIAS_CONFIG = "source.cluster.alias"

DEFAULT_POLICY_CLASS = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
IDENTITY_POLICY_CLASS = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"

HEARTBEATS_TOPIC = "heartbeats"


@runtime_checkable
class ReplicationPolicy(Protocol):
    """``org.apache.kafka.connect.mirror.ReplicationPolicy``: how topics are named across clusters.

    ``topic_source``/``upstream_topic`` return ``None`` for a topic that is not a remote topic.
    """

    def format_remote_topic(self, source_cluster_alias: str, topic: str) -> str: ...

    def topic_source(self, topic: str) -> str | None: ...

    def upstream_topic(self, topic: str) -> str | None: ...

    def original_topic(self, topic: str) -> str: ...

    def heartbeats_topic(self) -> str: ...

    def offset_syncs_topic(self, cluster_alias: str) -> str: ...

    def checkpoints_topic(self, cluster_alias: str) -> str: ...

    def is_heartbeats_topic(self, topic: str) -> bool: ...

    def is_checkpoints_topic(self, topic: str) -> bool: ...

    def is_mm2_internal_topic(self, topic: str) -> bool: ...

    def is_internal_topic(self, topic: str) -> bool: ...


def java_split(text: str, separator: str) -> list[str]:
    """``Pattern.compile(Pattern.quote(separator)).split(text)`` (limit 0).

    Non-overlapping left-to-right matches; a zero-width match at position 0 yields no leading piece; no match
    returns ``[text]``; trailing empty pieces are removed (possibly all of them).
    """
    if separator:
        if separator not in text:
            return [text]
        pieces = text.split(separator)
    else:
        if not text:
            return [text]
        pieces = [*text, ""]
    while pieces and pieces[-1] == "":
        pieces.pop()
    return pieces


def _parse_boolean(value: object) -> bool:
    """``Boolean.parseBoolean(value.toString())``: true only for ``true`` in any case, untrimmed."""
    if isinstance(value, bool):
        return value
    return str(value).lower() == "true"


class DefaultReplicationPolicy:
    """Prefixes the source cluster alias: ``us-west.orders``. Separator configurable (KIP-690, KIP-949)."""

    def __init__(self, config: Mapping[str, object] | None = None) -> None:
        self.separator = SEPARATOR_DEFAULT
        self.internal_topic_separator_enabled = True
        config = config or {}
        if SEPARATOR_CONFIG in config:
            value = config[SEPARATOR_CONFIG]
            self.separator = "" if value is None else str(value)
            if INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG in config:
                self.internal_topic_separator_enabled = _parse_boolean(
                    config[INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG]
                )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(separator={self.separator!r}, "
            f"internal_topic_separator_enabled={self.internal_topic_separator_enabled})"
        )

    @property
    def internal_separator(self) -> str:
        return self.separator if self.internal_topic_separator_enabled else "."

    def _internal_suffix(self) -> str:
        return self.internal_separator + "internal"

    def _checkpoints_suffix(self) -> str:
        return self.internal_separator + "checkpoints" + self._internal_suffix()

    def format_remote_topic(self, source_cluster_alias: str, topic: str) -> str:
        return source_cluster_alias + self.separator + topic

    def topic_source(self, topic: str) -> str | None:
        parts = java_split(topic, self.separator)
        return parts[0] if len(parts) >= 2 else None

    def upstream_topic(self, topic: str) -> str | None:
        source = self.topic_source(topic)
        if source is None:
            return None
        return topic[len(source) + len(self.separator) :]

    def original_topic(self, topic: str) -> str:
        """Follow ``upstream_topic`` until it is ``None`` or unchanged; the last name (Java recursion)."""
        while True:
            upstream = self.upstream_topic(topic)
            if upstream is None or upstream == topic:
                return topic
            topic = upstream

    def heartbeats_topic(self) -> str:
        return HEARTBEATS_TOPIC

    def offset_syncs_topic(self, cluster_alias: str) -> str:
        return "mm2-offset-syncs" + self.internal_separator + cluster_alias + self._internal_suffix()

    def checkpoints_topic(self, cluster_alias: str) -> str:
        return cluster_alias + self._checkpoints_suffix()

    def is_heartbeats_topic(self, topic: str) -> bool:
        return self.heartbeats_topic() == self.original_topic(topic)

    def is_checkpoints_topic(self, topic: str) -> bool:
        return topic.endswith(self._checkpoints_suffix())

    def is_mm2_internal_topic(self, topic: str) -> bool:
        return (
            topic.startswith("mm2") and topic.endswith(self._internal_suffix())
        ) or self.is_checkpoints_topic(topic)

    def is_internal_topic(self, topic: str) -> bool:
        return self.is_mm2_internal_topic(topic) or topic.startswith("__") or topic.startswith(".")


class IdentityReplicationPolicy(DefaultReplicationPolicy):
    """Keeps topic names (legacy MirrorMaker migration, one-way flows). No cycle detection is possible.

    ``source.cluster.alias`` (optional) is what ``topic_source`` reports for non-heartbeat topics.
    """

    def __init__(self, config: Mapping[str, object] | None = None) -> None:
        super().__init__(config)
        config = config or {}
        alias = config.get(SOURCE_CLUSTER_ALIAS_CONFIG) if SOURCE_CLUSTER_ALIAS_CONFIG in config else None
        self.source_cluster_alias: str | None = None if alias is None else str(alias)

    def _looks_like_heartbeat(self, topic: str | None) -> bool:
        return topic is not None and topic.endswith(self.heartbeats_topic())

    def format_remote_topic(self, source_cluster_alias: str, topic: str) -> str:
        if self._looks_like_heartbeat(topic):
            return super().format_remote_topic(source_cluster_alias, topic)
        return topic

    def topic_source(self, topic: str) -> str | None:
        if self._looks_like_heartbeat(topic):
            return super().topic_source(topic)
        return self.source_cluster_alias

    def upstream_topic(self, topic: str) -> str | None:
        if self._looks_like_heartbeat(topic):
            return super().upstream_topic(topic)
        return topic


_POLICIES: dict[str, type[DefaultReplicationPolicy]] = {
    DEFAULT_POLICY_CLASS: DefaultReplicationPolicy,
    "DefaultReplicationPolicy": DefaultReplicationPolicy,
    IDENTITY_POLICY_CLASS: IdentityReplicationPolicy,
    "IdentityReplicationPolicy": IdentityReplicationPolicy,
}


def is_cycle(policy: ReplicationPolicy, target_alias: str, topic: str) -> bool:
    """Java's ``MirrorSourceConnector.isCycle``: whether ``topic`` or a topic upstream of it came from
    ``target_alias`` (a flow into that cluster must not copy it back there). Under IdentityReplicationPolicy
    no topic but a heartbeats topic is ever a cycle: the policy cannot tell."""
    for _ in range(1000):
        source = policy.topic_source(topic)
        if source is None:
            return False
        if source == target_alias:
            return True
        upstream = policy.upstream_topic(topic)
        if upstream is None or upstream == topic:
            return False
        topic = upstream
    return False


def is_known_policy(name: str) -> bool:
    """Whether ``replication.policy.class = name`` resolves (a Java class name or a simple name)."""
    return name in _POLICIES


def replication_policy(config: Mapping[str, object]) -> ReplicationPolicy:
    """The policy named by ``replication.policy.class`` (default ``DefaultReplicationPolicy``), configured
    with ``config`` (the connector's or client's *originals*, as Java's ``configure`` receives them).

    Accepts the Java class names and the simple names; raises :class:`ConfigError` for anything else.
    """
    raw = config.get(REPLICATION_POLICY_CLASS)
    name = DEFAULT_POLICY_CLASS if raw is None else str(raw).strip()
    cls = _POLICIES.get(name)
    if cls is None:
        raise ConfigError(
            f"Invalid value {name} for configuration {REPLICATION_POLICY_CLASS}: Class {name} could not be "
            "found. Supported: " + ", ".join(sorted({DEFAULT_POLICY_CLASS, IDENTITY_POLICY_CLASS}))
        )
    return cls(config)
