"""A connector or task that blocks never freezes the worker (Java's ``BlockingConnectorTest``, ported).

One ``pyconnect distributed`` worker per case on a real Kafka cluster, with the test plugins
(``tests.plugins``) on its path. The blocking connector's plain methods block on a thread at the point
its ``block`` config names (Java's names). While it blocks:

- ``GET /connectors`` answers at once, ``/health`` says 200 (the herder's loop answers), and the worker
  is still its group's leader after more than a session timeout (its heartbeats went on);
- a second, healthy connector (VerifiableSource) is created, runs and writes records;
- the blocked connector can be restarted and deleted (delete answers; it is gone from the list);
- the worker stops on SIGTERM within a bound although a plugin thread is still blocked, and a worker
  restarted with a connector that blocks in ``start`` or ``stop`` runs it and the healthy one again.

Each case releases the blocked threads when it ends (``<block.dir>/release``).
"""

from __future__ import annotations

import asyncio
import re
import signal
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.connect_worker import group_leader_url, http_json
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import FAST_GROUP, running_tasks, status, verifiable, wait_for
from tests.plugins import PYTHON_PATH
from tests.plugins.blocking import BLOCK_CONFIG, BLOCK_DIR_CONFIG, BLOCKED_FILE, RELEASE_FILE

pytestmark = pytest.mark.kafka

BLOCKING = "blocking-connector"
NORMAL = "normal-connector"
SESSION_TIMEOUT_S = FAST_GROUP["session.timeout.ms"] / 1000
STOP_BOUND_S = 25.0
"""How long the worker may take to stop on SIGTERM with a plugin thread still blocked."""
NORMAL_RECORDS = 100
"""Java's ``NUM_RECORDS_PRODUCED``: what the healthy connector must write while the other blocks."""
QUICK_S = 3.0
"""How long a REST read may take while a plugin blocks (a frozen loop would not answer at all)."""


def blocking_config(point: str, block_dir: Path) -> dict[str, str]:
    return {
        "connector.class": "org.apache.kafka.connect.integration.BlockingConnector",
        "tasks.max": "1",
        BLOCK_CONFIG: point,
        BLOCK_DIR_CONFIG: str(block_dir),
    }


def times_blocked(block_dir: Path, point: str) -> int:
    try:
        return (block_dir / BLOCKED_FILE).read_text().splitlines().count(point)
    except FileNotFoundError:
        return 0


def quick(worker: PyconnectWorker, method: str, path: str, body: object | None = None) -> tuple[int, Any]:
    started = time.monotonic()
    answer = worker.rest(method, path, body, timeout=QUICK_S)
    assert time.monotonic() - started < QUICK_S, f"{method} {path} took too long"
    return answer


def assert_worker_responsive(
    worker: PyconnectWorker, bootstrap: str, group: str, blocked_since: float
) -> None:
    """REST reads answer at once and, past a session timeout since the block began, the worker still
    leads its group (its heartbeats were not starved)."""
    code, names = quick(worker, "GET", "/connectors")
    assert code == 200 and isinstance(names, list), (code, names)
    assert quick(worker, "GET", "/health")[0] == 200
    time.sleep(max(0.0, blocked_since + SESSION_TIMEOUT_S + 1.0 - time.monotonic()))
    assert group_leader_url(bootstrap, group) == worker.rest_url
    assert quick(worker, "GET", "/health")[0] == 200


def run_normal_connector(worker: PyconnectWorker, bootstrap: str, topic: str) -> None:
    """Java's ``verifyNormalConnector``: the healthy connector runs and its task writes records."""
    # A write waits for the herder's loop, which waits (as Java's) up to 5 s for a stop or task_configs.
    code, body = worker.rest(
        "POST", "/connectors", {"name": NORMAL, "config": verifiable(topic, 1)}, timeout=30
    )
    assert code == 201, (code, body)
    wait_for("the healthy connector running", lambda: running_tasks(worker, NORMAL, 1), 60)
    assert asyncio.run(records_written(bootstrap, topic, NORMAL_RECORDS, 60.0)) >= NORMAL_RECORDS


