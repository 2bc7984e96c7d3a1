"""Kafka's metric statistics (``org.apache.kafka.common.metrics.stats``), with the same numbers.

Every stat is fed ``record(config, value, now_ms)`` and read with ``measure(config, now_ms)``; time is
whole milliseconds passed in by the caller (the registry's clock), never read here.

Windowed stats (:class:`WindowedSum`, :class:`WindowedCount`, :class:`Avg`, :class:`Max`, :class:`Min`,
:class:`BooleanFrequencies`) keep ``config.samples + 1`` samples of ``config.window_ms`` each, as
Java's ``SampledStat``: a record lands in the current sample, or starts the next one when the current
sample is ``window_ms`` old; a sample whose last event is ``samples * window_ms`` old or older is reset
when measured. With no event in the retained samples ``Avg``/``Max``/``Min`` measure ``NaN``.

:class:`Rate` divides a windowed sum by the elapsed window in seconds as Java computes it: the time
since the oldest retained sample started, but at least ``samples - 1`` full windows (so a rate does not
spike in the first seconds) and at least 1 ms.

``BooleanFrequencies`` is ``Frequencies.forBooleanValues``: the windowed fraction (0..1, even where
Java names the metric a percentage) of events recorded as 1.0 and as 0.0; 0.0 with no events.

Cumulative stats (:class:`CumulativeSum`, :class:`CumulativeCount`) and :class:`Value` (the last value
recorded, 0.0 before any) ignore time. Stats are not thread-safe: one event loop records and reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, Protocol

DEFAULT_SAMPLES = 2
DEFAULT_WINDOW_MS = 30_000


@dataclass(frozen=True, slots=True)
class MetricConfig:
    """``metrics.num.samples`` and ``metrics.sample.window.ms`` (Java's ``MetricConfig``)."""

    samples: int = DEFAULT_SAMPLES
    window_ms: int = DEFAULT_WINDOW_MS

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ValueError("metrics.num.samples must be at least 1")
        if self.window_ms < 1:
            raise ValueError("metrics.sample.window.ms must be at least 1")


class EventSummary(NamedTuple):
    """Events recorded together (at one instant, ``record_summary``): how many (``number``), their sum, extremes and
    last value, and how many were 0.5 or more (a :class:`BooleanFrequencies` true)."""

    number: int
    total: float
    low: float
    high: float
    last: float
    trues: int


class Stat(Protocol):
    def record(self, config: MetricConfig, value: float, now_ms: int) -> None: ...

    def record_summary(self, config: MetricConfig, events: EventSummary, now_ms: int) -> None:
        """The summarised events at ``now_ms``: the state recording each of them at ``now_ms`` gives."""
        ...

    def measure(self, config: MetricConfig, now_ms: int) -> float: ...


class CumulativeSum:
    """The sum of every value recorded."""

    __slots__ = ("total",)

    def __init__(self, initial: float = 0.0) -> None:
        self.total = initial

    def record(self, config: MetricConfig, value: float, now_ms: int) -> None:
        self.total += value

    def record_summary(self, config: MetricConfig, events: EventSummary, now_ms: int) -> None:
        self.total += events.total

    def measure(self, config: MetricConfig, now_ms: int) -> float:
        return self.total


class CumulativeCount(CumulativeSum):
    """The number of records (the value is ignored)."""

    __slots__ = ()

    def record(self, config: MetricConfig, value: float, now_ms: int) -> None:
        self.total += 1.0

    def record_summary(self, config: MetricConfig, events: EventSummary, now_ms: int) -> None:
        self.total += events.number


class Value:
    """The last value recorded."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def record(self, config: MetricConfig, value: float, now_ms: int) -> None:
        self.value = value

    def record_summary(self, config: MetricConfig, events: EventSummary, now_ms: int) -> None:
        self.value = events.last

    def measure(self, config: MetricConfig, now_ms: int) -> float:
        return self.value


class _Sample:
    __slots__ = ("count", "initial", "last_ms", "start_ms", "value")

    def __init__(self, initial: float, now_ms: int) -> None:
        self.initial = initial
        self.value = initial
        self.count = 0
        self.start_ms = now_ms
        self.last_ms = now_ms

    def reset(self, now_ms: int) -> None:
        self.value = self.initial
        self.count = 0
        self.start_ms = now_ms
        self.last_ms = now_ms


class SampledStat:
    """Java's ``SampledStat``: the sample bookkeeping shared by every windowed stat."""

    __slots__ = ("_current", "_initial", "samples")

    def __init__(self, initial: float) -> None:
        self._initial = initial
        self._current = 0
        self.samples: list[_Sample] = []

    def _new_sample(self, now_ms: int) -> _Sample:
        return _Sample(self._initial, now_ms)

    def current(self, now_ms: int) -> _Sample:
        if not self.samples:
            self.samples.append(self._new_sample(now_ms))
        return self.samples[self._current]

    def oldest(self, now_ms: int) -> _Sample:
        if not self.samples:
            self.samples.append(self._new_sample(now_ms))
        return min(self.samples, key=lambda s: s.start_ms)

    def record(self, config: MetricConfig, value: float, now_ms: int) -> None:
        sample = self.current(now_ms)
        if now_ms - sample.start_ms >= config.window_ms:
            sample = self._advance(config, now_ms)
        self._update(sample, value)
        sample.count += 1
        sample.last_ms = now_ms

    def record_many(self, config: MetricConfig, value: float, count: int, now_ms: int) -> None:
        """``count`` events at ``now_ms`` at once, ``value`` being their combined update (their sum for
        sums and averages, their extreme for :class:`Max`/:class:`Min`): the same state as recording
        them one by one at ``now_ms``. Not for :class:`WindowedCount`, which counts calls."""
        sample = self.current(now_ms)
        if now_ms - sample.start_ms >= config.window_ms:
            sample = self._advance(config, now_ms)
        self._update(sample, value)
        sample.count += count
        sample.last_ms = now_ms

    def record_summary(self, config: MetricConfig, events: EventSummary, now_ms: int) -> None:
        self.record_many(config, self._summary_value(events), events.number, now_ms)

    def _summary_value(self, events: EventSummary) -> float:
        """The combined update of :meth:`record_many` for these events."""
        raise NotImplementedError

    def _advance(self, config: MetricConfig, now_ms: int) -> _Sample:
        self._current = (self._current + 1) % (config.samples + 1)
        if self._current >= len(self.samples):
            sample = self._new_sample(now_ms)
            self.samples.append(sample)
            return sample
        sample = self.samples[self._current]
        sample.reset(now_ms)
        return sample

    def purge_obsolete(self, config: MetricConfig, now_ms: int) -> None:
        expire_age = config.samples * config.window_ms
        for sample in self.samples:
            if now_ms - sample.last_ms >= expire_age:
                sample.reset(now_ms)

    def measure(self, config: MetricConfig, now_ms: int) -> float:
        self.purge_obsolete(config, now_ms)
        return self._combine()

    def _update(self, sample: _Sample, value: float) -> None:
        raise NotImplementedError

    def _combine(self) -> float:
        raise NotImplementedError


class WindowedSum(SampledStat):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(0.0)

    def _update(self, sample: _Sample, value: float) -> None:
        sample.value += value

    def _summary_value(self, events: EventSummary) -> float:
        return events.total

    def _combine(self) -> float:
        return sum(s.value for s in self.samples)


class WindowedCount(WindowedSum):
    __slots__ = ()

    def _update(self, sample: _Sample, value: float) -> None:
        sample.value += 1.0

    def record_summary(self, config: MetricConfig, events: EventSummary, now_ms: int) -> None:
        sample = self.current(now_ms)
        if now_ms - sample.start_ms >= config.window_ms:
            sample = self._advance(config, now_ms)
        sample.value += events.number
        sample.count += events.number
        sample.last_ms = now_ms


class Avg(WindowedSum):
    """The windowed sum divided by the number of recordings (NaN without any, as Java)."""

    __slots__ = ()

    def _combine(self) -> float:
        count = sum(s.count for s in self.samples)
        return sum(s.value for s in self.samples) / count if count else math.nan


class Max(SampledStat):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(-math.inf)

    def _update(self, sample: _Sample, value: float) -> None:
        if value > sample.value:
            sample.value = value

    def _summary_value(self, events: EventSummary) -> float:
        return events.high

    def _combine(self) -> float:
        if not any(s.count for s in self.samples):
            return math.nan
        return max(s.value for s in self.samples)


class Min(SampledStat):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(1.7976931348623157e308)  # Java's Double.MAX_VALUE

    def _update(self, sample: _Sample, value: float) -> None:
        if value < sample.value:
            sample.value = value

    def _summary_value(self, events: EventSummary) -> float:
        return events.low

    def _combine(self) -> float:
        if not any(s.count for s in self.samples):
            return math.nan
        return min(s.value for s in self.samples)


class Rate:
    """Per-second rate of a windowed stat (a :class:`WindowedSum` unless given)."""

    __slots__ = ("stat",)

    def __init__(self, stat: SampledStat | None = None) -> None:
        self.stat = stat if stat is not None else WindowedSum()

    def record(self, config: MetricConfig, value: float, now_ms: int) -> None:
        self.stat.record(config, value, now_ms)

    def record_summary(self, config: MetricConfig, events: EventSummary, now_ms: int) -> None:
        self.stat.record_summary(config, events, now_ms)

    def measure(self, config: MetricConfig, now_ms: int) -> float:
        value = self.stat.measure(config, now_ms)
        return value / (self.window_size_ms(config, now_ms) / 1000.0)

    def window_size_ms(self, config: MetricConfig, now_ms: int) -> int:
        self.stat.purge_obsolete(config, now_ms)
        elapsed = now_ms - self.stat.oldest(now_ms).start_ms
        full_windows = elapsed // config.window_ms
        min_full_windows = config.samples - 1
        if full_windows < min_full_windows:
            elapsed += (min_full_windows - full_windows) * config.window_ms
        return max(elapsed, 1)


class _BooleanSample(_Sample):
    __slots__ = ("trues",)

    def __init__(self, initial: float, now_ms: int) -> None:
        super().__init__(initial, now_ms)
        self.trues = 0

    def reset(self, now_ms: int) -> None:
        super().reset(now_ms)
        self.trues = 0


class BooleanFrequencies(SampledStat):
    """``Frequencies.forBooleanValues``: a value >= 0.5 counts as true, below as false (Java's
    two-bucket histogram over [0, 1])."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(0.0)

    def _new_sample(self, now_ms: int) -> _Sample:
        return _BooleanSample(0.0, now_ms)

    def _update(self, sample: _Sample, value: float) -> None:
        if value >= 0.5:
            sample.trues += 1  # type: ignore[attr-defined]

    def record_summary(self, config: MetricConfig, events: EventSummary, now_ms: int) -> None:
        sample = self.current(now_ms)
        if now_ms - sample.start_ms >= config.window_ms:
            sample = self._advance(config, now_ms)
        sample.trues += events.trues  # type: ignore[attr-defined]
        sample.count += events.number
        sample.last_ms = now_ms

    def _combine(self) -> float:
        return float(sum(s.count for s in self.samples))

    def frequency(self, config: MetricConfig, now_ms: int, outcome: bool) -> float:
        self.purge_obsolete(config, now_ms)
        total = sum(s.count for s in self.samples)
        if total == 0:
            return 0.0
        trues = sum(s.trues for s in self.samples)  # type: ignore[attr-defined]
        return (trues if outcome else total - trues) / total
