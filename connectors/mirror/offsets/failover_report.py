"""The report of ``pyconnect failover plan|execute``: a JSON document and its text form (pure).

The JSON report (``--json``) is what an audit confirms afterwards (habit 18): the flow (aliases, where it
was read, policy, checkpoints and offset-syncs topics), what could be read, and per group its state and
members on the target, its outcome (``planned``, ``active`` when a plan finds members on the target,
``verified`` after an execute), and per partition the source offset, the checkpoint, the target offset,
the group's offset on the target before the command, the records a consumer re-reads or skips
(``null`` when not proven), the evidence (``basis``) and the action. Totals per group and for the flow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from connectors.mirror.offsets.failover_execute import GroupOutcome
from connectors.mirror.offsets.failover_plan import FlowPlan, GroupPlan
from connectors.mirror.offsets.translate_render import text_table
from pyconnect.kafka.group_view import DEAD

__all__ = ["REPORT_VERSION", "report_json", "report_text"]

REPORT_VERSION = 1


def _total(values: Sequence[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def _status(group: GroupPlan, outcome: GroupOutcome | None) -> str:
    if outcome is not None:
        return outcome.status
    return "planned" if group.idle else "active"


def report_json(
    command: str, plan: FlowPlan, outcomes: Sequence[GroupOutcome] = (), state_file: str | None = None
) -> dict[str, Any]:
    """The report document (see the module docstring)."""
    done = {o.group: o for o in outcomes}
    groups = []
    for group in plan.groups:
        outcome = done.get(group.group)
        entry = group.to_json()
        entry["status"] = _status(group, outcome)
        if outcome is not None:
            entry.update(committed=outcome.committed, unchanged=outcome.unchanged, resumed=outcome.resumed)
        groups.append(entry)
    return {
        "report_version": REPORT_VERSION,
        "command": command,
        "flow": plan.flow.describe(),
        "source_reachable": plan.source_reachable,
        "offset_syncs_read": plan.offset_syncs_read,
        "state_file": state_file,
        "notes": list(plan.notes),
        "groups": groups,
        "totals": {
            "groups": len(plan.groups),
            "expected_reread": _total([g.expected_reread for g in plan.groups]),
            "expected_skipped": _total([g.expected_skipped for g in plan.groups]),
        },
    }


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


def _group_lines(plan: FlowPlan, group: GroupPlan, outcome: GroupOutcome | None) -> list[str]:
    state = "unknown there" if group.state == DEAD else group.state
    members = f" ({', '.join(group.holders)})" if group.holders else ""
    kind = "Share group" if group.protocol == "share" else "Group"
    lines = [f"{kind} {group.group} on {plan.flow.target}: {state}{members}"]
    rows = [
        (
            "TOPIC",
            "PARTITION",
            "TARGET TOPIC",
            "SOURCE OFFSET",
            "CHECKPOINT",
            "TARGET OFFSET",
            f"ON {plan.flow.target}",
            "RE-READ",
            "SKIPPED",
            "BASIS",
            "ACTION",
        )
    ]
    for p in group.partitions:
        checkpoint = (
            "-" if p.checkpoint_upstream is None else f"{p.checkpoint_upstream}->{p.checkpoint_downstream}"
        )
        rows.append(
            (
                p.topic,
                str(p.partition),
                p.target_topic,
                _cell(p.source_offset) + ("" if p.source_offset_from == "source" else "*"),
                checkpoint,
                _cell(p.target_offset),
                _cell(p.current_offset),
                _cell(p.expected_reread)
                if p.expected_reread is not None or p.max_reread is None
                else f"<={p.max_reread}",
                _cell(p.expected_skipped),
                p.basis,
                p.action,
            )
        )
    lines += ["  " + line for line in text_table(rows)]
    lines += [f"  Note: {note}" for note in group.notes]
    reread, skipped = group.expected_reread, group.expected_skipped
    lines.append(
        f"  Expected: {'unknown' if reread is None else reread} records re-read, "
        f"{'unknown' if skipped is None else skipped} skipped"
    )
    if outcome is not None:
        lines.append(
            f"  Committed {outcome.committed} offsets of group {group.group} on cluster {plan.flow.target} "
            f"({outcome.unchanged} already in place{', resumed' if outcome.resumed else ''}): {outcome.status}"
        )
    elif not group.idle:
        lines.append(f"  Executing now would be refused: the group has members on {plan.flow.target}")
    return lines


def report_text(plan: FlowPlan, outcomes: Sequence[GroupOutcome] = ()) -> str:
    """The report for people: the flow, the notes, then each group's table and totals."""
    flow = plan.flow
    syncs_where = flow.source if flow.offset_syncs_location == "source" else flow.target
    lines = [
        f"Failover of flow {flow.name} ({flow.origin}): checkpoints {flow.checkpoints_topic} on {flow.target}, "
        f"offset syncs {flow.offset_syncs_topic} on {syncs_where}",
        "Source offsets: "
        + (
            f"committed offsets on {flow.source}"
            if plan.source_reachable
            else "checkpointed (* in the table)"
        ),
    ]
    lines += [f"Note: {note}" for note in plan.notes]
    done = {o.group: o for o in outcomes}
    for group in plan.groups:
        lines += _group_lines(plan, group, done.get(group.group))
    return "\n".join(lines)
