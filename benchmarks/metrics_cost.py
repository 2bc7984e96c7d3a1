"""The metrics-cost scenario: what recording metrics costs pyconnect's data path.

Three fresh pyconnect workers run side by side on the same brokers, identical but for
``pyconnect.metrics.recording.enabled`` (``on``: the default; ``off`` and ``control``: ``false``, so no
task, client or mirror metric is recorded; ``control`` / ``off`` is what two identical workers differ by
in the same run, the noise an ``on`` / ``off`` ratio must rise above). Each drains the throughput
backlogs under an alias of its own per round (``metrics_cost_rounds`` rounds; which side drains a
backlog first rotates from round to round and from backlog to backlog), measured as in the throughput scenario, with nothing scraping (so the ratios
are the recording's cost, not the scrapes'); then each mirrors the fixed rates of
the latency scenario on a topic of its own, twice, in the order on, off, off, on (so that neither side
has the machine's quieter half), the runs of a side summarised by the mean of their percentiles; the peak RSS of each worker is
sampled over its whole session.

Where recording costs: the ``on`` worker drains the 100 B backlog once more (alias ``PROFILE_ALIAS``,
after the measured drains) with py-spy attached while ``/metrics`` is scraped every second (a busy
Prometheus; 15 to 60 s is usual); :func:`metrics_share` gives the
share of its CPU samples inside recording code (a frame of ``pyconnect/metrics/`` or
``connectors/mirror/metrics.py`` other than the exposition's) and inside the scrapes (a frame of the
exposition: ``prometheus.py``, ``process.py``, ``flows.py``), with the recording functions that take
most. Work done for the metrics inline in a caller (a C loop reading a batch's timestamps) shows as
the caller's and is not counted.

Ratios (``RATIOS``) are the ``on`` figure over the ``off`` figure: records/s and CPU-seconds per
record of each backlog, p99 latency at the highest fixed rate, and peak RSS. 1.0 means recording costs
nothing; "must not cost the data path measurably" is read as within the goals of
``benchmarks.stats.GOALS`` (a few percent: what repeated drains on a shared 2-core machine vary by).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.stats import ratio

SIDES: dict[str, dict[str, object]] = {
    "on": {},
    "off": {"pyconnect.metrics.recording.enabled": "false"},
    "control": {"pyconnect.metrics.recording.enabled": "false"},
}
"""The workers' extra settings: ``control`` is a second ``off`` worker, so that ``control`` / ``off``
shows what two identical workers differ by in the same run (the noise an on / off ratio must rise
above to show a cost)."""
ALIASES = {"on": "mon", "off": "moff", "control": "mctl"}
"""The source alias prefix of each side (a round number is appended)."""

LATENCY_ORDER = ("on", "off", "off", "on")
"""The order of the latency runs."""

PROFILE_ALIAS = "mprof"
RECORDING_FILES = ("pyconnect/metrics/", "connectors/mirror/metrics.py")
SCRAPE_FILES = (
    "pyconnect/metrics/prometheus.py",
    "pyconnect/metrics/process.py",
    "pyconnect/metrics/flows.py",
)

CONTROL_RATIOS: dict[str, tuple[str, str]] = {
    "metrics_control_vs_off_cpu_100b": ("100b", "cpu_s_per_million"),
    "metrics_control_vs_off_cpu_1kb": ("1kb", "cpu_s_per_million"),
}
"""``control`` / ``off``: two workers that both do not record, the run's noise floor (not goals)."""

RATIOS: dict[str, tuple[str, str]] = {
    "metrics_on_vs_off_100b": ("100b", "records_per_s"),
    "metrics_on_vs_off_1kb": ("1kb", "records_per_s"),
    "metrics_on_vs_off_cpu_100b": ("100b", "cpu_s_per_million"),
    "metrics_on_vs_off_cpu_1kb": ("1kb", "cpu_s_per_million"),
    "metrics_on_vs_off_p99": ("latency", "p99_ms"),
    "metrics_on_vs_off_rss": ("resources", "peak_rss_mb"),
}
"""Each ratio: (which figures, which figure)."""
WHAT = {
    "records_per_s": "records/s draining the {} backlog",
    "cpu_s_per_million": "CPU-seconds per record draining the {} backlog",
    "p99_ms": "p99 latency at the highest fixed rate (ms)",
    "peak_rss_mb": "peak RSS of the worker (MB)",
}


