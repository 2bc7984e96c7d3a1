"""The flow audit's JSON report as one self-contained HTML page: verdict, tables and inline SVG plots.

Contract: :func:`render` is pure (report dict in, HTML text out) and the page loads nothing: no script,
no external style, font or image. Every text from the data is HTML-escaped. The plots are drawn from
the report's bounded parts (per-partition counts, offset buckets, latest checkpoints, re-read
histograms), so the page stays small whatever the number of records. Each plot is an ``<svg>`` with a
``class="plot"`` and a ``data-plot`` name: ``records``, ``lag-slack``, ``offending-offsets``,
``rereads``. A plot with nothing to draw says so in a sentence instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

COLORS = {
    "source": "#4e79a7",
    "target": "#59a14f",
    "missing": "#e15759",
    "duplicate": "#f28e2b",
    "mismatch": "#b07aa1",
    "reordered": "#edc948",
    "lag": "#e15759",
    "slack": "#76b7b2",
}
_BAR_H, _GAP, _LABEL_W, _PLOT_W = 14, 6, 220, 520

_STYLE = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px} h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
.pass{color:#1b7f3b} .fail{color:#c0392b}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:right} td.l,th.l{text-align:left}
svg.plot{display:block;margin:8px 0 16px 0;font-size:11px}
.legend span{display:inline-block;margin-right:14px;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
code{font-size:12px}
"""


def _legend(names: Sequence[str]) -> str:
    items = "".join(f'<span><i style="background:{COLORS[n]}"></i>{escape(n)}</span>' for n in names)
    return f'<div class="legend">{items}</div>'


def bar_chart(name: str, rows: Sequence[tuple[str, Mapping[str, int]]], series: Sequence[str]) -> str:
    """Grouped horizontal bars: one group per ``(label, {series: value})`` row, scaled to the maximum."""
    if not rows:
        return f'<p data-plot="{escape(name)}">Nothing to plot.</p>'
    top = max([1, *(int(v.get(s, 0)) for _, v in rows for s in series)])
    group_h = len(series) * _BAR_H + _GAP * 2
    height = len(rows) * group_h + 20
    parts = [
        f'<svg class="plot" data-plot="{escape(name)}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{_LABEL_W + _PLOT_W + 80}" height="{height}" role="img">'
    ]
    for i, (label, values) in enumerate(rows):
        y0 = i * group_h + _GAP
        parts.append(
            f'<text x="{_LABEL_W - 6}" y="{y0 + len(series) * _BAR_H / 2 + 4}" text-anchor="end">'
            f"{escape(label)}</text>"
        )
        for j, s in enumerate(series):
            value = int(values.get(s, 0))
            width = max(0.0, _PLOT_W * value / top)
            y = y0 + j * _BAR_H
            parts.append(
                f'<rect x="{_LABEL_W}" y="{y}" width="{width:.1f}" height="{_BAR_H - 2}" fill="{COLORS[s]}">'
                f"<title>{escape(label)} {escape(s)}: {value}</title></rect>"
                f'<text x="{_LABEL_W + width + 4:.1f}" y="{y + _BAR_H - 4}">{value}</text>'
            )
    parts.append(f'<line x1="{_LABEL_W}" y1="0" x2="{_LABEL_W}" y2="{height - 16}" stroke="#888"/>')
    parts.append("</svg>")
    return _legend(series) + "".join(parts)


