"""The report of ``pyconnect failback``: one JSON document, and its text for a terminal (pure).

:func:`report_json` holds the flow, the steps done (and what remains), per source partition the copy's
end with its evidence, the orphans (offset range, count, bytes) and, when the ledger was read, the
records on the target past the copy's end (what the reverse flow copies back); per group and partition
the offset on the target, on the source now, where it returns with the evidence, and the orphans it will
read there (a group that returns before a partition's orphans reads them after the records it had not
read yet: they lie between those and the copies back in A's log); the time each step took; the closing
audit's verdict (:mod:`.proof`) once it ran. :func:`report_text` prints the same as aligned tables.
"""

from __future__ import annotations

from typing import Any

from connectors.mirror.failback.group_return import GroupReturn
from connectors.mirror.failback.ledger_reads import Ledger
from connectors.mirror.failback.proof import audit_lines
from connectors.mirror.failback.state import STEPS, FailbackState
from connectors.mirror.offsets.failover_flow import FailoverFlow

__all__ = ["report_json", "report_text"]


def report_json(
    action: str,
    flow: FailoverFlow,
    state: FailbackState,
    *,
    ledger: Ledger | None = None,
    returns: list[GroupReturn] | None = None,
    forward_connector: str | None = None,
    reverse_connector: str | None = None,
    timings: dict[str, float] | None = None,
) -> dict[str, Any]:
    """The report document (see the module docstring)."""
    policy = flow.policy()
    past_end = {}
    if ledger is not None:
        past_end = {
            (p.end.topic, p.end.partition): max(p.target_bounds[1] - p.end.target_end, 0)
            for p in ledger.partitions
        }
    partitions = []
    for key, end in sorted(state.ends.items()):
        orphans = state.orphans[key]
        row: dict[str, Any] = {
            "topic": end.topic,
            "partition": end.partition,
            "target_topic": policy.format_remote_topic(flow.source, end.topic),
            "last_copied": end.last_copied,
            "target_end": end.target_end,
            "evidence": end.evidence,
            "orphans": {
                "first": orphans.first,
                "last": orphans.last,
                "count": orphans.count,
                "bytes": orphans.size,
            },
            "source_end": state.source_ends.get(key),
        }
        if (end.topic, end.partition) in past_end:
            row["target_offsets_past_end"] = past_end[(end.topic, end.partition)]
        partitions.append(row)

    def ahead(topic: str, partition: int, offset: int | None) -> int:
        found = state.orphans.get(f"{topic}:{partition}")
        return (
            found.count
            if found and offset is not None and found.first is not None and offset <= found.first
            else 0
        )

    groups = [
        {
            "group": r.group,
            "refused": r.refused,
            "others": list(r.others),
            "partitions": [
                {
                    "target_topic": p.target_topic,
                    "topic": p.source_topic,
                    "partition": p.partition,
                    "committed_on_target": p.committed_on_target,
                    "committed_on_source": p.committed_on_source,
                    "returns_to": None if p.position is None else p.position.offset,
                    "evidence": None if p.position is None else p.position.evidence,
                    "unproved": p.unproved,
                    "orphans_ahead": ahead(
                        p.source_topic, p.partition, None if p.position is None else p.position.offset
                    ),
                }
                for p in r.partitions
            ],
        }
        for r in returns or []
    ]
    return {
        "action": action,
        "flow": {"source": flow.source, "target": flow.target, "origin": flow.origin},
        "forward_connector": forward_connector,
        "reverse_connector": reverse_connector,
        "steps_done": list(state.done),
        "steps_left": [s for s in STEPS if s not in state.done],
        "quarantine": state.quarantine,
        "orphans_total": sum(o.count for o in state.orphans.values()),
        "partitions": partitions,
        "groups": groups,
        "returned": {} if state.returns is None else {g: p.targets for g, p in state.returns.groups.items()},
        "timings_s": dict(timings or {}),
        "audit": state.audit,
    }


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def report_text(document: dict[str, Any]) -> str:
    """The document as text (see the module docstring)."""
    flow = document["flow"]
    lines = [
        f"failback {document['action']} of flow {flow['source']}->{flow['target']} ({flow['origin']})",
        f"steps done: {', '.join(document['steps_done']) or 'none'}; left: {', '.join(document['steps_left']) or 'none'}",
        f"orphans on {flow['source']}: {document['orphans_total']} records"
        + (f", quarantined to {document['quarantine']}" if document.get("quarantine") else ""),
    ]
    if document["partitions"]:
        rows = [["partition", "last copied", "copy ends on target", "evidence", "orphans", "orphan offsets"]]
        for p in document["partitions"]:
            o = p["orphans"]
            span = "-" if o["first"] is None else f"{o['first']}..{o['last']}"
            rows.append(
                [
                    f"{p['topic']}-{p['partition']}",
                    str(p["last_copied"]),
                    str(p["target_end"]),
                    p["evidence"],
                    str(o["count"]),
                    span,
                ]
            )
        lines += ["", *_table(rows)]
    for group in document["groups"]:
        lines += [
            "",
            f"group {group['group']}" + (f": REFUSED: {group['refused']}" if group["refused"] else ""),
        ]
        rows = [["partition", "on target", "on source now", "returns to", "evidence", "orphans ahead"]]
        for p in group["partitions"]:
            rows.append(
                [
                    f"{p['topic']}-{p['partition']}",
                    str(p["committed_on_target"]),
                    "-" if p["committed_on_source"] is None else str(p["committed_on_source"]),
                    "-" if p["returns_to"] is None else str(p["returns_to"]),
                    p["evidence"] or f"unproved: {p['unproved']}",
                    str(p["orphans_ahead"]),
                ]
            )
        lines += _table(rows)
    if document.get("reverse_state"):
        lines += ["", f"reverse connector {document['reverse_connector']}: {document['reverse_state']}"]
    lines += audit_lines(document.get("audit"))
    if document["timings_s"]:
        lines += ["", "step times: " + ", ".join(f"{k} {v:.1f} s" for k, v in document["timings_s"].items())]
    return "\n".join(lines)
