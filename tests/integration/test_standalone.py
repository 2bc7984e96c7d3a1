"""``pyconnect standalone`` on real Kafka: connectors from the command line, the REST API, offsets in a
file that survive a restart (VerifiableSource continues from its committed seqno: no gaps)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.kafka import render_properties
from pyconnect.testing.standalone_process import StandaloneWorker
from tests.integration.fleet import gaps_and_duplicates, read_seqnos_sync, running_tasks, verifiable, wait_for

pytestmark = pytest.mark.kafka


def committed(worker: StandaloneWorker) -> dict[int, int]:
    """Task id -> committed seqno, from ``GET /connectors/verif/offsets``."""
    code, body = worker.rest("GET", "/connectors/verif/offsets")
    assert code == 200, body
    return {o["partition"]["id"]: o["offset"]["seqno"] for o in body["offsets"]}


def stored(worker: StandaloneWorker) -> dict[int, int]:
    """Task id -> seqno, from the offsets file."""
    doc = json.loads(worker.offsets_file.read_text(encoding="utf-8"))
    assert doc["format"] == "pyconnect-offsets", doc
    out = {}
    for entry in doc["offsets"]:
        connector, partition = json.loads(entry["key"])
        assert connector == "verif"
        out[partition["id"]] = json.loads(entry["value"])["seqno"]
    return out


def test_standalone_runs_connectors_and_resumes_from_the_offsets_file(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    topic = unique("standalone")
    worker = StandaloneWorker(
        cluster_a.bootstrap_servers,
        tmp_path / "standalone",
        extra={"offset.flush.interval.ms": 500},
        connectors={"verif": verifiable(topic, 2, throughput=100)},
        die_with_parent=True,
    )
    try:
        worker.start()
        worker.wait_ready()
        wait_for("2 RUNNING tasks", lambda: running_tasks(worker, "verif", 2), 60)
        code, info = worker.rest("GET", "/connectors/verif")
        assert code == 200 and info["type"] == "source" and len(info["tasks"]) == 2, info
        wait_for("offsets committed for both tasks", lambda: len(committed(worker)) == 2, 30)
        worker.stop(timeout=30)
        assert worker.process is not None and worker.process.exit_code() == 0, worker.log_tail()
        first_run = stored(worker)
        assert sorted(first_run) == [0, 1], first_run

        worker.start()
        worker.wait_ready()
        wait_for("2 RUNNING tasks again", lambda: running_tasks(worker, "verif", 2), 60)
        assert all(committed(worker)[t] >= first_run[t] for t in first_run)
        wait_for(
            "both tasks committing past their first-run offsets",
            lambda: (c := committed(worker)) and all(c.get(t, -1) > first_run[t] + 50 for t in first_run),
            60,
        )

        code, _ = worker.rest("PUT", "/connectors/verif/stop")
        assert code == 204

        def stopped() -> dict[str, Any] | None:
            body = worker.rest("GET", "/connectors/verif/status")[1]
            return body if body["connector"]["state"] == "STOPPED" and not body["tasks"] else None

        wait_for("STOPPED without tasks", stopped, 30)
        final = committed(worker)
        code, message = worker.rest(
            "PATCH",
            "/connectors/verif/offsets",
            {"offsets": [{"partition": {"id": 0}, "offset": {"seqno": 5}}]},
        )
        assert code == 200, message
        assert committed(worker)[0] == 5
    finally:
        worker.stop(timeout=30)
    assert stored(worker)[0] == 5

    seqnos = read_seqnos_sync(cluster_a.bootstrap_servers, topic)
    assert sorted(seqnos) == [0, 1], seqnos.keys()
    for task, values in seqnos.items():
        gaps, duplicates = gaps_and_duplicates(values)
        assert min(values) == 0 and max(values) >= final[task], (task, min(values), max(values), final[task])
        assert gaps == 0, f"task {task}: {gaps} seqno(s) missing across the restart"
        assert duplicates == 0, f"task {task}: {duplicates} duplicate(s) after a graceful restart"


def test_a_refused_command_line_connector_stops_the_worker_with_exit_code_3(
    cluster_a: ClusterHandle, tmp_path: Path
) -> None:
    worker = StandaloneWorker(cluster_a.bootstrap_servers, tmp_path / "refused")
    worker.work_dir.mkdir(parents=True)
    worker.config_file.write_text(render_properties(worker.properties()))
    connector = tmp_path / "bad.json"
    connector.write_text(json.dumps({"name": "bad", "config": {"connector.class": "NoSuchConnector"}}))
    result = subprocess.run(
        [sys.executable, "-m", "pyconnect.cli", "standalone", str(worker.config_file), str(connector)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 3, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("pyconnect: Failed to create connector bad from") and "NoSuchConnector" in last, (
        last
    )