def offsets_chart(
    buckets: Sequence[Mapping[str, Any]], remote_topics: Mapping[str, str], slots: int = 40
) -> str:
    """One strip per partition: offending records per offset range (stacked by kind); ``slots`` ranges of
    ``width`` offsets each cover the partition."""
    if not buckets:
        return '<p data-plot="offending-offsets">No missing, duplicated, altered or reordered record: nothing to plot.</p>'
    strips: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    for b in buckets:
        strips.setdefault((str(b["topic"]), int(b["partition"])), []).append(b)
    kinds = ("missing", "duplicate", "mismatch", "reordered")
    strip_h, height_each = 60, 90
    top = max(int(b["count"]) for b in buckets)
    parts = [
        f'<svg class="plot" data-plot="offending-offsets" xmlns="http://www.w3.org/2000/svg" '
        f'width="{_LABEL_W + _PLOT_W + 80}" height="{len(strips) * height_each + 10}" role="img">'
    ]
    for i, ((topic, partition), items) in enumerate(sorted(strips.items())):
        y0 = i * height_each + 10
        width = int(items[0]["width"])
        slots = max(slots, *(int(b["bucket"]) + 1 for b in items))
        slot_w = _PLOT_W / max(slots, 1)
        parts.append(
            f'<text x="{_LABEL_W - 6}" y="{y0 + strip_h / 2}" text-anchor="end">'
            f"{escape(remote_topics.get(topic, topic))}-{partition}</text>"
            f'<line x1="{_LABEL_W}" y1="{y0 + strip_h}" x2="{_LABEL_W + _PLOT_W}" y2="{y0 + strip_h}" '
            'stroke="#888"/>'
            f'<text x="{_LABEL_W}" y="{y0 + strip_h + 14}">offset 0</text>'
            f'<text x="{_LABEL_W + _PLOT_W}" y="{y0 + strip_h + 14}" text-anchor="end">'
            f"offset {slots * width}</text>"
        )
        stacked: dict[int, float] = {}
        for kind in kinds:
            for b in (b for b in items if b["kind"] == kind):
                h = strip_h * int(b["count"]) / top
                slot = int(b["bucket"])
                base = stacked.get(slot, 0.0)
                stacked[slot] = base + h
                parts.append(
                    f'<rect x="{_LABEL_W + slot * slot_w:.1f}" y="{y0 + strip_h - base - h:.1f}" '
                    f'width="{max(slot_w - 1, 1):.1f}" height="{h:.1f}" fill="{COLORS[kind]}">'
                    f"<title>{escape(kind)}: {b['count']} at offsets {b['first']}..{b['last']}</title></rect>"
                )
    parts.append("</svg>")
    return _legend(kinds) + "".join(parts)


