"""The closing audit's verdict (connectors.mirror.failback.proof): exactly the orphans missing on B,
nothing on B that A lacks, every moved group exact; the positions it checks; the window in a state file."""

from __future__ import annotations

from dataclasses import replace

import pytest

from connectors.mirror.failback.ledger import OrphanRange
from connectors.mirror.failback.proof import (
    AuditBounds,
    AuditObservation,
    AuditRequest,
    GroupPosition,
    PartitionCounts,
    audit_lines,
    judge,
    positions_of,
)
from connectors.mirror.failback.state import FailbackState
from connectors.mirror.offsets.failover_state import StateError

WINDOW = AuditBounds({"orders:0": 100, "orders:1": 90}, {"orders:0": 95, "orders:1": 90}, {0: 12}, {0: 7})
ORPHANS = {
    ("orders", 0): OrphanRange("orders", 0, 60, 64, 5, 50),
    ("orders", 1): OrphanRange("orders", 1, None, None, 0),
}


def request(**changes: object) -> AuditRequest:
    base = AuditRequest(
        command="failback",
        source="A",
        target="B",
        source_config={"bootstrap.servers": "a:9092"},
        target_config={"bootstrap.servers": "b:9092"},
        policy_config={},
        offset_syncs_on_target=True,
        offset_syncs_topic="mm2-offset-syncs.A.internal",
        checkpoints_topic="A.checkpoints.internal",
        remote_topics={"orders": "orders"},
        bounds=WINDOW,
        groups=("g1", "g2"),
        positions=(GroupPosition("g1", "orders", 0, 100, 95),),
        out_dir="audit",
        expected=ORPHANS,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def counts(
    partition: int, a_only: int = 0, span: tuple[int, int] | None = None, **more: int
) -> PartitionCounts:
    first, last = span if span else (None, None)
    values = {"b_only": 0, "reordered": 0, "duplicates": 0, **more}
    return PartitionCounts("orders", partition, 100, 95, a_only, first, last, **values)


def observed(*partitions: PartitionCounts, **changes: object) -> AuditObservation:
    base = AuditObservation(
        partitions,
        checkpoint_violations=0,
        committed_violations=0,
        sync_violations=0,
        groups={
            "g1": {"partitions": 1, "reread": 0, "skipped": 0},
            "g2": {"partitions": 1, "reread": 0, "skipped": 0},
        },
        checkpoints=4,
        offset_syncs=9,
        seconds=3.2,
        reports=("audit/audit.json", "audit/audit.html"),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_exactly_the_orphans_missing_on_b_passes() -> None:
    verdict = judge(request(), observed(counts(0, 5, (60, 64)), counts(1)))
    assert verdict.ok, verdict.line
    assert verdict.line.startswith("audit of A->B: PASS")
    assert "5 only on A (the 5 orphans)" in verdict.line
    assert verdict.to_json()["a_only"] == 5


@pytest.mark.parametrize(
    ("partitions", "phrase"),
    [
        (
            (counts(0, 6, (59, 64)), counts(1)),
            "orders-0: 6 records on A that B lacks, expected 5 (the orphans)",
        ),
        ((counts(0, 5, (61, 65)), counts(1)), "lie at 61..65, the orphans at 60..64"),
        ((counts(0, 5, (60, 64)), counts(1, 1, (3, 3))), "orders-1: 1 records on A that B lacks, expected 0"),
        (
            (counts(0, 5, (60, 64)), counts(1, b_only=2)),
            "orders-1: 2 records on B that A lacks or that were altered",
        ),
        ((counts(0, 5, (60, 64)), counts(1, reordered=1)), "orders-1: 1 records out of order"),
        ((counts(1),), "orders-0: the audit read none of the 5 orphans"),
    ],
)
def test_anything_else_is_a_finding(partitions: tuple[PartitionCounts, ...], phrase: str) -> None:
    verdict = judge(request(), observed(*partitions))
    assert not verdict.ok
    assert phrase in verdict.line, verdict.line


def test_translation_and_group_findings() -> None:
    clean = (counts(0, 5, (60, 64)), counts(1))
    for changes, phrase in (
        ({"checkpoint_violations": 2}, "2 checkpoints past the data"),
        ({"committed_violations": 1}, "1 committed group offsets past the data"),
        ({"sync_violations": 3}, "3 offset syncs past the data"),
        ({"groups": {"g1": {"reread": 0, "skipped": 0}}}, "no committed offsets checked for g2"),
        (
            {"groups": {"g1": {"reread": 4, "skipped": 0}, "g2": {"reread": 0, "skipped": 0}}},
            "group g1 re-reads 4 and skips 0",
        ),
    ):
        verdict = judge(request(), observed(*clean, **changes))
        assert not verdict.ok and phrase in verdict.line, (changes, verdict.line)


def test_duplicates_are_a_finding_only_for_an_exactly_once_flow() -> None:
    partitions = (counts(0, 5, (60, 64), duplicates=3), counts(1))
    allowed = judge(request(), observed(*partitions))
    assert allowed.ok and "3 duplicates on B (allowed by at-least-once)" in allowed.line
    refused = judge(request(exactly_once=True), observed(*partitions))
    assert not refused.ok and "3 duplicates on B of a flow that runs exactly-once" in refused.line


def test_a_cutover_expects_nothing_missing() -> None:
    cutover = request(command="cutover", expected={})
    assert judge(cutover, observed(counts(0), counts(1))).ok
    assert "expected 0" in judge(cutover, observed(counts(0, 1, (99, 99)), counts(1))).line


def test_positions_pair_the_moved_offsets_with_the_other_cluster() -> None:
    remote = {"orders": "A.orders"}
    on_a = {"g": {("orders", 0): 10, ("orders", 1): 20, ("other", 0): 5}}
    on_b = {"g": {("A.orders", 0): 8, ("B.native", 0): 3}}
    assert positions_of(on_a, on_b, remote, moved_on_source=True) == (GroupPosition("g", "orders", 0, 10, 8),)
    assert positions_of(on_b, on_a, remote, moved_on_source=False) == (
        GroupPosition("g", "orders", 0, 10, 8),
    )
    assert positions_of(on_a, {}, remote, moved_on_source=True) == ()


def test_the_window_and_the_verdict_survive_the_state_file() -> None:
    state = FailbackState({"source": "A", "target": "B", "checkpoints_topic": "A.checkpoints.internal"})
    state.window = WINDOW
    state.audit = judge(request(), observed(counts(0, 5, (60, 64)), counts(1))).to_json()
    again = FailbackState.from_json(state.to_json(), "state.json")
    assert again.window == WINDOW and again.audit == state.audit
    lines = audit_lines(again.audit)
    assert lines[1].startswith("audit of A->B: PASS")
    assert "g1 re-read 0 skipped 0" in lines[2] and lines[-1].endswith("audit/audit.html")
    broken = state.to_json()
    broken["window"] = {"source_ends": {"no-partition": 1}, "target_ends": {}}
    with pytest.raises(StateError):
        FailbackState.from_json(broken, "state.json")
