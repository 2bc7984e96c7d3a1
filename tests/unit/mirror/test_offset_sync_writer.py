"""OffsetSyncWriter follows Java's rules (triggers, pending/delayed queues, the outstanding-send bound), except
that an unsent triggered sync is never replaced below the per-partition bound and a break in the copy (an
upstream gap, a downstream step back) is synced on both sides."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.mirror.offsets.sync_writer import (
    MAX_OUTSTANDING_OFFSET_SYNCS,
    MAX_PENDING_PER_PARTITION,
    OffsetSyncWriter,
    PartitionState,
    SendDone,
)
from connectors.mirror.records import OffsetSync, TopicPartition

TP = TopicPartition("topic", 0)
TP1 = TopicPartition("topic", 1)


class FakeSender:
    """Records each send; completes it at once (``auto``) or when the test says so."""

    def __init__(self, auto: bool = False) -> None:
        self.auto = auto
        self.sent: list[OffsetSync] = []
        self.callbacks: list[SendDone] = []

    def __call__(self, sync: OffsetSync, done: SendDone) -> None:
        self.sent.append(sync)
        if self.auto:
            done(None)
        else:
            self.callbacks.append(done)


def writer(
    max_lag: int,
    max_outstanding: int = MAX_OUTSTANDING_OFFSET_SYNCS,
    auto: bool = False,
    max_pending_per_partition: int = MAX_PENDING_PER_PARTITION,
):
    sender = FakeSender(auto)
    return OffsetSyncWriter(
        sender, max_lag, max_outstanding=max_outstanding, max_pending_per_partition=max_pending_per_partition
    ), sender


def test_first_record_is_pending_and_the_next_in_lag_is_delayed() -> None:
    w, _ = writer(2, max_outstanding=1)
    w.maybe_queue_offset_syncs(TP, 0, 1)
    assert TP not in w.delayed and w.pending_syncs() == [OffsetSync("topic", 0, 0, 1)]
    assert w.partition_states[TP].last_sync_downstream_offset == 1
    w.maybe_queue_offset_syncs(TP, 1, 2)
    assert w.delayed[TP] == OffsetSync("topic", 0, 1, 2)
    assert w.partition_states[TP].last_sync_downstream_offset == 1


def test_one_permit_sends_one_sync_until_it_completes() -> None:
    w, sender = writer(1, max_outstanding=1)
    w.maybe_queue_offset_syncs(TP, 0, 100)
    assert w.partition_states[TP].last_sync_downstream_offset == 100
    w.fire_pending_offset_syncs()
    assert sender.sent == [OffsetSync("topic", 0, 0, 100)]
    w.maybe_queue_offset_syncs(TP, 2, 102)
    assert w.partition_states[TP].last_sync_downstream_offset == 102
    w.fire_pending_offset_syncs()
    assert len(sender.sent) == 1, "an in-flight sync holds the only permit"
    assert w.pending_syncs() == [OffsetSync("topic", 0, 2, 102)]
    sender.callbacks[0](None)
    sender.callbacks[0](None)  # a second completion must not free a second permit
    assert w.outstanding == 0
    w.fire_pending_offset_syncs()
    assert sender.sent[-1] == OffsetSync("topic", 0, 2, 102) and not w.pending_syncs()


def test_promote_queues_the_latest_delayed_sync_behind_an_unsent_triggered_one() -> None:
    w, _ = writer(50, max_outstanding=1)
    w.maybe_queue_offset_syncs(TP, 0, 100)
    w.maybe_queue_offset_syncs(TP, 1, 101)
    w.promote_delayed_offset_syncs()
    assert not w.delayed
    # Java would replace the unsent first-record sync; here it stays and the promoted one follows it.
    assert w.pending_syncs() == [OffsetSync("topic", 0, 0, 100), OffsetSync("topic", 0, 1, 101)]
    w.maybe_queue_offset_syncs(TP, 2, 102)
    w.promote_delayed_offset_syncs()
    assert w.pending_syncs() == [OffsetSync("topic", 0, 0, 100), OffsetSync("topic", 0, 2, 102)], (
        "an unsent promoted sync is replaced in place by a newer one"
    )


def test_lag_trigger_uses_the_plus_one_rule() -> None:
    w, sender = writer(3, auto=True)
    for offset in range(10):
        w.maybe_queue_offset_syncs(TP, offset, offset)
        w.fire_pending_offset_syncs()
    # syncs at downstream 0, L+1=4, 2(L+1)=8
    assert [s.downstream_offset for s in sender.sent] == [0, 4, 8]
    assert w.delayed[TP] == OffsetSync("topic", 0, 9, 9)


def test_lag_zero_syncs_every_record() -> None:
    w, sender = writer(0, auto=True)
    for offset in range(5):
        w.maybe_queue_offset_syncs(TP, offset, offset + 10)
        w.fire_pending_offset_syncs()
    assert [s.upstream_offset for s in sender.sent] == [0, 1, 2, 3, 4]


def test_upstream_gap_and_downstream_rewind_trigger_and_are_synced_on_both_sides() -> None:
    w, sender = writer(100, auto=True)
    for up, down in ((0, 0), (1, 1), (5, 2), (6, 3), (7, 1), (8, 2), (10, 3)):
        w.maybe_queue_offset_syncs(TP, up, down)
        w.fire_pending_offset_syncs()
    # Java sends (0, 0), (5, 2), (7, 1), (10, 3); the record before each break is synced right before it
    assert [(s.upstream_offset, s.downstream_offset) for s in sender.sent] == [
        (0, 0),
        (1, 1),
        (5, 2),
        (6, 3),
        (7, 1),
        (8, 2),
        (10, 3),
    ]
    assert TP not in w.delayed
    w.maybe_queue_offset_syncs(TP, 12, 4)  # the previous record was synced already: nothing extra
    w.fire_pending_offset_syncs()
    assert [s.upstream_offset for s in sender.sent[7:]] == [12]


def test_a_triggered_sync_queues_behind_an_unsent_one_and_the_delayed_one_before_a_gap() -> None:
    w, sender = writer(100, max_outstanding=1)
    w.maybe_queue_offset_syncs(TP1, 0, 0)
    w.fire_pending_offset_syncs()  # TP1 in flight: the only permit is taken
    w.maybe_queue_offset_syncs(TP, 0, 0)
    w.maybe_queue_offset_syncs(TP1, 5, 5)  # gap after TP1's synced first record: queued behind TP
    w.maybe_queue_offset_syncs(TP, 1, 1)  # delayed
    w.maybe_queue_offset_syncs(TP, 3, 3)  # gap: the delayed (1, 1), then (3, 3), behind TP's first sync
    w.maybe_queue_offset_syncs(TP, 4, 4)  # delayed
    w.maybe_queue_offset_syncs(TP, 5, 4 + 100)  # lag trigger, no break: the delayed (4, 4) is dropped
    assert w.pending_syncs() == [
        OffsetSync("topic", 0, 0, 0),
        OffsetSync("topic", 1, 5, 5),
        OffsetSync("topic", 0, 1, 1),
        OffsetSync("topic", 0, 3, 3),
        OffsetSync("topic", 0, 5, 104),
    ]
    assert TP not in w.delayed
    for _ in range(5):
        sender.callbacks[-1](None)
        w.fire_pending_offset_syncs()
    assert [(s.partition, s.upstream_offset) for s in sender.sent] == [
        (1, 0),
        (0, 0),
        (1, 5),
        (0, 1),
        (0, 3),
        (0, 5),
    ]
    assert not w.pending_syncs() and w.syncs_dropped == 0


def test_a_lag_sync_replaces_a_promoted_unsent_one_in_place_a_gap_sync_keeps_it() -> None:
    w, _ = writer(3, max_outstanding=0)
    w.maybe_queue_offset_syncs(TP, 0, 0)
    w.maybe_queue_offset_syncs(TP, 1, 1)
    w.promote_delayed_offset_syncs()
    w.maybe_queue_offset_syncs(TP1, 0, 0)
    w.maybe_queue_offset_syncs(TP, 2, 4)  # lag trigger: the promoted (1, 1) only marked progress
    w.maybe_queue_offset_syncs(TP, 3, 5)
    w.promote_delayed_offset_syncs()
    w.maybe_queue_offset_syncs(TP, 9, 6)  # gap: the promoted (3, 5) is the record before it and stays
    assert w.pending_syncs() == [
        OffsetSync("topic", 0, 0, 0),
        OffsetSync("topic", 0, 2, 4),
        OffsetSync("topic", 1, 0, 0),
        OffsetSync("topic", 0, 3, 5),
        OffsetSync("topic", 0, 9, 6),
    ]


def test_past_the_per_partition_bound_the_newest_is_replaced_as_java_does() -> None:
    w = OffsetSyncWriter(FakeSender(), 100, max_outstanding=0, max_pending_per_partition=2)
    for up in (0, 2, 4, 6):  # every record is a gap
        w.maybe_queue_offset_syncs(TP, up, up // 2)
    assert w.pending_syncs() == [OffsetSync("topic", 0, 0, 0), OffsetSync("topic", 0, 6, 3)]
    assert w.syncs_dropped == 2


def test_at_most_max_outstanding_sends_in_flight_by_default() -> None:
    w, sender = writer(100)
    permits = MAX_OUTSTANDING_OFFSET_SYNCS
    partitions = [TopicPartition("t", p) for p in range(permits + 5)]
    for tp in partitions:
        w.maybe_queue_offset_syncs(tp, 0, 0)
    w.fire_pending_offset_syncs()
    assert len(sender.sent) == permits and len(w.pending_syncs()) == 5
    assert [s.partition for s in sender.sent] == list(range(permits))
    for done in sender.callbacks[:3]:
        done(RuntimeError("broker down"))  # failures release permits too and are not retried
    w.fire_pending_offset_syncs()
    assert [s.partition for s in sender.sent[permits:]] == [permits, permits + 1, permits + 2]
    assert w.syncs_failed == 3 and w.outstanding == permits


def test_a_send_that_raises_releases_its_permit() -> None:
    def explode(sync: OffsetSync, done: SendDone) -> None:
        raise RuntimeError("closed")

    w = OffsetSyncWriter(explode, 0, max_outstanding=1)
    w.maybe_queue_offset_syncs(TP, 0, 0)
    w.maybe_queue_offset_syncs(TP1, 0, 0)
    w.fire_pending_offset_syncs()
    assert w.outstanding == 0 and w.syncs_failed == 2 and not w.pending_syncs()


def test_partition_state_matches_java_fields() -> None:
    state = PartitionState(5)
    assert state.update(10, 20) is True
    assert (state.previous_upstream_offset, state.previous_downstream_offset) == (10, 20)
    assert state.last_sync_downstream_offset == 20
    assert state.update(11, 21) is True, "the flag stays set until reset()"
    state.reset()
    assert state.update(12, 22) is False


@given(
    st.lists(st.tuples(st.integers(1, 3), st.integers(0, 2)), min_size=1, max_size=200), st.integers(0, 20)
)
def test_delayed_or_pending_always_holds_the_latest_record(steps: list[tuple[int, int]], lag: int) -> None:
    """After every record the latest (up, down) is queued (pending or delayed), so a flush never
    leaves a partition's sync behind its last acknowledged record."""
    w, sender = writer(lag, auto=True)
    up = down = -1
    for up_step, down_step in steps:
        up, down = up + up_step, down + down_step
        w.maybe_queue_offset_syncs(TP, up, down)
        latest = OffsetSync("topic", 0, up, down)
        assert w.pending_syncs()[-1:] == [latest] or w.delayed.get(TP) == latest
        w.fire_pending_offset_syncs()
    w.promote_delayed_offset_syncs()
    w.fire_pending_offset_syncs()
    assert sender.sent[-1] == OffsetSync("topic", 0, up, down)
    assert all(b.downstream_offset - a.downstream_offset >= 0 for a, b in itertools.pairwise(sender.sent))


