"""MirrorSourceTask: replicate the assigned partitions of a source cluster (spec §3.1); its connector is
connectors.mirror.source.MirrorSourceConnector.

Size: over 600 lines because the record path, the raw path and the gap handling share one task state;
the raw poll and the target-gap check are the parts to move out next (conditions already live in
connectors.mirror.source_watch).

Task contract (Java's ``MirrorSourceTask``):

* ``start`` assigns ``task.assigned.partitions`` on a consumer of the source cluster, seeks each
  partition with a committed Connect offset ``o >= 0`` to ``o + 1`` (offsets are read under Java's
  partition map, so a Java deployment's offsets are resumed) and leaves the others to
  ``auto.offset.reset``.
* Gaps (connectors.mirror.truncation, beyond Java, which skips them in silence): from ``start`` (a
  check of its own, bounded by ``TARGET_CHECK_TIMEOUT_S``: ``start`` never waits for the target, and
  polls copy nothing before the check is done, or it would see the new copies), a partition whose remote
  partition on the target is missing or empty behind its committed offset (the target was rebuilt);
  in ``poll``, a position the source refuses as out of range (records deleted before they were
  copied, or the topic recreated). Each gap is logged at WARN naming the
  task, the topic-partition and the offsets, counted in the ``truncated-record-count`` and
  ``truncation-count`` metrics, and handled by ``pyconnect.mirror.truncation.policy``: ``continue``
  (the default) resumes where Java's flow would (the log start, or after the committed offset for a
  rebuilt target; a refused position resumes at the log start whatever the consumer's
  ``auto.offset.reset``, which places only partitions without a committed offset); ``fail`` fails the
  task with every gap of the poll in its trace and does not move past them. All refused positions of
  one poll are handled together, with the same poll's records of the other partitions.
* ``poll`` converts one consumer batch in one pass: remote topic, same partition, key/value/headers as
  raw bytes (BYTES schemas: run it with ByteArrayConverter), same timestamp, source partition
  ``{cluster, partition, topic}`` and offset ``{offset}``.
* Raw path (:mod:`connectors.mirror.raw_copy`, beyond Java): when the worker allows raw batches
  (ByteArrayConverter everywhere, no transformation) and ``pyconnect.mirror.raw.batches.enable`` is
  not false, ``poll`` fetches record batches as bytes (:mod:`pyconnect.kafka.raw_source_fetch`: the
  consumer keeps assignment, positions, resets and the out-of-range handling above, its partitions
  paused) and returns whole batches as :class:`~pyconnect.api.source.RawRecordBatch` items beside
  the records of the batches it decodes; ``commit_raw_batch`` queues the batch's offset syncs as one
  run and counts its records. Metrics of a copied batch: ``byte-count`` counts the batch's bytes (not
  its value bytes) and its record ages and replication latency are those of its first and max
  timestamps (an approximation: the records between are not read).
* Refusals (:class:`~pyconnect.errors.KafkaAccessError`, named after the cluster): the connector keeps
  RUNNING with a condition and retries (connectors.mirror.scheduler); Java logs them and leaves the
  connector RUNNING (no tasks) without a word in its status. A task stays
  RUNNING and retrying, as Java's, but says why on its condition board (:mod:`connectors.mirror.source_watch`:
  its RUNNING trace and ``GET /mirrors``): a refused login of its clients (SOURCE_AUTH_FAILED, tried
  again with backoff), a topic refused READ (ACL_DENIED; its partitions held back and probed, the
  other topics flowing), a deleted topic (TOPIC_DELETED), an unreachable source (SOURCE_UNREACHABLE)
  and every gap (TRUNCATED); each is cleared by the repair. Other refusals still fail the task.
* Metrics (:mod:`connectors.mirror.metrics`, in the worker's hub from ``start`` to ``stop``): ages
  and value bytes per polled partition batch, count and replication latency per acknowledged batch.
* ``commit_record`` feeds the :class:`OffsetSyncWriter` (upstream offset, downstream offset from the
  producer's metadata); ``commit`` promotes delayed syncs. Offset syncs go to partition 0 of
  ``mm2-offset-syncs.<other alias>.internal`` through the task's own producer on the
  ``offset-syncs.topic.location`` cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping, Sequence
from operator import attrgetter, countOf
from typing import Any

import pyconnect
from connectors.mirror import raw_copy, reachability, truncation
from connectors.mirror.config import (
    MirrorSourceConfig,
    MirrorSourceTaskConfig,
)
from connectors.mirror.metrics import MirrorSourceMetrics
from connectors.mirror.offsets.sync_batches import send_offset_syncs
from connectors.mirror.offsets.sync_writer import OffsetSyncWriter, SendDone
from connectors.mirror.record_copy import copied
from connectors.mirror.records import (
    OFFSET_KEY,
    PARTITION_KEY,
    TOPIC_KEY,
    OffsetSync,
    TopicPartition,
    decode_topic_partition,
    unwrap_offset,
    wrap_partition,
)
from connectors.mirror.source_watch import SourceWatch
from pyconnect.api.source import (
    RawBatchTarget,
    RawRecordBatch,
    RecordMetadata,
    SourceRecord,
    SourceTask,
)
from pyconnect.concurrency import TaskSet, cancel_and_wait
from pyconnect.conditions import ConditionBoard
from pyconnect.errors import AuthenticationError, ConnectError
from pyconnect.kafka.access import cluster_label
from pyconnect.kafka.admin_client import start_producer
from pyconnect.kafka.raw_source_fetch import RawSourceFetch
from pyconnect.kafka.source_consumer import PositionOutOfRange, SourceConsumer, log_bounds_of
from pyconnect.kafka.source_faults import principal_of, unreachable
from pyconnect.metrics.client_metrics import value_bytes
from pyconnect.mirror_status.core import (
    target_latency_ms,
)

log = logging.getLogger(__name__)

_SOURCE_PARTITION = attrgetter("source_partition")
"""Read in a C loop over a batch whose value bytes the consumer did not measure."""


def _source_offset(record: SourceRecord) -> int | None:
    """The source offset a record of this task carries (``None`` for a record of another origin)."""
    offset = record.source_offset
    if type(offset) is not dict:  # the task's own records carry a dict; no ABC check on this path
        offset = dict(offset) if isinstance(offset, Mapping) else {}
    found = offset.get(OFFSET_KEY)
    return found if type(found) is int else None


TASK_INDEX = "task.index"


def offset_syncs_cluster(config: MirrorSourceConfig, client_config: Mapping[str, str]) -> str:
    """The cluster of the offset-syncs topic, as error messages name it (``target cluster B (...)``)."""
    side = str(config.offset_syncs_topic_location)
    alias = config.source_cluster_alias if side == "source" else config.target_cluster_alias
    return cluster_label(client_config, alias, side)


STOP_SYNC_DRAIN_S = 5.0
TARGET_CHECK_TIMEOUT_S = 30.0
"""Bound of the check for a rebuilt target made at start; past it the check is skipped with a WARN."""
OPEN_BACKOFF_FIRST_S = 1.0
OPEN_BACKOFF_MAX_S = 5.0
"""A task whose clients could not open tries again after 1 s, then twice as long each time up to this."""
TOPIC_CHECK_TIMEOUT_S = 8.0
"""Bound of one topic check (connectors.mirror.source_watch); past it the check is simply done again."""


def _open_failure(exc: BaseException, on_source: bool) -> str | None:
    """The condition a client's failed start is (``None``: none, it fails the task)."""
    side = "SOURCE" if on_source else "TARGET"
    if isinstance(exc, AuthenticationError):
        return f"{side}_AUTH_FAILED"
    return f"{side}_UNREACHABLE" if unreachable(exc) else None


