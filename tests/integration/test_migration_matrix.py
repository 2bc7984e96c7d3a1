"""Migrations from old clusters: mirroring between Apache Kafka releases both ways, pyconnect beside Java.

- Long, the matrix: for each pair of 2.8.2 (ZooKeeper) -> 4.3.1, 4.3.1 -> 2.8.2, 3.9.1 (KRaft) -> 4.3.1
  and 4.3.1 -> 3.9.1, on clusters of this module's own (their brokers get restarted), pyconnect's
  dedicated MirrorMaker and Java MirrorMaker 2 4.3.1 run one mm2.properties, each serving a flow of its
  own aliases (migration_matrix). The source holds a plain topic (keys, null keys and values,
  repeated binary headers, timestamps), lz4 and zstd topics, a transactional lz4 topic with aborted
  transactions and, on 2.8.2, topics stored in message formats v0 and v1. Each system first drains
  that alone (the order alternates between pairs); then, with both running, the plain topic grows from
  3 to 5 partitions and its ``retention.ms`` changes, a producer keeps writing, and the source broker
  is stopped and started again mid-copy. Checked per system: every partition of every remote topic
  equals its source (key, value, headers, timestamp; only committed records; a v0 record, which has no
  timestamp, gets the time it was copied), the new partitions exist on the target, the changed config
  is synced, offset syncs of every partition exist, heartbeats arrive, and a group committed on the
  source (from before the flows start, at last a few records short of each partition's end) gets
  checkpoints and translated offsets on the target: pyconnect's exact (the committed offset itself,
  the copy being contiguous), Java's at or below it, for every partition where one of Java's offset
  syncs at or below the committed offset survived (Java drops syncs while 10 are in flight, and the
  source restart fills that window: the table counts the partitions it left untranslatable). The
  Connect groups and internal topics live on the target: on the old cluster for 4.3.1 -> 2.8.2 and
  4.3.1 -> 3.9.1. A table (and JSON under the test's tmp dir, the whole matrix under the module's)
  gives records, verdicts and seconds: from a system's start until it drained the source alone, of
  which from its first copied record, and from the source broker's return until caught up.
- Long: a pyconnect Connect worker (distributed mode) whose group and internal topics live on 2.8.2
  mirrors a plain and a zstd transactional topic to 4.3.1 (its producer overridden to the target):
  records identical, checkpoints and group offsets exact, the group a stable ``connect`` group on the
  2.8 coordinator, its internal topics compacted there, and a restart resumes from the offsets it
  stored on 2.8.2 without a duplicate.
- Short (normal suite): pyconnect's dedicated MirrorMaker copies a compressed transactional topic with
  aborts, a zstd topic and a v1 topic from the session's 2.8.2 cluster to 4.3.1, record for record.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest

from pyconnect.kafka.group_member import describe_group
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.connect_worker import MirrorMakerProcess
from pyconnect.testing.java_reference import JavaMirrorMaker
from pyconnect.testing.kafka import KafkaCluster, render_properties
from pyconnect.testing.kafka_versions import provide_release_clusters
from pyconnect.testing.mirror_maker_process import PyconnectMirrorMaker
from tests.integration.fleet import fleet, python_workers, running_tasks, wait_for
from tests.integration.migration_data import (
    Rows,
    SteadyProducer,
    TopicSpec,
    behind,
    commit,
    counts,
    differences,
    fill,
    grow_and_alter,
    read_rows,
    wait_counts,
)
from tests.integration.migration_matrix import (
    JAVA,
    PYCONNECT,
    UNTRANSLATABLE,
    Side,
    SystemResult,
    checkpoints_and_group,
    config_differences,
    heartbeats_of,
    mm2_properties,
    offset_syncs,
    report,
    sides,
    synced_config,
    table,
    translatable,
)
from tests.integration.test_mirror_checkpoint import flow
from tests.integration.test_mirror_source import mirror_config, topic_state

pytestmark = pytest.mark.kafka

PAIRS = [("2.8.2", "4.3.1"), ("4.3.1", "2.8.2"), ("3.9.1", "4.3.1"), ("4.3.1", "3.9.1")]
RETENTION, NEW_RETENTION = "86400000", "172800000"
TOPICS = {
    "plain": TopicSpec("plain", 3, configs={"retention.ms": RETENTION}),
    "lz4": TopicSpec("lz4", 2, "lz4"),
    "zstd": TopicSpec("zstd", 2, "zstd"),
    "txn": TopicSpec("txn", 2, "lz4", transactional=True),
}
OLD_FORMATS = {
    "v0": TopicSpec("v0", 2, message_format="0.9.0"),
    "v1": TopicSpec("v1", 2, "lz4", message_format="0.10.2"),
}
COUNTS = {"plain": 20000, "lz4": 10000, "zstd": 10000, "txn": 3000, "v0": 3000, "v1": 3000}
GROWN = 5
EARLY = 1000
"""The group's first commit, before the flows start: the checkpoint tasks start with the group, as in a
migration where consumers were running all along. (A group that first appears after the copy makes
Java restart its checkpoint task, which then keeps only the newest offset sync per partition of what
it reads at start (KAFKA-15905): a group a few records behind that sync gets no checkpoint.)"""
STEADY_FIRST = 100_000
DRAIN_TIMEOUT_S = 240.0
RESTART_PAUSE_S = 5.0
SHORT_COUNT = 1500


@pytest.fixture(scope="module")
def own_release(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], KafkaCluster]]:
    """One-node clusters of this module's own per release (so brokers may restart), started on demand."""
    with provide_release_clusters(tmp_path_factory.mktemp("matrix-clusters")) as get:
        yield get


