"""The distributed worker config table and WorkerConfig, checked against Kafka 4.3.1's DistributedConfig.

Defaults, messages and the reStructuredText digest were produced with the 4.3.1 jars
(``new DistributedConfig(props)`` and ``DistributedConfig``'s ``ConfigDef.toRst()``).
"""

from __future__ import annotations

import hashlib

import pytest

from pyconnect.config.info import to_rst
from pyconnect.config.types import Importance, Password, Type
from pyconnect.config.worker import (
    CONFIG_STORAGE_PREFIX,
    OFFSET_STORAGE_PREFIX,
    STATUS_STORAGE_PREFIX,
    WORKER_CONFIG_DEF,
    WorkerConfig,
)
from pyconnect.errors import ConfigError

JAVA_TO_RST_SHA256 = "66e99c0f7905ae4de7263ede652f3f0849d929e4fa6c6e613759a7817cd30b77"

BASE = {
    "group.id": "g",
    "bootstrap.servers": "localhost:9092",
    "config.storage.topic": "c",
    "offset.storage.topic": "o",
    "status.storage.topic": "s",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
}

JAVA_DEFAULTS = {
    "config.storage.replication.factor": 3,
    "offset.storage.partitions": 25,
    "offset.storage.replication.factor": 3,
    "status.storage.partitions": 5,
    "status.storage.replication.factor": 3,
    "session.timeout.ms": 10000,
    "heartbeat.interval.ms": 3000,
    "rebalance.timeout.ms": 60000,
    "worker.sync.timeout.ms": 3000,
    "worker.unsync.backoff.ms": 300000,
    "scheduled.rebalance.max.delay.ms": 300000,
    "connect.protocol": "sessioned",
    "exactly.once.source.support": "disabled",
    "inter.worker.key.generation.algorithm": "HmacSHA256",
    "inter.worker.key.size": None,
    "inter.worker.key.ttl.ms": 3600000,
    "inter.worker.signature.algorithm": "HmacSHA256",
    "inter.worker.verification.algorithms": ["HmacSHA256"],
    "client.id": "",
    "request.timeout.ms": 40000,
    "metadata.max.age.ms": 300000,
    "connections.max.idle.ms": 540000,
    "retry.backoff.ms": 100,
    "retry.backoff.max.ms": 1000,
    "reconnect.backoff.ms": 50,
    "reconnect.backoff.max.ms": 1000,
    "send.buffer.bytes": 131072,
    "receive.buffer.bytes": 32768,
    "socket.connection.setup.timeout.ms": 10000,
    "socket.connection.setup.timeout.max.ms": 30000,
    "security.protocol": "PLAINTEXT",
    "metadata.recovery.strategy": "rebootstrap",
    "metadata.recovery.rebootstrap.trigger.ms": 300000,
    "header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter",
    "offset.flush.interval.ms": 60000,
    "offset.flush.timeout.ms": 5000,
    "task.shutdown.graceful.timeout.ms": 5000,
    "plugin.path": None,
    "plugin.discovery": "hybrid_warn",
    "config.providers": [],
    "connector.client.config.override.policy": "All",
    "topic.creation.enable": True,
    "topic.tracking.enable": True,
    "topic.tracking.allow.reset": True,
    "metrics.sample.window.ms": 30000,
    "metrics.num.samples": 2,
    "metrics.recording.level": "INFO",
    "metric.reporters": ["org.apache.kafka.common.metrics.JmxReporter"],
    "client.dns.lookup": "use_all_dns_ips",
    "listeners": ["http://:8083"],
    "rest.advertised.host.name": None,
    "rest.advertised.port": None,
    "rest.advertised.listener": None,
    "admin.listeners": None,
    "rest.extension.classes": [],
    "access.control.allow.origin": "",
    "access.control.allow.methods": "",
    "response.http.headers.config": "",
    "ssl.client.auth": "none",
    "ssl.protocol": "TLSv1.3",
    "ssl.enabled.protocols": ["TLSv1.2", "TLSv1.3"],
    "ssl.endpoint.identification.algorithm": "https",
    "sasl.mechanism": "GSSAPI",
    "sasl.kerberos.ticket.renew.window.factor": 0.8,
    "sasl.login.refresh.buffer.seconds": 300,
    "key.converter.plugin.version": None,
}


