"""Java 4.3.1's ``RetryWithToleranceOperator`` scenarios (tests/golden/errors) replayed through our core.

Same calls, same backoff waits on the same manual clock, same result or failure message, same reports
and the same ``task-error-metrics`` values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pyconnect.errors import ConnectError, DataError, RetriableError
from pyconnect.metrics.connect import ConnectMetrics
from pyconnect.metrics.registry import MetricsHub
from pyconnect.metrics.task_errors import TASK_ERROR_GROUP, TaskErrorMetrics
from pyconnect.worker.retry_with_tolerance import SKIPPED, ProcessingFailure, RetryWithTolerance

SCENARIOS = json.loads((Path(__file__).parent / "errors" / "scenarios.json").read_text())
START_MS = 1_000_000


def task_error_values(hub: MetricsHub) -> dict[str, Any]:
    values = {r.name.name: r.value for r in hub.read() if r.name.group == TASK_ERROR_GROUP}
    values["last-error-timestamp"] = bool(values["last-error-timestamp"])
    return values


@pytest.mark.parametrize("scenario", SCENARIOS["scenarios"], ids=lambda s: s["name"])
def test_scenario_matches_java(scenario: dict[str, Any]) -> None:
    assert SCENARIOS["kafka"] == "4.3.1"
    hub = MetricsHub()
    metrics = TaskErrorMetrics(ConnectMetrics("w", hub), "c", 0)
    reported: list[ProcessingFailure] = []
    core = RetryWithTolerance(
        scenario["retry_timeout_ms"],
        scenario["retry_delay_max_ms"],
        scenario["tolerance"] == "all",
        metrics=metrics,
        report=reported.append,
    )
    now = [START_MS]
    waits: list[int] = []

    def sleep(ms: int) -> bool:
        waits.append(ms)
        now[0] += ms
        return True

    plan = list(scenario["errors"])
    calls = 0

    def operation() -> str:
        nonlocal calls
        calls += 1
        if plan:
            kind = plan.pop(0)
            raise RetriableError(f"retriable {calls}") if kind == "retriable" else DataError(f"other {calls}")
        return "ok"

    result: Any
    raised: ConnectError | None = None
    try:
        if scenario["execute_failed"]:
            core.execute_failed("record", scenario["stage"], "Object", DataError("failed outside"), now[0])
            result = "reported"
        else:
            result = core.execute(
                operation, "record", scenario["stage"], "Object", clock_ms=lambda: now[0], sleep=sleep
            )
    except ConnectError as exc:
        raised, result = exc, None
    assert (result if result is not SKIPPED else None) == scenario["result"]
    assert (str(raised) if raised is not None else None) == scenario["raised"]
    if raised is not None:
        java_cause = {"RetriableError": "RetriableException", "DataError": "DataException"}
        assert java_cause[type(raised.__cause__).__name__] == scenario["raised_cause"]
    assert calls == scenario["calls"]
    assert waits == scenario["waits_ms"]
    assert now[0] - START_MS == scenario["elapsed_ms"]
    assert [
        {
            "stage": f.stage,
            "attempt": f.attempts,
            "error": {"RetriableError": "RetriableException", "DataError": "DataException"}[
                type(f.error).__name__
            ],
        }
        for f in reported
    ] == scenario["reported"]
    assert task_error_values(hub) == scenario["metrics"]
