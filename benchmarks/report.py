"""results.json, report.md and chart.png from one benchmark run.

The results document (``SCHEMA``)::

    {"schema", "mode", "started_at", "finished_at", "machine": {...}, "settings": {...},
     "systems": {name: {"available": bool, "reason": str | None, "description": str}},
     "scenarios": {name: {"description", "status", "reason", "systems": {system: {"status", "reason", "metrics"}}}},
     "ratios": {"throughput_100b", "throughput_1kb", "limit_{100b,1kb}", "cpu_{100b,1kb}",
                "best_java_{100b,1kb}", "p99_latency", "rss", "startup",
                "control_create", "control_status", "uvloop_vs_asyncio_100b", "uvloop_vs_asyncio_1kb",
                "uvloop_vs_asyncio_cpu_100b", "uvloop_vs_asyncio_cpu_1kb", "eos_throughput_poll",
                "eos_throughput_interval", "eos_p99_latency", "wan_throughput_1kb",
                "compressed_{lz4,zstd}", "compressed_cpu_{lz4,zstd}",
                "metrics_on_vs_off_{100b,1kb,cpu_100b,cpu_1kb,p99,rss}",
                "many_partitions_{copy,idle_cpu,rss,reconfigure}": float | null},
     "ratio_directions": {...}, "ratio_notes": {name: why the ratio is null, or what it compares},
     "goals": {name: {"goal", "met", "factor"}}, "notes": [str]}

A ratio is pyconnect's figure divided by Java's (the MirrorSourceConnector on a Java Connect worker,
``JAVA_REFERENCE``), except ``uvloop_vs_asyncio_<size>`` and ``uvloop_vs_asyncio_cpu_<size>``: the
records/s and the CPU-seconds per record of pyconnect's worker on uvloop divided by those of its worker
on asyncio's loop (the ``event_loop`` scenario), and ``metrics_on_vs_off_*``: pyconnect recording
metrics over pyconnect with recording off (the ``metrics_cost`` scenario), ``limit_<size>``: pyconnect's
drain rate over the brokers' own produce rate (the ``limit`` scenario's ProducerPerformance), and
``best_java_<size>``: pyconnect's drain rate over the faster of Java's Connect worker and Java MirrorMaker
2 dedicated (:func:`drain_ratio`). A ratio is null, never estimated, when either side did
not run. ``goals`` compares
each ratio with its goal (``stats.GOALS``). Raw profiles (``artifacts``) are written beside the JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from benchmarks.compressed import CODECS as COMPRESSED_CODECS
from benchmarks.cutover import markdown as cutover_markdown
from benchmarks.group_sync import REPORT_COLUMNS as GROUP_SYNC_COLUMNS
from benchmarks.metrics_cost import CONTROL_RATIOS as METRICS_CONTROL_RATIOS
from benchmarks.metrics_cost import RATIOS as METRICS_COST_RATIOS
from benchmarks.metrics_cost import metrics_cost_ratio, round_spread
from benchmarks.stats import GOALS, HIGHER_IS_BETTER, RATIO_DIRECTIONS, goal_check, ratio

SCHEMA = "pyconnect-bench/1"
JAVA_REFERENCE = "java-connect"
PYCONNECT = "pyconnect"
SYSTEM_LABELS = {
    "brokers": "Kafka perf tools (limit)",
    "java-connect": "Java MirrorSourceConnector on Java Connect",
    "java-dedicated": "Java MirrorMaker 2 (dedicated)",
    "pyconnect": "pyconnect MirrorSourceConnector",
}
REQUIRED_TOP_LEVEL = (
    "schema",
    "mode",
    "started_at",
    "finished_at",
    "machine",
    "settings",
    "systems",
    "scenarios",
    "ratios",
    "ratio_directions",
    "ratio_notes",
    "notes",
)
SCENARIO_STATUSES = ("ok", "partial", "failed", "skipped", "not_implemented")
SYSTEM_STATUSES = ("ok", "failed", "unavailable", "skipped")


def _metrics(scenarios: Mapping[str, Any], scenario: str, system: str) -> dict[str, Any] | None:
    entry = scenarios.get(scenario, {}).get("systems", {}).get(system)
    if not entry or entry.get("status") != "ok":
        return None
    metrics: dict[str, Any] = entry.get("metrics") or {}
    return metrics


def _why_missing(scenarios: Mapping[str, Any], scenario: str, system: str) -> str:
    entry = scenarios.get(scenario, {}).get("systems", {}).get(system)
    if entry is None:
        reason = scenarios.get(scenario, {}).get("reason")
        return f"{system}: scenario '{scenario}' did not run" + (f" ({reason})" if reason else "")
    return f"{system}: {entry.get('status')}: {entry.get('reason') or 'no figure'}"


def _throughput(size: str) -> Any:
    def pick(m: Mapping[str, Any]) -> tuple[float | None, str]:
        value = (m.get(size) or {}).get("records_per_s")
        return value, f"records/s draining the {size} backlog"

    return pick


def _p99(py: Mapping[str, Any], java: Mapping[str, Any]) -> tuple[float | None, float | None, str]:
    """p99 at the input rate, of those both systems ran, where pyconnect compares worst with Java.

    The least favourable rate is taken so that one ratio never hides a rate at which pyconnect lags.
    """
    py_rates = {r["rate"]: r for r in py.get("rates", []) if r.get("p99_ms") is not None}
    java_rates = {r["rate"]: r for r in java.get("rates", []) if r.get("p99_ms") is not None}
    common = sorted(set(py_rates) & set(java_rates))
    if not common:
        return None, None, "no input rate measured on both sides"

    def quotient(r: int) -> float:
        j = java_rates[r]["p99_ms"]
        return py_rates[r]["p99_ms"] / j if j else float("inf")

    r = max(common, key=quotient)
    return (
        py_rates[r]["p99_ms"],
        java_rates[r]["p99_ms"],
        f"p99 end-to-end latency at {r} records/s (the least favourable to pyconnect of the rates {common})",
    )


CONTROL_FIGURES: dict[str, tuple[str, Any]] = {
    "control_create": (
        "time to answer every create (s)",
        lambda m: (m.get("create") or {}).get("wall_s"),
    ),
    "control_status": (
        "GET /connectors?expand=status p50 (ms)",
        lambda m: (m.get("status") or {}).get("p50_ms"),
    ),
}
"""The control-plane ratios: what each compares, and how to read it from one size's figures."""


def _control_sizes(metrics: Mapping[str, Any]) -> dict[int, Mapping[str, Any]]:
    return {s["connectors"]: s for s in metrics.get("sizes") or [] if s.get("connectors") is not None}


def _control(
    name: str, py: Mapping[str, Any], java: Mapping[str, Any]
) -> tuple[float | None, float | None, str]:
    """A control-plane figure at the size N, of those both systems ran, least favourable to pyconnect."""
    what, pick = CONTROL_FIGURES[name]
    py_sizes, java_sizes = _control_sizes(py), _control_sizes(java)
    common = sorted(
        n for n in set(py_sizes) & set(java_sizes) if pick(py_sizes[n]) is not None and pick(java_sizes[n])
    )
    if not common:
        return None, None, f"{what}: no connector count measured on both sides"
    n = max(common, key=lambda k: pick(py_sizes[k]) / pick(java_sizes[k]))
    return (
        pick(py_sizes[n]),
        pick(java_sizes[n]),
        f"{what} with {n} connectors on three workers (the least favourable to pyconnect of {common})",
    )


