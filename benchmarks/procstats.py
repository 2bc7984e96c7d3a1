"""CPU time and RSS of processes read from /proc by PID (Linux), the load average, and bounded samplers.

CPU is ``utime + stime`` of the process (children not included: every process measured here is one
JVM or one Python interpreter). RSS is ``VmRSS`` from ``/proc/<pid>/status``. A PID that has exited
reads as ``None``: callers never get a made-up zero. ``process_tree`` lists a process and its
descendants (from the parent PIDs in ``/proc/<pid>/stat``), for figures "of the worker's process tree".
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds the process has used so far, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    # fields[0] is the state (field 3 of stat); utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def tree_of(parents: Mapping[int, int], root: int) -> list[int]:
    """``root`` and every descendant of it, given each process's parent (``parents``: PID -> parent PID),
    root first, then breadth first in PID order; ``[root]`` even when ``root`` is not in ``parents``."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        if pid != parent:
            children.setdefault(parent, []).append(pid)
    tree, queue, seen = [], [root], {root}
    while queue:
        current = queue.pop(0)
        tree.append(current)
        for child in sorted(children.get(current, [])):
            if child not in seen:
                seen.add(child)
                queue.append(child)
    return tree


def parent_pids() -> dict[int, int]:
    """PID -> parent PID of every process readable in ``/proc`` (those that exit meanwhile are left out)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # fields after the command name: state, then the parent PID
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def process_tree(root: int | None) -> list[int]:
    """``root`` and its descendants now (``[]`` for no root or a root that has exited)."""
    if root is None or not Path(f"/proc/{root}").exists():
        return []
    return tree_of(parent_pids(), root)


def total_cpu_seconds(pids: Iterable[int]) -> float | None:
    values = [cpu_seconds(p) for p in pids]
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None)


@dataclass
class RssSampler:
    """Samples the RSS of ``pids()`` every ``interval`` seconds on a daemon thread; keeps the peak per PID.

    ``pids`` is called at each sample so workers that start later are included. The thread stops on
    ``stop()`` or after ``max_seconds``, whichever comes first.
    """

    pids: Callable[[], Iterable[int]]
    interval: float = 0.5
    max_seconds: float = 3600.0
    peak: dict[int, float] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)

    def start(self) -> RssSampler:
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        deadline = time.monotonic() + self.max_seconds
        while not self._stop.is_set() and time.monotonic() < deadline:
            self.sample()
            self._stop.wait(self.interval)

    def sample(self) -> None:
        for pid in list(self.pids()):
            value = rss_mb(pid)
            if value is not None and value > self.peak.get(pid, 0.0):
                self.peak[pid] = value

    def stop(self) -> dict[int, float]:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        self.sample()
        return dict(self.peak)


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages of the machine, or None where the OS has none."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        return None


@dataclass
class LoadSampler:
    """Samples the 1-minute load average every ``interval`` seconds on a daemon thread (bounded).

    ``summary()`` gives min/mean/max and the samples as ``[seconds since start, load]``: the load of
    the whole machine, this benchmark's own brokers and workers included.
    """

    interval: float = 10.0
    max_seconds: float = 6 * 3600.0
    samples: list[tuple[float, float]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)

    def start(self) -> LoadSampler:
        self._thread = threading.Thread(target=self._run, name="load-sampler", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        started = time.monotonic()
        while not self._stop.is_set() and time.monotonic() - started < self.max_seconds:
            load = load_average()
            if load is not None:
                self.samples.append((round(time.monotonic() - started, 1), load[0]))
            self._stop.wait(self.interval)

    def stop(self) -> dict[str, object] | None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        if not self.samples:
            return None
        loads = [load for _, load in self.samples]
        return {
            "interval_s": self.interval,
            "min": min(loads),
            "mean": round(sum(loads) / len(loads), 2),
            "max": max(loads),
            "samples": [list(s) for s in self.samples],
        }