def _open_failure_message(exc: BaseException, cluster: str, config: Mapping[str, Any]) -> str:
    if isinstance(exc, AuthenticationError):
        return str(exc)
    return f"{cluster} could not be reached to start client '{config.get('client.id') or ''}': {exc}"


class MirrorSourceTask(SourceTask):
    """Replicates the source partitions of ``task.assigned.partitions``; see the module docstring."""

    java_class = "org.apache.kafka.connect.mirror.MirrorSourceTask"

    def __init__(self) -> None:
        self._consumer: SourceConsumer | None = None
        self._producer: Any = None
        self._writer: OffsetSyncWriter | None = None
        self._sends = TaskSet(log)
        self._sync_outbox: list[tuple[OffsetSync, SendDone]] = []
        self._sync_pump: asyncio.Task[None] | None = None
        self._stopping = False
        self._routes: dict[tuple[str, int], tuple[str, dict[str, Any]]] = {}
        self._metrics: MirrorSourceMetrics | None = None
        self._target_check: asyncio.Task[None] | None = None
        self._watch: SourceWatch | None = None
        self._observed_at = 0.0
        self._checks = TaskSet(log)
        self._open_retry_at: float | None = None
        self._open_backoff_s = OPEN_BACKOFF_FIRST_S
        self.partitions: list[TopicPartition] = []
        self._raw_target: RawBatchTarget | None = None
        self._raw: RawSourceFetch | None = None
        self._raw_turn = 0

    def accept_raw_batches(self, target: RawBatchTarget | None) -> bool:
        """The worker's answer on raw batches (connectors.mirror.raw_copy), before ``start``: used
        unless ``pyconnect.mirror.raw.batches.enable`` is false (an invalid value fails ``start``)."""
        config = getattr(getattr(self, "context", None), "config", None) or {}
        try:
            wanted = raw_copy.enabled(config.get(raw_copy.RAW_BATCHES_CONFIG))
        except ValueError:
            wanted = False
        self._raw_target = target if wanted else None
        return self._raw_target is not None

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    async def start(self, props: Mapping[str, str]) -> None:
        config = MirrorSourceTaskConfig({k: v for k, v in props.items() if v is not None})
        try:
            self._truncation_policy = truncation.policy(props.get(truncation.TRUNCATION_POLICY_CONFIG))
            unreachable_after = reachability.unreachable_after_ms(
                props.get(reachability.UNREACHABLE_AFTER_CONFIG), target_latency_ms(props)
            )
            raw_enabled = raw_copy.enabled(props.get(raw_copy.RAW_BATCHES_CONFIG))
        except ValueError as exc:
            raise ConnectError(str(exc)) from None
        self._target_config = config.target_consumer_config("replication-target-probe")
        self._target_alias = config.target_cluster_alias
        self._source_alias = config.source_cluster_alias
        self._policy = config.replication_policy
        self._poll_timeout_ms = int(config.consumer_poll_timeout_ms)
        self._name = f"{props.get('name', 'MirrorSourceConnector')}-{props.get(TASK_INDEX, '?')}"
        self.partitions = list(
            dict.fromkeys(decode_topic_partition(p) for p in config.task_assigned_partitions)
        )
        self._task_config = config
        self._raw_enabled = raw_enabled
        consumer_config = self._consumer_config = config.source_consumer_config("replication-consumer")
        label = cluster_label(consumer_config, self._source_alias, "source")
        client = str(consumer_config.get("client.id") or "")
        self._watch = SourceWatch(
            self._name,
            self._source_alias,
            client,
            self._conditions(),
            reachability.Reachability(label, client, unreachable_after),
            cluster=label,
            principal=principal_of(consumer_config),
        )
        await self._open()

    async def _open(self) -> bool:
        """Open the offset-syncs producer and the replication consumer, then place the partitions (True
        once done). A refused login or a cluster found unreachable fails no task: it is a condition
        (SOURCE_AUTH_FAILED or SOURCE_UNREACHABLE; TARGET_ for a producer on the target;
        connectors.mirror.source_watch) and :meth:`poll` tries again after :data:`OPEN_BACKOFF_FIRST_S`,
        doubling up to :data:`OPEN_BACKOFF_MAX_S`, so a config put right, a password restored on the
        cluster or a broker started again resumes the copy (Java's task polls on). Other failures
        raise, as before."""
        config, watch = self._task_config, self._watch
        assert watch is not None
        if config.emit_offset_syncs_enabled and self._producer is None:
            producer_config = config.offset_syncs_topic_producer_config()
            label = offset_syncs_cluster(config, producer_config)
            on_source = str(config.offset_syncs_topic_location) == "source"
            try:
                producer = await start_producer(producer_config, label)
            except Exception as exc:
                code = _open_failure(exc, on_source)
                if code is None:
                    raise
                return self._open_failed(
                    code,
                    _open_failure_message(exc, label, producer_config),
                    self._source_alias if on_source else self._target_alias,
                    str(producer_config.get("client.id") or ""),
                )
            if self._stopping:
                await producer.stop()
                return False
            self._producer = producer
            self._offset_syncs_topic = config.offset_syncs_topic
            self._writer = OffsetSyncWriter(self._send_offset_sync, config.offset_lag_max, name=self._name)
        consumer = SourceConsumer(self._consumer_config, watch.cluster)
        try:
            await consumer.start()
        except BaseException as exc:
            await consumer.close()
            code = _open_failure(exc, on_source=True)
            if code is None:
                raise
            message = _open_failure_message(exc, watch.cluster, self._consumer_config)
            return self._open_failed(code, message, self._source_alias, watch.client)
        if self._stopping:
            await consumer.close()
            return False
        self._consumer = consumer
        self._open_retry_at = None
        watch.opened()
        await self._place(consumer)
        return True

    def _open_failed(self, code: str, message: str, alias: str, client: str) -> bool:
        """A client could not open (see :meth:`_open`): the condition, and the time of the next try."""
        if self._open_retry_at is None:
            self._open_backoff_s = OPEN_BACKOFF_FIRST_S
        else:
            self._open_backoff_s = min(OPEN_BACKOFF_MAX_S, self._open_backoff_s * 2)
        self._open_retry_at = time.monotonic() + self._open_backoff_s
        if self._watch is not None:
            self._watch.open_failed(code, message, cluster=alias, client=client)
        return False

    async def _reopen(self) -> None:
        """:meth:`poll` while the clients are not open: the next try once due (waits at most one poll
        timeout for it)."""
        due = self._open_retry_at
        wait = 0.0 if due is None else due - time.monotonic()
        if wait > 0:
            await asyncio.sleep(min(wait, self._poll_timeout_ms / 1000))
            if wait > self._poll_timeout_ms / 1000:
                return
        if not self._stopping:
            await self._open()

    async def _place(self, consumer: SourceConsumer) -> None:
        """Assign the partitions, seek those with committed offsets and start the target check."""
        config = self._task_config
        if self._raw_enabled and self._raw_target is not None:
            self._raw = RawSourceFetch(consumer)
        for tp in self.partitions:
            self._route(tp.topic, tp.partition)
        hub = getattr(getattr(self, "context", None), "metrics", None)
        if hub is not None and hub.recording:
            consumer.measure(hub)
            sources = {self._routes[(tp.topic, tp.partition)][0]: tp.topic for tp in self.partitions}

            def end_offset(remote: str, partition: int) -> int | None:
                topic = sources.get(remote)
                return consumer.highwater(topic, partition) if topic is not None else None

            self._metrics = MirrorSourceMetrics(
                hub,
                self._source_alias,
                config.target_cluster_alias,
                [(self._routes[(tp.topic, tp.partition)][0], tp.partition) for tp in self.partitions],
                end_offset=end_offset,
            )
        wrapped = [self._routes[tp][1] for tp in self.partitions]
        stored = await self.context.offset_storage_reader.offsets(wrapped) if wrapped else []
        consumer.assign(self.partitions)
        if self._raw is not None:
            self._raw.pause(self.partitions)
        uncommitted: list[TopicPartition] = []
        resumed: dict[TopicPartition, int] = {}
        for tp, offset in zip(self.partitions, stored, strict=True):
            committed = unwrap_offset(offset)
            if committed < 0:
                uncommitted.append(tp)
                continue
            resumed[tp] = committed
            consumer.seek(tp.topic, tp.partition, committed + 1)
            if self._metrics is not None:
                self._metrics.resumed(self._routes[(tp.topic, tp.partition)][0], tp.partition, committed)
        consumer.reset((tp.topic, tp.partition) for tp in uncommitted)
        if resumed:  # a start never waits for the target; poll copies once it is checked
            self._target_check = asyncio.create_task(self._check_target(resumed))
        log.info(
            "%s replicating %d topic-partitions %s->%s (%d without committed offsets, %s): %s.",
            self._name,
            len(self.partitions),
            self._source_alias,
            config.target_cluster_alias,
            len(uncommitted),
            "record batches copied as bytes where they can be"
            if self._raw is not None
            else "record by record",
            ",".join(map(str, self.partitions)),
        )

    async def _check_target(self, committed: Mapping[TopicPartition, int]) -> None:
        """Report the partitions whose remote partition is missing or empty behind their committed
        offset (a rebuilt target); the ``fail`` policy raises, ``continue`` keeps the seek. Runs as a
        task of its own after ``start``; :meth:`poll` copies nothing until it is done."""
        consumer = self._consumer
        if consumer is None:
            return
        try:
            remote, source = await asyncio.wait_for(self._bounds(consumer, committed), TARGET_CHECK_TIMEOUT_S)
        except (ConnectError, TimeoutError, OSError, RuntimeError) as exc:
            log.warning(
                "%s: could not check the target for partitions rebuilt behind the committed offsets: %s",
                self._name,
                exc,
            )
            return
        gaps = []
        for tp, offset in committed.items():
            bounds = remote.get((self._routes[(tp.topic, tp.partition)][0], tp.partition))
            start, end = source.get((tp.topic, tp.partition), (0, 0))
            gap = truncation.target_gap(
                tp.topic, tp.partition, offset, None if bounds is None else bounds[1], start, end
            )
            if gap is not None:
                gaps.append(gap)
        self._gaps(gaps)

    async def _bounds(
        self, consumer: SourceConsumer, committed: Mapping[TopicPartition, int]
    ) -> tuple[dict[tuple[str, int], tuple[int, int]], dict[tuple[str, int], tuple[int, int]]]:
        """Log bounds of the remote partitions (on the target) and of the source partitions."""
        remote = await log_bounds_of(
            self._target_config,
            cluster_label(self._target_config, self._target_alias, "target"),
            [(self._routes[(tp.topic, tp.partition)][0], tp.partition) for tp in committed],
        )
        return remote, await consumer.log_bounds((tp.topic, tp.partition) for tp in committed)

    def _gaps(self, gaps: Sequence[truncation.Gap]) -> None:
        """Report every gap (a WARN line each, metrics) and apply the policy to them together: under
        ``fail`` raise naming them all, without moving past any; else seek each to its resume offset (a
        rebuilt target's resume offset is the seek already made)."""
        failing = self._truncation_policy == truncation.FAIL
        for gap in gaps:
            log.warning(  # the subject names the partition: the log guard bounds repeats per subject
                "%s: %s; %s (%s=%s).",
                f"{self._name}, {gap.topic}-{gap.partition}",
                gap.message(),
                "failing the task" if failing else f"resuming at offset {gap.resume}",
                truncation.TRUNCATION_POLICY_CONFIG,
                self._truncation_policy,
            )
            if self._metrics is not None:
                remote = self._route(gap.topic, gap.partition)[0]
                moved = not failing and gap.kind != truncation.TARGET_REBUILT
                self._metrics.truncated(remote, gap.partition, gap.lost, gap.resume if moved else None)
        if self._watch is not None and gaps:
            self._watch.gaps(time.monotonic(), gaps)
        if failing and gaps:
            raise ConnectError(
                f"{self._name}: {'; '.join(g.message() for g in gaps)} "
                f"({truncation.TRUNCATION_POLICY_CONFIG}={truncation.FAIL})"
            )
        if self._consumer is not None:
            for gap in gaps:
                if gap.kind != truncation.TARGET_REBUILT:  # its resume offset is the start's seek
                    self._consumer.seek(gap.topic, gap.partition, gap.resume)

    def _out_of_range(self, refused: PositionOutOfRange) -> None:
        """Handle every position a poll met out of range at once (see :meth:`_gaps`)."""
        gaps = []
        for p in refused.partitions:
            gap = truncation.source_gap(p.topic, p.partition, p.position, p.log_start, p.log_end)
            if gap is not None:
                gaps.append(gap)
            elif self._consumer is not None:  # in range again (e.g. a leader change): fetch again
                self._consumer.seek(p.topic, p.partition, p.position)
        self._gaps(gaps)

    def _route(self, topic: str, partition: int) -> tuple[str, dict[str, Any]]:
        route = self._routes.get((topic, partition))
        if route is None:
            route = self._routes[(topic, partition)] = (
                self._policy.format_remote_topic(self._source_alias, topic),
                wrap_partition(topic, partition, self._source_alias),
            )
        return route

    async def _target_checked(self) -> bool:
        """Whether polls may copy: the start's target check is done (a ``fail`` raises here). Waits at
        most one poll timeout, so a stop is never held up; copying first would hide the gap (the
        target would hold the new records when asked)."""
        check = self._target_check
        if check is None:
            return True
        if not check.done():
            await asyncio.wait([check], timeout=self._poll_timeout_ms / 1000)
            if not check.done():
                return False
        self._target_check = None
        check.result()
        return True

    async def poll(self) -> list[SourceRecord | RawRecordBatch] | None:
        consumer = self._consumer
        if self._stopping:
            return None
        if consumer is None:  # a login was refused: try again once due
            if self._watch is not None:
                await self._reopen()
            return None
        if not await self._target_checked():
            return None
        if self._raw is not None:
            return await self._poll_raw(self._raw)
        try:
            batch = await consumer.poll(self._poll_timeout_ms)
        except PositionOutOfRange as refused:
            self._out_of_range(refused)
            batch = refused.batch  # the same poll's records of other partitions
        self._observe(consumer)
        if not batch or self._stopping:
            return None
        records: list[SourceRecord] = []
        metrics = self._metrics
        for tp, messages in batch.items():
            remote, source_partition = self._route(tp.topic, tp.partition)
            partition = tp.partition
            records.extend(copied(messages, source_partition, remote, partition))
            if metrics is not None and messages:
                metrics.record_polled(
                    remote,
                    partition,
                    [m.timestamp for m in messages],
                    value_bytes(messages),
                    messages[-1].offset,
                )
        return records or None  # type: ignore[return-value]

    async def _poll_raw(self, fetcher: RawSourceFetch) -> list[SourceRecord | RawRecordBatch] | None:
        """The raw path's poll (connectors.mirror.raw_copy): fetched batches copied or decoded, each
        partition's position moved past what was taken just before returning (nothing awaited after)."""
        target = self._raw_target
        assert target is not None
        try:
            fetched = await fetcher.fetch(self._poll_timeout_ms)
        except PositionOutOfRange as refused:
            self._out_of_range(refused)
            fetched = refused.raw  # the same fetch's answers for other partitions
        if self._consumer is not None:
            self._observe(self._consumer)
        if not fetched or self._stopping:
            return None
        items: list[SourceRecord | RawRecordBatch] = []
        metrics = self._metrics
        budget = self._consumer.max_poll_records if self._consumer is not None else None
        records_taken = 0  # max.poll.records caps a poll's records, as on the record path
        # ... shared among the partitions answered: a poll holding batches of several partitions lets
        # the worker fill each produce request with one batch of each (one per partition is the most a
        # request carries); a first partition taking the whole budget left one batch per request
        share = None if budget is None else max(1, -(-budget // len(fetched)))
        turn = self._raw_turn % len(fetched)  # the partition served first rotates: none starves
        self._raw_turn += 1
        fetched = fetched[turn:] + fetched[:turn]
        for answer in fetched:
            remote, source_partition = self._route(answer.topic, answer.partition)
            taken = raw_copy.take(
                answer.fetch,
                answer.position,
                target,
                read_committed=fetcher.read_committed,
                remote=remote,
                partition=answer.partition,
                source_partition=source_partition,
                max_records=None
                if budget is None or share is None
                else max(0, min(share, budget - records_taken)),
            )
            records_taken += taken.records
            items.extend(taken.items)
            if taken.rest is not None:  # the poll's max.poll.records reached: the rest for the next poll
                fetcher.hold(answer, taken.next_position, taken.rest, taken.end)
            if taken.next_position != answer.position:
                fetcher.advance(answer.topic, answer.partition, taken.next_position, taken.records)
            if metrics is not None:
                if taken.copied_batches or taken.decoded_batches:
                    metrics.raw_batches(remote, answer.partition, taken.copied_batches, taken.decoded_batches)
                if taken.timestamps and taken.last_offset is not None:
                    metrics.record_polled(
                        remote, answer.partition, taken.timestamps, taken.size, taken.last_offset
                    )
        if items:  # the next fetch goes out while these are sent
            fetcher.prefetch(self._poll_timeout_ms)
        return items or None

    def commit_raw_batch(self, batch: RawRecordBatch, base_offset: int) -> None:
        """A batch copied as bytes is acknowledged at ``base_offset``: its records are the consecutive
        offsets from ``batch.first_offset`` (one offset-sync run) and its metrics count them all."""
        if self._stopping:
            return
        last = batch.first_offset + batch.record_count - 1
        if self._metrics is not None:
            self._metrics.record_acknowledged(batch.topic, batch.kafka_partition, batch.record_count, last)
        writer = self._writer
        source = batch.source_partition
        if writer is None or source is None:
            return
        tp = TopicPartition(source[TOPIC_KEY], source[PARTITION_KEY])
        writer.queue_run(tp, batch.first_offset, batch.record_count, base_offset)
        writer.fire_pending_offset_syncs()

    def _observe(self, consumer: SourceConsumer) -> None:
        """At most once a second: the source conditions from what the consumer met (refused READs,
        late partitions, the topic check when due, the hold of old gaps; connectors.mirror.source_watch)."""
        watch = self._watch
        now = time.monotonic()
        if watch is None or now - self._observed_at < 1.0:
            return
        self._observed_at = now
        watch.read_refused(consumer.refused_topics())
        late = consumer.unanswered(watch.check_after_ms)
        if not late:
            watch.answered()
        wanted = watch.check_due(now, {topic for topic, _ in late})
        if wanted and not self._checks.running():
            self._checks.spawn(self._check_topics(consumer, wanted), name=f"{self._name}-topic-check")
        watch.late(now, consumer.unanswered(watch.reachability.after_ms) if late else [])
        watch.expire(now)

    async def _check_topics(self, consumer: SourceConsumer, topics: set[str]) -> None:
        """The topic check (connectors.mirror.source_watch), bounded by :data:`TOPIC_CHECK_TIMEOUT_S`."""
        try:
            check = await asyncio.wait_for(consumer.check_topics(topics), TOPIC_CHECK_TIMEOUT_S)
        except TimeoutError:
            return
        if self._watch is not None and not self._stopping:
            self._watch.checked(check, topics)

    def _conditions(self) -> ConditionBoard | None:
        """The task's conditions (pyconnect.conditions), ``None`` outside a worker."""
        return getattr(getattr(self, "context", None), "conditions", None)

    def _acknowledged(self, record: SourceRecord, written: int) -> None:
        """The metrics of ``record`` and the ``written`` (0: dropped or failed) records before it since
        the last call for its partition; keyed by the record as polled (Java's ``commitRecord`` sees the
        record before transformations)."""
        offset = _source_offset(record)
        if self._metrics is not None and offset is not None and record.kafka_partition is not None:
            self._metrics.record_acknowledged(record.topic, record.kafka_partition, written, offset)

    async def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        if self._stopping:
            return
        self._acknowledged(record, 0 if metadata is None else 1)
        if metadata is None:
            return
        writer = self._writer
        if writer is None:
            return
        partition, offset = record.source_partition, record.source_offset
        if partition is None or offset is None:
            return
        writer.maybe_queue_offset_syncs(
            TopicPartition(partition[TOPIC_KEY], partition[PARTITION_KEY]),
            offset[OFFSET_KEY],
            metadata.offset,
        )
        writer.fire_pending_offset_syncs()

    def commit_record_batch(
        self, records: Sequence[SourceRecord], topic: str, partition: int, base_offset: int
    ) -> None:
        """The batch form of ``commit_record``: one acknowledged producer batch holds records of one
        source partition (a remote partition has one source partition), copied to consecutive offsets."""
        if self._stopping or not records:
            return
        source = records[0].source_partition
        uniform = source is not None and countOf(map(_SOURCE_PARTITION, records), source) == len(records)
        if self._metrics is not None:
            if uniform:
                self._acknowledged(records[-1], len(records))
            else:
                for record in records:
                    self._acknowledged(record, 1)
        writer = self._writer
        if writer is None or source is None:
            return
        if not uniform:
            for position, record in enumerate(records):
                self._queue_one(record, base_offset + position)
        else:
            tp = TopicPartition(source[TOPIC_KEY], source[PARTITION_KEY])
            first = records[0].source_offset[OFFSET_KEY]  # type: ignore[index]
            last = records[-1].source_offset[OFFSET_KEY]  # type: ignore[index]
            if last - first == len(records) - 1:  # one poll's offsets, increasing: consecutive
                writer.queue_run(tp, first, len(records), base_offset)
            else:  # a gap (a transformation dropped records)
                offsets = [r.source_offset[OFFSET_KEY] for r in records]  # type: ignore[index]
                writer.queue_batch(tp, offsets, base_offset)
        writer.fire_pending_offset_syncs()

    def _queue_one(self, record: SourceRecord, downstream: int) -> None:
        partition, offset = record.source_partition, record.source_offset
        if partition is not None and offset is not None and self._writer is not None:
            self._writer.maybe_queue_offset_syncs(
                TopicPartition(partition[TOPIC_KEY], partition[PARTITION_KEY]), offset[OFFSET_KEY], downstream
            )

    async def commit(self) -> None:
        writer = self._writer
        if writer is not None:
            writer.promote_delayed_offset_syncs()
            writer.fire_pending_offset_syncs()

    def _send_offset_sync(self, sync: OffsetSync, done: SendDone) -> None:
        """The writer's ``send``: ``sync`` joins the outbox of the one offset-sync pump, so the syncs
        handed over while a batch of them is on its way leave together in the next batch."""
        self._sync_outbox.append((sync, done))
        if self._sync_pump is None or self._sync_pump.done():
            self._sync_pump = self._sends.spawn(self._pump_offset_syncs(), name=f"{self._name}-offset-syncs")

    async def _pump_offset_syncs(self) -> None:
        while self._sync_outbox:
            group, self._sync_outbox = self._sync_outbox, []
            await send_offset_syncs(self._producer, self._offset_syncs_topic, group)

    async def _drain_offset_syncs(self, timeout_s: float) -> None:
        """Send the queued offset syncs (the final commit promoted the delayed ones) as permits free up,
        for at most ``timeout_s``: unlike Java, a stopping task does not drop the syncs it still holds."""
        writer = self._writer
        deadline = time.monotonic() + timeout_s
        while True:
            if writer is not None:
                writer.fire_pending_offset_syncs()
            remaining = deadline - time.monotonic()
            sends = self._sends.running()
            if not sends or remaining <= 0:
                break
            await asyncio.wait(sends, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        left = len(writer.pending_syncs()) if writer is not None else 0
        if left:
            log.warning("%s: %d offset syncs not sent before stopping", self._name, left)

    async def stop(self) -> None:
        started = time.monotonic()
        self._stopping = True
        for running in self._checks.running():  # waited for at the end, whatever happens meanwhile
            running.cancel()
        check, self._target_check = self._target_check, None
        consumer, self._consumer = self._consumer, None
        raw, self._raw = self._raw, None
        try:
            await cancel_and_wait(check, log=None)  # its failure, if any, was the task's to report
            if raw is not None:
                await raw.close()
            if consumer is not None:
                with contextlib.suppress(Exception):
                    await consumer.close()
            if self._producer is not None:
                await self._drain_offset_syncs(STOP_SYNC_DRAIN_S)
        finally:  # even when the runtime cancels a stop that overran its graceful bound
            if consumer is not None:  # closed above unless cancelled first (closing twice is a no-op)
                with contextlib.suppress(Exception):
                    await consumer.close()
            metrics, self._metrics = self._metrics, None
            if metrics is not None:
                metrics.close()
            producer, self._producer = self._producer, None
            if producer is not None:
                with contextlib.suppress(Exception):
                    await producer.stop()
            await self._sends.close()
            await self._checks.close()
        log.info(
            "Stopping %s took %.0f ms.",
            getattr(self, "_name", "MirrorSourceTask"),
            (time.monotonic() - started) * 1000,
        )