EVENT_LOOP_RATIOS: dict[str, tuple[str, str, str]] = {
    "uvloop_vs_asyncio_100b": ("100b", "records_per_s", "records/s"),
    "uvloop_vs_asyncio_1kb": ("1kb", "records_per_s", "records/s"),
    "uvloop_vs_asyncio_cpu_100b": ("100b", "cpu_s_per_million", "CPU-seconds per record"),
    "uvloop_vs_asyncio_cpu_1kb": ("1kb", "cpu_s_per_million", "CPU-seconds per record"),
}
"""The event-loop ratios: (backlog, figure of the combined drains, what the figure is)."""


def _event_loop_ratio(scenarios: Mapping[str, Any], name: str) -> tuple[float | None, str]:
    """Ratio ``name`` of :data:`EVENT_LOOP_RATIOS`, the uvloop worker's figure over the asyncio
    worker's, and a note saying what it compares or why it is null."""
    size, figure, what = EVENT_LOOP_RATIOS[name]
    metrics = _metrics(scenarios, "event_loop", PYCONNECT)
    if metrics is None:
        return None, _why_missing(scenarios, "event_loop", PYCONNECT)
    uv = ((metrics.get("uvloop") or {}).get(size) or {}).get(figure)
    aio = ((metrics.get("asyncio") or {}).get(size) or {}).get(figure)
    value = ratio(uv, aio)
    what = f"{what} draining the {size} backlog"
    if value is None:
        return None, f"{what}: a figure is missing on one loop"
    return value, f"{what}: pyconnect on uvloop / pyconnect on asyncio"


def _compressed(codec: str, figure: str, what: str) -> Callable[[Mapping[str, Any]], tuple[Any, str]]:
    """The pick of one compressed-source figure for :func:`compute_ratios`."""
    return lambda m: ((m.get(codec) or {}).get(figure), f"{codec}-compressed 1 KB backlog drained ({what})")


EOS_BOUNDARIES = ("poll", "interval")


def eos_summary(metrics: Mapping[str, Any]) -> dict[str, float | None]:
    """The exactly-once figures the ratios compare: records/s per transaction boundary and the p99
    latency at the first fixed rate."""
    rates = (metrics.get("latency") or {}).get("rates") or []
    return {
        **{f"{b}_records_per_s": (metrics.get(b) or {}).get("records_per_s") for b in EOS_BOUNDARIES},
        "p99_ms": rates[0].get("p99_ms") if rates else None,
    }


def _partitions_text(m: Mapping[str, Any], phase: str | None = None) -> str:
    """``"8,000 partitions (1,000 topics)"`` of the whole run, or of ``phase`` (``reconfigure``)."""
    figures = (m.get(phase) or {}) if phase else m
    return f"{_fmt(figures.get('partitions'))} partitions ({_fmt(figures.get('topics'))} topics)"


MANY_PARTITIONS_FIGURES: dict[str, Any] = {
    "many_partitions_copy": lambda m: (
        (m.get("copy") or {}).get("copied_s"),
        f"connector creation to {_partitions_text(m)} copied, one record each (s)",
    ),
    "many_partitions_idle_cpu": lambda m: (
        (m.get("idle") or {}).get("cpu_s_per_s"),
        f"idle CPU-seconds per second of the worker's process tree with {_partitions_text(m)} mirrored",
    ),
    "many_partitions_rss": lambda m: (
        (m.get("idle") or {}).get("rss_mb"),
        f"idle RSS of the worker's process tree with {_partitions_text(m)} mirrored (MB)",
    ),
    "many_partitions_reconfigure": lambda m: (
        (m.get("reconfigure") or {}).get("copied_s"),
        f"{_partitions_text(m, 'reconfigure')} added on the source to all copied, including up to "
        f"refresh.topics.interval.seconds={_fmt(m.get('refresh_topics_interval_s'))} (s)",
    ),
}
"""The many-partitions ratios: how to read each figure, and what it is, from one system's metrics."""


DRAIN_RATIOS: dict[str, tuple[str, str]] = {
    "limit_100b": ("limit", "100b"),
    "limit_1kb": ("limit", "1kb"),
    "cpu_100b": ("cpu", "100b"),
    "cpu_1kb": ("cpu", "1kb"),
    "best_java_100b": ("best_java", "100b"),
    "best_java_1kb": ("best_java", "1kb"),
}
"""The backlog-drain ratios the performance goals name: (what pyconnect is compared with, backlog)."""

JAVA_SETUPS = (JAVA_REFERENCE, "java-dedicated")


def drain_ratio(scenarios: Mapping[str, Any], name: str) -> tuple[float | None, str]:
    """Ratio ``name`` of :data:`DRAIN_RATIOS` from the ``throughput`` (and ``limit``) scenario, with a
    note saying what it compares or why it is null: ``limit`` pyconnect's records/s over the brokers'
    produce records/s, ``cpu`` pyconnect's CPU-seconds per million records over the Java Connect
    worker's, ``best_java`` pyconnect's records/s over the faster Java set-up that ran."""
    kind, size = DRAIN_RATIOS[name]
    py = _metrics(scenarios, "throughput", PYCONNECT)
    if py is None:
        return None, _why_missing(scenarios, "throughput", PYCONNECT)
    drained = py.get(size) or {}
    if kind == "limit":
        brokers = _metrics(scenarios, "limit", "brokers")
        if brokers is None:
            return None, _why_missing(scenarios, "limit", "brokers")
        produced = ((brokers.get(size) or {}).get("produce") or {}).get("records_per_s")
        what = f"records/s draining the {size} backlog: pyconnect / the brokers' own produce rate"
        value = ratio(drained.get("records_per_s"), produced)
        return value, what if value is not None else f"{what}: a figure is missing"
    if kind == "cpu":
        java = _metrics(scenarios, "throughput", JAVA_REFERENCE)
        if java is None:
            return None, _why_missing(scenarios, "throughput", JAVA_REFERENCE)
        what = f"CPU-seconds per million records draining the {size} backlog: pyconnect / {JAVA_REFERENCE}"
        value = ratio(drained.get("cpu_s_per_million"), (java.get(size) or {}).get("cpu_s_per_million"))
        return value, what if value is not None else f"{what}: a figure is missing on one side"
    rates = {}
    for system in JAVA_SETUPS:
        java = _metrics(scenarios, "throughput", system)
        rate = ((java or {}).get(size) or {}).get("records_per_s")
        if rate:
            rates[system] = rate
    if not rates:
        return None, "; ".join(_why_missing(scenarios, "throughput", s) for s in JAVA_SETUPS)
    fastest = max(rates, key=lambda system: rates[system])
    value = ratio(drained.get("records_per_s"), rates[fastest])
    what = (
        f"records/s draining the {size} backlog: pyconnect / the faster Java set-up ({fastest}"
        + (f"; {', '.join(s for s in JAVA_SETUPS if s not in rates)} did not run" if len(rates) < 2 else "")
        + ")"
    )
    return value, what if value is not None else f"{what}: pyconnect's figure is missing"


