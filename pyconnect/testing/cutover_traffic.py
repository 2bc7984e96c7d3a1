"""The applications of a cutover drill: a sequence-numbered producer that moves from cluster A to B, and
classic consumer groups that read on A, then resume on B, each keeping a ledger of the sequence numbers
delivered to it.

:class:`CutoverTraffic` runs one event loop in a thread of its own; the caller drives it from another
thread with blocking calls, each bounded by its ``timeout``:

* :meth:`~CutoverTraffic.start`: the producer writes ``rate`` records a second in all to the topic on A,
  spread evenly over its partitions, paced every :data:`ROUND_S` (each round awaited; idempotent,
  ``acks=all``, ``linger.ms=5``). Record ``n`` of partition ``p`` holds ``n`` (key ``k<n>``), numbered in
  order and counted once acknowledged. Each group is one aiokafka consumer (classic protocol, auto-commit
  off) reading the topic on A from the earliest offset and committing its position every
  :data:`COMMIT_EVERY_S`.
* :meth:`~CutoverTraffic.prepare_b`: a producer for B is started and holds the topic's metadata, so the
  switch pays no connection set-up (the topic must exist on B: the mirror creates it).
* :meth:`~CutoverTraffic.stop_on_a`: the producer finishes its round and writes no more to A; at the
  same time every group commits the position it consumed up to and leaves its group.
* :meth:`~CutoverTraffic.switch_to_b`: the producer goes on writing to B with the next sequence numbers
  (its pacing starts afresh: no burst to catch up the pause) and every group resumes on B from its
  committed offsets there (the earliest offset where it has none).
* :meth:`~CutoverTraffic.stop_on_b`: the producer stops; then every group reads B up to the end offsets
  B has then, commits and leaves.

**The write pause** (:attr:`~CutoverTraffic.pause_s`) runs from the moment the producer saw its last write
to A acknowledged (the completion of its last round there, :attr:`last_ack_a`) to the moment it saw its
first write to B acknowledged (the first send after the switch to complete, :attr:`first_ack_b`), both on
this process's monotonic clock.

**The ledger** (:class:`Ledger`) keeps, per partition, the runs of consecutive sequence numbers delivered
to a group (on A and on B alike); :meth:`Ledger.verdict` counts, against what the producer had
acknowledged, the numbers never delivered (lost) and the deliveries beyond the first (duplicates).

Client errors are not retried: the first one stops the traffic and is kept in :attr:`errors` (a drill
that hides a failed write could not count its records).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pyconnect.kafka.clients import create_consumer, create_producer
from pyconnect.kafka.log import TopicPartition

ROUND_S = 0.02
COMMIT_EVERY_S = 0.25
MAX_TRAFFIC_S = 1800.0
"""No traffic runs longer than this, whatever the caller does."""
MAX_ROUND_RECORDS = 2000
"""At most this many records per partition and round (a late round catches up in bounded steps)."""
T = TypeVar("T")


@dataclass
class Ledger:
    """Runs ``(first, last)`` of consecutive sequence numbers delivered, per partition."""

    runs: dict[int, list[tuple[int, int]]] = field(default_factory=dict)

    def add(self, partition: int, seqs: Sequence[int]) -> None:
        """Record the sequence numbers of one fetched batch, in delivery order."""
        runs = self.runs.setdefault(partition, [])
        for s in seqs:
            if runs and runs[-1][1] + 1 == s:
                runs[-1] = (runs[-1][0], s)
            else:
                runs.append((s, s))

    def verdict(self, produced: Sequence[int]) -> tuple[int, int]:
        """``(lost, duplicates)`` against ``produced[p]`` records acknowledged on partition ``p`` (numbers
        ``0 .. produced[p] - 1``): numbers never delivered, and deliveries past each number's first. A
        number at or past ``produced[p]`` counts as a duplicate (nothing acknowledged it)."""
        lost = duplicates = 0
        for p, count in enumerate(produced):
            events: list[tuple[int, int]] = [(0, 0), (count, 0)]
            for first, last in self.runs.get(p, []):
                events += [(first, 1), (last + 1, -1)]
            events.sort()
            depth, at = 0, 0
            for position, step in events:
                span = position - at
                if span > 0:
                    inside = max(0, min(position, count) - max(at, 0))
                    if depth == 0:
                        lost += inside
                    else:
                        duplicates += inside * (depth - 1) + (span - inside) * depth
                depth, at = depth + step, position
        return lost, duplicates


@dataclass
class GroupApp:
    """One application's consumer group: its ledger and the stop signal of its current phase."""

    name: str
    ledger: Ledger = field(default_factory=Ledger)
    stop: asyncio.Event | None = None
    task: asyncio.Task[None] | None = None
    to_end: bool = False
    """Set once nothing more is written: read up to the end offsets, then commit and leave."""
    read: dict[str, int] = field(default_factory=lambda: {"a": 0, "b": 0})


