"""``MirrorClient`` / ``RemoteClusterUtils`` logic that needs no I/O (``connect-mirror-client``, spec §6).

Every function takes what the Java client would have fetched: the topic names of the cluster (Java
``Admin.listTopics().names()``) or the records of partition 0 of ``<alias>.checkpoints.internal``, read
from the beginning to the end. Reading them (aiokafka) is the caller's job. Point it at the cluster you
fail over **to**: that cluster holds the remote heartbeat topics and the checkpoints.

The ``policy`` argument is any object with the ``ReplicationPolicy`` methods used here
(``topic_source``, ``upstream_topic``, ``is_heartbeats_topic``, ``is_checkpoints_topic``,
``is_internal_topic``, ``checkpoints_topic``); without one, :class:`DefaultReplicationPolicy` with the
``separator`` given (``.`` by default) is used.

Results follow Java: sets are unordered; ``replication_hops`` is ``-1`` when the alias is not upstream;
cycles (possible with ``IdentityReplicationPolicy``) end a walk instead of looping.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from connectors.mirror.checkpoint_records import Checkpoint, RecordFormatError
from connectors.mirror.policy import SEPARATOR_CONFIG, DefaultReplicationPolicy
from connectors.mirror.records import TopicPartition

__all__ = [
    "OffsetAndMetadata",
    "PolicyLike",
    "RemoteConsumerOffsets",
    "checkpoint_topics",
    "count_hops_for_topic",
    "heartbeat_topics",
    "remote_consumer_offsets",
    "remote_topics",
    "replication_hops",
    "translate_offsets",
    "upstream_clusters",
]


class PolicyLike(Protocol):
    """The ``ReplicationPolicy`` methods the client logic calls."""

    def topic_source(self, topic: str) -> str | None: ...

    def upstream_topic(self, topic: str) -> str | None: ...

    def is_heartbeats_topic(self, topic: str) -> bool: ...

    def is_checkpoints_topic(self, topic: str) -> bool: ...

    def is_internal_topic(self, topic: str) -> bool: ...

    def checkpoints_topic(self, cluster_alias: str) -> str: ...


class RecordLike(Protocol):
    """A consumed checkpoints-topic record (aiokafka's ``ConsumerRecord`` fits)."""

    @property
    def key(self) -> bytes | None: ...

    @property
    def value(self) -> bytes | None: ...


class OffsetAndMetadata(NamedTuple):
    """Java ``OffsetAndMetadata``: the offset to commit on this cluster and the source commit metadata."""

    offset: int
    metadata: str = ""


@dataclass
class RemoteConsumerOffsets:
    """Result of :func:`remote_consumer_offsets`: the offsets plus how many records were read/skipped."""

    offsets: dict[TopicPartition, OffsetAndMetadata] = field(default_factory=dict)
    records: int = 0
    skipped: int = 0


def _policy(policy: PolicyLike | None, separator: str | None) -> PolicyLike:
    if policy is not None:
        return policy
    return DefaultReplicationPolicy({} if separator is None else {SEPARATOR_CONFIG: separator})


# -- topic listing helpers (MirrorClient) -------------------------------------------------------------


def heartbeat_topics(
    topics: Iterable[str], policy: PolicyLike | None = None, *, separator: str | None = None
) -> set[str]:
    """Topics for which ``is_heartbeats_topic`` holds, the local ``heartbeats`` included."""
    p = _policy(policy, separator)
    return {t for t in topics if p.is_heartbeats_topic(t)}


def checkpoint_topics(
    topics: Iterable[str], policy: PolicyLike | None = None, *, separator: str | None = None
) -> set[str]:
    """Topics for which ``is_checkpoints_topic`` holds."""
    p = _policy(policy, separator)
    return {t for t in topics if p.is_checkpoints_topic(t)}


def _all_sources(topic: str, policy: PolicyLike) -> set[str]:
    sources: set[str] = set()
    source = policy.topic_source(topic)
    while source is not None and source not in sources:
        sources.add(source)
        upstream = policy.upstream_topic(topic)
        if upstream is None:
            break
        topic = upstream
        source = policy.topic_source(topic)
    return sources


def upstream_clusters(
    topics: Iterable[str], policy: PolicyLike | None = None, *, separator: str | None = None
) -> set[str]:
    """Every alias on the source chain of every heartbeat topic (``B.A.heartbeats`` gives ``{A, B}``)."""
    p = _policy(policy, separator)
    out: set[str] = set()
    for topic in topics:
        if p.is_heartbeats_topic(topic):
            out |= _all_sources(topic, p)
    return out


def count_hops_for_topic(
    topic: str, source_cluster_alias: str, policy: PolicyLike | None = None, *, separator: str | None = None
) -> int:
    """1-based position of ``source_cluster_alias`` on ``topic``'s source chain; ``-1`` if absent or cyclic."""
    p = _policy(policy, separator)
    hops = 0
    visited: set[str] = set()
    current: str | None = topic
    while current is not None:
        hops += 1
        source = p.topic_source(current)
        if source is None:
            return -1
        if source == source_cluster_alias:
            return hops
        if source in visited:
            return -1
        visited.add(source)
        current = p.upstream_topic(current)
    return -1


def replication_hops(
    topics: Iterable[str],
    source_cluster_alias: str,
    policy: PolicyLike | None = None,
    *,
    separator: str | None = None,
) -> int:
    """Fewest hops from ``source_cluster_alias`` to this cluster, over its heartbeat topics; ``-1`` if none.

    ``B.A.heartbeats`` on C: hops to B = 1, to A = 2. The local ``heartbeats`` contributes nothing.
    """
    p = _policy(policy, separator)
    counts = [count_hops_for_topic(t, source_cluster_alias, p) for t in topics if p.is_heartbeats_topic(t)]
    found = [c for c in counts if c != -1]
    return min(found) if found else -1


def remote_topics(
    topics: Iterable[str],
    source: str | None = None,
    policy: PolicyLike | None = None,
    *,
    separator: str | None = None,
) -> set[str]:
    """Replicated topics: not internal to the policy and with a ``topic_source``; with ``source``, only
    those whose direct upstream is that alias. Remote heartbeat topics are included."""
    p = _policy(policy, separator)
    out = set()
    for topic in topics:
        if p.is_internal_topic(topic):
            continue
        topic_source = p.topic_source(topic)
        if topic_source is not None and (source is None or topic_source == source):
            out.add(topic)
    return out


# -- checkpoints (MirrorClient.remoteConsumerOffsets / RemoteClusterUtils.translateOffsets) -------------


def remote_consumer_offsets(
    records: Iterable[RecordLike | tuple[bytes | None, bytes | None] | Checkpoint], consumer_group_id: str
) -> RemoteConsumerOffsets:
    """Fold checkpoint records, oldest first, into ``consumer_group_id``'s offsets on this cluster.

    ``records`` are partition 0 of ``policy.checkpoints_topic(remote_alias)`` in offset order, as
    ``(key, value)`` pairs, consumer records with ``key``/``value``, or decoded :class:`Checkpoint`\\ s. The
    latest checkpoint per target-side ``(topic, partition)`` wins; undecodable records (including
    tombstones, which crash Java's reader) are skipped and counted. Keys are target-side topic names,
    ready to commit on this cluster.
    """
    result = RemoteConsumerOffsets()
    for item in records:
        result.records += 1
        if isinstance(item, Checkpoint):
            checkpoint = item
        else:
            key, value = item if isinstance(item, tuple) else (item.key, item.value)
            try:
                checkpoint = Checkpoint.from_record(key, value)
            except RecordFormatError:
                result.skipped += 1
                continue
        if checkpoint.consumer_group_id == consumer_group_id:
            result.offsets[checkpoint.topic_partition] = OffsetAndMetadata(*checkpoint.offset_and_metadata())
    return result


def checkpoints_topic(
    remote_cluster_alias: str, policy: PolicyLike | None = None, *, separator: str | None = None
) -> str:
    """The topic :func:`translate_offsets` expects the records of (partition 0 only)."""
    return _policy(policy, separator).checkpoints_topic(remote_cluster_alias)


def translate_offsets(
    records: Iterable[RecordLike | tuple[bytes | None, bytes | None] | Checkpoint],
    consumer_group_id: str,
    remote_cluster_alias: str,
    policy: PolicyLike | None = None,
    *,
    separator: str | None = None,
) -> dict[TopicPartition, OffsetAndMetadata]:
    """``RemoteClusterUtils.translateOffsets``: where ``consumer_group_id`` should resume on this cluster.

    ``records`` are the checkpoints of flow ``remote_cluster_alias -> this cluster``. Records that carry
    ``topic``/``partition`` attributes are filtered to partition 0 of
    ``checkpoints_topic(remote_cluster_alias)``, as Java reads nothing else; plain pairs and checkpoints
    are taken as read from there.
    """
    topic = checkpoints_topic(remote_cluster_alias, policy, separator=separator)

    def from_that_topic(item: object) -> bool:
        record_topic = getattr(item, "topic", None) if not isinstance(item, (tuple, Checkpoint)) else None
        if record_topic is None:
            return True
        return record_topic == topic and getattr(item, "partition", 0) == 0

    return remote_consumer_offsets((r for r in records if from_that_topic(r)), consumer_group_id).offsets
