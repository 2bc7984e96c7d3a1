"""How ``pyconnect offsets translate`` prints a plan: text, JSON rows or CSV rows (no I/O).

:func:`text_table` lays out rows of cells in aligned columns; the failover report uses it too.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from connectors.mirror.offsets.translate_plan import EXPORT_FIELDS, FailoverPlan
from pyconnect.kafka.group_view import DEAD


def text_table(rows: Sequence[Sequence[str]]) -> list[str]:
    """``rows`` (the first is the header) as lines of left-aligned columns two spaces apart."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


def render_text(plan: FailoverPlan) -> str:
    """The human-readable plan (a header, one table row per partition, a total)."""
    state = "unknown" if plan.target_group_state == DEAD else plan.target_group_state
    lines = [
        f"Failover plan for group {plan.group}: {plan.source} -> {plan.target} "
        f"(checkpoints {plan.checkpoints_topic} on {plan.target})",
        f"Source offsets: {'committed offsets on ' + plan.source if plan.source_reachable else 'checkpointed'}"
        f"; re-reads from {plan.offset_syncs_topic or 'nothing (offset syncs not read)'}",
        f"Group {plan.group} on {plan.target}: {state}",
    ]
    lines += [f"Note: {note}" for note in plan.notes]
    header = (
        "TOPIC",
        "PARTITION",
        "TARGET TOPIC",
        "SOURCE OFFSET",
        "TRANSLATED",
        f"ON {plan.target}",
        "RE-READ",
        "MAX RE-READ",
        "ACTION",
    )
    table = [header] + [
        (
            row.topic,
            str(row.partition),
            row.target_topic,
            _cell(row.source_offset) + ("" if row.source_offset_from == "source" else "*"),
            _cell(row.translated_offset),
            _cell(row.target_committed_offset),
            _cell(row.expected_reread),
            _cell(row.max_reread),
            row.action,
        )
        for row in plan.rows
    ]
    lines += text_table(table)
    total = plan.total_expected_reread
    lines.append(
        f"Expected re-read: {'unknown' if total is None else total} records"
        + ("" if plan.source_reachable else " (* = checkpointed source offset)")
    )
    return "\n".join(lines)


def render_json(plan: FailoverPlan) -> str:
    """A JSON array with one object per row (keys :data:`EXPORT_FIELDS`; unknown values are null)."""
    return json.dumps(plan.export_rows(), indent=2)


def render_csv(plan: FailoverPlan) -> str:
    """CSV with a header row (:data:`EXPORT_FIELDS`); unknown values are empty cells."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=EXPORT_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in plan.export_rows():
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return out.getvalue()
