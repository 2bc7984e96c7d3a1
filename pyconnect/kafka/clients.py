"""Java client configs (``bootstrap.servers``, ``linger.ms``, ``sasl.jaas.config`` ...) to aiokafka clients.

Operators configure clients with Java's keys (in worker properties, ``producer.override.*``,
``mm2.properties``). This module is the one translation table. Contract:

- ``producer_kwargs`` / ``consumer_kwargs`` / ``admin_kwargs`` take a flat mapping of Java keys to
  strings (or already-typed values) and return aiokafka constructor keyword arguments.
- Keys with no aiokafka equivalent that cannot change behaviour we promise (socket buffer sizes,
  serializers we replace with bytes, metrics reporters, ...) are dropped; ``ignored_keys`` lists them so
  the caller can log them once. A value that cannot be honoured (a JKS keystore, an unknown SASL
  mechanism, a malformed number) raises ``ClientConfigError`` naming the key.
- Kafka 4 client defaults differ from aiokafka's where noted; the Java default wins (``linger.ms`` is
  5, ``enable.idempotence`` true, ``acks`` all).
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Callable, Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient


class ClientConfigError(ValueError):
    """A client setting cannot be honoured; the message names the key."""


def _int(key: str, value: Any) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise ClientConfigError(
            f"Invalid value {value} for configuration {key}: Not a number of type INT"
        ) from None


def _bool(key: str, value: Any) -> bool:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ClientConfigError(
            f"Invalid value {value} for configuration {key}: Expected value to be either true or false"
        )
    return text == "true"


def _acks(key: str, value: Any) -> int | str:
    text = str(value).strip().lower()
    if text in ("all", "-1"):
        return "all"
    if text in ("0", "1"):
        return int(text)
    raise ClientConfigError(
        f"Invalid value {value} for configuration {key}: String must be one of: all, -1, 0, 1"
    )


def _compression(key: str, value: Any) -> str | None:
    text = str(value).strip().lower()
    if text == "none":
        return None
    if text in ("gzip", "snappy", "lz4", "zstd"):
        return text
    raise ClientConfigError(
        f"Invalid value {value} for configuration {key}: String must be one of: none, gzip, snappy, lz4, zstd"
    )


def _str(_key: str, value: Any) -> str:
    return str(value).strip()


def _reset(key: str, value: Any) -> str:
    text = str(value).strip().lower()
    if text not in ("earliest", "latest", "none"):
        raise ClientConfigError(
            f"Invalid value {value} for configuration {key}: Invalid value for auto.offset.reset"
        )
    return text


Converter = Callable[[str, Any], Any]

_COMMON: dict[str, tuple[str, Converter]] = {
    "bootstrap.servers": ("bootstrap_servers", _str),
    "client.id": ("client_id", _str),
    "request.timeout.ms": ("request_timeout_ms", _int),
    "retry.backoff.ms": ("retry_backoff_ms", _int),
    "metadata.max.age.ms": ("metadata_max_age_ms", _int),
    "connections.max.idle.ms": ("connections_max_idle_ms", _int),
    "security.protocol": ("security_protocol", _str),
    "sasl.mechanism": ("sasl_mechanism", _str),
}

_PRODUCER: dict[str, tuple[str, Converter]] = {
    "acks": ("acks", _acks),
    "compression.type": ("compression_type", _compression),
    "batch.size": ("max_batch_size", _int),
    "max.request.size": ("max_request_size", _int),
    "linger.ms": ("linger_ms", _int),
    "enable.idempotence": ("enable_idempotence", _bool),
    "transactional.id": ("transactional_id", _str),
    "transaction.timeout.ms": ("transaction_timeout_ms", _int),
}

_CONSUMER: dict[str, tuple[str, Converter]] = {
    "group.id": ("group_id", _str),
    "group.instance.id": ("group_instance_id", _str),
    "fetch.max.wait.ms": ("fetch_max_wait_ms", _int),
    "fetch.max.bytes": ("fetch_max_bytes", _int),
    "fetch.min.bytes": ("fetch_min_bytes", _int),
    "max.partition.fetch.bytes": ("max_partition_fetch_bytes", _int),
    "auto.offset.reset": ("auto_offset_reset", _reset),
    "enable.auto.commit": ("enable_auto_commit", _bool),
    "auto.commit.interval.ms": ("auto_commit_interval_ms", _int),
    "check.crcs": ("check_crcs", _bool),
    "max.poll.interval.ms": ("max_poll_interval_ms", _int),
    "session.timeout.ms": ("session_timeout_ms", _int),
    "heartbeat.interval.ms": ("heartbeat_interval_ms", _int),
    "max.poll.records": ("max_poll_records", _int),
    "isolation.level": ("isolation_level", _str),
    "client.rack": ("client_rack", _str),
}

_PRODUCER_DEFAULTS: dict[str, Any] = {"acks": "all", "linger_ms": 5, "enable_idempotence": True}

_SSL_KEYS = (
    "ssl.truststore.location",
    "ssl.truststore.type",
    "ssl.truststore.certificates",
    "ssl.keystore.location",
    "ssl.keystore.type",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.key.password",
    "ssl.keystore.password",
    "ssl.truststore.password",
    "ssl.endpoint.identification.algorithm",
)

_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def parse_jaas_credentials(jaas: str) -> tuple[str, str]:
    """username and password of a PlainLoginModule / ScramLoginModule ``sasl.jaas.config`` value."""
    options = {k: re.sub(r"\\(.)", r"\1", v) for k, v in _JAAS_OPTION.findall(jaas)}
    if "username" not in options or "password" not in options:
        raise ClientConfigError(
            'Invalid value for configuration sasl.jaas.config: expected username="..." password="..."'
        )
    return options["username"], options["password"]


def _ssl_context(config: Mapping[str, Any]) -> ssl.SSLContext:
    for key in ("ssl.truststore.type", "ssl.keystore.type"):
        kind = str(config.get(key, "PEM")).strip().upper()
        if kind != "PEM" and (config.get(key.replace(".type", ".location"))):
            raise ClientConfigError(
                f"Invalid value {kind} for configuration {key}: only PEM stores can be read here"
            )
    context = ssl.create_default_context()
    trust_file = config.get("ssl.truststore.location")
    trust_pem = config.get("ssl.truststore.certificates")
    if trust_file:
        context.load_verify_locations(cafile=str(trust_file))
    elif trust_pem:
        context.load_verify_locations(cadata=str(trust_pem))
    key_file = config.get("ssl.keystore.location")
    if key_file:
        context.load_cert_chain(str(key_file), password=config.get("ssl.key.password") or None)
    if str(config.get("ssl.endpoint.identification.algorithm", "https")).strip() == "":
        context.check_hostname = False
    return context


def _translate(config: Mapping[str, Any], table: Mapping[str, tuple[str, Converter]]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for key, (target, convert) in table.items():
        if key in config and config[key] is not None and str(config[key]) != "":
            kwargs[target] = convert(key, config[key])
    if "security_protocol" in kwargs and kwargs["security_protocol"] in ("SSL", "SASL_SSL"):
        kwargs["ssl_context"] = _ssl_context(config)
    if "sasl.jaas.config" in config:
        kwargs["sasl_plain_username"], kwargs["sasl_plain_password"] = parse_jaas_credentials(
            str(config["sasl.jaas.config"])
        )
    return kwargs


def ignored_keys(config: Mapping[str, Any], role: str) -> list[str]:
    """The keys of ``config`` that ``<role>_kwargs`` drops (role: producer, consumer, admin)."""
    known = set(_COMMON) | set(_SSL_KEYS) | {"sasl.jaas.config"}
    known |= set(_PRODUCER) if role == "producer" else set(_CONSUMER) if role == "consumer" else set()
    return sorted(k for k in config if k not in known)


def producer_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    return {**_PRODUCER_DEFAULTS, **_translate(config, {**_COMMON, **_PRODUCER})}


def consumer_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    return _translate(config, {**_COMMON, **_CONSUMER})


def admin_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    return _translate(config, _COMMON)


def create_producer(config: Mapping[str, Any], **overrides: Any) -> AIOKafkaProducer:
    return AIOKafkaProducer(**{**producer_kwargs(config), **overrides})


def create_consumer(config: Mapping[str, Any], *topics: str, **overrides: Any) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(*topics, **{**consumer_kwargs(config), **overrides})


def create_admin(config: Mapping[str, Any], **overrides: Any) -> AIOKafkaAdminClient:
    return AIOKafkaAdminClient(**{**admin_kwargs(config), **overrides})
