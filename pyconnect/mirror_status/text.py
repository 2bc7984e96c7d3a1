"""The mirror status document (pyconnect.mirror_status.core) as terminal text (``pyconnect status``).

One block per flow: a headline with the status, the target latency and the newest heartbeat's age, the
reasons it is not in sync, its warnings, a table of its conditions (code, severity, cluster, subject,
since), a table of topics (state, sync, average latency, record lag, lag in time, last-record age,
records replicated, records lost to truncation), the checkpoint latency per group, and each connector
with its tasks' states. Configs are left out (the
JSON has them). Pure: a document in, a string out.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any


def _ms(value: Any) -> str:
    if value is None:
        return "-"
    value = float(value)
    if value >= 10_000:
        return f"{value / 1000:.1f} s"
    return f"{value:.0f} ms"


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(len(header))]
    lines = ["  " + "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return lines


def render(document: dict[str, Any]) -> str:
    flows = document.get("flows") or []
    if not flows:
        return "No MirrorMaker 2 flows on this cluster.\n"
    lines: list[str] = []
    for flow in flows:
        heartbeat = flow.get("heartbeat_age_ms")
        lines.append(
            f"{flow['flow']}  {flow['status']}  (target latency {_ms(flow['target_latency_ms'])}"
            + ("" if heartbeat is None else f", newest heartbeat {_ms(heartbeat)} old")
            + ")"
        )
        lines += [f"  ! {reason}" for reason in flow.get("reasons") or []]
        lines += [f"  ! {warning}" for warning in flow.get("warnings") or []]
        conditions = flow.get("conditions") or []
        if conditions:
            lines += _table(
                ("CONDITION", "SEVERITY", "CLUSTER", "SUBJECT", "TASK", "SINCE"),
                [
                    (
                        c["code"],
                        c["severity"],
                        _cell(c.get("cluster")),
                        c.get("subject") or "-",
                        "-"
                        if not c.get("connector")
                        else c["connector"] + ("" if c.get("task") is None else f"-{c['task']}"),
                        time.strftime("%H:%M:%S", time.gmtime(c["since_ms"] / 1000)) + "Z",
                    )
                    for c in conditions
                ],
            )
        topics = flow.get("topics") or []
        if topics:
            lines += _table(
                (
                    "TOPIC",
                    "STATE",
                    "SYNC",
                    "LATENCY",
                    "LAG",
                    "LAG TIME",
                    "LAST RECORD AGE",
                    "RECORDS",
                    "LOST",
                ),
                [
                    (
                        t["topic"],
                        t["state"],
                        {True: "yes", False: "NO", None: "-"}[t["in_sync"]],
                        _ms(t["latency_ms"]),
                        _cell(t["record_lag"]),
                        _ms(t.get("lag_ms")),
                        _ms(t["last_record_age_ms"]),
                        str(t["records_replicated"]),
                        str(t.get("records_lost", 0)),
                    )
                    for t in topics
                ],
            )
        else:
            lines.append("  no replicated topics reported")
        checkpoints = flow.get("checkpoints") or []
        if checkpoints:
            lines += _table(
                ("GROUP", "CHECKPOINT LATENCY", "LAST", "PARTITIONS"),
                [
                    (c["group"], _ms(c["latency_ms"]), _ms(c["last_latency_ms"]), str(c["partitions"]))
                    for c in checkpoints
                ],
            )
        for connector in flow.get("connectors") or []:
            tasks = ", ".join(f"{t['id']}:{t['state']}" for t in connector.get("tasks") or []) or "no tasks"
            lines.append(f"  {connector['name']} ({connector['kind']}) {connector['state']}; tasks {tasks}")
        lines.append("")
    return "\n".join(lines)
