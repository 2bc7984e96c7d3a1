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