def compute_ratios(scenarios: Mapping[str, Any]) -> tuple[dict[str, float | None], dict[str, str]]:
    """The ``ratios`` object (pyconnect / Java, and uvloop / asyncio) and a note per ratio: what it
    compares or why it is null."""
    ratios: dict[str, float | None] = {}
    notes: dict[str, str] = {}
    simple = {
        "throughput_100b": ("throughput", _throughput("100b")),
        "throughput_1kb": ("throughput", _throughput("1kb")),
        "rss": ("resources", lambda m: (m.get("peak_rss_mb"), "peak RSS of one worker (MB)")),
        "startup": (
            "startup",
            lambda m: (m.get("first_record_s"), "process start to first record mirrored (s)"),
        ),
        "wan_throughput_1kb": (
            "wan",
            lambda m: (
                (m.get("1kb") or {}).get("records_per_s"),
                f"1 KB drain with the source {2 * int(m.get('one_way_delay_ms') or 0)} ms away (records/s)",
            ),
        ),
        **{
            f"compressed_{codec}": ("compressed", _compressed(codec, "records_per_s", "records/s"))
            for codec in COMPRESSED_CODECS
        },
        **{
            f"compressed_cpu_{codec}": (
                "compressed",
                _compressed(codec, "cpu_s_per_million", "CPU-seconds per million records"),
            )
            for codec in COMPRESSED_CODECS
        },
        "eos_throughput_poll": (
            "exactly_once",
            lambda m: (eos_summary(m)["poll_records_per_s"], "exactly-once drain, poll boundary (records/s)"),
        ),
        "eos_throughput_interval": (
            "exactly_once",
            lambda m: (
                eos_summary(m)["interval_records_per_s"],
                "exactly-once drain, interval boundary (records/s)",
            ),
        ),
        "eos_p99_latency": (
            "exactly_once",
            lambda m: (eos_summary(m)["p99_ms"], "exactly-once p99 latency at the first fixed rate (ms)"),
        ),
        **{name: ("many_partitions", pick) for name, pick in MANY_PARTITIONS_FIGURES.items()},
    }
    for name in RATIO_DIRECTIONS:
        if name in DRAIN_RATIOS:
            ratios[name], notes[name] = drain_ratio(scenarios, name)
            continue
        if name in EVENT_LOOP_RATIOS:
            ratios[name], notes[name] = _event_loop_ratio(scenarios, name)
            continue
        if name in METRICS_COST_RATIOS:
            cost = _metrics(scenarios, "metrics_cost", PYCONNECT)
            ratios[name], notes[name] = metrics_cost_ratio(cost, name)
            if cost is None:
                notes[name] = _why_missing(scenarios, "metrics_cost", PYCONNECT)
            continue
        if name == "p99_latency":
            scenario = "latency"
        elif name in CONTROL_FIGURES:
            scenario = "control_plane"
        else:
            scenario = simple[name][0]
        py = _metrics(scenarios, scenario, PYCONNECT)
        java = _metrics(scenarios, scenario, JAVA_REFERENCE)
        if py is None or java is None:
            ratios[name] = None
            missing = [s for s, m in ((PYCONNECT, py), (JAVA_REFERENCE, java)) if m is None]
            notes[name] = "; ".join(_why_missing(scenarios, scenario, s) for s in missing)
            continue
        if name == "p99_latency":
            py_v, java_v, what = _p99(py, java)
        elif name in CONTROL_FIGURES:
            py_v, java_v, what = _control(name, py, java)
        else:
            pick = simple[name][1]
            py_v, what = pick(py)
            java_v, _ = pick(java)
        ratios[name] = ratio(py_v, java_v)
        notes[name] = (
            f"{what}: pyconnect / {JAVA_REFERENCE}"
            if ratios[name] is not None
            else f"{what}: a figure is missing on one side"
        )
    return ratios, notes


def build_results(
    *,
    mode: str,
    started_at: str,
    finished_at: str,
    machine: Mapping[str, Any],
    settings: Mapping[str, Any],
    systems: Mapping[str, Any],
    scenarios: Mapping[str, Any],
    notes: list[str],
) -> dict[str, Any]:
    ratios, ratio_notes = compute_ratios(scenarios)
    return {
        "schema": SCHEMA,
        "mode": mode,
        "started_at": started_at,
        "finished_at": finished_at,
        "machine": dict(machine),
        "settings": dict(settings),
        "systems": dict(systems),
        "scenarios": dict(scenarios),
        "ratios": ratios,
        "ratio_directions": dict(RATIO_DIRECTIONS),
        "ratio_notes": ratio_notes,
        "goals": {name: goal_check(name, ratios.get(name)) for name in GOALS},
        "notes": list(notes),
    }


def validate_results(results: Mapping[str, Any]) -> list[str]:
    """Every way ``results`` departs from the schema (an empty list when it conforms)."""
    problems = [f"missing top-level key '{k}'" for k in REQUIRED_TOP_LEVEL if k not in results]
    if results.get("schema") not in (None, SCHEMA):
        problems.append(f"schema is {results.get('schema')!r}, expected {SCHEMA!r}")
    ratios = results.get("ratios")
    if isinstance(ratios, Mapping):
        for name in RATIO_DIRECTIONS:
            if name not in ratios:
                problems.append(f"ratios lacks '{name}'")
            elif ratios[name] is not None and not isinstance(ratios[name], int | float):
                problems.append(f"ratios['{name}'] is neither a number nor null")
            elif ratios[name] is None and not results.get("ratio_notes", {}).get(name):
                problems.append(f"ratios['{name}'] is null without a note saying why")
    elif "ratios" in results:
        problems.append("ratios is not an object")
    for name, scenario in (results.get("scenarios") or {}).items():
        if scenario.get("status") not in SCENARIO_STATUSES:
            problems.append(f"scenario '{name}' has status {scenario.get('status')!r}")
        for system, entry in (scenario.get("systems") or {}).items():
            if entry.get("status") not in SYSTEM_STATUSES:
                problems.append(f"scenario '{name}' system '{system}' has status {entry.get('status')!r}")
            if entry.get("status") != "ok" and not entry.get("reason"):
                problems.append(
                    f"scenario '{name}' system '{system}' is {entry.get('status')} without a reason"
                )
    return problems


# ---- Markdown ---------------------------------------------------------------------------------


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}f}"
    return str(value)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return [*lines, ""]


def _system_rows(
    scenario: Mapping[str, Any], columns: list[tuple[str, Any]]
) -> tuple[list[list[str]], list[str]]:
    rows, notes = [], []
    for system, entry in (scenario.get("systems") or {}).items():
        label = SYSTEM_LABELS.get(system, system)
        if entry.get("status") != "ok":
            rows.append([label] + ["n/a"] * len(columns))
            notes.append(f"- {label}: **{entry.get('status')}**: {entry.get('reason')}")
            continue
        m = entry.get("metrics") or {}
        rows.append([label] + [_fmt(getter(m)) for _, getter in columns])
    return rows, notes


