"""The audits' pure parts: jar selection, topic patterns, byte display, tables, report verdicts, the
record decoding the UDFs run, and the ``pyconnect audit`` command line up to the point Spark starts
(plus one run that starts Spark against a closed port and must fail in one line, exit code 3)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from connectors.mirror.checkpoint_records import Checkpoint
from connectors.mirror.records import OffsetSync
from pyconnect.cli import build_parser, main
from pyconnect.testing.kafka import free_ports
from spark_analytics.audit_cli import EXIT_ERROR, EXIT_USAGE, policy_from_args, remote_topics_from_args
from spark_analytics.kafka_frames import KafkaCluster, client_properties
from spark_analytics.mirror_codecs import checkpoint_fields, offset_sync_fields
from spark_analytics.packages import artifact_name, without_shipped
from spark_analytics.replication_audit import PartitionReport, ReplicationAudit
from spark_analytics.samples import SampledRecord, show_bytes
from spark_analytics.tables import format_table
from spark_analytics.translation_audit import CheckpointCheck, TranslationAudit

ROOT = Path(__file__).resolve().parents[3]
CLI = "import sys; from pyconnect.cli import main; sys.exit(main())"
BASE = [
    "audit",
    "replication",
    "--source-bootstrap",
    "a:1",
    "--target-bootstrap",
    "b:1",
    "--source-alias",
    "A",
]


def test_jar_names_lose_their_version_and_shipped_artifacts_are_dropped() -> None:
    assert artifact_name("spark-sql-kafka-0-10_2.13-4.2.0.jar") == "spark-sql-kafka-0-10_2.13"
    assert artifact_name("zstd-jni-1.5.7-7.jar") == "zstd-jni"
    assert artifact_name("kafka-clients-3.9.2.jar") == "kafka-clients"
    jars = [Path(n) for n in ("kafka-clients-3.9.2.jar", "slf4j-api-1.7.36.jar", "commons-pool2-2.13.1.jar")]
    kept = without_shipped(jars, ["slf4j-api-2.0.17.jar", "commons-pool-1.5.4.jar"])
    assert [j.name for j in kept] == ["kafka-clients-3.9.2.jar", "commons-pool2-2.13.1.jar"]


def test_client_properties_bound_timeouts_and_pass_the_given_ones() -> None:
    cluster = KafkaCluster("h:1", {"security.protocol": "SSL", "request.timeout.ms": "999"}, timeout_s=2.5)
    assert client_properties(cluster) == {
        "bootstrap.servers": "h:1",
        "default.api.timeout.ms": "2500",
        "request.timeout.ms": "999",
        "security.protocol": "SSL",
    }


def test_bytes_show_as_text_or_hex_and_are_cut() -> None:
    assert show_bytes(None) is None
    assert show_bytes(b"") == "''"
    assert show_bytes(b"k1") == "'k1'"
    assert show_bytes(b"\x00\xff") == "0x00ff"
    assert show_bytes(b"x" * 60) == repr("x" * 48) + "..."


def test_tables_align_numbers_right() -> None:
    text = format_table(("name", "n"), [("a", 5), ("long name", 123)])
    assert text.splitlines() == ["name         n", "a            5", "long name  123"]


def test_codec_fields_decode_what_the_connectors_write_and_none_for_garbage() -> None:
    sync = OffsetSync("t", 3, 100, 42)
    assert offset_sync_fields(sync.record_key(), sync.record_value()) == ("t", 3, 100, 42)
    assert offset_sync_fields(b"\x00", b"") is None
    assert offset_sync_fields(None, None) is None
    checkpoint = Checkpoint("g", "A.t", 1, 10, 7, "meta")
    assert checkpoint_fields(checkpoint.record_key(), checkpoint.record_value()) == (
        "g",
        "A.t",
        1,
        10,
        7,
        "meta",
    )
    assert checkpoint_fields(checkpoint.record_key(), None) is None


def report(missing: int, tail: int, dups: int, mismatches: int) -> ReplicationAudit:
    partition = PartitionReport(
        "t", "A.t", 0, 10, 10 - missing + dups + mismatches, missing, tail, dups, mismatches
    )
    sample = SampledRecord("missing", "source", "t", "A.t", 0, 9, "'k'", None, [("h", "0x00")], 5)
    return ReplicationAudit("A", {"t": "A.t"}, [partition], [sample] if missing else [])


def test_replication_verdicts() -> None:
    assert report(0, 0, 2, 0).ok(), "duplicates are at-least-once, not a failure"
    assert not report(0, 0, 0, 1).ok()
    lagging = report(3, 3, 0, 0)
    assert not lagging.ok() and lagging.ok(allow_lag=True)
    assert "lag?" in lagging.render()
    assert not report(3, 1, 0, 0).ok(allow_lag=True)
    doc = json.loads(json.dumps(lagging.to_json()))
    assert doc["totals"]["missing_tail"] == 3 and doc["ok"] is False
    assert doc["samples"][0]["topic"] == "t" and doc["samples"][0]["headers"] == [["h", "0x00"]]


def test_translation_verdict_and_rendering() -> None:
    check = CheckpointCheck("g", "t", "A.t", 0, 10, 12, 11, 0, 1)
    audit = TranslationAudit(
        "A", "B", {"t": "A.t"}, "mm2-offset-syncs.B.internal", "A.checkpoints.internal",
        {"ok": 3, "violation": 0, "unverifiable": 0}, 1, 1, {"offset_syncs": 0, "checkpoints": 0},
        latest=[check], violation_samples=[check],
    )  # fmt: skip
    assert check.violation and not audit.ok()
    text = audit.render()
    assert "upstream 10 translated to 12 > true position 11 (1 records skipped)" in text
    assert text.endswith("translation audit: FAILED")
    assert json.loads(json.dumps(audit.to_json()))["latest"][0]["violation"] is True


def test_remote_topics_follow_the_replication_policy() -> None:
    parser = build_parser()
    args = parser.parse_args([*BASE, "--topic", "t", "--topic", "u", "--topic", "t"])
    assert remote_topics_from_args(args, policy_from_args(args)) == {"t": "A.t", "u": "A.u"}
    args = parser.parse_args([*BASE, "--topic", "t", "--replication-policy-separator", "_"])
    assert remote_topics_from_args(args, policy_from_args(args)) == {"t": "A_t"}
    args = parser.parse_args(
        [*BASE, "--topic", "t", "--replication-policy-class", "IdentityReplicationPolicy"]
    )
    assert remote_topics_from_args(args, policy_from_args(args)) == {"t": "t"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--topic", "t", "--source-property", "novalue"], "--source-property expects KEY=VALUE"),
        (["--topic", " "], "--topic needs a topic name"),
        (["--topic", "t", "--sample", "-1"], "--sample cannot be negative"),
        (["--topic", "t", "--replication-policy-class", "Nope"], "Invalid value Nope"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2_before_spark_starts(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*BASE, *extra]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_the_cli_imports_pyspark_only_when_an_audit_runs() -> None:
    probe = "import sys, pyconnect.cli as c; c.build_parser(); print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_an_unreachable_cluster_is_one_line_and_exit_3() -> None:
    (port,) = free_ports(1)
    cmd = [
        sys.executable, "-c", CLI, "audit", "replication", "--source-bootstrap", f"127.0.0.1:{port}",
        "--target-bootstrap", f"127.0.0.1:{port}", "--source-alias", "A", "--topic", "t", "--timeout", "3",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=ROOT, check=False)
    assert proc.returncode == EXIT_ERROR, proc.stderr[-2000:]
    ours = [line for line in proc.stderr.splitlines() if line.startswith("pyconnect audit:")]
    assert len(ours) == 1 and "could not run the audit" in ours[0], proc.stderr[-2000:]
    assert proc.stdout == ""


def test_retention_is_a_note_not_a_finding() -> None:
    partition = PartitionReport(
        "t",
        "A.t",
        0,
        20,
        30,
        0,
        0,
        0,
        0,
        unverifiable_source_retention=10,
        source_retention_offsets=(0, 9),
        unverifiable_target_retention=3,
        target_retention_offsets=(20, 22),
    )
    audit = ReplicationAudit("A", {"t": "A.t"}, [partition])
    assert audit.ok() and partition.clean
    doc = json.loads(json.dumps(audit.to_json()))
    assert doc["totals"]["unverifiable_source_retention"] == 10
    assert doc["totals"]["unverifiable_target_retention"] == 3
    assert doc["partitions"][0]["source_retention_offsets"] == [0, 9]
    assert doc["retention_note"] == (
        "unverifiable: 10 target records copy source records deleted by the source's retention; "
        "3 source records' copies deleted by the target's retention"
    )
    verdict = audit.render().splitlines()[-1]
    assert verdict.startswith("replication audit: OK (unverifiable: 10 target records")
    assert ReplicationAudit("A", {"t": "A.t"}, [report(0, 0, 0, 0).partitions[0]]).retention_note() is None
