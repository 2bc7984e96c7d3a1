"""KIP-618 exactly-once source tasks on real Kafka (``exactly.once.source.support=enabled``).

- a fleet of two workers runs a VerifiableSource task; the worker running it is killed with SIGKILL
  mid-stream and the other takes the task over: a ``read_committed`` consumer of the output topic sees
  every seqno exactly once (none lost, none duplicated), the offsets topic holds the task's offset as
  transactional records (commit markers between them) matching the last seqno written;
- a zombie: two producers of one task's ``transactional.id``; the newer one's initialisation fences
  the older, whose commit then fails and whose records never become visible to ``read_committed``;
- the REST preflight checks of ``exactly.once.support=required`` answer 400 with Java's messages; a
  MirrorSourceConnector with a read_committed source consumer passes them and replicates B into A.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from pyconnect.herder.exactly_once_validation import NOT_IMPLEMENTED, UNSUPPORTED
from pyconnect.kafka.batch_sender import OutgoingRecord
from pyconnect.kafka.clients import create_producer
from pyconnect.kafka.task_transactions import TaskTransactions, TransactionCommitError
from pyconnect.protocol.internal_records import encode_offset_key, encode_offset_value
from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import fleet, python_workers, read_topic, running_tasks, verifiable, wait_for

pytestmark = pytest.mark.kafka

EOS = {"exactly.once.source.support": "enabled", "scheduled.rebalance.max.delay.ms": 0}


def test_a_killed_workers_task_resumes_elsewhere_with_every_record_exactly_once(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group, topic = unique("eos"), unique("out")
    bootstrap = cluster_a.bootstrap_servers
    workers = python_workers(bootstrap, tmp_path, group, 2, **EOS)
    with fleet(workers):
        code, body = workers[0].rest(
            "POST", "/connectors", {"name": "verif", "config": verifiable(topic, 1, throughput=200)}
        )
        assert code == 201, body
        owner_id = wait_for("the task RUNNING", lambda: running_tasks(workers[1], "verif", 1), 60)[0]
        victim = next(w for w in workers if w.worker_id == owner_id)
        survivor = next(w for w in workers if w is not victim)

        def committed_before_kill() -> int:
            return len(asyncio.run(read_topic(bootstrap, topic, max_s=3)))

        before = wait_for("records committed by the first owner", committed_before_kill, 30)
        victim.kill()
        moved = wait_for(
            "the task RUNNING on the survivor",
            lambda: (o := running_tasks(survivor, "verif", 1)) and o[0] == survivor.worker_id and o,
            45,
        )
        assert moved[0] == survivor.worker_id
        time.sleep(3)  # the new owner writes on for a while
    # the fleet stopped cleanly: the survivor committed its last transaction

    records = asyncio.run(read_topic(bootstrap, topic))
    seqnos = [json.loads(value)["payload"] for _, _, _, value in records if value is not None]
    assert len(seqnos) > before > 0
    duplicates = len(seqnos) - len(set(seqnos))
    lost = len(set(range(max(seqnos) + 1)) - set(seqnos))
    print(f"\nexactly-once failover: {len(seqnos)} records, {lost} lost, {duplicates} duplicated")
    assert (lost, duplicates) == (0, 0)

    offsets_topic = workers[0].offset_topic
    assert offsets_topic is not None
    offset_records = asyncio.run(read_topic(bootstrap, offsets_topic))
    key = encode_offset_key("verif", {"id": 0})
    mine = [(p, o, v) for p, o, k, v in offset_records if k == key]
    assert mine, "the task's offsets are in the offsets topic"
    assert json.loads(mine[-1][2] or b"null") == {"seqno": max(seqnos)}
    positions = [o for p, o, _ in mine if p == mine[0][0]]
    assert all(b - a > 1 for a, b in itertools.pairwise(positions)), "a commit marker after each offset"


async def test_a_zombie_task_producer_is_fenced_and_writes_nothing(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    topic, offsets_topic = unique("out"), unique("offsets")
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(t, 1, 1) for t in (topic, offsets_topic)])
    finally:
        await admin.close()
    config = {
        "bootstrap.servers": bootstrap,
        "enable.idempotence": "true",
        "acks": "all",
        "transactional.id": unique("group") + "-c-0",
    }
    zombie_producer, producer = create_producer(config), create_producer(config)
    await zombie_producer.start()
    try:
        zombie = TaskTransactions(zombie_producer, offsets_topic, "c-0")
        await zombie.initialize()
        await zombie.send([OutgoingRecord(topic, b"k", b"zombie-1", 0)])
        await zombie.commit([(encode_offset_key("c", {"p": 0}), encode_offset_value({"n": 1}))])

        await zombie.send([OutgoingRecord(topic, b"k", b"zombie-2", 0)])
        await producer.start()  # a new instance of the task: its producer id fences the zombie
        current = TaskTransactions(producer, offsets_topic, "c-0")
        await current.initialize()
        with pytest.raises(TransactionCommitError, match="c-0"):
            await zombie.commit([(encode_offset_key("c", {"p": 0}), encode_offset_value({"n": 2}))])

        await current.send([OutgoingRecord(topic, b"k", b"current-2", 0)])
        await current.commit([(encode_offset_key("c", {"p": 0}), encode_offset_value({"n": 2}))])
    finally:
        await zombie_producer.stop()
        await producer.stop()

    values = [v for _, _, _, v in await read_topic(bootstrap, topic)]
    assert values == [b"zombie-1", b"current-2"]
    offsets = [v for _, _, _, v in await read_topic(bootstrap, offsets_topic)]
    assert offsets == [encode_offset_value({"n": 1}), encode_offset_value({"n": 2})]


def test_required_is_checked_before_creation_and_a_mirror_source_replicates_exactly_once(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    """The worker runs on A (the target); MirrorSourceConnector replicates B's topic into ``B.<topic>``."""
    group, topic = unique("eos-required"), unique("out")
    bootstrap = cluster_a.bootstrap_servers
    asyncio.run(produce(cluster_b.bootstrap_servers, topic, [f"r{n}".encode() for n in range(20)]))
    (worker,) = python_workers(bootstrap, tmp_path, group, 1, **EOS)
    mirror = {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "source.cluster.alias": "B",
        "target.cluster.alias": "A",
        "source.cluster.bootstrap.servers": cluster_b.bootstrap_servers,
        "target.cluster.bootstrap.servers": bootstrap,
        "exactly.once.support": "required",
        "topics": topic,
        "sync.topic.configs.enabled": "false",
        "sync.topic.acls.enabled": "false",
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
    }
    with fleet([worker]):
        code, body = worker.rest(
            "POST",
            "/connectors",
            {"name": "v", "config": verifiable(topic, 1, **{"exactly.once.support": "required"})},
        )
        assert code == 400, body
        assert body["message"] == (
            "Connector configuration is invalid and contains the following 1 error(s):\n"
            f"{NOT_IMPLEMENTED}\n"
            "You can also find the above list of errors at the endpoint "
            "`/connector-plugins/{connectorType}/config/validate`"
        )
        code, body = worker.rest("POST", "/connectors", {"name": "m", "config": mirror})
        assert code == 400, body
        assert UNSUPPORTED in body["message"]
        assert "isolation.level set to 'read_committed'" in body["message"]

        committed = {**mirror, "source.consumer.isolation.level": "read_committed"}
        code, body = worker.rest("POST", "/connectors", {"name": "m", "config": committed})
        assert code == 201, body

        def replicated() -> list[bytes | None]:
            values = [v for *_, v in asyncio.run(read_topic(bootstrap, f"B.{topic}", max_s=3))]
            return values if len(values) >= 20 else []

        values = wait_for("B's records replicated into A, committed", replicated, 60, interval=1.0)
    assert sorted(values, key=lambda v: int((v or b"r-1")[1:])) == [f"r{n}".encode() for n in range(20)]


async def produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = create_producer({"bootstrap.servers": bootstrap, "acks": "all"})
    await producer.start()
    try:
        await asyncio.gather(*[await producer.send(topic, v, partition=0) for v in values])
    finally:
        await producer.stop()