@pytest.fixture(scope="module")
def matrix_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[dict[str, Any]]]:
    """The reports of the module's pairs; written to ``matrix.json`` and printed at the end."""
    runs: list[dict[str, Any]] = []
    yield runs
    if runs:
        out = tmp_path_factory.mktemp("matrix-report") / "matrix.json"
        out.write_text(json.dumps(runs, indent=2) + "\n")
        print(f"\n{table(runs)}\n(written to {out})")


def specs_for(source_version: str) -> dict[str, TopicSpec]:
    return {**TOPICS, **(OLD_FORMATS if source_version == "2.8.2" else {})}


def read_all_rows(bootstrap: str, topics: list[str]) -> dict[str, Rows]:
    async def read() -> list[Rows]:
        return await asyncio.gather(*(read_rows(bootstrap, t) for t in topics))

    return dict(zip(topics, asyncio.run(read()), strict=True))


def expected_on(side: Side, source: Mapping[str, Rows]) -> dict[str, dict[int, int]]:
    return {side.remote(topic): counts(rows) for topic, rows in source.items()}


def compare(target: str, side: Side, source: Mapping[str, Rows], not_before_ms: int) -> tuple[str, int]:
    """The ``identical`` verdict of ``side`` and how many records its remote topics hold."""
    copies = read_all_rows(target, [side.remote(t) for t in source])
    found = {
        topic: differences(rows, copies[side.remote(topic)], not_before_ms=not_before_ms)
        for topic, rows in source.items()
    }
    records = sum(len(r) for rows in copies.values() for r in rows.values())
    wrong = {topic: d for topic, d in found.items() if d}
    return ("ok" if not wrong else f"{wrong}"[:2000]), records


def restart(cluster: KafkaCluster) -> None:
    """Stop every broker of ``cluster`` (controlled shutdown), wait, start them and wait until ready."""
    for node in cluster.nodes:
        node.stop(timeout=30)
    time.sleep(RESTART_PAUSE_S)
    for node in cluster.nodes:
        node.start()
    cluster.wait_ready(timeout=120)


def alive(*processes: MirrorMakerProcess) -> Callable[[], None]:
    def check() -> None:
        for process in processes:
            process.check_alive()

    return check