def test_table_has_every_java_key() -> None:
    assert len(WORKER_CONFIG_DEF) == 133
    for required in (
        "group.id",
        "bootstrap.servers",
        "config.storage.topic",
        "offset.storage.topic",
        "status.storage.topic",
        "key.converter",
        "value.converter",
    ):
        assert WORKER_CONFIG_DEF[required].required, required


@pytest.mark.parametrize(("name", "default"), sorted(JAVA_DEFAULTS.items()))
def test_defaults_match_java(name: str, default: object) -> None:
    assert WorkerConfig(BASE)[name] == default


def test_types_and_importance_match_java() -> None:
    assert WORKER_CONFIG_DEF["config.storage.replication.factor"].type is Type.SHORT
    assert WORKER_CONFIG_DEF["offset.flush.interval.ms"].type is Type.LONG
    assert WORKER_CONFIG_DEF["session.timeout.ms"].type is Type.INT
    assert WORKER_CONFIG_DEF["key.converter"].type is Type.CLASS
    assert WORKER_CONFIG_DEF["ssl.keystore.password"].type is Type.PASSWORD
    assert WORKER_CONFIG_DEF["group.id"].importance is Importance.HIGH
    assert WORKER_CONFIG_DEF["connector.client.config.override.policy"].importance is Importance.MEDIUM


def test_rst_docs_are_byte_identical_to_java() -> None:
    assert hashlib.sha256(to_rst(WORKER_CONFIG_DEF).encode()).hexdigest() == JAVA_TO_RST_SHA256


ACCEPTED = [
    ("session.timeout.ms", " 42 ", 42),
    ("config.storage.replication.factor", "-1", -1),
    ("offset.storage.partitions", "-1", -1),
    ("connect.protocol", "EAGER", "EAGER"),
    ("exactly.once.source.support", "Enabled", "Enabled"),
    ("plugin.discovery", "only_scan", "only_scan"),
    ("plugin.path", "a, b ,c", ["a", "b", "c"]),
    ("plugin.path", "a,a", ["a"]),
    ("config.providers", "", []),
    ("config.providers", "a,a", ["a"]),
    ("group.id", "", ""),
    ("topic.creation.enable", " TRUE ", True),
    ("listeners", "foo", ["foo"]),
    ("listeners", "http://a:1,https://b:2", ["http://a:1", "https://b:2"]),
    ("admin.listeners", "", []),
    ("response.http.headers.config", "set X-Foo:bar", "set X-Foo:bar"),
    ("response.http.headers.config", '"add Cache-Control: no-cache, no-store", setDate Expires:1', None),
    ("security.protocol", "sasl_ssl", "sasl_ssl"),
    ("response.http.headers.config", "SET X:1", "SET X:1"),
    ("sasl.kerberos.ticket.renew.window.factor", "1e-1", 0.1),
    ("inter.worker.key.size", "128", 128),
    ("connector.client.config.override.policy", "Bogus", "Bogus"),
    ("heartbeat.interval.ms", "-5", -5),
    ("config.storage.topic", "", ""),
]


@pytest.mark.parametrize(("name", "value", "parsed"), ACCEPTED)
def test_accepted_values_like_java(name: str, value: str, parsed: object) -> None:
    config = WorkerConfig({**BASE, name: value})
    if parsed is not None:
        assert config[name] == parsed


