"""Kafka's metric statistics give Java's numbers.

The expected values were printed by ``org.apache.kafka.common.metrics`` of kafka-clients 4.3.1: one
``Sensor`` carrying Rate, Avg, Max, Min, CumulativeSum, CumulativeCount, WindowedCount, Value and
WindowedSum, and one carrying ``Frequencies.forBooleanValues``, with ``MetricConfig().samples(2)
.timeWindow(30000 ms)`` and a manual ``Time``, fed the script below.
"""

from __future__ import annotations

import math

import pytest

from pyconnect.metrics.registry import MetricGroup, MetricsHub
from pyconnect.metrics.stats import (
    Avg,
    CumulativeCount,
    CumulativeSum,
    Max,
    MetricConfig,
    Min,
    Rate,
    Value,
    WindowedCount,
    WindowedSum,
)

NAN = math.nan
COLUMNS = ("rate", "avg", "max", "min", "total", "count", "wcount", "value", "wsum", "fail-pct", "ok-pct")
# ("r", t, v): record v at t; ("f", t, v): record v into the frequencies; ("m", t, expected): measure at t
SCRIPT: list[tuple[str, int, object]] = [
    ("m", 0, (0.0, NAN, NAN, NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)),
    ("r", 0, 10),
    ("m", 0, (0.3333333333333333, 10.0, 10.0, 10.0, 10.0, 1.0, 1.0, 10.0, 10.0, 0.0, 0.0)),
    ("m", 1000, (0.3225806451612903, 10.0, 10.0, 10.0, 10.0, 1.0, 1.0, 10.0, 10.0, 0.0, 0.0)),
    ("r", 1000, 20),
    ("m", 1000, (0.967741935483871, 15.0, 20.0, 10.0, 30.0, 2.0, 2.0, 20.0, 30.0, 0.0, 0.0)),
    ("m", 15000, (0.6666666666666666, 15.0, 20.0, 10.0, 30.0, 2.0, 2.0, 20.0, 30.0, 0.0, 0.0)),
    ("r", 29999, 1),
    ("m", 29999, (0.5166752779212986, 10.333333333333334, 20.0, 1.0, 31.0, 3.0, 3.0, 1.0, 31.0, 0.0, 0.0)),
    ("r", 30000, 30),
    ("m", 30000, (2.033333333333333, 15.25, 30.0, 1.0, 61.0, 4.0, 4.0, 30.0, 61.0, 0.0, 0.0)),
    ("m", 45000, (1.3555555555555556, 15.25, 30.0, 1.0, 61.0, 4.0, 4.0, 30.0, 61.0, 0.0, 0.0)),
    ("r", 59000, 2),
    ("m", 59000, (1.0677966101694916, 12.6, 30.0, 1.0, 63.0, 5.0, 5.0, 2.0, 63.0, 0.0, 0.0)),
    ("m", 60000, (1.05, 12.6, 30.0, 1.0, 63.0, 5.0, 5.0, 2.0, 63.0, 0.0, 0.0)),
    ("m", 60001, (1.0499825002916618, 12.6, 30.0, 1.0, 63.0, 5.0, 5.0, 2.0, 63.0, 0.0, 0.0)),
    ("m", 89999, (0.5333422223703728, 16.0, 30.0, 2.0, 63.0, 5.0, 2.0, 2.0, 32.0, 0.0, 0.0)),
    ("m", 90000, (0.5333333333333333, 16.0, 30.0, 2.0, 63.0, 5.0, 2.0, 2.0, 32.0, 0.0, 0.0)),
    ("m", 120000, (0.0, NAN, NAN, NAN, 63.0, 5.0, 0.0, 2.0, 0.0, 0.0, 0.0)),
    ("f", 120000, 1),
    ("f", 120000, 1),
    ("f", 121000, 0),
    ("m", 121000, (0.0, NAN, NAN, NAN, 63.0, 5.0, 0.0, 2.0, 0.0, 0.3333333333333333, 0.6666666666666666)),
    ("m", 200000, (0.0, NAN, NAN, NAN, 63.0, 5.0, 0.0, 2.0, 0.0, 0.0, 0.0)),
    ("r", 200000, 3),
    ("m", 200000, (0.1, 3.0, 3.0, 3.0, 66.0, 6.0, 1.0, 3.0, 3.0, 0.0, 0.0)),
    ("m", 200010, (0.09996667777407531, 3.0, 3.0, 3.0, 66.0, 6.0, 1.0, 3.0, 3.0, 0.0, 0.0)),
]


class ManualClock:
    def __init__(self) -> None:
        self.ms = 0

    def __call__(self) -> float:
        return self.ms / 1000


def same(actual: float, expected: float) -> bool:
    return (math.isnan(actual) and math.isnan(expected)) or actual == expected


def test_a_sensor_with_every_stat_measures_what_java_measures() -> None:
    clock = ManualClock()
    hub = MetricsHub(MetricConfig(samples=2, window_ms=30_000), clock=clock)
    group = MetricGroup(hub.registry("kafka.connect"), "g")
    sensor = group.sensor("s")
    for name, stat in (
        ("rate", Rate()),
        ("avg", Avg()),
        ("max", Max()),
        ("min", Min()),
        ("total", CumulativeSum()),
        ("count", CumulativeCount()),
        ("wcount", WindowedCount()),
        ("value", Value()),
        ("wsum", WindowedSum()),
    ):
        group.add_stat(sensor, name, stat)
    frequencies = group.sensor("f")
    group.add_frequencies(frequencies, "fail-pct", "ok-pct")
    for step, at, arg in SCRIPT:
        clock.ms = at
        if step == "r":
            sensor.record(float(arg))  # type: ignore[arg-type]
        elif step == "f":
            frequencies.record(float(arg))  # type: ignore[arg-type]
        else:
            values = {r.name.name: r.value for r in hub.read()}
            actual = tuple(values[c] for c in COLUMNS)
            expected = arg
            assert all(same(a, e) for a, e in zip(actual, expected, strict=True)), (  # type: ignore[arg-type]
                at,
                dict(zip(COLUMNS, actual, strict=True)),
                dict(zip(COLUMNS, expected, strict=True)),  # type: ignore[call-overload]
            )


