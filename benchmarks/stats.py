"""Pure arithmetic the benchmarks share: percentiles, rates, pyconnect/Java ratios.

No I/O and no clock here, so every figure the report prints can be checked by a unit test.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# Direction of each ratio in ``results.json``'s top-level ``ratios``: pyconnect divided by Java, but for
# ``uvloop_vs_asyncio_<size>`` (records/s) and ``uvloop_vs_asyncio_cpu_<size>`` (CPU-seconds per record),
# pyconnect on uvloop divided by pyconnect on asyncio's loop; ``limit_<size>``: pyconnect's drain over
# the brokers' own produce rate; ``best_java_<size>``: over the faster of Java's two set-ups.
HIGHER_IS_BETTER = "higher"
LOWER_IS_BETTER = "lower"
RATIO_DIRECTIONS: dict[str, str] = {
    "throughput_100b": HIGHER_IS_BETTER,
    "throughput_1kb": HIGHER_IS_BETTER,
    "limit_100b": HIGHER_IS_BETTER,
    "limit_1kb": HIGHER_IS_BETTER,
    "cpu_100b": LOWER_IS_BETTER,
    "cpu_1kb": LOWER_IS_BETTER,
    "best_java_100b": HIGHER_IS_BETTER,
    "best_java_1kb": HIGHER_IS_BETTER,
    "p99_latency": LOWER_IS_BETTER,
    "rss": LOWER_IS_BETTER,
    "startup": LOWER_IS_BETTER,
    "control_create": LOWER_IS_BETTER,
    "control_status": LOWER_IS_BETTER,
    "uvloop_vs_asyncio_100b": HIGHER_IS_BETTER,
    "uvloop_vs_asyncio_1kb": HIGHER_IS_BETTER,
    "uvloop_vs_asyncio_cpu_100b": LOWER_IS_BETTER,
    "uvloop_vs_asyncio_cpu_1kb": LOWER_IS_BETTER,
    "eos_throughput_poll": HIGHER_IS_BETTER,
    "eos_throughput_interval": HIGHER_IS_BETTER,
    "eos_p99_latency": LOWER_IS_BETTER,
    "wan_throughput_1kb": HIGHER_IS_BETTER,
    "compressed_lz4": HIGHER_IS_BETTER,
    "compressed_zstd": HIGHER_IS_BETTER,
    "compressed_cpu_lz4": LOWER_IS_BETTER,
    "compressed_cpu_zstd": LOWER_IS_BETTER,
    "metrics_on_vs_off_100b": HIGHER_IS_BETTER,
    "metrics_on_vs_off_1kb": HIGHER_IS_BETTER,
    "metrics_on_vs_off_cpu_100b": LOWER_IS_BETTER,
    "metrics_on_vs_off_cpu_1kb": LOWER_IS_BETTER,
    "metrics_on_vs_off_p99": LOWER_IS_BETTER,
    "metrics_on_vs_off_rss": LOWER_IS_BETTER,
    "many_partitions_copy": LOWER_IS_BETTER,
    "many_partitions_idle_cpu": LOWER_IS_BETTER,
    "many_partitions_rss": LOWER_IS_BETTER,
    "many_partitions_reconfigure": LOWER_IS_BETTER,
}

# The goals set for each ratio: pyconnect / Java at least this (higher is better) or at most this
# (lower is better); uvloop, the default loop, must drain at least as fast as asyncio's loop and spend
# no more CPU per record; recording metrics (metrics_on_vs_off_*) must stay within what repeated drains
# on a shared 2-core machine vary by. The report says for each whether it is met and, if not, by what factor.
GOALS: dict[str, float] = {
    "throughput_100b": 1.0,
    "throughput_1kb": 1.5,
    "limit_100b": 0.6,
    "limit_1kb": 0.8,
    "cpu_100b": 0.25,
    "cpu_1kb": 0.25,
    "best_java_100b": 1.5,
    "best_java_1kb": 1.5,
    "p99_latency": 1.0,
    "rss": 0.25,
    "startup": 0.2,
    "control_create": 1.0,
    "control_status": 1.0,
    "uvloop_vs_asyncio_100b": 1.0,
    "uvloop_vs_asyncio_1kb": 1.0,
    "uvloop_vs_asyncio_cpu_100b": 1.0,
    "uvloop_vs_asyncio_cpu_1kb": 1.0,
    "eos_throughput_poll": 1.0,
    "eos_throughput_interval": 1.0,
    "eos_p99_latency": 1.0,
    "wan_throughput_1kb": 2.0,
    "compressed_lz4": 1.5,
    "compressed_zstd": 1.5,
    "compressed_cpu_lz4": 0.25,
    "compressed_cpu_zstd": 0.25,
    "metrics_on_vs_off_100b": 0.95,
    "metrics_on_vs_off_1kb": 0.95,
    "metrics_on_vs_off_cpu_100b": 1.05,
    "metrics_on_vs_off_cpu_1kb": 1.05,
    "metrics_on_vs_off_p99": 1.1,
    "metrics_on_vs_off_rss": 1.05,
    "many_partitions_copy": 1.0,
    "many_partitions_idle_cpu": 1.0,
    "many_partitions_rss": 0.25,
    "many_partitions_reconfigure": 1.0,
}


def goal_check(name: str, value: float | None) -> dict[str, float | bool | None]:
    """``{"goal", "met", "factor"}`` of ratio ``name``: ``factor`` is how many times pyconnect's figure must
    improve to reach the goal (goal / value when higher is better, value / goal when lower is better),
    so above 1 when the goal is missed; ``met`` and ``factor`` are None when the ratio is."""
    goal = GOALS[name]
    if value is None or value <= 0:
        return {"goal": goal, "met": None, "factor": None}
    factor = goal / value if RATIO_DIRECTIONS[name] == HIGHER_IS_BETTER else value / goal
    return {"goal": goal, "met": factor <= 1.0, "factor": round(factor, 2)}


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) by linear interpolation between closest ranks (numpy's default).

    Raises ValueError for an empty sequence or ``q`` outside 0..100.
    """
    if not values:
        raise ValueError("percentile of an empty sequence")
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile {q} is outside 0..100")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = math.ceil(rank)
    if low == high:
        return float(ordered[low])
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def latency_summary(latencies_ms: Sequence[float]) -> dict[str, float | int]:
    """``{"count", "p50_ms", "p99_ms", "max_ms", "mean_ms"}`` of end-to-end latencies in milliseconds."""
    if not latencies_ms:
        raise ValueError("no latencies to summarise")
    return {
        "count": len(latencies_ms),
        "p50_ms": round(percentile(latencies_ms, 50), 3),
        "p99_ms": round(percentile(latencies_ms, 99), 3),
        "max_ms": round(float(max(latencies_ms)), 3),
        "mean_ms": round(sum(latencies_ms) / len(latencies_ms), 3),
    }


