"""The control-plane scenario: many connectors created, listed, restarted and deleted through REST.

One fresh fleet of ``control_plane_workers`` (three) workers per system and per size N, grouped on
the target cluster, one system after the other on the same brokers. Each connector is Java's
``VerifiableSourceConnector`` with ``tasks.max=1`` and ``throughput=1`` (one record per second per
task, to the one-partition topic ``CONTROL_TOPIC`` created beforehand), the same JSON on both
systems, so the work is the runtime's own: config-topic writes, rebalances, status reads, forwarding.
(``throughput=0`` would be cheaper still, but Java's task then blocks in ``poll`` until stopped and
only stops at the graceful-shutdown timeout.)

Phases, in order, for one N:

1. **create**: N ``POST /connectors``; request *i* goes to worker *i* mod 3, so two thirds reach a
   follower and are forwarded to the leader; ``concurrency`` requests in flight (a pool of that many
   client threads, each sending its next request when the previous one is answered). The figure is
   the time from the first request to the last answer; every answer's latency is kept (p50/p99).
   Then the time from the first request until every connector and its task report RUNNING
   (``GET /connectors?expand=status`` polled every ``RUNNING_POLL_S`` on the first worker).
2. **status** and **info**: ``GET /connectors?expand=status`` then ``?expand=info``, ``repeats``
   times each, one at a time, round-robin over the workers; p50/p99/max of the answer time. Each
   answer must list all N connectors.
3. **restart**: ``POST /connectors/<c>/restart`` (the connector only, Java's default) for every
   connector, spread and in flight as in 1. A worker that does not run the connector forwards the
   request (to the leader, which forwards it to the owner). Then the time until everything is
   RUNNING again.
4. **delete**: ``DELETE /connectors/<c>`` for every connector, spread and in flight as in 1, then the
   time until ``GET /connectors`` is empty on every worker.

A write answered 409 (Java answers so while a rebalance it expects is pending) or 5xx is sent again
to the same worker after ``RETRY_BACKOFF_S``, at most ``MAX_ATTEMPTS`` times; the retries are counted
and their time is part of the phase. A create answered "already exists" after an earlier attempt,
and a delete answered 404 after one, count as done (the earlier attempt won). Every request has a
timeout and every phase a deadline; the connectors are deleted by phase 4 and the workers stopped.
HTTP uses the standard library, one connection per request, for both systems alike.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from benchmarks.stats import percentile
from pyconnect.testing.connect_worker import ConnectWorkerProcess

VERIFIABLE_SOURCE = "org.apache.kafka.connect.tools.VerifiableSourceConnector"
CONTROL_TOPIC = "bench-control"
RUNNING_POLL_S = 1.0
RETRY_BACKOFF_S = 0.1
MAX_ATTEMPTS = 100
REQUEST_TIMEOUT_S = 120.0

Request = tuple[str, str, Any]


def connector_name(i: int) -> str:
    return f"cp-{i:05d}"


def connector_config(topic: str = CONTROL_TOPIC) -> dict[str, str]:
    """The JSON both systems get: one task, one record per second."""
    return {
        "connector.class": VERIFIABLE_SOURCE,
        "tasks.max": "1",
        "topic": topic,
        "throughput": "1",
    }


@dataclass
class Phase:
    """What one batch of writes took: wall time, per-request latencies, retries and failures."""

    requests: int
    wall_s: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    retries: int = 0
    failures: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        lat = self.latencies_ms
        return {
            "requests": self.requests,
            "wall_s": round(self.wall_s, 3),
            "per_s": round(self.requests / self.wall_s, 1) if self.wall_s > 0 else None,
            "p50_ms": round(percentile(lat, 50), 1) if lat else None,
            "p99_ms": round(percentile(lat, 99), 1) if lat else None,
            "max_ms": round(max(lat), 1) if lat else None,
            "retries": self.retries,
            "failures": len(self.failures),
        }


def _done(method: str, status: int, body: Any, attempts: int) -> bool | None:
    """True when the answer completes the request, None when it should be sent again, False on failure."""
    if 200 <= status < 300:
        return True
    text = str(body)
    if method == "POST" and status == 409 and "already exists" in text and attempts > 1:
        return True
    if method == "DELETE" and status == 404 and attempts > 1:
        return True
    if status == 409 or status >= 500:
        return None
    return False


def run_writes(
    workers: Sequence[ConnectWorkerProcess],
    requests: Sequence[Request],
    concurrency: int,
    deadline: float,
    *,
    sender: Callable[[ConnectWorkerProcess, str, str, Any], tuple[int, Any]] | None = None,
) -> Phase:
    """Send ``requests`` (request *i* to ``workers[i % len(workers)]``) with ``concurrency`` in flight.

    Each pool thread takes the next request when its previous one is answered. Raises TimeoutError
    when ``deadline`` (monotonic) passes first.
    """
    send = sender or (lambda w, m, p, b: w.rest(m, p, b, timeout=REQUEST_TIMEOUT_S))
    phase = Phase(len(requests))
    queue = iter(enumerate(requests))
    lock = threading.Lock()

    def one(index: int, request: Request) -> None:
        method, path, body = request
        worker = workers[index % len(workers)]
        started = time.monotonic()
        for attempt in itertools.count(1):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{method} {path} not done before the phase deadline")
            try:
                status, answer = send(worker, method, path, body)
            except OSError as exc:
                status, answer = 599, f"{type(exc).__name__}: {exc}"
            verdict = _done(method, status, answer, attempt)
            if verdict is True:
                with lock:
                    phase.latencies_ms.append((time.monotonic() - started) * 1000)
                return
            if verdict is False or attempt >= MAX_ATTEMPTS:
                with lock:
                    phase.failures.append(f"{method} {path}: HTTP {status}: {str(answer)[:200]}")
                return
            with lock:
                phase.retries += 1
            time.sleep(RETRY_BACKOFF_S)

    def loop() -> None:
        while True:
            with lock:
                item = next(queue, None)
            if item is None:
                return
            one(*item)

    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="control-plane") as pool:
        futures = [pool.submit(loop) for _ in range(concurrency)]
        for fut in futures:
            fut.result()
    phase.wall_s = time.monotonic() - t0
    return phase


def timed_gets(
    workers: Sequence[ConnectWorkerProcess], path: str, repeats: int, expected: int, deadline: float
) -> dict[str, Any]:
    """``repeats`` sequential GETs of ``path`` round-robin over ``workers``; every answer must list
    ``expected`` connectors. p50/p99/max/mean in ms."""
    latencies: list[float] = []
    for i in range(repeats):
        if time.monotonic() > deadline:
            raise TimeoutError(f"GET {path}: only {i} of {repeats} answers before the deadline")
        worker = workers[i % len(workers)]
        started = time.monotonic()
        status, body = worker.rest("GET", path, timeout=REQUEST_TIMEOUT_S)
        latencies.append((time.monotonic() - started) * 1000)
        if status != 200 or not isinstance(body, dict) or len(body) != expected:
            listed = len(body) if isinstance(body, dict) else None
            raise RuntimeError(
                f"GET {path} from {worker.worker_id}: HTTP {status}, {listed} connectors listed"
            )
    return {
        "count": repeats,
        "p50_ms": round(percentile(latencies, 50), 1),
        "p99_ms": round(percentile(latencies, 99), 1),
        "max_ms": round(max(latencies), 1),
        "mean_ms": round(sum(latencies) / len(latencies), 1),
    }


def all_running(body: Any, names: set[str]) -> bool:
    """Whether an ``expand=status`` answer shows every connector in ``names`` and its one task RUNNING."""
    if not isinstance(body, dict) or not names <= set(body):
        return False
    for name in names:
        status = (body[name] or {}).get("status") or {}
        tasks = status.get("tasks") or []
        if (status.get("connector") or {}).get("state") != "RUNNING" or len(tasks) != 1:
            return False
        if tasks[0].get("state") != "RUNNING":
            return False
    return True


def wait_all_running(worker: ConnectWorkerProcess, names: set[str], deadline: float) -> None:
    while True:
        worker.check_alive()
        status, body = worker.rest("GET", "/connectors?expand=status", timeout=REQUEST_TIMEOUT_S)
        if status == 200 and all_running(body, names):
            return
        if time.monotonic() > deadline:
            running = sum(1 for n in names if isinstance(body, dict) and all_running({n: body.get(n)}, {n}))
            raise TimeoutError(
                f"{running} of {len(names)} connectors RUNNING with their task at the deadline"
            )
        time.sleep(RUNNING_POLL_S)


def wait_all_gone(workers: Sequence[ConnectWorkerProcess], deadline: float) -> None:
    for worker in workers:
        while True:
            status, body = worker.rest("GET", "/connectors", timeout=REQUEST_TIMEOUT_S)
            if status == 200 and body == []:
                break
            if time.monotonic() > deadline:
                left = len(body) if isinstance(body, list) else "?"
                raise TimeoutError(f"{worker.worker_id} still lists {left} connectors at the deadline")
            time.sleep(0.2)


def measure(
    workers: Sequence[ConnectWorkerProcess],
    connectors: int,
    *,
    concurrency: int,
    repeats: int,
    phase_timeout_s: float,
    topic: str = CONTROL_TOPIC,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """The four phases on a started, ready fleet; the figures of one size N (see the module docstring)."""
    names = [connector_name(i) for i in range(connectors)]
    config = connector_config(topic)
    out: dict[str, Any] = {"connectors": connectors}

    def deadline() -> float:
        return time.monotonic() + phase_timeout_s

    def write_phase(label: str, requests: list[tuple[str, str, object]]) -> None:
        phase = run_writes(workers, requests, concurrency, deadline())
        _check(phase, label)
        out[label] = phase.summary()
        log(f"{label} {connectors}: {out[label]}")

    t0 = time.monotonic()
    write_phase("create", [("POST", "/connectors", {"name": n, "config": config}) for n in names])
    wait_all_running(workers[0], set(names), t0 + phase_timeout_s)
    out["create_to_running_s"] = round(time.monotonic() - t0, 3)
    log(f"all {connectors} RUNNING after {out['create_to_running_s']} s")
    out["status"] = timed_gets(workers, "/connectors?expand=status", repeats, connectors, deadline())
    log(f"GET expand=status: {out['status']}")
    out["info"] = timed_gets(workers, "/connectors?expand=info", repeats, connectors, deadline())
    log(f"GET expand=info: {out['info']}")
    t1 = time.monotonic()
    write_phase("restart", [("POST", f"/connectors/{n}/restart", None) for n in names])
    wait_all_running(workers[0], set(names), t1 + phase_timeout_s)
    out["restart_to_running_s"] = round(time.monotonic() - t1, 3)
    t2 = time.monotonic()
    write_phase("delete", [("DELETE", f"/connectors/{n}", None) for n in names])
    wait_all_gone(workers, t2 + phase_timeout_s)
    out["delete_to_gone_s"] = round(time.monotonic() - t2, 3)
    return out


def _check(phase: Phase, what: str) -> None:
    if phase.failures:
        raise RuntimeError(
            f"{what}: {len(phase.failures)} of {phase.requests} requests failed, first: {phase.failures[0]}"
        )
