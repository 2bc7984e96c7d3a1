"""The group_sync scenario (pyconnect only): the continuous group offset sync under a commit load.

One fresh pyconnect worker on the target runs, under the source alias ``gs``, a MirrorSourceConnector
(one task, ``offset.lag.max`` at its default) that copies ``bench-gs`` (:data:`PARTITIONS` partitions of
:data:`RECORDS_PER_PARTITION` records) before any group commits, then a MirrorCheckpointConnector with
``sync.group.offsets.enabled=true`` and ``pyconnect.sync.group.offsets.continuous=true`` (one task,
checkpoints every 60 s) for :data:`GROUPS` groups. The copy being contiguous, the exact translation of
every source offset is the same offset on the target, once the offset syncs reach the last record of
each partition (the worker flushes offsets, and so writes held-back syncs, every second): the
benchmark waits for that, so the figures hold the sync alone, not the translation's wait for syncs.

Measured, after the groups' first commits are synced:

1. **idle CPU**: the worker's CPU (its process tree, /proc) over :data:`IDLE_WINDOW_S` with nothing
   committed (the sync reads the source every cycle, the source task idles);
2. the checkpoint task is restarted, so that the sync's own count of requests (the INFO line its task
   writes when it stops, :mod:`connectors.mirror.group_watch`) covers the load and little else;
3. **the load**: every group commits on the source (admin OffsetCommit, one partition per commit,
   round-robin, each one past the group's previous offset there, up to :data:`MAX_IN_FLIGHT` in flight)
   at ``COMMITS_PER_S / GROUPS`` a second, :data:`COMMITS_PER_S` in all, for 30 s (``--quick``) or
   60 s; the worker's CPU is read at the start and end of the load. A commit's **staleness** is taken
   from the coordinators' own records (``__consumer_offsets`` of both clusters, read afterwards): from
   the source's record of the commit to the target's first record of the group at or past its
   translation, both stamped by brokers on this machine, so the benchmark's own scheduling does not
   count. Beside it, ``staleness_as_read``: the same seen by reads of the target every
   :data:`WATCH_EVERY_S` (late by up to one read interval, ``target_read_interval_ms`` as achieved);
4. the task is restarted again: the stopped sync's line gives its cycles, commits and requests per API
   over its life (the load and the few seconds before it); **requests per second** divide them by it.

The goal is a staleness p99 of at most 1 s (``goal_met``). The figures come from a 2-core machine that
also runs both brokers and this benchmark's own load; the machine's load average is recorded beside
them. Every wait is bounded; the worker is stopped by PID.
"""

from __future__ import annotations

import asyncio
import bisect
import re
import struct
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import runners, workload
from benchmarks.procstats import load_average, process_tree, total_cpu_seconds
from benchmarks.settings import BenchSettings
from benchmarks.stats import latency_summary
from connectors.mirror.records import OffsetSync
from pyconnect.kafka.clients import create_consumer, create_producer
from pyconnect.kafka.group_admin import CommittedOffset
from pyconnect.kafka.group_offsets import SyncAdmin
from pyconnect.kafka.log import TopicPartition
from pyconnect.testing.connect_worker import ConnectWorkerProcess

GROUPS = 20
COMMITS_PER_S = 1000
PARTITIONS = 4
RECORDS_PER_PARTITION = 5000
WATCH_EVERY_S = 0.02
MAX_IN_FLIGHT = 8
"""Commits of one group the load keeps in flight at most (the rate holds when a round trip is slow)."""
IDLE_WINDOW_S = 10.0
GOAL_P99_MS = 1000.0
ALIAS = "gs"
TOPIC = "bench-gs"
SOURCE_CONNECTOR = "bench-gs-source"
CHECKPOINT_CONNECTOR = "bench-gs-checkpoint"
CONTINUOUS = "pyconnect.sync.group.offsets.continuous"
OFFSETS_TOPIC = "__consumer_offsets"
OFFSET_SYNCS_TOPIC = f"mm2-offset-syncs.{runners.TARGET_ALIAS}.internal"
WORKER_SETTINGS = {"offset.flush.interval.ms": 1000}
"""Offset syncs held back by the source task are written at each offset flush (KAFKA-15906): every
second, so that the last records' syncs are there before the load starts."""
STEP_TIMEOUT_S = 120.0
TP = tuple[str, int]
DESCRIPTION = (
    "pyconnect only: one worker copies a topic (4 partitions) with MirrorSourceConnector, then runs "
    "MirrorCheckpointConnector with sync.group.offsets.enabled=true and pyconnect.sync.group.offsets."
    "continuous=true for 20 groups. The groups commit on the source at 1,000 commits/s in all (admin "
    "commits, one partition each). Staleness = from the source coordinator's record of a commit to the target "
    "coordinator's first record of the group at or past its translation (__consumer_offsets of both clusters; "
    "goal: p99 <= 1 s); staleness as read = the same from the commit's acknowledgement to the first read of "
    "the target (every 20 ms) showing it. CPU = the worker's process tree over the load, beside its idle CPU with "
    "the sync running and nothing committed. Requests/s = the sync's own count (logged when its task stops), "
    "per API, over the life of a task restarted just before the load and again just after it."
)


