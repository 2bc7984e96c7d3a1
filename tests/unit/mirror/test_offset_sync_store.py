"""OffsetSyncStore: Java's translation bit for bit, and exact translation that never skips a record.

* Scenario tests replay ``tests/golden/mirror_checkpoint/java_vectors.json``: the Java 4.3.1
  ``OffsetSyncStore`` driven by ``generate.jsh`` (the ``OffsetSyncStoreTest`` cases plus seeded random
  walks), compared slot by slot and translation by translation; and the offset syncs and checkpoints a
  running Java MirrorMaker 2 wrote (``tests/golden/mm2_records.json``).
* Property tests model a replicated partition: upstream offsets with holes (transaction markers, aborted
  transactions a ``read_committed`` task never sees, compaction), a source task copying records in order
  and emitting syncs with the real ``OffsetSyncWriter`` (first record, ``offset.lag.max``, both sides of
  every break; delayed syncs promoted on offset flush), graceful restarts, restarts that resume after the
  last flushed offset (re-copying records downstream), stale commits that rewind the committed offset (a
  zombie's), overlapping instances of the task, and EOS markers downstream.
  The safety rule is the first copy: ``F(u)``, the lowest downstream position of a copy of any upstream
  record ``>= u`` (:mod:`connectors.mirror.offsets.translation`). Java's weaker guarantee, the later copy
  (safe only while one instance at a time copies), is checked against the last-copy positions.
"""

from __future__ import annotations

import base64
import itertools
import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from connectors.mirror.checkpoint_records import Checkpoint
from connectors.mirror.offsets.sync_writer import OffsetSyncWriter, PartitionState, SendDone
from connectors.mirror.offsets.translation import SYNCS_PER_PARTITION, OffsetSyncStore, SyncPoint, Translation
from connectors.mirror.records import OffsetSync, TopicPartition

TP = ("topic1", 2)
WRITER_TP = TopicPartition(*TP)
VECTORS = Path(__file__).resolve().parents[2] / "golden" / "mirror_checkpoint" / "java_vectors.json"


@cache
def java_scenarios() -> list[dict[str, Any]]:
    return list(json.loads(VECTORS.read_text())["offset_sync_store"])


def compact_slots(slots: list[SyncPoint]) -> list[list[int]]:
    out: list[list[int]] = []
    previous: SyncPoint | None = None
    for index, sync in enumerate(slots):
        if sync is not previous:
            out.append([index, sync.upstream_offset, sync.downstream_offset])
        previous = sync
    return out


def store_with(
    syncs: list[tuple[int, int]], *, mode: str = "exact", initial: int = 0, must: bool = True, **kw: Any
) -> OffsetSyncStore:
    store = OffsetSyncStore(mode, **kw)  # type: ignore[arg-type]
    store.start(must)
    for i, (up, down) in enumerate(syncs):
        if i == initial:
            store.mark_read_to_end()
        store.add(*TP, up, down)
    if not store.ready:
        store.mark_read_to_end()
    return store


# -- Java reproduction ------------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", java_scenarios(), ids=lambda s: s["name"])
def test_java_mode_replays_the_java_store(scenario: dict[str, Any]) -> None:
    store = OffsetSyncStore("java")
    store.start(scenario["must_read_to_end"])
    queries = scenario["queries"]
    for up, down in scenario["initial"]:
        store.add(*TP, up, down)
    assert [store.translate_downstream("g", TP, q) for q in queries] == scenario["before_ready"]
    store.mark_read_to_end()
    states = {s["after"]: s for s in scenario["states"]}
    seen = 0

    def check(after: int) -> None:
        nonlocal seen
        state = states.get(after)
        if state is None:
            return
        seen += 1
        if state["slots"] is None:
            assert store.partitions() == []
        else:
            assert compact_slots(store.slots(TP)) == state["slots"], f"after {after} syncs"
        if state["translations"] is not None:
            got = [store.translate_downstream("g", TP, q) for q in queries]
            assert got == state["translations"], f"after {after} syncs"

    count = len(scenario["initial"])
    check(count)
    for up, down in scenario["live"]:
        store.add(*TP, up, down)
        count += 1
        check(count)
    assert seen == len(states)


@pytest.mark.parametrize("scenario", java_scenarios(), ids=lambda s: s["name"])
def test_exact_mode_on_the_java_scenarios(scenario: dict[str, Any]) -> None:
    """Same ``None``/``-1`` as Java; never past a copy the syncs show of a record at or above the offset
    (Java is, after rewinds); never below Java without a rewind."""
    syncs = [*scenario["initial"], *scenario["live"]]
    rewinds = any(b[0] < a[0] for a, b in itertools.pairwise(syncs))
    java, exact = OffsetSyncStore("java"), OffsetSyncStore("exact")
    for store in (java, exact):
        store.start(scenario["must_read_to_end"])
        for up, down in scenario["initial"]:
            store.add(*TP, up, down)
        store.mark_read_to_end()
        for up, down in scenario["live"]:
            store.add(*TP, up, down)
    for q in scenario["queries"]:
        j, e = java.translate_downstream("g", TP, q), exact.translate_downstream("g", TP, q)
        assert (j is None) == (e is None) and (j == -1) == (e == -1)
        if j is not None and e is not None and e != -1:
            known = [down for up, down in syncs if up >= q]
            assert not known or e <= min(known)
            if not rewinds:
                assert e >= j


