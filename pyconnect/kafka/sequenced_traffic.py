"""Traffic for the chaos runs: sequence-numbered records into the source, a consumer group that
commits, and a tail of the target that measures the lag.

One thread runs one asyncio loop with three coroutines (every loop bounded by ``stop`` and a deadline):

- the **producer** writes ``rate`` records a second to every partition of every topic, in rounds of
  ``batch`` consecutive records per partition (``rate / batch`` rounds a second, each awaited): key
  ``k<n>``, value ``<n>``, ``n`` being the partition's sequence number (idempotent producer, acks=all,
  so the source holds each ``n`` in order). A partition's ``acked`` advances by the records of the round
  acknowledged before its first failure; the rest are sent again with the same ``n`` on a fresh
  producer (a copy that did land then shows as a source duplicate, which the verdict tolerates);
- the **application** is consumer group ``group`` reading every topic on the source and committing
  about every second, so the checkpoint connector has positions to translate;
- the **tail** reads the remote topics on the target (``read_committed``) and keeps the highest sequence
  number copied per partition: ``lag()`` is what the source acknowledged minus what reached the target.

Client errors during faults are expected: they are counted per coroutine (``errors``) and retried, never
raised; a coroutine that dies for another reason is restarted after a pause and counted too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from pyconnect.kafka import aiokafka_seam as seam

PartitionKey = tuple[str, int]
log = logging.getLogger(__name__)
MAX_SECONDS = 4 * 3600.0


async def create_topics(bootstrap: str, topics: Sequence[str], partitions: int, replication: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(t, partitions, replication) for t in topics])
    finally:
        await admin.close()


class Workload:
    def __init__(
        self,
        source: str,
        target: str,
        topics: Sequence[str],
        partitions: int,
        *,
        rate: float,
        group: str,
        remote_prefix: str = "A.",
        batch: int = 1,
    ) -> None:
        if batch < 1:
            raise ValueError(f"batch must be at least 1, not {batch}")
        self.source, self.target = source, target
        self.topics = list(topics)
        self.keys: list[PartitionKey] = [(t, p) for t in self.topics for p in range(partitions)]
        self.rate = rate
        self.batch = batch
        self.group = group
        self.remote_prefix = remote_prefix
        self.acked: dict[PartitionKey, int] = dict.fromkeys(self.keys, 0)
        self.copied_max: dict[PartitionKey, int] = {}
        self.consumed = 0
        self.errors: Counter[str] = Counter()
        self._producing = True
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    # -- control, from the caller's thread -------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._main, name="chaos-workload", daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the chaos workload did not start within 30 s")

    def stop_producing(self) -> dict[PartitionKey, int]:
        """Stop writing (the group and the tail go on); what the source acknowledged per partition."""
        self._producing = False
        time.sleep(2 * self.batch / max(self.rate, 1.0) + 0.5)
        return dict(self.acked)

    def stop(self) -> None:
        """Stop every coroutine and join the thread (idempotent)."""
        if self._thread is None or not self._thread.is_alive():
            return
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=60)
            if self._thread.is_alive():
                raise RuntimeError("the chaos workload thread did not stop within 60 s")

    def lag(self) -> int:
        """Records the source acknowledged that the target does not hold yet (by sequence number)."""
        copied = dict(self.copied_max)
        return sum(max(0, n - (copied.get(k, -1) + 1)) for k, n in list(self.acked.items()))

    # -- the loop -------------------------------------------------------------------------------------

    def _main(self) -> None:
        asyncio.run(self._run())

    async def _run(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._ready.set()
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self._forever("producer", self._produce))
            tg.create_task(self._forever("application", self._application))
            tg.create_task(self._forever("tail", self._tail))

    async def _forever(self, name: str, body: Callable[[], Awaitable[None]]) -> None:
        assert self._stop is not None
        started = time.monotonic()
        while not self._stop.is_set() and time.monotonic() - started < MAX_SECONDS:
            try:
                await body()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.errors[f"{name}: {type(exc).__name__}"] += 1
                log.debug("chaos %s failed: %r", name, exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), 1.0)

    async def _produce(self) -> None:
        assert self._stop is not None
        producer = AIOKafkaProducer(
            bootstrap_servers=self.source, enable_idempotence=True, acks="all", linger_ms=5
        )
        await producer.start()
        try:
            while not self._stop.is_set():
                if not self._producing:
                    await asyncio.sleep(0.2)
                    continue
                round_started = time.monotonic()
                firsts = {key: self.acked[key] for key in self.keys}
                sends = [
                    [
                        await producer.send(t, str(n).encode(), key=f"k{n}".encode(), partition=p)
                        for n in range(firsts[(t, p)], firsts[(t, p)] + self.batch)
                    ]
                    for t, p in self.keys
                ]
                failed: BaseException | None = None
                for key, futures in zip(self.keys, sends, strict=True):
                    results = await asyncio.gather(*futures, return_exceptions=True)
                    ok = 0
                    for result in results:
                        if isinstance(result, BaseException):
                            failed = failed or result
                            break
                        ok += 1
                    self.acked[key] = firsts[key] + ok
                if failed is not None:
                    raise failed
                await asyncio.sleep(max(0.0, self.batch / self.rate - (time.monotonic() - round_started)))
        finally:
            await producer.stop()

    async def _application(self) -> None:
        assert self._stop is not None
        consumer = AIOKafkaConsumer(
            *self.topics,
            bootstrap_servers=self.source,
            group_id=self.group,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=10000,
            heartbeat_interval_ms=1000,
        )
        await consumer.start()
        try:
            committed_at = time.monotonic()
            while not self._stop.is_set():
                batch = await consumer.getmany(timeout_ms=500)
                self.consumed += sum(len(m) for m in batch.values())
                if time.monotonic() - committed_at >= 1.0:
                    await consumer.commit()
                    committed_at = time.monotonic()
        finally:
            await consumer.stop()

    async def _tail(self) -> None:
        assert self._stop is not None
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.target,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            isolation_level="read_committed",
        )
        await consumer.start()
        try:
            remote = {self.remote_prefix + t: t for t in self.topics}
            assigned: set[TopicPartition] = set()
            while not self._stop.is_set():
                if len(assigned) < len(self.keys):
                    await seam.consumer_client(consumer).force_metadata_update()
                    found = {
                        TopicPartition(r, p) for r in remote for p in consumer.partitions_for_topic(r) or ()
                    }
                    if found - assigned:
                        new = found - assigned
                        assigned |= found
                        consumer.assign(sorted(assigned))
                        await consumer.seek_to_beginning(*new)
                batch = await consumer.getmany(timeout_ms=500) if assigned else {}
                if not assigned:
                    await asyncio.sleep(0.5)
                for tp, messages in batch.items():
                    key = (remote[tp.topic], tp.partition)
                    top = max(int(m.value or b"-1") for m in messages)
                    if top > self.copied_max.get(key, -1):
                        self.copied_max[key] = top
        finally:
            await consumer.stop()
