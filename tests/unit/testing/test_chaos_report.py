"""The chaos report's markdown and the observer's reading of ``GET /connectors?expand=status``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyconnect.testing.chaos.__main__ import main
from pyconnect.testing.chaos.observer import all_running
from pyconnect.testing.chaos.report import write_report
from pyconnect.testing.chaos.verdict import CheckpointVerdict, PartitionVerdict, Verdict


def a_report(lost: int) -> dict[str, object]:
    verdict = Verdict(
        partitions=[PartitionVerdict("t", 0, produced=100, copies=103 - lost, lost=lost, duplicated=3)],
        checkpoints=CheckpointVerdict(checked=12),
        recovery_s={"worker-kill": [2.5, None], "broker-kill": [4.0]},
        lag_bound=60,
        recovery_bound_s=90.0,
        rest_calls=50,
        rest_failures=0,
        rest_p99_ms=41.7,
        final_lag=0,
        final_all_running=True,
        exactly_once=False,
    )
    fault = {"kind": "worker-kill", "start_s": 10.0, "heal_after_s": 3.0, "target": {"worker": 1}}
    return {
        "run": {
            "seed": 5,
            "duration_s": 60.0,
            "kinds": ["worker-kill", "broker-kill"],
            "exactly_once": False,
        },
        "schedule": [fault],
        "faults": [
            {
                "fault": fault,
                "applied": {"worker": 1, "pid": 1},
                "started_s": 10.0,
                "healed_s": 13.0,
                "peak_lag": 80,
                "error": None,
            }
        ],
        "verdict": verdict.to_json(),
        "audits": {"replication": {"summary": "exit 1; totals {'missing': 0, 'duplicates': 3}"}},
    }


def test_the_markdown_gives_the_numbers_and_the_broken_promises(tmp_path: Path) -> None:
    as_json, as_md = write_report(tmp_path, a_report(lost=2))
    text = as_md.read_text()
    assert "--seed 5 --duration 60" in text
    assert "| lost | 2 |" in text and "| duplicated | 3 |" in text
    assert "| worker-kill | max 2.5 s, median 2.5 s, 1 never |" in text
    assert "p99 42 ms" in text and "exit 1; totals" in text
    assert "Promises: BROKEN" in text and "at-least-once: 2 records lost" in text
    assert json.loads(as_json.read_text())["verdict"]["totals"]["lost"] == 2


def test_a_clean_run_says_every_promise_held(tmp_path: Path) -> None:
    report = a_report(lost=0)
    report["verdict"]["recovery_s"] = {"broker-kill": [4.0]}  # type: ignore[index]
    report["verdict"]["broken_promises"] = []  # type: ignore[index]
    _, as_md = write_report(tmp_path, report)
    assert "Promises: all kept." in as_md.read_text()


def running(*states: str, connector: str = "RUNNING") -> dict[str, object]:
    return {
        "status": {
            "connector": {"state": connector},
            "tasks": [{"id": i, "state": s} for i, s in enumerate(states)],
        }
    }


def test_all_running_needs_every_connector_and_task_running() -> None:
    assert all_running({"a": running("RUNNING", "RUNNING"), "b": running("RUNNING")}, ["a", "b"])
    assert not all_running({"a": running("RUNNING", "UNASSIGNED"), "b": running("RUNNING")}, ["a", "b"])
    assert not all_running({"a": running("RUNNING")}, ["a", "b"])
    assert not all_running({"a": running()}, ["a"])
    assert not all_running({"a": running("RUNNING", connector="FAILED")}, ["a"])
    assert not all_running("not json", ["a"])


def test_the_cli_refuses_unknown_fault_kinds_before_starting_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--seed", "1", "--duration", "10", "--out", str(tmp_path), "--kinds", "meteor"])
    assert exit_info.value.code == 2
    assert "--kinds: expected some of" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_worker_log_levels_count_first_lines_only_and_sample_errors(tmp_path: Path) -> None:
    from pyconnect.testing.chaos.report import log_levels

    w0 = tmp_path / "w0" / "worker.log"
    w0.parent.mkdir()
    w0.write_text(
        "[2026-11-26 08:00:00,000] INFO started (pyconnect.runtime)\n"
        "[2026-11-26 08:00:01,000] WARNING [c|task-0] retrying (x)\n"
        "[2026-11-26 08:00:02,000] ERROR [c|task-0] Task c-0 failed: boom (pyconnect.worker.source_task)\n"
        "Traceback (most recent call last):\n"
        "ERROR not a record's first line\n"
    )
    got = log_levels([w0, tmp_path / "missing" / "worker.log"])
    assert (got["ERROR"], got["WARNING"]) == (1, 1)
    assert got["error_sample"] == [
        "w0: [2026-11-26 08:00:02,000] ERROR [c|task-0] Task c-0 failed: boom (pyconnect.worker.source_task)"
    ]


def test_resident_memory_is_read_from_proc_and_a_gone_process_reads_none() -> None:
    import os

    from pyconnect.testing.chaos.observer import rss_kb

    mine = rss_kb(os.getpid())
    assert mine is not None and mine > 10_000  # this Python process, in KiB
    assert rss_kb(2**22 + 12345) is None