@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("record"), st.integers(1, 3), st.integers(0, 2)),
            st.tuples(st.just("ack"), st.integers(0, 12), st.just(0)),
            st.tuples(st.just("commit"), st.just(0), st.just(0)),
        ),
        max_size=300,
    ),
    st.integers(0, 20),
    st.integers(1, 3),
)
def test_every_triggered_sync_reaches_the_stream_under_back_pressure(
    steps: list[tuple[str, int, int]], lag: int, permits: int
) -> None:
    """Whatever the order of acknowledgements and offset commits, every sync Java's trigger rule fires is
    sent, in order, and right before each record after an upstream gap the record before the gap."""
    w, sender = writer(lag, max_outstanding=permits)
    model = PartitionState(lag)
    triggered: list[OffsetSync] = []
    breaks: list[tuple[OffsetSync, OffsetSync]] = []
    up = down = -1
    for kind, a, b in steps:
        if kind == "record":
            previous = OffsetSync("topic", 0, up, down)
            up, down = up + a, down + b
            if model.update(up, down):
                triggered.append(OffsetSync("topic", 0, up, down))
                model.reset()
            if a != 1 and previous.upstream_offset != -1:
                breaks.append((previous, OffsetSync("topic", 0, up, down)))
            w.maybe_queue_offset_syncs(TP, up, down)
        elif kind == "ack":
            for done in sender.callbacks[:a]:
                done(None)
            del sender.callbacks[:a]
        else:
            w.promote_delayed_offset_syncs()
        w.fire_pending_offset_syncs()
    while w.pending_syncs():
        for done in sender.callbacks:
            done(None)
        sender.callbacks.clear()
        w.fire_pending_offset_syncs()
    sent = sender.sent
    assert [s for s in sent if s in triggered] == triggered
    assert all(pair in set(itertools.pairwise(sent)) for pair in breaks)
    assert all(b.upstream_offset > a.upstream_offset for a, b in itertools.pairwise(sent)), "in order"


