"""A worker started with ``--log-format json`` writes only JSON lines, and the lines about a connector
and its task name them (Java's connector context), through a connector's whole life on real Kafka."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import FAST_GROUP, fleet, running_tasks, verifiable, wait_for

pytestmark = pytest.mark.kafka


def test_json_lines_name_the_connector_and_task_they_are_about(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    worker = PyconnectWorker(
        cluster_a.bootstrap_servers,
        tmp_path / "py-0",
        group_id=unique("logfmt"),
        extra=dict(FAST_GROUP),
        die_with_parent=True,
        log_format="json",
    )
    with fleet([worker]):
        code, body = worker.rest("POST", "/connectors", {"name": "v", "config": verifiable(unique("out"), 1)})
        assert code == 201, body
        wait_for("the task RUNNING", lambda: running_tasks(worker, "v", 1), 60)
        assert worker.rest("DELETE", "/connectors/v")[0] == 204
        wait_for("the connector gone", lambda: worker.rest("GET", "/connectors")[1] == [], 30)
    lines = [line for line in worker.log_file.read_text(errors="replace").splitlines() if line.strip()]
    parsed = [json.loads(line) for line in lines]  # every line is one JSON object
    assert all({"time", "level", "logger", "msg"} <= entry.keys() for entry in parsed)
    task_lines = [e for e in parsed if e.get("connector") == "v" and e.get("task") == 0]
    connector_lines = [e for e in parsed if e.get("connector") == "v" and "task" not in e]
    assert any("Started VerifiableSourceTask" in e["msg"] for e in task_lines), task_lines[:5]
    assert connector_lines, [e["msg"] for e in parsed][-30:]
    untagged_task_lines = [
        e for e in parsed if "VerifiableSourceTask" in e["msg"] and e.get("connector") != "v"
    ]
    assert not untagged_task_lines, untagged_task_lines
    print(f"\n{len(parsed)} JSON lines, {len(task_lines)} name task v-0, {len(connector_lines)} connector v")
