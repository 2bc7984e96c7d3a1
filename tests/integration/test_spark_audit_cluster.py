"""The Spark audits where operators run them: a Spark standalone cluster, the one-command flow audit with
its reports, and snapshots, on data a pyconnect worker mirrored A -> B on real Kafka.

The module mirrors one topic (two partitions, a group committed part of it on A) once, with
MirrorSourceConnector and MirrorCheckpointConnector on a pyconnect worker of B, then stops the worker.
The tests audit that data in local mode and through ``spark-submit`` on a standalone cluster (a master
and two workers started from the installed PySpark, on 127.0.0.1), and compare the verdicts.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer

from connectors.mirror.checkpoint_records import Checkpoint
from pyconnect.cli import main
from pyconnect.testing.backends import ClusterHandle
from spark_analytics.job_package import build_package, submit_command
from spark_analytics.session import log_config
from spark_analytics.standalone import StandaloneCluster, loopback_env, spark_script, standalone_cluster
from tests.headless_browser import headless
from tests.integration.fleet import fleet, python_workers, running_tasks, wait_for
from tests.integration.mirror_helpers import CHECKPOINTS_TOPIC, latest_checkpoints
from tests.integration.test_mirror_checkpoint import COMMITTED, commit_group, quick_checkpoints
from tests.integration.test_mirror_source import mirror_config, source_rows, wait_mirrored
from tests.integration.test_spark_audit import create_and_fill_now

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(900)]

RECORDS = 160
SUBMIT_TIMEOUT_S = 600
ARTIFACTS = Path(__file__).resolve().parents[2] / "build" / "artifacts"


@dataclass(frozen=True)
class Mirrored:
    a: str
    b: str
    topic: str
    remote: str
    group: str
    prefix: str


@pytest.fixture(scope="module")
def mirrored(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, tmp_path_factory: pytest.TempPathFactory
) -> Mirrored:
    """One topic mirrored A -> B with checkpoints for a group, the worker stopped once they settled."""
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    prefix = f"sac-{uuid.uuid4().hex[:8]}"
    topic, remote, group = f"{prefix}-t", f"A.{prefix}-t", f"{prefix}-group"
    asyncio.run(create_and_fill_now(a, topic, 2, RECORDS))
    expected = source_rows(a, topic, RECORDS)
    asyncio.run(commit_group(a, group, topic))
    base = tmp_path_factory.mktemp("audit-worker")
    with fleet(python_workers(b, base, f"{prefix}-worker", 1)) as (worker,):
        source_config = mirror_config(cluster_a, cluster_b, f"{prefix}-.*", **{"tasks.max": "1"})
        checkpoint_config = quick_checkpoints(cluster_a, cluster_b, group, f"{prefix}-.*")
        for name, config in (("mirror-source", source_config), ("mirror-checkpoint", checkpoint_config)):
            code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
            assert code == 201, body
        wait_mirrored(b, remote, expected, 90)
        for name in ("mirror-source", "mirror-checkpoint"):
            wait_for(f"{name} RUNNING", functools.partial(running_tasks, worker, name, 1), 60)

        def checkpointed() -> bool:
            found = latest_checkpoints(b, group)
            return all(
                (c := found.get((remote, p))) is not None and c.upstream_offset == n
                for p, n in COMMITTED.items()
            )

        wait_for("a checkpoint of every committed partition", checkpointed, 90)
    return Mirrored(a, b, topic, remote, group, prefix)


def _mm2_properties(m: Mirrored, folder: Path) -> Path:
    path = folder / "mm2.properties"
    path.write_text(
        "clusters = A, B\n"
        f"A.bootstrap.servers = {m.a}\n"
        f"B.bootstrap.servers = {m.b}\n"
        "A->B.enabled = true\n"
        f"A->B.topics = {m.prefix}-.*\n"
        f"A->B.groups = {m.prefix}-.*\n"
    )
    return path


def _flow(args: list[str]) -> tuple[int, str, str]:
    """``pyconnect audit ARGS`` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", *args])
    return code, out.getvalue(), err.getvalue()


