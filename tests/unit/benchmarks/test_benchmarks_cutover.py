"""The cutover scenario's summary and report: percentiles, totals, the targets, no Java comparison."""

from __future__ import annotations

from typing import Any

from benchmarks import cutover


def _run(name: str, pause: float, lost: int = 0, duplicates: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "run": name,
        "quiet_s": 1.0,
        "kill_after": None,
        "kills": [],
        "resumes": 0,
        "rate_on_a": 5000.0,
        "pause_s": pause,
        "fenced_to_promoted_s": pause - 1,
        "promoted": True,
        "lost": lost,
        "duplicates": duplicates,
        "copy_lost": 0,
        "copy_duplicates": 0,
        "load_1m": 1.5,
        "error": None,
        **extra,
    }


def test_the_summary_gives_percentiles_totals_and_whether_the_targets_are_met() -> None:
    runs = [_run(f"r{i}", p) for i, p in enumerate([3.0, 4.0, 3.5, 4.5, 2.5])]
    runs[1].update(kill_after="fenced", kills=["fenced"], resumes=1)
    summary = cutover.summarize(runs)
    assert summary["pause_s"] == {"p50": 3.5, "p99": 4.48, "max": 4.5}
    assert summary["fenced_to_promoted_s"]["p50"] == 2.5
    assert (summary["lost"], summary["duplicates"], summary["kills"], summary["resumes"]) == (0, 0, 1, 1)
    assert summary["all_promoted"] and summary["goal_met"]


def test_a_loss_a_duplicate_a_slow_pause_or_a_failed_run_misses_the_targets() -> None:
    assert not cutover.summarize([_run("a", 2.0, lost=1)])["goal_met"]
    assert not cutover.summarize([_run("a", 2.0, duplicates=3)])["goal_met"]
    assert not cutover.summarize([_run("a", 2.0), _run("b", 5.5)])["goal_met"]
    failed = cutover.summarize([_run("a", 2.0), _run("b", 2.0, promoted=False, error="exit 9")])
    assert not failed["all_promoted"] and not failed["goal_met"]
    assert not cutover.summarize([])["goal_met"]


def test_the_report_has_a_row_per_run_a_summary_per_setting_and_says_there_is_no_java_cutover() -> None:
    runs = [_run("r0", 3.0), _run("r1", 4.0, kill_after="fenced", kills=["quiet"], resumes=1)]
    metrics = {
        "rate": 5000,
        "groups": 10,
        "partitions": 4,
        "warmup": [_run("w0", 9.0)],
        "runs": runs,
        "by_quiet": {"1": cutover.summarize(runs)},
        "all": cutover.summarize(runs),
    }
    text = "\n".join(cutover.markdown(metrics))
    assert "| r1 | 1 | 5,000 | quiet | 1 | 4.00 | 3.00 | 0 | 0 | 0 / 0 | 1.50 |  |" in text
    assert "| w0 (warm-up, not counted) | 1 | 5,000 | - | 0 | 9.00 |" in text
    assert "| 1 | 2 | 3.50 | 3.99 | 4.00 |" in text
    assert "no cutover command" in text and cutover.NO_JAVA in cutover.DESCRIPTION
