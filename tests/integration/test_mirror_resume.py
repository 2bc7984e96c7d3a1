"""The mirror source resumes where its committed source offsets say, on a restarted fleet and after Java.

A background producer keeps writing to every partition of a topic on A while the flow A->B runs; the
value of a record is its own offset in its partition (written as decimal text), so a target partition
reads as the sequence of source offsets it holds. Checked, on real Kafka:

* Fleet restart: three pyconnect workers stopped together with SIGTERM mid-stream (each task flushes
  its offsets) and restarted on the same group and internal topics leave the target equal to the
  source, record for record: nothing lost, nothing duplicated. After kill -9 of the whole fleet the
  target is its pre-crash content followed by exactly the source records after the last committed
  offset of each partition (read from the offsets topic with our OffsetStore before the restart): the
  re-replicated run starts at committed + 1, and nothing is lost.
* Takeover from Java: a Java Connect worker running Java's MirrorSourceConnector, then Java
  MirrorMaker 2 in dedicated mode (``mm2-offsets.<S>.internal``, group ``<S>-mm2``), are stopped
  gracefully; pyconnect workers join the same group with the same internal topics, pick up the
  connector configs Java wrote and resume: the first record they write per partition is Java's
  committed offset + 1, nothing is lost, and their offsets go under Java's key bytes.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from pyconnect.protocol.internal_records import encode_offset_key
from pyconnect.stores.kafka_topic import InternalTopic
from pyconnect.stores.offsets import OffsetStore
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.connect_worker import ConnectWorkerProcess, OwnedProcess
from pyconnect.testing.java_reference import JavaConnectWorker, JavaMirrorMaker
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import FAST_GROUP, python_workers, wait_for
from tests.integration.mirror_helpers import one_way_mm2
from tests.integration.test_mirror_source import BYTES, mirror_config, read_all, read_connect_offsets

pytestmark = pytest.mark.kafka

PARTITIONS = 4
BATCH_INTERVAL_S = 0.02
JAVA_STREAM_S = 3
FLUSH_INTERVAL_S = 5
CATCH_UP_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 30.0
# A Java Connect worker may take longer by design: its herder waits up to worker.sync.timeout.ms (3 s) +
# task.shutdown.graceful.timeout.ms (5 s) + 5 s for connectors + 10 s, then 10 s for forwarded requests
# and 1 s for its start/stop executor, before the worker itself stops its tasks.
JAVA_STOP_TIMEOUT_S = 60.0
Sequences = dict[int, list[int]]


class SteadyProducer:
    """Writes one record to every partition of ``topic`` each ``BATCH_INTERVAL_S``, on its own thread.

    The n-th record of a partition has key ``k<n>`` and value ``<n>`` (idempotent producer, so ``n``
    is also its offset in a fresh topic). ``start`` and ``stop`` may alternate; numbering continues.
    ``stop`` returns how many records each partition holds and re-raises a failure of the thread.
    """

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.produced = dict.fromkeys(range(partitions), 0)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def start(self) -> None:
        assert self._thread is None, "already producing"
        self._stop.clear()
        self._thread = threading.Thread(target=self._main, name=f"produce-{self.topic}", daemon=True)
        self._thread.start()

    def stop(self) -> dict[int, int]:
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            thread.join(timeout=30)
            assert not thread.is_alive(), "the producer thread did not stop"
        if self._error is not None:
            raise self._error
        return dict(self.produced)

    def _main(self) -> None:
        try:
            asyncio.run(self._produce())
        except BaseException as exc:
            self._error = exc

    async def _produce(self) -> None:
        producer = AIOKafkaProducer(bootstrap_servers=self.bootstrap, enable_idempotence=True, linger_ms=2)
        await producer.start()
        try:
            while not self._stop.is_set():
                acks = []
                for p, n in self.produced.items():
                    acks.append(
                        await producer.send(self.topic, str(n).encode(), key=f"k{n}".encode(), partition=p)
                    )
                await asyncio.gather(*acks)
                for p in self.produced:
                    self.produced[p] += 1
                await asyncio.sleep(BATCH_INTERVAL_S)
        finally:
            await producer.stop()


async def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        await admin.close()


def sequences(bootstrap: str, topic: str) -> Sequences:
    """partition -> the values of ``topic`` (source offsets, see SteadyProducer) in offset order."""
    rows = asyncio.run(read_all(bootstrap, topic, 20))
    return {p: [int(row[3] or b"-1") for row in partition] for p, partition in rows.items()}


def wait_lengths(
    bootstrap: str,
    topic: str,
    at_least: Mapping[int, int],
    timeout: float,
    alive: Callable[[], None] | None = None,
) -> Sequences:
    """Poll ``topic`` until every partition ``p`` holds ``at_least[p]`` records; the sequences then.

    ``alive`` (e.g. a process's ``check_alive``) runs before each poll, to fail fast with its reason.
    """

    def long_enough() -> Sequences | None:
        if alive is not None:
            alive()
        found = sequences(bootstrap, topic)
        return found if all(len(found.get(p, ())) >= n for p, n in at_least.items()) else None

    return wait_for(f"{dict(at_least)} records per partition of {topic}", long_enough, timeout, 1.0)


def stream(
    bootstrap: str,
    remote: str,
    producer: SteadyProducer,
    seconds: float,
    timeout: float,
    alive: Callable[[], None] | None = None,
) -> None:
    """Wait until the target holds what the source held on entry (the flow is live), then ``seconds`` more."""
    wait_lengths(bootstrap, remote, dict(producer.produced), timeout, alive)
    time.sleep(seconds)


def assert_source_intact(bootstrap: str, topic: str, produced: Mapping[int, int]) -> None:
    """The source holds exactly what was produced, each value equal to its offset."""
    assert sequences(bootstrap, topic) == {p: list(range(n)) for p, n in produced.items()}


def committed_offsets(
    bootstrap: str, offsets_topic: str, connector: str, alias: str, topic: str
) -> dict[int, int]:
    """partition -> committed source offset of ``connector``'s flow, read with our OffsetStore.

    Also checks that the stored key bytes are exactly our encoding of Java's partition map (key order
    ``cluster, partition, topic``), whoever wrote them.
    """

    async def read() -> dict[int, int]:
        store = OffsetStore(
            InternalTopic(offsets_topic, {"bootstrap.servers": bootstrap}, partitions=25, create=False),
            read_only=True,
        )
        await store.start()
        try:
            found: dict[int, int] = {}
            for partition, offset in await store.connector_offsets(connector):
                if partition.get("cluster") == alias and partition.get("topic") == topic:
                    key = encode_offset_key(
                        connector, {"cluster": alias, "partition": partition["partition"], "topic": topic}
                    )
                    assert store.key_bytes(connector, partition) == key
                    found[partition["partition"]] = offset["offset"]
            return found
        finally:
            await store.stop()

    return asyncio.run(read())


def start_fleet(workers: Sequence[ConnectWorkerProcess]) -> None:
    for w in workers:
        w.start()
    for w in workers:
        w.wait_ready()


def stop_all(processes: Sequence[OwnedProcess], timeout: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM to every process at once (SIGKILL after ``timeout`` seconds); returns once all exited."""
    with ThreadPoolExecutor(len(processes)) as pool:
        list(pool.map(lambda p: p.stop(timeout=timeout), processes))