def render_markdown(results: Mapping[str, Any], chart_name: str | None = "chart.png") -> str:
    machine = results.get("machine", {})
    settings = results.get("settings", {})
    out = [
        f"# pyconnect vs Java MirrorMaker 2: {results.get('mode')} benchmark",
        "",
        f"Run {results.get('started_at')} to {results.get('finished_at')} on {machine.get('cpu_model')} "
        f"({machine.get('cpus')} CPUs, {machine.get('memory_mb')} MB), Kafka {machine.get('kafka_version')}, "
        f"{machine.get('java_version')}, Python {machine.get('python_version')}.",
        "",
        _load_line(machine),
        "",
    ]
    for note in results.get("notes", []):
        out.append(f"> {note}")
        out.append("")
    out.append("## Ratios")
    out.append("")
    out.append(
        "pyconnect / Java, but `uvloop_vs_asyncio_*`: pyconnect on uvloop / pyconnect on asyncio's loop "
        "(records/s, and with `cpu` CPU-seconds per record)."
    )
    out.append("")
    rows = []
    for name, direction in results.get("ratio_directions", RATIO_DIRECTIONS).items():
        value = results.get("ratios", {}).get(name)
        rows.append(
            [
                f"`{name}`",
                _fmt(value, 3),
                f"{direction} is better",
                _goal_text(name, direction),
                _met_text(results.get("goals", {}).get(name)),
                str(results.get("ratio_notes", {}).get(name, "")).replace("|", "/"),
            ]
        )
    out += _table(["ratio", "value", "direction", "goal", "met", "what / why null"], rows)
    if chart_name:
        out += [f"![benchmark chart]({chart_name})", ""]
    scenarios = results.get("scenarios", {})
    out += _limit_section(scenarios.get("limit"))
    for size in ("100b", "1kb"):
        out += _section(
            scenarios.get("throughput"),
            f"Throughput: draining a backlog of {size.upper()} records",
            [
                ("records", lambda m, s=size: (m.get(s) or {}).get("records")),
                ("records/s", lambda m, s=size: (m.get(s) or {}).get("records_per_s")),
                ("MB/s", lambda m, s=size: (m.get(s) or {}).get("mb_per_s")),
                ("CPU-s / M records", lambda m, s=size: (m.get(s) or {}).get("cpu_s_per_million")),
                ("wall s (create to done)", lambda m, s=size: (m.get(s) or {}).get("wall_s")),
            ],
        )
    out += _scale_out_section(scenarios.get("scale_out"), scenarios.get("throughput"))
    out += _event_loop_section(scenarios.get("event_loop"), results.get("ratios") or {})
    out += _metrics_cost_section(scenarios.get("metrics_cost"), results.get("ratios") or {})
    out += _latency_section(scenarios.get("latency"))
    out += _section(
        scenarios.get("resources"),
        "Resources",
        [
            ("peak RSS per worker (MB)", lambda m: m.get("peak_rss_mb")),
            ("idle fleet CPU (% of one core)", lambda m: m.get("idle_fleet_cpu_percent")),
            ("idle RSS per worker (MB)", lambda m: m.get("idle_rss_mb_mean")),
            ("idle fleet size", lambda m: m.get("idle_fleet_workers")),
        ],
    )
    out += _section(
        scenarios.get("startup"),
        "Start-up (one worker, from process start)",
        [
            ("REST ready (s)", lambda m: m.get("rest_ready_s")),
            ("all tasks RUNNING (s)", lambda m: m.get("tasks_running_s")),
            ("first record mirrored (s)", lambda m: m.get("first_record_s")),
        ],
    )
    out += _section(
        scenarios.get("failover"),
        "Failover (kill -9 of one of three workers)",
        [
            ("tasks RUNNING again (s)", lambda m: m.get("recovery_s")),
            ("records produced", lambda m: m.get("records_produced")),
            ("records lost", lambda m: m.get("records_lost")),
            ("duplicates", lambda m: m.get("duplicates")),
            ("killed worker's tasks", lambda m: m.get("killed_worker_tasks")),
            ("killed worker ran the connector", lambda m: m.get("killed_worker_ran_connector")),
            ("killed worker was the leader", lambda m: m.get("killed_worker_was_leader")),
        ],
    )
    out += _section(
        scenarios.get("checkpoint_lag"),
        "Checkpoint lag (source group commit to translated offset on the target)",
        [
            ("samples", lambda m: m.get("samples")),
            ("checkpoint p50 ms", lambda m: (m.get("checkpoint_lag") or {}).get("p50_ms")),
            ("checkpoint max ms", lambda m: (m.get("checkpoint_lag") or {}).get("max_ms")),
            ("group offset on target p50 ms", lambda m: (m.get("group_offset_lag") or {}).get("p50_ms")),
            ("group offset on target max ms", lambda m: (m.get("group_offset_lag") or {}).get("max_ms")),
            ("first checkpoint after creation (s)", lambda m: m.get("first_checkpoint_after_create_s")),
            ("translation mismatches", lambda m: m.get("downstream_mismatches")),
        ],
    )
    out += _section(
        scenarios.get("exactly_once"),
        "Exactly-once (one worker, exactly.once.source.support=enabled, 1 KB records)",
        [
            ("records", lambda m: (m.get("poll") or {}).get("records")),
            ("poll boundary: records/s", lambda m: (m.get("poll") or {}).get("records_per_s")),
            ("poll boundary: CPU-s / M records", lambda m: (m.get("poll") or {}).get("cpu_s_per_million")),
            ("interval boundary: records/s", lambda m: (m.get("interval") or {}).get("records_per_s")),
            (
                "interval boundary: CPU-s / M records",
                lambda m: (m.get("interval") or {}).get("cpu_s_per_million"),
            ),
            ("duplicates (read_committed)", lambda m: (m.get("poll") or {}).get("duplicates")),
            ("p99 latency ms (poll boundary)", lambda m: eos_summary(m)["p99_ms"]),
        ],
    )
    out += _section(
        scenarios.get("wan"),
        "High-latency link (the source cluster behind delaying proxies, 1 KB records)",
        [
            ("round trip added (ms)", lambda m: 2 * int(m.get("one_way_delay_ms") or 0)),
            ("records/s", lambda m: (m.get("1kb") or {}).get("records_per_s")),
            ("MB/s", lambda m: (m.get("1kb") or {}).get("mb_per_s")),
            ("CPU-s / M records", lambda m: (m.get("1kb") or {}).get("cpu_s_per_million")),
            (
                "p99 latency ms",
                lambda m: (((m.get("latency") or {}).get("rates") or [{}])[0]).get("p99_ms"),
            ),
        ],
    )
    out += _section(
        scenarios.get("compressed"),
        "Compressed source (1 KB records, the target producer asked for the source's codec)",
        [
            row
            for codec in COMPRESSED_CODECS
            for row in (
                (f"{codec}: records/s", lambda m, c=codec: (m.get(c) or {}).get("records_per_s")),
                (f"{codec}: MB/s", lambda m, c=codec: (m.get(c) or {}).get("mb_per_s")),
                (f"{codec}: CPU-s / M records", lambda m, c=codec: (m.get(c) or {}).get("cpu_s_per_million")),
            )
        ],
    )
    out += _many_partitions_section(scenarios.get("many_partitions"))
    out += _control_plane_section(scenarios.get("control_plane"))
    out += _audit_scale_section(scenarios.get("audit_scale"))
    out += _section(scenarios.get("group_sync"), "Continuous group offset sync", GROUP_SYNC_COLUMNS)
    out += _cutover_section(scenarios.get("cutover"))
    out += _profile_section(results)
    out.append("## Settings")
    out.append("")
    out.append("```json")
    out.append(json.dumps(settings, indent=2, sort_keys=True))
    out.append("```")
    out.append("")
    return "\n".join(out)


def _load_line(machine: Mapping[str, Any]) -> str:
    """The machine's load: what a reader needs to judge figures taken on a shared machine."""

    def triple(value: Any) -> str:
        return "/".join(f"{v:.2f}" for v in value) if value else "n/a"

    during = machine.get("load_average_during_run") or {}
    text = (
        f"Machine load (1/5/15-minute load average, this benchmark's own brokers and workers included): "
        f"{triple(machine.get('load_average_at_start'))} at the start, "
        f"{triple(machine.get('load_average_at_end'))} at the end"
    )
    if during:
        text += (
            f"; 1-minute load during the run min {during.get('min'):.2f}, mean {during.get('mean'):.2f}, "
            f"max {during.get('max'):.2f} (sampled every {during.get('interval_s'):.0f} s)"
        )
    return text + f" on {machine.get('cpus')} CPUs."


def _goal_text(name: str, direction: str) -> str:
    if name not in GOALS:
        return "n/a"
    return ("at least " if direction == HIGHER_IS_BETTER else "at most ") + f"{GOALS[name]:g}"


