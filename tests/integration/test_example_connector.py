"""The example package of docs/writing-a-connector.md, installed as the guide says and run on a real worker.

The package is built and installed with the project environment's own pip and setuptools
(``pip install --no-deps --no-build-isolation --no-index --target DIR``: nothing is downloaded) into a
directory that goes on the worker's ``PYTHONPATH``; the worker finds both connectors through their
entry points. The example's own unit tests run against that installed copy (``make test`` collects
only ``tests/``, so they run here, once). On cluster A: ``/connector-plugins`` lists both with their
type and version, bad configs get their errors from ``/config/validate`` and a 400 at creation, the
source (created by its full name) writes its numbers, resumes after its worker is stopped and
started again from the committed offset (every number once: no restart at 0), and the sink (created
by its alias) writes every record to its file.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import FAST_GROUP, fleet, read_topic, wait_for

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pyconnect-example-connector"
SOURCE = "pyconnect_example.sequence.SequenceSourceConnector"
SINK = "pyconnect_example.jsonlines.JsonLinesSinkConnector"
SINK_ALIAS = "JsonLinesSink"
VERSION = "0.1.0"
STRINGS = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
}
COUNT = 400  # 5 numbers every 100 ms: about 8 s of numbers, so the stop lands mid-sequence


def _setuptools_builds_wheels() -> bool:
    try:
        major, minor = (int(part) for part in version("setuptools").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (77, 0)


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a copy of the example's source tree, the directory it is installed into)."""
    if not _setuptools_builds_wheels():
        pytest.fail(
            "building the example offline needs setuptools>=77 in this environment: "
            "pip install 'setuptools>=77' (the project's test extra has it)",
            pytrace=False,
        )
    base = tmp_path_factory.mktemp("example-connector")
    source, target = base / "source", base / "site"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    command += ["--no-index", "--target", str(target), str(source)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (target / "pyconnect_example" / "sequence.py").is_file()
    return source, target


def test_the_installed_example_passes_its_own_unit_tests(example: tuple[Path, Path]) -> None:
    source, target = example
    inherited = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), *([inherited] if inherited else [])])}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    done = subprocess.run(
        command, cwd=source, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout and "failed" not in done.stdout, done.stdout


@pytest.fixture(scope="module")
def worker(
    example: tuple[Path, Path], cluster_a: ClusterHandle, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PyconnectWorker]:
    started = PyconnectWorker(
        cluster_a.bootstrap_servers,
        tmp_path_factory.mktemp("example-worker"),
        group_id=f"example-{uuid.uuid4().hex[:8]}",
        extra={**FAST_GROUP, "scheduled.rebalance.max.delay.ms": 0},
        die_with_parent=True,
        python_path=(str(example[1]),),
    )
    with fleet([started]):
        yield started


def rest(worker: PyconnectWorker, method: str, path: str, body: Any = None, expect: int = 200) -> Any:
    code, answer = worker.rest(method, path, body)
    assert code == expect, (method, path, code, answer)
    return answer


def committed_next(worker: PyconnectWorker, name: str) -> int | None:
    """The source's committed ``next`` (``None`` before its first commit)."""
    code, body = worker.rest("GET", f"/connectors/{name}/offsets")
    if code != 200 or not body["offsets"]:
        return None
    return int(body["offsets"][0]["offset"]["next"])


def task_running(worker: PyconnectWorker, name: str) -> bool:
    code, body = worker.rest("GET", f"/connectors/{name}/status")
    return code == 200 and [t["state"] for t in body["tasks"]] == ["RUNNING"]


@pytest.mark.kafka
def test_connector_plugins_lists_both_example_classes(worker: PyconnectWorker) -> None:
    listing = rest(worker, "GET", "/connector-plugins?connectorsOnly=false")
    assert {"class": SOURCE, "type": "source", "version": VERSION} in listing
    assert {"class": SINK, "type": "sink", "version": VERSION} in listing
    assert [p["class"] for p in rest(worker, "GET", "/connector-plugins")].count(SINK) == 1
    keys = [k["name"] for k in rest(worker, "GET", f"/connector-plugins/{SOURCE}/config")]
    assert keys[:4] == ["topic", "batch.size", "interval.ms", "count"]


@pytest.mark.kafka
def test_bad_configs_get_clear_errors(
    worker: PyconnectWorker, unique: Callable[[str], str], tmp_path: Path
) -> None:
    bad = {"connector.class": SOURCE, "tasks.max": "1", "topic": "no/slash", "batch.size": "0"}
    answer = rest(worker, "PUT", f"/connector-plugins/{SOURCE}/config/validate", {**bad, "name": "numbers"})
    errors = {c["value"]["name"]: c["value"]["errors"] for c in answer["configs"] if c["value"]["errors"]}
    assert answer["error_count"] == 2, errors
    assert errors["batch.size"] == ["Invalid value 0 for configuration batch.size: Value must be at least 1"]
    assert errors["topic"][0].startswith("Invalid value no/slash for configuration topic: a topic name is")
    refused = rest(worker, "POST", "/connectors", {"name": unique("bad"), "config": bad}, expect=400)
    assert refused["error_code"] == 400
    assert "contains the following 2 error(s)" in refused["message"]

    missing = str(tmp_path / "nowhere" / "out.jsonl")
    sink = {"connector.class": SINK_ALIAS, "name": "to-file", "topics": "t", "file": missing}
    answer = rest(worker, "PUT", f"/connector-plugins/{SINK_ALIAS}/config/validate", sink)
    assert answer["error_count"] == 1
    file_errors = next(c["value"]["errors"] for c in answer["configs"] if c["value"]["name"] == "file")
    assert file_errors == [
        f"Invalid value {missing} for configuration file: the directory {Path(missing).parent} does not exist"
    ]


@pytest.mark.kafka
def test_source_resumes_after_a_worker_restart_and_the_sink_writes_every_record(
    worker: PyconnectWorker, cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    topic, source, sink = unique("numbers"), unique("sequence"), unique("jsonl")
    config = {
        "connector.class": SOURCE,
        "tasks.max": "1",
        "topic": topic,
        "batch.size": "5",
        "interval.ms": "100",
        "count": str(COUNT),
        **STRINGS,
    }
    created = rest(worker, "POST", "/connectors", {"name": source, "config": config}, expect=201)
    assert created["type"] == "source"
    before_stop = wait_for("a first committed offset", lambda: committed_next(worker, source), 30)
    assert before_stop < COUNT, "the sequence ended before the worker stopped: nothing left to resume"
    worker.stop(timeout=20)
    worker.start()
    worker.wait_ready()
    wait_for("the source task running again", lambda: task_running(worker, source), 30)
    wait_for("the whole sequence committed", lambda: committed_next(worker, source) == COUNT, 60)

    records = asyncio.run(read_topic(cluster_a.bootstrap_servers, topic, idle_reads=1))
    numbers = sorted(int(value) for _, _, _, value in records if value is not None)
    assert numbers == list(range(COUNT)), f"{len(numbers)} records, {len(set(numbers))} distinct"

    out = tmp_path / "out.jsonl"
    sink_config = {
        "connector.class": SINK_ALIAS,
        "tasks.max": "1",
        "topics": topic,
        "file": str(out),
        **STRINGS,
    }
    created = rest(worker, "POST", "/connectors", {"name": sink, "config": sink_config}, expect=201)
    assert created["type"] == "sink"

    def written() -> list[dict[str, Any]] | None:
        lines = out.read_text().splitlines() if out.exists() else []
        return [json.loads(line) for line in lines] if len(lines) >= COUNT else None

    lines = wait_for(f"{COUNT} lines in the sink's file", written, 60)
    assert sorted(int(line["value"]) for line in lines) == list(range(COUNT))
    assert {line["topic"] for line in lines} == {topic}
    rest(worker, "DELETE", f"/connectors/{sink}", expect=204)
    rest(worker, "DELETE", f"/connectors/{source}", expect=204)