@dataclass(frozen=True)
class LocalRun:
    code: int
    stdout: str
    stderr: str
    out: Path
    snapshot: Path
    config: Path
    seconds: float


@pytest.fixture(scope="module")
def local_run(mirrored: Mirrored, tmp_path_factory: pytest.TempPathFactory) -> LocalRun:
    """The flow command on the clean mirror, in this process on local[2], keeping a snapshot."""
    base = tmp_path_factory.mktemp("flow-local")
    config = _mm2_properties(mirrored, base)
    out, snapshot = base / "report", base / "snapshot"
    started = time.monotonic()
    code, stdout, stderr = _flow(
        ["--config", str(config), "--flow", "A->B", "--out", str(out), "--snapshot", str(snapshot)]
    )
    return LocalRun(code, stdout, stderr, out, snapshot, config, time.monotonic() - started)


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    """A master and two one-core workers on 127.0.0.1; stopped by PID after the module."""
    with standalone_cluster(tmp_path_factory.mktemp("spark-standalone"), workers=2, memory="512m") as cluster:
        yield cluster


def _submitted(master: str, job_dir: Path, args: list[str]) -> tuple[int, str, str, float]:
    """``spark-submit`` of the packaged audit job with ``args``: exit code, stdout, stderr, seconds."""
    package = build_package(job_dir)
    quiet_logs = f"-Dlog4j2.configurationFile={log_config().as_uri()}"
    command = submit_command(
        spark_script("spark-submit"),
        master,
        package,
        args,
        conf=[
            "spark.driver.memory=512m",
            "spark.executor.memory=512m",
            "spark.driver.host=127.0.0.1",
            "spark.driver.bindAddress=127.0.0.1",
            "spark.ui.enabled=false",
            "spark.ui.showConsoleProgress=false",
            f"spark.driver.extraJavaOptions={quiet_logs}",
        ],
    )
    # The driver runs this interpreter; neither it nor the executors get this checkout on their path.
    env = loopback_env(sys.executable, {"PYSPARK_DRIVER_PYTHON": sys.executable})
    out_log, err_log = job_dir / "spark-submit.out", job_dir / "spark-submit.err"
    started = time.monotonic()
    with out_log.open("w") as out, err_log.open("w") as err:
        try:
            code = subprocess.run(
                command, stdout=out, stderr=err, env=env, cwd=job_dir, timeout=SUBMIT_TIMEOUT_S
            ).returncode
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"spark-submit ran over {SUBMIT_TIMEOUT_S} s; its output: {out_log.read_text()[-3000:]}"
            ) from None
    return code, out_log.read_text(), err_log.read_text(), time.monotonic() - started


