"""Status reports of a connector or task feed its metrics on their way to the herder."""

from __future__ import annotations

from pyconnect.protocol.internal_records import State
from pyconnect.worker.status import ObservedReporter, RecordingReporter


def test_first_running_is_a_successful_startup_and_a_failure_before_it_a_failed_one() -> None:
    for states, startups in (
        ([State.PAUSED, State.RUNNING, State.FAILED, State.RUNNING], [True]),
        ([State.FAILED, State.FAILED], [False]),
        ([State.UNASSIGNED], []),
    ):
        sink = RecordingReporter()
        seen: list[State] = []
        results: list[bool] = []
        reporter = ObservedReporter(sink.report, seen.append, results.append)
        for state in states:
            reporter.report("c", state, None, "1")
        assert seen == states
        assert results == startups
        assert sink.states("c") == states, "every report still reaches the herder"


def test_a_report_reaches_the_herder_even_when_the_metrics_fail() -> None:
    sink = RecordingReporter()

    def broken(state: State) -> None:
        raise RuntimeError("metrics")

    ObservedReporter(sink.report, broken, lambda ok: None).report("c", State.RUNNING)
    assert sink.states("c") == [State.RUNNING]
