"""The many-partitions scenario's pure parts: topic names and regex, the connector JSON, idle figures,
the process tree, its ratios and its report section."""

from __future__ import annotations

import re
from typing import Any

import pytest

from benchmarks import many_partitions as mp
from benchmarks import report
from benchmarks.procstats import tree_of
from benchmarks.stats import GOALS, RATIO_DIRECTIONS

RATIOS = (
    "many_partitions_copy",
    "many_partitions_idle_cpu",
    "many_partitions_rss",
    "many_partitions_reconfigure",
)


def test_each_system_regex_takes_the_shared_topics_and_only_its_own_added_ones() -> None:
    base = mp.base_topics(3)
    assert base == ["bench-mp-base-0000", "bench-mp-base-0001", "bench-mp-base-0002"]
    java, py = (mp.MP_ALIASES[s] for s in ("java-connect", "pyconnect"))
    assert java != py
    for alias, other in ((java, py), (py, java)):
        pattern = re.compile(mp.topics_regex(alias))
        assert all(pattern.fullmatch(t) for t in base + mp.added_topics(alias, 2))
        assert not any(pattern.fullmatch(t) for t in mp.added_topics(other, 2))
        assert not pattern.fullmatch("bench-tp-100b")
    assert mp.remote_topics(java, ["t"]) == [f"{java}.t"]


def test_connector_json_is_the_same_on_both_systems_but_for_the_alias() -> None:
    configs = {s: mp.connector_config(s, "a:9092", "b:9092", 4) for s in mp.MP_ALIASES}
    java, py = configs["java-connect"], configs["pyconnect"]
    assert java["refresh.topics.interval.seconds"] == py["refresh.topics.interval.seconds"] == "5"
    assert java["tasks.max"] == "4"
    assert java["topics"] == mp.topics_regex("mj") and py["topics"] == mp.topics_regex("mp")
    differing = {k for k in java if java[k] != py.get(k)}
    assert differing == {"source.cluster.alias", "topics"}


def test_chunks_cover_every_item_in_order_and_refuse_an_empty_size() -> None:
    assert [list(c) for c in mp.chunks(list(range(5)), 2)] == [[0, 1], [2, 3], [4]]
    assert list(mp.chunks([], 200)) == []
    with pytest.raises(ValueError):
        list(mp.chunks([1], 0))


def test_idle_figures_are_cpu_per_second_and_summed_rss() -> None:
    figures = mp.idle_figures(10.0, 10.6, 30.0, [100.0, 20.5])
    assert figures == {
        "window_s": 30.0,
        "cpu_s_per_s": 0.02,
        "cpu_percent": 2.0,
        "rss_mb": 120.5,
        "processes": 2,
    }
    with pytest.raises(ValueError):
        mp.idle_figures(0.0, 1.0, 0.0, [1.0])


def test_process_tree_is_the_root_and_its_descendants_only() -> None:
    parents = {1: 0, 10: 1, 11: 10, 12: 10, 13: 11, 20: 1, 21: 20}
    assert tree_of(parents, 10) == [10, 11, 12, 13]
    assert tree_of(parents, 99) == [99]


def _entry(**metrics: Any) -> dict[str, Any]:
    return {"status": "ok", "reason": None, "metrics": metrics}


def _metrics(copied: float, cpu: float, rss: float, reconfigure: float) -> dict[str, Any]:
    return {
        "topics": 1000,
        "partitions": 8000,
        "partitions_per_topic": 8,
        "tasks_max": 4,
        "refresh_topics_interval_s": 5,
        "topics_regex": "bench-mp-(base|mj)-.*",
        "copy": {"tasks_running_s": 4.2, "first_record_s": 6.1, "copied_s": copied},
        "idle": {"cpu_s_per_s": cpu, "cpu_percent": cpu * 100, "rss_mb": rss},
        "reconfigure": {
            "topics": 100,
            "partitions": 800,
            "source_ready_s": 2.5,
            "copied_s": reconfigure,
            "recopied_records": 0,
        },
        "peak_rss_mb": rss * 1.5,
    }


def _scenario(py: dict[str, Any]) -> dict[str, Any]:
    return {
        "many_partitions": {
            "description": "one connector over many topics",
            "status": "ok",
            "reason": None,
            "systems": {
                "java-connect": _entry(**_metrics(copied=50.0, cpu=0.04, rss=800.0, reconfigure=10.0)),
                "pyconnect": py,
            },
        }
    }


def test_ratios_are_lower_is_better_with_their_goals() -> None:
    for name in RATIOS:
        assert RATIO_DIRECTIONS[name] == "lower"
    assert [GOALS[name] for name in RATIOS] == [1.0, 1.0, 0.25, 1.0]
    py = _entry(**_metrics(copied=25.0, cpu=0.06, rss=160.0, reconfigure=12.0))
    ratios, notes = report.compute_ratios(_scenario(py))
    assert {name: ratios[name] for name in RATIOS} == {
        "many_partitions_copy": 0.5,
        "many_partitions_idle_cpu": 1.5,
        "many_partitions_rss": 0.2,
        "many_partitions_reconfigure": 1.2,
    }
    assert notes["many_partitions_copy"] == (
        "connector creation to 8,000 partitions (1,000 topics) copied, one record each (s): "
        "pyconnect / java-connect"
    )
    assert "800 partitions (100 topics) added" in notes["many_partitions_reconfigure"]
    assert "refresh.topics.interval.seconds=5" in notes["many_partitions_reconfigure"]


def test_ratios_are_null_with_the_reason_when_pyconnect_failed() -> None:
    failed = {"status": "failed", "reason": "TimeoutError: 10 of 8000 records", "metrics": None}
    ratios, notes = report.compute_ratios(_scenario(failed))
    for name in RATIOS:
        assert ratios[name] is None
        assert notes[name] == "pyconnect: failed: TimeoutError: 10 of 8000 records"


def test_section_shows_each_system_and_says_the_refresh_interval_is_included() -> None:
    py = _entry(**_metrics(copied=25.0, cpu=0.06, rss=160.0, reconfigure=12.0))
    text = "\n".join(report._many_partitions_section(_scenario(py)["many_partitions"]))
    assert (
        "## Many partitions: one connector over many small topics, one worker "
        "(1,000 topics x 8 partitions, 100 topics added)"
    ) in text
    assert "one connector over many topics" in text
    assert "| Java MirrorSourceConnector on Java Connect | 4.2 | 6.1 | 50.0 | 4.0 | 800.0 | 1,200 |" in text
    assert "| pyconnect MirrorSourceConnector | 4.2 | 6.1 | 25.0 | 6.0 | 160.0 | 240.0 |" in text
    assert "includes up to refresh.topics.interval.seconds (5 s)" in text
    failed = {"status": "failed", "reason": "worker exited", "metrics": None}
    text = "\n".join(report._many_partitions_section(_scenario(failed)["many_partitions"]))
    assert "- pyconnect MirrorSourceConnector: **failed**: worker exited" in text
    assert report._many_partitions_section(None) == []