class PairRun:
    """One pair of the matrix: the source data, both systems' processes on one mm2.properties, and
    their results. Each step is a method the test calls in order; the processes stop in :meth:`close`."""

    def __init__(
        self, pair: tuple[str, str], source: KafkaCluster, target: KafkaCluster, prefix: str, work: Path
    ):
        self.name = f"{pair[0]} -> {pair[1]}"
        self.source, self.target = source, target
        self.src, self.tgt = source.bootstrap_servers, target.bootstrap_servers
        self.specs = {f"{prefix}-{n}": s for n, s in specs_for(pair[0]).items()}
        self.plain, self.group = f"{prefix}-plain", f"{prefix}-group"
        py, jv = sides(*pair)
        self.flows = {PYCONNECT: py, JAVA: jv}
        config = work / "mm2.properties"
        config.write_text(
            render_properties(mm2_properties(self.src, self.tgt, f"{prefix}-.*", self.group, (py, jv))),
            encoding="iso-8859-1",
        )
        self.processes: dict[str, MirrorMakerProcess] = {
            PYCONNECT: PyconnectMirrorMaker(
                config, work / PYCONNECT, clusters=[py.target], die_with_parent=True
            ),
            JAVA: JavaMirrorMaker(config, work / JAVA, clusters=[jv.target], die_with_parent=True),
        }
        self.results = {system: SystemResult(system) for system in self.flows}
        self.source_rows: dict[str, Rows] = {}
        self.notes: dict[str, Any] = {}
        self.started_ms = int(time.time() * 1000)

    def fill(self) -> None:
        async def write() -> None:
            await asyncio.gather(*(fill(self.src, t, s, COUNTS[s.name]) for t, s in self.specs.items()))

        asyncio.run(write())
        self.started_ms = int(time.time() * 1000)
        self.source_rows = read_all_rows(self.src, list(self.specs))
        asyncio.run(
            commit(self.src, self.group, self.plain, dict.fromkeys(range(TOPICS["plain"].partitions), EARLY))
        )

    def drain_alone(self, order: list[str]) -> None:
        """Start each system in turn and time how long it takes to copy the source on its own."""
        for system in order:
            process = self.processes[system]
            started = time.monotonic()
            process.start()
            expected = {system: expected_on(self.flows[system], self.source_rows)}
            progress = wait_counts(self.tgt, expected, DRAIN_TIMEOUT_S, process.check_alive)[system]
            if progress.done is not None:
                self.results[system].drain_s = progress.done - started
                self.results[system].copy_s = progress.done - (progress.first or started)

    def grow_write_and_restart(self) -> None:
        """With both running: grow the plain topic and change its config, keep writing to it and the
        lz4 topic, restart the source broker meanwhile; then wait until both caught up again."""
        asyncio.run(grow_and_alter(self.src, self.plain, GROWN, {"retention.ms": NEW_RETENTION}))
        lz4 = self.plain.replace("-plain", "-lz4")
        steady = {self.plain: replace(self.specs[self.plain], partitions=GROWN), lz4: self.specs[lz4]}
        producer = SteadyProducer(self.src, steady, STEADY_FIRST)
        producer.start()
        try:
            time.sleep(4)
            for system, side in self.flows.items():
                self.results[system].details["behind at restart"] = behind(
                    self.src, self.tgt, self.plain, side.remote(self.plain)
                )
            restart(self.source)
            back = time.monotonic()
            time.sleep(4)
        finally:
            self.notes["writes failed during the restart"] = producer.stop()
            self.notes["records written during the restart"] = producer.next - STEADY_FIRST
        self.source_rows = read_all_rows(self.src, list(self.specs))
        expected = {system: expected_on(side, self.source_rows) for system, side in self.flows.items()}
        reached = wait_counts(self.tgt, expected, DRAIN_TIMEOUT_S, alive(*self.processes.values()))
        for system, progress in reached.items():
            self.results[system].catch_up_s = None if progress.done is None else progress.done - back

    def check(self) -> None:
        for system, side in self.flows.items():
            result = self.results[system]
            result.checks["identical"], result.records = compare(
                self.tgt, side, self.source_rows, self.started_ms
            )
            partitions, _ = asyncio.run(topic_state(self.tgt, side.remote(self.plain), None))
            result.checks["partitions"] = "ok" if partitions == GROWN else f"{partitions} partitions"
            result.checks["config"] = synced_config(
                self.tgt, side.remote(self.plain), "retention.ms", NEW_RETENTION
            )
            result.checks["heartbeats"] = heartbeats_of(self.tgt, side)
        self.notes["remote topic configs that differ"] = config_differences(
            self.tgt, list(self.flows.values()), list(self.specs)
        )
        committed = {p: n - 7 for p, n in counts(self.source_rows[self.plain]).items()}
        asyncio.run(commit(self.src, self.group, self.plain, committed))
        for system, side in self.flows.items():
            result = self.results[system]
            result.checks["offset syncs"], syncs = offset_syncs(self.src, side, self.plain, list(committed))
            result.details["offset syncs"] = {p: asdict(s) for p, s in syncs.items()}
            owed = committed if system == PYCONNECT else translatable(committed, syncs)
            result.details[UNTRANSLATABLE] = sorted(set(committed) - set(owed))
            points, group, seen = checkpoints_and_group(
                self.tgt, side, self.group, self.plain, owed, 90, exact=system == PYCONNECT
            )
            result.checks["checkpoints"], result.checks["group offsets"] = points, group
            result.details["offsets"] = seen

    def close(self) -> None:
        for process in self.processes.values():
            process.stop(timeout=60)

    def report(self) -> dict[str, Any]:
        return report(self.name, [self.results[PYCONNECT], self.results[JAVA]], self.notes)

    def failures(self) -> dict[str, dict[str, str]]:
        """Each system's failed checks (a system that never drained alone failed ``drain``)."""
        found = {system: r.failed() for system, r in self.results.items()}
        for system, r in self.results.items():
            if r.drain_s is None:
                found[system]["drain"] = "the source was not copied alone within the bound"
        return {system: failed for system, failed in found.items() if failed}


