"""Benchmark pieces without Kafka: profile folding and summary, goals, checkpoint-lag and profile report sections."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import report
from benchmarks.checkpoint_lag import Names
from benchmarks.procstats import LoadSampler
from benchmarks.profiler import clean_frame, package_of, parse_folded, render_folded, short_path, summarize
from benchmarks.runners import checkpoint_connector_config, connector_config
from benchmarks.stats import GOALS, RATIO_DIRECTIONS, goal_check, lag_summary

LOOP = "<module> (pyconnect/cli.py:1);run (asyncio/runners.py:160)"
FOLDED = (
    f"{LOOP};SourceTask.poll (pyconnect/worker/source_task.py:40);"
    "MirrorSourceTask.poll (connectors/mirror/source.py:500) 30\n"
    f"{LOOP};SourceTask.poll (pyconnect/worker/source_task.py:40);"
    "BatchSender.send (/srv/app/.venv/lib/python3.11/site-packages/aiokafka/producer/producer.py:300) 50\n"
    f"{LOOP};EpollSelector.select (/usr/lib/python3.11/selectors.py:451) 20\n"
    "not a stack line\n"
)


def test_short_path_drops_machine_folders() -> None:
    assert short_path("/x/.venv/lib/python3.11/site-packages/aiokafka/conn.py") == "aiokafka/conn.py"
    assert short_path("/usr/lib/python3.11/asyncio/base_events.py") == "asyncio/base_events.py"
    assert short_path("/home/me/repo/pyconnect/worker/source_task.py") == "pyconnect/worker/source_task.py"
    assert short_path("/opt/elsewhere/tool.py") == "elsewhere/tool.py"
    assert short_path("pyconnect/cli.py") == "pyconnect/cli.py"
    assert clean_frame("f (/usr/lib/python3.11/json/encoder.py:205)") == "f (json/encoder.py:205)"
    assert clean_frame("<native>") == "<native>"
    assert clean_frame("0x7f6b2244524a (libc.so.6)") == "unnamed code (libc.so.6)"  # py-spy --native
    assert clean_frame("SHA256_Update (libcrypto.so.3)") == "SHA256_Update (libcrypto.so.3)"


def test_parse_folded_counts_stacks_and_skips_junk() -> None:
    stacks = parse_folded(FOLDED)
    assert sum(stacks.values()) == 100
    leaves = {stack[-1]: n for stack, n in stacks.items()}
    assert leaves["BatchSender.send (aiokafka/producer/producer.py:300)"] == 50
    assert leaves["EpollSelector.select (selectors.py:451)"] == 20
    assert parse_folded(render_folded(stacks)) == stacks
    assert all("/srv" not in line and "/usr" not in line for line in render_folded(stacks).splitlines())


def test_generated_code_is_named_after_its_caller() -> None:
    folded = f"{LOOP};Batch.done (pyconnect/worker/source_task.py:300);__create_fn__.<locals>.__init__ (<string>:2) 7\n"
    summary = summarize(parse_folded(folded))
    leaf = "__init__ (generated) <- Batch.done (pyconnect/worker/source_task.py:300)"
    assert summary["top_self"][0] == {"function": leaf, "self_pct": 100.0, "cumulative_pct": 100.0}
    assert summary["by_package"] == [{"package": "pyconnect/worker", "self_pct": 100.0}]


def test_summarize_self_cumulative_and_packages() -> None:
    summary = summarize(parse_folded(FOLDED))
    assert summary["samples"] == 100
    top_self = {e["function"]: e for e in summary["top_self"]}
    send = top_self["BatchSender.send (aiokafka/producer/producer.py:300)"]
    assert (send["self_pct"], send["cumulative_pct"]) == (50.0, 50.0)
    cumulative = {e["function"]: e["cumulative_pct"] for e in summary["top_cumulative"]}
    assert cumulative["SourceTask.poll (pyconnect/worker/source_task.py:40)"] == 80.0
    # the entry frames present in every sample are set apart, not ranked
    assert "<module> (pyconnect/cli.py:1)" in summary["ubiquitous"]
    assert "<module> (pyconnect/cli.py:1)" not in cumulative
    packages = {p["package"]: p["self_pct"] for p in summary["by_package"]}
    assert packages == {"aiokafka": 50.0, "connectors/mirror": 30.0, "selectors": 20.0}
    assert summarize(parse_folded(""))["samples"] == 0


def test_package_of() -> None:
    assert package_of("f (pyconnect/kafka/batch_sender.py:1)") == "pyconnect/kafka"
    assert package_of("f (pyconnect/cli.py:1)") == "pyconnect"
    assert package_of("f (asyncio/events.py:78)") == "asyncio"


def test_lag_summary() -> None:
    summary = lag_summary([300.0, 100.0, 200.0, 1000.0])
    assert summary == {"count": 4, "p50_ms": 250.0, "max_ms": 1000.0, "min_ms": 100.0, "mean_ms": 400.0}
    with pytest.raises(ValueError):
        lag_summary([])


def test_goal_check_factor_in_both_directions() -> None:
    assert set(GOALS) == set(RATIO_DIRECTIONS)
    assert goal_check("throughput_100b", 0.5) == {"goal": 1.0, "met": False, "factor": 2.0}
    assert goal_check("throughput_1kb", 3.0)["met"] is True
    assert goal_check("rss", 0.5) == {"goal": 0.25, "met": False, "factor": 2.0}
    assert goal_check("startup", 0.1)["met"] is True
    assert goal_check("p99_latency", None) == {"goal": 1.0, "met": None, "factor": None}


def test_connector_configs_differ_only_in_alias() -> None:
    java = checkpoint_connector_config(
        "java-connect", "a:1", "b:1", ["t"], ["g"], emit_interval_s=1, sync_interval_s=2
    )
    ours = checkpoint_connector_config(
        "pyconnect", "a:1", "b:1", ["t"], ["g"], emit_interval_s=1, sync_interval_s=2
    )
    assert {k for k in java if java[k] != ours[k]} == {"source.cluster.alias"}
    assert java["emit.checkpoints.interval.seconds"] == "1"
    assert java["sync.group.offsets.interval.seconds"] == "2"
    assert java["sync.group.offsets.enabled"] == "true"
    assert connector_config("pyconnect", "a", "b", ["t"], 4, alias="pp")["source.cluster.alias"] == "pp"
    names = Names.for_system("pyconnect")
    assert (names.remote, names.checkpoints_topic) == ("py.bench-cp-py", "py.checkpoints.internal")
    assert names.offset_syncs_topic == "mm2-offset-syncs.B.internal"


def test_load_sampler_summary_from_samples() -> None:
    sampler = LoadSampler(interval=10.0)
    assert sampler.stop() is None
    sampler.samples.extend([(0.0, 1.0), (10.0, 3.0)])
    assert sampler.stop() == {
        "interval_s": 10.0,
        "min": 1.0,
        "mean": 2.0,
        "max": 3.0,
        "samples": [[0.0, 1.0], [10.0, 3.0]],
    }


def _ok(metrics: dict[str, Any]) -> dict[str, Any]:
    return {"status": "ok", "reason": None, "metrics": metrics}


def _results() -> dict[str, Any]:
    lag = {"count": 3, "p50_ms": 600.0, "max_ms": 990.0, "min_ms": 100.0, "mean_ms": 560.0}
    profile = {
        "rate_hz": 100,
        "sizes": {
            "100b": {
                "file": "profile-pyconnect-100b.folded.txt",
                "records_per_s_under_profiler": 20000.0,
                "cpu_percent_of_one_core": 97.0,
                "drain": {"records": 400000, "wall_s": 20.0},
                **summarize(parse_folded(FOLDED)),
            }
        },
    }
    scenarios = {
        "throughput": {
            "description": "d",
            "status": "ok",
            "reason": None,
            "systems": {
                "java-connect": _ok({"100b": {"records_per_s": 40000.0, "cpu_s_per_million": 16.0}}),
                "pyconnect": _ok({"100b": {"records_per_s": 20000.0, "cpu_s_per_million": 12.0}}),
            },
        },
        "checkpoint_lag": {
            "description": "d",
            "status": "ok",
            "reason": None,
            "systems": {
                "java-connect": _ok({"samples": 3, "checkpoint_lag": lag, "group_offset_lag": lag}),
                "pyconnect": _ok({"samples": 3, "checkpoint_lag": lag, "group_offset_lag": lag}),
            },
        },
        "profile": {
            "description": "d",
            "status": "ok",
            "reason": None,
            "systems": {"pyconnect": _ok(profile)},
        },
    }
    return report.build_results(
        mode="quick",
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:10:00+00:00",
        machine={
            "cpus": 2,
            "load_average_at_start": [1.5, 1.0, 0.5],
            "load_average_at_end": [2.0, 1.2, 0.6],
            "load_average_during_run": {
                "interval_s": 10.0,
                "min": 1.0,
                "mean": 2.0,
                "max": 4.0,
                "samples": [],
            },
        },
        settings={},
        systems={},
        scenarios=scenarios,
        notes=[],
    )


def test_report_shows_goals_load_checkpoint_lag_and_where_the_time_goes() -> None:
    results = _results()
    assert results["goals"]["throughput_100b"] == {"goal": 1.0, "met": False, "factor": 2.0}
    assert report.validate_results(results) == []
    md = report.render_markdown(results, chart_name=None)
    assert "1.50/1.00/0.50 at the start, 2.00/1.20/0.60 at the end" in md
    assert "mean 2.00, max 4.00" in md
    assert "| `throughput_100b` | 0.500 | higher is better | at least 1 | no: 2.00x short |" in md
    assert "## Checkpoint lag" in md and "| 3 | 600.0 | 990.0 | 600.0 | 990.0 |" in md
    assert "## Where the time goes" in md
    assert (
        "`throughput_100b` = 0.500 against a goal of at least 1: pyconnect's figure must improve 2.00x" in md
    )
    assert "| `BatchSender.send` | `aiokafka/producer/producer.py:300` | 50.0 | 50.0 |" in md
    assert "aiokafka 50.0 %" in md
    # 100 samples at 100 Hz over 20 s: active 5 % of the time, well under the 97 % of a core it used
    assert (
        "running or waiting for a core in about 5 % of the drain's wall time and used 97 % of one core." in md
    )
    assert "pyconnect 12.0 s, Java MirrorSourceConnector on Java Connect 16.0 s (ratio 0.75" in md
    assert [p[0] for p in report.chart_series(results)][-1] == "Checkpoint lag p50"


def test_write_results_writes_artifacts_and_drops_stale_profiles(tmp_path: Path) -> None:
    (tmp_path / "profile-pyconnect-old.folded.txt").write_text("stale 1\n")
    results = _results()
    report.write_results(results, tmp_path, {"profile-pyconnect-100b.folded.txt": FOLDED})
    assert (tmp_path / "profile-pyconnect-100b.folded.txt").read_text() == FOLDED
    assert not (tmp_path / "profile-pyconnect-old.folded.txt").exists()
    assert json.loads((tmp_path / "results.json").read_text())["goals"]["rss"]["met"] is None
    assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_worker_runnable_far_more_than_it_runs_is_called_short_of_cpu() -> None:
    lines = report._cpu_lines(
        {"samples": 1600, "cpu_percent_of_one_core": 35.0}, {"wall_s": 20.0}, 100, None, "100b"
    )
    assert "about 80 %" in lines[0] and "short of CPU" in lines[0]