def _table(header: Sequence[str], rows: Sequence[Sequence[object]], left: int = 1) -> str:
    head = "".join(f'<th class="{"l" if i < left else ""}">{escape(h)}</th>' for i, h in enumerate(header))
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{"l" if i < left else ""}">{escape("" if c is None else str(c))}</td>'
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def render(report: Mapping[str, Any]) -> str:
    replication, translation = report["replication"], report["translation"]
    remote_topics: Mapping[str, str] = report["remote_topics"]
    ok = bool(report["ok"])
    partitions = replication["partitions"]
    records_rows = [
        (
            f"{remote_topics.get(p['topic'], p['topic'])}-{p['partition']}",
            {
                "source": p["source_count"],
                "target": p["target_count"],
                "missing": p["missing"],
                "duplicate": p["duplicates"],
                "mismatch": p["mismatches"],
                "reordered": p.get("reordered", 0),
            },
        )
        for p in partitions
    ]
    slack: dict[str, int] = {}
    for c in translation["latest"]:
        label = f"{c['remote_topic']}-{c['partition']}"
        slack[label] = max(slack.get(label, 0), int(c["reread"]))
    lag_rows = [
        (f"{remote_topics.get(p['topic'], p['topic'])}-{p['partition']}", {"lag": p["missing_tail"]})
        for p in partitions
    ]
    lag_rows = [(label, {**v, "slack": slack.get(label, 0)}) for label, v in lag_rows]
    reread_rows = [(f"group {g['group']}", dict(g["histogram"])) for g in translation["groups"]]
    buckets_names = [name for name in (reread_rows[0][1] if reread_rows else {})]
    reread_plot = (
        "".join(
            f"<h3>{escape(label)}</h3>" + _histogram(label, values, buckets_names)
            for label, values in reread_rows
        )
        if reread_rows
        else '<p data-plot="rereads">No checkpoint of an audited group: nothing to plot.</p>'
    )
    scanned = report["scanned"]
    samples = replication["samples"]
    violations = translation["violation_samples"]
    sync_violations = translation["sync_violation_samples"]
    verdict_class = "pass" if ok else "fail"
    findings = "".join(f"<li>{escape(f)}</li>" for f in report["findings"]) or "<li>none</li>"
    note = replication.get("retention_note")
    retention = (
        f'<p id="retention">Not a finding, {escape(note)} (the offsets are in the table below).</p>'
        if note
        else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>pyconnect audit {escape(report["flow"])}</title>
<style>{_STYLE}</style></head><body>
<h1>MirrorMaker 2 flow audit: {escape(report["flow"])}</h1>
<p id="verdict" class="{verdict_class}"><strong>{escape(report["verdict"])}</strong></p>
<p>Read from {escape(report["origin"])} in {report["seconds"]} s: {scanned.get("source_records", 0)} source
records, {scanned.get("target_records", 0)} target records, {scanned.get("offset_syncs", 0)} offset syncs,
{scanned.get("checkpoints", 0)} checkpoints; groups: {escape(", ".join(report["groups"]) or "none")}.</p>
<h2>Findings</h2><ul>{findings}</ul>{retention}
<h2>Records per partition</h2>
{bar_chart("records", records_rows, ("source", "target", "missing", "duplicate", "mismatch", "reordered"))}
{
        _table(
            (
                "remote topic",
                "source",
                "target",
                "missing",
                "head",
                "tail",
                "duplicates",
                "mismatches",
                "reordered",
                "unverifiable: source retention (target offsets)",
                "unverifiable: target retention (source offsets)",
            ),
            [
                (
                    f"{remote_topics.get(p['topic'], p['topic'])}-{p['partition']}",
                    p["source_count"],
                    p["target_count"],
                    p["missing"],
                    p.get("missing_head", 0),
                    p["missing_tail"],
                    p["duplicates"],
                    p["mismatches"],
                    p.get("reordered", 0),
                    _retained(p, "unverifiable_source_retention", "source_retention_offsets"),
                    _retained(p, "unverifiable_target_retention", "target_retention_offsets"),
                )
                for p in partitions
            ],
        )
    }
<h2>Lag and slack per partition</h2>
<p>Lag: source records after the last copied one (not copied yet). Slack: records a consumer of the
group failing over at the latest checkpoint reads again (the largest over the groups).</p>
{bar_chart("lag-slack", lag_rows, ("lag", "slack"))}
<h2>Missing, duplicated and altered records over offsets</h2>
{
        offsets_chart(
            replication.get("offset_buckets", []),
            remote_topics,
            int(replication.get("offset_bucket_count", 40)),
        )
    }
{
        _table(
            (
                "kind",
                "cluster",
                "topic",
                "partition",
                "offset",
                "source offset",
                "target offset",
                "key",
                "value",
                "timestamp",
            ),
            [
                (
                    s["kind"],
                    s["cluster"],
                    s["topic"],
                    s["partition"],
                    s["offset"],
                    s.get("source_offset"),
                    s.get("target_offset"),
                    s["key"],
                    s["value"],
                    s["timestamp_ms"],
                )
                for s in samples
            ],
            left=3,
        )
        if samples
        else ""
    }
<h2>Re-reads per group</h2>
{reread_plot}
{
        _table(
            (
                "group",
                "remote topic",
                "partition",
                "upstream",
                "downstream",
                "true position",
                "reread",
                "skipped",
            ),
            [
                (
                    c["group"],
                    c["remote_topic"],
                    c["partition"],
                    c["upstream_offset"],
                    c["downstream_offset"],
                    c["true_position"],
                    c["reread"],
                    c["skipped"],
                )
                for c in [*translation["latest"][:200], *violations]
            ],
            left=2,
        )
    }
<h2>Offset syncs</h2>
<p>{escape(", ".join(f"{n} {s}" for s, n in translation["syncs"].items()))}
({escape(translation["offset_syncs_topic"])})</p>
{
        _table(
            ("topic", "partition", "upstream", "downstream", "status"),
            [
                (s["topic"], s["partition"], s["upstream_offset"], s["downstream_offset"], s["status"])
                for s in sync_violations
            ],
        )
        if sync_violations
        else ""
    }
</body></html>
"""


def _histogram(label: str, values: Mapping[str, int], names: Sequence[str]) -> str:
    """Vertical bars: checkpoints per re-read range."""
    top = max([1, *(int(values.get(n, 0)) for n in names)])
    col_w, h = 70, 120
    parts = [
        f'<svg class="plot" data-plot="rereads" xmlns="http://www.w3.org/2000/svg" '
        f'width="{len(names) * col_w + 20}" height="{h + 50}" role="img">'
    ]
    for i, n in enumerate(names):
        v = int(values.get(n, 0))
        bar = h * v / top
        x = 10 + i * col_w
        parts.append(
            f'<rect x="{x}" y="{h - bar + 20:.1f}" width="{col_w - 10}" height="{bar:.1f}" fill="{COLORS["slack"]}">'
            f"<title>{escape(label)} re-read {escape(n)}: {v} checkpoints</title></rect>"
            f'<text x="{x + (col_w - 10) / 2}" y="{h + 34}" text-anchor="middle">{escape(n)}</text>'
            f'<text x="{x + (col_w - 10) / 2}" y="{h - bar + 16:.1f}" text-anchor="middle">{v}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _retained(partition: Mapping[str, Any], count: str, offsets: str) -> str:
    """``N [first-last]`` for a retention count of a partition report, ``0`` when none."""
    n = int(partition.get(count, 0))
    span = partition.get(offsets)
    return f"{n} [{span[0]}-{span[1]}]" if n and span else str(n)
