"""The checkpoint-lag scenario: from a consumer-group commit on the source to its translation on the target.

One fresh worker per Connect system runs, under the system's source alias, a MirrorSourceConnector
(one task, ``offset.lag.max=0`` so every mirrored record has an offset sync) for the topic
``bench-cp-<alias>`` and a MirrorCheckpointConnector for one consumer group, with the same
``emit.checkpoints.interval.seconds`` and ``sync.group.offsets.interval.seconds`` for every system
(``checkpoint_connector_config``). The source connector runs first and the group has committed once
before the checkpoint connector is created (the connector only finds groups that exist).

Each sample:

1. a few records are produced to partition 0 of the source topic; the probe waits until they are on
   the target and until the offset sync of the last one is in the offset-syncs topic, so the commit
   that follows can be translated at once and the figure holds only the checkpoint path;
2. after a pause drawn uniformly from 0 .. the emit interval (seeded: the same pauses for every
   system), so commits fall at every phase of the emit cycle, the group's offset on the source is set
   to the end of the partition (an admin OffsetCommit, as a consumer that read everything commits);
   the time the commit is acknowledged is ``t0`` (wall clock, ms);
3. **checkpoint lag** = LogAppendTime of the checkpoint record carrying that upstream offset in
   ``<alias>.checkpoints.internal`` on the target (created beforehand with LogAppendTime, compacted,
   one partition) minus ``t0``; **group-offset lag** = the first time the group's committed offset on
   the target reaches the expected downstream offset (polled every ``GROUP_POLL_S``) minus ``t0``.

The expected downstream offset is the last record's offset sync ``downstream + 1`` (Java's rule for an
offset past the last sync; the exact translation of our port gives the same). A checkpoint with another
downstream offset is counted in ``downstream_mismatches``. Both clusters run on this machine and share
its clock. Every wait is bounded; the connectors are deleted afterwards.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from benchmarks import runners, workload
from benchmarks.settings import BenchSettings
from benchmarks.stats import lag_summary
from connectors.mirror.checkpoint_records import Checkpoint
from connectors.mirror.records import OffsetSync
from pyconnect.kafka.clients import create_consumer, create_producer
from pyconnect.kafka.group_admin import CommittedOffset, GroupAdmin
from pyconnect.kafka.log import TopicPartition
from pyconnect.testing.connect_worker import ConnectWorkerProcess

GROUP_POLL_S = 0.05
LOG_APPEND_TIME_TYPE = 1
CHECKPOINTS_TOPIC_CONFIG = {"cleanup.policy": "compact", "message.timestamp.type": "LogAppendTime"}
RUNNING_TIMEOUT_S = 120.0
STEP_TIMEOUT_S = 60.0
PAUSE_SEED = 20261122
# COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, REQUEST_TIMED_OUT
RETRIABLE_COMMIT_ERRORS = {14, 15, 16, 7}
T = TypeVar("T")


@dataclass(frozen=True)
class Names:
    """Topics, group and connector names of one system's checkpoint-lag session."""

    alias: str
    topic: str
    remote: str
    group: str
    checkpoints_topic: str
    offset_syncs_topic: str
    source_connector: str
    checkpoint_connector: str

    @classmethod
    def for_system(cls, system: str) -> Names:
        alias = runners.ALIASES[system]
        topic = f"bench-cp-{alias}"
        return cls(
            alias=alias,
            topic=topic,
            remote=runners.remote_topic(system, topic),
            group=f"bench-cp-group-{alias}",
            checkpoints_topic=f"{alias}.checkpoints.internal",
            offset_syncs_topic=f"mm2-offset-syncs.{runners.TARGET_ALIAS}.internal",
            source_connector="bench-cp-source",
            checkpoint_connector="bench-cp-checkpoint",
        )


@dataclass
class _Seen:
    """What the probe's tails have read so far."""

    syncs: dict[int, OffsetSync] = field(default_factory=dict)  # upstream offset -> sync (partition 0)
    checkpoints: dict[int, tuple[Checkpoint, int, int]] = field(default_factory=dict)  # up -> (cp, ts, type)