@pytest.mark.long  # a Spark standalone cluster starts for it (~1.5 min); `make chaos` runs it
@pytest.mark.timeout(1200)
def test_the_flow_audit_on_a_standalone_cluster_gives_the_local_verdict(
    mirrored: Mirrored, local_run: LocalRun, spark_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    assert local_run.code == 0, local_run.stdout + local_run.stderr[-2000:]
    out = tmp_path / "report"
    args = ["--config", str(local_run.config), "--flow", "A->B", "--out", str(out)]
    code, stdout, stderr, seconds = _submitted(spark_cluster.master_url, tmp_path / "job", args)
    # spark-submit merges the Python driver's stderr (the progress lines) into its stdout.
    assert code == 0, stdout[-3000:] + stderr[-3000:]
    local_lines = local_run.stdout.replace(str(local_run.out), str(out)).splitlines()
    assert stdout.splitlines()[-2:] == local_lines, stdout[-3000:]
    assert "stage " in stdout and f"scanned {RECORDS} source and {RECORDS} target records" in stdout
    local = json.loads((local_run.out / "audit.json").read_text())
    remote = json.loads((out / "audit.json").read_text())
    for part in ("ok", "verdict", "replication", "translation", "scanned", "groups", "remote_topics"):
        assert remote[part] == local[part], part
    # Executors of both workers ran the job, from the shipped zip.
    executors = sorted(spark_cluster.work_dir.glob("worker-*/app-*/*/pyconnect-audit.zip"))
    assert {p.parts[-4] for p in executors} == {"worker-0", "worker-1"}, executors
    print(
        f"\nflow audit of {RECORDS} mirrored records: local[2] {local_run.seconds:.1f} s in-process "
        f"(with the snapshot); standalone, 2 workers x 1 core: {seconds:.1f} s per spark-submit"
    )


@pytest.mark.long  # ~55 s (the audit, its snapshot, the offline audit, a browser); the faults test stays short
def test_the_flow_command_passes_a_faithful_mirror_with_reports_and_a_snapshot(
    mirrored: Mirrored, local_run: LocalRun, tmp_path: Path
) -> None:
    m = mirrored
    code, stdout, stderr, out, snapshot = (
        local_run.code,
        local_run.stdout,
        local_run.stderr,
        local_run.out,
        local_run.snapshot,
    )
    assert code == 0, stdout + stderr[-2000:]
    assert stdout.splitlines()[0] == "flow A->B: PASS", stdout
    assert "stage " in stderr and f"scanned {RECORDS} source and {RECORDS} target records" in stderr, stderr
    report = json.loads((out / "audit.json").read_text())
    assert report["ok"] is True and report["findings"] == []
    assert report["remote_topics"] == {m.topic: m.remote} and report["groups"] == [m.group]
    assert report["scanned"]["source_records"] == report["scanned"]["target_records"] == RECORDS
    assert report["translation"]["checkpoints"] > 0 and report["translation"]["syncs"]["ok"] > 0
    latest = {c["partition"]: c["upstream_offset"] for c in report["translation"]["latest"]}
    assert latest == COMMITTED

    # Offline: the snapshot gives the same audit without the clusters' help.
    assert (snapshot / "snapshot.json").exists()
    assert sorted(p.name for p in snapshot.glob("*.parquet")) == [
        "checkpoints.parquet",
        "offset_syncs.parquet",
        "source.parquet",
        "target.parquet",
    ]
    offline = tmp_path / "offline"
    code, stdout, stderr = _flow(["--from-snapshot", str(snapshot), "--out", str(offline), "--quiet"])
    assert (code, stdout.splitlines()[0], stderr) == (0, "flow A->B: PASS", "")
    again = json.loads((offline / "audit.json").read_text())
    for part in ("replication", "translation", "scanned", "groups", "remote_topics"):
        assert again[part] == report[part], part

    # The HTML report opens in a browser and shows its plots.
    page = out / "audit.html"
    profile = out / "chromium-profile"
    dom = headless(page.as_uri(), profile, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    for plot in ("records", "lag-slack", "rereads"):
        assert f'data-plot="{plot}"' in dom.stdout and "<svg" in dom.stdout, plot
    assert "flow A-&gt;B: PASS" in dom.stdout
    shot = ARTIFACTS / "audit-report.png"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    taken = headless(page.as_uri(), profile, f"--screenshot={shot}", "--window-size=1200,1600")
    assert taken.returncode == 0 and shot.stat().st_size > 10_000, taken.stderr[-2000:]


async def _break_the_copy(m: Mirrored) -> tuple[int, int]:
    """Lose a record in the middle of partition 0's copy (three records appended to the source, the copies
    of the first and third appended to the target: the mirror is stopped); append to partition 1 of the
    remote topic an altered copy of a source record; forge a checkpoint that translates upstream 10 to 15
    (true position 10). Returns the source offset of the lost record and the offset of the altered one.
    (Deleting the target's first records would not do: that is what the target's retention does, which
    the audit reports as unverifiable, not as a finding.)"""
    source = AIOKafkaProducer(bootstrap_servers=m.a)
    producer = AIOKafkaProducer(bootstrap_servers=m.b)
    await source.start()
    await producer.start()
    try:
        now_ms = int(time.time() * 1000)
        appended = [(f"late-{i}".encode(), f"v-{i}".encode(), now_ms + i) for i in range(3)]
        offsets = []
        for key, value, ts in appended:
            sent = await source.send_and_wait(m.topic, value, key=key, partition=0, timestamp_ms=ts)
            offsets.append(sent.offset)
        for key, value, ts in (appended[0], appended[2]):
            await producer.send_and_wait(m.remote, value, key=key, partition=0, timestamp_ms=ts)
        sent = await producer.send_and_wait(m.remote, b"altered", key=b"k1", partition=1)
        forged = Checkpoint(f"{m.prefix}-forged", m.remote, 0, 10, 15)
        await producer.send_and_wait(CHECKPOINTS_TOPIC, forged.record_value(), key=forged.record_key())
    finally:
        await producer.stop()
        await source.stop()
    return offsets[1], sent.offset


def test_the_flow_command_locates_a_lost_and_an_altered_record_and_a_forged_checkpoint(
    mirrored: Mirrored, tmp_path: Path
) -> None:
    """Last in the module: it breaks the mirrored data the other tests audit."""
    m = mirrored
    lost_offset, altered_offset = asyncio.run(_break_the_copy(m))
    out = tmp_path / "report"
    config = _mm2_properties(m, tmp_path)
    code, stdout, stderr = _flow(["--config", str(config), "--flow", "A->B", "--out", str(out)])
    assert code == 1, stdout + stderr[-2000:]
    assert stdout.startswith(
        "flow A->B: FINDINGS: 1 missing records; 1 altered or foreign records on the target; "
        "1 checkpoints past the true position"
    ), stdout
    report = json.loads((out / "audit.json").read_text())
    totals = report["replication"]["totals"]
    assert (totals["missing"], totals["missing_tail"], totals["mismatches"]) == (1, 0, 1)
    located = {
        (s["kind"], s["cluster"], s["topic"], s["partition"], s["offset"])
        for s in report["replication"]["samples"]
    }
    assert located == {
        ("missing", "source", m.topic, 0, lost_offset),
        ("mismatch", "target", m.remote, 1, altered_offset),
    }
    kinds = {(b["partition"], b["kind"]): b["count"] for b in report["replication"]["offset_buckets"]}
    assert kinds == {(0, "missing"): 1, (1, "mismatch"): 1}
    translation = report["translation"]
    assert translation["violations"] == 1 and translation["syncs"]["violation"] == 0
    (violation,) = translation["violation_samples"]
    assert (violation["group"], violation["partition"], violation["true_position"], violation["skipped"]) == (
        f"{m.prefix}-forged",
        0,
        10,
        5,
    )
    assert sorted(report["groups"]) == sorted([m.group, f"{m.prefix}-forged"])
    html = (out / "audit.html").read_text()
    assert 'data-plot="offending-offsets"' in html and "FINDINGS" in html
    # The report opens in a browser and shows its plot of the offending offsets (screenshot kept).
    profile = tmp_path / "chromium-profile"
    dom = headless((out / "audit.html").as_uri(), profile, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-plot="offending-offsets"' in dom.stdout and "<svg" in dom.stdout
    assert "flow A-&gt;B: FINDINGS" in dom.stdout
    shot = ARTIFACTS / "audit-findings.png"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    taken = headless(
        (out / "audit.html").as_uri(), profile, f"--screenshot={shot}", "--window-size=1200,1600"
    )
    assert taken.returncode == 0 and shot.stat().st_size > 10_000, taken.stderr[-2000:]