def lag_summary(lags_ms: Sequence[float]) -> dict[str, float | int]:
    """``{"count", "p50_ms", "max_ms", "min_ms", "mean_ms"}`` of a few lag samples (no p99: too few)."""
    if not lags_ms:
        raise ValueError("no lags to summarise")
    return {
        "count": len(lags_ms),
        "p50_ms": round(percentile(lags_ms, 50), 1),
        "max_ms": round(float(max(lags_ms)), 1),
        "min_ms": round(float(min(lags_ms)), 1),
        "mean_ms": round(sum(lags_ms) / len(lags_ms), 1),
    }


def rate(count: float, seconds: float) -> float | None:
    """``count / seconds``, or None when the interval is not positive (nothing measurable)."""
    if seconds <= 0:
        return None
    return count / seconds


def cpu_seconds_per_million(cpu_seconds: float, records: int) -> float | None:
    if records <= 0:
        return None
    return cpu_seconds * 1_000_000 / records


def combine_drains(drains: Sequence[Mapping[str, Any]], record_size: int) -> dict[str, Any]:
    """Several drains of one backlog as one: records/s over the summed measured windows, CPU per record
    over the summed records, and each drain's own figures under ``rounds``.

    Each drain is a throughput figure (``measured_records``, ``measured_window_s``, ``cpu_s_per_million``
    or None). A missing CPU figure makes the combined one None; no drain is an error.
    """
    if not drains:
        raise ValueError("no drains to combine")
    records = sum(int(d["measured_records"]) for d in drains)
    window = sum(float(d["measured_window_s"]) for d in drains)
    cpu: float | None = 0.0
    for drain in drains:
        each = drain.get("cpu_s_per_million")
        cpu = (
            None if cpu is None or each is None else cpu + float(each) * int(drain["measured_records"]) / 1e6
        )
    per_s = rate(records, window)
    per_million = None if cpu is None else cpu_seconds_per_million(cpu, records)
    return {
        "records_per_s": None if per_s is None else round(per_s, 1),
        "mb_per_s": None if per_s is None else round(per_s * record_size / 1e6, 3),
        "cpu_s_per_million": None if per_million is None else round(per_million, 2),
        "measured_records": records,
        "measured_window_s": round(window, 3),
        "rounds": [dict(d) for d in drains],
    }


def ratio(pyconnect: float | None, java: float | None) -> float | None:
    """pyconnect / Java, or None when either side is missing or Java's figure is zero.

    The quotient keeps its natural direction: see ``RATIO_DIRECTIONS`` for which way is better.
    """
    if pyconnect is None or java is None or java == 0:
        return None
    return round(pyconnect / java, 4)


def better(name: str, value: float) -> bool:
    """Whether a ratio ``value`` for ``name`` means pyconnect did better than Java."""
    direction = RATIO_DIRECTIONS[name]
    return value > 1.0 if direction == HIGHER_IS_BETTER else value < 1.0


def total(values: Iterable[float]) -> float:
    return float(sum(values))
