"""The report of a chaos run: ``report.json`` (everything) and ``report.md`` (what a reader wants first).

``write_report(out_dir, report)`` takes the JSON-ready mapping the run assembled: ``run`` (seed,
duration, kinds, exactly-once, bounds), ``schedule`` (the nemesis's faults), ``faults`` (what each
resolved to, when it started and healed, errors), ``verdict`` (:meth:`Verdict.to_json`), ``audits``
(the Spark audits' verdicts, when run) and ``workload`` (errors its clients met). The markdown holds the
faults injected per kind, records mirrored, lost, duplicated and out of order, recovery time per kind,
REST p99 and the promises broken. Returns the two paths.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _seconds(values: list[float | None]) -> str:
    known = [v for v in values if v is not None]
    never = len(values) - len(known)
    if not known:
        return f"never ({never})" if never else "-"
    text = f"max {max(known):.1f} s, median {sorted(known)[len(known) // 2]:.1f} s"
    return text + (f", {never} never" if never else "")


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
