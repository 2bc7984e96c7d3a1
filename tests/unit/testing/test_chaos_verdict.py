"""The chaos verdict catches each broken promise in crafted data, and passes a faithful copy."""

from __future__ import annotations

from pyconnect.testing.chaos.verdict import (
    CheckpointRecord,
    Sample,
    Verdict,
    broken_promises,
    judge_checkpoints,
    judge_partition,
    percentile,
    recovery_times,
)


def copies(seqs: list[int], first_offset: int = 0) -> list[tuple[int, int]]:
    return [(first_offset + i, s) for i, s in enumerate(seqs)]


def verdict_of(source: list[int], target: list[int], *, eos: bool = False, **kw: object) -> Verdict:
    partition, _ = judge_partition("t", 0, source, copies(target))
    from pyconnect.testing.chaos.verdict import CheckpointVerdict

    fields: dict[str, object] = {
        "partitions": [partition],
        "checkpoints": CheckpointVerdict(),
        "recovery_s": {},
        "lag_bound": 100,
        "recovery_bound_s": 60.0,
        "rest_calls": 10,
        "rest_failures": 0,
        "rest_p99_ms": 5.0,
        "final_lag": 0,
        "final_all_running": True,
        "exactly_once": eos,
    }
    fields.update(kw)
    return Verdict(**fields)  # type: ignore[arg-type]


def test_a_faithful_copy_keeps_every_promise() -> None:
    v = verdict_of(list(range(10)), list(range(10)), eos=True)
    assert v.totals["lost"] == v.totals["duplicated"] == v.totals["out_of_order"] == 0
    assert broken_promises(v) == []


def test_a_loss_is_caught_with_its_sequence_numbers() -> None:
    v = verdict_of(list(range(10)), [0, 1, 2, 4, 5, 6, 7, 8, 9])
    assert v.partitions[0].lost == 1 and v.partitions[0].lost_sample == [3]
    assert any(b.startswith("at-least-once") for b in broken_promises(v))


def test_a_rewind_duplicates_without_breaking_at_least_once_but_breaks_exactly_once() -> None:
    target = [0, 1, 2, 3, 4, 2, 3, 4, 5, 6]
    plain = verdict_of(list(range(7)), target)
    assert plain.partitions[0].duplicated == 3 and plain.partitions[0].out_of_order == 0
    assert broken_promises(plain) == []
    eos = verdict_of(list(range(7)), target, eos=True)
    assert [b for b in broken_promises(eos) if b.startswith("exactly-once")]


def test_a_reorder_is_caught() -> None:
    v = verdict_of(list(range(6)), [0, 1, 3, 2, 4, 5])
    assert v.partitions[0].out_of_order == 1 and v.partitions[0].out_of_order_sample == [2]
    assert any(b.startswith("order") for b in broken_promises(v))


def test_a_foreign_record_and_a_duplicated_source_record_are_told_apart() -> None:
    v = verdict_of([0, 1, 1, 2], [0, 1, 2, 99])
    assert v.partitions[0].source_duplicates == 1 and v.partitions[0].foreign == 1
    assert v.partitions[0].produced == 3 and v.partitions[0].lost == 0


def test_a_checkpoint_ahead_of_the_first_copy_is_caught_and_an_exact_one_passes() -> None:
    # source 0..5; target: 0..3 copied, a rewind re-copies 2..5 (offsets 4..7)
    _, copies_at = judge_partition("t", 0, list(range(6)), copies([0, 1, 2, 3, 2, 3, 4, 5], first_offset=100))
    key = ("t", 0)
    exact = CheckpointRecord("g", "t", 0, upstream=2, downstream=102)
    at_later_copy = CheckpointRecord("g", "t", 0, upstream=2, downstream=104)
    beyond_end = CheckpointRecord("g", "t", 0, upstream=6, downstream=108)
    past_end = CheckpointRecord("g", "t", 0, upstream=6, downstream=109)
    safe_behind = CheckpointRecord("g", "t", 0, upstream=4, downstream=103)
    result = judge_checkpoints(
        [exact, at_later_copy, beyond_end, past_end, safe_behind], {key: copies_at}, {key: 108}
    )
    assert result.checked == 5 and result.ahead == 2
    assert [(s["downstream"], s["true_position"]) for s in result.ahead_sample] == [(104, 102), (109, 108)]
    v = verdict_of([0], [0], checkpoints=result)
    assert any(b.startswith("checkpoints") for b in broken_promises(v))