REJECTED = [
    (
        "session.timeout.ms",
        "abc",
        "Invalid value abc for configuration session.timeout.ms: Not a number of type INT",
    ),
    (
        "config.storage.replication.factor",
        "40000",
        "Invalid value 40000 for configuration config.storage.replication.factor: Not a number of type SHORT",
    ),
    (
        "config.storage.replication.factor",
        "0",
        "Invalid value 0 for configuration config.storage.replication.factor: Replication factor must be positive and "
        "not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default",
    ),
    (
        "offset.storage.partitions",
        "0",
        "Invalid value 0 for configuration offset.storage.partitions: Number of partitions must be positive, or -1 to "
        "use the broker's default",
    ),
    (
        "connect.protocol",
        "bogus",
        "Invalid value bogus for configuration connect.protocol: Invalid Connect protocol compatibility",
    ),
    (
        "exactly.once.source.support",
        "nope",
        "Invalid value nope for configuration exactly.once.source.support: String must be one of (case insensitive): "
        "DISABLED, ENABLED, PREPARING",
    ),
    (
        "plugin.discovery",
        "x",
        "Invalid value x for configuration plugin.discovery: String must be one of (case insensitive): ONLY_SCAN, "
        "SERVICE_LOAD, HYBRID_WARN, HYBRID_FAIL",
    ),
    (
        "plugin.path",
        "",
        "Configuration 'plugin.path' must not be empty. Valid values include: any non-empty value",
    ),
    ("plugin.path", "a,,b", "Configuration 'plugin.path' values must not be empty."),
    ("plugin.path", "a,", "Configuration 'plugin.path' values must not be empty."),
    (
        "bootstrap.servers",
        None,
        'Missing required configuration "bootstrap.servers" which has no default value.',
    ),
    (
        "bootstrap.servers",
        " ",
        "Configuration 'bootstrap.servers' must not be empty. Valid values include: any non-empty value",
    ),
    ("group.id", None, 'Missing required configuration "group.id" which has no default value.'),
    ("key.converter", None, 'Missing required configuration "key.converter" which has no default value.'),
    (
        "config.storage.topic",
        None,
        'Missing required configuration "config.storage.topic" which has no default value.',
    ),
    (
        "scheduled.rebalance.max.delay.ms",
        "-1",
        "Invalid value -1 for configuration scheduled.rebalance.max.delay.ms: Value must be at least 0",
    ),
    (
        "metrics.recording.level",
        "debug",
        "Invalid value debug for configuration metrics.recording.level: String must be one of: INFO, DEBUG",
    ),
    (
        "topic.creation.enable",
        "yes",
        "Invalid value yes for configuration topic.creation.enable: Expected value to be either true or false",
    ),
    (
        "listeners",
        "",
        "Invalid value for listeners, at least one URL is expected, ex: http://localhost:8080,https://localhost:8443.",
    ),
    ("admin.listeners", "http://x:1,,", "Configuration 'admin.listeners' values must not be empty."),
    (
        "response.http.headers.config",
        "bogus",
        "Invalid format of header config 'bogus'. Expected: '[action] [header name]:[header value]'",
    ),
    (
        "response.http.headers.config",
        "put X:1",
        "Invalid header config action: 'put'. Expected one of [set, add, setDate, addDate]",
    ),
    (
        "ssl.client.auth",
        "NONE",
        "Invalid value NONE for configuration ssl.client.auth: String must be one of: required, requested, none",
    ),
    (
        "client.dns.lookup",
        "default",
        "Invalid value default for configuration client.dns.lookup: String must be one of: use_all_dns_ips, "
        "resolve_canonical_bootstrap_servers_only",
    ),
    (
        "offset.flush.interval.ms",
        "1e3",
        "Invalid value 1e3 for configuration offset.flush.interval.ms: Not a number of type LONG",
    ),
    (
        "sasl.login.refresh.window.factor",
        "0.2",
        "Invalid value 0.2 for configuration sasl.login.refresh.window.factor: Value must be at least 0.5",
    ),
    (
        "metadata.max.age.ms",
        "-1",
        "Invalid value -1 for configuration metadata.max.age.ms: Value must be at least 0",
    ),
    (
        "send.buffer.bytes",
        "-2",
        "Invalid value -2 for configuration send.buffer.bytes: Value must be at least -1",
    ),
    (
        "inter.worker.signature.algorithm",
        "HmacSHA1",
        "Invalid value HmacSHA1 for configuration inter.worker.signature.algorithm: Signature algorithm must be present "
        "in inter.worker.verification.algorithms list",
    ),
    (
        "inter.worker.verification.algorithms",
        "HmacSHA1",
        "Invalid value HmacSHA256 for configuration inter.worker.signature.algorithm: Signature algorithm must be "
        "present in inter.worker.verification.algorithms list",
    ),
    (
        "inter.worker.verification.algorithms",
        "",
        "Invalid value [] for configuration inter.worker.verification.algorithms: At least one signature verification "
        "algorithm must be provided",
    ),
    (
        "inter.worker.key.ttl.ms",
        "-1",
        "Invalid value -1 for configuration inter.worker.key.ttl.ms: Value must be at least 0",
    ),
    ("header.converter", "", "Invalid value  for configuration header.converter: Class  could not be found."),
    (
        "rest.advertised.port",
        "abc",
        "Invalid value abc for configuration rest.advertised.port: Not a number of type INT",
    ),
    (
        "metrics.num.samples",
        "0",
        "Invalid value 0 for configuration metrics.num.samples: Value must be at least 1",
    ),
    (
        "response.http.headers.config",
        "set X:",
        "Invalid format of header name and header value pair 'X:'. Expected: '[header name]:[header value]'",
    ),
    (
        "response.http.headers.config",
        "set :v",
        "Invalid header name ''. The '[header name]' cannot contain whitespace",
    ),
    (
        "response.http.headers.config",
        "set X Y:v",
        "Invalid header name 'X Y'. The '[header name]' cannot contain whitespace",
    ),
    (
        "response.http.headers.config",
        "set X:a:b",
        "Invalid format of header name and header value pair 'X:a:b'. Expected: '[header name]:[header value]'",
    ),
    (
        "response.http.headers.config",
        "set X:1,,add Y:2",
        "Invalid format of header config ''. Expected: '[action] [header name]:[header value]'",
    ),
    (
        "inter.worker.signature.algorithm",
        "hmacsha256",
        "Invalid value hmacsha256 for configuration inter.worker.signature.algorithm: Signature algorithm must be "
        "present in inter.worker.verification.algorithms list",
    ),
    (
        "inter.worker.key.size",
        "7",
        "Unable to create key generator with algorithm HmacSHA256 and key size 7: Key length must be at least 40 bits",
    ),
]