def test_golden_java_mm2_checkpoints_from_its_offset_syncs() -> None:
    """The offset syncs and checkpoints a Java MirrorMaker 2 wrote (tests/golden/mm2_records.json).

    Java checkpointed ``golden-group`` at upstream 3 on partition 0 as downstream 1 (sync (0, 0), +1):
    a fail-over re-reads 2 records. Both topics started empty and the syncs (0, 0) -> (4, 4) prove the
    copy contiguous, so exact mode answers 3.
    """
    records = json.loads((VECTORS.parents[1] / "mm2_records.json").read_text())["records"]

    def raw(blob: dict[str, Any] | None) -> bytes | None:
        return None if blob is None else base64.b64decode(blob["base64"])

    syncs = [
        OffsetSync.deserialize_record(raw(r["key"]), raw(r["value"]))
        for r in records
        if r["role"] == "offset-syncs"
    ]
    checkpoints = [
        Checkpoint.from_record(raw(r["key"]), raw(r["value"])) for r in records if r["role"] == "checkpoints"
    ]
    java = OffsetSyncStore("java")
    java.start(True)
    java.mark_read_to_end()
    seen: set[tuple[int, int, int | None]] = set()
    for sync in syncs:
        java.handle_sync(sync)
        for c in checkpoints:
            tp = ("golden-orders", c.partition)
            seen.add(
                (
                    c.partition,
                    c.upstream_offset,
                    java.translate_downstream(c.consumer_group_id, tp, c.upstream_offset),
                )
            )
    assert {(c.partition, c.upstream_offset, c.downstream_offset) for c in checkpoints} <= seen
    exact = OffsetSyncStore("exact")
    exact.start(True)
    exact.mark_read_to_end()
    exact.handle_syncs(syncs)
    latest = {c.partition: c for c in checkpoints}
    assert (
        {
            p: java.translate_downstream("golden-group", ("golden-orders", p), c.upstream_offset)
            for p, c in latest.items()
        }
        == {p: c.downstream_offset for p, c in latest.items()}
        == {0: 1, 1: 5}
    )
    assert {
        p: exact.translate_downstream("golden-group", ("golden-orders", p), c.upstream_offset)
        for p, c in latest.items()
    } == {
        0: 3,
        1: 5,
    }
    assert java.expected_reread(("golden-orders", 0), 3) == 2
    assert exact.expected_reread(("golden-orders", 0), 3) == 0


def test_spec_vector_past_offset_translation() -> None:
    """Spec §3.2 test vector (Java ``OffsetSyncStoreTest.testPastOffsetTranslation``)."""
    syncs = [(u, u) for u in range(0, 1001, 10)] + [(u, u) for u in range(1010, 10001, 10)]
    java = store_with(syncs, mode="java", initial=101)
    distinct = {
        i: s.upstream_offset for i, s in enumerate(java.slots(TP)) if i == 0 or s is not java.slots(TP)[i - 1]
    }
    assert distinct == {
        0: 10000,
        5: 9990,
        6: 9970,
        7: 9940,
        8: 9880,
        9: 9640,
        10: 9160,
        11: 8680,
        12: 6760,
        13: 4840,
        14: 1000,
    }
    expected = {10000: 10000, 10005: 10001, 9995: 9991, 4840: 4840, 4839: 1001, 1000: 1000, 999: -1}
    assert {u: java.translate_downstream(None, TP, u) for u in expected} == expected
    # the syncs lie on one line from 1000 on: exact mode translates every offset there exactly
    exact = store_with(syncs, mode="exact", initial=101)
    assert exact.runs(TP) == [(0, 0, 10000)]  # the history spans the initial read
    assert {u: exact.translate_downstream(None, TP, u) for u in expected} == {
        10000: 10000,
        10005: 10001,
        9995: 9995,
        4840: 4840,
        4839: 4839,
        1000: 1000,
        999: -1,
    }
    assert java.expected_reread(TP, 4839) == 4839 - 1001
    assert exact.expected_reread(TP, 4839) == 0
    assert exact.expected_reread(TP, 10005) is None  # past the newest sync nothing is proven
    for store in (java, exact):
        store.add(*TP, 1500, 11000)  # upstream rewind: Java's array starts over
    assert [java.translate_downstream(None, TP, u) for u in (1499, 1500, 2000)] == [-1, 11000, 11001]
    # 1500.. were copied before (at 1500..) and again from 11000: exact mode answers the first copy
    assert [exact.translate_downstream(None, TP, u) for u in (1499, 1500, 2000)] == [-1, 1500, 2000]
    assert exact.runs(TP) == [(0, 0, 10000), (1500, 11000, 1500)]