def _met_text(check: Mapping[str, Any] | None) -> str:
    if not check or check.get("met") is None:
        return "n/a"
    if check["met"]:
        return "yes"
    return f"no: {check['factor']:.2f}x short"


def _split_frame(frame: str) -> tuple[str, str]:
    """``("name", "file:line")`` of a py-spy frame ``name (file:line)``."""
    name, _, where = frame.rpartition(" (")
    return (name, where.rstrip(")")) if name else (frame, "")


def _profile_section(results: Mapping[str, Any], rows: int = 12) -> list[str]:
    """ "Where the time goes": the missed goals, then per backlog the top functions of pyconnect's profile."""
    scenario = (results.get("scenarios") or {}).get("profile")
    if scenario is None:
        return []
    lines = _header(scenario, "Where the time goes (pyconnect worker profile)")
    missed = [
        (name, check)
        for name, check in (results.get("goals") or {}).items()
        if check and check.get("met") is False
    ]
    if missed:
        lines.append("Goals missed in this run:")
        lines.append("")
        for name, check in missed:
            value = (results.get("ratios") or {}).get(name)
            direction = RATIO_DIRECTIONS.get(name, HIGHER_IS_BETTER)
            lines.append(
                f"- `{name}` = {_fmt(value, 3)} against a goal of {_goal_text(name, direction)}: "
                f"pyconnect's figure must improve {check['factor']:.2f}x"
            )
        lines.append("")
    elif any(check and check.get("met") for check in (results.get("goals") or {}).values()):
        lines += ["Every goal with a figure is met in this run; the profile is kept for reference.", ""]
    else:
        lines += ["No goal could be checked in this run (no ratio has a figure).", ""]
    entry = (scenario.get("systems") or {}).get(PYCONNECT)
    if not entry or entry.get("status") != "ok":
        if entry:
            lines += [f"- profile **{entry.get('status')}**: {entry.get('reason')}", ""]
        return lines
    metrics = entry.get("metrics") or {}
    throughput = (results.get("scenarios") or {}).get("throughput")
    for size, prof in (metrics.get("sizes") or {}).items():
        drain = prof.get("drain") or {}
        lines += [
            f"### {size.upper()} backlog",
            "",
            f"{_fmt(prof.get('samples'))} samples at {metrics.get('rate_hz')} Hz while the worker drained "
            f"{_fmt(drain.get('records'))} records at "
            f"{_fmt(prof.get('records_per_s_under_profiler'))} records/s under the profiler, using "
            f"{_fmt(prof.get('cpu_percent_of_one_core'))} % of one core. Raw folded stacks: "
            f"[{prof.get('file')}]({prof.get('file')})."
            + (
                " Sampled with C frames (`--profile-native`): time inside uvloop and C calls is named, "
                "not counted to the Python frame that called it; in this mode the samples include the "
                "thread's idle time (waiting in the event loop's poll, mostly inside `libc`), so the "
                "shares are of wall time, not of CPU."
                if metrics.get("native")
                else ""
            ),
            "",
        ]
        lines += _cpu_lines(
            prof, drain, None if metrics.get("native") else metrics.get("rate_hz"), throughput, size
        )
        lines += [
            "Self share by package: "
            + ", ".join(f"{p['package']} {p['self_pct']:.1f} %" for p in prof.get("by_package", [])[:8])
            + ".",
            "",
        ]
        self_rows = [
            [f"`{n}`", f"`{w}`", _fmt(f["self_pct"]), _fmt(f["cumulative_pct"])]
            for f in prof.get("top_self", [])[:rows]
            for n, w in [_split_frame(f["function"])]
        ]
        lines += _table(["top by self", "where", "self %", "cumulative %"], self_rows)
        cumulative_rows = [
            [f"`{n}`", f"`{w}`", _fmt(f["cumulative_pct"]), _fmt(f["self_pct"])]
            for f in prof.get("top_cumulative", [])[:rows]
            for n, w in [_split_frame(f["function"])]
        ]
        lines += _table(["top by cumulative", "where", "cumulative %", "self %"], cumulative_rows)
    return lines


def _cpu_lines(
    prof: Mapping[str, Any],
    drain: Mapping[str, Any],
    rate_hz: Any,
    throughput: Mapping[str, Any] | None,
    size: str,
) -> list[str]:
    """Whether the worker was short of CPU, and its CPU per record beside Java's in the measured drain.

    py-spy counts a sample when the thread is running or runnable (waiting for a core); a thread
    that is runnable far more often than it runs was starved by the machine's load, and its
    records/s say more about its share of the CPU than about its code.
    """
    lines: list[str] = []
    samples, wall, used = prof.get("samples"), drain.get("wall_s"), prof.get("cpu_percent_of_one_core")
    if isinstance(samples, int) and isinstance(rate_hz, int) and wall and used is not None:
        active = min(100.0, 100.0 * samples / (rate_hz * wall))
        lines.append(
            f"The worker's thread was running or waiting for a core in about {active:.0f} % of the drain's "
            f"wall time and used {used:.0f} % of one core"
            + (
                ": it was short of CPU (machine load), so its records/s reflect its share of the cores."
                if active > 1.5 * used
                else "."
            )
        )
    cpu = {
        system: ((entry.get("metrics") or {}).get(size) or {}).get("cpu_s_per_million")
        for system, entry in ((throughput or {}).get("systems") or {}).items()
        if entry.get("status") == "ok"
    }
    py, java = cpu.get(PYCONNECT), cpu.get(JAVA_REFERENCE)
    if py is not None and java is not None:
        lines.append(
            f"CPU per million records in the measured drain: pyconnect {py:.1f} s, "
            f"{SYSTEM_LABELS[JAVA_REFERENCE]} {java:.1f} s (ratio {ratio(py, java):.2f}, lower is better)."
        )
    return [*lines, ""] if lines else []


def _header(scenario: Mapping[str, Any] | None, title: str) -> list[str]:
    lines = [f"## {title}", ""]
    if scenario is None:
        return [*lines, "Not run in this invocation.", ""]
    if scenario.get("description"):
        lines += [str(scenario["description"]), ""]
    if scenario.get("status") not in ("ok", None):
        lines += [
            f"Status: **{scenario.get('status')}**"
            + (f": {scenario['reason']}" if scenario.get("reason") else ""),
            "",
        ]
    return lines


def _section(scenario: Mapping[str, Any] | None, title: str, columns: list[tuple[str, Any]]) -> list[str]:
    lines = _header(scenario, title)
    if scenario is None or not columns or not scenario.get("systems"):
        return lines
    rows, notes = _system_rows(scenario, columns)
    return lines + _table(["system", *[c for c, _ in columns]], rows) + ([*notes, ""] if notes else [])


def _pyconnect_only(
    scenario: Mapping[str, Any] | None, title: str
) -> tuple[list[str], dict[str, Any] | None]:
    """The heading of a scenario only pyconnect runs, and its metrics; ``None`` metrics when there is
    nothing more to show (no scenario, no pyconnect entry, or a failed run, whose status the lines say)."""
    if scenario is None:
        return [], None
    lines = _header(scenario, title)
    entry = (scenario.get("systems") or {}).get(PYCONNECT)
    if not entry:
        return lines, None
    if entry.get("status") != "ok":
        return [*lines, f"Status: **{entry.get('status')}**: {entry.get('reason')}", ""], None
    return lines, entry.get("metrics") or {}


