"""Watching the fleet throughout a chaos run: REST latency and task states, with the lag, once a second.

:class:`Observer` runs on its own thread. Each tick it calls ``GET /connectors?expand=status`` on the
next available worker (round robin over those the fault injector has not killed or frozen), times it,
and records a :class:`~pyconnect.testing.chaos.verdict.Sample` (lag from the workload, whether every
expected connector and each of its tasks is RUNNING). A call counts toward the REST promise only when
its worker stayed available and untouched by a fault from before the call to after it: a worker frozen
mid-call is the fault, not the API failing. Each tick also reads every live worker process's resident
memory (``VmRSS``); ``peak_rss_kb`` keeps each worker's peak over the run, restarts included. Bounded:
at most ``max_samples`` ticks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from pyconnect.testing.chaos.faults import WorkerStates
from pyconnect.testing.chaos.verdict import Sample
from pyconnect.testing.connect_worker import ConnectWorkerProcess

REST_TIMEOUT_S = 10.0


def rss_kb(pid: int) -> int | None:
    """The resident set of process ``pid`` in KiB (``None`` when it is gone or unreadable)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def all_running(body: Any, connectors: Sequence[str]) -> bool:
    """Every connector of ``connectors`` is in ``body`` (a ``?expand=status`` answer), RUNNING, with at
    least one task and every task RUNNING."""
    if not isinstance(body, dict):
        return False
    for name in connectors:
        status = body.get(name, {}).get("status", {})
        tasks = status.get("tasks", [])
        if status.get("connector", {}).get("state") != "RUNNING" or not tasks:
            return False
        if any(t.get("state") != "RUNNING" for t in tasks):
            return False
    return True


class Observer:
    def __init__(
        self,
        workers: Sequence[ConnectWorkerProcess],
        states: WorkerStates,
        connectors: Sequence[str],
        lag: Callable[[], int],
        *,
        interval_s: float = 1.0,
        max_samples: int = 20_000,
    ) -> None:
        self.workers = workers
        self.states = states
        self.connectors = list(connectors)
        self.lag = lag
        self.interval_s = interval_s
        self.max_samples = max_samples
        self.samples: list[Sample] = []
        self.latencies_ms: list[float] = []
        self.failures: list[str] = []
        self.peak_rss_kb: list[int] = [0] * len(workers)
        self.t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._next = 0

    def start(self, t0: float) -> None:
        self.t0 = t0
        self._thread = threading.Thread(target=self._main, name="chaos-observer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=REST_TIMEOUT_S + 10)

    def latest(self) -> Sample | None:
        return self.samples[-1] if self.samples else None

    def _main(self) -> None:
        for _ in range(self.max_samples):
            if self._stop.is_set():
                return
            tick = time.monotonic()
            self.tick()
            self._stop.wait(max(0.0, self.interval_s - (time.monotonic() - tick)))

    def tick(self) -> None:
        for i, worker in enumerate(self.workers):
            pid = worker.pid
            rss = rss_kb(pid) if pid else None
            if rss is not None and rss > self.peak_rss_kb[i]:
                self.peak_rss_kb[i] = rss
        available = self.states.available()
        running = False
        if available:
            index = available[self._next % len(available)]
            self._next += 1
            before = self.states.snapshot(index)
            started = time.monotonic()
            error: str | None = None
            body: Any = None
            try:
                code, body = self.workers[index].rest(
                    "GET", "/connectors?expand=status", timeout=REST_TIMEOUT_S
                )
                if code != 200:
                    error = f"HTTP {code}: {str(body)[:200]}"
            except OSError as exc:
                error = f"{type(exc).__name__}: {exc}"
            elapsed_ms = (time.monotonic() - started) * 1000
            if before[0] and self.states.snapshot(index) == before:
                self.latencies_ms.append(elapsed_ms)
                if error is not None:
                    self.failures.append(
                        f"t={started - self.t0:.1f}s worker {self.workers[index].worker_id}: {error}"
                    )
            running = error is None and all_running(body, self.connectors)
        self.samples.append(Sample(round(time.monotonic() - self.t0, 2), self.lag(), running))