def test_java_offset_translation_case() -> None:
    """Java ``OffsetSyncStoreTest.testOffsetTranslation``; exact mode where the first-copy rule differs."""
    answers = {"java": (201, 251, 10, 20), "exact": (201, 250, 10, 10)}
    for mode, (at_150, at_150_again, at_200, at_20) in answers.items():
        store = store_with([], mode=mode)
        store.add(*TP, 100, 200)
        assert store.translate_downstream(None, TP, 150) == at_150
        # 51 downstream offsets for 50 upstream ones: the writer of (100, 200) may have copied 150 at 250
        # before this (second) copy, so exact mode stays at 250
        store.add(*TP, 150, 251)
        assert store.translate_downstream(None, TP, 150) == at_150_again
        assert store.translate_downstream(None, TP, 5) == -1
        store.add(*TP, 200, 10)  # downstream reset
        assert store.translate_downstream(None, TP, 200) == at_200
        # upstream reset: the copy of 200 at 10 is a record >= 20 copied before 20's copy at 20
        store.add(*TP, 20, 20)
        assert store.translate_downstream(None, TP, 20) == at_20


def test_no_translation_before_read_to_end_or_without_syncs() -> None:
    """Java ``testNoTranslationIfStoreNotStarted`` / ``testNoTranslationIfNoOffsetSync``."""
    store = OffsetSyncStore()
    store.start(True)
    store.add(*TP, 100, 200)
    assert [store.translate_downstream(None, TP, u) for u in (0, 100, 200)] == [None, None, None]
    store.mark_read_to_end()
    assert [store.translate_downstream(None, TP, u) for u in (0, 100, 200)] == [-1, 200, 201]
    assert store.translate_downstream(None, ("other", 0), 5) is None
    assert store.translate(("other", 0), 5) is None


def test_exact_translation_between_syncs_and_fallback_after_a_gap() -> None:
    # Java's writer, offset.lag.max = 9: syncs every 10 records; upstream hole 35..39 (compaction) makes
    # a gap sync (40, 35), and no sync says where before it the hole starts.
    syncs = [(0, 0), (10, 10), (20, 20), (30, 30), (40, 35), (50, 45)]
    exact, java = store_with(syncs, mode="exact"), store_with(syncs, mode="java")
    assert exact.runs(TP) == [(0, 0, 30), (40, 35, 50)]
    assert [exact.translate_downstream("g", TP, u) for u in (5, 29, 30, 31, 34, 39, 40, 47, 50, 60)] == [
        5,
        29,
        30,
        31,
        31,
        31,
        35,
        42,
        45,
        46,
    ]
    t = java.translate(TP, 47)
    assert t is not None and (t.downstream_offset, t.exact, t.reread) == (36, False, 42 - 36)
    t = exact.translate(TP, 47)
    assert t is not None and (t.downstream_offset, t.exact, t.reread, t.reread_bound) == (42, True, 0, 3)
    t = exact.translate(TP, 50)
    assert t is not None and (t.downstream_offset, t.exact, t.reread, t.reread_bound) == (45, True, 0, 0)
    t = exact.translate(TP, 34)  # between the last sync and the hole: not provable, bounded by the next sync
    assert t is not None and (t.downstream_offset, t.exact, t.reread, t.reread_bound) == (31, False, None, 4)
    # our writer syncs the record before the hole too: the stretch and the hole become exact
    ours = [*syncs[:4], (34, 34), *syncs[4:]]
    exact_ours, java_ours = store_with(ours, mode="exact"), store_with(ours, mode="java")
    assert exact_ours.runs(TP) == [(0, 0, 34), (40, 35, 50)]
    assert [exact_ours.translate_downstream("g", TP, u) for u in (31, 34, 35, 37, 39, 40)] == [
        31,
        34,
        35,
        35,
        35,
        35,
    ]
    assert all(java_ours.translate_downstream("g", TP, u) <= 35 for u in (35, 37, 39, 40))  # type: ignore[operator]
    t = exact_ours.translate(TP, 37)
    assert t is not None and (t.downstream_offset, t.exact, t.reread, t.reread_bound) == (35, True, 0, 0)
    assert java.translate(TP, 60) == Translation(60, 46, "java", False, None, None)  # past the newest sync
    assert exact.translate_downstream("g", TP, 47, mode="java") == 36