@pytest.mark.parametrize(("name", "value", "message"), REJECTED)
def test_rejected_values_carry_java_messages(name: str, value: str | None, message: str) -> None:
    props = {**BASE, name: value}
    if value is None:
        del props[name]
    with pytest.raises(ConfigError) as info:
        WorkerConfig(props)
    assert str(info.value) == message


def test_unsupported_mac_algorithm_message_prefix() -> None:
    with pytest.raises(ConfigError) as info:
        WorkerConfig({**BASE, "inter.worker.verification.algorithms": "Bogus,HmacSHA256"})
    assert str(info.value).startswith(
        "Invalid value Bogus for configuration inter.worker.verification.algorithms: the algorithm is not supported "
        "by this JVM; the supported algorithms are: ["
    )
    assert "HmacSHA256" in str(info.value)
    config = WorkerConfig(
        {
            **BASE,
            "inter.worker.signature.algorithm": "HmacSHA512",
            "inter.worker.verification.algorithms": "HmacSHA256, HmacSHA512",
        }
    )
    assert config.inter_worker_verification_algorithms == ["HmacSHA256", "HmacSHA512"]


def test_attribute_access_originals_and_values() -> None:
    config = WorkerConfig({**BASE, "producer.acks": "1", "custom.thing": "x", "ssl.key.password": "pw"})
    assert config.group_id == "g"
    assert config.offset_storage_partitions == 25
    assert config.bootstrap_servers == ["localhost:9092"]
    assert config.bootstrap_servers_string == "localhost:9092"
    assert config.ssl_key_password == Password("pw")
    assert str(config.ssl_key_password) == "[hidden]"
    assert config.originals["custom.thing"] == "x"
    assert "custom.thing" not in config.values
    assert config.exactly_once_source_enabled is False
    assert WorkerConfig({**BASE, "exactly.once.source.support": "ENABLED"}).exactly_once_source_enabled
    with pytest.raises(AttributeError):
        _ = config.no_such_key