def stop_gracefully(processes: Sequence[OwnedProcess], timeout: float = STOP_TIMEOUT_S) -> float:
    """SIGTERM to every process at once; seconds until all exited. One that needed SIGKILL fails."""
    started = time.monotonic()
    stop_all(processes, timeout)
    took = time.monotonic() - started
    for p in processes:
        assert p.process is not None
        code = p.process.exit_code()
        assert code is not None and code >= 0, f"{p.label} (pid {p.pid}) ended with {code}:\n{p.log_tail()}"
    return took


def expected_after_resume(
    before: Sequences, committed: Mapping[int, int], produced: Mapping[int, int]
) -> Sequences:
    """What was on the target, then the source from ``committed + 1`` to the end: at-least-once, no more."""
    return {p: before.get(p, []) + list(range(committed.get(p, -1) + 1, n)) for p, n in produced.items()}


def resume_and_catch_up(
    workers: Sequence[ConnectWorkerProcess],
    bootstrap: str,
    remote: str,
    producer: SteadyProducer,
    before: Sequences,
    committed: Mapping[int, int],
) -> tuple[Sequences, Sequences, dict[int, int]]:
    """Start ``workers`` on the stopped flow, keep producing until they replicate (plus a second), stop
    the producer and wait until the target holds ``before`` and then the source from ``committed + 1``:
    ``(target, expected, produced)``."""
    start_fleet(workers)
    stream(bootstrap, remote, producer, 1, 90)
    produced = producer.stop()
    expected = expected_after_resume(before, committed, produced)
    after = wait_lengths(bootstrap, remote, {p: len(s) for p, s in expected.items()}, CATCH_UP_TIMEOUT_S)
    return after, expected, produced


