"""Handing a task's batches to its producer so that a target partition that is not ready holds back
only its own batches: the running half of :mod:`pyconnect.kafka.target_waits`.

Contract:

- ``submit(topic, partition, builder, records)`` returns, once the batch is handed to the producer or
  parked, a future that resolves to the batch's ``RecordMetadata`` when the target acknowledged it. It
  fails with the error that fails the task: :class:`~pyconnect.kafka.target_waits.TargetWaitExceeded`
  past ``pyconnect.target.wait.max.ms``, a send error the target does not heal from, or
  :class:`SendAbandoned` once the task stops (the batch was never acknowledged: its offsets never
  commit, the task's next owner copies it).
- A batch goes to the producer at once when its partition is ready: the producer's metadata has the
  topic, the partition and its leader, and no batch of the partition is parked. Otherwise (and when the
  producer refuses it for a reason that heals: a partition its metadata lacks, a queue that did not
  drain within its request timeout) it is *parked* in its partition's lane and ``submit`` returns: the
  lane's own task hands its batches over in order once the partition is ready, refreshing the metadata
  with a backoff (``FIRST_PAUSE_S`` doubling to ``LONGEST_PAUSE_S``), and records of other partitions
  keep flowing. Parked bytes are bounded by ``max_parked_bytes``: past it ``submit`` waits for room, as
  Java's producer waits when its buffer is full.
- A batch the target refuses after it was handed over for a reason an operator fixes (ACL_DENIED,
  RECORD_TOO_LARGE) is parked again at its place in its partition's order, and the partition's batches
  still queued in the producer behind it are withdrawn and parked after it, so the target keeps the
  partition's order (a batch already on the wire may land first). The lane then sends its first batch
  alone, every ``REFUSED_PAUSE_S``, until the target takes it; the rest follow. Only for a producer
  without idempotence (Connect's default for task producers): an idempotent producer's sequence numbers
  cannot take a batch twice, so there the refusal fails the task as before; and not with
  ``watch.wait_refused`` off (``errors.tolerance=all``: the task skips the refused batch, as Java).
- A transactional producer parks nothing: ``submit`` waits in place (raising the same conditions), as
  Java's producer blocks in ``send``. Its transaction's commit needs every batch of it, and the task
  adds the offsets of all the records it dispatched.
- Every batch handed over is reported to the :class:`~pyconnect.kafka.target_waits.TargetWaits`, and a
  watch task reviews it every ``REVIEW_S``: conditions on ``watch.conditions`` (the task's board, with
  the cluster and the producer's client id), WARN and INFO lines naming ``watch.owner``, and the
  partitions past the wait bound, whose batches fail.
- ``abandon()`` (the task stops): parked batches fail with :class:`SendAbandoned`, and so does every
  batch that would wait from then on (a wait in ``submit`` raises it); a batch whose partition is ready
  still goes, and batches already handed over are left to the producer: ``wait_settled(timeout)`` waits
  for them. ``resume()`` undoes it (a stopping exactly-once task's final transaction still sends its
  offsets). ``close()`` also ends the lane and watch tasks (idempotent).

Concurrency: one event loop; ``submit`` calls do not overlap (one task's dispatch). What the lanes read
of aiokafka's producer (its metadata, its queued batches) is :mod:`pyconnect.kafka.target_metadata`.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import dataclasses
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from aiokafka.errors import KafkaTimeoutError

from pyconnect.concurrency import TaskSet, cancel_and_wait
from pyconnect.errors import ConnectError, RetriableError
from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.target_metadata import (
    max_message_bytes,
    readiness,
    sasl_principal,
    withdraw_queued,
)
from pyconnect.kafka.target_waits import (
    ACL_DENIED,
    RECORD_TOO_LARGE,
    Blocked,
    TargetWaitExceeded,
    TargetWaits,
    missing,
    refusal,
    unrecognized,
)
from pyconnect.kafka.target_watch import TargetWatch, show

log = logging.getLogger(__name__)

FIRST_PAUSE_S = 0.05
LONGEST_PAUSE_S = 1.0
REFUSED_PAUSE_S = 2.0
REVIEW_S = 0.5
DEFAULT_MAX_PARKED_BYTES = 32 * 1024 * 1024
"""Java's ``buffer.memory`` default: what a task may hold back for partitions that are not ready."""
LIMIT_TIMEOUT_S = 5.0
LIMIT_TTL_S = 10.0


