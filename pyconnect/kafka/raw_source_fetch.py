"""A mirror's source consumer fetching record batches as bytes: the fetch half of the raw mirror path.

:class:`RawSourceFetch` drives a :class:`~pyconnect.kafka.source_consumer.SourceConsumer` whose
partitions it fetches itself with :func:`~pyconnect.kafka.raw_batches_io.fetch_raw_session`. The consumer
keeps everything but the fetching: assignment, metadata, positions (read from it, moved with its
``seek``), offset resets by ``auto.offset.reset`` (aiokafka resets paused partitions too) and the
log bounds of refused positions. Its partitions are paused so that aiokafka's own fetcher never
fetches them (and never decodes a record).

Contract of :meth:`RawSourceFetch.fetch`:

- One ``FetchRequest`` per leader for the assigned partitions that have a position, sent together,
  with the consumer's ``fetch.max.wait.ms`` (at most the poll timeout), ``fetch.min.bytes``,
  ``fetch.max.bytes``, ``max.partition.fetch.bytes`` and ``isolation.level``. It returns, per
  partition that answered without error, the position it was fetched from and the partition's
  :class:`~pyconnect.kafka.raw_batches_io.RawFetch` (records left as bytes); it moves no position:
  the caller seeks past what it takes (:meth:`advance`), so a cancelled fetch loses nothing.
- Each leader's requests run in an incremental fetch session (KIP-227,
  :class:`~pyconnect.kafka.fetch_session.FetchSession`, as Java's consumer; ``sessions=False``:
  every request full and sessionless, as before). The first request to a leader is full; then a
  request carries only the partitions added to that leader or whose position moved, and forgets
  those that left it (a leader change, a revocation, a partition waiting for a reset); the broker
  answers only partitions with records, a changed high watermark or log start offset, or an error.
  A partition of the session absent from a clean incremental answer was answered with no news (its
  "answered" mark, read by ``SourceConsumer.unanswered``, is set as for one answered). A failed or
  cancelled request, a top-level error (``FETCH_SESSION_ID_NOT_FOUND``,
  ``INVALID_FETCH_SESSION_EPOCH`` after an eviction or a broker restart: not logged, the next
  request is full) or answers dropped by a raised error make that leader's next request full, so no
  answer is lost to the session: records are found again at the fetch offset the broker holds.
- The high watermark and last stable offset of each answer are stored on the consumer's partition
  state (``records-lag`` and the mirror's end-offset gauges read them), from stale answers too (a
  session's broker repeats them only once they change); the records bytes are
  counted as fetched bytes in the consumer's client metrics, the records taken as consumed.
- Errors, as the record path's ``SourceConsumer.poll``: an ``OFFSET_OUT_OF_RANGE`` partition raises
  :class:`~pyconnect.kafka.source_consumer.PositionOutOfRange` with its log bounds, carrying the
  other partitions' answers in ``raw``; a partition refused READ is held back with its topic
  (``SourceConsumer.refuse_read``: left out of the fetches until its next probe); a leader
  change or missing metadata (``NOT_LEADER_OR_FOLLOWER``, ``UNKNOWN_TOPIC_OR_PARTITION``, fenced
  epochs ...) refreshes the metadata and the partition is fetched again next time; a failed request
  (or another top-level error) is logged at a bounded rate, followed by a short pause. Partitions
  without a position are placed by the consumer's reset (``none``: logged, as the record path's
  poll does).
- :meth:`prefetch` starts the next fetch at once from the current positions (one fetch in flight at
  most, so the memory held is bounded by two fetches' ``fetch.max.bytes``) while the caller hands
  the previous one on; the next :meth:`fetch` takes its answer, dropping the partitions moved since
  (a seek, a truncation) as stale. :meth:`cancel_prefetch` cancels it; a cancelled :meth:`fetch`
  cancels it too.
- :meth:`hold` keeps the part of an answer the caller did not take (a poll capped by
  ``max.poll.records``), as Java's consumer keeps the rest of a completed fetch: the next
  :meth:`fetch` returns the held answers whose partition is still at the held position (a seek drops
  one) and nothing else, without a request; a prefetch meanwhile fetches a held partition from where
  its held bytes end, so the broker's next answer is there when they are used up. Without it a
  100-byte-record mirror fetched each 1 MB again for every 60 KB batch it took.
- :meth:`close` cancels the prefetch and ends each leader's session on the broker (one closing
  request per leader, sent together, as Java's consumer does on close; waited for at most
  ``SESSION_CLOSE_TIMEOUT_S``, failures ignored: a broker evicts a session it no longer hears from,
  but holds its cache slot until then, and a worker's rebalances start many tasks).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from aiokafka import TopicPartition
from aiokafka.errors import KafkaError, OffsetOutOfRangeError, for_code

from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.access import access_error
from pyconnect.kafka.fetch_session import (
    FETCH_SESSION_ID_NOT_FOUND,
    INVALID_FETCH_SESSION_EPOCH,
    FetchSession,
)
from pyconnect.kafka.raw_batches_io import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    RawFetch,
    RawFetchResponse,
    fetch_raw_session,
)
from pyconnect.kafka.source_consumer import POLL_ERROR_BACKOFF_S, PositionOutOfRange, SourceConsumer

AIOKAFKA_FETCHER_WAKE_S = 5.0
"""The longest aiokafka's own fetcher routine sleeps under a raw fetch when nothing wakes it."""

