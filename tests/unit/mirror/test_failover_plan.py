"""The failover plan without Kafka: rows, re-read arithmetic, actions, exports and request parsing."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from connectors.mirror.checkpoint_records import Checkpoint
from connectors.mirror.offsets.failover import (
    EXPORT_FIELDS,
    FailoverError,
    FailoverPlan,
    TranslateRequest,
    parse_bootstrap,
    plan_rows,
    render_csv,
    render_json,
    render_text,
    request_from_bootstrap,
    request_from_mm2,
)
from connectors.mirror.offsets.translation import OffsetSyncStore
from connectors.mirror.records import TopicPartition
from pyconnect.cli import main
from pyconnect.kafka.group_admin import CommittedOffset

GROUP = "orders-app"


def request(**policy: str) -> TranslateRequest:
    return TranslateRequest(GROUP, "A", "B", {"bootstrap.servers": "b:9092"}, None, policy)


def store(*syncs: tuple[int, int], topic: str = "orders", partition: int = 0) -> OffsetSyncStore:
    result = OffsetSyncStore("exact")
    result.start(must_read_to_end=False)
    for up, down in syncs:
        result.add(topic, partition, up, down)
    result.mark_read_to_end()
    return result


def checkpoint(
    topic: str, partition: int, up: int, down: int, metadata: str = ""
) -> dict[TopicPartition, Checkpoint]:
    return {TopicPartition(topic, partition): Checkpoint(GROUP, topic, partition, up, down, metadata)}


CONTIGUOUS = store((0, 0), (51, 51), (99, 99))


def test_reread_is_the_distance_from_the_checkpoint_to_the_proven_source_position() -> None:
    (row,) = plan_rows(
        request(),
        checkpoint("A.orders", 0, 60, 60, "m"),
        {("orders", 0): CommittedOffset(90, "m")},
        {},
        CONTIGUOUS,
    )
    assert (row.topic, row.target_topic, row.source_offset, row.source_offset_from) == (
        "orders",
        "A.orders",
        90,
        "source",
    )
    assert (row.translated_offset, row.expected_reread, row.action, row.metadata) == (60, 30, "commit", "m")
    assert row.max_reread == 99 - 60, "bounded by the copy of the nearest sync at or above the source offset"


def test_a_group_rewound_on_the_source_after_its_checkpoint_shows_a_negative_reread() -> None:
    (row,) = plan_rows(
        request(), checkpoint("A.orders", 0, 60, 60), {("orders", 0): CommittedOffset(40)}, {}, CONTIGUOUS
    )
    assert row.expected_reread == -20


def test_without_a_contiguity_proof_only_the_bound_is_known() -> None:
    gapped = store((0, 0), (50, 60))
    (row,) = plan_rows(request(), checkpoint("A.orders", 0, 30, 1), None, {}, gapped)
    assert (row.source_offset, row.source_offset_from, row.expected_reread, row.max_reread) == (
        30,
        "checkpoint",
        None,
        59,
    )
    (unknown,) = plan_rows(request(), checkpoint("A.orders", 0, 30, 1), None, {}, None)
    assert (unknown.expected_reread, unknown.max_reread) == (None, None)
    (older,) = plan_rows(request(), checkpoint("A.orders", 0, 30, 1), None, {}, store((40, 40)))
    assert (older.expected_reread, older.max_reread) == (None, None), "older than every sync"


@pytest.mark.parametrize(
    ("current", "allow_rewind", "action"),
    [
        (None, False, "commit"),
        (50, False, "commit"),
        (60, False, "keep"),
        (80, False, "skip-rewind"),
        (80, True, "rewind"),
    ],
)
def test_actions_move_forward_only_unless_rewinding_is_allowed(
    current: int | None, allow_rewind: bool, action: str
) -> None:
    on_b = {} if current is None else {("A.orders", 0): CommittedOffset(current)}
    (row,) = plan_rows(
        request(), checkpoint("A.orders", 0, 60, 60), None, on_b, None, allow_rewind=allow_rewind
    )
    assert (row.target_committed_offset, row.action) == (current, action)
    plan = FailoverPlan(GROUP, "A", "B", "A.checkpoints.internal", [row], "Empty", False, None)
    assert plan.to_commit == (
        {("A.orders", 0): CommittedOffset(60, "")} if action in ("commit", "rewind") else {}
    )


def test_partitions_without_checkpoint_are_listed_and_never_committed() -> None:
    rows = plan_rows(
        request(),
        checkpoint("A.orders", 0, 5, 5),
        {
            ("orders", 0): CommittedOffset(5),
            ("orders", 1): CommittedOffset(7),
            ("audit", 0): CommittedOffset(3),
        },
        {},
        None,
    )
    assert [(r.topic, r.partition, r.target_topic, r.translated_offset, r.action) for r in rows] == [
        ("audit", 0, "A.audit", None, "no-checkpoint"),
        ("orders", 0, "A.orders", 5, "commit"),
        ("orders", 1, "A.orders", None, "no-checkpoint"),
    ]
    plan = FailoverPlan(GROUP, "A", "B", "A.checkpoints.internal", rows, "Dead", True, None)
    assert plan.to_commit == {("A.orders", 0): CommittedOffset(5, "")}


def test_source_topics_follow_the_configured_replication_policy() -> None:
    underscore = request(**{"replication.policy.separator": "_"})
    assert underscore.policy().checkpoints_topic("A") == "A_checkpoints_internal"
    (row,) = plan_rows(underscore, checkpoint("A_orders", 0, 5, 5), None, {}, None)
    assert (row.topic, row.target_topic) == ("orders", "A_orders")
    identity = request(
        **{"replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"}
    )
    (kept,) = plan_rows(
        identity, checkpoint("orders", 0, 5, 5), {("orders", 0): CommittedOffset(9)}, {}, None
    )
    assert (kept.topic, kept.target_topic, kept.source_offset) == ("orders", "orders", 9)
    # Fail-back: B's own topic came back from A under its original name.
    (back,) = plan_rows(
        request(), checkpoint("payments", 0, 5, 5), {("B.payments", 0): CommittedOffset(5)}, {}, None
    )
    assert (back.topic, back.target_topic, back.action) == ("B.payments", "payments", "commit")


def test_exports_hold_the_same_rows() -> None:
    rows = plan_rows(
        request(),
        {**checkpoint("A.orders", 0, 60, 60, "a,b"), **checkpoint("A.orders", 1, 7, 7)},
        {("orders", 0): CommittedOffset(90, "a,b")},
        {("A.orders", 1): CommittedOffset(7)},
        CONTIGUOUS,
    )
    plan = FailoverPlan(
        GROUP, "A", "B", "A.checkpoints.internal", rows, "Empty", True, "mm2-offset-syncs.B.internal"
    )
    exported = json.loads(render_json(plan))
    assert [list(r) for r in exported] == [list(EXPORT_FIELDS)] * 2
    assert exported[0] == {
        "group": GROUP,
        "source_cluster": "A",
        "target_cluster": "B",
        "topic": "orders",
        "partition": 0,
        "target_topic": "A.orders",
        "source_offset": 90,
        "source_offset_from": "source",
        "checkpoint_upstream_offset": 60,
        "translated_offset": 60,
        "target_committed_offset": None,
        "expected_reread": 30,
        "max_reread": 39,
        "action": "commit",
        "metadata": "a,b",
    }
    assert (exported[1]["action"], exported[1]["expected_reread"]) == ("keep", None)
    parsed = list(csv.DictReader(io.StringIO(render_csv(plan))))
    assert parsed == [{k: "" if v is None else str(v) for k, v in r.items()} for r in exported]
    text = render_text(plan)
    assert "orders  0          A.orders      90" in text
    assert text.splitlines()[-1] == "Expected re-read: unknown records"
    assert plan.total_expected_reread is None


def test_requests_from_mm2_properties(tmp_path: Path) -> None:
    config = tmp_path / "mm2.properties"
    config.write_text(
        "clusters = A, B\n"
        "A.bootstrap.servers = a:9092\n"
        "B.bootstrap.servers = b:9092\n"
        "B.security.protocol = PLAINTEXT\n"
        "B.consumer.client.id = dropped\n"
        "replication.policy.separator = _\n"
        "A->B.offset-syncs.topic.location = target\n"
    )
    made = request_from_mm2(str(config), GROUP, "A", "B", 5.0)
    assert made.target_config["bootstrap.servers"] == "b:9092"
    assert made.source_config is not None and made.source_config["bootstrap.servers"] == "a:9092"
    assert made.policy().checkpoints_topic("A") == "A_checkpoints_internal"
    assert made.offset_syncs_location == "target"
    assert request_from_mm2(str(config), GROUP, "A", "B", 5.0, "source").offset_syncs_location == "source"
    with pytest.raises(FailoverError, match=r"unknown cluster alias C \(--to\): .* defines clusters A, B"):
        request_from_mm2(str(config), GROUP, "A", "C", 5.0)
    config.write_text("clusters = A, B\nA.bootstrap.servers = a:9092\n")
    with pytest.raises(FailoverError, match=r"cluster B has no bootstrap\.servers"):
        request_from_mm2(str(config), GROUP, "A", "B", 5.0)
    assert request_from_mm2(str(config), GROUP, "B", "A", 5.0).source_config is None


def test_requests_from_bootstrap_options() -> None:
    assert parse_bootstrap(["A=a:1,a:2", " B = b:1 "]) == {"A": "a:1,a:2", "B": "b:1"}
    for bad in ("A", "=x:1", "A="):
        with pytest.raises(FailoverError, match="invalid --bootstrap"):
            parse_bootstrap([bad])
    made = request_from_bootstrap(["B=b:1"], GROUP, "A", "B", 5.0)
    assert (made.source_config, made.target_config) == (None, {"bootstrap.servers": "b:1"})
    with pytest.raises(FailoverError, match="unknown cluster alias C in --bootstrap"):
        request_from_bootstrap(["B=b:1", "C=c:1"], GROUP, "A", "B", 5.0)
    with pytest.raises(FailoverError, match="no bootstrap servers for cluster B"):
        request_from_bootstrap(["A=a:1"], GROUP, "A", "B", 5.0)


def test_command_line_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "mm2.properties"
    config.write_text("clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\n")
    cases = {
        ("--from", "X", "--to", "B", "--config", str(config)): "pyconnect: unknown cluster alias X (--from)",
        (
            "--from",
            "A",
            "--to",
            "A",
            "--bootstrap",
            "A=a:1",
        ): "pyconnect: --from and --to name the same cluster A",
        (
            "--from",
            "A",
            "--to",
            "B",
            "--config",
            str(tmp_path / "missing"),
        ): "pyconnect: Could not read properties",
    }
    for args, message in cases.items():
        assert main(["offsets", "translate", "--group", GROUP, *args]) == 1
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith(message), err
    with pytest.raises(SystemExit) as usage:
        main(["offsets", "translate", "--group", GROUP, "--from", "A", "--to", "B"])
    assert usage.value.code == 2