def test_with_prefix_strips_and_skips_bare_prefix() -> None:
    config = WorkerConfig({**BASE, "producer.acks": "1", "producer.": "ignored", "producerx": "no"})
    assert config.with_prefix("producer.") == {"acks": "1"}
    assert config.with_prefix("producer.", strip=False) == {"producer.acks": "1"}


def test_topic_settings_drop_reserved_suffixes() -> None:
    config = WorkerConfig(
        {
            **BASE,
            "config.storage.partitions": "7",
            "config.storage.cleanup.policy": "delete",
            "config.storage.min.insync.replicas": "2",
            "offset.storage.segment.bytes": "1000",
            "offset.storage.partitions": "10",
            "status.storage.retention.ms": "5",
        }
    )
    assert config.topic_settings(CONFIG_STORAGE_PREFIX) == {"min.insync.replicas": "2"}
    assert config.topic_settings(OFFSET_STORAGE_PREFIX) == {"segment.bytes": "1000"}
    assert config.topic_settings(STATUS_STORAGE_PREFIX) == {"retention.ms": "5"}


def test_client_configs_follow_java_worker_rules() -> None:
    config = WorkerConfig(
        {
            **BASE,
            "bootstrap.servers": "a:1, b:2",
            "producer.acks": "1",
            "consumer.max.poll.records": "10",
            "admin.request.timeout.ms": "7",
            "metrics.context.team": "x",
            "security.protocol": "SSL",
        }
    )
    producer = config.producer_configs("connector-producer-c-0", "cid", overrides={"linger.ms": "5"})
    assert producer == {
        "bootstrap.servers": "a:1,b:2",
        "key.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
        "value.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
        "max.block.ms": "9223372036854775807",
        "enable.idempotence": "false",
        "acks": "1",
        "max.in.flight.requests.per.connection": "1",
        "delivery.timeout.ms": "2147483647",
        "client.id": "connector-producer-c-0",
        "metrics.context.team": "x",
        "metrics.context.connect.kafka.cluster.id": "cid",
        "metrics.context.connect.group.id": "g",
        "linger.ms": "5",
    }
    consumer = config.consumer_configs("connect-c", "connector-consumer-c-0", "cid")
    assert consumer["group.id"] == "connect-c"
    assert consumer["max.poll.records"] == "10"
    assert consumer["enable.auto.commit"] == "false"
    assert consumer["auto.offset.reset"] == "earliest"
    assert "security.protocol" not in consumer
    admin = config.admin_configs("connector-adminclient-c", "cid", overrides={"client.id": "override"})
    assert admin["security.protocol"] == "SSL"
    assert admin["request.timeout.ms"] == "7"
    assert admin["client.id"] == "override"
    assert admin["bootstrap.servers"] == "a:1, b:2"
    assert not any(k.startswith(("producer.", "consumer.", "admin.")) for k in admin)
    assert admin["metrics.context.connect.group.id"] == "g"


def test_from_file_reads_latin1_and_resolves_variables(tmp_path) -> None:
    secrets = tmp_path / "secrets.properties"
    secrets.write_text("group=grp-é\n", encoding="utf-8")
    worker = tmp_path / "worker.properties"
    lines = [f"{k}={v}" for k, v in BASE.items() if k != "group.id"]
    lines += [
        "config.providers=file",
        "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider",
        f"group.id=${{file:{secrets}:group}}",
        "client.id=caf\\u00e9",
    ]
    worker.write_text("\n".join(lines) + "\n", encoding="iso-8859-1")
    config = WorkerConfig.from_file(worker, environ={})
    assert config.group_id == "grp-é"
    assert config.client_id == "café"
    assert config.originals["group.id"] == "grp-é"