def _percent(cores: float | None) -> float | None:
    return None if cores is None else round(100 * cores, 1)


REPORT_COLUMNS: list[tuple[str, Callable[[Mapping[str, Any]], Any]]] = [
    ("groups", lambda m: m.get("groups")),
    ("commits/s", lambda m: m.get("commits_per_s")),
    ("staleness p50 ms", lambda m: (m.get("staleness") or {}).get("p50_ms")),
    ("staleness p99 ms", lambda m: (m.get("staleness") or {}).get("p99_ms")),
    ("staleness max ms", lambda m: (m.get("staleness") or {}).get("max_ms")),
    ("p99 <= 1 s", lambda m: m.get("goal_met")),
    ("worker CPU idle (% of a core)", lambda m: _percent(m.get("worker_cpu_cores_idle"))),
    ("worker CPU under load (% of a core)", lambda m: _percent(m.get("worker_cpu_cores_load"))),
    ("sync requests/s", lambda m: m.get("sync_requests_per_s")),
    ("load average", lambda m: (m.get("load_average_before") or [None])[0]),
]
"""The report's columns (benchmarks.report)."""
_SUMMARY = re.compile(r"continuous group offset sync stopped after ([\d.]+) s: (\{.*\})")


@dataclass
class Load:
    """Source commits at a fixed rate and the target's committed offsets watched meanwhile."""

    commits: list[tuple[str, TP, int, float]] = field(default_factory=list)
    """(group, source partition, offset, wall time the commit was acknowledged)."""
    seen: dict[tuple[str, TP], list[tuple[float, int]]] = field(default_factory=dict)
    """(group, target partition) -> [(wall time first seen, offset)] as the offset changed."""
    polls: int = 0
    commit_s: float = 0.0
    """How long the commits took (longer than asked when this process could not keep the rate)."""

    def staleness_ms(self, prefix: str) -> list[float]:
        """Per source commit: ms from its acknowledgement to the first watch that saw the target at or
        past its (identity) translation in topic ``prefix + topic``; ``inf`` for a commit never seen."""
        out = []
        for group, (topic, partition), offset, acked in self.commits:
            seen = self.seen.get((group, (prefix + topic, partition)), [])
            first = next((t for t, o in seen if o >= offset), None)
            out.append(float("inf") if first is None else max(0.0, (first - acked) * 1000))
        return out


