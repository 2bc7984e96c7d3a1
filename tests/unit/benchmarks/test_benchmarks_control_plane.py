"""The control-plane scenario's client side: spreading writes, retries, what counts as done, readiness."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks import control_plane
from pyconnect.testing.worker_process import PyconnectWorker


def _workers(count: int = 3) -> list[PyconnectWorker]:
    return [PyconnectWorker("127.0.0.1:1", Path(f"w{i}"), port=9100 + i) for i in range(count)]


def test_writes_go_round_robin_with_at_most_the_given_number_in_flight() -> None:
    workers = _workers()
    seen: list[tuple[int, str]] = []
    lock = threading.Lock()
    in_flight = peak = 0

    def sender(worker: Any, method: str, path: str, body: Any) -> tuple[int, Any]:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
            seen.append((worker.port, body["name"]))
        time.sleep(0.005)
        with lock:
            in_flight -= 1
        return 201, {"name": body["name"]}

    requests = [("POST", "/connectors", {"name": control_plane.connector_name(i)}) for i in range(30)]
    phase = control_plane.run_writes(workers, requests, 4, time.monotonic() + 30, sender=sender)
    assert phase.requests == 30 and len(phase.latencies_ms) == 30
    assert phase.retries == 0 and phase.failures == []
    assert 1 < peak <= 4
    assert sorted(seen) == sorted((9100 + i % 3, f"cp-{i:05d}") for i in range(30))
    summary = phase.summary()
    assert summary["requests"] == 30 and summary["failures"] == 0 and summary["per_s"] is not None


def test_conflicts_and_server_errors_are_retried_and_counted() -> None:
    answers = {
        "a": [(409, {"message": "rebalance expected"}), (201, {})],
        "b": [(500, {"message": "Request timed out"}), (409, {"message": "Connector b already exists"})],
        "c": [(400, {"message": "bad config"})],
    }

    def sender(worker: Any, method: str, path: str, body: Any) -> tuple[int, Any]:
        return answers[body["name"]].pop(0)

    requests = [("POST", "/connectors", {"name": n}) for n in "abc"]
    phase = control_plane.run_writes(_workers(), requests, 2, time.monotonic() + 30, sender=sender)
    # a: done on the second attempt; b: its first attempt won, the retry says "already exists"; c: fails.
    assert phase.retries == 2
    assert len(phase.latencies_ms) == 2
    assert phase.failures == ["POST /connectors: HTTP 400: {'message': 'bad config'}"]
    with pytest.raises(RuntimeError, match="1 of 3 requests failed"):
        control_plane._check(phase, "create")


def test_what_counts_as_done() -> None:
    done = control_plane._done
    assert done("POST", 201, {}, 1) is True
    assert done("POST", 204, None, 1) is True
    assert done("POST", 409, {"message": "Connector x already exists"}, 1) is None  # a conflict at once
    assert done("POST", 409, {"message": "Connector x already exists"}, 2) is True
    assert done("DELETE", 404, {}, 1) is False
    assert done("DELETE", 404, {}, 3) is True
    assert done("POST", 503, {}, 1) is None
    assert done("POST", 400, {}, 1) is False


def test_a_write_still_conflicting_at_the_deadline_raises() -> None:
    def sender(worker: Any, method: str, path: str, body: Any) -> tuple[int, Any]:
        return 409, {"message": "rebalance"}

    with pytest.raises(TimeoutError, match="phase deadline"):
        control_plane.run_writes(
            _workers(), [("DELETE", "/connectors/x", None)], 1, time.monotonic() + 0.3, sender=sender
        )


def _status(connector: str, tasks: list[str]) -> dict[str, Any]:
    return {
        "status": {
            "connector": {"state": connector},
            "tasks": [{"id": i, "state": s} for i, s in enumerate(tasks)],
        }
    }


def test_all_running_needs_every_connector_and_its_one_task_running() -> None:
    names = {"a", "b"}
    assert control_plane.all_running(
        {"a": _status("RUNNING", ["RUNNING"]), "b": _status("RUNNING", ["RUNNING"])}, names
    )
    assert not control_plane.all_running({"a": _status("RUNNING", ["RUNNING"])}, names)
    assert not control_plane.all_running(
        {"a": _status("RUNNING", ["RUNNING"]), "b": _status("RUNNING", ["UNASSIGNED"])}, names
    )
    assert not control_plane.all_running(
        {"a": _status("RUNNING", []), "b": _status("RUNNING", ["RUNNING"])}, names
    )
    assert not control_plane.all_running(
        {"a": _status("RESTARTING", ["RUNNING"]), "b": _status("RUNNING", ["RUNNING"])}, names
    )
    assert not control_plane.all_running("not json", names)


def test_both_systems_get_the_same_low_rate_connector() -> None:
    config = control_plane.connector_config()
    assert config == {
        "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
        "tasks.max": "1",
        "topic": control_plane.CONTROL_TOPIC,
        "throughput": "1",
    }
