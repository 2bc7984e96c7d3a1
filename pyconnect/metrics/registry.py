"""A metric registry with Kafka's model: named metrics in groups with ordered tags, fed by sensors.

- :class:`MetricName` is Java's: a name, a group (the JMX ``type``) and tags in their declared order
  (the order is part of the JMX name, so of the Prometheus labels derived from it).
- :class:`Metrics` is one registry (Java's ``Metrics`` with its JMX prefix as ``domain``, e.g.
  ``kafka.connect``, ``kafka.connect.mirror``, ``kafka.consumer``). Metrics are either measured from
  :mod:`pyconnect.metrics.stats` fed by a :class:`Sensor`, or gauges: a function of the time (ms)
  returning a number, a string or ``None`` (not reported), as Java's ``Gauge``.
- :class:`MetricGroup` is Connect's ``ConnectMetrics.MetricGroup``: one group name and tag values;
  ``close()`` removes every metric and sensor made through it (a stopped connector's or task's metrics
  disappear, as in Java).
- :class:`MetricsHub` is what a JMX MBean server is to Java: the registries of one worker process, read
  together by an exposition (pyconnect.metrics.prometheus). ``context`` holds the metrics context labels
  Java gives its reporters (``connect.kafka.cluster.id``, ``connect.group.id``); they name the cluster a
  registry reports on and are not part of the JMX names. ``recording`` (default True) says whether the
  data path records at all: the recording sites (task, client and mirror metrics) check it once per
  call, or once per task start, and record nothing when it is False (``pyconnect.metrics.recording.enabled
  =false``); gauges read at scrape time are unaffected.

Time comes from the hub's clock (seconds, as ``time.time``), read once per ``record`` and per scrape.
Everything runs on one event loop: no locks.

A :class:`Sensor` does not update its stats on every ``record``: it sums the events (count, sum,
extremes, last, trues) and hands the summary to each stat (``record_summary``) at the time of the last
event, once the first unfolded event is ``fold_ms(config)`` old (1 s for the default 30 s windows) and
before any reading of its registry. So recording costs a few additions per call, whatever the number
of stats, and what a reading shows is what Java's per-event recording shows, except that an event may
count in the window of a later event at most ``fold_ms`` after it (a 30th of a window).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from pyconnect.conditions import ConditionRegistry
from pyconnect.metrics.stats import (
    BooleanFrequencies,
    CumulativeSum,
    EventSummary,
    MetricConfig,
    Rate,
    Stat,
)

MetricValue = float | str | None
Gauge = Callable[[int], MetricValue]
Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class MetricName:
    name: str
    group: str
    tags: tuple[tuple[str, str], ...] = ()
    description: str = field(default="", compare=False)

    def tag(self, key: str) -> str | None:
        return next((v for k, v in self.tags if k == key), None)


class _Measurable(Protocol):
    def __call__(self, config: MetricConfig, now_ms: int) -> MetricValue: ...


@dataclass(frozen=True, slots=True)
class MetricReading:
    """One metric's value at a scrape, with the registry's JMX domain."""

    domain: str
    name: MetricName
    value: MetricValue


MAX_FOLD_MS = 1000


def fold_ms(config: MetricConfig) -> int:
    """How long a sensor keeps events before it folds them into its stats: a 30th of a sample window,
    at most :data:`MAX_FOLD_MS`, at least 1 ms."""
    return max(1, min(MAX_FOLD_MS, config.window_ms // 30))


class Sensor:
    """Records values into its stats (Java's ``Sensor``); ``record`` and ``record_batch`` are the
    data-path calls, :meth:`flush` hands what they summed to the stats (see the module docstring)."""

    __slots__ = (
        "_clock_ms",
        "_config",
        "_count",
        "_first_ms",
        "_fold_ms",
        "_high",
        "_last",
        "_last_ms",
        "_low",
        "_stats",
        "_total",
        "_trues",
        "name",
    )

    def __init__(self, name: str, config: MetricConfig, clock_ms: Callable[[], int]) -> None:
        self.name = name
        self._config = config
        self._fold_ms = fold_ms(config)
        self._clock_ms = clock_ms
        self._stats: list[Stat] = []
        self._count = self._trues = 0
        self._total = self._low = self._high = self._last = 0.0
        self._first_ms = self._last_ms = 0

    def record(self, value: float = 1.0, now_ms: int | None = None) -> None:
        now = self._clock_ms() if now_ms is None else now_ms
        if self._count:
            if now - self._first_ms < self._fold_ms and now >= self._last_ms:
                self._count += 1
                self._total += value
                if value < self._low:
                    self._low = value
                elif value > self._high:
                    self._high = value
                if value >= 0.5:
                    self._trues += 1
                self._last = value
                self._last_ms = now
                return
            self.flush()
        self._count, self._total, self._low, self._high, self._last = 1, value, value, value, value
        self._trues = 1 if value >= 0.5 else 0
        self._first_ms = self._last_ms = now

    def record_batch(
        self, count: int, total: float, low: float, high: float, last: float, now_ms: int
    ) -> None:
        """``count`` (> 0) events at ``now_ms`` with this sum, these extremes and this last value, as
        ``count`` calls of :meth:`record` would (``trues`` is not tracked: not for frequencies)."""
        if self._count:
            if now_ms - self._first_ms < self._fold_ms and now_ms >= self._last_ms:
                self._count += count
                self._total += total
                if low < self._low:
                    self._low = low
                if high > self._high:
                    self._high = high
                self._last = last
                self._last_ms = now_ms
                return
            self.flush()
        self._count, self._total, self._low, self._high, self._last = count, total, low, high, last
        self._trues = 0
        self._first_ms = self._last_ms = now_ms

    def flush(self) -> None:
        """Hand the events summed since the last flush to every stat, at the last event's time."""
        if not self._count:
            return
        events = EventSummary(self._count, self._total, self._low, self._high, self._last, self._trues)
        self._count = 0
        config, now = self._config, self._last_ms
        for stat in self._stats:
            stat.record_summary(config, events, now)

    def _add(self, stat: Stat) -> None:
        if not any(existing is stat for existing in self._stats):
            self.flush()
            self._stats.append(stat)


class Metrics:
    """One registry (see the module docstring). Create through :meth:`MetricsHub.registry`."""

    def __init__(self, domain: str, config: MetricConfig, clock_ms: Callable[[], int]) -> None:
        self.domain = domain
        self.config = config
        self._clock_ms = clock_ms
        self._metrics: dict[MetricName, _Measurable] = {}
        self._sensors: dict[str, Sensor] = {}
        self._sensor_metrics: dict[str, list[MetricName]] = {}

    def now_ms(self) -> int:
        return self._clock_ms()

    # -- sensors ---------------------------------------------------------------------------------

    def sensor(self, name: str) -> Sensor:
        """The sensor called ``name``, created on first use."""
        sensor = self._sensors.get(name)
        if sensor is None:
            sensor = self._sensors[name] = Sensor(name, self.config, self._clock_ms)
            self._sensor_metrics[name] = []
        return sensor

    def add_stat(self, sensor: Sensor, name: MetricName, stat: Stat) -> None:
        """Report ``stat`` (fed by ``sensor``) as ``name``; a name already registered is kept."""
        if name in self._metrics:
            return
        sensor._add(stat)
        self._metrics[name] = stat.measure
        self._sensor_metrics[sensor.name].append(name)

    def add_frequencies(
        self, sensor: Sensor, false_name: MetricName, true_name: MetricName, stat: BooleanFrequencies
    ) -> None:
        """``Frequencies.forBooleanValues(false_name, true_name)`` on ``sensor``."""
        sensor._add(stat)
        for name, outcome in ((false_name, False), (true_name, True)):
            if name not in self._metrics:
                self._metrics[name] = _frequency(stat, outcome)
                self._sensor_metrics[sensor.name].append(name)

    def remove_sensor(self, name: str) -> None:
        self._sensors.pop(name, None)
        for metric in self._sensor_metrics.pop(name, []):
            self._metrics.pop(metric, None)

    # -- gauges ----------------------------------------------------------------------------------

    def add_gauge(self, name: MetricName, gauge: Gauge) -> None:
        """Report ``gauge(now_ms)`` as ``name`` (Java's ``addMetricIfAbsent``: a name already
        registered is kept)."""
        if name not in self._metrics:
            self._metrics[name] = _gauge(gauge)

    def remove_metric(self, name: MetricName) -> None:
        self._metrics.pop(name, None)

    # -- reading ---------------------------------------------------------------------------------

    def names(self) -> list[MetricName]:
        return list(self._metrics)

    def flush(self) -> None:
        """Fold what every sensor summed into its stats (done before each reading)."""
        for sensor in list(self._sensors.values()):
            sensor.flush()

    def value(self, name: MetricName) -> MetricValue:
        self.flush()
        return self._metrics[name](self.config, self._clock_ms())

    def read(self, now_ms: int | None = None) -> Iterator[MetricReading]:
        """Every metric's current value (a gauge that raises is left out of this reading)."""
        now = self._clock_ms() if now_ms is None else now_ms
        self.flush()
        config, domain = self.config, self.domain
        for name, measure in list(self._metrics.items()):
            try:
                value = measure(config, now)
            except Exception:
                continue
            yield MetricReading(domain, name, value)


def _frequency(stat: BooleanFrequencies, outcome: bool) -> _Measurable:
    def measure(config: MetricConfig, now_ms: int) -> float:
        return stat.frequency(config, now_ms, outcome)

    return measure


def _gauge(gauge: Gauge) -> _Measurable:
    def measure(config: MetricConfig, now_ms: int) -> MetricValue:
        return gauge(now_ms)

    return measure


class Meter:
    """Java's ``Meter``: a per-second rate and a cumulative total of the same recorded amounts, two
    metrics (``names``: rate, total; ``descriptions`` likewise) of one sensor in ``metrics``."""

    __slots__ = ("rate", "sensor", "total")

    def __init__(
        self,
        metrics: Metrics,
        group: str,
        names: tuple[str, str],
        tags: tuple[tuple[str, str], ...],
        descriptions: tuple[str, str],
    ) -> None:
        self.rate, self.total = Rate(), CumulativeSum()
        sensor = self.sensor = metrics.sensor(f"{group}{dict(tags)};{names[1]}")
        metrics.add_stat(sensor, MetricName(names[0], group, tags, descriptions[0]), self.rate)
        metrics.add_stat(sensor, MetricName(names[1], group, tags, descriptions[1]), self.total)

    def record(self, metrics: Metrics, now_ms: int, amount: float) -> None:
        self.sensor.record(amount, now_ms)


class MetricGroup:
    """Connect's metric group: metrics named in ``group`` with ``tags``, removed together by ``close``."""

    def __init__(self, metrics: Metrics, group: str, tags: Iterable[tuple[str, str]] = ()) -> None:
        self.metrics = metrics
        self.group = group
        self.tags = tuple(tags)
        self._sensor_prefix = f"connect-sensor-group: {group}{dict(self.tags)};"
        self._sensors: list[str] = []
        self._names: list[MetricName] = []

    def metric_name(self, name: str, description: str = "") -> MetricName:
        return MetricName(name, self.group, self.tags, description)

    def sensor(self, name: str) -> Sensor:
        full = self._sensor_prefix + name
        if full not in self._sensors:
            self._sensors.append(full)
        return self.metrics.sensor(full)

    def add_stat(self, sensor: Sensor, name: str, stat: Stat, description: str = "") -> None:
        self.metrics.add_stat(sensor, self.metric_name(name, description), stat)

    def add_frequencies(self, sensor: Sensor, false_name: str, true_name: str) -> None:
        self.metrics.add_frequencies(
            sensor, self.metric_name(false_name), self.metric_name(true_name), BooleanFrequencies()
        )

    def add_value_metric(self, name: str, supplier: Gauge, description: str = "") -> None:
        metric = self.metric_name(name, description)
        self._names.append(metric)
        self.metrics.add_gauge(metric, supplier)

    def add_immutable_value_metric(self, name: str, value: MetricValue, description: str = "") -> None:
        self.add_value_metric(name, lambda now_ms: value, description)

    def close(self) -> None:
        """Remove every metric and sensor of this group (idempotent)."""
        for sensor in self._sensors:
            self.metrics.remove_sensor(sensor)
        for metric in self._names:
            self.metrics.remove_metric(metric)
        self._sensors.clear()
        self._names.clear()


class MetricsHub:
    """The registries of one worker process (see the module docstring)."""

    def __init__(
        self,
        config: MetricConfig | None = None,
        *,
        clock: Clock = time.time,
        context: Mapping[str, str] | None = None,
        recording: bool = True,
    ) -> None:
        self.config = config or MetricConfig()
        self.recording = recording
        self.clock = clock
        self.context: dict[str, str] = dict(context or {})
        self._registries: list[Metrics] = []
        self.conditions = ConditionRegistry(self.now_ms)
        """The conditions of the tasks this hub's worker runs (pyconnect.conditions): read with the
        mirror task metrics by ``GET /mirrors/progress``."""

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    def registry(self, domain: str, config: MetricConfig | None = None) -> Metrics:
        """A new registry reporting under ``domain``, read with the others until :meth:`remove`."""
        metrics = Metrics(domain, config or self.config, self.now_ms)
        self._registries.append(metrics)
        return metrics

    def remove(self, metrics: Metrics) -> None:
        self._registries = [m for m in self._registries if m is not metrics]

    def registries(self) -> list[Metrics]:
        return list(self._registries)

    def read(self) -> list[MetricReading]:
        """Every metric of every registry, read at one instant."""
        now = self.now_ms()
        return [reading for metrics in list(self._registries) for reading in metrics.read(now)]
