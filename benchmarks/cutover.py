"""The cutover scenario (pyconnect only): repeated ``pyconnect cutover`` runs under load, measured.

For each ``--quiet`` setting in ``cutover_quiet_s``, ``cutover_runs`` runs of
:func:`pyconnect.testing.cutover_drill.run_once` on one fresh pyconnect worker grouped on B (offsets
flushed every second), each on a fresh topic of ``cutover_partitions`` partitions and ``cutover_groups``
fresh classic groups, at ``cutover_rate`` records/s: the forward MirrorSourceConnector and
MirrorCheckpointConnector (IdentityReplicationPolicy, offset syncs on B), the applications stopped on A,
``pyconnect cutover execute`` (every ``cutover_kill_every``-th run, counted over the whole series, is
killed with SIGKILL once its state file records a step, the steps in rotation, and resumed until it
finishes), the producer switched to B on the command's exit 0, every group resumed on B and read to the
end. The drill's module docstring defines each figure.

First, ``cutover_warmup_runs`` warm-up runs (at the first ``--quiet`` setting, not killed): on freshly
started brokers the first cutover pays for their JIT warm-up (2026-12-07: a first run's group move took
2.3 s against 0.3-0.6 s in the runs after it); they are listed, and checked for losses and duplicates
like every run, but left out of the percentiles.

Per run: the records/s A acknowledged, the step killed after and the resumes, the write pause (the
producer's last write acknowledged by A to its first write acknowledged by B), fence to promote (from the
command's report), lost and duplicated records over all groups (by sequence numbers, over what each group
read on A and on B) and in B's copy of the topic. Per setting and over all runs: the pause's and fence to
promote's p50/p99/max (linear interpolation: with five runs the p99 is close to the max), the totals,
whether every run was promoted, and the issue's targets (``goal_met``: 0 lost, 0 duplicates, pause p99 at
most :data:`GOAL_PAUSE_P99_S`). The pause includes ``--quiet``: A must stay still that long once the
producers stopped.

Java MirrorMaker 2 has no cutover command: there is nothing to compare with, and no ratio.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks import runners
from benchmarks.procstats import load_average
from benchmarks.settings import BenchSettings
from benchmarks.stats import percentile
from pyconnect.testing.cutover_drill import DrillSettings, RunResult, kill_plan, run_once

log = logging.getLogger("benchmarks")

GOAL_PAUSE_P99_S = 5.0
WORKER_SETTINGS = {"offset.flush.interval.ms": 1000}
NO_JAVA = "Java MirrorMaker 2 has no cutover command: there is no Java figure to compare with"
DESCRIPTION = (
    "pyconnect only: repeated `pyconnect cutover` runs under load, each on a fresh topic and fresh groups: "
    "a producer writes sequence-numbered records to A at a fixed rate while classic consumer groups read "
    "and commit there; the forward MirrorSourceConnector and MirrorCheckpointConnector (IdentityReplicationPolicy, "
    "offset syncs on B) run on one pyconnect worker. The applications stop on A, `cutover execute` runs "
    "(every second run is killed with SIGKILL once a step is recorded, the step rotating, and resumed), the "
    "producer switches to B on its exit 0 and the groups resume on B and read to the end. Write pause = the "
    "producer's last write acknowledged by A to its first write acknowledged by B (it includes --quiet); "
    "fence to promote = the command's own report; lost / duplicates = sequence numbers never delivered / "
    "delivered twice to a group over A and B, summed over the groups. A first warm-up run on the fresh brokers "
    "is listed (and checked) but left out of the percentiles. " + NO_JAVA + "."
)


def _stats(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p99": None, "max": None}
    return {
        "p50": round(percentile(values, 50), 3),
        "p99": round(percentile(values, 99), 3),
        "max": round(max(values), 3),
    }


def summarize(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The pause and fence-to-promote percentiles, the totals and the targets over ``runs`` (JSON of
    :class:`~pyconnect.testing.cutover_drill.RunResult`)."""
    pauses = [r["pause_s"] for r in runs if r.get("pause_s") is not None]
    fences = [r["fenced_to_promoted_s"] for r in runs if r.get("fenced_to_promoted_s") is not None]
    lost = sum(r.get("lost") or 0 for r in runs)
    duplicates = sum(r.get("duplicates") or 0 for r in runs)
    complete = all(r.get("promoted") and r.get("lost") is not None and not r.get("error") for r in runs)
    pause = _stats(pauses)
    return {
        "runs": len(runs),
        "all_promoted": complete,
        "pause_s": pause,
        "fenced_to_promoted_s": _stats(fences),
        "lost": lost,
        "duplicates": duplicates,
        "copy_lost": sum(r.get("copy_lost") or 0 for r in runs),
        "copy_duplicates": sum(r.get("copy_duplicates") or 0 for r in runs),
        "kills": sum(len(r.get("kills") or []) for r in runs),
        "resumes": sum(r.get("resumes") or 0 for r in runs),
        "goal_met": bool(
            runs
            and complete
            and lost == 0
            and duplicates == 0
            and pause["p99"] is not None
            and pause["p99"] <= GOAL_PAUSE_P99_S
        ),
    }