FETCH_SESSIONS = True
"""Whether :class:`RawSourceFetch` keeps incremental fetch sessions (KIP-227) by default."""

SESSION_CLOSE_TIMEOUT_S = 1.0
"""The longest :meth:`RawSourceFetch.close` waits for the brokers to end its fetch sessions."""

SESSION_ERRORS = frozenset((FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH))


@dataclass(frozen=True, slots=True)
class FetchedPartition:
    """One partition's answer and the position it was fetched from."""

    topic: str
    partition: int
    position: int
    fetch: RawFetch


class RawSourceFetch:
    """Fetches the assigned partitions of ``consumer`` as bytes; see the module docstring."""

    def __init__(self, consumer: SourceConsumer, *, sessions: bool = FETCH_SESSIONS) -> None:
        self._source = consumer
        self.sessions = sessions
        self._sessions: dict[int, FetchSession[TopicPartition]] = {}
        self._client: Any = consumer._consumer
        fetcher = seam.consumer_fetcher(self._client)
        isolation, max_wait_ms, min_bytes, max_bytes, partition_max_bytes = seam.fetcher_settings(fetcher)
        self.read_committed = isolation == READ_COMMITTED
        self._max_wait_ms = int(max_wait_ms)
        self._min_bytes = int(min_bytes)
        self._max_bytes = int(max_bytes)
        self._partition_max_bytes = int(partition_max_bytes)
        # aiokafka's fetcher only resets positions here (every partition is paused), and is woken for
        # that; its periodic wake-up (consumer_timeout_ms, 200 ms) walks every assigned partition for
        # nothing: 2,000 partitions per task made it most of an idle mirror's CPU.
        seam.slow_fetcher_wakeup(fetcher, AIOKAFKA_FETCHER_WAKE_S)

        self._ahead: asyncio.Task[list[FetchedPartition]] | None = None
        self._held: dict[TopicPartition, tuple[FetchedPartition, int]] = {}

    def prefetch(self, timeout_ms: int) -> None:
        """Start the next fetch now (see the module docstring)."""
        if self._ahead is None:
            self._ahead = asyncio.create_task(self._fetch(timeout_ms), name="raw-source-prefetch")

    def hold(self, answer: FetchedPartition, position: int, rest: int, end: int) -> None:
        """Keep ``answer``'s batches from byte ``rest`` on, which start at offset ``position`` and end
        before ``end``, for the next :meth:`fetch` (see the module docstring). An answer listing aborted
        transactions is kept whole (its batches before ``position`` are skipped when taken again): a
        ``read_committed`` reader learns from their abort markers which transactions ended."""
        fetch = answer.fetch
        if not fetch.aborted_transactions:  # else the walk over aborted transactions needs the markers before
            fetch = dataclasses.replace(fetch, records=memoryview(fetch.records)[rest:])
        held = FetchedPartition(answer.topic, answer.partition, position, fetch)
        self._held[TopicPartition(answer.topic, answer.partition)] = (held, end)

    def _take_held(self) -> list[FetchedPartition]:
        """The held answers whose partition is still at the held position; none is held after."""
        held, self._held = self._held, {}
        return self._current([answer for answer, _end in held.values()]) if held else []

    async def cancel_prefetch(self) -> None:
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead.cancel()
            with contextlib.suppress(BaseException):
                await ahead

    async def close(self) -> None:
        """Cancel the prefetch, drop what is held and end the fetch sessions (see the module docstring)."""
        self._held = {}
        await self.cancel_prefetch()
        closings = [
            fetch_raw_session(
                seam.consumer_client(self._client),
                node,
                {},
                session_id=request.session_id,
                session_epoch=request.epoch,
                max_wait_ms=0,
            )
            for node, session in self._sessions.items()
            if (request := session.closing()) is not None
        ]
        if closings:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(SESSION_CLOSE_TIMEOUT_S):
                    await asyncio.gather(*closings, return_exceptions=True)

    def _current(self, fetched: list[FetchedPartition]) -> list[FetchedPartition]:
        """The answers whose partition is still at the position they were fetched from."""
        states = seam.consumer_subscription(self._client).subscription
        if states is None:
            return []
        assignment = states.assignment
        current = []
        for answer in fetched:
            state = assignment.state_value(TopicPartition(answer.topic, answer.partition))
            if state is not None and state.has_valid_position and state.position == answer.position:
                current.append(answer)
        return current

    async def fetch(self, timeout_ms: int) -> list[FetchedPartition]:
        held = self._take_held()
        if held:
            return held
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return await self._fetch(timeout_ms)
        try:
            return self._current(await ahead)
        except PositionOutOfRange as refused:
            refused.raw = self._current(refused.raw)
            raise

    def pause(self, partitions: Iterable[tuple[str, int]]) -> None:
        """Keep aiokafka's fetcher off these (assigned) partitions."""
        self._client.pause(*(TopicPartition(t, p) for t, p in partitions))

    def advance(self, topic: str, partition: int, position: int, records: int) -> None:
        """The partition's records before ``position`` are taken, ``records`` of them copied or
        decoded (a seek, and the consumed-records metric). Only the position moves: aiokafka's
        ``seek`` would also wake its fetcher, which then walks every assigned partition to find
        nothing to fetch (they are all paused), once per partition taken."""
        tp = TopicPartition(topic, partition)
        seam.consumer_subscription(self._client).seek(tp, position)
        seam.fetcher_drop_buffered(seam.consumer_fetcher(self._client), tp)
        metrics = self._source._metrics
        if metrics is not None:
            metrics.seeked(topic, partition, position)
            metrics.consumed(records)

    async def _fetch(self, timeout_ms: int) -> list[FetchedPartition]:
        client = self._client
        assignment = seam.consumer_subscription(client).subscription
        if assignment is None:
            await asyncio.sleep(min(POLL_ERROR_BACKOFF_S, timeout_ms / 1000))
            return []
        states = assignment.assignment
        cluster = seam.consumer_client(client).cluster
        by_leader: dict[int, dict[TopicPartition, int]] = {}
        unplaced: list[TopicPartition] = []
        waiting: list[asyncio.Future[Any]] = []
        stale_metadata = False
        held = self._held
        kept_back = self._source.refusals.held()
        for tp in states.tps:
            if kept_back and tp in kept_back:
                continue
            state = states.state_value(tp)
            if not state.has_valid_position:
                if state.awaiting_reset:
                    waiting.append(state.wait_for_position())
                else:
                    unplaced.append(tp)
                continue
            leader = cluster.leader_for_partition(tp)
            if leader is None or leader < 0:
                stale_metadata = True
                continue
            position = state.position
            if held:
                kept = held.get(tp)
                if kept is not None and kept[0].position == position:
                    position = kept[1]  # fetched from where the held bytes end
            by_leader.setdefault(leader, {})[tp] = position
        if stale_metadata:
            seam.consumer_client(client).force_metadata_update()
        if unplaced:
            self._source._unplaced(unplaced)
        if not by_leader:
            pause = min(POLL_ERROR_BACKOFF_S, timeout_ms / 1000)
            if waiting:
                await asyncio.wait(waiting, timeout=pause, return_when=asyncio.FIRST_COMPLETED)
            else:
                await asyncio.sleep(pause)
            return []
        isolation = READ_COMMITTED if self.read_committed else READ_UNCOMMITTED
        max_wait_ms = max(0, min(self._max_wait_ms, timeout_ms))
        leaders = list(by_leader)
        answers = await asyncio.gather(
            *(
                self._fetch_from(
                    leader, by_leader[leader], max_wait_ms=max_wait_ms, isolation_level=isolation
                )
                for leader in leaders
            ),
            return_exceptions=True,
        )
        try:
            fetched, refused, failure = self._take(states, by_leader, leaders, answers)
        except BaseException:
            for session in self._sessions.values():  # answers dropped: the broker must repeat them
                session.handle_failure()
            raise
        if failure is not None:
            self._source._warn(failure if isinstance(failure, KafkaError) else KafkaError(repr(failure)))
            if not fetched and not refused:
                await asyncio.sleep(min(POLL_ERROR_BACKOFF_S, timeout_ms / 1000))
        if refused:
            known = await self._source._out_of_range(refused, timeout_ms)
            if known:
                raise PositionOutOfRange(known, raw=fetched)
        return fetched

    def _take(
        self,
        states: Any,
        by_leader: dict[int, dict[TopicPartition, int]],
        leaders: list[int],
        answers: list[tuple[RawFetchResponse, bool] | BaseException],
    ) -> tuple[list[FetchedPartition], dict[TopicPartition, int], BaseException | None]:
        """The answers of one fetch per leader: the partitions fetched, those refused as out of range
        (with the position refused) and the last failure."""
        client = self._client
        fetched: list[FetchedPartition] = []
        refused: dict[TopicPartition, int] = {}
        failure: BaseException | None = None
        metrics = self._source._metrics
        answered_ms = int(time.time() * 1000)
        for leader, answer in zip(leaders, answers, strict=True):
            if isinstance(answer, BaseException):
                if not isinstance(answer, Exception):
                    raise answer  # cancelled
                failure = answer
                continue
            response, quiet_answered = answer
            if response.error_code and response.error_code not in SESSION_ERRORS:
                failure = for_code(response.error_code)(f"fetch from node {leader}")
            positions = by_leader[leader]
            for tp, result in response.partitions.items():
                position = positions.get(tp)
                if position is None:
                    continue
                if result.error_code:
                    error = for_code(result.error_code)
                    if error is OffsetOutOfRangeError:
                        refused[tp] = position
                        continue
                    if access_error(error(tp.topic), self._source.cluster) is not None:
                        self._source.refuse_read(tp.topic)  # the other partitions go on
                        continue
                    seam.consumer_client(client).force_metadata_update()
                    failure = error(f"{tp.topic}-{tp.partition}")
                    continue
                state = states.state_value(tp)
                if state is None:
                    continue
                # A session's broker repeats neither, so they are kept even from a stale answer.
                state.highwater = result.high_watermark
                if result.last_stable_offset >= 0:
                    state.lso = result.last_stable_offset
                if not self._still_at(tp, state, position):
                    continue  # moved while the fetch was out (a seek): that answer is stale
                state.timestamp = answered_ms  # "last fetch answered" (SourceConsumer.unanswered)
                if metrics is not None and result.records:
                    metrics.fetched(len(result.records))
                fetched.append(FetchedPartition(tp.topic, tp.partition, position, result))
            if quiet_answered and len(response.partitions) < len(positions):
                answers_of = response.partitions
                for tp, position in positions.items():
                    if tp not in answers_of:  # in the session, no news: answered
                        state = states.state_value(tp)
                        if state is not None and self._still_at(tp, state, position):
                            state.timestamp = answered_ms
        return fetched, refused, failure

    def _still_at(self, tp: TopicPartition, state: Any, fetched_from: int) -> bool:
        """Whether an answer fetched from ``fetched_from`` still fits ``tp``'s position: the position
        itself, or the end of bytes held from the position (the answer then follows them)."""
        if not state.has_valid_position:
            return False
        if state.position == fetched_from:
            return True
        kept = self._held.get(tp)
        return kept is not None and kept[0].position == state.position and kept[1] == fetched_from

    async def _fetch_from(
        self, leader: int, positions: dict[TopicPartition, int], *, max_wait_ms: int, isolation_level: int
    ) -> tuple[RawFetchResponse, bool]:
        """One leader's fetch in its session; with whether the session partitions absent from the
        response were answered (no news)."""
        session = self._sessions.get(leader)
        if session is None:
            session = self._sessions[leader] = FetchSession(leader, enabled=self.sessions)
        request = session.build(positions, self._partition_max_bytes)
        try:
            response = await fetch_raw_session(
                seam.consumer_client(self._client),
                leader,
                request.send,
                session_id=request.session_id,
                session_epoch=request.epoch,
                forgotten=request.forget,
                max_wait_ms=max_wait_ms,
                min_bytes=self._min_bytes,
                max_bytes=self._max_bytes,
                isolation_level=isolation_level,
            )
        except BaseException:
            session.handle_failure()
            raise
        return response, session.handle_response(
            response.error_code, response.session_id, response.partitions
        )