def test_modes_validated() -> None:
    with pytest.raises(ValueError):
        OffsetSyncStore("fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        OffsetSyncStore(max_runs=0)


def test_memory_is_bounded() -> None:
    contiguous = store_with([(u, u + 7) for u in range(0, 200_000, 101)])
    assert len(contiguous.runs(TP)) == 1
    assert len({id(s) for s in contiguous.slots(TP)}) <= SYNCS_PER_PARTITION
    # a transactional source: one marker (upstream hole) per transaction, a sync after each
    txn = store_with([(11 * i, 10 * i) for i in range(1000)], max_runs=64)
    runs = txn.runs(TP)
    assert len(runs) == 64 and runs[-1] == (10989, 9990, 10989)
    # offsets covered by the kept runs get the newest sync at or below them (+1 past it); older ones
    # fall back to Java's answer from its thinned array
    java = store_with([(11 * i, 10 * i) for i in range(1000)], mode="java")
    for u in (500, 7000, 10300, 10990, 10995):
        i = u // 11
        if i >= 1000 - 64:
            expected = 10 * i + (1 if u % 11 else 0)
        else:
            expected = java.translate_downstream("g", TP, u)  # type: ignore[assignment]
        assert txn.translate_downstream("g", TP, u) == expected
    assert java.translate_downstream("g", TP, 10300) < 10 * (10300 // 11) + 1  # type: ignore[operator]


def test_lost_sync_assumption_documented() -> None:
    """Exact mode trusts that no triggered sync was lost (module docstring). A counterexample needs a
    lost gap sync *and* compensating downstream offsets: upstream 1 compacted away, the sync (2, 1) lost,
    an EOS marker at downstream 3. Java mode stays safe; exact mode resumes one record too far."""
    log = [0, 2, 3, None, 4]  # downstream position -> upstream offset (None: transaction marker)
    syncs = [(0, 0), (4, 4)]  # (2, 1) was triggered by the gap but never arrived
    true_position_of_2 = log.index(2)
    assert store_with(syncs, mode="java").translate_downstream("g", TP, 2) == 1 <= true_position_of_2
    assert store_with(syncs, mode="exact").translate_downstream("g", TP, 2) == 2 > true_position_of_2


# -- invariants of the array (Java assertSparseSyncInvariant) ---------------------------------------------


def assert_sparse_sync_invariant(slots: list[SyncPoint]) -> None:
    for j in range(SYNCS_PER_PARTITION):
        for i in range(j):
            up_i, up_j = slots[i].upstream_offset, slots[j].upstream_offset
            if up_i == up_j:
                continue
            lower = up_j + (1 << max(i - 2, 0))
            assert up_i >= lower, f"invariant C({i},{j})"
            upper = up_j + (1 << j) - (1 << i)
            if upper < 2**63:
                assert up_i <= upper, f"invariant B({i},{j})"


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(st.integers(min_value=0, max_value=2**20), min_size=1, max_size=120),
    first=st.integers(0, 30),
)
def test_array_invariants_hold(steps: list[int], first: int) -> None:
    store = store_with([(first, first)])
    offset = first
    for step in steps:
        offset += step
        store.add(*TP, offset, offset)
        slots = store.slots(TP)
        assert slots[0].upstream_offset == offset  # invariant A
        assert slots[-1].upstream_offset == first  # invariant D
    assert_sparse_sync_invariant(store.slots(TP))


# -- model of a replicated partition ---------------------------------------------------------------------


@dataclass
class Writer:
    """One instance of the source task's :class:`OffsetSyncWriter` (the real one) for the partition, each
    queued sync sent at once; ``lose`` pops one flag per send (``True``: the sync never arrives)."""

    lag_max: int
    stream: list[tuple[int, int]]
    lose: list[bool] = field(default_factory=list)
    writer: OffsetSyncWriter = field(init=False)

    def __post_init__(self) -> None:
        self.writer = OffsetSyncWriter(self.send, self.lag_max)

    def send(self, sync: OffsetSync, done: SendDone) -> None:
        if not (self.lose and self.lose.pop()):
            self.stream.append((sync.upstream_offset, sync.downstream_offset))
        done(None)

    def record(self, up: int, down: int) -> None:
        """The record copied from ``up`` was acknowledged at ``down`` (the task's ``commit_record``)."""
        self.writer.maybe_queue_offset_syncs(WRITER_TP, up, down)
        self.writer.fire_pending_offset_syncs()

    def promote(self) -> None:
        """A Connect offset commit."""
        self.writer.promote_delayed_offset_syncs()
        self.writer.fire_pending_offset_syncs()


@dataclass
class Copier:
    """One running instance of the source task: where it reads upstream and its sync writer."""

    position: int  # index into upstream of the next record it copies
    writer: Writer
    last_acked: int | None


@dataclass
class Replication:
    upstream: list[int]  # existing upstream offsets, ascending
    lag_max: int
    lose: list[bool] = field(default_factory=list)
    log: list[int | None] = field(default_factory=list)  # downstream position -> upstream offset
    stream: list[tuple[int, int]] = field(default_factory=list)
    flushed: int | None = None  # last committed source offset (Connect offset store)
    flushes: list[int | None] = field(default_factory=list)  # every commit, oldest first
    overlapped: bool = False  # two instances of the task copied the partition at once
    copier: Copier = field(init=False)

    def __post_init__(self) -> None:
        self.copier = Copier(0, Writer(self.lag_max, self.stream, self.lose), None)

    def resumed(self) -> Copier:
        """A new instance of the task, resuming after the committed offset (its reads start over)."""
        resume = -1 if self.flushed is None else self.flushed
        position = next((i for i, u in enumerate(self.upstream) if u > resume), len(self.upstream))
        return Copier(position, Writer(self.lag_max, self.stream, self.lose), self.flushed)

    def copy_one(self, copier: Copier) -> None:
        if copier.position >= len(self.upstream):
            return
        up = self.upstream[copier.position]
        copier.position += 1
        self.log.append(up)
        copier.last_acked = up
        copier.writer.record(up, len(self.log) - 1)

    def apply(self, op: tuple[str, int]) -> None:
        kind, n = op
        if kind == "copy":
            for _ in range(n):
                self.copy_one(self.copier)
        elif kind == "flush":
            self.flushed = self.copier.last_acked
            self.flushes.append(self.flushed)
            self.copier.writer.promote()
        elif kind == "restart":
            self.copier = self.resumed()  # acked but uncommitted offsets die with the old instance
        elif kind == "stop":
            # a graceful restart: the final offset commit promotes the delayed syncs and sends them
            self.apply(("flush", 0))
            self.copier = self.resumed()
        elif kind == "stale":
            # a zombie commits the offsets it held: the committed offset goes back to an older commit
            if self.flushes:
                self.flushed = self.flushes[max(0, len(self.flushes) - 1 - n)]
        elif kind == "overlap":
            # a new owner starts while the old instance (a zombie) still copies; the zombie stops after
            zombie, owner = self.copier, self.resumed()
            for i in range(n):
                self.copy_one(owner if i % 2 else zombie)
            self.copier = owner
            self.overlapped = True
        elif kind == "marker":
            self.log.append(None)

    def duplicates(self) -> bool:
        copied = [up for up in self.log if up is not None]
        return len(set(copied)) != len(copied)

    def unambiguous(self) -> bool:
        """Every record copied once and no re-copy in flight, so re-read counts are well defined."""
        if self.duplicates():
            return False
        copied = [up for up in self.log if up is not None]
        position = self.copier.position
        return position >= len(self.upstream) or not copied or self.upstream[position] > max(copied)

    def first_copy_positions(self, limit: int) -> list[int]:
        """``F(u)`` for ``u`` in ``0..limit``: the lowest downstream position of a copy of any record
        ``>= u`` (the safety rule of :mod:`connectors.mirror.offsets.translation`), else the log end."""
        out = [len(self.log)] * (limit + 2)
        lowest: dict[int, int] = {}
        for pos, up in enumerate(self.log):
            if up is not None and up <= limit:
                lowest.setdefault(up, pos)
        for u in range(limit, -1, -1):
            out[u] = min(out[u + 1], lowest.get(u, len(self.log)))
        return out[: limit + 1]

    def last_copy_positions(self, limit: int) -> list[int]:
        """The largest position a consumer can resume from without missing a record ``>= u`` *if the
        running instance goes on copying* (Java's guarantee): the minimum, over records ``r >= u``, of
        the position of ``r``'s last copy, where records it has still to (re)copy count at the log end."""
        position = self.copier.position
        upcoming = self.upstream[position] if position < len(self.upstream) else limit + 1
        last_copy: dict[int, int] = {}
        for pos, up in enumerate(self.log):
            if up is not None and up < upcoming:
                last_copy[up] = pos
        out = [len(self.log)] * (limit + 2)
        for u in range(limit, -1, -1):
            out[u] = min(out[u + 1], last_copy.get(u, len(self.log)))
        return out[: limit + 1]


@st.composite
def holed_sources(draw: st.DrawFn) -> list[int]:
    """Upstream offsets with holes of 1, 2 or 5 offsets between records."""
    holes = draw(st.lists(st.sampled_from([0] * 10 + [1, 1, 2, 5]), min_size=1, max_size=160))
    upstream, offset = [], draw(st.integers(0, 4))
    for hole in holes:
        offset += hole
        upstream.append(offset)
        offset += 1
    return upstream


@st.composite
def transactional_sources(draw: st.DrawFn) -> list[int]:
    """The upstream offsets a ``read_committed`` consumer (the source task) sees in a partition written by
    transactional and plain producers and then compacted: a committed transaction's records and its
    commit marker, an aborted transaction's records and abort marker (none of them seen), plain records,
    and records removed by compaction anywhere."""
    segments = draw(
        st.lists(
            st.tuples(st.sampled_from(["commit", "commit", "abort", "plain"]), st.integers(1, 12)),
            min_size=1,
            max_size=25,
        )
    )
    offset = draw(st.integers(0, 3))
    written: list[int] = []
    for kind, size in segments:
        if kind != "abort":
            written.extend(range(offset, offset + size))
        offset += size + (0 if kind == "plain" else 1)
    compacted = draw(
        st.lists(st.sampled_from([False] * 7 + [True]), min_size=len(written), max_size=len(written))
    )
    upstream = [u for u, gone in zip(written, compacted, strict=True) if not gone]
    assume(upstream)
    return upstream


@st.composite
def replications(draw: st.DrawFn, *, lossy: bool = False) -> tuple[Replication, int, bool]:
    """Replicated partitions with upstream holes (or transactional and compacted sources), restarts that
    re-copy unflushed records, graceful restarts, stale commits (a zombie's rewinding commit, so a later
    restart re-copies a long run again), overlapping instances of the task, and EOS markers downstream."""
    upstream = draw(st.one_of(holed_sources(), transactional_sources()))
    lag_max = draw(st.sampled_from([0, 1, 3, 10, 100]))
    lose = draw(st.lists(st.booleans(), max_size=60)) if lossy else []
    rep = Replication(upstream, lag_max, lose)
    ops = draw(
        st.lists(
            st.one_of(
                st.tuples(st.just("copy"), st.integers(1, 40)),
                st.tuples(st.sampled_from(["stale", "overlap"]), st.integers(0, 30)),
                st.tuples(st.sampled_from(["flush", "restart", "stop", "marker"]), st.just(0)),
            ),
            max_size=25,
        )
    )
    note(f"ops={ops}")
    for op in [("copy", 1), *ops]:
        rep.apply(op)
    initial = draw(st.integers(0, len(rep.stream)))
    must = draw(st.booleans())
    return rep, initial, must


@st.composite
def normal_copies(draw: st.DrawFn) -> tuple[Replication, int, bool]:
    """The normal case over transactional and compacted sources: one instance at a time copies, offset
    commits at any points, graceful restarts (no crash, no zombie, no EOS on the target); the last
    offset commit comes after the last copy."""
    upstream = draw(transactional_sources())
    rep = Replication(upstream, draw(st.sampled_from([0, 1, 3, 10, 100])))
    ops = draw(
        st.lists(
            st.one_of(
                st.tuples(st.just("copy"), st.integers(1, 40)),
                st.tuples(st.sampled_from(["flush", "stop"]), st.just(0)),
            ),
            max_size=20,
        )
    )
    note(f"ops={ops}")
    for op in [("copy", 1), *ops, ("flush", 0)]:
        rep.apply(op)
    return rep, draw(st.integers(0, len(rep.stream))), draw(st.booleans())


def build(rep: Replication, initial: int, must: bool, mode: str, max_runs: int) -> OffsetSyncStore:
    return store_with(
        rep.stream, mode=mode, initial=initial, must=must, max_runs=max_runs, max_offset_lag=rep.lag_max
    )


def consecutive_pairs_since_last_clear(
    rep: Replication, initial: int, must: bool
) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    start = 0
    for i, (up, _) in enumerate(rep.stream):
        if i == 0 or (must and i < initial) or up < rep.stream[i - 1][0]:
            start = i
    kept = rep.stream[start:]
    return list(itertools.pairwise(kept))


PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(case=replications(), max_runs=st.sampled_from([2, 64, 10_000]))
def test_exact_never_passes_the_first_copy_of_the_next_record(
    case: tuple[Replication, int, bool], max_runs: int
) -> None:
    """(a) For every group position ``u``: exact mode never lands past ``F(u)``, the first copy of the
    group's next record, over rewinds, repeated runs, overlapping instances, gaps and markers, while the
    history holding the first copies is kept; with a short history it keeps Java's guarantee (the later
    copy, when one instance at a time copies). Java mode keeps Java's guarantee only."""
    rep, initial, must = case
    note(
        f"upstream={rep.upstream} log={rep.log} stream={rep.stream} initial={initial} must={must} "
        f"lag_max={rep.lag_max}"
    )
    limit = rep.upstream[-1] + 2
    first = rep.first_copy_positions(limit)
    last = rep.last_copy_positions(limit)
    java = build(rep, initial, must, "java", max_runs)
    exact = build(rep, initial, must, "exact", max_runs)
    previous = {"java": -1, "exact": -1}
    one_copy_each = not rep.duplicates() and None not in rep.log
    settled = rep.unambiguous()
    markers = None in rep.log
    for u in range(limit + 1):
        j, e = java.translate_downstream("g", TP, u), exact.translate_downstream("g", TP, u)
        assert j is not None and e is not None
        assert (j == -1) == (e == -1)
        if j == -1:
            continue
        if max_runs == 10_000:
            assert e <= first[u], f"exact passes the first copy at {u}"
        elif not rep.overlapped:
            assert e <= last[u], f"exact skips at {u}"
        if not rep.overlapped:
            assert j <= last[u], f"java skips at {u}"
        if one_copy_each:
            assert e >= j, f"exact re-reads more than Java at {u}"
        # Java's array assumes one writer's order: a zombie's sync sent late (a promoted delayed one, or
        # the one before a break) can make its answers go back
        assert e >= previous["exact"] and (rep.overlapped or j >= previous["java"]), f"not monotonic at {u}"
        previous = {"java": j, "exact": e}
        for store, value in ((java, j), (exact, e)) if settled else ():
            t = store.translate(TP, u)
            assert t is not None
            if t.reread is not None:
                # a run is exact unless EOS markers hide an upstream hole (then only safe)
                assert t.reread <= first[u] - value if markers else t.reread == first[u] - value
            if t.reread_bound is not None:
                assert first[u] - value <= t.reread_bound


@PROPERTY
@given(case=replications())
def test_exact_when_copied_contiguously_since_the_last_sync(case: tuple[Replication, int, bool]) -> None:
    """(b) Every record copied once, no marker, contiguous copy between consecutive syncs (no rewind):
    exact mode re-reads nothing. (Extra downstream offsets elsewhere may cost re-reads within
    ``offset.lag.max`` of them: the floor cannot tell them from an unsynced copy.)"""
    rep, initial, must = case
    if rep.duplicates() or None in rep.log:
        return
    exact = build(rep, initial, must, "exact", 10_000)
    truth = rep.first_copy_positions(rep.upstream[-1] + 2)
    for (a_up, a_down), (b_up, _) in consecutive_pairs_since_last_clear(rep, initial, must):
        span = b_up - a_up
        contiguous = span > 0 and all(
            a_down + k < len(rep.log) and rep.log[a_down + k] == a_up + k for k in range(span + 1)
        )
        if not contiguous:
            continue
        for u in range(a_up + 1, b_up + 1):
            expected = a_down + (u - a_up)
            assert truth[u] == expected  # sanity of the model
            t = exact.translate(TP, u)
            assert t is not None and (t.downstream_offset, t.exact, t.reread) == (expected, True, 0)
            assert exact.expected_reread(TP, u) == 0


@PROPERTY
@given(case=normal_copies())
def test_exact_re_reads_nothing_over_transactional_and_compacted_sources(
    case: tuple[Replication, int, bool],
) -> None:
    """(c) Transactions with a marker after each, aborted transactions, compaction, offset commits and
    graceful restarts anywhere: every break in the copy is synced on both sides, so for every group
    position ``u`` exact mode answers ``F(u)``, the copy of the group's next record (the log end past
    the last copy), and proves it (``exact``, ``reread == 0``); Java mode never passes it."""
    rep, initial, must = case
    note(f"upstream={rep.upstream} stream={rep.stream} initial={initial} must={must} lag_max={rep.lag_max}")
    assert not rep.duplicates() and None not in rep.log  # the normal case: one copy of each record
    limit = rep.upstream[-1] + 2
    first = rep.first_copy_positions(limit)
    last_copied = max(up for up in rep.log if up is not None)
    java = build(rep, initial, must, "java", 10_000)
    exact = build(rep, initial, must, "exact", 10_000)
    translated = 0
    for u in range(limit + 1):
        j, t = java.translate_downstream("g", TP, u), exact.translate(TP, u)
        assert j is not None and t is not None
        assert (j == -1) == (t.downstream_offset == -1)
        if j == -1:
            continue
        translated += 1
        assert j <= first[u], f"java skips at {u}"
        assert t.downstream_offset == first[u], f"exact re-reads or skips at {u}"
        if u <= last_copied:
            assert (t.exact, t.reread) == (True, 0), f"not proven at {u}"
    assert translated > 0


def test_transactions_of_ten_records_translate_to_the_next_record() -> None:
    """Transactions of 10 records, a commit marker after each (upstream 10, 21, 32, ...), copied by one
    task with offset.lag.max = 100 (Java's default) and an offset commit every 37 records: a group at
    any offset, a marker's included, translates to the downstream offset of its next record. Over the
    stream Java's writer would emit for the same copy (only the first record after each marker, plus the
    promoted syncs) exact mode re-reads inside transactions, never past the next record."""
    transactions = 50
    upstream = [11 * t + i for t in range(transactions) for i in range(10)]
    rep = Replication(upstream, lag_max=100)
    for _ in range(0, len(upstream), 37):
        rep.apply(("copy", 37))
        rep.apply(("flush", 0))
    limit = upstream[-1] + 1
    first = rep.first_copy_positions(limit)
    # record 11t+i is copied to 10t+i; the marker 11t+10 is followed by record 11(t+1) at 10(t+1)
    assert first == [u - u // 11 for u in range(limit + 1)]
    exact, java = build(rep, 0, True, "exact", 64), build(rep, 0, True, "java", 64)
    assert len(exact.runs(TP)) == transactions  # one run per transaction: the history covers them all
    assert [exact.translate_downstream("g", TP, u) for u in range(limit + 1)] == first
    assert all(exact.expected_reread(TP, u) == 0 for u in range(limit))
    java_answers = [java.translate_downstream("g", TP, u) for u in range(limit + 1)]
    assert all(a is not None and 0 <= a <= f for a, f in zip(java_answers, first, strict=True))

    java_writer, delayed, java_stream = PartitionState(100), None, []
    for down, up in enumerate(upstream):
        if java_writer.update(up, down):
            java_writer.reset()
            java_stream.append((up, down))
            delayed = None
        else:
            delayed = (up, down)
        if down % 37 == 36 and delayed is not None:
            java_stream.append(delayed)
            delayed = None
    assert set(java_stream) < set(rep.stream)
    over_java = store_with(java_stream, max_offset_lag=100)
    answers = [over_java.translate_downstream("g", TP, u) for u in range(limit + 1)]
    assert all(a is not None and 0 <= a <= f for a, f in zip(answers, first, strict=True))
    assert sum(f - a for a, f in zip(answers, first, strict=True) if a is not None) > 0


def test_a_failed_send_around_a_hole_costs_re_reads_never_a_skip() -> None:
    """Why exact mode interpolates only along equal deltas, never across a hole it cannot see. Upstream
    111..114 are a hole; the syncs around it ((110, 10) and (115, 11)) and the next offset commit's
    (120, 16) fail to send (a failed sync is not retried), then the task restarts after the committed 120.
    The stream shows only (100, 0) -> (121, 17): 21 upstream offsets over 17 downstream ones, which a hole
    right before (121, 17) would also explain. Interpolating as if it were there (``a.down + min(u -
    a.up, b.down - a.down)``) passes the copy of 115 at 11; exact mode falls back to ``+1`` and re-reads."""
    upstream = [*range(100, 111), *range(115, 140)]
    rep = Replication(upstream, lag_max=100, lose=[False, True, True, True, False])
    for op in (("copy", 17), ("flush", 0), ("restart", 0), ("copy", 5)):
        rep.apply(op)
    assert rep.stream[:2] == [(100, 0), (121, 17)] and not rep.lose
    first = rep.first_copy_positions(121)
    (a_up, a_down), (b_up, b_down) = rep.stream[:2]
    interpolated = {u: a_down + min(u - a_up, b_down - a_down) for u in range(a_up + 1, b_up + 1)}
    assert any(interpolated[u] > first[u] for u in interpolated)
    exact = build(rep, 0, True, "exact", 64)
    for u in interpolated:
        answer = exact.translate_downstream("g", TP, u)
        assert answer is not None and 0 < answer <= first[u]


@PROPERTY
@given(case=replications(lossy=True))
def test_java_mode_never_skips_even_when_syncs_are_lost(case: tuple[Replication, int, bool]) -> None:
    """Java's guarantee (the later copy is safe) needs one instance at a time, not the syncs."""
    rep, initial, must = case
    if not rep.stream or rep.overlapped:
        return
    limit = rep.upstream[-1] + 2
    truth = rep.last_copy_positions(limit)
    java = build(rep, initial, must, "java", 64)
    for u in range(limit + 1):
        j = java.translate_downstream("g", TP, u)
        assert j is not None and j <= truth[u]


def test_precision_on_a_plain_partition() -> None:
    """offset.lag.max = 100 (Java's default), 5000 records, an offset flush every 700 records: what a
    consumer group re-reads after fail-over, for every committed offset."""
    rep = Replication(list(range(5000)), lag_max=100)
    for _ in range(7):
        rep.apply(("copy", 700))
        rep.apply(("flush", 0))
    truth = rep.first_copy_positions(5001)
    java, exact = build(rep, 0, True, "java", 64), build(rep, 0, True, "exact", 64)
    offsets = range(1, 4900)  # the copied records; past the newest sync nothing is proven
    java_reread = [truth[u] - (java.translate_downstream("g", TP, u) or 0) for u in offsets]
    exact_reread = [truth[u] - (exact.translate_downstream("g", TP, u) or 0) for u in offsets]
    assert exact_reread == [0] * len(offsets)
    # Java: up to offset.lag.max for recent offsets, thousands for older ones whose syncs were thinned out
    assert max(java_reread[-150:]) == 99
    assert (max(java_reread), round(sum(java_reread) / len(offsets))) == (3230, 1154)
    assert all(exact.expected_reread(TP, u) == 0 for u in offsets)
    assert [java.expected_reread(TP, u) for u in offsets] == java_reread


def test_a_zombie_rewind_re_copies_a_run_and_exact_mode_stays_at_the_first_copy() -> None:
    """The reliability issue's chaos run in small: an instance commits its offsets every 500 records; a
    zombie's stale commit rewinds the committed offset by 3,750 records and the next restart copies them
    again. Exact mode answers the first copy (re-reads nothing inside the first copy's run); Java lands
    on the second copy, up to 3,750 offsets past it. Past the duplicated run plus ``offset.lag.max``
    exact mode is exact again."""
    rep = Replication(list(range(12_000)), lag_max=100)
    for _ in range(16):
        rep.apply(("copy", 500))
        rep.apply(("flush", 0))
    committed = rep.flushed
    assert committed == 7999
    rep.flushed = committed - 3750  # the zombie's commit
    rep.apply(("restart", 0))
    for _ in range(8):
        rep.apply(("copy", 500))
        rep.apply(("flush", 0))
    first = rep.first_copy_positions(12_001)
    java, exact = build(rep, 0, True, "java", 64), build(rep, 0, True, "exact", 64)
    duplicated = range(committed - 3749, committed + 1)
    assert all(first[u] == u for u in duplicated)  # the first copy keeps offsets
    assert [exact.translate_downstream("g", TP, u) for u in duplicated] == [first[u] for u in duplicated]
    past = [java.translate_downstream("g", TP, u) - first[u] for u in duplicated]  # type: ignore[operator]
    assert min(past) > 0 and max(past) >= 3750
    t = exact.translate(TP, committed - 100)
    assert t is not None and (t.exact, t.reread) == (True, 0)
    t = java.translate(TP, committed - 100)
    assert t is not None and t.reread is not None and t.reread < -3000  # negative: past the first copy
    beyond = range(committed + 1 + 100, 11_900)
    assert all(exact.translate_downstream("g", TP, u) == first[u] for u in beyond)
    # the first instance could have copied up to offset.lag.max records past its last sync (7999, 7999)
    # without a sync, so there exact mode re-reads the duplicated run: never more
    near = range(committed + 1, committed + 101)
    assert [exact.translate_downstream("g", TP, u) for u in near] == list(near)
    assert {first[u] - u for u in near} == {3750}