def stopped_target(
    bootstrap: str, remote: str, offsets_topic: str, connector: str, alias: str, topic: str
) -> tuple[Sequences, dict[int, int]]:
    """The target (a gap-free prefix of the source) and the committed offsets, once writers stopped."""
    time.sleep(1.5)
    before = sequences(bootstrap, remote)
    committed = committed_offsets(bootstrap, offsets_topic, connector, alias, topic)
    for p in range(PARTITIONS):
        held = before.get(p, [])
        assert held == list(range(len(held))), f"partition {p}: the target is not a prefix of the source"
        assert p in committed, f"no committed offset for partition {p}: {committed}"
        assert committed[p] <= len(held) - 1, (
            f"partition {p}: committed {committed[p]} past {len(held)} written"
        )
    return before, committed


@pytest.mark.long  # ~30 s; test_distributed_fleet.py's full fleet restart is the short one
def test_fleet_restart_resumes_from_committed_offsets(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = unique("resume")
    remote = f"A.{topic}"
    asyncio.run(create_topic(a, topic, PARTITIONS))
    producer = SteadyProducer(a, topic, PARTITIONS)
    # A long flush interval: a graceful stop has seconds of records to flush, a crash seconds to redo.
    workers = python_workers(
        b, tmp_path, unique("resume-group"), 3, **{"offset.flush.interval.ms": FLUSH_INTERVAL_S * 1000}
    )
    offsets_topic = str(workers[0].offset_topic)
    config = mirror_config(cluster_a, cluster_b, topic, **{"tasks.max": "3"})
    producer.start()
    try:
        start_fleet(workers)
        code, body = workers[0].rest("POST", "/connectors", {"name": "mirror", "config": config})
        assert code == 201, body
        stream(b, remote, producer, FLUSH_INTERVAL_S * 1.5, 90)

        # Round 1: SIGTERM to the whole fleet mid-stream; the source keeps growing while nothing runs.
        stop_took = stop_gracefully(workers)
        before, committed = stopped_target(b, remote, offsets_topic, "mirror", "A", topic)
        assert committed == {p: len(s) - 1 for p, s in before.items()}, "a graceful stop commits all it wrote"
        time.sleep(1)
        restarted = time.monotonic()
        start_fleet(workers)
        produced = producer.stop()
        after = wait_lengths(b, remote, produced, CATCH_UP_TIMEOUT_S)
        print(
            f"\ngraceful: fleet stopped in {stop_took:.1f} s, {sum(map(len, before.values()))} records on B; "
            f"caught up with {sum(produced.values())} {time.monotonic() - restarted:.1f} s after restart"
        )
        assert after == {p: list(range(n)) for p, n in produced.items()}, "duplicates or loss after SIGTERM"

        # Round 2: kill -9 of the whole fleet mid-stream; re-replication starts at committed + 1.
        producer.start()
        stream(b, remote, producer, FLUSH_INTERVAL_S * 1.5, 60)
        for w in workers:
            w.kill()
        before, committed = stopped_target(b, remote, offsets_topic, "mirror", "A", topic)
        duplicates = {p: len(before[p]) - 1 - committed[p] for p in before}
        restarted = time.monotonic()
        after, expected, produced = resume_and_catch_up(workers, b, remote, producer, before, committed)
        print(
            f"kill -9: uncommitted (re-replicated) records per partition {duplicates}; "
            f"caught up {time.monotonic() - restarted:.1f} s after restart"
        )
        assert after == expected, "re-replication must start exactly at committed + 1, with no loss"
        assert_source_intact(a, topic, produced)
    finally:
        producer.stop()
        stop_all(workers)


def take_over(
    a: str,
    b: str,
    topic: str,
    remote: str,
    producer: SteadyProducer,
    workers: Sequence[PyconnectWorker],
    connector: str,
    alias: str,
) -> None:
    """After Java stopped gracefully: pyconnect resumes at Java's committed + 1 and loses nothing."""
    offsets_topic = str(workers[0].offset_topic)
    before, committed = stopped_target(b, remote, offsets_topic, connector, alias, topic)
    java_unflushed = {p: len(before[p]) - 1 - committed[p] for p in before}
    assert java_unflushed == dict.fromkeys(range(PARTITIONS), 0), "Java's graceful stop commits all it wrote"
    started = time.monotonic()
    try:
        after, expected, produced = resume_and_catch_up(workers, b, remote, producer, before, committed)
        print(
            f"\n{connector}: Java wrote {sum(map(len, before.values()))} records, committed {committed}; "
            f"pyconnect caught up {time.monotonic() - started:.1f} s after start"
        )
        assert {p: after[p][len(before[p])] for p in after} == {p: c + 1 for p, c in committed.items()}
        assert after == expected, "pyconnect must resume exactly at Java's committed + 1, losing nothing"
        assert_source_intact(a, topic, produced)

        # pyconnect's commits land under the key bytes Java wrote: one key per partition, now current.
        def resumed() -> dict[int, int] | None:
            now = committed_offsets(b, offsets_topic, connector, alias, topic)
            return now if now == {p: n - 1 for p, n in produced.items()} else None

        wait_for("pyconnect's commits of the last records", resumed, 30)
        stored = asyncio.run(read_connect_offsets(b, offsets_topic))
        keys = [
            k
            for k in stored
            if k.startswith(f'["{connector}",'.encode()) and f'"topic":"{topic}"'.encode() in k
        ]
        assert len(keys) == PARTITIONS, keys
    finally:
        stop_all(workers)


@pytest.mark.long
@pytest.mark.java
def test_pyconnect_takes_over_from_java_connect_worker(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = unique("from-java")
    remote = f"A.{topic}"
    group = unique("java-group")
    asyncio.run(create_topic(a, topic, PARTITIONS))
    producer = SteadyProducer(a, topic, PARTITIONS)
    java = JavaConnectWorker(
        b,
        tmp_path / "java",
        group_id=group,
        extra={"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000},
        die_with_parent=True,
    )
    producer.start()
    try:
        java.start()
        java.wait_ready()
        config = mirror_config(cluster_a, cluster_b, topic)
        code, body = java.rest("POST", "/connectors", {"name": "mirror", "config": config})
        assert code == 201, body
        stream(b, remote, producer, JAVA_STREAM_S, 90, java.check_alive)
        stop_gracefully([java], JAVA_STOP_TIMEOUT_S)
        take_over(a, b, topic, remote, producer, python_workers(b, tmp_path, group, 2), "mirror", "A")
    finally:
        producer.stop()
        java.stop(timeout=JAVA_STOP_TIMEOUT_S)


@pytest.mark.java
@pytest.mark.long  # make test: tests/compat/test_worker_handover.py (pyconnect takes over from Java)
def test_pyconnect_takes_over_from_java_mirror_maker(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    # Fresh aliases keep the dedicated-mode names (group, internal topics, remote topic) unique per run.
    src, dst = f"S{uuid.uuid4().hex[:6]}", f"T{uuid.uuid4().hex[:6]}"
    topic = unique("from-mm2")
    remote = f"{src}.{topic}"
    asyncio.run(create_topic(a, topic, PARTITIONS))
    producer = SteadyProducer(a, topic, PARTITIONS)
    mm2 = JavaMirrorMaker(one_way_mm2(src, dst, a, b, topic), tmp_path / "mm2", die_with_parent=True)
    workers = [
        PyconnectWorker(
            b,
            tmp_path / f"py-{i}",
            group_id=f"{src}-mm2",
            config_topic=f"mm2-configs.{src}.internal",
            offset_topic=f"mm2-offsets.{src}.internal",
            status_topic=f"mm2-status.{src}.internal",
            extra={
                **FAST_GROUP,
                "key.converter": BYTES,
                "value.converter": BYTES,
                "header.converter": BYTES,
            },
            die_with_parent=True,
        )
        for i in range(2)
    ]
    producer.start()
    try:
        mm2.start()
        stream(b, remote, producer, JAVA_STREAM_S, 120, mm2.check_alive)
        stop_gracefully([mm2], JAVA_STOP_TIMEOUT_S)
        take_over(a, b, topic, remote, producer, workers, "MirrorSourceConnector", src)
    finally:
        producer.stop()
        mm2.stop(timeout=JAVA_STOP_TIMEOUT_S)