@pytest.mark.long
@pytest.mark.java
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("pair", PAIRS, ids=[f"{s}-to-{t}" for s, t in PAIRS])
def test_migration_matrix(
    pair: tuple[str, str],
    own_release: Callable[[str], KafkaCluster],
    matrix_runs: list[dict[str, Any]],
    unique: Callable[[str], str],
    tmp_path: Path,
) -> None:
    run = PairRun(pair, own_release(pair[0]), own_release(pair[1]), unique("mx"), tmp_path)
    order = [PYCONNECT, JAVA] if PAIRS.index(pair) % 2 == 0 else [JAVA, PYCONNECT]
    try:
        run.fill()
        run.drain_alone(order)
        run.grow_write_and_restart()
        run.check()
    finally:
        run.close()
        document = run.report()
        matrix_runs.append(document)
        (tmp_path / "migration-matrix.json").write_text(json.dumps(document, indent=2) + "\n")
        print(f"\n{table([document])}")
    assert not run.failures(), table([document])


def handle(cluster: KafkaCluster) -> ClusterHandle:
    return ClusterHandle(cluster.alias, cluster.bootstrap_servers, cluster)


def connect_group_on(bootstrap: str, group: str) -> dict[str, Any] | None:
    """The Connect group as the coordinator describes it, once it is a stable ``connect`` group."""
    described = asyncio.run(describe_group({"bootstrap.servers": bootstrap}, group, timeout_s=15))
    stable = described["state"] == "Stable" and described["protocol_type"] == "connect"
    return described if stable else None


