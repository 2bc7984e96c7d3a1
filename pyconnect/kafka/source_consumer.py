"""The MirrorSourceTask's consumer on the source cluster: assign, seek and poll, no group, no commits.

Contract: ``poll`` turns transient Kafka errors into an empty batch after a short backoff, logged at
most once per error type and :data:`POLL_WARNING_INTERVAL_S` (Java's MirrorSourceTask logs each and
returns null). Beyond Java, a position out of range is never reset in silence: ``poll`` raises
:class:`PositionOutOfRange` naming every refused partition of the poll at once, with its log start and
end and the records the same poll got for the other partitions, and the caller seeks; a partition
without a position is placed by the configured ``auto.offset.reset`` (``reset``, asked at assignment,
without waiting). ``log_bounds`` answers log start and end offsets (a partition the cluster lacks is
left out); ``log_bounds_of`` asks them of a short-lived consumer. A start refused by the cluster, or a
READ refused on a topic, raises the access error naming the cluster (:mod:`pyconnect.kafka.access`):
a consumer without READ fails its task instead of polling forever.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.consumer.fetcher import OffsetResetStrategy
from aiokafka.errors import (
    IllegalStateError,
    KafkaError,
    NoOffsetForPartitionError,
    OffsetOutOfRangeError,
    TopicAuthorizationFailedError,
)

from pyconnect.config.client_configs import consumer_kwargs
from pyconnect.errors import ConnectError
from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.access import access_error, cluster_label, start_client
from pyconnect.kafka.admin_client import client_config_honoured
from pyconnect.kafka.clients import create_consumer
from pyconnect.kafka.fetched_bytes import count_fetched_bytes
from pyconnect.kafka.source_faults import ReadRefusals, TopicCheck, check_topics
from pyconnect.metrics.client_metrics import ConsumerMetrics
from pyconnect.metrics.registry import MetricsHub

log = logging.getLogger(__name__)

POLL_WARNING_INTERVAL_S = 60.0
"""A transient poll error of one type is logged at most once per this many seconds per consumer."""
POLL_ERROR_BACKOFF_S = 0.1
"""Pause after a failed poll (Java's ``retry.backoff.ms`` default), so that errors never spin."""
LOG_BOUNDS_TIMEOUT_S = 10.0
"""Bound of the log-bounds question ``poll`` asks after refused positions (they are fetched again past it)."""


class LogBoundsUnanswered(ConnectError):
    """:meth:`SourceConsumer.log_bounds` got no answer from its cluster (the Kafka error in the message)."""


async def log_bounds_of(
    java_config: Mapping[str, Any], cluster: str, partitions: Iterable[tuple[str, int]]
) -> dict[tuple[str, int], tuple[int, int]]:
    """:meth:`SourceConsumer.log_bounds` of a short-lived consumer on ``cluster`` (closed before this
    returns); a start or a question that fails raises :class:`LogBoundsUnanswered` (a refused start its
    access error, as :meth:`SourceConsumer.start`)."""
    probe = SourceConsumer(java_config, cluster)
    try:
        try:
            await probe.start()
        except KafkaError as exc:
            raise LogBoundsUnanswered(f"{cluster} did not answer: {exc}") from exc
        return await probe.log_bounds(partitions)
    finally:
        await probe.close()


def _retrieved(answer: asyncio.Future[Any]) -> None:
    """Done callback of a reset nobody waits for: its outcome is read (a consumer closed meanwhile)."""
    if not answer.cancelled():
        answer.exception()


@dataclass(frozen=True, slots=True)
class OutOfRange:
    """A fetch position the broker refused as out of range, with the partition's log bounds then."""

    topic: str
    partition: int
    position: int
    log_start: int
    log_end: int


class PositionOutOfRange(ConnectError):
    """``poll`` met positions out of range; the consumer does not move them (the caller seeks).

    ``partitions`` holds every refused position the poll met (all of them at once, whatever the number
    of partitions); ``batch`` the records the same poll returned for other partitions (``{}`` if none),
    which the caller handles as a normal batch: nothing polled is dropped; ``raw`` the same for a raw
    fetch (:mod:`pyconnect.kafka.raw_source_fetch`)."""

    def __init__(
        self,
        partitions: Sequence[OutOfRange],
        batch: Mapping[Any, list[Any]] | None = None,
        *,
        raw: Sequence[Any] = (),
    ) -> None:
        super().__init__(", ".join(f"{p.topic}-{p.partition}@{p.position}" for p in partitions))
        self.partitions = list(partitions)
        self.batch: dict[Any, list[Any]] = dict(batch or {})
        self.raw = list(raw)  # a raw fetch's answers for the other partitions (raw_source_fetch)


class SourceConsumer:
    """Assign/seek/poll consumer of a MirrorSourceTask on the source cluster (named ``cluster``).

    The client never moves a position by itself (its ``auto.offset.reset`` is ``none``): partitions
    without a position are placed by the configured ``auto.offset.reset`` (:meth:`reset`, Java's
    consumer does the same for a partition it was not told to seek), and refused positions surface in
    :meth:`poll` as :class:`PositionOutOfRange`. A topic refused READ is held back in :attr:`refusals`
    (pyconnect.kafka.source_faults) while the other partitions are polled on."""

    def __init__(self, java_config: Mapping[str, Any], cluster: str | None = None) -> None:
        self.cluster = cluster or cluster_label(java_config)
        config = {k: v for k, v in java_config.items() if k not in ("group.id", "group.instance.id")}
        self._config = config
        with client_config_honoured(self.cluster):
            self._reset = str(consumer_kwargs(config).get("auto_offset_reset", "latest"))
            self._consumer: AIOKafkaConsumer = create_consumer(
                config, enable_auto_commit=False, auto_offset_reset="none"
            )
        self._started = False
        self._warned: dict[type, float] = {}
        self._metrics: ConsumerMetrics | None = None
        self._assigned_at: dict[TopicPartition, int] = {}
        self.refusals = ReadRefusals()

    def measure(self, hub: MetricsHub) -> None:
        """Report this consumer's client metrics (pyconnect.metrics.client_metrics) into ``hub`` until
        :meth:`close`, under its ``client.id``."""
        if self._metrics is None:
            self._metrics = ConsumerMetrics(hub, str(self._config.get("client.id") or ""), self.highwater)
            self._count_fetches()

    async def start(self) -> None:
        """Start the consumer; a refused start raises the access error, and a failed one leaves it closed."""
        if not self._started:
            await start_client(self._consumer, self._config, self.cluster)
            self._started = True
            self._count_fetches()

    def _count_fetches(self) -> None:
        """Once started and measured: fetched bytes counted per record set, or else per polled record."""
        if self._started and self._metrics is not None:
            if not count_fetched_bytes(self._consumer, self._metrics.fetched):
                self._metrics.measure_records()

    def assign(self, partitions: Iterable[tuple[str, int]]) -> None:
        chosen = list(partitions)
        self._consumer.assign([TopicPartition(t, p) for t, p in chosen])
        now = int(time.time() * 1000)
        self._assigned_at = {TopicPartition(t, p): now for t, p in chosen}
        if self._metrics is not None:
            self._metrics.assigned(chosen)

    def seek(self, topic: str, partition: int, offset: int) -> None:
        self._consumer.seek(TopicPartition(topic, partition), offset)
        if self._metrics is not None:
            self._metrics.seeked(topic, partition, offset)

    def reset(self, partitions: Iterable[tuple[str, int]]) -> None:
        """Place assigned ``partitions`` by the configured ``auto.offset.reset`` (``earliest``: log
        start, ``latest``: log end), without waiting: the client asks the offsets in the background and
        retries them as it would its own reset. ``none`` leaves them without a position: each poll then
        fails for them as Java's does (``NoOffsetForPartition``, logged at a bounded rate)."""
        tps = [TopicPartition(t, p) for t, p in partitions]
        if not tps or self._reset not in ("earliest", "latest"):
            return
        strategy = OffsetResetStrategy.EARLIEST if self._reset == "earliest" else OffsetResetStrategy.LATEST
        # The public seek_to_beginning/seek_to_end wait for the answer (up to the request timeout);
        # their first half alone is what the client does for a partition it has no position for.
        waiter = seam.consumer_fetcher(self._consumer).request_offset_reset(tps, strategy)
        waiter.add_done_callback(_retrieved)

    @property
    def max_poll_records(self) -> int:
        """The consumer's ``max.poll.records`` (Java's default 500)."""
        return int(self._config.get("max.poll.records") or 500)

    @property
    def client_id(self) -> str:
        return str(self._config.get("client.id") or "")

    def unanswered(self, after_ms: int, now_ms: int | None = None) -> list[tuple[str, int]]:
        """The assigned partitions that have a position and whose fetches the cluster has not answered
        for longer than ``after_ms`` (counted from their assignment when none was answered yet)."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        late: list[tuple[str, int]] = []
        for tp, since in self._assigned_at.items():
            try:
                answered = self._consumer.last_poll_timestamp(tp)
                placed = self._has_position(tp)
            except (AssertionError, KeyError, AttributeError, IllegalStateError):  # not assigned any more
                continue
            if placed and now - max(answered or 0, since) > after_ms:
                late.append((tp.topic, tp.partition))
        return late

    def _has_position(self, tp: TopicPartition) -> bool:
        subscription = seam.consumer_subscription(self._consumer)
        assignment = subscription.subscription.assignment  # the client's own state
        return bool(assignment.state_value(tp).has_valid_position)

    def highwater(self, topic: str, partition: int) -> int | None:
        """The last high watermark a fetch returned for an assigned partition (``None`` before one)."""
        try:
            return self._consumer.highwater(TopicPartition(topic, partition))
        except (AssertionError, KeyError, AttributeError):  # not assigned (any more)
            return None

    async def poll(self, timeout_ms: int, max_records: int | None = None) -> dict[Any, list[Any]]:
        """``{(topic, partition): [ConsumerRecord, ...]}``; ``{}`` on timeout or a transient Kafka error
        (logged at a bounded rate). A topic refused READ is paused and held back (:meth:`refuse_read`),
        the others polled on; another refusal raises the access error.

        Positions out of range raise :class:`PositionOutOfRange` naming all of them with their log
        bounds, and carrying the records polled for other partitions (they are not moved; the caller
        seeks). The client reports such errors one partition per call: one poll gathers them all (at
        most one extra non-waiting call per assigned partition), so no partition waits for another's
        turn. Partitions without a position (none once :meth:`reset`) are placed by :meth:`reset`."""
        batch: dict[Any, list[Any]] = {}
        refused: dict[TopicPartition, int] = {}
        unplaced: list[TopicPartition] = []
        if self.refusals:
            self._consumer.resume(*(TopicPartition(t, p) for t, p in self.refusals.due()))
        try:
            wait_ms = timeout_ms
            for _ in range(2 * len(self._consumer.assignment()) + 2):
                left = None if max_records is None else max_records - sum(map(len, batch.values()))
                if left == 0:
                    break
                try:
                    polled = await self._consumer.getmany(timeout_ms=wait_ms, max_records=left)
                except OffsetOutOfRangeError as exc:
                    refused.update(exc.args[0] if exc.args and isinstance(exc.args[0], Mapping) else {})
                except NoOffsetForPartitionError as exc:
                    if exc.args and isinstance(exc.args[0], TopicPartition):
                        unplaced.append(exc.args[0])
                except TopicAuthorizationFailedError as exc:
                    self.refuse_read(str(exc.args[0]) if exc.args else "", pause=True)
                else:
                    if not polled:
                        break
                    if not batch and not refused and not unplaced:
                        batch = polled  # the usual case: one call, its result as it is (nothing copied)
                        break
                    for tp, records in polled.items():
                        batch.setdefault(tp, []).extend(records)
                wait_ms = 0  # gather what is already there; never wait twice
        except KafkaError as exc:
            refusal = access_error(exc, self.cluster)
            if refusal is not None:
                raise refusal from exc
            if not batch and not refused and not unplaced:
                self._warn(exc)
                await asyncio.sleep(min(POLL_ERROR_BACKOFF_S, timeout_ms / 1000))
                return {}
            self._warn(exc)
        if self._metrics is not None:
            self._metrics.polled(batch)
        if unplaced:
            self._unplaced(unplaced)
            if not batch and not refused and self._reset not in ("earliest", "latest"):
                await asyncio.sleep(min(POLL_ERROR_BACKOFF_S, timeout_ms / 1000))  # never spin
        if refused:
            known = await self._out_of_range(refused, timeout_ms)
            if known:
                raise PositionOutOfRange(known, batch)
        return batch

    def refuse_read(self, topic: str, *, pause: bool = False) -> None:
        """A fetch of ``topic`` was refused READ: its assigned partitions are held back until their
        next probe (``pause``: the record path pauses them in the client meanwhile)."""
        held = [(tp.topic, tp.partition) for tp in self._assigned_at if tp.topic == topic]
        self.refusals.refuse(held)
        if pause and held:
            self._consumer.pause(*(TopicPartition(t, p) for t, p in held))

    def refused_topics(self) -> set[str]:
        """The topics refused READ whose partitions no fetch answered since (see :attr:`refusals`)."""
        if not self.refusals:
            return set()
        return self.refusals.lift(lambda tp: self._consumer.last_poll_timestamp(TopicPartition(*tp)))

    async def check_topics(self, topics: Iterable[str]) -> TopicCheck:
        """Which of ``topics`` the cluster has, lacks or hides (pyconnect.kafka.source_faults)."""
        return await check_topics(seam.consumer_client(self._consumer), self._config, self.cluster, topics)

    def _unplaced(self, partitions: Sequence[TopicPartition]) -> None:
        """Partitions the client has no position for: placed by :meth:`reset`; under ``none``, a poll
        failure as Java's (logged at a bounded rate, the partitions stay unread)."""
        if self._reset in ("earliest", "latest"):
            self.reset((tp.topic, tp.partition) for tp in partitions)
        else:
            self._warn(
                NoOffsetForPartitionError(", ".join(f"{tp.topic}-{tp.partition}" for tp in partitions))
            )

    async def _out_of_range(self, refused: Mapping[TopicPartition, int], timeout_ms: int) -> list[OutOfRange]:
        """The refused positions whose log bounds are known; the others are fetched again at the same
        position (the bounds were not answered in time: a transient error, logged like a poll error, or
        the partition is gone for now)."""
        try:
            bounds = await asyncio.wait_for(
                self.log_bounds([(tp.topic, tp.partition) for tp in refused]), LOG_BOUNDS_TIMEOUT_S
            )
        except (LogBoundsUnanswered, TimeoutError) as exc:
            self._warn(
                exc
                if isinstance(exc, LogBoundsUnanswered)
                else LogBoundsUnanswered(f"{self.cluster}: {exc!r}")
            )
            await asyncio.sleep(min(POLL_ERROR_BACKOFF_S, timeout_ms / 1000))
            bounds = {}
        known = []
        for tp, offset in refused.items():
            found = bounds.get((tp.topic, tp.partition))
            if found is None:
                self.seek(tp.topic, tp.partition, offset)
            else:
                known.append(OutOfRange(tp.topic, tp.partition, offset, *found))
        return known

    def _warn(self, exc: Exception) -> None:
        now = time.monotonic()
        if now - self._warned.get(type(exc), -POLL_WARNING_INTERVAL_S) >= POLL_WARNING_INTERVAL_S:
            self._warned[type(exc)] = now
            log.warning(
                "Failure during poll from %s (repeats not logged for %.0f s): %s",
                self.cluster,
                POLL_WARNING_INTERVAL_S,
                exc,
            )

    async def log_bounds(
        self, partitions: Iterable[tuple[str, int]]
    ) -> dict[tuple[str, int], tuple[int, int]]:
        """``{(topic, partition): (log start, log end)}``; partitions the cluster does not have are left
        out. One ListOffsets round trip per bound kind; a Kafka error raises :class:`LogBoundsUnanswered`."""
        wanted = list(partitions)
        if not wanted:
            return {}
        try:
            client = seam.consumer_client(self._consumer)
            cluster = await client.fetch_all_metadata()  # answers unassigned topics too
            tps = [TopicPartition(t, p) for t, p in wanted if p in (cluster.partitions_for_topic(t) or ())]
            if not tps:
                return {}
            # The client asks offsets only of topics its own metadata tracks, and learns an untracked
            # one per retry (100 ms each: 10 s for 100 topics); one metadata update tracks them all.
            untracked = {tp.topic for tp in tps}.difference(seam.client_topics(client))
            if untracked:
                await client.set_topics(seam.client_topics(client) | untracked)
            starts = await self._consumer.beginning_offsets(tps)
            ends = await self._consumer.end_offsets(tps)
        except KafkaError as exc:
            raise LogBoundsUnanswered(f"{self.cluster} did not answer log offsets: {exc}") from exc
        return {(tp.topic, tp.partition): (starts[tp], ends[tp]) for tp in tps}

    async def close(self) -> None:
        metrics, self._metrics = self._metrics, None
        if metrics is not None:
            metrics.close()
        if self._started:
            self._started = False
            await self._consumer.stop()