async def run_load(
    source: str,
    target: str,
    groups: Sequence[str],
    topic: str,
    partitions: int,
    rate: float,
    seconds: float,
    start: int = 0,
    watch_every_s: float = WATCH_EVERY_S,
    settle_s: float = 3.0,
) -> Load:
    """Commit to ``groups`` on ``source`` at ``rate`` commits/s in all for ``seconds`` (each commit one
    group and partition, round-robin, its offset one past the group's previous one there, from
    ``start``), while the target's offsets of the groups are read every ``watch_every_s`` (and for
    ``settle_s`` after the last commit)."""
    load = Load()
    committer = SyncAdmin({"bootstrap.servers": source}, spread_commits=False)  # in order
    watcher = SyncAdmin({"bootstrap.servers": target})
    done = asyncio.Event()

    async def commit_one(group: str, partition: int, offset: int, slots: asyncio.Semaphore) -> None:
        try:
            errors = await committer.commit(
                group, {(topic, partition): CommittedOffset(offset, f"m{offset}")}
            )
        finally:
            slots.release()
        if errors:
            raise RuntimeError(f"committing {group} on the source failed: {errors}")
        load.commits.append((group, (topic, partition), offset, time.time()))

    async def commit(group: str) -> None:
        """One group's commits on schedule, up to MAX_IN_FLIGHT at once (one connection: the broker
        handles them in the order sent)."""
        every = len(groups) / rate
        began = time.monotonic()
        slots = asyncio.Semaphore(MAX_IN_FLIGHT)
        sent: list[asyncio.Task[None]] = []
        for n in range(int(seconds * rate / len(groups))):
            await slots.acquire()
            partition, offset = n % partitions, start + 1 + n // partitions
            sent.append(asyncio.create_task(commit_one(group, partition, offset, slots)))
            await asyncio.sleep(max(0.0, began + (n + 1) * every - time.monotonic()))
        await asyncio.gather(*sent)

    async def commits() -> None:
        began = time.monotonic()
        await asyncio.gather(*(commit(g) for g in groups))
        load.commit_s = time.monotonic() - began
        done.set()

    async def watch() -> None:
        settle_until = None
        while settle_until is None or time.monotonic() < settle_until:
            answer = await watcher.fetch_committed(list(groups))
            now = time.time()
            load.polls += 1
            for group, offsets in answer.items():
                for tp, committed in offsets.items():
                    history = load.seen.setdefault((group, tp), [])
                    if not history or history[-1][1] != committed.offset:
                        history.append((now, committed.offset))
            if done.is_set() and settle_until is None:
                settle_until = time.monotonic() + settle_s
            await asyncio.sleep(watch_every_s)

    try:
        await committer.start()
        await watcher.start()
        await asyncio.gather(commits(), watch())
    finally:
        await committer.close()
        await watcher.close()
    return load


async def commit_all(bootstrap: str, groups: Sequence[str], topic: str, partitions: int, offset: int) -> None:
    """Commit ``offset`` on every partition of ``topic`` for each group (retried while a fresh
    cluster's group coordinator is not there yet)."""
    admin = SyncAdmin({"bootstrap.servers": bootstrap})
    try:
        for group in groups:
            wanted = {(topic, p): CommittedOffset(offset) for p in range(partitions)}
            deadline = time.monotonic() + STEP_TIMEOUT_S
            while True:
                try:
                    if not await admin.commit(group, wanted):
                        break
                except Exception as exc:
                    if not getattr(exc, "retriable", False) or time.monotonic() > deadline:
                        raise
                    admin.forget_coordinator(group)
                await asyncio.sleep(0.2)
    finally:
        await admin.close()


async def commit_history(bootstrap: str, groups: Sequence[str]) -> dict[str, dict[TP, list[tuple[int, int]]]]:
    """Every offset commit of ``groups`` the coordinator wrote to ``__consumer_offsets`` on ``bootstrap``:
    per group and partition, ``(offset, record timestamp ms)`` in the order written (a group's records
    all go to one partition of that topic, whose order is the coordinator's)."""
    wanted = set(groups)
    consumer = create_consumer({"bootstrap.servers": bootstrap}, enable_auto_commit=False)
    await consumer.start()
    found: dict[str, dict[TP, list[tuple[int, int]]]] = {g: {} for g in groups}
    try:
        await consumer._client.force_metadata_update()  # the internal topic, which no subscription asks
        partitions = [
            TopicPartition(OFFSETS_TOPIC, p) for p in consumer.partitions_for_topic(OFFSETS_TOPIC) or ()
        ]
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        stop_at = await consumer.end_offsets(partitions)
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while time.monotonic() < deadline and [
            tp for tp in partitions if (await consumer.position(tp)) < stop_at[tp]
        ]:
            for messages in (await consumer.getmany(timeout_ms=500)).values():
                for m in messages:
                    parsed = _offset_commit(m.key, m.value)
                    if parsed is not None and parsed[0] in wanted:
                        group, tp, offset = parsed
                        found[group].setdefault(tp, []).append((offset, m.timestamp))
    finally:
        await consumer.stop()
    return found


def _string(data: bytes, at: int) -> tuple[str, int]:
    (size,) = struct.unpack_from(">h", data, at)
    return data[at + 2 : at + 2 + size].decode(), at + 2 + size