def _side_by_side_drains(metrics: Mapping[str, Any], column: str, sides: tuple[str, ...]) -> list[str]:
    """The table of the workers' drains per record size: records/s, MB/s, CPU per record, each drain."""
    rows = []
    for size in ("100b", "1kb"):
        for side in sides:
            m = (metrics.get(side) or {}).get(size) or {}
            each = " / ".join(_fmt(r.get("records_per_s")) for r in m.get("rounds") or []) or "n/a"
            rows.append(
                [
                    size.upper(),
                    side,
                    _fmt(m.get("records_per_s")),
                    _fmt(m.get("mb_per_s"), 2),
                    _fmt(m.get("cpu_s_per_million")),
                    each,
                ]
            )
    return _table(
        ["records", column, "records/s", "MB/s", "CPU-s / M records", "records/s of each drain"], rows
    )


def _scale_out_section(scenario: Mapping[str, Any] | None, throughput: Mapping[str, Any] | None) -> list[str]:
    """The pyconnect fleet's drains beside Java's one worker from the throughput scenario."""
    lines, fleet = _pyconnect_only(
        scenario, "Scale-out: a pyconnect fleet of two workers on the same machine"
    )
    if fleet is None:
        return lines
    java = _metrics({"throughput": throughput or {}}, "throughput", "java-connect") or {}
    single = _metrics({"throughput": throughput or {}}, "throughput", "pyconnect") or {}
    rows = []
    for size in ("100b", "1kb"):
        m = fleet.get(size) or {}
        rps = m.get("records_per_s")
        java_rps = (java.get(size) or {}).get("records_per_s")
        single_rps = (single.get(size) or {}).get("records_per_s")
        rows.append(
            [
                size.upper(),
                _fmt(rps),
                _fmt(m.get("cpu_s_per_million")),
                " + ".join(str(n) for n in m.get("tasks_per_worker") or []) or "n/a",
                _fmt(ratio(rps, java_rps), 2),
                _fmt(ratio(rps, single_rps), 2),
            ]
        )
    lines += _table(
        [
            "records",
            "fleet records/s",
            "fleet CPU-s / M records",
            "tasks per worker",
            "fleet / Java's one worker",
            "fleet / pyconnect's one worker",
        ],
        rows,
    )
    if fleet.get("peak_rss_mb_total") is not None:
        lines += [f"Peak RSS of the fleet, both workers together: {_fmt(fleet['peak_rss_mb_total'])} MB.", ""]
    return lines


def _event_loop_section(scenario: Mapping[str, Any] | None, ratios: Mapping[str, Any]) -> list[str]:
    """pyconnect's drains on uvloop and on asyncio's loop side by side, and the line with their ratio."""
    lines, metrics = _pyconnect_only(scenario, "Event loop: pyconnect on uvloop vs asyncio's loop")
    if metrics is None:
        return lines
    lines += _side_by_side_drains(metrics, "event loop", ("uvloop", "asyncio"))
    parts = [
        f"{size.upper()} {_fmt(ratios.get(f'uvloop_vs_asyncio_{size}'), 2)}x the records/s "
        f"({_fmt(ratios.get(f'uvloop_vs_asyncio_cpu_{size}'), 2)}x the CPU per record)"
        for size in ("100b", "1kb")
    ]
    lines += ["uvloop / asyncio: " + "; ".join(parts) + ".", ""]
    return lines


def _metrics_cost_section(scenario: Mapping[str, Any] | None, ratios: Mapping[str, Any]) -> list[str]:
    """pyconnect recording metrics and not recording them, side by side, and the on / off ratios."""
    lines, metrics = _pyconnect_only(
        scenario, "Metrics cost: pyconnect recording metrics vs not recording them"
    )
    if metrics is None:
        return lines
    sides = tuple(side for side in ("on", "off", "control") if side in metrics)
    lines += _side_by_side_drains(metrics, "recording", sides)
    rows = []
    for side in ("on", "off"):
        m = metrics.get(side) or {}
        rates = (m.get("latency") or {}).get("rates") or []
        p99 = ", ".join(f"{_fmt(r.get('p99_ms'))} at {r.get('rate')}/s" for r in rates) or "n/a"
        rows.append([side, p99, _fmt(m.get("peak_rss_mb"))])
    lines += _table(["recording", "p99 latency ms", "peak RSS MB"], rows)
    parts = [f"`{name}` {_fmt(ratios.get(name), 3)}" for name in METRICS_COST_RATIOS]
    lines += ["on / off: " + ", ".join(parts) + ".", ""]
    if "control" in metrics:
        control = [
            f"`{name}` {_fmt(metrics_cost_ratio(metrics, name)[0], 3)}" for name in METRICS_CONTROL_RATIOS
        ]
        lines += [
            "control / off (two workers that both do not record, the same run's noise floor): "
            + ", ".join(control)
            + ".",
            "",
        ]
    spreads = []
    for group in ("100b", "1kb"):
        for side in sides:
            spread = round_spread(metrics, side, group)
            if spread is not None:
                low, high = spread
                spreads.append(
                    f"{side} {group.upper()} {_fmt(low, 2)} to {_fmt(high, 2)} ({_fmt(high / low, 3)}x)"
                )
    if spreads:
        lines += [
            "CPU-seconds per million records from round to round within one side (the noise a CPU ratio "
            "must rise above to show a cost): " + "; ".join(spreads) + ".",
            "",
        ]
    profile = (metrics.get("on") or {}).get("profile") or {}
    if profile.get("samples"):
        top = "; ".join(f"{e['function']} {_fmt(e['pct'], 2)} %" for e in profile.get("top_recording") or [])
        lines += [
            f"Profile of the recording worker draining the {str(profile.get('backlog')).upper()} backlog once more "
            f"(py-spy, {profile['samples']:,} CPU samples): {_fmt(profile.get('recording_pct'), 2)} % in metric "
            f"recording, {_fmt(profile.get('scrape_pct'), 2)} % serving scrapes. Recording functions: {top or 'none'}.",
            "",
        ]
    return lines


def _seconds_and_rate(phase: Mapping[str, Any] | None) -> str:
    if not phase or phase.get("wall_s") is None:
        return "n/a"
    return f"{_fmt(phase['wall_s'], 2)} ({_fmt(phase.get('per_s'))}/s)"


def _p50_p99(figures: Mapping[str, Any] | None) -> str:
    if not figures or figures.get("p50_ms") is None:
        return "n/a"
    return f"{_fmt(figures['p50_ms'])} / {_fmt(figures.get('p99_ms'))}"


CONTROL_COMPARED = (
    ("create", lambda m: (m.get("create") or {}).get("wall_s")),
    ("all RUNNING", lambda m: m.get("create_to_running_s")),
    ("status p50", lambda m: (m.get("status") or {}).get("p50_ms")),
    ("status p99", lambda m: (m.get("status") or {}).get("p99_ms")),
    ("info p50", lambda m: (m.get("info") or {}).get("p50_ms")),
    ("info p99", lambda m: (m.get("info") or {}).get("p99_ms")),
    ("restart", lambda m: (m.get("restart") or {}).get("wall_s")),
    ("delete", lambda m: (m.get("delete") or {}).get("wall_s")),
)
"""The figures the control-plane section divides, pyconnect by Java, per connector count."""
CONTROL_LABELS = {"java-connect": "Java Connect", "pyconnect": "pyconnect"}
"""The control plane runs VerifiableSourceConnectors: the systems are the runtimes, not the mirrors."""


def _cutover_section(scenario: Mapping[str, Any] | None) -> list[str]:
    """The cutover runs (benchmarks.cutover): one row per run, then the summaries per --quiet setting."""
    lines, metrics = _pyconnect_only(scenario, "Cutover A -> B under load (pyconnect only)")
    if scenario is not None and metrics is None:
        failed = ((scenario.get("systems") or {}).get(PYCONNECT) or {}).get("metrics")
        return lines + (cutover_markdown(failed) if failed else [])
    return lines + (cutover_markdown(metrics) if metrics else [])


