"""The pure parts of the benchmark suite: percentiles, ratio directions, the results schema, the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import report
from benchmarks.metrics_cost import RATIOS as METRICS_COST_RATIOS
from benchmarks.perftools import PerfToolError, parse_consumer_output, parse_producer_output
from benchmarks.stats import (
    RATIO_DIRECTIONS,
    better,
    combine_drains,
    cpu_seconds_per_million,
    latency_summary,
    percentile,
    rate,
    ratio,
)
from benchmarks.workload import seq_of, value_for

REQUIRED_RATIOS = {
    "throughput_100b",
    "throughput_1kb",
    "limit_100b",
    "limit_1kb",
    "cpu_100b",
    "cpu_1kb",
    "best_java_100b",
    "best_java_1kb",
    "p99_latency",
    "rss",
    "startup",
    "control_create",
    "control_status",
    "uvloop_vs_asyncio_100b",
    "uvloop_vs_asyncio_1kb",
    "uvloop_vs_asyncio_cpu_100b",
    "uvloop_vs_asyncio_cpu_1kb",
    "eos_throughput_poll",
    "eos_throughput_interval",
    "eos_p99_latency",
    "wan_throughput_1kb",
    "compressed_lz4",
    "compressed_zstd",
    "compressed_cpu_lz4",
    "compressed_cpu_zstd",
    "metrics_on_vs_off_100b",
    "metrics_on_vs_off_1kb",
    "metrics_on_vs_off_cpu_100b",
    "metrics_on_vs_off_cpu_1kb",
    "metrics_on_vs_off_p99",
    "metrics_on_vs_off_rss",
    "many_partitions_copy",
    "many_partitions_idle_cpu",
    "many_partitions_rss",
    "many_partitions_reconfigure",
}


def test_percentile_interpolates_between_ranks_like_numpy() -> None:
    values = [1.0, 2.0, 3.0, 4.0]
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 4.0
    assert percentile(values, 50) == 2.5
    assert percentile(values, 25) == pytest.approx(1.75)
    assert percentile(list(range(1, 101)), 99) == pytest.approx(99.01)


def test_percentile_ignores_input_order_and_handles_one_value() -> None:
    assert percentile([5.0, 1.0, 3.0], 50) == 3.0
    assert percentile([7.0], 99) == 7.0


@pytest.mark.parametrize("q", [-1, 100.5])
def test_percentile_rejects_out_of_range(q: float) -> None:
    with pytest.raises(ValueError):
        percentile([1.0], q)


def test_percentile_of_nothing_is_an_error_not_zero() -> None:
    with pytest.raises(ValueError):
        percentile([], 50)


def test_latency_summary() -> None:
    summary = latency_summary([float(v) for v in range(1, 101)])
    assert summary["count"] == 100
    assert summary["p50_ms"] == pytest.approx(50.5)
    assert summary["p99_ms"] == pytest.approx(99.01)
    assert summary["max_ms"] == 100.0


def test_rate_and_cpu_per_million_refuse_empty_intervals() -> None:
    assert rate(100, 2.0) == 50.0
    assert rate(100, 0.0) is None
    assert cpu_seconds_per_million(2.0, 500_000) == 4.0
    assert cpu_seconds_per_million(2.0, 0) is None


def test_ratio_is_pyconnect_over_java_and_null_when_a_side_is_missing() -> None:
    assert ratio(50.0, 100.0) == 0.5
    assert ratio(None, 100.0) is None
    assert ratio(50.0, None) is None
    assert ratio(50.0, 0.0) is None


def test_ratio_directions() -> None:
    assert set(RATIO_DIRECTIONS) == REQUIRED_RATIOS
    assert RATIO_DIRECTIONS["throughput_100b"] == RATIO_DIRECTIONS["throughput_1kb"] == "higher"
    for name in ("p99_latency", "rss", "startup", "control_create", "control_status"):
        assert RATIO_DIRECTIONS[name] == "lower"
    assert RATIO_DIRECTIONS["uvloop_vs_asyncio_100b"] == RATIO_DIRECTIONS["uvloop_vs_asyncio_1kb"] == "higher"
    assert (
        RATIO_DIRECTIONS["uvloop_vs_asyncio_cpu_100b"]
        == RATIO_DIRECTIONS["uvloop_vs_asyncio_cpu_1kb"]
        == "lower"
    )
    assert better("throughput_100b", 1.2) and not better("throughput_100b", 0.8)
    assert better("p99_latency", 0.8) and not better("p99_latency", 1.2)


def _ok(metrics: dict[str, Any]) -> dict[str, Any]:
    return {"status": "ok", "reason": None, "metrics": metrics}


def _unavailable() -> dict[str, Any]:
    return {
        "status": "unavailable",
        "reason": "MirrorSourceConnector is not available in this build",
        "metrics": None,
    }


def _scenarios(py: bool) -> dict[str, Any]:
    def systems(java: dict[str, Any], pyc: dict[str, Any]) -> dict[str, Any]:
        return {"java-connect": _ok(java), "pyconnect": _ok(pyc) if py else _unavailable()}

    def scenario(java: dict[str, Any], pyc: dict[str, Any]) -> dict[str, Any]:
        return {"description": "d", "status": "ok", "reason": None, "systems": systems(java, pyc)}

    return {
        "limit": {
            "description": "d",
            "status": "ok",
            "reason": None,
            "systems": {
                "brokers": _ok(
                    {
                        "100b": {
                            "produce": {"records": 10, "records_per_s": 40000.0, "mb_per_s": 4.0},
                            "consume": {"records": 10, "records_per_s": 80000.0, "mb_per_s": 8.0},
                        },
                        "1kb": {"produce": {"records": 10, "records_per_s": 12500.0, "mb_per_s": 12.5}},
                    }
                )
            },
        },
        "throughput": {
            "description": "d",
            "status": "ok",
            "reason": None,
            "systems": {
                **systems(
                    {
                        "100b": {"records_per_s": 40000.0, "cpu_s_per_million": 8.0},
                        "1kb": {"records_per_s": 10000.0, "cpu_s_per_million": 30.0},
                    },
                    {
                        "100b": {"records_per_s": 20000.0, "cpu_s_per_million": 2.0},
                        "1kb": {"records_per_s": 10000.0, "cpu_s_per_million": 9.0},
                    },
                ),
                "java-dedicated": _ok({"100b": {"records_per_s": 50000.0}, "1kb": {"records_per_s": 8000.0}}),
            },
        },
        "latency": scenario(
            {"rates": [{"rate": 500, "p99_ms": 20.0}, {"rate": 2000, "p99_ms": 30.0}]},
            {"rates": [{"rate": 500, "p99_ms": 30.0}]},
        ),
        "resources": scenario({"peak_rss_mb": 400.0}, {"peak_rss_mb": 100.0}),
        "startup": scenario({"first_record_s": 10.0}, {"first_record_s": 2.0}),
        "control_plane": scenario(
            _control({300: (40.0, 30.0), 1000: (200.0, 100.0)}),
            _control({300: (10.0, 15.0), 1000: (60.0, 70.0)}),
        ),
        "event_loop": {
            "description": "d",
            "status": "ok",
            "reason": None,
            "systems": {"pyconnect": _ok(_loops(25000.0, 20000.0)) if py else _unavailable()},
        },
        "wan": scenario(
            {"one_way_delay_ms": 20, "1kb": {"records_per_s": 5000.0}},
            {"one_way_delay_ms": 20, "1kb": {"records_per_s": 12500.0}},
        ),
        "compressed": scenario(
            {
                "lz4": {"records_per_s": 20000.0, "cpu_s_per_million": 40.0},
                "zstd": {"records_per_s": 10000.0, "cpu_s_per_million": 80.0},
            },
            {
                "lz4": {"records_per_s": 60000.0, "cpu_s_per_million": 8.0},
                "zstd": {"records_per_s": 30000.0, "cpu_s_per_million": 24.0},
            },
        ),
        "exactly_once": scenario(
            _eos(poll=8000.0, interval=10000.0, p99=40.0), _eos(poll=12000.0, interval=12000.0, p99=20.0)
        ),
        "many_partitions": scenario(
            _many(copied=40.0, cpu=0.02, rss=600.0, reconfigure=12.0),
            _many(copied=30.0, cpu=0.03, rss=120.0, reconfigure=9.0),
        ),
    }


def _many(copied: float, cpu: float, rss: float, reconfigure: float) -> dict[str, Any]:
    """Many-partitions metrics: 100 topics of 8 partitions, 20 added."""
    return {
        "topics": 100,
        "partitions": 800,
        "refresh_topics_interval_s": 5,
        "tasks_max": 4,
        "topics_regex": "bench-mp-(base|mp)-.*",
        "copy": {"tasks_running_s": 2.0, "first_record_s": 3.0, "copied_s": copied},
        "idle": {"cpu_s_per_s": cpu, "cpu_percent": cpu * 100, "rss_mb": rss},
        "reconfigure": {"topics": 20, "partitions": 160, "source_ready_s": 1.5, "copied_s": reconfigure},
        "peak_rss_mb": rss + 10,
    }


def _eos(poll: float, interval: float, p99: float) -> dict[str, Any]:
    """Exactly-once metrics: drains at each boundary, latency at one rate."""
    drain = {"records": 50000, "committed": 50000, "duplicates": 0, "missing": 0}
    return {
        "poll": {**drain, "records_per_s": poll, "cpu_s_per_million": 30.0},
        "interval": {**drain, "records_per_s": interval, "cpu_s_per_million": 20.0},
        "latency": {"rates": [{"rate": 500, "p99_ms": p99}]},
    }


def _loops(uvloop_100b: float, asyncio_100b: float) -> dict[str, Any]:
    """Event-loop metrics: the 100 B rates given, 1 KB at 12,000 and 8,000 records/s, CPU 4 vs 5 s/M."""

    def drains(rate_100b: float, rate_1kb: float, cpu: float) -> dict[str, Any]:
        return {
            "100b": {
                "records_per_s": rate_100b,
                "mb_per_s": 2.0,
                "cpu_s_per_million": cpu,
                "rounds": [{"records_per_s": rate_100b - 100}, {"records_per_s": rate_100b + 100}],
            },
            "1kb": {"records_per_s": rate_1kb, "mb_per_s": 12.3, "cpu_s_per_million": cpu * 3},
        }

    return {
        "uvloop": {"alias": "lu", "event_loop": "uvloop", **drains(uvloop_100b, 12000.0, 4.0)},
        "asyncio": {"alias": "la", "event_loop": "asyncio", **drains(asyncio_100b, 8000.0, 5.0)},
        "rounds": 2,
    }


def _control(sizes: dict[int, tuple[float, float]]) -> dict[str, Any]:
    """Control-plane metrics: per connector count, (create wall s, expand=status p50 ms)."""
    return {
        "workers": 3,
        "concurrency": 8,
        "repeats": 20,
        "sizes": [
            {
                "connectors": n,
                "create": {
                    "requests": n,
                    "wall_s": create,
                    "per_s": round(n / create, 1),
                    "p50_ms": 300.0,
                    "p99_ms": 900.0,
                    "retries": 0,
                },
                "create_to_running_s": create + 1.0,
                "status": {"p50_ms": status, "p99_ms": status * 2},
                "info": {"p50_ms": status * 1.5, "p99_ms": status * 3},
                "restart": {"requests": n, "wall_s": 2.0, "per_s": n / 2.0, "retries": 1},
                "delete": {"requests": n, "wall_s": 8.0, "per_s": n / 8.0, "retries": 0},
                "delete_to_gone_s": 8.5,
            }
            for n, (create, status) in sizes.items()
        ],
    }


def _results(py: bool, scenarios: dict[str, Any] | None = None) -> dict[str, Any]:
    return report.build_results(
        mode="quick",
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:10:00+00:00",
        machine={"cpu_model": "x", "cpus": 2},
        settings={"partitions": 8},
        systems={"pyconnect": {"available": py}},
        scenarios=_scenarios(py) if scenarios is None else scenarios,
        notes=["shared machine"],
    )


def test_ratios_when_both_sides_ran() -> None:
    results = _results(py=True)
    assert results["ratios"] == {
        "throughput_100b": 0.5,
        "throughput_1kb": 1.0,
        "limit_100b": 0.5,  # 20,000 of the brokers' 40,000 records/s
        "limit_1kb": 0.8,
        "cpu_100b": 0.25,
        "cpu_1kb": 0.3,
        "best_java_100b": 0.4,  # Java MirrorMaker 2 dedicated was the faster at 100 B
        "best_java_1kb": 1.0,  # and the Connect worker at 1 KB
        "p99_latency": 1.5,
        "rss": 0.25,
        "startup": 0.2,
        "control_create": 0.3,
        "control_status": 0.7,
        "uvloop_vs_asyncio_100b": 1.25,
        "uvloop_vs_asyncio_1kb": 1.5,
        "uvloop_vs_asyncio_cpu_100b": 0.8,
        "uvloop_vs_asyncio_cpu_1kb": 0.8,
        "eos_throughput_poll": 1.5,
        "eos_throughput_interval": 1.2,
        "eos_p99_latency": 0.5,
        "wan_throughput_1kb": 2.5,
        "compressed_lz4": 3.0,
        "compressed_zstd": 3.0,
        "compressed_cpu_lz4": 0.2,
        "compressed_cpu_zstd": 0.3,
        "many_partitions_copy": 0.75,
        "many_partitions_idle_cpu": 1.5,
        "many_partitions_rss": 0.2,
        "many_partitions_reconfigure": 0.75,
        **dict.fromkeys(METRICS_COST_RATIOS),  # the metrics_cost scenario is not in these scenarios
    }
    assert results["ratio_notes"]["wan_throughput_1kb"] == (
        "1 KB drain with the source 40 ms away (records/s): pyconnect / java-connect"
    )
    assert results["ratio_notes"]["best_java_100b"] == (
        "records/s draining the 100b backlog: pyconnect / the faster Java set-up (java-dedicated)"
    )
    assert results["goals"]["limit_100b"] == {"goal": 0.6, "met": False, "factor": 1.2}
    assert results["goals"]["cpu_100b"] == {"goal": 0.25, "met": True, "factor": 1.0}
    assert results["goals"]["wan_throughput_1kb"] == {"goal": 2.0, "met": True, "factor": 0.8}
    assert results["ratio_notes"]["compressed_cpu_zstd"] == (
        "zstd-compressed 1 KB backlog drained (CPU-seconds per million records): pyconnect / java-connect"
    )
    assert results["goals"]["compressed_cpu_zstd"] == {"goal": 0.25, "met": False, "factor": 1.2}
    assert "Compressed source" in report.render_markdown(results, chart_name=None)
    assert results["ratio_notes"]["eos_throughput_interval"] == (
        "exactly-once drain, interval boundary (records/s): pyconnect / java-connect"
    )
    assert results["goals"]["eos_p99_latency"] == {"goal": 1.0, "met": True, "factor": 0.5}
    assert "Exactly-once" in report.render_markdown(results, chart_name=None)
    assert "500 records/s" in results["ratio_notes"]["p99_latency"]
    assert results["ratio_notes"]["uvloop_vs_asyncio_1kb"] == (
        "records/s draining the 1kb backlog: pyconnect on uvloop / pyconnect on asyncio"
    )
    assert results["goals"]["uvloop_vs_asyncio_1kb"] == {"goal": 1.0, "met": True, "factor": 0.67}
    assert results["ratio_notes"]["uvloop_vs_asyncio_cpu_100b"] == (
        "CPU-seconds per record draining the 100b backlog: pyconnect on uvloop / pyconnect on asyncio"
    )
    assert "with 1000 connectors" in results["ratio_notes"]["control_status"]
    assert report.validate_results(results) == []


def test_p99_ratio_takes_the_rate_least_favourable_to_pyconnect() -> None:
    scenarios = _scenarios(py=True)
    scenarios["latency"]["systems"]["pyconnect"]["metrics"] = {
        "rates": [{"rate": 500, "p99_ms": 10.0}, {"rate": 2000, "p99_ms": 60.0}]
    }
    ratios, notes = report.compute_ratios(scenarios)
    assert ratios["p99_latency"] == 2.0
    assert "2000 records/s" in notes["p99_latency"]


def test_ratios_are_null_with_the_reason_when_pyconnect_did_not_run() -> None:
    results = _results(py=False)
    assert set(results["ratios"]) == REQUIRED_RATIOS
    assert all(v is None for v in results["ratios"].values())
    for name in REQUIRED_RATIOS - set(METRICS_COST_RATIOS):
        assert "not available in this build" in results["ratio_notes"][name]
    for name in METRICS_COST_RATIOS:
        assert results["ratio_notes"][name] == "pyconnect: scenario 'metrics_cost' did not run"
    assert report.validate_results(results) == []


def test_results_survive_json_and_keep_every_required_key() -> None:
    results = json.loads(json.dumps(_results(py=False)))
    for key in report.REQUIRED_TOP_LEVEL:
        assert key in results
    assert results["schema"] == report.SCHEMA
    assert set(results["ratios"]) >= REQUIRED_RATIOS


def test_validate_results_reports_schema_departures() -> None:
    results = _results(py=True)
    del results["ratios"]["rss"]
    results["ratios"]["startup"] = "fast"
    results["scenarios"]["startup"]["systems"]["pyconnect"] = {"status": "failed", "reason": None}
    problems = report.validate_results(results)
    assert any("lacks 'rss'" in p for p in problems)
    assert any("'startup'] is neither" in p for p in problems)
    assert any("without a reason" in p for p in problems)
    results = _results(py=False)
    results["ratio_notes"]["rss"] = ""
    assert any("null without a note" in p for p in report.validate_results(results))


def test_markdown_shows_figures_and_na_with_reasons() -> None:
    text = report.render_markdown(_results(py=False))
    assert "| `throughput_100b` | n/a | higher is better |" in text
    assert "not available in this build" in text
    assert "40,000" in text  # Java's 100 B records/s
    assert "![benchmark chart](chart.png)" in text
    assert "> shared machine" in text
    text = report.render_markdown(_results(py=True))
    assert "| `rss` | 0.250 | lower is better |" in text


def test_chart_series_marks_missing_systems_as_none() -> None:
    panels = dict((title, values) for title, _, values in report.chart_series(_results(py=False)))
    assert panels["Throughput 100B"] == {
        "brokers": 40000.0,
        "java-connect": 40000.0,
        "java-dedicated": 50000.0,
        "pyconnect": None,
    }
    assert panels["p99 latency at 500 rec/s"]["pyconnect"] is None


def test_write_results_writes_json_and_markdown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[Path] = []
    monkeypatch.setattr(report, "render_chart", lambda results, path: drawn.append(path))
    paths = report.write_results(_results(py=False), tmp_path)
    assert json.loads(paths["json"].read_text())["ratios"]["rss"] is None
    assert "chart.png" in paths["markdown"].read_text()
    assert drawn == [tmp_path / "chart.png"]


def test_chart_is_a_png(tmp_path: Path) -> None:
    report.render_chart(_results(py=False), tmp_path / "chart.png")
    assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_perf_tool_output_parsing() -> None:
    produced = parse_producer_output(
        "12 records sent, 5.0 records/sec (0.01 MB/sec), 1.0 ms avg latency, 2.0 ms max latency.\n"
        "500000 records sent, 56876.350813 records/sec (5.42 MB/sec), 223.24 ms avg latency, 1346.00 ms max "
        "latency, 198 ms 50th, 575 ms 95th, 679 ms 99th, 718 ms 99.9th.\n"
    )
    assert produced["records"] == 500000 and produced["records_per_s"] == pytest.approx(56876.350813)
    assert produced["p99_latency_ms"] == 679
    consumed = parse_consumer_output(
        "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, "
        "fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec\n"
        "[2026-11-22 05:06:45,355] INFO initializing Kafka metrics collector (x)\n"
        "2026-11-22 05:06:46:370, 2026-11-22 05:06:49:532, 47.6837, 15.0802, 500000, 158127.7672, 1668, 1494, "
        "31.9168, 334672.0214\n"
    )
    assert consumed["records"] == 500000 and consumed["records_per_s"] == pytest.approx(334672.0214)
    with pytest.raises(PerfToolError):
        parse_consumer_output("nothing here")


def test_failover_kills_a_follower_hosting_most_tasks() -> None:
    from benchmarks.scenarios import _pick_victim
    from pyconnect.testing.worker_process import PyconnectWorker

    workers = [PyconnectWorker("127.0.0.1:1", Path(f"w{i}"), port=9000 + i) for i in range(3)]
    ids = [w.worker_id for w in workers]
    counts = {ids[0]: 2, ids[1]: 1, ids[2]: 1}
    assert _pick_victim(counts, workers, None) == ids[0]
    assert _pick_victim(counts, workers, "http://127.0.0.1:9000/") in (ids[1], ids[2])
    assert _pick_victim({ids[0]: 4}, workers, "http://127.0.0.1:9000/") == ids[0]


def test_values_carry_their_sequence_number() -> None:
    value = value_for(123456789, 100)
    assert len(value) == 100
    assert seq_of(value) == 123456789
    assert seq_of(b"short") is None


def test_scale_out_section_compares_the_fleet_with_each_single_worker() -> None:
    scenarios = _scenarios(py=True)
    scenarios["scale_out"] = {
        "description": "fleet of two",
        "status": "ok",
        "reason": None,
        "systems": {
            "pyconnect": _ok(
                {
                    "workers": 2,
                    "100b": {"records_per_s": 36000.0, "cpu_s_per_million": 7.1, "tasks_per_worker": [2, 2]},
                    "1kb": {"records_per_s": 15000.0, "cpu_s_per_million": 25.0, "tasks_per_worker": [2, 2]},
                    "peak_rss_mb_total": 330.5,
                }
            )
        },
    }
    results = _results(True, scenarios)
    text = report.render_markdown(results)
    assert "## Scale-out: a pyconnect fleet of two workers on the same machine" in text
    # 100 B: 36k against Java's 40k and pyconnect's single 20k; 1 KB: 15k against 10k and 10k.
    assert "| 100B | 36,000 | 7.1 | 2 + 2 | 0.90 | 1.80 |" in text
    assert "| 1KB | 15,000 | 25.0 | 2 + 2 | 1.50 | 1.50 |" in text
    assert "both workers together: 330.5 MB" in text
    failed = dict(
        scenarios,
        scale_out={
            **scenarios["scale_out"],
            "systems": {"pyconnect": {"status": "failed", "reason": "worker exited", "metrics": None}},
        },
    )
    results["scenarios"] = failed
    assert "Status: **failed**: worker exited" in report.render_markdown(results)


def test_control_ratios_take_the_connector_count_least_favourable_to_pyconnect() -> None:
    scenarios = _scenarios(py=True)
    # 300: create 10/40 = 0.25, status 15/30 = 0.5; 1000: create 60/200 = 0.3, status 70/100 = 0.7.
    ratios, notes = report.compute_ratios(scenarios)
    assert ratios["control_create"] == 0.3 and ratios["control_status"] == 0.7
    assert "time to answer every create (s) with 1000 connectors" in notes["control_create"]
    assert "[300, 1000]" in notes["control_create"]
    # A count only one side ran is not compared.
    scenarios["control_plane"]["systems"]["pyconnect"]["metrics"] = _control(
        {300: (12.0, 27.0), 5000: (1.0, 1.0)}
    )
    ratios, notes = report.compute_ratios(scenarios)
    assert ratios["control_create"] == 0.3 and ratios["control_status"] == 0.9
    assert "with 300 connectors" in notes["control_status"]


def test_control_ratios_are_null_with_the_reason_when_a_side_failed() -> None:
    scenarios = _scenarios(py=True)
    scenarios["control_plane"]["systems"]["java-connect"] = {
        "status": "failed",
        "reason": "300 connectors: TimeoutError",
        "metrics": None,
    }
    results = _results(True, scenarios)
    assert results["ratios"]["control_create"] is None
    assert "300 connectors: TimeoutError" in results["ratio_notes"]["control_status"]
    assert results["goals"]["control_create"] == {"goal": 1.0, "met": None, "factor": None}
    assert report.validate_results(results) == []


def test_control_plane_section_lists_each_phase_and_the_ratios_per_count() -> None:
    results = _results(py=True)
    assert results["goals"]["control_create"] == {"goal": 1.0, "met": True, "factor": 0.3}
    text = report.render_markdown(results)
    assert "## Control plane: many connectors through REST on a fleet of three workers" in text
    assert "| `control_create` | 0.300 | lower is better | at most 1 | yes |" in text
    # pyconnect at 300: create 10 s (30/s), status p50/p99 15/30 ms, info 22.5/45 ms, one retried restart.
    assert (
        "| pyconnect | 300 | 10.00 (30.0/s) | 300.0 / 900.0 | 11.00 | 15.0 / 30.0 | "
        "22.5 / 45.0 | 2.00 (150.0/s) | 8.00 (37.5/s) | 8.50 | 1 |" in text
    )
    # pyconnect / Java at 1000: create 0.3, RUNNING 61/201, status 0.7 (p50 and p99), restart and delete 1.
    assert "| 1,000 | 0.30 | 0.30 | 0.70 | 0.70 | 0.70 | 0.70 | 1.00 | 1.00 |" in text
    assert "3 workers, 8 writes in flight" in text
    assert "pyconnect / Java Connect (lower is better):" in text


def test_chart_has_a_control_plane_panel_for_the_largest_count() -> None:
    panels = dict((title, values) for title, _, values in report.chart_series(_results(py=True)))
    assert panels["Create 1000 connectors (REST)"] == {"java-connect": 200.0, "pyconnect": 60.0}


def test_event_loop_section_sets_both_loops_side_by_side_with_the_ratio_line() -> None:
    text = report.render_markdown(_results(py=True), chart_name=None)
    section = text.split("## Event loop: pyconnect on uvloop vs asyncio's loop")[1].split("\n## ")[0]
    assert "| 100B | uvloop | 25,000 | 2.00 | 4.0 | 24,900 / 25,100 |" in section
    assert "| 1KB | asyncio | 8,000 | 12.30 | 15.0 | n/a |" in section
    assert "uvloop / asyncio: 100B 1.25x the records/s (0.80x the CPU per record); 1KB 1.50x" in section
    assert "| `uvloop_vs_asyncio_100b` | 1.250 | higher is better | at least 1 | yes |" in text


def test_event_loop_ratio_is_null_with_the_reason_when_a_loop_failed() -> None:
    scenarios = _scenarios(py=True)
    scenarios["event_loop"]["systems"]["pyconnect"] = {
        "status": "failed",
        "reason": "RuntimeError: the worker started with --event-loop asyncio runs on uvloop",
        "metrics": None,
    }
    results = _results(py=True, scenarios=scenarios)
    assert results["ratios"]["uvloop_vs_asyncio_100b"] is None
    assert "runs on uvloop" in results["ratio_notes"]["uvloop_vs_asyncio_100b"]
    assert results["ratios"]["throughput_100b"] == 0.5
    assert report.validate_results(results) == []
    scenarios["event_loop"]["systems"]["pyconnect"] = _ok(_loops(25000.0, 20000.0))
    del scenarios["event_loop"]["systems"]["pyconnect"]["metrics"]["asyncio"]["100b"]
    ratios, notes = report.compute_ratios(scenarios)
    assert ratios["uvloop_vs_asyncio_100b"] is None and ratios["uvloop_vs_asyncio_1kb"] == 1.5
    assert ratios["uvloop_vs_asyncio_cpu_100b"] is None and ratios["uvloop_vs_asyncio_cpu_1kb"] == 0.8
    assert notes["uvloop_vs_asyncio_100b"].endswith("a figure is missing on one loop")


class _MetricsWorker:
    def __init__(self, status: int, body: object) -> None:
        self.answer = (status, body)

    def rest(
        self, method: str, path: str, body: object = None, *, timeout: float = 30.0
    ) -> tuple[int, object]:
        assert (method, path) == ("GET", "/metrics")
        return self.answer


def test_event_loop_of_reads_the_info_series_of_a_worker() -> None:
    from benchmarks.runners import event_loop_of

    text = (
        "# TYPE python_eventloop_lag_seconds gauge\npython_eventloop_lag_seconds 0.001\n"
        '# TYPE python_eventloop_info gauge\npython_eventloop_info{implementation="asyncio",version="3.11.7"} 1.0\n'
    )
    assert event_loop_of(_MetricsWorker(200, text)) == "asyncio"  # type: ignore[arg-type]
    assert event_loop_of(_MetricsWorker(200, "process_open_fds 12.0\n")) is None  # type: ignore[arg-type]
    assert event_loop_of(_MetricsWorker(404, {"error_code": 404})) is None  # type: ignore[arg-type]


def test_pyconnect_workers_are_launched_on_the_loop_asked_for(tmp_path: Path) -> None:
    from benchmarks.runners import make_workers

    [worker] = make_workers("pyconnect", "127.0.0.1:9", tmp_path, 1, event_loop="asyncio")
    command = worker.launch().command
    assert command[command.index("--event-loop") + 1] == "asyncio"
    [default] = make_workers("pyconnect", "127.0.0.1:9", tmp_path, 1)
    assert "--event-loop" not in default.launch().command
    with pytest.raises(ValueError, match="java-connect has no event loop"):
        make_workers("java-connect", "127.0.0.1:9", tmp_path, 1, event_loop="asyncio")


def test_drains_combine_over_their_summed_windows_and_records() -> None:
    first = {"measured_records": 300_000, "measured_window_s": 3.0, "cpu_s_per_million": 4.0}
    second = {"measured_records": 100_000, "measured_window_s": 2.0, "cpu_s_per_million": 8.0}
    combined = combine_drains([first, second], 100)
    assert combined["records_per_s"] == 80_000.0  # 400,000 records in 5 s, not the mean of 100k and 50k
    assert combined["mb_per_s"] == 8.0
    assert combined["cpu_s_per_million"] == 5.0  # (1.2 + 0.8) CPU-s over 0.4 M records
    assert combined["rounds"] == [first, second]
    assert combine_drains([first, {**second, "cpu_s_per_million": None}], 100)["cpu_s_per_million"] is None
    with pytest.raises(ValueError):
        combine_drains([], 100)


def test_compressed_payload_lines_are_distinct_sized_and_compress_like_text(tmp_path: Path) -> None:
    import zlib

    from benchmarks import compressed

    path = compressed.write_payload_file(tmp_path / "p.txt", 200, 1024)
    lines = path.read_text().splitlines()
    assert len(lines) == 200 and len(set(lines)) == 200
    assert {len(line.encode()) for line in lines} == {1024}
    assert path.read_text() == compressed.write_payload_file(tmp_path / "q.txt", 200, 1024).read_text()
    joined = "\n".join(lines).encode()
    assert 2 < len(joined) / len(zlib.compress(joined)) < 10  # text-like, not a repeated payload
    assert compressed.overrides("zstd") == {"producer.override.compression.type": "zstd"}
