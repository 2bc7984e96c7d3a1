"""Where a group resumes on the target, without Kafka: verified stretches, the decision, the actions.

Target layouts are built the way a mirror writes them: an exactly-once mirror puts a transaction marker
after each transaction, an at-least-once one that restarts copies a run twice.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.mirror.offsets.failover_positions import (
    Segment,
    action_for,
    decide,
    segment_for,
    verified_position,
)
from connectors.mirror.offsets.translation import OffsetSyncStore, Translation


def transactional_copy(sizes: list[int]) -> tuple[dict[int, int], list[int], list[tuple[int, int]]]:
    """An exactly-once copy of upstream 0.. in transactions of ``sizes`` records, a marker after each;
    the writer syncs the first record and the last one of every transaction.

    Returns (upstream -> downstream, the offsets of data records, syncs in stream order)."""
    copy: dict[int, int] = {}
    data: list[int] = []
    syncs: list[tuple[int, int]] = []
    up = down = 0
    for size in sizes:
        for _ in range(size):
            copy[up] = down
            data.append(down)
            up += 1
            down += 1
        syncs.append((up - 1, down - 1))
        down += 1  # the commit marker
    return copy, data, list(dict.fromkeys([(0, 0), *syncs]))


def first_copy(copy: dict[int, int], upstream: int, end: int) -> int:
    return min((d for u, d in copy.items() if u >= upstream), default=end)


def between(data: list[int], segment: Segment) -> list[int]:
    hi = segment.read_to
    return [o for o in data if o > segment.read_from and (hi is None or o < hi)]


def test_inside_a_transaction_the_target_records_give_the_exact_position() -> None:
    copy, data, syncs = transactional_copy([5, 7, 3, 6])
    end = max(data) + 2
    for upstream in range(0, 21):
        segment = segment_for(syncs, upstream, lag=100)
        assert segment is not None
        answer = verified_position(segment, upstream, between(data, segment))
        assert answer == first_copy(copy, upstream, end), upstream


def test_past_the_last_sync_with_nothing_copied_after_it_resumes_right_after_it() -> None:
    _, data, syncs = transactional_copy([4, 4])
    segment = segment_for(syncs, 8, lag=100)
    assert segment is not None and segment.open_end and segment.read_to is None
    assert verified_position(segment, 8, between(data, segment)) == syncs[-1][1] + 1
    # A record copied past the last sync that no sync accounts for: nothing is proven.
    assert verified_position(segment, 8, [*between(data, segment), syncs[-1][1] + 3]) is None


def test_a_run_copied_twice_is_verified_only_before_the_rewind() -> None:
    # at-least-once: 0..9 copied at 0..9, a restart copies 5..14 again at 10..19; syncs of both writers.
    syncs = [(0, 0), (9, 9), (5, 10), (14, 19)]
    segment = segment_for(syncs, 7, lag=100)
    assert segment is not None and verified_position(segment, 7, list(range(1, 9))) == 7  # the first copy
    assert segment_for(syncs, 12, lag=100) is None  # the stream goes back before reaching 12
    # two syncs whose stretch holds a copy too many
    chain = Segment(((0, 0), (10, 12)), open_end=False)
    assert verified_position(chain, 4, list(range(1, 12))) is None


def test_a_hole_upstream_makes_the_count_differ_and_is_left_to_the_syncs() -> None:
    # upstream 0..4, then 8.. (5-7 compacted away): copies at 0..4 and 5..; the writer syncs both sides
    chain = Segment(((0, 0), (8, 5)), open_end=False)
    assert verified_position(chain, 6, [1, 2, 3, 4]) is None


def test_syncs_out_of_reach_are_not_part_of_the_stretch() -> None:
    syncs = [(0, 0), (50, 50), (300, 310), (305, 316)]
    segment = segment_for(syncs, 303, lag=100)
    assert segment is not None and segment.chain == ((300, 310), (305, 316))
    assert segment_for([(0, 0)], 500, lag=100) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=12), st.data())
def test_verified_positions_are_the_first_copy_for_any_transaction_sizes(
    sizes: list[int], data: st.DataObject
) -> None:
    copy, offsets, syncs = transactional_copy(sizes)
    end = max(offsets) + 2
    upstream = data.draw(st.integers(min_value=0, max_value=sum(sizes)))
    segment = segment_for(syncs, upstream, lag=100)
    if segment is None:
        return
    answer = verified_position(segment, upstream, between(offsets, segment))
    assert answer is None or answer <= first_copy(copy, upstream, end)
    if upstream < sum(sizes):
        assert answer == first_copy(copy, upstream, end)


def test_the_decision_prefers_verified_then_syncs_then_the_checkpoint() -> None:
    exact = Translation(10, 10, "exact", True, 0, 0)
    short = Translation(10, 8, "exact", False, 2, 2)
    unknown = Translation(10, 8, "exact", False, None, 5)
    assert decide(10, (10, 7), exact, 12) == decide(10, None, None, 12)
    assert decide(10, (10, 7), exact, None).target_offset == 10
    position = decide(10, (10, 7), short, None)
    assert (position.target_offset, position.reread, position.skipped, position.basis) == (
        8,
        2,
        0,
        "offset syncs",
    )
    position = decide(10, (10, 7), unknown, None)
    assert (position.reread, position.max_reread) == (None, 5)
    position = decide(10, (10, 7), None, None)
    assert (position.target_offset, position.reread, position.skipped, position.basis) == (
        7,
        None,
        0,
        "checkpoint",
    )
    assert decide(5, (10, 7), None, None).skipped is None  # rewound on the source after the checkpoint
    assert decide(10, None, Translation(10, -1, "exact", False, None, None), None).target_offset is None


def test_actions() -> None:
    assert [action_for(5, c, False) for c in (None, 3, 5, 9)] == ["commit", "commit", "keep", "skip-rewind"]
    assert action_for(5, 9, True) == "rewind"
    assert action_for(None, 3, False) == "no-checkpoint"


def test_the_sync_store_alone_falls_back_to_plus_one_inside_a_transaction() -> None:
    copy, _, syncs = transactional_copy([5, 5])
    store = OffsetSyncStore("exact")
    store.start(must_read_to_end=False)
    for up, down in syncs:
        store.add("t", 0, up, down)
    store.mark_read_to_end()
    translation = store.translate(("t", 0), 7)
    assert translation is not None and not translation.exact
    assert translation.downstream_offset < copy[7]