async def records_written(bootstrap: str, topic: str, at_least: int, timeout: float) -> int:
    """How many records ``topic`` holds, read from the start until ``at_least`` or ``timeout`` seconds
    (the healthy connector never stops writing: no reading "until idle")."""
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    await consumer.start()
    seen = 0
    deadline = time.monotonic() + timeout
    try:
        while seen < at_least and time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=500)
            seen += sum(len(records) for records in batches.values())
    finally:
        await consumer.stop()
    return seen


def abandoned_threads(worker: PyconnectWorker) -> float:
    """``pyconnect_plugin_threads_abandoned`` from the worker's ``GET /metrics``."""
    with urllib.request.urlopen(worker.rest_url.rstrip("/") + "/metrics", timeout=QUICK_S) as response:
        text = response.read().decode()
    found = re.search(r"^pyconnect_plugin_threads_abandoned (\S+)$", text, re.MULTILINE)
    assert found is not None, "no pyconnect_plugin_threads_abandoned series"
    return float(found.group(1))


def post_aside(worker: PyconnectWorker, config: dict[str, str]) -> None:
    """A create whose answer the test does not wait for (the client gives up after 10 s)."""
    try:
        http_json(
            "POST",
            worker.rest_url.rstrip("/") + "/connectors",
            {"name": BLOCKING, "config": config},
            timeout=10,
        )
    except OSError:
        pass


def connector_state(worker: PyconnectWorker, name: str) -> str | None:
    body = status(worker, name)
    return None if body is None else str(body["connector"]["state"])


def stop_worker_within_bound(worker: PyconnectWorker) -> None:
    started = time.monotonic()
    worker.stop(timeout=STOP_BOUND_S)
    elapsed = time.monotonic() - started
    assert worker.process is not None
    code = worker.process.exit_code()
    assert code is not None and code != -signal.SIGKILL, f"worker killed after {elapsed:.1f} s (exit {code})"
    assert elapsed < STOP_BOUND_S, elapsed


def delete_and_verify_gone(worker: PyconnectWorker) -> None:
    code, body = worker.rest("DELETE", f"/connectors/{BLOCKING}", timeout=30)
    assert code == 204, (code, body)
    wait_for("the blocked connector gone", lambda: BLOCKING not in quick(worker, "GET", "/connectors")[1], 30)


CASES = [
    pytest.param("Connector::validate", marks=pytest.mark.long),
    "Connector::start",
    pytest.param("Connector::taskConfigs", marks=pytest.mark.long),
    pytest.param("Connector::stop", marks=pytest.mark.long),
    pytest.param("Task::start", marks=pytest.mark.long),
    "SourceTask::poll",
    "Task::stop",
]
"""Each point blocks in its own run (~9 s); make test keeps one each of a connector's start, a task's
poll and a task's stop, make chaos all seven."""


def blocking_worker(bootstrap: str, tmp_path: Path, group: str) -> PyconnectWorker:
    return PyconnectWorker(
        bootstrap,
        tmp_path / "worker",
        group_id=group,
        extra=dict(FAST_GROUP),
        die_with_parent=True,
        python_path=PYTHON_PATH,
    )


