"""Plain-text tables for the audit reports (what the CLI prints without ``--json``)."""

from __future__ import annotations

from collections.abc import Sequence


def format_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns separated by two spaces; a column whose values are all numbers (blanks allowed) is
    right-aligned, any other left-aligned. Trailing blanks are stripped."""
    cells = [[str(c) for c in header], *[["" if c is None else str(c) for c in row] for row in rows]]
    numeric = [
        all(isinstance(row[i], (int, float)) or row[i] in ("", None) for row in rows) and bool(rows)
        for i in range(len(header))
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return "\n".join(
        "  ".join(
            cell.rjust(widths[i]) if numeric[i] else cell.ljust(widths[i]) for i, cell in enumerate(row)
        ).rstrip()
        for row in cells
    )
