"""The precedence rules of pyconnect.config.client_configs, one per client family."""

from __future__ import annotations

import pytest

from pyconnect.config.client_configs import (
    ClientConfigError,
    ProducerBounds,
    client_overrides,
    exactly_once_task_producer_config,
    mirror_client_config,
    mirror_client_id,
    mirror_connector_client_config,
    mm2_client_config,
    mm2_connector_cluster_config,
    producer_bounds,
    worker_client_config,
)
from pyconnect.config.worker import WorkerConfig
from pyconnect.kafka.clients import create_producer, max_block_seconds

WORKER = {
    "bootstrap.servers": "h1:9092, h2:9092",
    "group.id": "g",
    "config.storage.topic": "c",
    "offset.storage.topic": "o",
    "status.storage.topic": "s",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "security.protocol": "SASL_PLAINTEXT",
    "producer.linger.ms": "50",
    "consumer.max.poll.records": "7",
    "admin.request.timeout.ms": "9",
}


def test_the_workers_own_clients_get_its_unprefixed_keys_and_one_bootstrap_string() -> None:
    config = worker_client_config(WorkerConfig(WORKER, environ={}))
    assert config["bootstrap.servers"] == "h1:9092,h2:9092"
    assert config["security.protocol"] == "SASL_PLAINTEXT"
    assert not [k for k in config if k.startswith(("producer.", "consumer.", "admin."))]


def test_an_exactly_once_task_producer_is_transactional_and_idempotent_whatever_the_user_set(
    caplog: pytest.LogCaptureFixture,
) -> None:
    worker = WorkerConfig(WORKER, environ={})
    plain = exactly_once_task_producer_config(worker, "c", 3, "cid")
    assert plain["transactional.id"] == "g-c-3"  # Java's Worker.taskTransactionalId
    assert plain["enable.idempotence"] == "true"
    assert plain["client.id"] == "connector-producer-c-3"
    assert plain["linger.ms"] == "50" and plain["acks"] == "all"
    assert not caplog.records, "no warning when the user set neither key"

    overrides = {"transactional.id": "mine", "enable.idempotence": "FALSE", "linger.ms": "1"}
    forced = exactly_once_task_producer_config(worker, "c", 3, "cid", overrides)
    assert (forced["transactional.id"], forced["enable.idempotence"], forced["linger.ms"]) == (
        "g-c-3",
        "true",
        "1",
    )
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == [
        "The value 'FALSE' for the 'enable.idempotence' property will be ignored as it cannot be overridden "
        "for connectors when exactly-once source support is enabled. The value 'true' will be used instead.",
        "The value 'mine' for the 'transactional.id' property will be ignored as it cannot be overridden "
        "for connectors when exactly-once source support is enabled. The value 'g-c-3' will be used instead.",
    ]
    same_case = exactly_once_task_producer_config(worker, "c", 3, "cid", {"enable.idempotence": "TRUE"})
    assert same_case["enable.idempotence"] == "TRUE" and len(caplog.records) == 2  # case-insensitive match


def test_overrides_are_read_per_role() -> None:
    connector = {"consumer.override.max.poll.records": "1", "producer.override.linger.ms": "2"}
    assert client_overrides(connector, "All", "consumer") == {"max.poll.records": "1"}
    assert client_overrides(connector, "All") == {"linger.ms": "2"}


def test_mirror_connector_clients_layer_cluster_then_role_then_cluster_role() -> None:
    originals = {
        "source.cluster.bootstrap.servers": "a:1",
        "source.cluster.linger.ms": "1",
        "consumer.bootstrap.servers": "ignored-by-the-next-layer",
        "source.consumer.bootstrap.servers": "a:2",
        "consumer.auto.offset.reset": "latest",
        "consumer.enable.auto.commit": "true",
    }
    props = mirror_connector_client_config(originals, "source", "consumer")
    assert props == {
        "bootstrap.servers": "a:2",
        "auto.offset.reset": "latest",
        "enable.auto.commit": "false",
    }
    assert mirror_client_id({"client.id": "me"}, "A->B|mm2-0", "replication-consumer") == {
        "client.id": "me|A->B|mm2-0|replication-consumer"
    }


def test_mirror_client_keeps_only_connectivity_keys_role_prefixed_winning() -> None:
    config = {
        "bootstrap.servers": "b:1",
        "admin.bootstrap.servers": "b:2",
        "admin.client.id": "x",
        "groups": "g",
    }
    assert mirror_client_config(config, "admin") == {"bootstrap.servers": "b:2"}
    assert mirror_client_config(config, "consumer") == {"bootstrap.servers": "b:1"}


def test_mm2_cluster_properties_become_cluster_keys_then_client_keys() -> None:
    raw = {"clusters": "A, B", "A.bootstrap.servers": "a:1", "A.consumer.max.poll.records": "5", "A.x": "y"}
    client = mm2_client_config(raw, "A")
    assert client["bootstrap.servers"] == "a:1" and client["admin.bootstrap.servers"] == "a:1"
    props = mm2_connector_cluster_config(
        {"x": "y", "consumer.max.poll.records": "5", "bootstrap.servers": "a:1"}, "source"
    )
    assert list(props) == [
        "source.cluster.x",
        "source.cluster.bootstrap.servers",
        "source.consumer.max.poll.records",
    ]


def test_producer_bounds_read_java_keys_with_java_defaults() -> None:
    assert producer_bounds({}) == ProducerBounds(delivery_s=120.0, max_block_s=60.0)
    task = producer_bounds({"delivery.timeout.ms": str(2**31 - 1), "max.block.ms": str(2**63 - 1)})
    assert task.delivery_s == (2**31 - 1) / 1000 and task.max_block_s == (2**63 - 1) / 1000
    with pytest.raises(ClientConfigError, match=r"max\.block\.ms"):
        producer_bounds({"max.block.ms": "soon"})


async def test_a_producer_lives_by_its_delivery_timeout_and_max_block() -> None:
    producer = create_producer({"bootstrap.servers": "127.0.0.1:9", "delivery.timeout.ms": "7000"})
    blocking = create_producer({"bootstrap.servers": "127.0.0.1:9", "max.block.ms": "1500"})
    try:
        assert producer._message_accumulator._batch_ttl == 7.0
        assert max_block_seconds(producer) == 60.0
        assert blocking._message_accumulator._batch_ttl == 120.0
        assert max_block_seconds(blocking) == 1.5
    finally:
        await producer.stop()
        await blocking.stop()