def _offset_commit(key: bytes | None, value: bytes | None) -> tuple[str, TP, int] | None:
    """``(group, partition, offset)`` of an offset commit record of ``__consumer_offsets`` (key versions
    0 and 1: group, topic, partition; every value version starts with its version, then the offset),
    else ``None`` (group metadata, tombstones)."""
    if key is None or value is None or struct.unpack_from(">h", key, 0)[0] not in (0, 1):
        return None
    group, at = _string(key, 2)
    topic, at = _string(key, at)
    (partition,) = struct.unpack_from(">i", key, at)
    (offset,) = struct.unpack_from(">q", value, 2)
    return group, (topic, partition), offset


def broker_staleness_ms(
    source: Mapping[str, Mapping[TP, Sequence[tuple[int, int]]]],
    target: Mapping[str, Mapping[TP, Sequence[tuple[int, int]]]],
    prefix: str,
) -> list[float]:
    """Per source commit (its coordinator's record): ms until the target's coordinator wrote an offset at
    or past its (identity) translation in topic ``prefix + topic``; ``inf`` when it never did. Both
    brokers stamp their records with this machine's clock."""
    out = []
    for group, partitions in source.items():
        for (topic, partition), commits in partitions.items():
            written = target.get(group, {}).get((prefix + topic, partition), [])
            offsets = [o for o, _ in written]
            for offset, stamp in commits:
                at = bisect.bisect_left(offsets, offset)  # the target's offsets never go back
                out.append(float("inf") if at == len(written) else max(0.0, float(written[at][1] - stamp)))
    return out


def sync_summaries(log_text: str) -> list[tuple[float, dict[str, Any]]]:
    """The INFO lines a continuous sync writes when its task stops: (seconds, what it did)."""
    import json

    return [(float(m.group(1)), json.loads(m.group(2))) for m in _SUMMARY.finditer(log_text)]


async def _fill(bootstrap: str) -> None:
    producer = create_producer({"bootstrap.servers": bootstrap, "acks": "all"})
    await producer.start()
    try:
        for partition in range(PARTITIONS):
            sends = [
                await producer.send(TOPIC, value=b"g" * 100, partition=partition)
                for _ in range(RECORDS_PER_PARTITION)
            ]
            await asyncio.gather(*sends)
    finally:
        await producer.stop()