def _drill(settings: BenchSettings, quiet: float) -> DrillSettings:
    return DrillSettings(
        rate=settings.cutover_rate,
        partitions=settings.cutover_partitions,
        groups=settings.cutover_groups,
        load_s=settings.cutover_load_s,
        after_s=settings.cutover_after_s,
        quiet_s=quiet,
    )


def measure(worker: Any, source: str, target: str, settings: BenchSettings, work_dir: Path) -> dict[str, Any]:
    """The warm-up runs, then every setting's runs on ``worker`` (started), then the summaries."""
    warmups = []
    for w in range(settings.cutover_warmup_runs):
        log.info("cutover warm-up run %d of %d", w + 1, settings.cutover_warmup_runs)
        quiet = settings.cutover_quiet_s[0]
        warmup = run_once(worker, source, target, f"bench-cutw{w}", _drill(settings, quiet), None, work_dir)
        warmups.append(warmup.to_json())
        log.info("cutover warm-up run %d: pause %s s, error %s", w + 1, warmup.pause_s, warmup.error)
    total = settings.cutover_runs * len(settings.cutover_quiet_s)
    plan = kill_plan(total, settings.cutover_kill_every)
    runs: list[dict[str, Any]] = []
    for quiet in settings.cutover_quiet_s:
        drill = _drill(settings, quiet)
        for _ in range(settings.cutover_runs):
            i = len(runs)
            log.info("cutover run %d of %d: --quiet %g, killed after %s", i + 1, total, quiet, plan[i])
            result: RunResult = run_once(worker, source, target, f"bench-cut{i}", drill, plan[i], work_dir)
            runs.append(result.to_json())
            log.info(
                "cutover run %d: pause %s s, fence to promote %s s, lost %s, duplicates %s%s",
                i + 1,
                result.pause_s,
                result.fenced_to_promoted_s,
                result.lost,
                result.duplicates,
                f", error {result.error}" if result.error else "",
            )
    by_quiet = {f"{q:g}": summarize([r for r in runs if r["quiet_s"] == q]) for q in settings.cutover_quiet_s}
    return {
        "rate": settings.cutover_rate,
        "groups": settings.cutover_groups,
        "partitions": settings.cutover_partitions,
        "warmup": warmups,
        "runs": runs,
        "by_quiet": by_quiet,
        "all": summarize(runs),
        "goal": {"lost": 0, "duplicates": 0, "pause_p99_s": GOAL_PAUSE_P99_S},
        "java": NO_JAVA,
        "load_average_after": load_average(),
    }


