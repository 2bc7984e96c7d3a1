"""Schemathesis against one live ``pyconnect distributed`` worker: the served OpenAPI document is honest.

Generated requests (valid and invalid) for every operation of ``GET /openapi.json`` must never get
a 5xx, and every answer must match the documented statuses, content type and schemas. The worker
runs a VerifiableSource connector meanwhile and must still serve it afterwards.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import fleet, python_workers, running_tasks, verifiable, wait_for

pytestmark = pytest.mark.kafka

CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
BUDGET_S = 20


def schemathesis_cli() -> list[str]:
    script = Path(sys.executable).with_name("st")
    if script.exists():
        return [str(script)]
    found = shutil.which("st")
    assert found, "schemathesis is part of the test extra: pip install -e '.[test]'"
    return [found]


def test_generated_requests_never_get_a_5xx_and_match_the_document(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    (worker,) = python_workers(cluster_a.bootstrap_servers, tmp_path, unique("openapi"), 1)
    with fleet([worker]):
        code, _ = worker.rest("POST", "/connectors", {"name": "vs", "config": verifiable(unique("out"), 1)})
        assert code == 201
        wait_for("the connector's task RUNNING", lambda: running_tasks(worker, "vs", 1), 60)
        code, doc = worker.rest("GET", "/openapi.json")
        assert code == 200 and len(doc["paths"]) >= 20

        report = tmp_path / "schemathesis.json"
        run = subprocess.run(
            [
                *schemathesis_cli(),
                "run",
                worker.rest_url + "openapi.json",
                "--checks",
                CHECKS,
                "--phases",
                "coverage,fuzzing",
                "--max-examples",
                "8",
                "--max-time",
                str(BUDGET_S),
                # One worker thread: CPython 3.11's ast module is not thread-safe, and Hypothesis
                # parses strategy lambdas with it, so parallel generation can fail inside the
                # generator ("AST constructor recursion depth mismatch") before a request is sent.
                "--workers",
                "1",
                "--seed",
                "20261122",
                "--generation-database",
                "none",
                "--no-color",
                "--report",
                "ndjson",
                "--report-ndjson-path",
                str(report),
            ],
            capture_output=True,
            text=True,
            timeout=BUDGET_S + 60,
            cwd=tmp_path,
            check=False,
        )
        output = run.stdout + run.stderr
        assert run.returncode == 0, output[-6000:]
        assert "generated" in output and "passed" in output, output[-2000:]
        events = [json.loads(line) for line in report.read_text().splitlines() if line.strip()]
        assert len(events) > 10, "schemathesis ran test cases"

        assert worker.running, "the worker survived the run"
        assert worker.rest("GET", "/")[0] == 200
        code, names = worker.rest("GET", "/connectors")
        assert code == 200 and "vs" in names