class Probe:
    """The benchmark's clients for one session: producer and group admin on the source, a tail of the
    offset-syncs topic (source), a tail of the checkpoints topic and a group admin on the target.

    Used from one event loop; ``open`` and ``close`` bracket it; every wait is bounded.
    """

    def __init__(self, names: Names, source: str, target: str) -> None:
        self.names = names
        self.source = source
        self.target = target
        self.seen = _Seen()
        self._remote_tp = TopicPartition(names.remote, 0)
        self._producer: Any = None
        self._source_admin = GroupAdmin({"bootstrap.servers": source})
        self._target_admin = GroupAdmin({"bootstrap.servers": target})
        self._syncs: Any = None
        self._checkpoints: Any = None
        self._target_ends: Any = None

    async def open(self) -> None:
        self._producer = create_producer({"bootstrap.servers": self.source, "acks": "all"})
        await self._producer.start()
        await self._source_admin.start()
        await self._target_admin.start()
        self._syncs = await self._tail(self.source, self.names.offset_syncs_topic, from_end=True)
        self._checkpoints = await self._tail(self.target, self.names.checkpoints_topic, from_end=False)
        self._target_ends = create_consumer({"bootstrap.servers": self.target}, enable_auto_commit=False)
        await self._target_ends.start()

    async def close(self) -> None:
        for client in (self._producer, self._syncs, self._checkpoints, self._target_ends):
            if client is not None:
                try:
                    await asyncio.wait_for(client.stop(), 15)
                except Exception:  # closing is best effort; the figures are already taken
                    pass
        await self._source_admin.close()
        await self._target_admin.close()

    @staticmethod
    async def _tail(bootstrap: str, topic: str, *, from_end: bool) -> Any:
        """A consumer assigned to partition 0 of ``topic`` (waiting up to STEP_TIMEOUT_S for it to exist)."""
        consumer = create_consumer(
            {"bootstrap.servers": bootstrap}, enable_auto_commit=False, auto_offset_reset="earliest"
        )
        await consumer.start()
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while not consumer.partitions_for_topic(topic):
            if time.monotonic() > deadline:
                await consumer.stop()
                raise TimeoutError(f"topic {topic} does not exist after {STEP_TIMEOUT_S:.0f}s")
            await consumer._client.force_metadata_update()
            if not consumer.partitions_for_topic(topic):
                await asyncio.sleep(0.5)
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        if from_end:
            await consumer.seek_to_end(tp)
        else:
            await consumer.seek_to_beginning(tp)
        await consumer.position(tp)  # resolve the position now, before anything is produced
        return consumer

    async def _drain_tails(self) -> None:
        for messages in (await self._syncs.getmany(timeout_ms=20)).values():
            for m in messages:
                sync = OffsetSync.deserialize_record(m.key, m.value)
                if (sync.topic, sync.partition) == (self.names.topic, 0):
                    self.seen.syncs[sync.upstream_offset] = sync
        for messages in (await self._checkpoints.getmany(timeout_ms=20)).values():
            for m in messages:
                checkpoint = Checkpoint.from_record(m.key, m.value)
                if (checkpoint.consumer_group_id, checkpoint.topic, checkpoint.partition) == (
                    self.names.group,
                    self.names.remote,
                    0,
                ):
                    self.seen.checkpoints[checkpoint.upstream_offset] = (
                        checkpoint,
                        m.timestamp,
                        m.timestamp_type,
                    )

    async def produce(self, count: int, size: int = 100) -> int:
        """Append ``count`` records to partition 0 of the source topic; the partition's end offset after."""
        futures = [
            await self._producer.send(self.names.topic, value=b"c" * size, partition=0) for _ in range(count)
        ]
        metadata = await asyncio.gather(*futures)
        return int(metadata[-1].offset) + 1

    async def wait_replicated(self, end: int) -> OffsetSync:
        """Wait until the target holds the source partition up to ``end`` and the sync of ``end - 1``
        is in the offset-syncs topic; that sync."""

        async def ready() -> OffsetSync | None:
            await self._drain_tails()
            ends = await self._target_ends.end_offsets([self._remote_tp])
            sync = self.seen.syncs.get(end - 1)
            return sync if ends[self._remote_tp] >= end and sync is not None else None

        return await _until(ready, f"records up to {end} and their offset sync", STEP_TIMEOUT_S)

    async def commit(self, offset: int, metadata: str) -> float:
        """Set the group's source offset of partition 0 to ``offset``; wall-clock ms at acknowledgement.

        Retriable failures (the offsets topic of a fresh cluster is created on the first lookup, a
        coordinator moves) are retried for up to STEP_TIMEOUT_S; the time is that of the commit that
        succeeded.
        """

        async def attempt() -> float | None:
            try:
                errors = await self._source_admin.alter_offsets(
                    self.names.group, {(self.names.topic, 0): CommittedOffset(offset, metadata)}
                )
            except Exception as exc:
                if getattr(exc, "retriable", False):
                    return None
                raise
            acknowledged = time.time() * 1000
            if not errors:
                return acknowledged
            if set(errors.values()) <= RETRIABLE_COMMIT_ERRORS:
                return None
            raise RuntimeError(f"committing {self.names.group} on the source failed: {errors}")

        return await _until(attempt, f"commit of {self.names.group} on the source", STEP_TIMEOUT_S, 0.2)

    async def wait_checkpoint(self, upstream: int, timeout: float) -> tuple[Checkpoint, int]:
        """The checkpoint of the group for ``upstream`` and its LogAppendTime (ms) on the target."""

        async def found() -> tuple[Checkpoint, int] | None:
            await self._drain_tails()
            entry = self.seen.checkpoints.get(upstream)
            if entry is None:
                return None
            checkpoint, timestamp, timestamp_type = entry
            if timestamp_type != LOG_APPEND_TIME_TYPE:
                raise RuntimeError(
                    f"{self.names.checkpoints_topic} does not use LogAppendTime (timestamp type "
                    f"{timestamp_type}): it must be created by the benchmark before the connector"
                )
            return checkpoint, timestamp

        return await _until(found, f"a checkpoint for upstream offset {upstream}", timeout, interval=0.0)

    async def wait_group_offset(self, downstream: int, timeout: float) -> float:
        """Wall-clock ms at which the group's committed offset on the target first reached ``downstream``."""

        async def reached() -> float | None:
            try:
                offsets = await self._target_admin.committed_offsets(self.names.group)
            except Exception as exc:
                if getattr(exc, "retriable", False):
                    return None
                raise
            committed = offsets.get((self.names.remote, 0))
            seen_at = time.time() * 1000
            return seen_at if committed is not None and committed.offset >= downstream else None

        return await _until(
            reached, f"group offset {downstream} on the target", timeout, interval=GROUP_POLL_S
        )