class SendAbandoned(ConnectError):
    """The task stopped while the batch waited for its partition: never acknowledged, never committed."""


class _Withdrawn(RetriableError):
    """A queued batch taken back from the producer to keep its partition's order behind a refused one."""


@dataclass(slots=True, eq=False)
class _Batch:
    seq: int
    topic: str
    partition: int
    builder: Any
    size: int
    records: int
    outer: asyncio.Future[Any]


class _Lane:
    __slots__ = ("batches", "closed", "error", "probing", "refused", "task")

    def __init__(self) -> None:
        self.batches: list[_Batch] = []
        self.refused: Blocked | None = None
        self.probing: _Batch | None = None
        self.closed = False
        self.error: Callable[[_Batch], BaseException] | None = None
        self.task: asyncio.Task[None] | None = None


class TargetLanes:
    """One producer's hand-over; see the module docstring."""

    def __init__(
        self,
        producer: Any,
        *,
        max_parked_bytes: int = DEFAULT_MAX_PARKED_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._producer = producer
        txn = seam.producer_txn_manager(producer)
        self._parks = txn is None or getattr(txn, "transactional_id", None) is None
        self._resends = txn is None
        self._clock = clock
        self._max_parked_bytes = max_parked_bytes
        self._lanes: dict[tuple[str, int], _Lane] = {}
        self._seq = itertools.count()
        self._parked_bytes = 0
        self._room = asyncio.Event()
        self._room.set()
        self._abandoned = asyncio.Event()
        self._handed: set[asyncio.Future[Any]] = set()
        self._overdue: dict[tuple[str, int], TargetWaitExceeded] = {}
        self._limits: dict[str, tuple[int | None, float]] = {}
        self._tasks = TaskSet(log)
        self._watcher: asyncio.Task[None] | None = None
        self._principal = sasl_principal(producer)
        self.watch = TargetWatch()
        self.waits = TargetWaits(self.watch.cluster)
        self.observe(self.watch)

    def observe(self, watch: TargetWatch) -> None:
        """Report to ``watch`` from now on."""
        self.watch = watch
        client = getattr(self._producer, "client", None)
        self.waits.cluster = watch.cluster
        self.waits.client = str(seam.client_id(client) or "")
        self.waits.bounds = watch.bounds

    @property
    def parked(self) -> int:
        """Batches parked now."""
        return sum(len(lane.batches) for lane in self._lanes.values())

    async def submit(self, topic: str, partition: int, builder: Any, records: int) -> asyncio.Future[Any]:
        """Hand ``builder`` (a closed batch of ``records`` records) over, or park it; see the module
        docstring."""
        self._start_watching()
        if not self._parks:
            return await self._hand_over_in_place(topic, partition, builder)
        batch = _Batch(
            next(self._seq),
            topic,
            partition,
            builder,
            builder.size(),
            records,
            asyncio.get_running_loop().create_future(),
        )
        if (topic, partition) not in self._lanes and self._readiness(topic, partition) is None:
            try:
                inner = await self._producer.send_batch(builder, topic, partition=partition)
            except Exception as exc:
                blocked = self._parkable(exc, topic, partition)
                if blocked is False:
                    raise
                self._park(batch, blocked if isinstance(blocked, Blocked) else None)
            else:
                self._follow(batch, inner)
                if (topic, partition) in self._lanes:  # refused meanwhile: behind the refused batch
                    self._withdraw(topic, partition)
            return batch.outer
        await self._wait_for_room(batch.size)
        self._park(batch, None)
        return batch.outer

    async def partition_count(self, topic: str) -> int:
        """The partitions ``topic`` has, waiting (TARGET_TOPIC_MISSING, the topic as a whole) while it
        does not exist: a record without a partition needs the count."""
        self._start_watching()
        client = self._producer.client
        pause = FIRST_PAUSE_S
        while True:
            known = client.cluster.partitions_for_topic(topic)
            if known:
                self.waits.unblock(topic, -1)
                return len(known)
            self._check_waiting(topic, -1)
            if topic not in seam.client_topics_or_none(client):
                update = client.add_topic(topic)
            else:
                update = client.force_metadata_update()
            self.waits.block(missing(topic, -1, None), self._clock())
            if isinstance(update, asyncio.Future):  # the answer, within the pause
                await asyncio.wait({update}, timeout=pause)
                if update.done() and client.cluster.partitions_for_topic(topic):
                    continue
            await self._pause(pause)
            pause = min(2 * pause, LONGEST_PAUSE_S)

    def resume(self) -> None:
        """Wait again after :meth:`abandon` (a stopping task's last sends: its final transaction)."""
        self._abandoned.clear()

    def abandon(self) -> None:
        """The task stops: parked batches fail with :class:`SendAbandoned`, waits raise it."""
        self._abandoned.set()
        for key, lane in list(self._lanes.items()):
            self._fail_lane(key, lane, lambda b: SendAbandoned(f"the task stopped: {b.topic}-{b.partition}"))

    async def wait_settled(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every batch handed to the producer to be acknowledged or to
        fail; True when none is left."""
        pending = [f for f in self._handed if not f.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout)
        return all(f.done() for f in pending)

    async def close(self) -> None:
        """Abandon, and end the lane and watch tasks (idempotent)."""
        self.abandon()
        watcher, self._watcher = self._watcher, None
        await cancel_and_wait(watcher, log=log)
        await self._tasks.close()

    # -- handing over -----------------------------------------------------------------------------

    def _readiness(self, topic: str, partition: int) -> Blocked | object | None:
        return readiness(self._producer, topic, partition, self._principal)

    def _parkable(self, exc: BaseException, topic: str, partition: int) -> Blocked | bool:
        """Why a refused hand-over may wait (a :class:`Blocked`, or True without a condition), or False
        when it fails the task."""
        if isinstance(exc, _Withdrawn | KafkaTimeoutError):
            return True
        if unrecognized(exc):
            readiness = self._readiness(topic, partition)
            return readiness if isinstance(readiness, Blocked) else True
        blocked = refusal(exc, topic, partition, principal=self._principal)
        if blocked is not None and blocked.code == ACL_DENIED:
            return dataclasses.replace(blocked, operation="DESCRIBE")
        return False

    async def _hand_over_in_place(self, topic: str, partition: int, builder: Any) -> asyncio.Future[Any]:
        """A transactional producer's hand-over: wait here until the partition is ready."""
        pause = FIRST_PAUSE_S
        while True:
            readiness = self._readiness(topic, partition)
            if readiness is None:
                try:
                    inner: asyncio.Future[Any] = await self._producer.send_batch(
                        builder, topic, partition=partition
                    )
                except Exception as exc:
                    readiness = self._parkable(exc, topic, partition)
                    if readiness is False:
                        raise
                else:
                    self.waits.unblock(topic, partition)
                    self._count(inner)
                    return inner
            self._check_waiting(topic, partition)
            if isinstance(readiness, Blocked):
                self.waits.block(readiness, self._clock())
            self._refresh()
            await self._pause(pause)
            pause = min(2 * pause, LONGEST_PAUSE_S)

    def _count(self, inner: asyncio.Future[Any]) -> None:
        self.waits.handed(self._clock())
        self._handed.add(inner)
        inner.add_done_callback(self._counted)

    def _counted(self, inner: asyncio.Future[Any]) -> bool:
        """Account for a settled hand-over; True when the target acknowledged it."""
        self._handed.discard(inner)
        ok = not inner.cancelled() and inner.exception() is None
        self.waits.settled(self._clock(), ok)
        return ok

    def _follow(self, batch: _Batch, inner: asyncio.Future[Any]) -> None:
        """``batch`` is with the producer: its outcome settles ``batch.outer`` (or parks it again)."""
        self.waits.handed(self._clock())
        self._handed.add(inner)
        inner.add_done_callback(partial(self._settle, batch))

    def _settle(self, batch: _Batch, inner: asyncio.Future[Any]) -> None:
        outer = batch.outer
        if self._counted(inner):
            if not outer.done():
                outer.set_result(inner.result())
            return
        if outer.done():
            return
        if inner.cancelled():
            outer.cancel()
            return
        exc = inner.exception()
        assert exc is not None
        if isinstance(exc, _Withdrawn):
            self._park(batch, None)
            return
        if self._resends and self.watch.wait_refused and not self._abandoned.is_set():
            blocked = refusal(
                exc,
                batch.topic,
                batch.partition,
                principal=self._principal,
                size=batch.size,
                records=batch.records,
            )
            if blocked is not None:
                self._park(batch, blocked)
                self._withdraw(batch.topic, batch.partition)
                return
        outer.set_exception(exc)

    def _withdraw(self, topic: str, partition: int) -> None:
        """The partition's batches still queued in the producer come back (failing with
        :class:`_Withdrawn`, they park behind the refused one)."""
        withdraw_queued(self._producer, topic, partition, _Withdrawn(f"{topic}-{partition}"))

    # -- parking ----------------------------------------------------------------------------------

    def _park(self, batch: _Batch, refused: Blocked | None) -> None:
        if self._abandoned.is_set():
            if not batch.outer.done():
                batch.outer.set_exception(SendAbandoned(f"the task stopped: {batch.topic}-{batch.partition}"))
            return
        key = (batch.topic, batch.partition)
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = _Lane()
        bisect.insort(lane.batches, batch, key=lambda b: b.seq)
        self._held(batch.size)
        if refused is not None:
            lane.refused = refused
            self.waits.block(refused, self._clock())
        if lane.task is None:
            lane.task = self._tasks.spawn(
                self._pump(key, lane), name=f"target-lane-{batch.topic}-{batch.partition}"
            )

    def _held(self, size: int) -> None:
        self._parked_bytes += size
        if self._parked_bytes >= self._max_parked_bytes:
            self._room.clear()
        else:
            self._room.set()

    def _take(self, lane: _Lane) -> _Batch:
        batch = lane.batches.pop(0)
        self._held(-batch.size)
        return batch

    async def _wait_for_room(self, size: int) -> None:
        while self._parked_bytes and self._parked_bytes + size > self._max_parked_bytes:
            self._room.clear()
            if self._abandoned.is_set():
                raise SendAbandoned("the task stopped while its parked batches filled their bound")
            stopped = asyncio.ensure_future(self._abandoned.wait())
            room = asyncio.ensure_future(self._room.wait())
            try:
                await asyncio.wait({stopped, room}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                await cancel_and_wait(stopped, room, log=None)

    async def _pump(self, key: tuple[str, int], lane: _Lane) -> None:
        """Hand the lane's batches over, in order, as the partition becomes ready."""
        topic, partition = key
        pause = FIRST_PAUSE_S
        try:
            while lane.batches and not lane.closed and not self._abandoned.is_set():
                if lane.refused is not None:
                    await self._probe(lane)
                    continue
                readiness = self._readiness(topic, partition)
                if readiness is None:
                    head = self._take(lane)
                    try:
                        inner = await self._producer.send_batch(head.builder, topic, partition=partition)
                    except Exception as exc:
                        readiness = self._parkable(exc, topic, partition)
                        if readiness is False:
                            head.outer.set_exception(exc)
                            continue
                        self._reinsert(lane, head)
                    else:
                        pause = FIRST_PAUSE_S
                        self.waits.unblock(topic, partition)
                        self._follow(head, inner)
                        continue
                if isinstance(readiness, Blocked):
                    self.waits.block(readiness, self._clock())
                self._refresh()
                await self._pause(pause)
                pause = min(2 * pause, LONGEST_PAUSE_S)
            if lane.refused is None:
                self.waits.unblock(topic, partition)
        except Exception as exc:  # a lane never leaves its batches hanging: the task fails with it
            failure = exc
            self._fail_lane(key, lane, lambda _b: failure)
        finally:
            lane.task = None
            if self._lanes.get(key) is lane and not lane.batches:
                del self._lanes[key]

    def _reinsert(self, lane: _Lane, batch: _Batch) -> None:
        """``batch`` back at its place in ``lane`` (failed as the lane's others were, if it was dropped)."""
        if lane.error is not None:
            if not batch.outer.done():
                batch.outer.set_exception(lane.error(batch))
            return
        bisect.insort(lane.batches, batch, key=lambda b: b.seq)
        self._held(batch.size)

    async def _probe(self, lane: _Lane) -> None:
        """A refused lane: its first batch alone, after a pause, until the target takes it."""
        refused = lane.refused
        assert refused is not None
        if refused.code == RECORD_TOO_LARGE and refused.limit is None:
            limit = await self._topic_limit(refused.topic)
            if limit is not None and lane.refused is refused:
                lane.refused = dataclasses.replace(refused, limit=limit)
                self.waits.block(lane.refused, self._clock())
        await self._pause(REFUSED_PAUSE_S)
        if self._abandoned.is_set() or lane.closed or not lane.batches:
            return
        topic, partition = refused.topic, refused.partition
        if self._readiness(topic, partition) is not None:
            self._refresh()
            return
        head = lane.probing = self._take(lane)
        try:
            inner = await self._producer.send_batch(head.builder, topic, partition=partition)
        except Exception as exc:
            lane.probing = None
            self._reinsert(lane, head)
            if self._parkable(exc, topic, partition) is False:
                raise
            return
        self._count(inner)
        try:
            await asyncio.wait([inner])
        finally:
            lane.probing = None
        if head.outer.done():  # the lane was given up meanwhile
            return
        if not inner.cancelled() and inner.exception() is None:
            lane.refused = None
            self.waits.unblock(topic, partition)
            head.outer.set_result(inner.result())
            return
        error = asyncio.CancelledError() if inner.cancelled() else inner.exception()
        assert error is not None
        again = refusal(
            error, topic, partition, principal=self._principal, size=head.size, records=head.records
        )
        if again is None and not isinstance(error, _Withdrawn):
            lane.refused = None
            self.waits.unblock(topic, partition)
            head.outer.set_exception(error)
            return
        self._reinsert(lane, head)
        if again is not None:
            if again.code == RECORD_TOO_LARGE:
                again = dataclasses.replace(again, limit=await self._topic_limit(topic))
            if not lane.closed:
                lane.refused = again
                self.waits.block(again, self._clock())

    def _fail_lane(self, key: tuple[str, int], lane: _Lane, error: Callable[[_Batch], BaseException]) -> None:
        """Fail every batch of ``lane`` (the one out as a probe too) and drop the lane."""
        batches, lane.batches = lane.batches, []
        lane.closed = True
        lane.error = error
        for batch in batches:
            self._held(-batch.size)
        if lane.probing is not None:
            batches.insert(0, lane.probing)
        for batch in batches:
            if not batch.outer.done():
                batch.outer.set_exception(error(batch))
        lane.refused = None
        self.waits.unblock(*key)
        if self._lanes.get(key) is lane:
            del self._lanes[key]

    # -- waiting ----------------------------------------------------------------------------------

    def _check_waiting(self, topic: str, partition: int) -> None:
        """Raise when the task stops, or when this in-place wait is past its bound."""
        if self._abandoned.is_set():
            raise SendAbandoned(f"the task stopped while a batch for {topic}-{partition} waited")
        overdue = self._overdue.pop((topic, partition), None)
        if overdue is not None:
            raise overdue

    async def _pause(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when the task stops."""
        if not self._abandoned.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._abandoned.wait(), seconds)

    def _refresh(self) -> None:
        """Ask for new metadata (answered in the client's own task; never awaited here)."""
        self._producer.client.force_metadata_update()

    async def _topic_limit(self, topic: str) -> int | None:
        """The topic's ``max.message.bytes`` (:func:`~pyconnect.kafka.target_metadata.max_message_bytes`),
        asked at most every ``LIMIT_TTL_S``."""
        now = self._clock()
        cached = self._limits.get(topic)
        if cached is not None and now - cached[1] < LIMIT_TTL_S:
            return cached[0]
        limit = await max_message_bytes(self._producer, topic, LIMIT_TIMEOUT_S)
        self._limits[topic] = (limit, now)
        return limit

    # -- watching ---------------------------------------------------------------------------------

    def _start_watching(self) -> None:
        if self._watcher is None and not self._abandoned.is_set():
            self._watcher = asyncio.get_running_loop().create_task(
                self._watch(), name=f"target-watch-{self.watch.owner}"
            )

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(REVIEW_S)
            try:
                self.review()
            except Exception:  # a failed report is logged; the watch goes on
                log.exception("Task %s: showing the target's conditions failed", self.watch.owner)

    def review(self) -> None:
        """Apply what the waits say now (:func:`~pyconnect.kafka.target_watch.show`) and fail the
        batches of the partitions past their bound."""
        review = self.waits.review(self._clock())
        show(review, self.watch, self.waits.client or None)
        for topic, partition, message in review.overdue:
            self._give_up(topic, partition, message)

    def _give_up(self, topic: str, partition: int, message: str) -> None:
        key = (topic, partition)
        self.waits.unblock(topic, partition)
        lane = self._lanes.get(key)
        if lane is not None:
            self._fail_lane(key, lane, lambda _b: TargetWaitExceeded(message))
        else:
            self._overdue[key] = TargetWaitExceeded(message)
