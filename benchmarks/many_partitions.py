"""The many-partitions scenario: one MirrorSourceConnector over thousands of small topics.

Source side (cluster A, prepared once for every system by :func:`prepare_source`):
``many_partitions_topics`` topics ``bench-mp-base-NNNN`` of ``partitions`` partitions each, one record
per partition (LogAppendTime, as every topic of the benchmark). Each Connect system then gets ONE
fresh worker and, under a source alias of its own (``MP_ALIASES``), the connector of
:func:`connector_config`: ``topics`` is the regex ``bench-mp-(base|<alias>)-.*`` (the shared topics
plus the topics added for that system only, so one system's added topics never reach the other's
connector), ``tasks.max`` from the settings and ``refresh.topics.interval.seconds`` =
``REFRESH_TOPICS_INTERVAL_S``; the JSON is the same on both systems but for the alias. Every target
topic ``<alias>.<topic>`` is created on B beforehand with the same partition count.

Figures (:func:`measure`), every wait bounded, the target polled every ``POLL_INTERVAL_S`` with one
ListOffsets round trip for all the partitions watched (:class:`EndOffsets`):

- ``copy``: from the POST of the connector to the summed end offset of the target topics equalling the
  records produced (``copied_s``); on the way, the first record on the target (``first_record_s``) and
  the connector with all its tasks RUNNING (``tasks_running_s``), each to the poll's resolution.
- ``idle``: ``SETTLE_S`` after the copy, the CPU-seconds per second the worker's process tree uses over
  ``idle_window_s`` with nothing arriving (the connector still refreshes its topic list every
  ``REFRESH_TOPICS_INTERVAL_S``), and its RSS (MB, summed over the tree) at the end of the window.
- ``reconfigure``: ``many_partitions_added`` more topics ``bench-mp-<alias>-NNNN`` (same partitions,
  one record each) are created on A in ``CREATE_CHUNK``-topic requests and written; from the start of
  their creation to all their records on the target (``copied_s``). The connector notices them at its
  next topic refresh, so the figure includes up to ``REFRESH_TOPICS_INTERVAL_S`` of waiting; then it
  reconfigures its tasks and they copy. ``source_ready_s`` is how long creating and writing took;
  ``recopied_records`` is how far the shared topics' targets grew meanwhile (records copied twice
  when the tasks restarted).
- ``peak_rss_mb``: the process tree's peak RSS over the session (sampled every 0.5 s).

:func:`cleanup` deletes what one system's session left (its added source topics, its target topics),
so the next system meets the clusters as the first did.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, cast

from benchmarks import runners, workload
from benchmarks.procstats import RssSampler, process_tree, rss_mb, total_cpu_seconds
from benchmarks.settings import BenchSettings
from pyconnect.kafka.clients import create_admin, create_consumer, create_producer
from pyconnect.kafka.end_offsets import end_offsets
from pyconnect.kafka.log import TopicPartition
from pyconnect.kafka.mirror_admin import MirrorAdmin, NewTopicSpec
from pyconnect.testing.connect_worker import ConnectWorkerProcess

log = logging.getLogger("benchmarks.many_partitions")

MP_ALIASES = {"java-connect": "mj", "pyconnect": "mp"}
"""The source alias each system mirrors the many topics under."""
PREFIX = "bench-mp"
BASE = "base"
CONNECTOR = "bench-mp"
REFRESH_TOPICS_INTERVAL_S = 5
CREATE_CHUNK = 200
"""Topics per CreateTopics (and DeleteTopics) request."""
ADMIN_TIMEOUT_MS = 180_000
POLL_INTERVAL_S = 0.5
SETTLE_S = 5.0
RECORD_SIZE = 100
T = TypeVar("T")


# ---- pure parts -------------------------------------------------------------------------------


def base_topics(count: int) -> list[str]:
    """The shared source topics: ``bench-mp-base-0000`` ..."""
    return [f"{PREFIX}-{BASE}-{i:04d}" for i in range(count)]


def added_topics(alias: str, count: int) -> list[str]:
    """The topics added on the source during ``alias``'s session: ``bench-mp-<alias>-0000`` ..."""
    return [f"{PREFIX}-{alias}-{i:04d}" for i in range(count)]


