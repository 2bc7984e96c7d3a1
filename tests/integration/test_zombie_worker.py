"""A worker paused past its session timeout never rewinds the connector's source offsets (beyond Java).

Two pyconnect workers mirror a topic of A to B with one MirrorSourceConnector task while a producer keeps
writing to A (a record's value is its own source offset). The worker running the task is frozen with
SIGSTOP past ``session.timeout.ms``; the other takes the task over and commits further; then the frozen
one gets SIGCONT. It wakes holding offsets older than the new owner's: a Java worker commits them (on its
next offset flush and when it stops the task it lost), rewinding the partitions, and the task's next start
copies the records in between again. Checked on real Kafka:

* every offset ever committed for each source partition, read from the offsets topic in order, never goes
  back;
* the woken worker writes no stale copy and stops the task it lost without committing (its log says it
  dropped the offsets);
* the target holds every source record, and no more duplicates than the in-flight bound: what the frozen
  worker had copied past its last commit, at most an offset-flush interval of records (plus margin), not
  the hundreds a pause costs when the woken worker writes its backlog, nor a rewind's re-copy.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.connect_worker import ConnectWorkerProcess
from tests.integration.fleet import python_workers, running_tasks, wait_for
from tests.integration.test_mirror_resume import (
    SteadyProducer,
    create_topic,
    start_fleet,
    stop_all,
    wait_lengths,
)
from tests.integration.test_mirror_source import mirror_config

pytestmark = pytest.mark.kafka

PARTITIONS = 2
SESSION_TIMEOUT_MS = 6000
FLUSH_INTERVAL_MS = 1000
PAUSE_S = SESSION_TIMEOUT_MS / 1000 + 10
"""Frozen past the session timeout, and long enough for the new owner to commit well past the zombie."""
DROPPED = "dropping the offsets"


def committed_history(bootstrap: str, offsets_topic: str, connector: str, topic: str) -> dict[int, list[int]]:
    """source partition -> every offset committed for it by ``connector``, in the offsets topic's order."""

    async def read() -> dict[int, list[int]]:
        consumer = AIOKafkaConsumer(
            offsets_topic, bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest"
        )
        await consumer.start()
        history: dict[int, list[int]] = defaultdict(list)
        try:
            idle = 0
            async with asyncio.timeout(30):
                while idle < 3:
                    batch = await consumer.getmany(timeout_ms=500)
                    idle = 0 if batch else idle + 1
                    for messages in batch.values():  # one key lives in one partition: its order is kept
                        for m in messages:
                            name, partition = json.loads(m.key)
                            if name != connector or partition.get("topic") != topic or m.value is None:
                                continue
                            history[int(partition["partition"])].append(int(json.loads(m.value)["offset"]))
        finally:
            await consumer.stop()
        return dict(history)

    return asyncio.run(read())


def owner_of_task(workers: list[ConnectWorkerProcess], connector: str) -> ConnectWorkerProcess | None:
    for observer in workers:
        try:
            tasks = running_tasks(observer, connector, 1)
        except OSError:
            continue
        if tasks:
            return next((w for w in workers if w.worker_id == tasks[0]), None)
    return None


@pytest.mark.long  # make test: the short chaos run pauses a worker past its session (tests/chaos)
def test_a_worker_paused_past_its_session_never_rewinds_committed_offsets(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = unique("zombie")
    remote = f"A.{topic}"
    asyncio.run(create_topic(a, topic, PARTITIONS))
    workers: list[ConnectWorkerProcess] = list(
        python_workers(
            b,
            tmp_path,
            unique("zombie-group"),
            2,
            **{
                "session.timeout.ms": SESSION_TIMEOUT_MS,
                "offset.flush.interval.ms": FLUSH_INTERVAL_MS,
                "scheduled.rebalance.max.delay.ms": 1000,
            },
        )
    )
    offsets_topic = str(workers[0].offset_topic)
    producer = SteadyProducer(a, topic, PARTITIONS)
    zombie: ConnectWorkerProcess | None = None
    frozen = False
    producer.start()
    try:
        start_fleet(workers)
        config = mirror_config(cluster_a, cluster_b, topic, **{"tasks.max": "1"})
        code, body = workers[0].rest("POST", "/connectors", {"name": "mirror", "config": config})
        assert code == 201, body
        zombie = wait_for("the mirror task running", lambda: owner_of_task(workers, "mirror"), 60)
        survivor = next(w for w in workers if w is not zombie)
        wait_lengths(b, remote, dict(producer.produced), 30)
        time.sleep(2 * FLUSH_INTERVAL_MS / 1000)
        rate_from, rate_at = dict(producer.produced), time.monotonic()

        assert zombie.pid is not None
        os.kill(zombie.pid, signal.SIGSTOP)
        frozen = True
        paused_at = time.monotonic()
        wait_for(
            "the survivor to take the task over", lambda: owner_of_task([survivor], "mirror") is survivor, 40
        )
        time.sleep(max(0.0, PAUSE_S - (time.monotonic() - paused_at)))
        woke_at_byte = zombie.log_file.stat().st_size
        os.kill(zombie.pid, signal.SIGCONT)
        frozen = False
        per_s = max(n - rate_from[p] for p, n in producer.produced.items()) / (time.monotonic() - rate_at)

        log_file = zombie.log_file
        wait_for(
            "the woken worker to rejoin the group",
            lambda: "Joined generation" in log_file.read_bytes()[woke_at_byte:].decode(errors="replace"),
            40,
        )
        wait_for("the mirror task running again", lambda: owner_of_task(workers, "mirror"), 40)
        time.sleep(3 * FLUSH_INTERVAL_MS / 1000)
        produced = producer.stop()
        after = wait_lengths(b, remote, produced, 60)
        history = committed_history(b, offsets_topic, "mirror", topic)
    finally:
        if zombie is not None and zombie.pid is not None and frozen:
            os.kill(zombie.pid, signal.SIGCONT)
        producer.stop()
        stop_all(workers)

    bound = int(per_s * (3 * FLUSH_INTERVAL_MS / 1000)) + 50
    duplicates = {p: len(values) - len(set(values)) for p, values in after.items()}
    print(
        f"\n{sum(len(h) for h in history.values())} commits; paused {PAUSE_S:.0f} s at ~{per_s:.0f} records/s "
        f"per partition; duplicates on the target {duplicates} (in-flight bound {bound})"
    )
    assert set(history) == set(range(PARTITIONS))
    for p, offsets in history.items():
        back = [(x, y) for x, y in itertools.pairwise(offsets) if y < x]
        assert not back, f"partition {p}: committed offsets went back {back[:5]}"
    for p, n in produced.items():
        assert set(after[p]) == set(range(n)), f"partition {p}: records lost"
        assert duplicates[p] <= bound, f"partition {p}: {duplicates[p]} records copied twice (bound {bound})"
    assert DROPPED in zombie.log_file.read_text(), "the woken worker stopped its lost task without dropping"