@pytest.mark.long
@pytest.mark.timeout(900)
def test_a_connect_worker_grouped_on_2_8_mirrors_to_4_3(
    own_release: Callable[[str], KafkaCluster], unique: Callable[[str], str], tmp_path: Path
) -> None:
    old, new = handle(own_release("2.8.2")), handle(own_release("4.3.1"))
    prefix, connect_group = unique("cw"), unique("cw-connect")
    plain, group = f"{prefix}-plain", f"{prefix}-group"
    specs = {plain: TopicSpec("plain", 3), f"{prefix}-txn": TopicSpec("txn", 2, "zstd", transactional=True)}
    flow_side = Side(PYCONNECT, "A", "B")

    async def write(first: int, count: int) -> None:
        await asyncio.gather(*(fill(old.bootstrap_servers, t, s, count, first) for t, s in specs.items()))

    def copied_identical() -> dict[str, Rows]:
        source = read_all_rows(old.bootstrap_servers, list(specs))
        progress = wait_counts(
            new.bootstrap_servers, {"copy": expected_on(flow_side, source)}, 120, worker.check_alive
        )
        assert progress["copy"].done is not None, "the source was not copied within 120 s"
        verdict, _ = compare(new.bootstrap_servers, flow_side, source, 0)
        assert verdict == "ok", verdict
        return source

    asyncio.run(write(0, 3000))
    asyncio.run(commit(old.bootstrap_servers, group, plain, {0: 500, 1: 500, 2: 500}))
    override = {"producer.override.bootstrap.servers": new.bootstrap_servers}
    source_config = mirror_config(
        old, new, f"{prefix}-.*", **{"source.consumer.isolation.level": "read_committed", **override}
    )
    checkpoint_config = flow(
        old,
        new,
        "MirrorCheckpointConnector",
        groups=group,
        **{
            "emit.checkpoints.interval.seconds": "1",
            "sync.group.offsets.enabled": "true",
            "sync.group.offsets.interval.seconds": "1",
            "refresh.groups.interval.seconds": "2",
            "checkpoints.topic.replication.factor": "1",
            **override,
        },
    )
    with fleet(python_workers(old.bootstrap_servers, tmp_path, connect_group, 1)) as (worker,):
        for name, config in (("source", source_config), ("checkpoint", checkpoint_config)):
            code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
            assert code == 201, body
        wait_for("2 source tasks RUNNING", lambda: running_tasks(worker, "source", 2), 60)
        wait_for("1 checkpoint task RUNNING", lambda: running_tasks(worker, "checkpoint", 1), 60)
        source = copied_identical()
        committed = {p: n - 7 for p, n in counts(source[plain]).items()}
        asyncio.run(commit(old.bootstrap_servers, group, plain, committed))
        points, offsets, seen = checkpoints_and_group(
            new.bootstrap_servers, flow_side, group, plain, committed, 90, exact=True
        )
        assert (points, offsets) == ("ok", "ok"), seen
        described = wait_for(
            "a stable connect group on 2.8.2",
            lambda: connect_group_on(old.bootstrap_servers, connect_group),
            30,
        )
        assert len(described["members"]) == 1
        for internal in (f"{connect_group}-configs", f"{connect_group}-offsets", f"{connect_group}-status"):
            assert (
                asyncio.run(topic_state(old.bootstrap_servers, internal, "cleanup.policy"))[1] == "compact"
            ), internal
        worker.stop(timeout=30)
        asyncio.run(write(3000, 1500))
        worker.start()
        worker.wait_ready()
        wait_for("2 source tasks RUNNING again", lambda: running_tasks(worker, "source", 2), 60)
        copied_identical()


def test_a_2_8_source_reaches_4_3_record_for_record(
    kafka_release: Callable[[str], KafkaCluster],
    cluster_b: ClusterHandle,
    unique: Callable[[str], str],
    tmp_path: Path,
) -> None:
    """The matrix's short sibling: pyconnect's dedicated MirrorMaker alone, on the session's clusters."""
    old = kafka_release("2.8.2").bootstrap_servers
    prefix, tag = unique("ms"), uuid.uuid4().hex[:6]
    specs = {
        f"{prefix}-txn": TopicSpec("txn", 2, "lz4", transactional=True),
        f"{prefix}-zstd": TopicSpec("zstd", 2, "zstd"),
        f"{prefix}-v1": TopicSpec("v1", 2, "lz4", message_format="0.10.2"),
    }

    async def write() -> None:
        await asyncio.gather(*(fill(old, t, s, SHORT_COUNT) for t, s in specs.items()))

    asyncio.run(write())
    source = read_all_rows(old, list(specs))
    side = Side(PYCONNECT, f"old{tag}", f"new{tag}")
    config = mm2_properties(old, cluster_b.bootstrap_servers, f"{prefix}-.*", f"{prefix}-group", (side,))
    process = PyconnectMirrorMaker(
        config, tmp_path / "pyconnect", clusters=[side.target], die_with_parent=True
    )
    try:
        process.start()
        progress = wait_counts(
            cluster_b.bootstrap_servers, {"copy": expected_on(side, source)}, 60, process.check_alive
        )
        assert progress["copy"].done is not None, "the source was not copied within 60 s"
        verdict, _ = compare(cluster_b.bootstrap_servers, side, source, 0)
        assert verdict == "ok", verdict
        assert sum(counts(source[f"{prefix}-txn"]).values()) < SHORT_COUNT, "no transaction was aborted"
    finally:
        process.stop(timeout=30)