def topics_regex(alias: str) -> str:
    """The connector's ``topics``: the shared topics and ``alias``'s added ones, nothing else."""
    return f"{PREFIX}-({BASE}|{alias})-.*"


def remote_topics(alias: str, topics: Iterable[str]) -> list[str]:
    """The target topics under DefaultReplicationPolicy."""
    return [f"{alias}.{t}" for t in topics]


def chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """``items`` in consecutive slices of at most ``size`` (``size`` must be positive)."""
    if size <= 0:
        raise ValueError(f"chunk size must be positive, got {size}")
    for start in range(0, len(items), size):
        yield items[start : start + size]


def connector_config(system: str, source: str, target: str, tasks_max: int) -> dict[str, str]:
    """The MirrorSourceConnector JSON of this scenario (identical but for the alias across systems)."""
    alias = MP_ALIASES[system]
    return {
        **runners.connector_config(system, source, target, [topics_regex(alias)], tasks_max, alias=alias),
        "refresh.topics.interval.seconds": str(REFRESH_TOPICS_INTERVAL_S),
    }


def idle_figures(
    cpu_before: float, cpu_after: float, window_s: float, rss: Sequence[float]
) -> dict[str, Any]:
    """The idle figures of a process tree: CPU-seconds per second over ``window_s`` (and as % of one
    core), RSS summed over the tree's processes. Raises ValueError for a window that is not positive."""
    if window_s <= 0:
        raise ValueError(f"idle window must be positive, got {window_s}")
    per_s = max(cpu_after - cpu_before, 0.0) / window_s
    return {
        "window_s": round(window_s, 3),
        "cpu_s_per_s": round(per_s, 4),
        "cpu_percent": round(per_s * 100, 2),
        "rss_mb": round(sum(rss), 1),
        "processes": len(rss),
    }


# ---- Kafka side -------------------------------------------------------------------------------


async def _create_topics(
    bootstrap: str, names: Sequence[str], partitions: int, configs: Mapping[str, str]
) -> None:
    admin = MirrorAdmin({"bootstrap.servers": bootstrap, "request.timeout.ms": ADMIN_TIMEOUT_MS})
    await admin.start()
    try:
        for chunk in chunks(names, CREATE_CHUNK):
            answers = await admin.create_topics([NewTopicSpec(n, partitions, 1, configs) for n in chunk])
            failed = {topic: error for topic, error in answers.items() if error}
            if failed:
                raise RuntimeError(f"creating {len(failed)} topics failed, e.g. {next(iter(failed.items()))}")
    finally:
        await admin.close()