@pytest.mark.parametrize(
    "point", ["Connector::start", pytest.param("Connector::stop", marks=pytest.mark.long)]
)
def test_a_worker_restarts_with_a_blocking_connector(
    point: str, cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    """Java's ``testWorkerRestartWithBlockInConnectorStart``/``...Stop``: the worker stops (on SIGTERM,
    within a bound) while the connector blocks in ``start``, or blocks in ``stop`` during the shutdown;
    restarted, it runs the connector again (blocking again in ``start``) and the healthy connector."""
    bootstrap = cluster_a.bootstrap_servers
    block_dir = tmp_path / "block"
    block_dir.mkdir()
    worker = blocking_worker(bootstrap, tmp_path, unique("restart"))
    topic = unique("normal")
    try:
        worker.start()
        worker.wait_ready()
        config = blocking_config(point, block_dir)
        code, body = quick(worker, "POST", "/connectors", {"name": BLOCKING, "config": config})
        assert code == 201, (code, body)
        if point == "Connector::start":
            wait_for("a block in start", lambda: times_blocked(block_dir, point) == 1, 60)
        else:
            wait_for("the blocking connector running", lambda: running_tasks(worker, BLOCKING, 1), 60)
        run_normal_connector(worker, bootstrap, topic)

        stop_worker_within_bound(worker)
        if point == "Connector::stop":
            assert times_blocked(block_dir, point) == 1  # its stop blocked during the shutdown
        worker.start()
        worker.wait_ready()
        if point == "Connector::start":
            wait_for("a block in start again", lambda: times_blocked(block_dir, point) == 2, 60)
        else:
            wait_for("the blocking connector running again", lambda: running_tasks(worker, BLOCKING, 1), 60)
        wait_for("the healthy connector running again", lambda: running_tasks(worker, NORMAL, 1), 60)
        assert asyncio.run(records_written(bootstrap, topic, 2 * NORMAL_RECORDS, 60.0)) >= 2 * NORMAL_RECORDS
        stop_worker_within_bound(worker)
    finally:
        worker.stop(timeout=STOP_BOUND_S)
        (block_dir / RELEASE_FILE).touch()


@pytest.mark.parametrize("point", CASES)
def test_a_blocking_plugin_never_freezes_the_worker(
    point: str, cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    group = unique("blocking")
    block_dir = tmp_path / "block"
    block_dir.mkdir()
    worker = blocking_worker(bootstrap, tmp_path, group)
    config = blocking_config(point, block_dir)
    creating: threading.Thread | None = None
    try:
        worker.start()
        worker.wait_ready()
        if point == "Connector::validate":
            # The create waits for the validation (up to Java's 90 s REST timeout): send it aside.
            creating = threading.Thread(target=post_aside, args=(worker, config), daemon=True)
            creating.start()
        else:
            code, body = quick(worker, "POST", "/connectors", {"name": BLOCKING, "config": config})
            assert code == 201, (code, body)
        if point in ("Connector::stop", "Task::stop"):
            wait_for("the connector and its task running", lambda: running_tasks(worker, BLOCKING, 1), 60)
            delete_and_verify_gone(worker)
        wait_for(f"a block in {point}", lambda: times_blocked(block_dir, point) > 0, 60)
        blocked_since = time.monotonic()

        run_normal_connector(worker, bootstrap, unique("normal"))
        assert_worker_responsive(worker, bootstrap, group, blocked_since)

        if point == "Connector::validate":
            assert BLOCKING not in quick(worker, "GET", "/connectors")[1]
        if point == "Connector::start":
            assert connector_state(worker, BLOCKING) in (
                None,
                "UNASSIGNED",
            )  # as in Java: nothing reported yet
            code, body = worker.rest("POST", f"/connectors/{BLOCKING}/restart", timeout=30)
            assert code in (200, 202, 204), (code, body)
            wait_for(
                "the restarted connector blocking again", lambda: times_blocked(block_dir, point) == 2, 30
            )
        if point == "Connector::taskConfigs":
            failed = wait_for(
                "the connector failed",
                lambda: status(worker, BLOCKING) if connector_state(worker, BLOCKING) == "FAILED" else None,
                30,
            )
            assert "task_configs()" in failed["connector"]["trace"].splitlines()[0], failed
        if point not in ("Connector::validate", "Connector::stop", "Task::stop"):
            delete_and_verify_gone(worker)
        assert running_tasks(worker, NORMAL, 1)
        stop_worker_within_bound(worker)
    finally:
        worker.stop(timeout=STOP_BOUND_S)
        (block_dir / RELEASE_FILE).touch()
        if creating is not None:
            creating.join(15)