async def _synced_to(bootstrap: str, ends: Mapping[int, int]) -> bool:
    """Whether the offset-syncs topic holds a sync of the last record of each partition of the topic:
    then every offset committed translates exactly (the syncs of one contiguous copy form one run)."""
    consumer = create_consumer({"bootstrap.servers": bootstrap}, enable_auto_commit=False)
    await consumer.start()
    newest: dict[int, int] = {}
    try:
        tp = TopicPartition(OFFSET_SYNCS_TOPIC, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        end = (await consumer.end_offsets([tp]))[tp]
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while await consumer.position(tp) < end and time.monotonic() < deadline:
            for messages in (await consumer.getmany(tp, timeout_ms=500)).values():
                for m in messages:
                    sync = OffsetSync.deserialize_record(m.key, m.value)
                    if sync.topic == TOPIC:
                        newest[sync.partition] = max(newest.get(sync.partition, -1), sync.upstream_offset)
    finally:
        await consumer.stop()
    return all(newest.get(p, -1) >= end - 1 for p, end in ends.items())


async def _ends(bootstrap: str, topic: str) -> dict[TP, int]:
    admin = SyncAdmin({"bootstrap.servers": bootstrap})
    try:
        return await admin.log_ends([(topic, p) for p in range(PARTITIONS)], refresh=True)
    finally:
        await admin.close()


def _until(what: str, probe: Any, timeout: float = STEP_TIMEOUT_S, every: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = probe()
        if got:
            return got
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} within {timeout:.0f} s")
        time.sleep(every)


def _restart_task(worker: ConnectWorkerProcess, summaries: int) -> None:
    """Restart the checkpoint task and wait until its stopped instance has written its ``summaries``-th
    summary line and the new one runs."""
    code, body = worker.rest("POST", f"/connectors/{CHECKPOINT_CONNECTOR}/tasks/0/restart")
    if code not in (200, 202, 204):
        raise RuntimeError(f"restarting {CHECKPOINT_CONNECTOR}-0 failed: HTTP {code}: {body}")
    _until(
        "the sync's summary",
        lambda: len(sync_summaries(worker.log_file.read_text(errors="replace"))) >= summaries,
    )
    runners.wait_running(worker, CHECKPOINT_CONNECTOR, 1, STEP_TIMEOUT_S)


def _cpu(worker: ConnectWorkerProcess) -> float:
    seconds = total_cpu_seconds(process_tree(worker.pid))
    if seconds is None:
        raise RuntimeError("the worker's CPU time could not be read")
    return seconds


def checkpoint_config(source: str, target: str, groups: Sequence[str]) -> dict[str, str]:
    config = runners.checkpoint_connector_config(
        "pyconnect", source, target, [TOPIC], groups, emit_interval_s=60, sync_interval_s=60
    )
    return {**config, "source.cluster.alias": ALIAS, CONTINUOUS: "true"}


def measure(
    worker: ConnectWorkerProcess, source: str, target: str, settings: BenchSettings
) -> dict[str, Any]:
    """The scenario on a started, ready pyconnect ``worker`` (see the module docstring); raises on a
    failed step."""
    seconds = 30.0 if settings.mode == "quick" else 60.0
    groups = [f"bench-gs-group-{i}" for i in range(GROUPS)]
    remote = f"{ALIAS}.{TOPIC}"
    workload.create_topics(source, [TOPIC], PARTITIONS)
    workload.create_topics(target, [remote], PARTITIONS)
    asyncio.run(_fill(source))
    mirror = runners.connector_config("pyconnect", source, target, [TOPIC], 1, alias=ALIAS)
    runners.create_connector(worker, SOURCE_CONNECTOR, mirror)
    want = {(remote, p): o for (_, p), o in asyncio.run(_ends(source, TOPIC)).items()}
    _until("copy of the source topic", lambda: asyncio.run(_ends(target, remote)) == want)
    ends = {p: o for (_, p), o in asyncio.run(_ends(source, TOPIC)).items()}
    _until("offset syncs of the last records", lambda: asyncio.run(_synced_to(source, ends)))
    asyncio.run(commit_all(source, groups, TOPIC, PARTITIONS, 1))
    runners.create_connector(worker, CHECKPOINT_CONNECTOR, checkpoint_config(source, target, groups))
    runners.wait_running(worker, CHECKPOINT_CONNECTOR, 1, STEP_TIMEOUT_S)

    def first_synced() -> bool:
        answer = asyncio.run(_committed(target, groups))
        return all(answer.get(g) == {(remote, p): 1 for p in range(PARTITIONS)} for g in groups)

    _until("the groups' first commits on the target", first_synced)
    cpu_idle_0, idle_0 = _cpu(worker), time.monotonic()
    time.sleep(IDLE_WINDOW_S)
    idle_cores = (_cpu(worker) - cpu_idle_0) / (time.monotonic() - idle_0)
    _restart_task(worker, 1)
    time.sleep(3.0)  # the task reads the offset syncs again before its sync starts
    load_before = load_average()
    cpu_0, load_0, wall_0 = _cpu(worker), time.monotonic(), time.time()
    load = asyncio.run(run_load(source, target, groups, TOPIC, PARTITIONS, COMMITS_PER_S, seconds, start=1))
    load_cores = (_cpu(worker) - cpu_0) / (time.monotonic() - load_0)  # the commits and 3 s after
    _restart_task(worker, 2)
    window_s, summary = sync_summaries(worker.log_file.read_text(errors="replace"))[-1]
    on_source = asyncio.run(commit_history(source, groups))
    on_target = asyncio.run(commit_history(target, groups))
    during = {  # the load's commits (not the first ones, made before the idle window)
        g: {tp: [(o, t) for o, t in commits if t >= wall_0 * 1000 - 1000] for tp, commits in parts.items()}
        for g, parts in on_source.items()
    }
    broker = broker_staleness_ms(during, on_target, f"{ALIAS}.")
    figures = _figures(load, broker, window_s, summary, idle_cores, load_cores, load_before)
    last = {
        g: {f"{t}-{p}": commits[-1][0] for (t, p), commits in sorted(parts.items()) if commits}
        for g, parts in on_target.items()
    }
    behind = {
        g: {f"{t}-{p}": commits[-1][0] for (t, p), commits in sorted(parts.items()) if commits}
        for g, parts in on_source.items()
    }
    figures["behind_at_end"] = {  # source offset minus the target's last, where the target is behind
        g: {
            tp: o - last.get(g, {}).get(f"{ALIAS}.{tp}", 0)
            for tp, o in parts.items()
            if o > last.get(g, {}).get(f"{ALIAS}.{tp}", 0)
        }
        for g, parts in behind.items()
    }
    figures["sync_summary"] = summary
    return figures


async def _committed(bootstrap: str, groups: Sequence[str]) -> dict[str, dict[TP, int]]:
    admin = SyncAdmin({"bootstrap.servers": bootstrap})
    try:
        answer = await admin.fetch_committed(groups)
    finally:
        await admin.close()
    return {g: {tp: c.offset for tp, c in offsets.items()} for g, offsets in answer.items()}


def _figures(
    load: Load,
    broker: list[float],
    window_s: float,
    summary: dict[str, Any],
    idle_cores: float,
    load_cores: float,
    load_before: list[float] | None,
) -> dict[str, Any]:
    read = [s for s in load.staleness_ms(f"{ALIAS}.") if s != float("inf")]
    staleness = broker
    seen = [s for s in staleness if s != float("inf")]
    requests = {
        "source": summary.get("source_requests", {}),
        "target": summary.get("target_requests", {}),
    }
    total_requests = sum(sum(r.values()) for r in requests.values())
    figures = latency_summary(seen) if seen else {}
    return {
        "groups": GROUPS,
        "commits": len(staleness),
        "commits_per_s": round(len(load.commits) / load.commit_s, 1),
        "commit_s": round(load.commit_s, 1),
        "never_seen": len(staleness) - len(seen),
        "staleness": figures,
        "goal_p99_ms": GOAL_P99_MS,
        "goal_met": bool(figures) and not len(staleness) - len(seen) and figures["p99_ms"] <= GOAL_P99_MS,
        "staleness_as_read": latency_summary(read) if read else {},
        "target_reads": load.polls,
        "target_read_interval_ms": round(1000 * (load.commit_s + 3.0) / max(1, load.polls), 1),
        "worker_cpu_cores_idle": round(idle_cores, 3),
        "worker_cpu_cores_load": round(load_cores, 3),
        "sync_cpu_cores": round(load_cores - idle_cores, 3),
        "sync_window_s": window_s,
        "sync_requests": requests,
        "sync_requests_per_s": round(total_requests / window_s, 1),
        "sync_requests_per_s_by_api": {
            side: {api: round(n / window_s, 1) for api, n in sorted(r.items())}
            for side, r in requests.items()
        },
        "sync_cycles": summary.get("cycles"),
        "sync_commits": summary.get("commits"),
        "sync_cycle_ms_mean": round(summary.get("cycle_ms_total", 0) / max(1, summary.get("cycles", 1)), 1),
        "sync_cycle_ms_max": summary.get("cycle_ms_max"),
        "load_average_before": load_before,
        "load_average_after": load_average(),
    }


def session(source: str, target: str, work_dir: Path, settings: BenchSettings) -> tuple[str, Any, str | None]:
    """A fresh worker, the scenario, the worker stopped: ``(status, metrics, reason)`` for the report."""
    worker = runners.make_workers("pyconnect", target, work_dir / "group-sync", 1, WORKER_SETTINGS)[0]
    try:
        worker.start()
        worker.wait_ready(STEP_TIMEOUT_S)
        metrics = measure(worker, source, target, settings)
        if metrics["never_seen"]:
            return "failed", metrics, f"{metrics['never_seen']} commits never reached the target"
        return "ok", metrics, None
    except Exception as exc:
        tail = (
            "\n".join(worker.log_file.read_text(errors="replace").splitlines()[-20:])
            if worker.log_file.exists()
            else ""
        )
        return "failed", None, f"{type(exc).__name__}: {exc}"[:400] + (f"\n{tail}" if tail else "")
    finally:
        for name in (CHECKPOINT_CONNECTOR, SOURCE_CONNECTOR):
            try:
                runners.delete_connector(worker, name)
            except Exception:  # the worker may be gone; it is stopped below either way
                pass
        worker.stop(20)