def test_rate_uses_at_least_the_full_windows_and_one_millisecond() -> None:
    config = MetricConfig(samples=3, window_ms=1000)
    rate = Rate()
    rate.record(config, 6.0, 0)
    assert rate.window_size_ms(config, 0) == 2000  # samples - 1 full windows before the first
    assert rate.measure(config, 0) == 3.0
    assert Rate().window_size_ms(MetricConfig(samples=1, window_ms=1000), 0) == 1


def test_metric_config_refuses_nonsense() -> None:
    with pytest.raises(ValueError):
        MetricConfig(samples=0)
    with pytest.raises(ValueError):
        MetricConfig(window_ms=0)


def _every_stat(sensor_owner: MetricGroup, sensor_name: str) -> dict[str, object]:
    sensor = sensor_owner.sensor(sensor_name)
    stats = {
        "rate": Rate(),
        "avg": Avg(),
        "max": Max(),
        "min": Min(),
        "total": CumulativeSum(),
        "count": CumulativeCount(),
        "wcount": WindowedCount(),
        "value": Value(),
        "wsum": WindowedSum(),
    }
    for name, stat in stats.items():
        sensor_owner.add_stat(sensor, f"{sensor_name}-{name}", stat)
    return stats


def test_a_sensor_folds_its_events_at_most_fold_ms_late_and_reads_see_them_all() -> None:
    from pyconnect.metrics.registry import fold_ms

    config = MetricConfig(samples=2, window_ms=30_000)
    assert fold_ms(config) == 1000 and fold_ms(MetricConfig(window_ms=60)) == 2
    assert fold_ms(MetricConfig(window_ms=10)) == 1
    clock = ManualClock()
    hub = MetricsHub(config, clock=clock)
    group = MetricGroup(hub.registry("kafka.connect"), "g")
    folded = _every_stat(group, "s")
    sensor = group.sensor("s")
    direct = {name: type(stat)() for name, stat in folded.items()}  # fed per event, as Java's sensor
    events = [(0, 5.0), (400, 1.0), (900, 9.0), (1000, 2.0), (1700, 4.0), (29_990, 7.0), (30_500, 3.0)]
    for at, value in events:
        clock.ms = at
        sensor.record(value)
        for stat in direct.values():
            stat.record(config, value, at)  # type: ignore[attr-defined]
        if at == 1000:  # the first three were folded when this one came (>= 1 s after the first)
            assert folded["total"].total == 15.0  # type: ignore[attr-defined]
    clock.ms = 31_000
    read = {r.name.name: r.value for r in hub.read()}
    # 29_990 and 30_500 fold together at 30_500: the 29_990 event counts in the next window, as allowed
    for name in ("total", "count", "value", "max", "min"):
        assert read[f"s-{name}"] == direct[name].measure(config, 31_000), name  # type: ignore[attr-defined]
    assert read["s-avg"] == direct["avg"].measure(config, 31_000)  # type: ignore[attr-defined]


def test_a_sensor_folds_before_a_clock_going_back_and_counts_trues() -> None:
    clock = ManualClock()
    hub = MetricsHub(MetricConfig(samples=2, window_ms=30_000), clock=clock)
    group = MetricGroup(hub.registry("kafka.connect"), "g")
    stats = _every_stat(group, "s")
    sensor = group.sensor("s")
    clock.ms = 5_000
    sensor.record(1.0)
    clock.ms = 4_000
    sensor.record(3.0)  # earlier than the pending event: the pending one is folded first
    assert stats["total"].total == 1.0  # type: ignore[attr-defined]
    frequencies = group.sensor("f")
    group.add_frequencies(frequencies, "fail", "ok")
    for value in (1.0, 1.0, 0.0):
        frequencies.record(value)
    read = {r.name.name: r.value for r in hub.read()}
    assert (read["ok"], read["fail"]) == (2 / 3, 1 / 3)
    assert read["s-total"] == 4.0 and read["s-count"] == 2.0


def test_record_batch_is_count_records_at_once() -> None:
    clock = ManualClock()
    hub = MetricsHub(MetricConfig(samples=2, window_ms=30_000), clock=clock)
    group = MetricGroup(hub.registry("kafka.connect"), "g")
    _every_stat(group, "one")
    _every_stat(group, "batch")
    one, batch = group.sensor("one"), group.sensor("batch")
    clock.ms = 2_000
    for value in (4.0, 8.0, 6.0):
        one.record(value)
    batch.record_batch(3, 18.0, 4.0, 8.0, 6.0, 2_000)
    clock.ms = 2_500
    one.record(1.0)
    batch.record_batch(1, 1.0, 1.0, 1.0, 1.0, 2_500)
    read = {r.name.name: r.value for r in hub.read()}
    for name in ("rate", "avg", "max", "min", "total", "count", "wcount", "value", "wsum"):
        assert read[f"one-{name}"] == read[f"batch-{name}"], name
