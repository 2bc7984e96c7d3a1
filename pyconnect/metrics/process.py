"""Process and event-loop metrics under the Prometheus client libraries' names.

:func:`process_samples` reads, at each scrape, what the official clients' process collector exports
(Linux ``/proc``; a series whose source is missing is left out): ``process_cpu_seconds_total``
(user + system CPU), ``process_resident_memory_bytes``, ``process_virtual_memory_bytes``,
``process_start_time_seconds`` (since the Unix epoch), ``process_open_fds``, ``process_max_fds``, and
``python_info`` as the Python client labels it.

:func:`event_loop_samples` says which event loop runs the process (see pyconnect.event_loop):
``python_eventloop_info{implementation="uvloop"|"asyncio", version=...} 1``.

:class:`EventLoopLag` measures how late the event loop runs a callback scheduled ``interval_s`` ahead
(the Node.js client's ``nodejs_eventloop_lag_seconds``, here ``python_eventloop_lag_seconds``: the
last lag measured) and keeps the largest lag since the previous scrape
(``python_eventloop_lag_max_seconds``). ``start``/``stop`` are idempotent; the sampling task belongs to
the object and ``stop`` cancels and awaits it.

:func:`plugin_call_samples` (beyond Java) reports the worker's plugin threads
(pyconnect.worker.plugin_calls): ``pyconnect_plugin_threads`` (live), ``pyconnect_plugin_threads_abandoned``
(still running a call whose caller gave up: a plugin method that blocked past its bound) and
``pyconnect_plugin_calls_abandoned_total``.
"""

from __future__ import annotations

import asyncio
import os
import platform
import resource
from collections.abc import Callable
from typing import Protocol

from pyconnect.event_loop import loop_name, loop_version
from pyconnect.metrics.prometheus import COUNTER, GAUGE, Sample

_PROC = "/proc/self"


def _ticks() -> float:
    try:
        return float(os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError, AttributeError):
        return 100.0


def _boot_time() -> float | None:
    try:
        with open("/proc/stat") as stat:
            for line in stat:
                if line.startswith("btime "):
                    return float(line.split()[1])
    except OSError:
        return None
    return None


class PluginThreads(Protocol):
    """What :func:`plugin_call_samples` reads (a ``PluginCalls``)."""

    @property
    def threads(self) -> int: ...

    @property
    def abandoned(self) -> int: ...

    abandoned_total: int


def plugin_call_samples(calls: PluginThreads) -> list[Sample]:
    """The plugin-thread series of one worker; see the module docstring."""
    return [
        Sample("pyconnect_plugin_threads", (), float(calls.threads), GAUGE, "Live plugin threads."),
        Sample(
            "pyconnect_plugin_threads_abandoned",
            (),
            float(calls.abandoned),
            GAUGE,
            "Plugin threads still running a call abandoned past its bound.",
        ),
        Sample(
            "pyconnect_plugin_calls_abandoned_total",
            (),
            float(calls.abandoned_total),
            COUNTER,
            "Plugin calls abandoned past their bound or at shutdown.",
        ),
    ]


def process_samples(proc: str = _PROC) -> list[Sample]:
    """The process collector's series for this process (``proc`` is a ``/proc/<pid>`` directory)."""
    samples: list[Sample] = []
    times = os.times()
    samples.append(
        Sample(
            "process_cpu_seconds_total",
            (),
            times.user + times.system,
            COUNTER,
            "Total user and system CPU time spent in seconds.",
        )
    )
    page = resource.getpagesize()
    try:
        with open(f"{proc}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # fields[0] is field 3 (state) of proc(5): vsize is field 23, rss 24, starttime 22
        samples.append(
            Sample(
                "process_virtual_memory_bytes", (), float(fields[20]), GAUGE, "Virtual memory size in bytes."
            )
        )
        samples.append(
            Sample(
                "process_resident_memory_bytes",
                (),
                float(int(fields[21]) * page),
                GAUGE,
                "Resident memory size in bytes.",
            )
        )
        boot = _boot_time()
        if boot is not None:
            samples.append(
                Sample(
                    "process_start_time_seconds",
                    (),
                    boot + int(fields[19]) / _ticks(),
                    GAUGE,
                    "Start time of the process since unix epoch in seconds.",
                )
            )
    except (OSError, IndexError, ValueError):
        pass
    try:
        samples.append(
            Sample(
                "process_open_fds",
                (),
                float(len(os.listdir(f"{proc}/fd"))),
                GAUGE,
                "Number of open file descriptors.",
            )
        )
    except OSError:
        pass
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY:
        samples.append(
            Sample("process_max_fds", (), float(soft), GAUGE, "Maximum number of open file descriptors.")
        )
    major, minor, patch = platform.python_version_tuple()
    samples.append(
        Sample(
            "python_info",
            (
                ("implementation", platform.python_implementation()),
                ("major", major),
                ("minor", minor),
                ("patchlevel", patch),
                ("version", platform.python_version()),
            ),
            1.0,
            GAUGE,
            "Python platform information",
        )
    )
    return samples


def event_loop_samples() -> list[Sample]:
    """``python_eventloop_info`` for the loop running the caller; no sample outside a running loop."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return []
    name = loop_name(loop)
    return [
        Sample(
            "python_eventloop_info",
            (("implementation", name), ("version", loop_version(name))),
            1.0,
            GAUGE,
            "The event loop this process runs on (uvloop or asyncio) and its version.",
        )
    ]


class EventLoopLag:
    """Event-loop lag sampler (see the module docstring); ``clock`` is the loop's monotonic time."""

    def __init__(self, interval_s: float = 0.5, clock: Callable[[], float] | None = None) -> None:
        self.interval_s = interval_s
        self._clock = clock
        self.last_s = 0.0
        self.max_s = 0.0
        self._task: asyncio.Task[None] | None = None

    def observe(self, lag_s: float) -> None:
        lag = max(0.0, lag_s)
        self.last_s = lag
        self.max_s = max(self.max_s, lag)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="event-loop-lag")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.wait([task])

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        clock = self._clock or loop.time
        while True:
            expected = clock() + self.interval_s
            await asyncio.sleep(self.interval_s)
            self.observe(clock() - expected)

    def samples(self) -> list[Sample]:
        """The two lag gauges; reading them starts a new period for the maximum."""
        peak, self.max_s = self.max_s, self.last_s
        return [
            Sample(
                "python_eventloop_lag_seconds",
                (),
                self.last_s,
                GAUGE,
                "Lag of the asyncio event loop in seconds (the last measurement).",
            ),
            Sample(
                "python_eventloop_lag_max_seconds",
                (),
                peak,
                GAUGE,
                "Largest lag of the asyncio event loop in seconds since the previous scrape.",
            ),
        ]
