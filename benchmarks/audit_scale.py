"""The audit-at-scale scenario: the Spark flow audit of N mirrored records, in ``local[2]`` and on a
two-worker Spark standalone cluster.

For each size N (``BenchSettings.audit_sizes``):

1. a fresh CreateTime topic on A (``audit_partitions`` partitions) gets N records of 100 B from
   ProducerPerformance (the suite's fastest writer) with a payload file of distinct lines, so records
   are nearly all distinct (a record repeats only when the same line is drawn twice in one millisecond
   of one partition, which the audit must and does handle);
2. a group commits half of every partition on A (an admin OffsetCommit), so the translation audit has
   checkpoints to check;
3. one fresh pyconnect worker runs MirrorSourceConnector and MirrorCheckpointConnector (source alias
   ``A``, as an ``mm2.properties`` flow ``A->B`` names it) until the target holds N records and a
   checkpoint of the group for every partition is on B; the worker is then stopped (a quiet mirror);
4. ``pyconnect audit --config mm2.properties --flow A->B --topics T --groups G --out DIR`` runs in a
   child process on ``local[2]``, then through ``spark-submit`` on a standalone cluster (a master and
   two one-core workers from the installed PySpark, on 127.0.0.1).

Per mode and size: wall time (process start to exit, Spark start-up included), the audit's own time
(``seconds`` of ``audit.json``), records scanned (source + target) per wall second, the verdict (must
be ``pass``), the sizes of ``audit.html`` and ``audit.json``, and the peak summed RSS of the driver's
and of the executors' processes (sampled every 0.5 s by PID, see :func:`process_roles`), with the
1-minute load average at the start and its mean over the run.

Memory: the driver gets ``audit_driver_memory`` of heap in both modes; in ``local[2]`` the executors
are threads of that same JVM (only their Python workers count as executor processes), on the cluster
each executor JVM gets ``audit_executor_memory``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import perftools, runners, workload
from benchmarks.procstats import load_average, rss_mb
from benchmarks.settings import BenchSettings
from pyconnect.testing.distribution import KafkaDistribution

log = logging.getLogger("benchmarks.audit_scale")

SOURCE_ALIAS = "A"
FLOW = "A->B"
CHECKPOINTS_TOPIC = f"{SOURCE_ALIAS}.checkpoints.internal"
EXECUTOR_MARKERS = ("CoarseGrainedExecutorBackend", "pyspark.daemon", "pyspark.worker")
"""Command-line words of an executor process: an executor JVM of a standalone worker, or a Python
worker Spark forks to run tasks (in ``local[2]`` these are children of the driver's JVM)."""
DRIVER, EXECUTOR = "driver", "executor"
SAMPLE_INTERVAL_S = 0.5
STEP_TIMEOUT_S = 180.0
PAYLOAD_LINES = 200_000


# ---- pure parts -------------------------------------------------------------------------------


def process_roles(
    table: Mapping[int, tuple[int, str]], driver_root: int, other_roots: Iterable[int] = ()
) -> dict[int, str]:
    """Which processes of the audit are driver and which executor.

    ``table`` maps PID -> (parent PID, command line). The processes counted are ``driver_root`` and its
    descendants, and the descendants of ``other_roots`` (a standalone cluster's worker JVMs, which are
    not counted themselves). A process is :data:`EXECUTOR` when its command line, or that of an ancestor
    below the roots, holds one of :data:`EXECUTOR_MARKERS`; the rest of ``driver_root``'s tree is
    :data:`DRIVER` (the ``spark-submit`` or ``pyconnect audit`` process, the driver JVM, the Python
    driver); the rest of the other roots' trees is not counted.
    """
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    roles: dict[int, str] = {}

    def walk(pid: int, inherited: str | None, counted_self: bool) -> None:
        stack = [(pid, inherited, counted_self)]
        seen = 0
        while stack and seen < 100_000:
            seen += 1
            current, role, counted = stack.pop()
            command = table.get(current, (0, ""))[1]
            if role != EXECUTOR and any(m in command for m in EXECUTOR_MARKERS):
                role = EXECUTOR
            if counted and role is not None:
                roles[current] = role
            for child in children.get(current, []):
                stack.append((child, role, True))

    if driver_root in table:
        walk(driver_root, DRIVER, True)
    for root in other_roots:
        if root in table and root != driver_root:
            walk(root, None, False)
    return roles


def growth(rows: Mapping[int, Mapping[str, Any]]) -> dict[str, Any] | None:
    """How the audit's time grows from the smallest to the largest size measured (``rows``: size ->
    figures with ``wall_s`` and ``audit_s``); ``None`` with fewer than two sizes."""
    sizes = sorted(n for n, r in rows.items() if r.get("wall_s"))
    if len(sizes) < 2:
        return None
    small, large = rows[sizes[0]], rows[sizes[-1]]

    def ratio(name: str) -> float | None:
        a, b = small.get(name), large.get(name)
        return round(b / a, 2) if a and b else None

    return {
        "from_records": sizes[0],
        "to_records": sizes[-1],
        "records_ratio": round(sizes[-1] / sizes[0], 2),
        "wall_ratio": ratio("wall_s"),
        "audit_ratio": ratio("audit_s"),
    }


def write_payload_file(path: Path, lines: int, size: int) -> Path:
    """``lines`` distinct lines of exactly ``size`` printable bytes (newline-separated)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        for i in range(lines):
            stem = f"audit-record-{i:012d}-"
            out.write((stem + "x" * size)[:size] + "\n")
    return path


# ---- processes --------------------------------------------------------------------------------


def process_table() -> dict[int, tuple[int, str]]:
    """Every process of the machine: PID -> (parent PID, command line), from /proc."""
    table: dict[int, tuple[int, str]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
            command = (
                Path(f"/proc/{entry.name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            )
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        table[int(entry.name)] = (ppid, command)
    return table


@dataclass
class RoleRssSampler:
    """Samples the summed RSS of the driver's and of the executors' processes (:func:`process_roles`)
    every :data:`SAMPLE_INTERVAL_S` on a daemon thread; keeps the peak sums and the load average."""

    driver_root: Callable[[], int | None]
    other_roots: tuple[int, ...] = ()
    max_seconds: float = 4 * 3600.0
    peak: dict[str, float] = field(default_factory=lambda: {DRIVER: 0.0, EXECUTOR: 0.0})
    executor_processes: int = 0
    loads: list[float] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)

    def start(self) -> RoleRssSampler:
        self._thread = threading.Thread(target=self._run, name="audit-rss", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        deadline = time.monotonic() + self.max_seconds
        last_load = 0.0
        while not self._stop.is_set() and time.monotonic() < deadline:
            self.sample()
            if time.monotonic() - last_load >= 5.0:
                load = load_average()
                if load:
                    self.loads.append(load[0])
                last_load = time.monotonic()
            self._stop.wait(SAMPLE_INTERVAL_S)

    def sample(self) -> None:
        root = self.driver_root()
        if root is None:
            return
        roles = process_roles(process_table(), root, self.other_roots)
        sums = {DRIVER: 0.0, EXECUTOR: 0.0}
        executors = 0
        for pid, role in roles.items():
            value = rss_mb(pid)
            if value is not None:
                sums[role] += value
                executors += role == EXECUTOR
        for role, total in sums.items():
            self.peak[role] = max(self.peak[role], total)
        self.executor_processes = max(self.executor_processes, executors)

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=10)


# ---- Kafka side -------------------------------------------------------------------------------


async def _partition_ends(bootstrap: str, topic: str) -> dict[int, int]:
    from pyconnect.kafka.clients import create_consumer
    from pyconnect.kafka.log import TopicPartition

    consumer = create_consumer({"bootstrap.servers": bootstrap}, enable_auto_commit=False)
    await consumer.start()
    try:
        await consumer._client.force_metadata_update()
        parts = consumer.partitions_for_topic(topic) or set()
        ends = await consumer.end_offsets([TopicPartition(topic, p) for p in parts])
        return {tp.partition: int(off) for tp, off in ends.items()}
    finally:
        await consumer.stop()


async def _commit(bootstrap: str, group: str, offsets: Mapping[tuple[str, int], int]) -> None:
    from pyconnect.kafka.group_admin import CommittedOffset, GroupAdmin

    admin = GroupAdmin({"bootstrap.servers": bootstrap})
    await admin.start()
    try:
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while True:
            try:
                errors = await admin.alter_offsets(
                    group, {tp: CommittedOffset(off, "bench") for tp, off in offsets.items()}
                )
            except Exception as exc:
                if not getattr(exc, "retriable", False) or time.monotonic() > deadline:
                    raise
                errors = {("retry", 0): -1}
            if not errors:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"committing {group} on the source failed: {errors}")
            await asyncio.sleep(0.5)
    finally:
        await admin.close()


async def _checkpointed(bootstrap: str, group: str, remote: str, wanted: Mapping[int, int]) -> None:
    """Wait (bounded) until the checkpoints topic on ``bootstrap`` holds, for every partition of
    ``wanted``, a checkpoint of ``group`` on ``remote`` with that upstream offset."""
    from connectors.mirror.checkpoint_records import Checkpoint
    from pyconnect.kafka.clients import create_consumer
    from pyconnect.kafka.log import TopicPartition

    consumer = create_consumer(
        {"bootstrap.servers": bootstrap}, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    await consumer.start()
    try:
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while not consumer.partitions_for_topic(CHECKPOINTS_TOPIC):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{CHECKPOINTS_TOPIC} does not exist after {STEP_TIMEOUT_S:.0f} s")
            await consumer._client.force_metadata_update()
            await asyncio.sleep(0.5)
        consumer.assign([TopicPartition(CHECKPOINTS_TOPIC, 0)])
        seen: dict[int, int] = {}
        while any(seen.get(p) != u for p, u in wanted.items()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"checkpoints of {group}: wanted {dict(wanted)}, seen {seen}")
            for messages in (await consumer.getmany(timeout_ms=500)).values():
                for m in messages:
                    c = Checkpoint.from_record(m.key, m.value)
                    if c.consumer_group_id == group and c.topic == remote:
                        seen[c.partition] = c.upstream_offset
    finally:
        await consumer.stop()


def _checkpoint_config(a: str, b: str, topic: str, group: str) -> dict[str, str]:
    return {
        "connector.class": runners.MIRROR_CHECKPOINT,
        "tasks.max": "1",
        "source.cluster.alias": SOURCE_ALIAS,
        "target.cluster.alias": runners.TARGET_ALIAS,
        "source.cluster.bootstrap.servers": a,
        "target.cluster.bootstrap.servers": b,
        "topics": topic,
        "groups": group,
        "emit.checkpoints.interval.seconds": "1",
        "refresh.groups.interval.seconds": "2",
        "checkpoints.topic.replication.factor": "1",
        "key.converter": runners.BYTE_ARRAY,
        "value.converter": runners.BYTE_ARRAY,
        "header.converter": runners.BYTE_ARRAY,
    }


def prepare_mirror(
    s: BenchSettings, dist: KafkaDistribution, a: str, b: str, work_dir: Path, records: int
) -> dict[str, Any]:
    """Steps 1-3 of the module docstring for ``records``; the names and the mirroring figures."""
    topic = f"bench-audit-{records}-{uuid.uuid4().hex[:6]}"
    group = f"{topic}-group"
    remote = f"{SOURCE_ALIAS}.{topic}"
    workload.create_topics(a, [topic], s.audit_partitions, {})
    payload = write_payload_file(work_dir / "audit-payload.txt", PAYLOAD_LINES, s.audit_record_size)
    log.info("audit_scale: writing %d records to %s", records, topic)
    produced = perftools.produce(
        dist,
        a,
        topic,
        records,
        s.audit_record_size,
        work_dir / "tools" / f"audit-{records}.log",
        payload_file=payload,
        timeout=s.drain_timeout_s * 2,
    )
    ends = asyncio.run(_partition_ends(a, topic))
    committed = {p: end // 2 for p, end in ends.items()}
    asyncio.run(_commit(a, group, {(topic, p): off for p, off in committed.items()}))
    worker = runners.make_workers("pyconnect", b, work_dir / "audit-workers", 1)[0]
    try:
        worker.start()
        worker.wait_ready(120.0)
        started = time.monotonic()
        source = runners.connector_config("pyconnect", a, b, [topic], s.audit_partitions, alias=SOURCE_ALIAS)
        runners.create_connector(worker, f"audit-source-{records}", source)
        runners.create_connector(
            worker, f"audit-checkpoint-{records}", _checkpoint_config(a, b, topic, group)
        )
        deadline = started + s.drain_timeout_s * 2
        copied = 0
        while copied < records:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the mirror copied {copied} of {records} records")
            time.sleep(1.0)
            copied = workload.end_offset_total(b, remote)
        mirror_s = time.monotonic() - started
        asyncio.run(_checkpointed(b, group, remote, committed))
    finally:
        worker.stop()
    return {
        "topic": topic,
        "group": group,
        "produce_records_per_s": produced.get("records_per_s"),
        "mirror_s": round(mirror_s, 1),
        "mirror_records_per_s": round(records / mirror_s) if mirror_s else None,
        "committed": committed,
    }


# ---- the audits -------------------------------------------------------------------------------


def mm2_properties(path: Path, a: str, b: str, topic: str, group: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "clusters = A, B\n"
        f"A.bootstrap.servers = {a}\n"
        f"B.bootstrap.servers = {b}\n"
        "A->B.enabled = true\n"
        f"A->B.topics = {topic}\n"
        f"A->B.groups = {group}\n"
    )
    return path


def _flow_args(config: Path, out: Path, topic: str, group: str) -> list[str]:
    return ["--config", str(config), "--flow", FLOW, "--topics", topic, "--groups", group, "--out", str(out)]


def run_measured(
    command: list[str],
    env: Mapping[str, str],
    cwd: Path,
    timeout_s: float,
    other_roots: tuple[int, ...] = (),
) -> dict[str, Any]:
    """Run one audit process to its end (killed at ``timeout_s``), sampling RSS by role; the figures."""
    cwd.mkdir(parents=True, exist_ok=True)
    holder: dict[str, int] = {}
    sampler = RoleRssSampler(lambda: holder.get("pid"), other_roots)
    load_start = load_average()
    started = time.monotonic()
    with (cwd / "audit.stdout").open("w") as out, (cwd / "audit.stderr").open("w") as err:
        proc = subprocess.Popen(command, stdout=out, stderr=err, env=dict(env), cwd=cwd)
        holder["pid"] = proc.pid
        sampler.start()
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
            code = None
        finally:
            sampler.stop()
    wall = time.monotonic() - started
    return {
        "exit_code": code,
        "wall_s": round(wall, 1),
        "peak_driver_rss_mb": round(sampler.peak[DRIVER], 1),
        "peak_executor_rss_mb": round(sampler.peak[EXECUTOR], 1),
        "executor_processes": sampler.executor_processes,
        "load_1min_at_start": load_start[0] if load_start else None,
        "load_1min_mean": round(sum(sampler.loads) / len(sampler.loads), 2) if sampler.loads else None,
    }


def figures(measured: Mapping[str, Any], out: Path, records: int) -> dict[str, Any]:
    """``measured`` plus what the reports say: verdict, audit seconds, records scanned, report sizes."""
    row = dict(measured)
    row["records"] = records
    report_path, html_path = out / "audit.json", out / "audit.html"
    if not report_path.exists():
        row["verdict"] = "no report"
        return row
    body = json.loads(report_path.read_text())
    scanned = body.get("scanned") or {}
    total = int(scanned.get("source_records", 0)) + int(scanned.get("target_records", 0))
    row.update(
        verdict="pass" if body.get("ok") and measured.get("exit_code") == 0 else "findings",
        verdict_line=body.get("verdict"),
        audit_s=body.get("seconds"),
        records_scanned=total,
        records_scanned_per_s=round(total / row["wall_s"]) if row.get("wall_s") else None,
        audit_records_per_s=round(total / body["seconds"]) if body.get("seconds") else None,
        checkpoints_checked=scanned.get("checkpoints"),
        offset_syncs_checked=scanned.get("offset_syncs"),
        html_report_bytes=html_path.stat().st_size if html_path.exists() else None,
        json_report_bytes=report_path.stat().st_size,
    )
    return row


def audit_local(
    s: BenchSettings, work_dir: Path, a: str, b: str, topic: str, group: str, records: int
) -> dict[str, Any]:
    base = work_dir / f"audit-local-{records}"
    config = mm2_properties(base / "mm2.properties", a, b, topic, group)
    out = base / "report"
    command = [
        sys.executable,
        "-m",
        "pyconnect",
        "audit",
        *_flow_args(config, out, topic, group),
        "--master",
        "local[2]",
        "--driver-memory",
        s.audit_driver_memory,
    ]
    measured = run_measured(command, os.environ, base, s.audit_timeout_s)
    return figures(measured, out, records)


def audit_standalone(
    s: BenchSettings, work_dir: Path, a: str, b: str, topic: str, group: str, records: int
) -> dict[str, Any]:
    from spark_analytics.job_package import build_package, submit_command
    from spark_analytics.session import log_config
    from spark_analytics.standalone import loopback_env, spark_script, standalone_cluster

    base = work_dir / f"audit-standalone-{records}"
    config = mm2_properties(base / "mm2.properties", a, b, topic, group)
    out = base / "report"
    package = build_package(base / "job")
    quiet_logs = f"-Dlog4j2.configurationFile={log_config().as_uri()}"
    with standalone_cluster(base / "cluster", workers=2, cores=1, memory=s.audit_executor_memory) as cluster:
        command = submit_command(
            spark_script("spark-submit"),
            cluster.master_url,
            package,
            _flow_args(config, out, topic, group),
            conf=[
                f"spark.driver.memory={s.audit_driver_memory}",
                f"spark.executor.memory={s.audit_executor_memory}",
                "spark.driver.host=127.0.0.1",
                "spark.driver.bindAddress=127.0.0.1",
                "spark.ui.enabled=false",
                "spark.ui.showConsoleProgress=false",
                f"spark.driver.extraJavaOptions={quiet_logs}",
            ],
        )
        env = loopback_env(sys.executable, {"PYSPARK_DRIVER_PYTHON": sys.executable})
        measured = run_measured(command, env, base, s.audit_timeout_s, other_roots=cluster.pids[1:])
    row = figures(measured, out, records)
    row["cluster"] = "standalone: 2 workers x 1 core"
    return row


def measure(s: BenchSettings, dist: KafkaDistribution, a: str, b: str, work_dir: Path) -> dict[str, Any]:
    """The scenario's metrics: per size the mirroring figures, per mode and size the audit figures,
    and per mode how the time grows from the smallest to the largest size."""
    modes: dict[str, dict[int, dict[str, Any]]] = {"local[2]": {}, "standalone": {}}
    mirrors: dict[int, dict[str, Any]] = {}
    failures: list[str] = []

    def result() -> dict[str, Any]:
        return {
            "record_size": s.audit_record_size,
            "partitions": s.audit_partitions,
            "driver_memory": s.audit_driver_memory,
            "executor_memory": s.audit_executor_memory,
            "mirrors": {str(n): m for n, m in mirrors.items()},
            "modes": {mode: {str(n): r for n, r in rows.items()} for mode, rows in modes.items()},
            "growth": {mode: growth(rows) for mode, rows in modes.items()},
            "all_pass": bool(modes["local[2]"])
            and all(r.get("verdict") == "pass" for rows in modes.values() for r in rows.values()),
            "failures": failures,
        }

    progress = work_dir / "audit_scale-progress.json"
    for records in s.audit_sizes:
        try:
            mirror = prepare_mirror(s, dist, a, b, work_dir, records)
        except Exception as exc:
            log.exception("audit_scale: mirroring %d records failed", records)
            failures.append(f"mirroring {records} records: {type(exc).__name__}: {exc}"[:400])
            break
        mirrors[records] = mirror
        topic, group = mirror["topic"], mirror["group"]
        for mode, run in (("local[2]", audit_local), ("standalone", audit_standalone)):
            log.info("audit_scale: %s audit of %d records", mode, records)
            try:
                row = run(s, work_dir, a, b, topic, group, records)
            except Exception as exc:
                log.exception("audit_scale: %s audit of %d records failed", mode, records)
                row = {
                    "records": records,
                    "verdict": "failed",
                    "reason": f"{type(exc).__name__}: {exc}"[:400],
                }
            log.info("audit_scale: %s %d records: %s", mode, records, row)
            modes[mode][records] = row
            progress.write_text(json.dumps(result(), indent=2))
    return result()
