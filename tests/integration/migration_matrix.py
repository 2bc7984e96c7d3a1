"""The migration matrix's flows, checks and report: pyconnect and Java MirrorMaker 2 on one mm2.properties.

Contract:

- :func:`sides` names the two flows of a pair: each system mirrors the same source cluster to the same
  target cluster under aliases of its own (``py282 -> py431`` and ``jv282 -> jv431``), so their remote
  topics (``<source alias>.<topic>``), Connect groups (``<source alias>-mm2``), internal topics, offset
  syncs (``mm2-offset-syncs.<target alias>.internal`` on the source) and checkpoints
  (``<source alias>.checkpoints.internal``) never meet. Heartbeats of both land in the target's
  ``heartbeats`` topic under distinct keys.
- :func:`mm2_properties` is the one file both systems run: every flow setting is shared; each process
  serves its own target alias (``--clusters``). The source consumer reads ``read_committed`` (Java's
  default is ``read_uncommitted``, which copies aborted records).
- The checks (:func:`offset_syncs`, :func:`checkpoints_and_group`, :func:`heartbeats_of`) read what a
  system wrote, bounded in time; :class:`SystemResult` holds one system's figures and checks (each
  ``"ok"`` or why not) and :func:`table` renders a run as text.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import KafkaError

from connectors.mirror.checkpoint_records import Heartbeat
from tests.integration.mirror_helpers import SINGLE_BROKER_MM2, latest_checkpoints, read_partition0
from tests.integration.test_mirror_source import read_offset_syncs, topic_state

PYCONNECT, JAVA = "pyconnect", "java"
UNTRANSLATABLE = "no sync at or below the committed offset"
"""The detail listing the partitions a system could not translate for want of offset syncs."""
CHECKS = ("identical", "partitions", "config", "offset syncs", "checkpoints", "group offsets", "heartbeats")
FLOW_SETTINGS: dict[str, object] = {
    "emit.heartbeats.enabled": "false",
    "tasks.max": 2,
    "refresh.topics.interval.seconds": 2,
    "refresh.groups.interval.seconds": 2,
    "sync.topic.configs.interval.seconds": 2,
    "emit.checkpoints.interval.seconds": 1,
    "sync.group.offsets.enabled": "true",
    "sync.group.offsets.interval.seconds": 1,
    "sync.topic.acls.enabled": "false",
    "offset.lag.max": 10,
    "plugin.discovery": "service_load",
}
"""Shared by both flows. Heartbeats are off at the top level so that no herder exists for the pairs
no flow uses (one per ordered pair of the four aliases otherwise); each flow turns them on for itself.
``plugin.discovery`` (here for MirrorMaker itself, per target cluster for each herder's worker) spares
Java's start two scans of its whole class path (tens of seconds on a busy machine), so that the time
to drain measures mirroring more than plugin scanning."""
FAST_GROUP: dict[str, object] = {
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 1000,
    "offset.flush.interval.ms": 1000,
    "scheduled.rebalance.max.delay.ms": 3000,
}


@dataclass(frozen=True)
class Side:
    """One system's flow: its source and target aliases."""

    system: str
    source: str
    target: str

    def remote(self, topic: str) -> str:
        return f"{self.source}.{topic}"

    @property
    def offset_syncs_topic(self) -> str:
        return f"mm2-offset-syncs.{self.target}.internal"

    @property
    def checkpoints_topic(self) -> str:
        return f"{self.source}.checkpoints.internal"


def sides(source_version: str, target_version: str) -> tuple[Side, Side]:
    """pyconnect's flow and Java's, aliased after the versions (``py282 -> py431``)."""
    src, tgt = source_version.replace(".", ""), target_version.replace(".", "")
    return Side(PYCONNECT, f"py{src}", f"py{tgt}"), Side(JAVA, f"jv{src}", f"jv{tgt}")


def mm2_properties(
    source_bootstrap: str, target_bootstrap: str, topics: str, groups: str, flows: Sequence[Side]
) -> dict[str, object]:
    """One mm2.properties holding every flow of ``flows`` (source -> target cluster, topics and groups
    matching the regexes), the shared :data:`FLOW_SETTINGS` and single-broker replication factors."""
    props: dict[str, object] = {"clusters": ", ".join(a for s in flows for a in (s.source, s.target))}
    for s in flows:
        flow = f"{s.source}->{s.target}"
        props.update(
            {
                f"{s.source}.bootstrap.servers": source_bootstrap,
                f"{s.target}.bootstrap.servers": target_bootstrap,
                f"{flow}.enabled": "true",
                f"{flow}.topics": topics,
                f"{flow}.groups": groups,
                f"{flow}.emit.heartbeats.enabled": "true",
                f"{s.source}.consumer.isolation.level": "read_committed",
                f"{s.target}.plugin.discovery": "service_load",
                **{f"{s.target}.{key}": value for key, value in FAST_GROUP.items()},
            }
        )
    props.update(SINGLE_BROKER_MM2)
    props.update(FLOW_SETTINGS)
    return props


@dataclass
class SystemResult:
    """One system's run of a pair: records on the target, each check's verdict, and seconds: from the
    process's start until the source was copied (``drain_s``), of which from the first record copied
    (``copy_s``), and from the restarted source broker answering until the target caught up again."""

    system: str
    records: int = 0
    drain_s: float | None = None
    copy_s: float | None = None
    catch_up_s: float | None = None
    checks: dict[str, str] = field(default_factory=lambda: dict.fromkeys(CHECKS, "not run"))
    details: dict[str, Any] = field(default_factory=dict)

    def failed(self) -> dict[str, str]:
        return {name: verdict for name, verdict in self.checks.items() if verdict != "ok"}


def report(pair: str, results: Sequence[SystemResult], notes: Mapping[str, Any]) -> dict[str, Any]:
    return {"pair": pair, "systems": [asdict(r) for r in results], "notes": dict(notes)}


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def table(runs: Sequence[Mapping[str, Any]]) -> str:
    """The runs (:func:`report` documents) as a text table, one line per pair and system."""
    header = ["pair", "system", "records", *CHECKS, "untranslatable", "drain s", "copy s", "catch-up s"]
    lines = [header]
    for run in runs:
        for r in run["systems"]:
            verdicts = ["ok" if r["checks"][c] == "ok" else "FAIL" for c in CHECKS]
            lines.append(
                [
                    run["pair"],
                    r["system"],
                    str(r["records"]),
                    *verdicts,
                    str(len(r["details"].get(UNTRANSLATABLE, []))),
                    _seconds(r["drain_s"]),
                    _seconds(r["copy_s"]),
                    _seconds(r["catch_up_s"]),
                ]
            )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    rendered = [" | ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)) for line in lines]
    rendered.insert(1, "-+-".join("-" * w for w in widths))
    failures = [
        f"{run['pair']} {r['system']} {name}: {verdict}"
        for run in runs
        for r in run["systems"]
        for name, verdict in r["checks"].items()
        if verdict != "ok"
    ]
    return "\n".join(rendered + failures)


@dataclass(frozen=True)
class PartitionSyncs:
    """The offset syncs of one source partition: how many, the first upstream offset, the newest."""

    count: int
    first_upstream: int
    newest: tuple[int, int]


def offset_syncs(
    source_bootstrap: str, side: Side, topic: str, partitions: Sequence[int]
) -> tuple[str, dict[int, PartitionSyncs]]:
    """``ok`` when the flow's offset-syncs topic on the source holds syncs of every partition of
    ``topic`` and none maps an upstream offset to a downstream one further on; the syncs per partition."""
    found: dict[int, PartitionSyncs] = {}
    for s in asyncio.run(read_offset_syncs(source_bootstrap, {topic}, 15.0, side.offset_syncs_topic)):
        before = found.get(s.partition)
        found[s.partition] = PartitionSyncs(
            (before.count if before else 0) + 1,
            before.first_upstream if before else s.upstream_offset,
            (s.upstream_offset, s.downstream_offset),
        )
    missing = sorted(set(partitions) - set(found))
    ahead = {p: f.newest for p, f in found.items() if f.newest[1] > f.newest[0]}
    if missing:
        return f"no offset syncs of partitions {missing} in {side.offset_syncs_topic}", found
    return (f"syncs map past their upstream offset: {ahead}" if ahead else "ok"), found


def translatable(committed: Mapping[int, int], syncs: Mapping[int, PartitionSyncs]) -> dict[int, int]:
    """The committed offsets Java MirrorMaker 2 can translate: those of partitions whose offset syncs
    start at or below them. Java drops the syncs of a task with 10 sends in flight (the offset-syncs
    topic lives on the source, so a source broker restart fills that window) and keeps only each
    partition's newest pending one (spec §9 #6, KAFKA-12558, KAFKA-14610): a group behind the first
    sync that survived gets no checkpoint."""
    return {p: o for p, o in committed.items() if p in syncs and syncs[p].first_upstream <= o}


async def group_offsets(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    """The committed offsets of ``group``; none while the cluster answers with a retriable error (a
    fresh cluster has no group coordinator until it created its offsets topic)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        found = await admin.list_consumer_group_offsets(group)
    except KafkaError as error:
        if not error.retriable:
            raise
        return {}
    finally:
        await admin.close()
    return {(tp.topic, tp.partition): meta.offset for tp, meta in found.items() if meta.offset >= 0}


def _verdict(
    what: str, translated: Mapping[int, int | None], committed: Mapping[int, int], exact: bool
) -> str:
    missing = sorted(p for p, o in translated.items() if o is None)
    if missing:
        return f"no {what} for partitions {missing}"
    if exact:
        wrong = {p: o for p, o in translated.items() if o != committed[p]}
        return f"{what} not the committed offsets {dict(committed)}: {wrong}" if wrong else "ok"
    wrong = {p: o for p, o in translated.items() if o is not None and not 0 < o <= committed[p]}
    return f"{what} out of (0, committed]: {wrong}" if wrong else "ok"


def checkpoints_and_group(
    target_bootstrap: str,
    side: Side,
    group: str,
    topic: str,
    committed: Mapping[int, int],
    timeout_s: float,
    *,
    exact: bool,
) -> tuple[str, str, dict[str, Any]]:
    """Wait until ``group``'s checkpoints of the remote ``topic`` carry the ``committed`` upstream
    offsets (partition -> offset) and the group on the target has offsets for those partitions; the
    verdicts of both and what was seen. The copy is contiguous, so the true position is the committed
    offset itself: ``exact`` (pyconnect's default translation) asks for it, otherwise (Java's, which
    may land before it) a translated offset must lie in ``(0, committed]``."""
    remote = side.remote(topic)
    deadline = time.monotonic() + timeout_s
    while True:
        found = latest_checkpoints(target_bootstrap, group, side.checkpoints_topic)
        points = {p: found.get((remote, p)) for p in committed}
        offsets = asyncio.run(group_offsets(target_bootstrap, group))
        downstream = {
            p: c.downstream_offset if c is not None and c.upstream_offset == committed[p] else None
            for p, c in points.items()
        }
        translated = {p: offsets.get((remote, p)) for p in committed}
        done = None not in downstream.values() and None not in translated.values()
        if exact:  # a checkpoint taken before the last offset syncs arrived is improved on later
            done = done and downstream == translated == dict(committed)
        if done or time.monotonic() > deadline:
            break
        time.sleep(1.0)
    seen = {"committed": dict(committed), "checkpoints": downstream, "group": translated}
    return (
        _verdict("checkpoints", downstream, committed, exact),
        _verdict("group offsets", translated, committed, exact),
        seen,
    )


def heartbeats_of(target_bootstrap: str, side: Side, timeout_s: float = 30.0) -> str:
    """``ok`` once the target's ``heartbeats`` topic holds a heartbeat of the flow."""
    deadline = time.monotonic() + timeout_s
    while True:
        seen = {
            (h.source_cluster_alias, h.target_cluster_alias)
            for h in (
                Heartbeat.from_record(k, v)
                for k, v in asyncio.run(read_partition0(target_bootstrap, "heartbeats"))
            )
        }
        if (side.source, side.target) in seen:
            return "ok"
        if time.monotonic() > deadline:
            return f"no heartbeat {side.source}->{side.target} in heartbeats (seen {sorted(seen)})"
        time.sleep(1.0)


def synced_config(target_bootstrap: str, topic: str, name: str, value: str, timeout_s: float = 60.0) -> str:
    """``ok`` once ``topic`` on the target has config ``name`` at ``value``."""
    deadline = time.monotonic() + timeout_s
    while True:
        _, found = asyncio.run(topic_state(target_bootstrap, topic, name))
        if found == value:
            return "ok"
        if time.monotonic() > deadline:
            return f"{name}={found} on {topic}, not {value}"
        time.sleep(1.0)


DYNAMIC_TOPIC_CONFIG = 1
"""DescribeConfigs ``config_source`` of a value set on the topic itself."""


async def topic_overrides(bootstrap: str, topics: Sequence[str]) -> dict[str, dict[str, str | None]]:
    """The configs set on each of ``topics`` (not inherited from the broker or the defaults)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        responses = await admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, t) for t in topics]
        )
    finally:
        await admin.close()
    found: dict[str, dict[str, str | None]] = {}
    for response in responses:
        for resource in response.to_object()["resources"]:
            found[resource["resource_name"]] = {
                entry["config_names"]: entry["config_value"]
                for entry in resource["config_entries"]
                if entry.get("config_source", DYNAMIC_TOPIC_CONFIG if not entry.get("is_default") else 0)
                == DYNAMIC_TOPIC_CONFIG
            }
    return found


def config_differences(target_bootstrap: str, flows: Sequence[Side], topics: Sequence[str]) -> dict[str, Any]:
    """Per source topic whose remote copies differ in their topic configs: each flow's configs."""
    names = [f.remote(t) for f in flows for t in topics]
    found = asyncio.run(topic_overrides(target_bootstrap, names))
    differ: dict[str, Any] = {}
    for topic in topics:
        copies = {f.system: found.get(f.remote(topic), {}) for f in flows}
        if len({tuple(sorted(c.items())) for c in copies.values()}) > 1:
            differ[topic] = copies
    return differ
