"""The source-reachability rule of MirrorSourceTask (connectors.mirror.reachability), pure."""

from __future__ import annotations

import pytest

from connectors.mirror.reachability import (
    DEFAULT_UNREACHABLE_AFTER_MS,
    REPEAT_S,
    UNREACHABLE_AFTER_CONFIG,
    Reachability,
    unreachable_after_error,
    unreachable_after_ms,
)


def test_an_unreachable_source_is_reported_warned_boundedly_and_cleared() -> None:
    state = Reachability("source cluster A (127.0.0.1:9)", "A->B|m-0|replication-consumer", 30_000)
    assert state.observe(0.0, []) is None
    first = state.observe(1.0, [("t", 1), ("t", 0)])
    assert first is not None and first.warn and first.log == f"Unreachable: {first.problem}"
    assert first.problem == (
        "source cluster A (127.0.0.1:9) has answered no fetch of client "
        "'A->B|m-0|replication-consumer' for 30 s or more (partitions t-0, t-1); the task keeps retrying"
    )
    assert state.observe(2.0, [("t", 0), ("t", 1)]) is None  # the same condition: nothing new
    fewer = state.observe(3.0, [("t", 0)])
    assert (
        fewer is not None and fewer.log is None and fewer.problem is not None and "t-1" not in fewer.problem
    )
    again = state.observe(1.0 + REPEAT_S, [("t", 0)])
    assert again is not None and again.log is not None and again.warn  # repeated at a bounded rate
    healed = state.observe(2.0 + REPEAT_S, [])
    assert healed is not None and healed.problem is None and not healed.warn
    assert (
        healed.log
        == "source cluster A (127.0.0.1:9) answers the fetches of client 'A->B|m-0|replication-consumer' again"
    )
    assert state.observe(3.0 + REPEAT_S, []) is None and state.problem is None


def test_many_late_partitions_are_named_up_to_five() -> None:
    report = Reachability("c", "x", 2_000).observe(0.0, [("t", p) for p in range(8)])
    assert report is not None and report.problem is not None
    assert (
        "(partitions t-0, t-1, t-2, t-3, t-4 and 3 more)" in report.problem
        and "for 2 s or more" in report.problem
    )


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (None, None),
        ("5000", None),
        ("x", f"Invalid value x for configuration {UNREACHABLE_AFTER_CONFIG}: Not a number of type LONG"),
        ("10", f"Invalid value 10 for configuration {UNREACHABLE_AFTER_CONFIG}: Value must be at least 1000"),
    ],
)
def test_the_threshold_setting_is_checked(value: str | None, error: str | None) -> None:
    assert unreachable_after_error(value) == error
    if error is None:
        assert unreachable_after_ms(value) == (DEFAULT_UNREACHABLE_AFTER_MS if value is None else int(value))
    else:
        with pytest.raises(ValueError, match="Invalid value"):
            unreachable_after_ms(value)


@pytest.mark.parametrize(
    ("target_latency", "expected"),
    [(None, DEFAULT_UNREACHABLE_AFTER_MS), (30_000, 15_000), (1_000, 1_000), (600_000, 30_000)],
)
def test_without_a_setting_the_bound_is_half_the_target_latency(
    target_latency: int | None, expected: int
) -> None:
    assert unreachable_after_ms(None, target_latency) == expected
    assert unreachable_after_ms("4000", target_latency) == 4000