def _audit_scale_section(scenario: Mapping[str, Any] | None) -> list[str]:
    """Per mode and size: wall and audit time, records/s, peak RSS, verdict, report size; then growth."""
    lines, metrics = _pyconnect_only(scenario, "Audit at scale (Spark flow audit of mirrored records)")
    if metrics is None and scenario is not None:
        metrics = ((scenario.get("systems") or {}).get(PYCONNECT) or {}).get("metrics")
    if not metrics:
        return lines
    rows = []
    for mode, sizes in (metrics.get("modes") or {}).items():
        for records, r in sorted(sizes.items(), key=lambda item: int(item[0])):
            rows.append(
                [
                    mode,
                    _fmt(int(records), 0),
                    _fmt(r.get("wall_s")),
                    _fmt(r.get("audit_s")),
                    _fmt(r.get("records_scanned_per_s"), 0),
                    _fmt(r.get("peak_driver_rss_mb"), 0),
                    _fmt(r.get("peak_executor_rss_mb"), 0),
                    str(r.get("verdict")),
                    _fmt(r.get("html_report_bytes"), 0),
                    f"{_fmt(r.get('load_1min_at_start'))} / {_fmt(r.get('load_1min_mean'))}",
                ]
            )
    lines += _table(
        [
            "mode",
            "records",
            "wall s",
            "audit s",
            "records scanned/s",
            "peak driver RSS MB",
            "peak executor RSS MB",
            "verdict",
            "audit.html bytes",
            "load 1-min start / mean",
        ],
        rows,
    )
    for mode, g in (metrics.get("growth") or {}).items():
        if g:
            lines.append(
                f"- {mode}: {g['to_records']:,} / {g['from_records']:,} records ({g['records_ratio']}x): "
                f"wall time x{_fmt(g.get('wall_ratio'), 2)}, audit time x{_fmt(g.get('audit_ratio'), 2)}"
            )
    for failure in metrics.get("failures") or []:
        lines.append(f"- failed: {failure}")
    return [*lines, ""]


def _many_partitions_section(scenario: Mapping[str, Any] | None) -> list[str]:
    """Per system: the copy timeline, the idle figures and the reconfiguration, then what the
    reconfiguration time includes."""
    if scenario is None:
        return []
    shape = (
        next((e.get("metrics") for e in (scenario.get("systems") or {}).values() if e.get("metrics")), None)
        or {}
    )
    title = "Many partitions: one connector over many small topics, one worker"
    if shape:
        title += (
            f" ({_fmt(shape.get('topics'))} topics x {_fmt(shape.get('partitions_per_topic'))} partitions, "
            f"{_fmt((shape.get('reconfigure') or {}).get('topics'))} topics added)"
        )
    lines = _section(
        scenario,
        title,
        [
            ("tasks RUNNING s", lambda m: (m.get("copy") or {}).get("tasks_running_s")),
            ("first record s", lambda m: (m.get("copy") or {}).get("first_record_s")),
            ("all copied s", lambda m: (m.get("copy") or {}).get("copied_s")),
            ("idle CPU % of one core", lambda m: (m.get("idle") or {}).get("cpu_percent")),
            ("idle RSS MB", lambda m: (m.get("idle") or {}).get("rss_mb")),
            ("peak RSS MB", lambda m: m.get("peak_rss_mb")),
            ("added: source ready s", lambda m: (m.get("reconfigure") or {}).get("source_ready_s")),
            ("added: all copied s", lambda m: (m.get("reconfigure") or {}).get("copied_s")),
            ("records copied twice", lambda m: (m.get("reconfigure") or {}).get("recopied_records")),
        ],
    )
    if shape:
        interval = _fmt(shape.get("refresh_topics_interval_s"))
        lines += [
            f'The added topics\' time runs from the start of their creation on the source ("source ready": '
            f"created and written) to all their records on the target, so it includes up to "
            f"refresh.topics.interval.seconds ({interval} s) before the connector notices them, then the task "
            f"reconfiguration and the copy. `topics` = `{shape.get('topics_regex')}` (the alias differs per "
            f"system), tasks.max={_fmt(shape.get('tasks_max'))}.",
            "",
        ]
    return lines


def _control_plane_section(scenario: Mapping[str, Any] | None) -> list[str]:
    """Per system and connector count: each phase's time, then pyconnect / Java per figure."""
    if scenario is None:
        return []
    lines = _header(scenario, "Control plane: many connectors through REST on a fleet of three workers")
    rows, notes = [], []
    by_system: dict[str, dict[int, Mapping[str, Any]]] = {}
    shape: Mapping[str, Any] = {}
    for system, entry in (scenario.get("systems") or {}).items():
        label = CONTROL_LABELS.get(system, system)
        metrics = entry.get("metrics") or {}
        if entry.get("status") != "ok":
            notes.append(f"- {label}: **{entry.get('status')}**: {entry.get('reason')}")
        shape = shape or metrics
        by_system[system] = _control_sizes(metrics)
        for n, m in sorted(by_system[system].items()):
            retries = sum((m.get(p) or {}).get("retries") or 0 for p in ("create", "restart", "delete"))
            rows.append(
                [
                    label,
                    _fmt(n),
                    _seconds_and_rate(m.get("create")),
                    _p50_p99(m.get("create")),
                    _fmt(m.get("create_to_running_s"), 2),
                    _p50_p99(m.get("status")),
                    _p50_p99(m.get("info")),
                    _seconds_and_rate(m.get("restart")),
                    _seconds_and_rate(m.get("delete")),
                    _fmt(m.get("delete_to_gone_s"), 2),
                    _fmt(retries),
                ]
            )
    if rows:
        lines += _table(
            [
                "system",
                "connectors",
                "create s (per s)",
                "create p50 / p99 ms",
                "all RUNNING s",
                "expand=status p50 / p99 ms",
                "expand=info p50 / p99 ms",
                "restart s (per s)",
                "delete s (per s)",
                "all gone s",
                "retried writes",
            ],
            rows,
        )
    py, java = by_system.get(PYCONNECT, {}), by_system.get(JAVA_REFERENCE, {})
    common = sorted(set(py) & set(java))
    if common:
        ratio_rows = [
            [_fmt(n)] + [_fmt(ratio(pick(py[n]), pick(java[n])), 2) for _, pick in CONTROL_COMPARED]
            for n in common
        ]
        lines += [f"pyconnect / {CONTROL_LABELS[JAVA_REFERENCE]} (lower is better):", ""]
        lines += _table(["connectors", *[name for name, _ in CONTROL_COMPARED]], ratio_rows)
    if shape:
        notes.append(
            f"- {_fmt(shape.get('workers'))} workers, {_fmt(shape.get('concurrency'))} writes in flight spread "
            f"round-robin over the workers, each GET repeated {_fmt(shape.get('repeats'))} times."
        )
    return lines + ([*notes, ""] if notes else [])


def _limit_section(scenario: Mapping[str, Any] | None) -> list[str]:
    lines = _header(scenario, "Physical limit: the brokers' own produce and consume throughput")
    entry = (scenario or {}).get("systems", {}).get("brokers")
    if not entry:
        return lines
    if entry.get("status") != "ok":
        return [*lines, f"- **{entry.get('status')}**: {entry.get('reason')}", ""]
    rows = []
    for size, figures in (entry.get("metrics") or {}).items():
        for side in ("produce", "consume"):
            f = figures.get(side) or {}
            rows.append(
                [size, side, _fmt(f.get("records")), _fmt(f.get("records_per_s")), _fmt(f.get("mb_per_s"))]
            )
    return lines + _table(["size", "side", "records", "records/s", "MB/s"], rows)


