"""The flow audit's pure parts: the flow plan from mm2.properties, the HTML report, progress lines, the
job package, and ``pyconnect audit --config ... --flow ...`` up to the point Spark starts (bad input:
one line, exit code 2)."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest

from connectors.mirror.mm2_properties import MirrorMakerConfig, SourceAndTarget
from pyconnect.cli import main
from spark_analytics.flow_plan import FlowError, parse_flow, plan_from_mm2
from spark_analytics.html_report import render
from spark_analytics.job_package import ENTRY_NAME, ZIP_NAME, package_files
from spark_analytics.progress import stage_line

MM2 = {
    "clusters": "A, B",
    "A.bootstrap.servers": "a1:9092",
    "B.bootstrap.servers": "b1:9092",
    "B.security.protocol": "SSL",
    "A->B.enabled": "true",
    "A->B.topics": "orders.*, payments",
    "A->B.groups": "app-.*",
    "A->B.offset-syncs.topic.location": "target",
}


def test_a_flow_is_source_arrow_target() -> None:
    assert parse_flow("A->B") == SourceAndTarget("A", "B")
    assert parse_flow(" A -> B ") == SourceAndTarget("A", "B")
    for bad in ("A", "A->", "->B", "A->A", "A->B->C", "A-B"):
        with pytest.raises(FlowError):
            parse_flow(bad)


def test_the_plan_takes_clients_filters_and_location_from_mm2_properties() -> None:
    plan = plan_from_mm2(MirrorMakerConfig(MM2), SourceAndTarget("A", "B"))
    assert (plan.source_bootstrap, plan.target_bootstrap) == ("a1:9092", "b1:9092")
    assert plan.target_properties.get("security.protocol") == "SSL"
    assert "security.protocol" not in plan.source_properties
    assert plan.offset_syncs_on_target is True
    source_topics = [
        "orders",
        "orders-eu",
        "payments",
        "payments2",
        "B.orders",
        "__consumer_offsets",
        "heartbeats",
        "mm2-offset-syncs.B.internal",
        "A.checkpoints.internal",
    ]
    assert plan.topics_to_audit(source_topics) == ["orders", "orders-eu", "payments"]
    assert plan.groups_to_audit(["app-1", "other", "app-2"]) == ["app-1", "app-2"]
    narrowed = plan_from_mm2(
        MirrorMakerConfig(MM2), SourceAndTarget("A", "B"), topics="pay.*", groups="other"
    )
    assert narrowed.topics_to_audit(source_topics) == ["payments", "payments2"]
    assert narrowed.groups_to_audit(["app-1", "other"]) == ["other"]


def test_the_source_is_read_with_the_mirror_consumers_isolation_level() -> None:
    flow = SourceAndTarget("A", "B")
    assert "isolation.level" not in plan_from_mm2(MirrorMakerConfig(MM2), flow).source_properties
    for key in (
        "A->B.consumer.isolation.level",
        "A.consumer.isolation.level",
        "A->B.source.consumer.isolation.level",
    ):
        plan = plan_from_mm2(MirrorMakerConfig({**MM2, key: "read_committed"}), flow)
        assert plan.source_properties["isolation.level"] == "read_committed", key
        assert "isolation.level" not in plan.target_properties, key


def test_a_bad_flow_is_one_line() -> None:
    with pytest.raises(FlowError, match="unknown cluster alias C"):
        plan_from_mm2(MirrorMakerConfig(MM2), SourceAndTarget("A", "C"))
    no_bootstrap = {k: v for k, v in MM2.items() if k != "B.bootstrap.servers"}
    with pytest.raises(FlowError, match=r"cluster B has no bootstrap\.servers"):
        plan_from_mm2(MirrorMakerConfig(no_bootstrap), SourceAndTarget("A", "B"))
    with pytest.raises(FlowError):
        plan_from_mm2(MirrorMakerConfig(MM2), SourceAndTarget("A", "B"), topics="(unclosed")


def _report(ok: bool) -> dict[str, object]:
    partitions = [
        {
            "topic": "t",
            "remote_topic": "A.t",
            "partition": p,
            "source_count": 100,
            "target_count": 100 if ok else 99 + p,
            "missing": 0 if ok else 1 - p,
            "missing_tail": 0,
            "duplicates": 0,
            "mismatches": 0 if ok else p,
        }
        for p in (0, 1)
    ]
    return {
        "flow": "A->B",
        "ok": ok,
        "verdict": "flow A->B: PASS" if ok else "flow A->B: FINDINGS: 1 missing records",
        "findings": [] if ok else ["1 missing records"],
        "origin": "A (a:1) and B (b:1)",
        "seconds": 3.5,
        "remote_topics": {"t": "A.t"},
        "groups": ["g<1>"],
        "scanned": {"source_records": 200, "target_records": 200, "offset_syncs": 4, "checkpoints": 6},
        "replication": {
            "partitions": partitions,
            "samples": [],
            "offset_buckets": []
            if ok
            else [
                {
                    "topic": "t",
                    "partition": 0,
                    "kind": "missing",
                    "bucket": 3,
                    "width": 3,
                    "first": 9,
                    "last": 9,
                    "count": 1,
                },
                {
                    "topic": "t",
                    "partition": 1,
                    "kind": "mismatch",
                    "bucket": 33,
                    "width": 3,
                    "first": 100,
                    "last": 100,
                    "count": 1,
                },
            ],
        },
        "translation": {
            "latest": [
                {
                    "group": "g<1>",
                    "remote_topic": "A.t",
                    "partition": 0,
                    "upstream_offset": 60,
                    "downstream_offset": 50,
                    "true_position": 60,
                    "reread": 10,
                    "skipped": 0,
                },
            ],
            "groups": [
                {"group": "g<1>", "histogram": {"0": 2, "1-9": 3, "10-99": 1, "100-999": 0, "1000+": 0}}
            ],
            "violation_samples": [],
            "sync_violation_samples": [],
            "syncs": {"ok": 4, "violation": 0, "unverifiable": 0},
            "offset_syncs_topic": "mm2-offset-syncs.B.internal",
        },
    }


def test_the_html_report_is_self_contained_escaped_and_has_its_plots() -> None:
    html = render(_report(ok=True))
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    for plot in ("records", "lag-slack", "rereads"):
        assert f'<svg class="plot" data-plot="{plot}"' in html
    assert "nothing to plot" in html  # no offending record to place
    assert "g&lt;1&gt;" in html and "g<1>" not in html
    for external in ("<script", "src=", "href=", "@import", "url("):
        assert external not in html
    failed = render(_report(ok=False))
    assert '<svg class="plot" data-plot="offending-offsets"' in failed and 'class="fail"' in failed
    assert "missing: 1 at offsets 9..9" in failed and "mismatch: 1 at offsets 100..100" in failed


def test_progress_lines_name_the_stage_and_its_tasks() -> None:
    assert (
        stage_line(7, "collect at x.py:3\nmore", 3, 4, 1)
        == "  stage 7 [collect at x.py:3]: 3/4 tasks, 1 running"
    )
    assert stage_line(8, "count", 4, 4, 0) == "  stage 8 [count]: 4/4 tasks"


def test_the_job_package_holds_the_codecs_and_the_audit(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[3]
    names = {p.as_posix() for p in package_files(root)}
    assert {"connectors/mirror/records.py", "connectors/mirror/checkpoint_records.py"} <= names
    assert {"spark_analytics/audit_cli.py", "pyconnect/errors.py"} <= names
    assert not any("__pycache__" in n or not n.endswith(".py") for n in names)
    assert ZIP_NAME.endswith(".zip") and ENTRY_NAME.endswith(".py")


def test_zip_building_is_reproducible(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from spark_analytics import job_package

    monkeypatch.setattr(job_package, "ensure_kafka_source_jars", lambda: [])
    first = job_package.build_package(tmp_path / "a")
    second = job_package.build_package(tmp_path / "b")
    assert first.zip_path.read_bytes() == second.zip_path.read_bytes()
    with zipfile.ZipFile(first.zip_path) as archive:
        assert "spark_analytics/mirror_codecs.py" in archive.namelist()
    assert "from spark_analytics.audit_cli import main" in first.entry.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--flow", "A->B", "--config", "{config}"], "--out DIR is required"),
        (["--out", "{tmp}/o"], "give either --config"),
        (["--out", "{tmp}/o", "--config", "{config}"], "--config needs --flow"),
        (["--out", "{tmp}/o", "--config", "{config}", "--flow", "A-B"], "--flow expects SOURCE->TARGET"),
        (["--out", "{tmp}/o", "--config", "{config}", "--flow", "A->C"], "unknown cluster alias C"),
        (["--out", "{tmp}/o", "--config", "{tmp}/missing.properties", "--flow", "A->B"], "Could not read"),
        (["--out", "{tmp}/o", "--from-snapshot", "{tmp}"], "is not a snapshot"),
        (["--out", "{tmp}/o", "--config", "{config}", "--flow", "A->B", "--topics", "(x"], "topics"),
    ],
)
def test_bad_flow_arguments_fail_in_one_line_before_spark(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "mm2.properties"
    config.write_text("".join(f"{k} = {v}\n" for k, v in MM2.items()))
    filled = [a.replace("{config}", str(config)).replace("{tmp}", str(tmp_path)) for a in args]
    assert main(["audit", *filled]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pyconnect audit: ") and message in err, err


def test_the_html_report_shows_what_retention_left_unverifiable() -> None:
    report: dict[str, Any] = _report(ok=True)
    partition = report["replication"]["partitions"][0]
    partition.update(unverifiable_source_retention=10, source_retention_offsets=[0, 9])
    note = "unverifiable: 10 target records copy source records deleted by the source's retention"
    report["replication"]["retention_note"] = note
    html = render(report)
    assert 'class="pass"' in html and "deleted by the source&#x27;s retention" in html
    assert ">10 [0-9]</td>" in html and "unverifiable: source retention (target offsets)" in html
    assert 'id="retention"' not in render(_report(ok=True))