@given(
    st.lists(
        st.tuples(st.lists(st.integers(1, 3), min_size=0, max_size=20), st.integers(0, 3), st.booleans()),
        max_size=30,
    ),
    st.integers(0, 10),
)
def test_queue_batch_matches_record_by_record(batches: list[tuple[list[int], int, bool]], lag: int) -> None:
    """``queue_batch`` leaves the writer exactly as ``maybe_queue_offset_syncs`` per record would."""
    one, one_sender = writer(lag, max_outstanding=2)
    many, many_sender = writer(lag, max_outstanding=2)
    up, down = -1, -1
    for steps, down_jump, commit in batches:
        ups = []
        for step in steps:
            up += step
            ups.append(up)
        base = max(0, down + 1 - down_jump)  # a jump back models a downstream rewind
        for position, u in enumerate(ups):
            one.maybe_queue_offset_syncs(TP, u, base + position)
        many.queue_batch(TP, ups, base)
        if ups:
            down = base + len(ups) - 1
        if commit:
            one.promote_delayed_offset_syncs()
            many.promote_delayed_offset_syncs()
        for w, sender in ((one, one_sender), (many, many_sender)):
            w.fire_pending_offset_syncs()
            for done in sender.callbacks:
                done(None)
            sender.callbacks.clear()
        assert many.pending_syncs() == one.pending_syncs()
        assert many.delayed == one.delayed
        assert many.partition_states == one.partition_states
    assert many_sender.sent == one_sender.sent


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3), st.integers(0, 400), st.integers(0, 3), st.booleans(), st.integers(0, 3)
        ),
        max_size=25,
    ),
    st.integers(0, 120),
    st.integers(1, 12),
)
def test_queue_run_matches_queue_batch(
    runs: list[tuple[int, int, int, bool, int]], lag: int, max_pending: int
) -> None:
    """``queue_run`` over consecutive upstream offsets leaves the writer exactly as ``queue_batch``
    would: same syncs queued, sent and replaced (also at the per-partition bound), same delayed sync and
    state. Runs start after an upstream gap or none, and downstream jumps back or not."""
    by_run, run_sender = writer(lag, max_outstanding=2, max_pending_per_partition=max_pending)
    by_batch, batch_sender = writer(lag, max_outstanding=2, max_pending_per_partition=max_pending)
    up, down = -1, -1
    for gap, count, down_jump, commit, acks in runs:
        first = up + 1 + gap
        base = max(0, down + 1 - down_jump)
        by_run.queue_run(TP, first, count, base)
        by_batch.queue_batch(TP, list(range(first, first + count)), base)
        if count:
            up, down = first + count - 1, base + count - 1
        if commit:
            by_run.promote_delayed_offset_syncs()
            by_batch.promote_delayed_offset_syncs()
        for w, sender in ((by_run, run_sender), (by_batch, batch_sender)):
            w.fire_pending_offset_syncs()
            for done in sender.callbacks[:acks]:
                done(None)
            del sender.callbacks[:acks]
        assert by_run.pending_syncs() == by_batch.pending_syncs()
        assert by_run.delayed == by_batch.delayed
        assert by_run.partition_states == by_batch.partition_states
        assert by_run.syncs_dropped == by_batch.syncs_dropped
    assert run_sender.sent == batch_sender.sent