def test_recovery_is_measured_from_the_heal_within_the_horizon() -> None:
    samples = [
        Sample(t, lag, running)
        for t, lag, running in [(9, 5000, False), (11, 900, True), (14, 50, True), (30, 5000, False)]
    ]
    got = recovery_times([("worker-kill", 10, 20), ("broker-kill", 25, 40)], samples, lag_bound=100)
    assert got == {"worker-kill": [4.0], "broker-kill": [None]}
    v = verdict_of([0], [0], recovery_s=got)
    assert any(b.startswith("recovery") for b in broken_promises(v))


def test_rest_failures_final_lag_and_stuck_tasks_break_promises() -> None:
    assert any(b.startswith("REST") for b in broken_promises(verdict_of([0], [0], rest_failures=1)))
    assert any(b.startswith("REST") for b in broken_promises(verdict_of([0], [0], rest_calls=0)))
    assert any(b.startswith("lag") for b in broken_promises(verdict_of([0], [0], final_lag=3)))
    assert any(b.startswith("tasks") for b in broken_promises(verdict_of([0], [0], final_all_running=False)))


def test_percentile_is_nearest_rank() -> None:
    assert percentile([], 0.99) is None
    assert percentile(list(range(1, 101)), 0.99) == 99
    assert percentile([5.0], 0.99) == 5.0


def test_a_committed_source_offset_that_goes_back_is_a_broken_promise() -> None:
    from pyconnect.testing.chaos.verdict import judge_offset_commits

    t0, t1 = ("t", 0), ("t", 1)
    steady = judge_offset_commits([(t0, 5), (t1, 3), (t0, 9), (t0, 9), (t1, 8)])
    assert (steady.commits, steady.partitions, steady.rewinds) == (5, 2, 0)
    assert broken_promises(verdict_of([1], [1], offset_commits=steady)) == []
    # a zombie commits the position it held before its pause; a tombstone (a REST reset) starts over
    zombie = judge_offset_commits(
        [(t0, 100), (t0, 4_000), (t0, 250), (t0, 4_100), (t1, 7), (t1, None), (t1, 2)]
    )
    assert (zombie.commits, zombie.rewinds, zombie.max_rewind) == (6, 1, 3_750)
    assert zombie.rewind_sample == [{"topic": "t", "partition": 0, "committed": 250, "after": 4_000}]
    broken = broken_promises(verdict_of([1], [1], offset_commits=zombie))
    assert len(broken) == 1 and broken[0].startswith(
        "rewinds: 1 of 6 committed source offsets went back (by up to 3750"
    )


def test_the_report_shows_the_commits_and_rewinds_and_reads_reports_without_them() -> None:
    from pyconnect.testing.chaos.report import markdown
    from pyconnect.testing.chaos.verdict import judge_offset_commits

    v = verdict_of([1, 2], [1, 2], offset_commits=judge_offset_commits([(("t", 0), 1), (("t", 0), 0)]))
    report = {
        "run": {"seed": 1, "duration_s": 10, "kinds": ["worker-kill"], "exactly_once": False},
        "faults": [],
        "verdict": v.to_json(),
    }
    text = markdown(report)
    assert "| source offsets committed (offsets topic) / went back | 2 / 1 (by up to 1) |" in text
    del report["verdict"]["offset_commits"]  # a report from before this was measured
    assert "source offsets committed" not in markdown(report)
