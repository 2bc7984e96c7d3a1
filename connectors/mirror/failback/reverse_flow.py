"""The reverse flow of a failback: the forward MirrorSourceConnector's config turned around (pure).

:func:`reverse_source_config` swaps the two sides of the forward (A->B) MirrorSourceConnector's config:
the aliases and every ``source.``/``target.``-prefixed key (``source.cluster.bootstrap.servers``,
``target.cluster.sasl.jaas.config``, ``source.consumer.*``...), so the reverse flow (B->A) reads B with
the settings the forward flow wrote B with, and writes A with those it read A with. Config-provider
variables stay as written (the reverse fleet's providers resolve them). Everything else is kept: the
topics (under IdentityReplicationPolicy B's topics have A's names; under another policy the
applications' own topics on B), the policy, the consumer settings (``read_committed``), and
``offset-syncs.topic.location``, which must stay the same: the forward syncs of ``source`` live on A as
``mm2-offset-syncs.B.internal`` and the reverse ones on B as ``mm2-offset-syncs.A.internal`` (swapping the
location would make both flows write one topic, whose compaction mixes their syncs).

:func:`copy_starts` is the ``PATCH /connectors/{name}/offsets`` body (KIP-875) that makes a connector copy
each partition from a given offset: the reverse flow from the forward copy's end ``M`` on B, the forward
flow (when the applications are back on A) from A's end, so that the orphans and the copies back are not
copied to B again. Offset ``s`` is Connect offset ``s - 1`` (MirrorSourceTask resumes after its committed
offset); ``s = 0`` is no offset (the consumer starts at the log start): the connector refuses negative
offsets.

Which partitions of B the reverse flow copies, and from where (:func:`reverse_starts`): the topics of B
that a MirrorSourceConnector with the reverse config replicates (:func:`copied_topics`: its topic filter,
no internal topic, no heartbeats topic, no cycle back to A) are of two kinds:

* the forward flow's copies that the reverse flow copies back: under IdentityReplicationPolicy the copy
  of A's ``orders`` is B's ``orders``, which the applications go on writing after a failover; it is
  copied from the forward copy's end ``M`` (what the applications wrote past the copy). Under
  DefaultReplicationPolicy the copy is ``A.orders``, which the reverse flow never copies (a cycle: its
  source is A), and which nobody writes on B;
* B's own topics (under DefaultReplicationPolicy B's ``orders``, where the producers write after a
  failover; copied to ``B.orders`` on A): copied from where B's topic ended when the failover executed
  (:attr:`connectors.mirror.offsets.failover_state.FailoverState.own_ends`), so that the reverse flow
  copies every record the applications wrote on B since the failover and nothing B held before it. A
  partition the failover did not record (a topic created on B after it, or a failover state of an older
  version, which recorded none) is copied from its log start; a recorded end past the partition's end
  now (the topic was deleted and created again) also; one below the log start (retention deleted records
  since) from the log start.

:func:`own_topics` picks the topics whose ends a failover records: every topic of B that is not internal
and does not come from A by the policy (under IdentityReplicationPolicy every topic that is not internal:
the policy cannot tell a copy from an own topic).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from connectors.mirror.filters import topic_filter
from connectors.mirror.policy import ReplicationPolicy, is_cycle

__all__ = [
    "adoption_refusal",
    "copied_topics",
    "copy_starts",
    "own_topics",
    "reverse_source_config",
    "reverse_starts",
]

Partition = tuple[str, int]

_SIDES = {"source.": "target.", "target.": "source."}
_SOURCE_CLASSES = ("org.apache.kafka.connect.mirror.MirrorSourceConnector", "MirrorSourceConnector")


def reverse_source_config(forward: Mapping[str, str]) -> dict[str, str]:
    """The reverse MirrorSourceConnector's config (see the module docstring); ``name`` is left out."""
    reverse: dict[str, str] = {}
    for key, value in forward.items():
        if key == "name":
            continue
        prefix = next((p for p in _SIDES if key.startswith(p)), None)
        reverse[_SIDES[prefix] + key[len(prefix) :] if prefix else key] = value
    return reverse


def copy_starts(cluster: str, starts: Mapping[tuple[str, int], int]) -> dict[str, Any]:
    """The ``PATCH /connectors/{name}/offsets`` body that makes a MirrorSourceConnector copy
    ``(topic, partition)`` of cluster ``cluster`` from offset ``starts[...]`` on."""
    return {
        "offsets": [
            {
                "partition": {"cluster": cluster, "partition": partition, "topic": topic},
                "offset": {"offset": start - 1} if start > 0 else None,
            }
            for (topic, partition), start in sorted(starts.items())
        ]
    }


def copied_topics(
    config: Mapping[str, str], policy: ReplicationPolicy, target_alias: str, topics: Iterable[str]
) -> list[str]:
    """Those of ``topics`` (its source cluster's) that a MirrorSourceConnector of ``config`` writing to
    ``target_alias`` under ``policy`` copies: its topic filter's, less internal topics, heartbeats topics
    (never a group's business here) and cycles (Java's ``shouldReplicateTopic``)."""
    wanted = topic_filter(config)
    return sorted(
        t
        for t in set(topics)
        if wanted.should_replicate_topic(t)
        and not policy.is_internal_topic(t)
        and not policy.is_heartbeats_topic(t)
        and not is_cycle(policy, target_alias, t)
    )


def own_topics(policy: ReplicationPolicy, source_alias: str, topics: Iterable[str]) -> list[str]:
    """Those of ``topics`` (of the target cluster of a flow from ``source_alias``) that are the target's
    own: not internal and not, by ``policy`` (configured as the reverse flow's), from ``source_alias``."""
    return sorted(
        t for t in set(topics) if not policy.is_internal_topic(t) and not is_cycle(policy, source_alias, t)
    )


def reverse_starts(
    copied: Iterable[Partition],
    mirror_ends: Mapping[Partition, int],
    own_ends: Mapping[Partition, int] | None,
    bounds: Mapping[Partition, tuple[int, int]],
) -> dict[Partition, int]:
    """The first offset the reverse flow copies of each partition of B in ``copied`` (see the module
    docstring): the forward copy's end from ``mirror_ends`` (by partition of B), else the end recorded by
    the failover in ``own_ends`` (``None``: it recorded none), kept within ``bounds`` (B's log start and
    last stable offset now)."""
    starts = {}
    for tp in copied:
        if tp in mirror_ends:
            starts[tp] = mirror_ends[tp]
            continue
        log_start, end = bounds[tp]
        recorded = None if own_ends is None else own_ends.get(tp)
        starts[tp] = recorded if recorded is not None and log_start <= recorded <= end else log_start
    return starts


def adoption_refusal(config: Mapping[str, str], source: str, target: str) -> str | None:
    """Why the existing connector of ``config`` cannot be a failback's reverse flow from ``source`` (B) to
    ``target`` (A) (one line), or ``None``: it must be a MirrorSourceConnector with those aliases."""
    kind = config.get("connector.class", "")
    if kind not in _SOURCE_CLASSES:
        return f"it is a {kind or 'connector without a class'}, not a MirrorSourceConnector"
    aliases = (config.get("source.cluster.alias"), config.get("target.cluster.alias"))
    if aliases != (source, target):
        return f"it copies {aliases[0]}->{aliases[1]}, not {source}->{target}"
    return None