def session(source: str, target: str, work_dir: Path, settings: BenchSettings) -> tuple[str, Any, str | None]:
    """A fresh worker, the runs, the worker stopped: ``(status, metrics, reason)`` for the report; failed
    when a run failed, lost or duplicated a record (the pause's target is ``goal_met``, not the status)."""
    worker = runners.make_workers("pyconnect", target, work_dir / "cutover", 1, WORKER_SETTINGS)[0]
    try:
        worker.start()
        worker.wait_ready(120)
        (work_dir / "cutover").mkdir(parents=True, exist_ok=True)
        metrics = measure(worker, source, target, settings, work_dir / "cutover")
    except Exception as exc:
        return "failed", None, f"{type(exc).__name__}: {exc}"[:400]
    finally:
        worker.stop(20)
    every = summarize([*metrics["warmup"], *metrics["runs"]])
    failed = [
        r["run"] for r in [*metrics["warmup"], *metrics["runs"]] if r.get("error") or not r.get("promoted")
    ]
    if failed or every["lost"] or every["duplicates"] or every["copy_lost"] or every["copy_duplicates"]:
        return (
            "failed",
            metrics,
            (f"runs failed: {failed}; " if failed else "")
            + (
                f"lost {every['lost']}, duplicates {every['duplicates']}, in B's copy {every['copy_lost']} lost and "
                f"{every['copy_duplicates']} duplicated (warm-up runs included)"
            ),
        )
    return "ok", metrics, None


def _cell(value: Any, digits: int = 1) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def markdown(metrics: Mapping[str, Any]) -> list[str]:
    """The per-run table and the summary per ``--quiet`` setting (Markdown lines)."""
    lines = [
        f"{metrics.get('rate')} records/s, {metrics.get('groups')} groups, {metrics.get('partitions')} "
        f"partitions. {NO_JAVA}.",
        "",
        "| run | --quiet s | records/s on A | killed after | resumes | write pause s | fence to promote s "
        "| lost | duplicates | copy lost / dup | load (1 min) | error |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    warmups = [(r, " (warm-up, not counted)") for r in metrics.get("warmup", [])]
    for r, note in [*warmups, *((r, "") for r in metrics.get("runs", []))]:
        lines.append(
            f"| {r['run']}{note} | {r['quiet_s']:g} | {_cell(r.get('rate_on_a'), 0)} | {', '.join(r.get('kills') or []) or '-'} | "
            f"{r.get('resumes')} | {_cell(r.get('pause_s'), 2)} | {_cell(r.get('fenced_to_promoted_s'), 2)} | "
            f"{_cell(r.get('lost'))} | {_cell(r.get('duplicates'))} | {_cell(r.get('copy_lost'))} / "
            f"{_cell(r.get('copy_duplicates'))} | {_cell(r.get('load_1m'), 2)} | {r.get('error') or ''} |"
        )
    lines += [
        "",
        "| --quiet s | runs | pause p50 s | pause p99 s | pause max s | fence to promote p50 / p99 s | lost "
        "| duplicates | kills / resumes | all promoted | targets met |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    rows = [*(metrics.get("by_quiet") or {}).items(), ("all", metrics.get("all") or {})]
    for quiet, s in rows:
        pause, fence = s.get("pause_s") or {}, s.get("fenced_to_promoted_s") or {}
        lines.append(
            f"| {quiet} | {s.get('runs')} | {_cell(pause.get('p50'), 2)} | {_cell(pause.get('p99'), 2)} | "
            f"{_cell(pause.get('max'), 2)} | {_cell(fence.get('p50'), 2)} / {_cell(fence.get('p99'), 2)} | "
            f"{_cell(s.get('lost'))} | {_cell(s.get('duplicates'))} | {s.get('kills')} / {s.get('resumes')} | "
            f"{_cell(s.get('all_promoted'))} | {_cell(s.get('goal_met'))} |"
        )
    return [
        *lines,
        "",
        f"Targets: 0 lost, 0 duplicates, write pause p99 <= {GOAL_PAUSE_P99_S:g} s. With a handful of runs "
        "the p99 is close to the max.",
        "",
    ]
