"""The retention rule of the replication audit (pure, no Spark): which head records are unverifiable."""

from __future__ import annotations

from spark_analytics.retention import (
    HeadFacts,
    source_retention_cut,
    target_retention_allowance,
    unverifiable_head,
)


def test_copies_of_records_the_source_deleted_are_cut_at_the_copy_of_its_first_record() -> None:
    # Source kept 10.. of a mirror that copied 0.. to target 0..: target 0-9 copy deleted records.
    assert source_retention_cut(HeadFacts(source_first=10, target_first=0, first_copy=10)) == 10
    # The target's own retention took some of them too: still cut at the copy of the first record.
    assert source_retention_cut(HeadFacts(source_first=10, target_first=4, first_copy=10)) == 10


def test_nothing_is_cut_without_evidence_of_source_retention() -> None:
    # The source starts at 0: records before the first copy were written by someone else (mismatches).
    assert source_retention_cut(HeadFacts(source_first=0, target_first=0, first_copy=3)) == 0
    # The source's first record has no copy: nothing says where its copies would start.
    assert source_retention_cut(HeadFacts(source_first=10, target_first=0, first_copy=None)) == 0
    # The mirror started at the source's first record (retention before the mirror): no head to cut.
    assert source_retention_cut(HeadFacts(source_first=12, target_first=0, first_copy=0)) == 0
    # Empty sides.
    assert source_retention_cut(HeadFacts(None, 0, None)) == 0
    assert source_retention_cut(HeadFacts(5, None, None)) == 0


def test_the_target_retention_allows_at_most_its_first_offset_of_missing_head_records() -> None:
    assert target_retention_allowance(HeadFacts(source_first=0, target_first=7, first_copy=None)) == 7
    assert target_retention_allowance(HeadFacts(source_first=0, target_first=0, first_copy=0)) == 0
    assert target_retention_allowance(HeadFacts(source_first=0, target_first=None, first_copy=None)) == 0
    # Five missing at the head, the target deleted seven offsets: all five may be its retention.
    assert unverifiable_head(5, 7) == (0, 5)
    # Nine missing at the head but only seven offsets deleted on the target: two are still missing.
    assert unverifiable_head(9, 7) == (2, 7)
    assert unverifiable_head(4, 0) == (4, 0)
