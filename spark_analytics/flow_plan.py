"""What ``pyconnect audit --config mm2.properties --flow A->B`` audits: the pure part, no Spark, no Kafka.

Contract:

- :func:`parse_flow` reads ``"A->B"`` (spaces allowed around the arrow); anything else is a
  :class:`FlowError` (one line).
- :func:`plan_from_mm2` takes the parsed ``mm2.properties`` and builds a :class:`FlowPlan`: each side's
  client properties as MirrorMaker 2 would use them (``MirrorMakerConfig.mirror_client_config``: top-level
  and ``<alias>.`` keys, config providers resolved), plus the ``isolation.level`` of the flow's
  MirrorSourceConnector source consumer when it is set (the source is read as the mirror read it: a
  ``read_committed`` mirror does not copy aborted records, so the audit must not expect them), the
  replication policy of the target's client
  config, the flow's ``offset-syncs.topic.location``, its delivery promise (``exactly-once`` when the flow's
  worker has ``exactly.once.source.support=enabled``, ``<target>.exactly.once.source.support`` in
  ``mm2.properties``; else ``at-least-once``), and the flow's topic and group filters
  (``topics``/``topics.exclude``, ``groups``/``groups.exclude`` of ``A->B.`` or top level). ``--topics`` /
  ``--groups`` replace the include pattern (Java regex, whole name), the exclude lists still apply. An
  unknown alias, a side without ``bootstrap.servers`` or a bad pattern is a :class:`FlowError`.
- :meth:`FlowPlan.topics_to_audit` picks, from the source cluster's topic names, those the flow
  replicates: the topic filter says yes and the topic is not internal to Kafka or MirrorMaker 2
  (heartbeats, checkpoints, offset syncs) and is not a remote topic of the target (a cycle).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from connectors.mirror.filters import group_filter, topic_filter
from connectors.mirror.mm2_properties import MirrorMakerConfig, SourceAndTarget
from connectors.mirror.policy import ReplicationPolicy, replication_policy
from pyconnect.config.client_configs import mirror_connector_client_config
from pyconnect.errors import ConfigError

_CLIENT_PREFIXES = ("admin.", "consumer.", "producer.", "replication.policy.")


class FlowError(ValueError):
    """A flow that cannot be audited as given; the message is one line."""


def parse_flow(text: str) -> SourceAndTarget:
    source, sep, target = text.partition("->")
    if not sep or not source.strip() or not target.strip() or "->" in target:
        raise FlowError(f"--flow expects SOURCE->TARGET (e.g. A->B), got {text!r}")
    if source.strip() == target.strip():
        raise FlowError(f"--flow {text!r} names the same cluster twice")
    return SourceAndTarget(source.strip(), target.strip())


def kafka_client_properties(config: Mapping[str, str]) -> dict[str, str]:
    """The plain Java client keys of a MirrorMaker client config (role-prefixed and policy keys dropped)."""
    return {
        k: v for k, v in config.items() if not k.startswith(_CLIENT_PREFIXES) and k != "bootstrap.servers"
    }


@dataclass(frozen=True)
class FlowPlan:
    source_alias: str
    target_alias: str
    source_bootstrap: str
    target_bootstrap: str
    source_properties: dict[str, str]
    target_properties: dict[str, str]
    policy_config: dict[str, str]
    offset_syncs_on_target: bool
    filter_config: dict[str, str] = field(default_factory=dict)
    delivery: str = "at-least-once"

    @property
    def policy(self) -> ReplicationPolicy:
        return replication_policy(self.policy_config)

    def topics_to_audit(self, source_topics: Iterable[str]) -> list[str]:
        policy = self.policy
        topics = topic_filter(self.filter_config)
        picked = []
        for topic in sorted(set(source_topics)):
            if topic.startswith("__") or policy.is_internal_topic(topic) or topic.endswith(".internal"):
                continue
            if policy.is_heartbeats_topic(topic) or policy.topic_source(topic) == self.target_alias:
                continue
            if topics.should_replicate_topic(topic):
                picked.append(topic)
        return picked

    def groups_to_audit(self, groups: Iterable[str]) -> list[str]:
        wanted = group_filter(self.filter_config)
        return sorted(g for g in set(groups) if wanted.should_replicate_group(g))


def plan_from_mm2(
    mm2: MirrorMakerConfig, flow: SourceAndTarget, *, topics: str | None = None, groups: str | None = None
) -> FlowPlan:
    """The :class:`FlowPlan` of ``flow`` in ``mm2`` (see the module docstring)."""
    for alias in (flow.source, flow.target):
        if alias not in mm2.clusters:
            raise FlowError(
                f"unknown cluster alias {alias} in --flow: the config defines {', '.join(mm2.clusters)}"
            )
    try:
        source = mm2.mirror_client_config(flow.source)
        target = mm2.mirror_client_config(flow.target)
        connector = mm2.connector_base_config(flow, "MirrorSourceConnector")
        eos = mm2.cluster_props(flow.target).get("exactly.once.source.support", "").strip().lower()
    except ConfigError as exc:
        raise FlowError(str(exc).splitlines()[0]) from None
    for alias, config in ((flow.source, source), (flow.target, target)):
        if not config.get("bootstrap.servers"):
            raise FlowError(f"cluster {alias} has no bootstrap.servers in the config")
    location = connector.get("offset-syncs.topic.location", "source")
    if location not in ("source", "target"):
        raise FlowError(f"invalid offset-syncs.topic.location {location!r}: expected source or target")
    filters = {k: v for k, v in connector.items() if k.split(".")[0] in ("topics", "groups")}
    if topics is not None:
        filters["topics"] = topics
    if groups is not None:
        filters["groups"] = groups
    source_properties = kafka_client_properties(source)
    isolation = mirror_connector_client_config(connector, "source", "consumer").get("isolation.level")
    if isolation:
        source_properties["isolation.level"] = isolation
    plan = FlowPlan(
        source_alias=flow.source,
        target_alias=flow.target,
        source_bootstrap=source["bootstrap.servers"],
        target_bootstrap=target["bootstrap.servers"],
        source_properties=source_properties,
        target_properties=kafka_client_properties(target),
        policy_config={k: v for k, v in target.items() if k.startswith("replication.policy.")},
        offset_syncs_on_target=location == "target",
        filter_config=filters,
        delivery="exactly-once" if eos == "enabled" else "at-least-once",
    )
    try:
        topic_filter(filters)
        group_filter(filters)
        _ = plan.policy
    except ConfigError as exc:
        raise FlowError(str(exc).splitlines()[0]) from None
    return plan