async def _until(
    probe: Callable[[], Awaitable[T | None]], what: str, timeout: float, interval: float = 0.05
) -> T:
    """``probe()`` until it answers something other than None (every ``interval`` s, at most ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while True:
        got = await probe()
        if got is not None:
            return got
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} within {timeout:.0f}s")
        if interval:
            await asyncio.sleep(interval)


def measure(
    system: str, worker: ConnectWorkerProcess, source: str, target: str, settings: BenchSettings
) -> dict[str, Any]:
    """Run the checkpoint-lag session of ``system`` on a started, ready ``worker``; its metrics.

    Raises on any failed step (the caller records the scenario as failed with the reason).
    """
    names = Names.for_system(system)
    workload.create_topics(source, [names.topic], 1)
    workload.create_topics(target, [names.remote], 1)
    workload.create_topics(target, [names.checkpoints_topic], 1, CHECKPOINTS_TOPIC_CONFIG)
    source_config = runners.connector_config(system, source, target, [names.topic], 1)
    source_config["offset.lag.max"] = "0"
    checkpoint_config = runners.checkpoint_connector_config(
        system,
        source,
        target,
        [names.topic],
        [names.group],
        emit_interval_s=settings.emit_checkpoints_interval_s,
        sync_interval_s=settings.sync_group_offsets_interval_s,
    )
    runners.create_connector(worker, names.source_connector, source_config)
    try:
        runners.wait_running(worker, names.source_connector, None, RUNNING_TIMEOUT_S)
        slack_s = 3 * (settings.emit_checkpoints_interval_s + settings.sync_group_offsets_interval_s)
        budget = (
            RUNNING_TIMEOUT_S
            + 3 * STEP_TIMEOUT_S
            + settings.checkpoint_samples * (2 * STEP_TIMEOUT_S + slack_s)
        )
        result: dict[str, Any] = workload.run(  # type: ignore[assignment]
            _session(names, worker, source, target, settings, checkpoint_config), budget
        )
        return result
    finally:
        runners.delete_connector(worker, names.checkpoint_connector)
        runners.delete_connector(worker, names.source_connector)


async def _session(
    names: Names,
    worker: ConnectWorkerProcess,
    source: str,
    target: str,
    settings: BenchSettings,
    checkpoint_config: dict[str, str],
) -> dict[str, Any]:
    probe = Probe(names, source, target)
    try:
        await probe.open()
        per_sample = settings.checkpoint_records_per_sample
        wait_s = STEP_TIMEOUT_S + 3 * (
            settings.emit_checkpoints_interval_s + settings.sync_group_offsets_interval_s
        )
        end = await probe.produce(per_sample)
        sync = await probe.wait_replicated(end)
        await probe.commit(end, "bench-warm-up")
        created = time.monotonic()
        await asyncio.to_thread(
            runners.create_connector, worker, names.checkpoint_connector, checkpoint_config
        )
        await asyncio.to_thread(
            runners.wait_running, worker, names.checkpoint_connector, 1, RUNNING_TIMEOUT_S
        )
        await probe.wait_checkpoint(end, wait_s + RUNNING_TIMEOUT_S)
        first_checkpoint_s = time.monotonic() - created
        await probe.wait_group_offset(sync.downstream_offset + 1, wait_s)
        pauses = random.Random(PAUSE_SEED)
        checkpoint_ms: list[float] = []
        group_ms: list[float] = []
        mismatches = 0
        for i in range(settings.checkpoint_samples):
            end = await probe.produce(per_sample)
            sync = await probe.wait_replicated(end)
            expected = sync.downstream_offset + 1
            await asyncio.sleep(pauses.uniform(0, settings.emit_checkpoints_interval_s))
            committed_at = await probe.commit(end, f"bench-{i}")
            async with asyncio.TaskGroup() as both:
                checkpoint_task = both.create_task(probe.wait_checkpoint(end, wait_s))
                group_task = both.create_task(probe.wait_group_offset(expected, wait_s))
            checkpoint, appended_at = checkpoint_task.result()
            group_at = group_task.result()
            mismatches += checkpoint.downstream_offset != expected
            checkpoint_ms.append(float(appended_at - committed_at))
            group_ms.append(round(group_at - committed_at, 1))
        return {
            "samples": len(checkpoint_ms),
            "checkpoint_lag": lag_summary(checkpoint_ms),
            "group_offset_lag": lag_summary(group_ms),
            "checkpoint_lag_ms": [round(v, 1) for v in checkpoint_ms],
            "group_offset_lag_ms": group_ms,
            "downstream_mismatches": mismatches,
            "first_checkpoint_after_create_s": round(first_checkpoint_s, 3),
            "emit_checkpoints_interval_s": settings.emit_checkpoints_interval_s,
            "sync_group_offsets_interval_s": settings.sync_group_offsets_interval_s,
            "records_per_sample": per_sample,
            "group_offset_poll_ms": int(GROUP_POLL_S * 1000),
        }
    finally:
        await probe.close()