def combine_latency(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Latency runs of one side (each ``{"rates": [{"rate", "p50_ms", "p99_ms", "max_ms", ...}]}``) as one:
    per rate the mean p50 and p99 and the largest max, with every run kept under ``runs``."""
    by_rate: dict[int, list[Mapping[str, Any]]] = {}
    for run in runs:
        for entry in run.get("rates") or []:
            by_rate.setdefault(int(entry["rate"]), []).append(entry)
    rates = []
    for rate_, entries in sorted(by_rate.items()):
        combined: dict[str, Any] = {"rate": rate_, "runs": len(entries)}
        for key in ("p50_ms", "p99_ms"):
            values = [float(e[key]) for e in entries if e.get(key) is not None]
            combined[key] = round(sum(values) / len(values), 3) if len(values) == len(entries) else None
        maxima = [float(e["max_ms"]) for e in entries if e.get("max_ms") is not None]
        combined["max_ms"] = max(maxima) if maxima else None
        combined["missing"] = sum(int(e.get("missing") or 0) for e in entries)
        rates.append(combined)
    return {"rates": rates, "runs": list(runs)}


def _in(frame: str, files: Sequence[str]) -> bool:
    return any(f"({name}" in frame or f" {name}" in frame for name in files)


def metrics_share(stacks: Mapping[tuple[str, ...], int], top: int = 8) -> dict[str, Any]:
    """``{"samples", "recording_pct", "scrape_pct", "top_recording": [{"function", "pct"}]}`` of py-spy
    folded stacks (``benchmarks.profiler.parse_folded``): a sample counts once, as scrape when a frame
    is the exposition's, else as recording when a frame is a metrics module's."""
    total = sum(stacks.values())
    recording = scrape = 0
    functions: dict[str, int] = {}
    for stack, count in stacks.items():
        if any(_in(frame, SCRAPE_FILES) for frame in stack):
            scrape += count
            continue
        hits = [frame for frame in stack if _in(frame, RECORDING_FILES)]
        if hits:
            recording += count
            functions[hits[0]] = functions.get(hits[0], 0) + count

    def pct(n: int) -> float:
        return round(100.0 * n / total, 2) if total else 0.0

    ranked = sorted(functions.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return {
        "samples": total,
        "recording_pct": pct(recording),
        "scrape_pct": pct(scrape),
        "top_recording": [{"function": f, "pct": pct(n)} for f, n in ranked],
    }


def side_figure(side: Mapping[str, Any], group: str, figure: str) -> float | None:
    """One side's figure: a combined drain figure of backlog ``group``, the p99 at the highest rate
    (``latency``), or the peak RSS (``resources``)."""
    if group == "latency":
        rates = (side.get("latency") or {}).get("rates") or []
        return rates[-1].get(figure) if rates else None
    if group == "resources":
        value = side.get(figure)
        return float(value) if isinstance(value, int | float) else None
    value = (side.get(group) or {}).get(figure)
    return float(value) if isinstance(value, int | float) else None


def round_spread(metrics: Mapping[str, Any], side: str, group: str) -> tuple[float, float] | None:
    """The smallest and largest CPU-seconds per million records of one side's drains of backlog
    ``group`` (each round's own figure), or ``None`` without two rounds: the noise a ratio of the two
    sides must rise above to show a cost."""
    rounds = ((metrics.get(side) or {}).get(group) or {}).get("rounds") or []
    values = [
        float(r["cpu_s_per_million"]) for r in rounds if isinstance(r.get("cpu_s_per_million"), int | float)
    ]
    return (min(values), max(values)) if len(values) >= 2 else None


def metrics_cost_ratio(metrics: Mapping[str, Any] | None, name: str) -> tuple[float | None, str]:
    """Ratio ``name`` of :data:`RATIOS` (``on`` / ``off``) and a note: what it compares, or why null."""
    group, figure = RATIOS[name] if name in RATIOS else CONTROL_RATIOS[name]
    what = WHAT[figure].format(group.upper())
    if metrics is None:
        return None, f"{what}: the metrics_cost scenario did not run"
    control = name in CONTROL_RATIOS
    numerator = "control" if control else "on"
    on = side_figure(metrics.get(numerator) or {}, group, figure)
    off = side_figure(metrics.get("off") or {}, group, figure)
    value = ratio(on, off)
    if value is None:
        return None, f"{what}: a figure is missing on one side"
    if control:
        return value, f"{what}: a second pyconnect with recording off / the first (the run's noise floor)"
    return value, f"{what}: pyconnect recording metrics / pyconnect with recording off"
