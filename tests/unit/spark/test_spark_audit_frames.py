"""The audits' Spark logic on small hand-made DataFrames in a local Spark session (no Kafka).

Replication: clean copies, missing records in the middle and at the tail, duplicates, mismatches, and
the content rules (headers order, null vs empty bytes, timestamps, identical records as a multiset).
Translation: true positions (the first copy of a duplicated run), re-read counts in records (not
offsets) across a target gap, violations with the records they skip, offset-sync verification,
undecodable records, the group filter, and agreement with what OffsetSyncStore promises for the same
syncs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from connectors.mirror.checkpoint_records import Checkpoint
from connectors.mirror.offsets.translation import OffsetSyncStore
from connectors.mirror.records import OffsetSync
from spark_analytics import copies
from spark_analytics.kafka_frames import HEADERS_TYPE
from spark_analytics.mirror_codecs import decode_checkpoints, decode_offset_syncs
from spark_analytics.replication_audit import audit_replication_frames
from spark_analytics.session import local_spark
from spark_analytics.translation_audit import (
    SYNC_OK,
    SYNC_UNVERIFIABLE,
    SYNC_VIOLATION,
    audit_translation_frames,
)

RECORDS = (
    f"topic string, partition int, offset bigint, key binary, value binary, headers {HEADERS_TYPE}, "
    "timestamp_ms bigint"
)
RAW = "key binary, value binary, partition int, offset bigint"
Record = tuple[Any, ...]


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    with local_spark("pyconnect-unit-tests") as session:
        yield session


def rec(
    partition: int,
    offset: int,
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[tuple[str, bytes | None]] = (),
    ts: int = 1_700_000_000_000,
    topic: str = "t",
) -> Record:
    return (topic, partition, offset, key, value, list(headers), ts)


def frame(spark: SparkSession, rows: list[Record]) -> DataFrame:
    return spark.createDataFrame(rows, RECORDS)


def numbered(partition: int, offsets: Sequence[int], first_content: int = 0) -> list[Record]:
    """Records whose content is numbered from ``first_content`` at the given offsets."""
    return [
        rec(
            partition,
            o,
            f"k{first_content + i}".encode(),
            f"v{first_content + i}".encode(),
            ts=1000 + first_content + i,
        )
        for i, o in enumerate(offsets)
    ]


def counts(audit: Any) -> dict[int, tuple[int, int, int, int, int, int]]:
    return {
        p.partition: (p.source_count, p.target_count, p.missing, p.missing_tail, p.duplicates, p.mismatches)
        for p in audit.partitions
    }


# -- replication ---------------------------------------------------------------------------------


def test_a_faithful_copy_is_clean_even_at_other_offsets(spark: SparkSession) -> None:
    source = frame(spark, numbered(0, range(5)) + numbered(1, range(3), 10))
    # Target offsets differ (the remote topic had earlier records deleted); content is what counts.
    target = frame(spark, numbered(0, range(100, 105)) + numbered(1, range(7, 10), 10))
    audit = audit_replication_frames(source, target, {"t": "A.t"}, source_alias="A")
    assert counts(audit) == {0: (5, 5, 0, 0, 0, 0), 1: (3, 3, 0, 0, 0, 0)}
    assert audit.ok() and not audit.samples and audit.empty_topics == []
    assert audit.to_json()["totals"]["source_count"] == 8


def test_missing_duplicate_and_mismatch_are_told_apart(spark: SparkSession) -> None:
    source = frame(spark, numbered(0, range(6)))
    copied = numbered(0, range(6))
    target_rows = [
        copied[0],
        copied[1],
        copied[3],  # content 2 lost in the middle
        (*copied[3][:2], 3, *copied[3][3:]),  # content 3 again: a duplicate
        rec(0, 4, b"k4", b"changed", ts=1004),  # content 4 altered: missing + mismatch
    ]
    target_rows = [(*r[:2], i, *r[3:]) for i, r in enumerate(target_rows)]  # target offsets 0..4
    audit = audit_replication_frames(source, frame(spark, target_rows), {"t": "A.t"}, sample=10)
    # Missing: contents 2, 4 and 5; 5 is after the last copied record (3), so it is the tail.
    assert counts(audit) == {0: (6, 5, 3, 2, 1, 1)}
    kinds = sorted((s.kind, s.cluster, s.offset, s.source_offset, s.target_offset) for s in audit.samples)
    assert kinds == [
        ("duplicate", "target", 3, 3, 3),  # a second copy of source 3
        ("mismatch", "target", 4, None, 4),  # no copied record follows it
        ("missing", "source", 2, 2, 2),  # belongs before target 2, the copy of source 3
        ("missing", "source", 4, 4, None),
        ("missing", "source", 5, 5, None),
    ]
    mismatch = next(s for s in audit.samples if s.kind == "mismatch")
    assert (mismatch.key, mismatch.value, mismatch.remote_topic) == ("'k4'", "'changed'", "A.t")
    assert not audit.ok() and not audit.ok(allow_lag=True)
    assert "FAILED" in audit.render()


def test_offending_records_are_located_on_both_sides(spark: SparkSession) -> None:
    # Source: X a X b X (X byte-identical at 0, 2, 4), then c d e at 5-7. The target holds the copy of
    # 0-4, then a rewind copied 2-4 again (X b X at 5-7), then c, an altered d, and e at 8-10.
    x = rec(0, 0, b"x", b"X")
    named = {
        o: rec(0, o, n, n, ts=2000 + o) for o, n in ((1, b"a"), (3, b"b"), (5, b"c"), (6, b"d"), (7, b"e"))
    }
    source_rows = [named.get(o, (*x[:2], o, *x[3:])) for o in range(8)]
    copied = [source_rows[o] for o in (0, 1, 2, 3, 4, 2, 3, 4, 5)] + [
        rec(0, 0, b"d", b"changed", ts=2006),
        source_rows[7],
    ]
    target_rows = [(*r[:2], i, *r[3:]) for i, r in enumerate(copied)]
    audit = audit_replication_frames(frame(spark, source_rows), frame(spark, target_rows), {"t": "A.t"})
    located = sorted((s.kind, s.source_offset, s.target_offset) for s in audit.samples)
    assert located == [
        ("duplicate", 2, 5),  # the extra copies of X align with its last occurrences: 2 and 4
        ("duplicate", 3, 6),
        ("duplicate", 4, 7),
        ("mismatch", 7, 9),  # the altered d sits just before the copy of source 7 (e)
        ("missing", 6, 10),  # d belongs before target 10, the copy of e
    ]
    lines = [s.describe() for s in audit.samples]
    assert any("@5 (copy of source 2)" in line for line in lines), lines
    assert audit.to_json()["samples"][0]["source_offset"] == 2


def test_only_a_missing_tail_passes_with_allow_lag(spark: SparkSession) -> None:
    source = frame(spark, numbered(0, range(10)))
    target = frame(spark, numbered(0, range(7)))
    audit = audit_replication_frames(source, target, {"t": "A.t"}, sample=0)
    assert counts(audit) == {0: (10, 7, 3, 3, 0, 0)}
    assert not audit.ok() and audit.ok(allow_lag=True)
    assert audit.samples == []


def test_content_is_partition_key_value_headers_and_timestamp(spark: SparkSession) -> None:
    h = [("a", b"1"), ("b", None)]
    source = frame(
        spark,
        [
            rec(0, 0, None, b"v", h),
            rec(0, 1, b"", b"v1", h),
            rec(0, 2, b"k", None, h),
            rec(0, 3, b"k", b"v", h, ts=5),
            rec(0, 4, b"same", b"same"),
            rec(0, 5, b"same", b"same"),
        ],
    )
    target = frame(
        spark,
        [
            rec(0, 0, None, b"v", h),  # equal
            rec(0, 1, None, b"v1", h),  # empty key became null: mismatch (and source offset 1 missing)
            rec(0, 2, b"k", None, list(reversed(h))),  # header order changed: mismatch
            rec(0, 3, b"k", b"v", h, ts=6),  # timestamp changed: mismatch
            rec(1, 4, b"same", b"same"),  # moved to another partition: mismatch there
            rec(0, 5, b"same", b"same"),  # one of the two identical records
        ],
    )
    audit = audit_replication_frames(source, target, {"t": "A.t"})
    assert counts(audit) == {0: (6, 5, 4, 1, 0, 3), 1: (0, 1, 0, 0, 0, 1)}


def test_topics_without_records_are_listed(spark: SparkSession) -> None:
    source = frame(spark, numbered(0, range(2)))
    audit = audit_replication_frames(source, frame(spark, numbered(0, range(2))), {"t": "A.t", "u": "A.u"})
    assert audit.empty_topics == ["u"]
    assert "no records on either side for u -> A.u" in audit.render()


def test_pairs_follow_offset_order_within_identical_content(spark: SparkSession) -> None:
    same = [rec(0, o, b"x", b"y") for o in (0, 3, 7)]
    target = [rec(0, o, b"x", b"y") for o in (10, 11)]
    matched = copies.match_copies(copies.digests(frame(spark, same)), copies.digests(frame(spark, target)))
    pairs = sorted((r["source_offset"], r["target_offset"]) for r in copies.paired_offsets(matched).collect())
    assert pairs == [(0, 10), (3, 11)]
    left = [(r["kind"], r["offset"]) for r in copies.leftovers(matched).collect()]
    assert left == [("missing", 7)]


# -- translation ---------------------------------------------------------------------------------


def raw_syncs(spark: SparkSession, syncs: Sequence[OffsetSync], garbage: int = 0) -> DataFrame:
    rows = [(s.record_key(), s.record_value(), 0, i) for i, s in enumerate(syncs)]
    rows += [(b"\x00", b"\x01", 0, len(rows) + i) for i in range(garbage)]
    return decode_offset_syncs(spark.createDataFrame(rows, RAW))


def raw_checkpoints(spark: SparkSession, checkpoints: Sequence[Checkpoint], garbage: int = 0) -> DataFrame:
    rows = [(c.record_key(), c.record_value(), 0, i) for i, c in enumerate(checkpoints)]
    rows += [(None, b"\x00", 0, len(rows) + i) for i in range(garbage)]
    return decode_checkpoints(spark.createDataFrame(rows, RAW))


def test_checkpoints_against_the_data(spark: SparkSession) -> None:
    # Source partition 0: contents 0..9 at offsets 0..9. The target holds them at 0..4 and 6..10 (an
    # offset without a record, e.g. a transaction marker, at 5) and a record of its own at 11.
    source = frame(spark, numbered(0, range(10)))
    target = frame(spark, [*numbered(0, [0, 1, 2, 3, 4, 6, 7, 8, 9, 10]), rec(0, 11, b"own", b"own")])
    syncs = [OffsetSync("t", 0, 0, 0), OffsetSync("t", 0, 5, 6), OffsetSync("t", 0, 8, 2)]
    cps = [
        Checkpoint("g1", "A.t", 0, 4, 4, "m"),  # exact
        Checkpoint("g1", "A.t", 0, 7, 7, ""),  # sync at 5 -> 6, +1 rule: 7 < true 8, re-reads 1
        Checkpoint("g1", "A.t", 0, 5, 5, ""),  # 5 < true 6, but offset 5 holds no record: re-reads 0
        Checkpoint("g2", "A.t", 0, 2, 4, ""),  # past the true position 2: skips records 2 and 3
        Checkpoint("g2", "A.t", 0, 10, 11, ""),  # everything consumed: true position is the end (12)
        Checkpoint("g3", "A.other", 0, 1, 1, ""),  # a topic not audited
    ]
    audit = audit_translation_frames(
        source,
        target,
        raw_syncs(spark, syncs, garbage=1),
        raw_checkpoints(spark, cps, garbage=2),
        {"t": "A.t"},
        source_alias="A",
        target_alias="B",
    )
    assert audit.checkpoints == 5 and audit.violations == 1
    assert audit.undecodable == {"offset_syncs": 1, "checkpoints": 2}
    assert audit.syncs == {SYNC_OK: 2, SYNC_VIOLATION: 1, SYNC_UNVERIFIABLE: 0}
    assert [(s.upstream_offset, s.downstream_offset) for s in audit.sync_violation_samples] == [(8, 2)]
    (violation,) = audit.violation_samples
    assert (violation.group, violation.upstream_offset, violation.true_position, violation.skipped) == (
        "g2",
        2,
        2,
        2,
    )
    latest = {(c.group, c.upstream_offset): (c.true_position, c.reread, c.skipped) for c in audit.latest}
    assert latest == {("g1", 5): (6, 0, 0), ("g2", 10): (12, 1, 0)}
    groups = {g.group: g for g in audit.groups}
    assert (groups["g1"].checkpoints, groups["g1"].violations, groups["g1"].reread_max) == (3, 0, 1)
    assert groups["g1"].histogram == {"0": 2, "1-9": 1, "10-99": 0, "100-999": 0, "1000+": 0}
    assert groups["g2"].violations == 1 and groups["g2"].histogram["1-9"] == 1
    assert not audit.ok()
    assert "VIOLATION group g2 A.t-0" in audit.render()


def test_group_filter_and_unverifiable_syncs(spark: SparkSession) -> None:
    # The source lost offsets 0..2 to retention; a sync pointing there cannot be checked.
    source = frame(spark, numbered(0, range(3, 6), 3))
    target = frame(spark, numbered(0, range(6)))
    syncs = [OffsetSync("t", 0, 1, 1), OffsetSync("t", 0, 4, 4), OffsetSync("elsewhere", 0, 1, 1)]
    cps = [Checkpoint("g1", "A.t", 0, 4, 4, ""), Checkpoint("g2", "A.t", 0, 5, 9, "")]
    audit = audit_translation_frames(
        source, target, raw_syncs(spark, syncs), raw_checkpoints(spark, cps), {"t": "A.t"}, groups=["g1"]
    )
    assert audit.syncs == {SYNC_OK: 1, SYNC_VIOLATION: 0, SYNC_UNVERIFIABLE: 1}
    assert audit.checkpoints == 1 and audit.ok()
    assert [(c.group, c.true_position, c.reread) for c in audit.latest] == [("g1", 4, 0)]


def test_rereads_equal_the_promises_of_the_offset_sync_store(spark: SparkSession) -> None:
    # A gap-free copy shifted by 3 on the target, with syncs every 10 records as offset.lag.max would
    # leave them: Java mode re-reads from its +1 rule on the sync it kept, exact mode re-reads nothing.
    source = frame(spark, numbered(0, range(40)))
    target = frame(spark, [rec(0, o, b"old", b"old", ts=o) for o in range(3)] + numbered(0, range(3, 43)))
    syncs = [OffsetSync("t", 0, up, up + 3) for up in (0, 10, 20, 30, 39)]
    store = OffsetSyncStore()
    store.start(must_read_to_end=False)
    store.handle_syncs(syncs)
    store.mark_read_to_end()
    committed = [0, 5, 10, 17, 25, 39, 40]
    checkpoints: list[Checkpoint] = []
    promised: dict[tuple[str, int], int | None] = {}
    for mode in ("java", "exact"):
        for upstream in committed:
            translation = store.translate(("t", 0), upstream, mode=mode)
            assert translation is not None
            group = f"{mode}-{upstream}"
            checkpoints.append(Checkpoint(group, "A.t", 0, upstream, translation.downstream_offset))
            promised[(group, upstream)] = translation.reread
    audit = audit_translation_frames(
        source, target, raw_syncs(spark, syncs), raw_checkpoints(spark, checkpoints), {"t": "A.t"}
    )
    assert audit.ok() and audit.syncs[SYNC_OK] == len(syncs)
    measured = {(c.group, c.upstream_offset): c.reread for c in audit.latest}
    # Past the newest sync the store promises no count (nothing bounds what is not replicated yet);
    # here everything was replicated, so the audit finds the true end and no re-read.
    assert promised.pop(("java-40", 40)) is None and promised.pop(("exact-40", 40)) is None
    assert measured.pop(("java-40", 40)) == 0 and measured.pop(("exact-40", 40)) == 0
    assert measured == promised
    assert all(n == 0 for (group, _), n in measured.items() if group.startswith("exact"))
    assert measured[("java-17", 17)] > 0, "Java mode resumes before the true position between syncs"


def test_a_duplicated_run_is_judged_by_its_first_copy(spark: SparkSession) -> None:
    # Source contents 0..19. The target holds 0..14 at 0..14; a stale commit rewound the task to 8, which
    # copied 8..19 again at 15..26: 8..14 twice. A group at 10 must resume at or before 10 (the first
    # copy); the later copy at 17 skips the first copies 10..14 and the second copies of 8, 9.
    source = frame(spark, numbered(0, range(20)))
    target = frame(spark, numbered(0, range(15)) + numbered(0, range(15, 27), 8))
    syncs = [
        OffsetSync("t", 0, 0, 0),
        OffsetSync("t", 0, 14, 14),
        OffsetSync("t", 0, 8, 15),
        OffsetSync("t", 0, 19, 26),
    ]
    store = OffsetSyncStore()
    store.start(must_read_to_end=False)
    store.handle_syncs(syncs)
    store.mark_read_to_end()
    exact, java = (
        store.translate_downstream("g", ("t", 0), 10),
        store.translate_downstream("g", ("t", 0), 10, mode="java"),
    )
    assert (exact, java) == (10, 16)
    cps = [
        Checkpoint("first-copy", "A.t", 0, 10, 10, ""),
        Checkpoint("later-copy", "A.t", 0, 10, 17, ""),
        Checkpoint("exact", "A.t", 0, 10, exact, ""),
        Checkpoint("java", "A.t", 0, 10, java, ""),
        Checkpoint("past-the-run", "A.t", 0, 16, 23, ""),  # 16 was copied once, at 23
    ]
    audit = audit_translation_frames(
        source, target, raw_syncs(spark, syncs), raw_checkpoints(spark, cps), {"t": "A.t"}
    )
    assert audit.syncs == {SYNC_OK: 4, SYNC_VIOLATION: 0, SYNC_UNVERIFIABLE: 0}
    judged = {c.group: (c.true_position, c.reread, c.skipped) for c in audit.latest}
    assert judged == {
        "first-copy": (10, 0, 0),
        "later-copy": (10, 0, 7),
        "exact": (10, 0, 0),
        "java": (10, 0, 6),
        "past-the-run": (23, 0, 0),
    }
    assert audit.checkpoints == 5 and audit.violations == 2 and not audit.ok()
    assert {v.group for v in audit.violation_samples} == {"later-copy", "java"}


def test_two_swapped_copies_are_one_reordered_record(spark: SparkSession) -> None:
    source = frame(spark, numbered(0, range(6)))
    copied = numbered(0, range(6))
    swapped = [copied[0], copied[1], copied[3], copied[2], copied[4], copied[5]]
    target = frame(spark, [(*r[:2], i, *r[3:]) for i, r in enumerate(swapped)])
    audit = audit_replication_frames(source, target, {"t": "A.t"}, sample=10)
    assert counts(audit) == {0: (6, 6, 0, 0, 0, 0)}
    assert audit.total("reordered") == 1 and not audit.ok()
    (sample,) = audit.samples
    # k3's copy (target 2) lands before k2's (target 3): k3 is the one out of place.
    assert (sample.kind, sample.cluster, sample.offset, sample.key) == ("reordered", "target", 2, "'k3'")
    assert (sample.source_offset, sample.target_offset) == (3, 2)
    in_order = audit_replication_frames(source, frame(spark, copied), {"t": "A.t"})
    assert in_order.total("reordered") == 0 and in_order.ok()


def test_a_target_that_started_mid_stream_misses_a_head(spark: SparkSession) -> None:
    source = frame(spark, numbered(0, range(10)))
    started_late = [(*r[:2], i, *r[3:]) for i, r in enumerate(numbered(0, range(10))[4:])]
    audit = audit_replication_frames(source, frame(spark, started_late), {"t": "A.t"}, sample=0)
    (partition,) = audit.partitions
    assert (partition.missing, partition.missing_head, partition.missing_tail) == (4, 4, 0)
    assert not audit.ok() and audit.to_json()["totals"]["missing_head"] == 4
    assert "head" in audit.render().splitlines()[0]


def test_retention_on_either_side_is_unverifiable_and_a_loss_inside_is_still_found(
    spark: SparkSession,
) -> None:
    # Partition 0: the source deleted 0-3 after they were copied; the deleted record 1 is byte-identical
    # to the surviving 7 (it must not be taken for 7's copy).
    copied = numbered(0, range(10))
    copied[1] = (*copied[7][:2], 1, *copied[7][3:])
    source = numbered(0, range(10))[4:]
    # Partition 1: the target's retention deleted the copies of 0-2 (it starts at 3); 6 was really lost.
    source += numbered(1, range(10), 10)
    kept = [r for r in numbered(1, range(10), 10)[3:] if r[2] != 6]
    target = copied + [(*r[:2], 3 + i, *r[3:]) for i, r in enumerate(kept)]
    # Partition 2: the target starts at 2, so at most 2 of the 4 missing head records are its retention.
    source += numbered(2, range(6), 20)
    target += [(*r[:2], 2 + i, *r[3:]) for i, r in enumerate(numbered(2, range(6), 20)[4:])]
    audit = audit_replication_frames(frame(spark, source), frame(spark, target), {"t": "A.t"}, sample=10)
    got = {
        p.partition: (
            p.source_count,
            p.target_count,
            p.missing,
            p.missing_head,
            p.mismatches,
            p.reordered,
            p.unverifiable_source_retention,
            p.source_retention_offsets,
            p.unverifiable_target_retention,
            p.target_retention_offsets,
        )
        for p in audit.partitions
    }
    assert got == {
        0: (6, 10, 0, 0, 0, 0, 4, (0, 3), 0, None),
        1: (10, 6, 1, 0, 0, 0, 0, None, 3, (0, 2)),
        2: (6, 2, 2, 2, 0, 0, 0, None, 2, (2, 3)),
    }
    assert not audit.ok() and audit.total("missing") == 3
    assert sorted((s.kind, s.partition, s.offset) for s in audit.samples) == [
        ("missing", 1, 6),
        ("missing", 2, 0),
        ("missing", 2, 1),
    ]
    assert "unverifiable: 4 target records" in (audit.retention_note() or "")