def _latency_section(scenario: Mapping[str, Any] | None) -> list[str]:
    lines = _header(scenario, "End-to-end replication latency at fixed input rates")
    if scenario is None:
        return lines
    rows, notes = [], []
    for system, entry in (scenario.get("systems") or {}).items():
        label = SYSTEM_LABELS.get(system, system)
        if entry.get("status") != "ok":
            rows.append([label, "n/a", "n/a", "n/a", "n/a", "n/a"])
            notes.append(f"- {label}: **{entry.get('status')}**: {entry.get('reason')}")
            continue
        for r in (entry.get("metrics") or {}).get("rates", []):
            rows.append(
                [
                    label,
                    _fmt(r.get("rate")),
                    _fmt(r.get("count")),
                    _fmt(r.get("p50_ms")),
                    _fmt(r.get("p99_ms")),
                    _fmt(r.get("max_ms")),
                ]
            )
    return (
        lines
        + _table(["system", "input records/s", "records", "p50 ms", "p99 ms", "max ms"], rows)
        + ([*notes, ""] if notes else [])
    )


# ---- chart ------------------------------------------------------------------------------------


def chart_series(results: Mapping[str, Any]) -> list[tuple[str, str, dict[str, float | None]]]:
    """(panel title, unit, {system: value or None}) for each panel of the chart."""
    scenarios = results.get("scenarios", {})
    systems = [s for s in SYSTEM_LABELS if s != "brokers"]

    def values(scenario: str, getter: Any) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for s in systems:
            entry = scenarios.get(scenario, {}).get("systems", {}).get(s)
            if entry is None:
                continue
            m = entry.get("metrics") if entry.get("status") == "ok" else None
            out[s] = getter(m) if m else None
        return out

    panels = []
    for size in ("100b", "1kb"):
        v = values("throughput", lambda m, s=size: (m.get(s) or {}).get("records_per_s"))
        limit = (scenarios.get("limit", {}).get("systems", {}).get("brokers") or {}).get("metrics") or {}
        produce = (limit.get(size) or {}).get("produce", {}).get("records_per_s")
        if produce is not None:
            v = {"brokers": produce, **v}
        panels.append((f"Throughput {size.upper()}", "records/s", v))
    rates: list[int] = []
    for entry in scenarios.get("latency", {}).get("systems", {}).values():
        for r in (entry.get("metrics") or {}).get("rates") or []:
            if r.get("rate") not in rates:
                rates.append(r["rate"])
    for chosen in sorted(rates)[:1] + sorted(rates)[1:][-1:]:

        def p99(m: Mapping[str, Any], chosen: int = chosen) -> float | None:
            for r in m.get("rates", []):
                if r.get("rate") == chosen:
                    return r.get("p99_ms")
            return None

        panels.append((f"p99 latency at {chosen} rec/s", "ms", values("latency", p99)))
    panels.append(("Peak RSS per worker", "MB", values("resources", lambda m: m.get("peak_rss_mb"))))
    panels.append(("Start-up to first record", "s", values("startup", lambda m: m.get("first_record_s"))))
    panels.append(("Failover: tasks RUNNING again", "s", values("failover", lambda m: m.get("recovery_s"))))
    panels.append(
        (
            "Idle fleet of 3: CPU",
            "% of one core",
            values("resources", lambda m: m.get("idle_fleet_cpu_percent")),
        )
    )
    panels.append(
        (
            "Checkpoint lag p50",
            "ms",
            values("checkpoint_lag", lambda m: (m.get("checkpoint_lag") or {}).get("p50_ms")),
        )
    )
    control = {
        system: _control_sizes(entry.get("metrics") or {}) if entry.get("status") == "ok" else {}
        for system, entry in scenarios.get("control_plane", {}).get("systems", {}).items()
        if system in systems
    }
    if control:
        largest = max((n for sizes in control.values() for n in sizes), default=0)
        panels.append(
            (
                f"Create {largest or 'n/a'} connectors (REST)",
                "s",
                {
                    system: ((sizes.get(largest) or {}).get("create") or {}).get("wall_s")
                    for system, sizes in control.items()
                },
            )
        )
    return panels


def render_chart(results: Mapping[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {
        "brokers": "#9e9e9e",
        "java-connect": "#e76f51",
        "java-dedicated": "#f4a261",
        "pyconnect": "#2a9d8f",
    }
    short = {
        "brokers": "limit",
        "java-connect": "Java\nConnect",
        "java-dedicated": "Java\ndedicated",
        "pyconnect": "pyconnect",
    }
    panels = chart_series(results)
    columns = 3
    fig, axes = plt.subplots(
        -(-len(panels) // columns), columns, figsize=(13, 3.6 * -(-len(panels) // columns))
    )
    for ax, (title, unit, values) in zip(axes.flat, panels, strict=False):
        names = list(values)
        heights = [values[n] or 0.0 for n in names]
        bars = ax.bar(range(len(names)), heights, color=[colours.get(n, "#555") for n in names])
        ax.set_xticks(range(len(names)), [short.get(n, n) for n in names], fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(unit, fontsize=8)
        ax.tick_params(axis="y", labelsize=8)
        top = max(heights) if heights and max(heights) > 0 else 1.0
        ax.set_ylim(0, top * 1.18)
        for bar, n in zip(bars, names, strict=True):
            v = values[n]
            label = "n/a" if v is None else (f"{v:,.0f}" if v >= 100 else f"{v:.2f}")
            ax.annotate(
                label,
                (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                ha="center",
                va="bottom",
                fontsize=8,
                xytext=(0, 2),
                textcoords="offset points",
            )
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    fig.suptitle(
        f"pyconnect vs Java MirrorMaker 2 ({results.get('mode')} run, {str(results.get('started_at'))[:10]}); "
        "n/a = did not run",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_results(
    results: Mapping[str, Any], out_dir: Path, artifacts: Mapping[str, str] | None = None
) -> dict[str, Path]:
    """Write results.json, report.md, chart.png and each artifact (file name -> text) into ``out_dir``;
    return the paths of the first three. Profiles of an earlier run in ``out_dir`` are removed."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob("profile-*.folded.txt"):
        if stale.name not in (artifacts or {}):
            stale.unlink()
    for name, text in (artifacts or {}).items():
        (out_dir / Path(name).name).write_text(text)
    paths = {
        "json": out_dir / "results.json",
        "markdown": out_dir / "report.md",
        "chart": out_dir / "chart.png",
    }
    paths["json"].write_text(json.dumps(results, indent=2, sort_keys=False) + "\n")
    render_chart(results, paths["chart"])
    paths["markdown"].write_text(render_markdown(results, paths["chart"].name))
    return paths


def rebuild_results(out_dir: Path) -> dict[str, Path]:
    """Recompute the ratios, notes and goals of the run stored in ``out_dir`` (its results.json) with
    this code, and write results.json, report.md and chart.png again; the measurements and the stored
    profiles stay as they are. For a report or ratio added after the run."""
    stored = json.loads((out_dir / "results.json").read_text())
    results = build_results(
        mode=stored["mode"],
        started_at=stored["started_at"],
        finished_at=stored["finished_at"],
        machine=stored["machine"],
        settings=stored["settings"],
        systems=stored["systems"],
        scenarios=stored["scenarios"],
        notes=stored.get("notes") or [],
    )
    kept = {path.name: path.read_text() for path in out_dir.glob("profile-*.folded.txt")}
    return write_results(results, out_dir, kept)