def create_topics(bootstrap: str, names: Sequence[str], partitions: int) -> None:
    """Create ``names`` (LogAppendTime) in requests of ``CREATE_CHUNK`` topics; existing ones are left
    alone. Bounded by the admin timeout per request."""
    chunks_count = -(-len(names) // CREATE_CHUNK)
    workload.run(
        _create_topics(bootstrap, names, partitions, workload.LOG_APPEND_TIME),
        30 + chunks_count * ADMIN_TIMEOUT_MS / 1000,
    )


async def _produce(bootstrap: str, topics: Sequence[str], partitions: int) -> int:
    producer = create_producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    await producer.start()
    sent = 0
    try:
        for chunk in chunks(topics, CREATE_CHUNK):
            # Concurrent sends share the metadata look-ups of the new topics.
            pending = await asyncio.gather(
                *(
                    producer.send(topic, value=workload.value_for(sent + i, RECORD_SIZE), partition=p)
                    for i, (topic, p) in enumerate((t, p) for t in chunk for p in range(partitions))
                )
            )
            await asyncio.gather(*pending)
            sent += len(pending)
    finally:
        await producer.stop()
    return sent


def produce_one_per_partition(bootstrap: str, topics: Sequence[str], partitions: int) -> int:
    """One record of ``RECORD_SIZE`` bytes to every partition of ``topics``; returns how many were
    acknowledged (acks=all), which is every one or an error."""
    sent = cast(int, workload.run(_produce(bootstrap, topics, partitions), 120 + len(topics) * 0.5))
    if sent != len(topics) * partitions:
        raise RuntimeError(f"{sent} of {len(topics) * partitions} records written")
    return sent


def prepare_source(bootstrap: str, count: int, partitions: int) -> None:
    """The shared source topics, one record per partition (before any system runs)."""
    topics = base_topics(count)
    create_topics(bootstrap, topics, partitions)
    produce_one_per_partition(bootstrap, topics, partitions)


async def _delete_topics(bootstrap: str, names: Sequence[str], timeout_s: float) -> list[str]:
    admin = create_admin({"bootstrap.servers": bootstrap}, request_timeout_ms=ADMIN_TIMEOUT_MS)
    await admin.start()
    try:
        for chunk in chunks(names, CREATE_CHUNK):
            await admin.delete_topics(list(chunk))
        deadline = time.monotonic() + timeout_s
        left = set(names)
        while left and time.monotonic() < deadline:
            left &= set(await admin.list_topics())
            if left:
                await asyncio.sleep(0.5)
        return sorted(left)
    finally:
        await admin.close()


def delete_topics(bootstrap: str, names: Sequence[str], timeout_s: float = 120.0) -> list[str]:
    """Delete ``names`` (missing ones are ignored by the broker) and wait, bounded, until the listing no
    longer shows them; returns those still listed at the bound."""
    if not names:
        return []
    return cast(list[str], workload.run(_delete_topics(bootstrap, names, timeout_s), timeout_s + 60))


class EndOffsets:
    """The summed end offset of a fixed set of partitions: one ListOffsets round trip per partition
    leader per call, on one consumer whose metadata tracks exactly those topics, on a private loop."""

    def __init__(self, bootstrap: str, topics: Sequence[str], partitions: int) -> None:
        self._loop = asyncio.new_event_loop()
        self._partitions = [TopicPartition(t, p) for t in topics for p in range(partitions)]
        self._consumer: Any = None
        try:
            self._consumer = self._loop.run_until_complete(
                asyncio.wait_for(self._start(bootstrap, list(topics)), 60)
            )
        except BaseException:
            self._loop.close()
            raise

    @staticmethod
    async def _start(bootstrap: str, topics: list[str]) -> Any:
        consumer = create_consumer({"bootstrap.servers": bootstrap}, enable_auto_commit=False)
        await consumer.start()
        await consumer._client.set_topics(topics)
        return consumer

    def total(self) -> int:
        offsets = self._loop.run_until_complete(
            asyncio.wait_for(end_offsets(self._consumer._client, self._partitions, timeout_s=30.0), 45)
        )
        return int(sum(offsets.values()))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._loop.run_until_complete(asyncio.wait_for(self._consumer.stop(), 15))
        self._loop.close()


def wait_copied(
    watcher: EndOffsets,
    expected: int,
    t0: float,
    timeout_s: float,
    check_alive: Callable[[], None],
    milestones: Mapping[str, Callable[[], bool]] | None = None,
) -> dict[str, Any]:
    """Poll ``watcher`` every ``POLL_INTERVAL_S`` until it sums to ``expected``; seconds from ``t0``
    (monotonic) to that (``copied_s``) and to the first record (``first_record_s``), and to the first
    poll at which each of ``milestones`` (name -> condition, checked until it holds) held
    (``<name>_s``, None if it never did). Raises TimeoutError after ``timeout_s``."""
    pending = dict(milestones or {})
    figures: dict[str, Any] = {f"{name}_s": None for name in pending}
    figures["first_record_s"] = None
    deadline = t0 + timeout_s
    count = 0
    while True:
        check_alive()
        count = watcher.total()
        now = time.monotonic()
        if figures["first_record_s"] is None and count > 0:
            figures["first_record_s"] = round(now - t0, 3)
        for name, condition in list(pending.items()):
            if condition():
                figures[f"{name}_s"] = round(time.monotonic() - t0, 3)
                del pending[name]
        if count >= expected:
            figures["copied_s"] = round(now - t0, 3)
            figures["target_records"] = count
            return figures
        if now >= deadline:
            raise TimeoutError(f"{count} of {expected} records on the target after {timeout_s:.0f}s")
        time.sleep(max(0.0, POLL_INTERVAL_S - (time.monotonic() - now)))


# ---- the session ------------------------------------------------------------------------------


def measure(
    system: str, worker: ConnectWorkerProcess, source: str, target: str, s: BenchSettings
) -> dict[str, Any]:
    """The scenario on ``worker`` (started and ready; see the module docstring). The connector is
    deleted at the end; topics are left for :func:`cleanup`."""
    alias = MP_ALIASES[system]
    partitions = s.partitions
    base, added = base_topics(s.many_partitions_topics), added_topics(alias, s.many_partitions_added)
    create_topics(target, remote_topics(alias, base + added), partitions)
    records = len(base) * partitions
    metrics: dict[str, Any] = {
        "alias": alias,
        "topics": len(base),
        "partitions_per_topic": partitions,
        "partitions": records,
        "records": records,
        "tasks_max": s.tasks_max,
        "topics_regex": topics_regex(alias),
        "refresh_topics_interval_s": REFRESH_TOPICS_INTERVAL_S,
    }

    def tree() -> list[int]:
        return process_tree(worker.pid)

    sampler = RssSampler(tree, interval=0.5, max_seconds=2 * s.drain_timeout_s + 600).start()
    watcher = EndOffsets(target, remote_topics(alias, base), partitions)
    try:
        # Fresh partitions answer NOT_LEADER_OR_FOLLOWER until the broker has loaded them (seconds for
        # thousands): the clock starts once every target partition has a leader, as in production.
        watcher.total()
        t_create = time.monotonic()
        runners.create_connector(worker, CONNECTOR, connector_config(system, source, target, s.tasks_max))
        metrics["copy"] = wait_copied(
            watcher,
            records,
            t_create,
            s.drain_timeout_s,
            worker.check_alive,
            {"tasks_running": lambda: runners.running_tasks(worker, CONNECTOR, None) is not None},
        )
        log.info("%s: %d partitions copied: %s", system, records, metrics["copy"])
        time.sleep(SETTLE_S)
        pids = tree()
        cpu_before, t_before = total_cpu_seconds(pids), time.monotonic()
        time.sleep(s.idle_window_s)
        cpu_after, t_after = total_cpu_seconds(pids), time.monotonic()
        rss = [rss_mb(pid) for pid in pids]
        if cpu_before is None or cpu_after is None or any(r is None for r in rss):
            raise RuntimeError("a process of the worker exited during the idle window")
        metrics["idle"] = idle_figures(cpu_before, cpu_after, t_after - t_before, [r for r in rss if r])
        log.info("%s idle with %d partitions: %s", system, records, metrics["idle"])
        metrics["reconfigure"] = _reconfigure(worker, source, target, alias, added, partitions, s)
        metrics["reconfigure"]["recopied_records"] = watcher.total() - records
        log.info("%s: %d topics added: %s", system, len(added), metrics["reconfigure"])
        runners.delete_connector(worker, CONNECTOR)
    finally:
        watcher.close()
        peak = sampler.stop()
    metrics["peak_rss_mb"] = round(max(peak.values()), 1) if peak else None
    return metrics


def _reconfigure(
    worker: ConnectWorkerProcess,
    source: str,
    target: str,
    alias: str,
    added: Sequence[str],
    partitions: int,
    s: BenchSettings,
) -> dict[str, Any]:
    """Add ``added`` on the source and time them to the target (see the module docstring)."""
    watcher = EndOffsets(target, remote_topics(alias, added), partitions)
    try:
        t0 = time.monotonic()
        create_topics(source, added, partitions)
        produced = produce_one_per_partition(source, added, partitions)
        source_ready = time.monotonic() - t0
        figures = wait_copied(watcher, produced, t0, s.drain_timeout_s, worker.check_alive)
    finally:
        watcher.close()
    return {
        "topics": len(added),
        "partitions": len(added) * partitions,
        "records": produced,
        "source_ready_s": round(source_ready, 3),
        **figures,
    }


def cleanup(system: str, source: str, target: str, s: BenchSettings) -> None:
    """Delete ``system``'s added source topics and its target topics (bounded; failures are logged)."""
    alias = MP_ALIASES[system]
    added = added_topics(alias, s.many_partitions_added)
    for bootstrap, names in (
        (source, added),
        (target, remote_topics(alias, base_topics(s.many_partitions_topics) + added)),
    ):
        try:
            left = delete_topics(bootstrap, names)
            if left:
                log.warning("%s: %d topics were still listed after deletion", system, len(left))
        except Exception:
            log.warning("%s: deleting the many-partitions topics failed", system, exc_info=True)