class CutoverTraffic:
    """The producer and the groups of one drill (see the module docstring)."""

    def __init__(
        self,
        a_config: Mapping[str, Any],
        b_config: Mapping[str, Any],
        topic: str,
        partitions: int,
        rate: float,
        groups: Sequence[str],
    ) -> None:
        self.a_config, self.b_config = dict(a_config), dict(b_config)
        self.topic, self.partitions, self.rate = topic, partitions, rate
        self.groups = {g: GroupApp(g) for g in groups}
        self.produced = [0] * partitions
        self.produced_on_a: list[int] = []
        self.errors: list[str] = []
        self.first_ack_a: float | None = None
        self.last_ack_a: float | None = None
        self.first_ack_b: float | None = None
        self.last_ack_b: float | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"cutover-{topic}", daemon=True)
        self._started = time.monotonic()
        self._producer_stop: asyncio.Event | None = None
        self._producer_task: asyncio.Task[None] | None = None
        self._producer_b: Any = None

    # ---- the caller's side ------------------------------------------------------------------

    def start(self, timeout: float = 60.0) -> None:
        self._thread.start()
        self._call(self._start_on_a(), timeout)

    def prepare_b(self, timeout: float = 60.0) -> None:
        self._call(self._prepare_b(), timeout)

    def stop_on_a(self, timeout: float = 60.0) -> None:
        self._call(self._stop_on_a(), timeout)

    def switch_to_b(self, timeout: float = 60.0) -> None:
        self._call(self._switch_to_b(), timeout)

    def stop_on_b(self, timeout: float = 120.0) -> None:
        self._call(self._stop_on_b(timeout), timeout + 10)

    def close(self) -> None:
        """Stop every client still running and the loop's thread (idempotent)."""
        if self._thread.is_alive():
            try:
                self._call(self._close(), 60)
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(timeout=30)
        if not self._thread.is_alive() and not self._loop.is_closed():
            self._loop.close()

    @property
    def pause_s(self) -> float | None:
        if self.first_ack_b is None or self.last_ack_a is None:
            return None
        return self.first_ack_b - self.last_ack_a

    def rate_on_a(self) -> float | None:
        """Records acknowledged by A per second, from its first acknowledgement to its last."""
        if self.first_ack_a is None or self.last_ack_a is None or self.last_ack_a <= self.first_ack_a:
            return None
        return sum(self.produced_on_a) / (self.last_ack_a - self.first_ack_a)

    def verdicts(self) -> dict[str, tuple[int, int]]:
        """Per group ``(lost, duplicates)`` over everything produced on A and B."""
        return {g: app.ledger.verdict(self.produced) for g, app in self.groups.items()}

    def _call(self, work: Coroutine[Any, Any, T], timeout: float) -> T:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result(timeout)

    # ---- inside the loop --------------------------------------------------------------------

    async def _start_on_a(self) -> None:
        producer = create_producer(self.a_config, acks="all", enable_idempotence=True, linger_ms=5)
        await producer.start()
        self._producer_stop = asyncio.Event()
        self._producer_task = asyncio.create_task(self._produce(producer, "a", self._producer_stop))
        for app in self.groups.values():
            app.stop = asyncio.Event()
            app.task = asyncio.create_task(self._consume(app, "a", app.stop))

    async def _prepare_b(self) -> None:
        producer = create_producer(self.b_config, acks="all", enable_idempotence=True, linger_ms=5)
        await producer.start()
        self._producer_b = producer
        await producer.partitions_for(self.topic)

    async def _stop_on_a(self) -> None:
        for app in self.groups.values():
            assert app.stop is not None
            app.stop.set()
        assert self._producer_stop is not None and self._producer_task is not None
        self._producer_stop.set()
        await asyncio.gather(self._producer_task, *[app.task for app in self.groups.values() if app.task])
        self.produced_on_a = list(self.produced)

    async def _switch_to_b(self) -> None:
        if self._producer_b is None:
            await self._prepare_b()
        self._producer_stop = asyncio.Event()
        self._producer_task = asyncio.create_task(self._produce(self._producer_b, "b", self._producer_stop))
        for app in self.groups.values():
            app.stop = asyncio.Event()
            app.task = asyncio.create_task(self._consume(app, "b", app.stop))

    async def _stop_on_b(self, timeout: float) -> None:
        assert self._producer_stop is not None and self._producer_task is not None
        self._producer_stop.set()
        await self._producer_task
        for app in self.groups.values():
            app.to_end = True
        await asyncio.wait_for(asyncio.gather(*[a.task for a in self.groups.values() if a.task]), timeout)

    async def _close(self) -> None:
        tasks = [t for t in (self._producer_task, *[a.task for a in self.groups.values()]) if t]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._producer_b is not None:
            await self._producer_b.stop()
            self._producer_b = None

    async def _produce(self, producer: Any, cluster: str, stop: asyncio.Event) -> None:
        per_partition_s = self.rate / self.partitions
        base, started = list(self.produced), time.monotonic()
        try:
            while not stop.is_set() and time.monotonic() - self._started < MAX_TRAFFIC_S:
                due = int(per_partition_s * (time.monotonic() - started)) + 1
                sends = []
                counts = [
                    min(MAX_ROUND_RECORDS, base[p] + due - self.produced[p]) for p in range(self.partitions)
                ]
                for p, count in enumerate(counts):
                    for n in range(self.produced[p], self.produced[p] + count):
                        sends.append(await producer.send(self.topic, b"%d" % n, key=b"k%d" % n, partition=p))
                if sends:
                    await self._acknowledged(sends, cluster)
                    self.produced = [n + c for n, c in zip(self.produced, counts, strict=True)]
                await asyncio.sleep(max(0.0, ROUND_S - (time.monotonic() - started) % ROUND_S))
        except Exception as exc:
            self.errors.append(f"producer on {cluster}: {exc!r}")
        finally:
            await producer.stop()
            if producer is self._producer_b:
                self._producer_b = None

    async def _acknowledged(self, sends: list[asyncio.Future[Any]], cluster: str) -> None:
        if cluster == "b" and self.first_ack_b is None:
            await asyncio.wait(sends, return_when=asyncio.FIRST_COMPLETED)
            self.first_ack_b = time.monotonic()
        await asyncio.gather(*sends)
        now = time.monotonic()
        if cluster == "a":
            self.first_ack_a = self.first_ack_a or now
            self.last_ack_a = now
        else:
            self.last_ack_b = now

    async def _consume(self, app: GroupApp, cluster: str, stop: asyncio.Event) -> None:
        """Read on ``cluster`` until ``stop`` (or, once ``app.to_end``, until every partition's position
        reaches the end offset read then), then commit the consumed position and leave."""
        consumer = create_consumer(
            self.a_config if cluster == "a" else self.b_config,
            self.topic,
            group_id=app.name,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=10000,
            heartbeat_interval_ms=1000,
        )
        await consumer.start()
        tps = [TopicPartition(self.topic, p) for p in range(self.partitions)]
        ends: dict[Any, int] | None = None
        try:
            committed_at = time.monotonic()
            while not stop.is_set() and time.monotonic() - self._started < MAX_TRAFFIC_S:
                for tp, messages in (await consumer.getmany(timeout_ms=100)).items():
                    app.ledger.add(tp.partition, [int(m.value) for m in messages])
                    app.read[cluster] += len(messages)
                if app.to_end and set(consumer.assignment()) == set(tps):
                    ends = ends or await consumer.end_offsets(tps)
                    if all([await consumer.position(tp) >= ends[tp] for tp in tps]):
                        break
                if time.monotonic() - committed_at >= COMMIT_EVERY_S and consumer.assignment():
                    await consumer.commit()
                    committed_at = time.monotonic()
            if consumer.assignment():
                await consumer.commit()
        except Exception as exc:
            self.errors.append(f"group {app.name} on {cluster}: {exc!r}")
        finally:
            await consumer.stop()
