"""Contract tests of the aiokafka internals pyconnect.kafka.target_metadata reads: the cluster metadata's
partition table (read in place) and the accumulator's queued batches (withdrawn), on aiokafka's own
objects, without a broker."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.cluster import ClusterMetadata
from aiokafka.protocol.metadata import MetadataResponse_v0
from aiokafka.structs import TopicPartition

from pyconnect.kafka.target_metadata import NO_LEADER, readiness, sasl_principal, withdraw_queued
from pyconnect.kafka.target_waits import ACL_DENIED, TARGET_TOPIC_MISSING

NO_ERROR, TOPIC_AUTHORIZATION_FAILED = 0, 29


def metadata(*topics: tuple[int, str, list[int]]) -> ClusterMetadata:
    """A cluster whose metadata names ``(error, topic, leaders by partition)`` (-1: no leader)."""
    cluster = ClusterMetadata()
    cluster.update_metadata(
        MetadataResponse_v0(
            [(1, "127.0.0.1", 9092)],
            [
                (error, topic, [(0, p, leader, [1], [1]) for p, leader in enumerate(leaders)])
                for error, topic, leaders in topics
            ],
        )
    )
    return cluster


def producer_of(cluster: ClusterMetadata) -> SimpleNamespace:
    return SimpleNamespace(client=SimpleNamespace(cluster=cluster))


def test_readiness_reads_aiokafkas_partition_table() -> None:
    cluster = metadata((NO_ERROR, "t", [1, -1]), (TOPIC_AUTHORIZATION_FAILED, "hidden", []))
    assert type(cluster._partitions) is dict  # the table read in place
    producer = producer_of(cluster)
    assert readiness(producer, "t", 0) is None
    assert readiness(producer, "t", 1) is NO_LEADER
    third = readiness(producer, "t", 2)
    assert getattr(third, "code", None) == TARGET_TOPIC_MISSING and getattr(third, "present", None) == 2
    absent = readiness(producer, "absent", 0)
    assert getattr(absent, "code", None) == TARGET_TOPIC_MISSING and getattr(absent, "present", 0) is None
    hidden = readiness(producer, "hidden", 0, "User:alice")
    assert (getattr(hidden, "code", None), getattr(hidden, "operation", None)) == (ACL_DENIED, "DESCRIBE")


async def test_queued_batches_are_withdrawn_from_aiokafkas_accumulator() -> None:
    producer = AIOKafkaProducer(bootstrap_servers="127.0.0.1:9")
    builder = producer.create_batch()
    builder.append(timestamp=None, key=None, value=b"a")
    builder.close()
    queued = await producer._message_accumulator.add_batch(builder, TopicPartition("t", 0), 0.01)
    assert withdraw_queued(producer, "t", 0, RuntimeError("withdrawn")) == 1
    assert TopicPartition("t", 0) not in producer._message_accumulator._batches
    with pytest.raises(RuntimeError, match="withdrawn"):
        await queued
    assert withdraw_queued(producer, "t", 0, RuntimeError("again")) == 0
    await producer.stop()


def test_the_principal_of_a_user_name_login() -> None:
    client = SimpleNamespace(
        _security_protocol="SASL_SSL", _sasl_mechanism="SCRAM-SHA-256", _sasl_plain_username="alice"
    )
    assert sasl_principal(SimpleNamespace(client=client)) == "User:alice"
    client._security_protocol = "PLAINTEXT"
    assert sasl_principal(SimpleNamespace(client=client)) is None
