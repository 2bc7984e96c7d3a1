"""Java client keys to aiokafka keyword arguments."""

from __future__ import annotations

import pytest

from pyconnect.config.client_configs import (
    ClientConfigError,
    admin_kwargs,
    consumer_kwargs,
    ignored_keys,
    parse_jaas_credentials,
    producer_kwargs,
)


def test_producer_keys_and_java_defaults() -> None:
    kwargs = producer_kwargs(
        {
            "bootstrap.servers": "127.0.0.1:9092",
            "compression.type": "zstd",
            "batch.size": "65536",
            "linger.ms": "20",
            "acks": "-1",
            "client.id": "mm2",
        }
    )
    assert kwargs == {
        "bootstrap_servers": "127.0.0.1:9092",
        "compression_type": "zstd",
        "max_batch_size": 65536,
        "linger_ms": 20,
        "acks": "all",
        "client_id": "mm2",
        "enable_idempotence": True,
    }
    assert producer_kwargs({"bootstrap.servers": "h:1"})["linger_ms"] == 5
    assert producer_kwargs({"compression.type": "none"})["compression_type"] is None
    assert producer_kwargs({"acks": "1", "enable.idempotence": "FALSE"}) | {} == {
        "acks": 1,
        "linger_ms": 5,
        "enable_idempotence": False,
    }


def test_consumer_keys() -> None:
    kwargs = consumer_kwargs(
        {
            "bootstrap.servers": "h:1",
            "group.id": "g",
            "isolation.level": "read_committed",
            "auto.offset.reset": "Earliest",
            "max.poll.records": "1000",
            "enable.auto.commit": "false",
        }
    )
    assert kwargs == {
        "bootstrap_servers": "h:1",
        "group_id": "g",
        "isolation_level": "read_committed",
        "auto_offset_reset": "earliest",
        "max_poll_records": 1000,
        "enable_auto_commit": False,
    }


def test_admin_takes_only_common_keys() -> None:
    assert admin_kwargs({"bootstrap.servers": "h:1", "linger.ms": "5", "group.id": "g"}) == {
        "bootstrap_servers": "h:1"
    }


def test_ignored_keys_are_reported_per_role() -> None:
    config = {"bootstrap.servers": "h:1", "buffer.memory": "1", "linger.ms": "5", "group.id": "g"}
    assert ignored_keys(config, "producer") == ["buffer.memory", "group.id"]
    assert ignored_keys(config, "consumer") == ["buffer.memory", "linger.ms"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"linger.ms": "soon"}, "Invalid value soon for configuration linger.ms"),
        ({"acks": "2"}, "Invalid value 2 for configuration acks"),
        ({"compression.type": "brotli"}, "configuration compression.type"),
        ({"enable.idempotence": "yes"}, "configuration enable.idempotence"),
    ],
)
def test_bad_values_name_the_key(config: dict[str, str], message: str) -> None:
    with pytest.raises(ClientConfigError, match=message):
        producer_kwargs(config)


def test_sasl_plain_credentials_from_jaas() -> None:
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="s3\\"cret";'
    assert parse_jaas_credentials(jaas) == ("alice", 's3"cret')
    kwargs = consumer_kwargs(
        {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas}
    )
    assert (kwargs["sasl_plain_username"], kwargs["sasl_mechanism"]) == ("alice", "PLAIN")
    with pytest.raises(ClientConfigError, match=r"sasl\.jaas\.config"):
        parse_jaas_credentials("PlainLoginModule required;")


def test_unreadable_stores_are_refused_with_the_key() -> None:
    with pytest.raises(
        ClientConfigError,
        match=r"^Invalid value /x\.jks for configuration ssl\.truststore\.location: No such file or directory$",
    ):
        consumer_kwargs(
            {"security.protocol": "SSL", "ssl.truststore.location": "/x.jks", "ssl.truststore.type": "JKS"}
        )
