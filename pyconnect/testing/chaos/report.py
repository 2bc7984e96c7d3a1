"""The report of a chaos run: ``report.json`` (everything) and ``report.md`` (what a reader wants first).

``write_report(out_dir, report)`` takes the JSON-ready mapping the run assembled: ``run`` (seed,
duration, kinds, exactly-once, bounds), ``schedule`` (the nemesis's faults), ``faults`` (what each
resolved to, when it started and healed, errors), ``verdict`` (:meth:`Verdict.to_json`), ``audits``
(the Spark audits' verdicts, when run) and ``workload`` (errors its clients met). The markdown holds the
faults injected per kind, records mirrored, lost, duplicated and out of order, recovery time per kind,
REST p99, each worker's peak RSS (``memory``), the worker logs' ERROR and WARNING line counts (``logs``, :func:`log_levels`) and the promises
broken. Returns the two paths.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def _seconds(values: list[float | None]) -> str:
    known = [v for v in values if v is not None]
    never = len(values) - len(known)
    if not known:
        return f"never ({never})" if never else "-"
    text = f"max {max(known):.1f} s, median {sorted(known)[len(known) // 2]:.1f} s"
    return text + (f", {never} never" if never else "")


_LEVEL = re.compile(r"^\[[^\]]+\] (ERROR|WARNING|WARN) ")
ERROR_SAMPLE = 10


def log_levels(log_files: Iterable[Path]) -> dict[str, Any]:
    """ERROR and WARNING lines (a log record's first line) over the workers' logs, and the first
    :data:`ERROR_SAMPLE` ERROR lines (cut at 300 characters). Missing files count nothing."""
    counts: Counter[str] = Counter()
    sample: list[str] = []
    for path in log_files:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            found = _LEVEL.match(line)
            if found is None:
                continue
            level = "WARNING" if found.group(1) == "WARN" else found.group(1)
            counts[level] += 1
            if level == "ERROR" and len(sample) < ERROR_SAMPLE:
                sample.append(f"{path.parent.name}: {line[:300]}")
    return {"ERROR": counts["ERROR"], "WARNING": counts["WARNING"], "error_sample": sample}


def _offset_commits(commits: Mapping[str, Any] | None) -> list[str]:
    """The offsets-topic line (reports written before it was measured have none)."""
    if not commits:
        return []
    back = f" (by up to {commits['max_rewind']})" if commits["rewinds"] else ""
    return [
        f"| source offsets committed (offsets topic) / went back | {commits['commits']} / {commits['rewinds']}{back} |"
    ]


def markdown(report: Mapping[str, Any]) -> str:
    run, verdict = report["run"], report["verdict"]
    totals = verdict["totals"]
    kinds = Counter(f["fault"]["kind"] for f in report["faults"])
    lines = [
        f"# Chaos run: seed {run['seed']}, {run['duration_s']:.0f} s of faults, "
        f"exactly-once {'on' if run['exactly_once'] else 'off'}",
        "",
        f"Replay: `python -m pyconnect.testing.chaos --seed {run['seed']} --duration {run['duration_s']:.0f}"
        f" --kinds {','.join(run['kinds'])}{' --eos' if run['exactly_once'] else ''} --out DIR`",
        "",
        "| faults injected | count |",
        "|---|---|",
        *[f"| {kind} | {n} |" for kind, n in sorted(kinds.items())],
        "",
        "| records | count |",
        "|---|---|",
        f"| produced on the source | {totals['produced']} |",
        f"| copies on the target | {totals['copies']} |",
        f"| lost | {totals['lost']} |",
        f"| duplicated | {totals['duplicated']} |",
        f"| out of order | {totals['out_of_order']} |",
        f"| checkpoints checked / ahead of the data | {verdict['checkpoints']['checked']} / "
        f"{verdict['checkpoints']['ahead']} |",
        *_offset_commits(verdict.get("offset_commits")),
        "",
        f"Recovery (every task RUNNING and lag <= {verdict['lag_bound']} records; bound "
        f"{verdict['recovery_bound_s']:.0f} s):",
        "",
        "| fault kind | time to recover after heal |",
        "|---|---|",
        *[f"| {kind} | {_seconds(times)} |" for kind, times in sorted(verdict["recovery_s"].items())],
        "",
        f"REST `GET /connectors?expand=status`: {verdict['rest_calls']} calls, {verdict['rest_failures']} "
        f"failed, p99 {verdict['rest_p99_ms'] if verdict['rest_p99_ms'] is None else round(verdict['rest_p99_ms'])} ms.",
        f"After the quiet period: lag {verdict['final_lag']}, every task RUNNING: {verdict['final_all_running']}.",
    ]
    memory = report.get("memory")
    if memory:
        peaks = ", ".join(f"{mb:.0f}" for mb in memory["peak_rss_mb"])
        lines.append(f"Peak RSS per worker over the run (MB): {peaks}.")
    logs = report.get("logs")
    if logs:
        lines.append(f"Worker logs: {logs['ERROR']} ERROR and {logs['WARNING']} WARNING lines.")
        lines += [f"    {line}" for line in logs["error_sample"]]
    audits = report.get("audits") or {}
    if audits:
        lines += ["", "Spark audits:", ""]
        for name, result in audits.items():
            lines.append(f"- {name}: {result.get('summary', result)}")
    lines += ["", "| # | fault | resolved to | at (s) | healed (s) | peak lag |", "|---|---|---|---|---|---|"]
    for i, f in enumerate(report["faults"], 1):
        resolved = ", ".join(f"{k}={v}" for k, v in f["applied"].items() if k != "pid")
        lines.append(
            f"| {i} | {f['fault']['kind']} | {resolved} | {f['started_s']} | {f['healed_s']} | {f.get('peak_lag')} |"
        )
    broken = verdict["broken_promises"]
    lines += ["", "Promises: " + ("all kept." if not broken else "BROKEN"), ""]
    lines += [f"- {b}" for b in broken]
    errors = [f for f in report["faults"] if f.get("error")]
    if errors:
        lines += ["", "Faults that could not be applied or healed:", ""]
        lines += [f"- {f['fault']['kind']} at {f['fault']['start_s']} s: {f['error']}" for f in errors]
    return "\n".join(lines) + "\n"


def write_report(out_dir: Path, report: Mapping[str, Any]) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    as_json = out_dir / "report.json"
    as_md = out_dir / "report.md"
    as_json.write_text(json.dumps(report, indent=2, default=str) + "\n")
    as_md.write_text(markdown(report))
    return as_json, as_md
