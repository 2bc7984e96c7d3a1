"""Secrets stay secret on a SASL_SSL cluster, and config providers fill every security key.

One pyconnect worker (as the super user ``admin``, with the ``file``, ``env`` and ``directory``
config providers) on the session's SASL_SSL cluster runs a MirrorSourceConnector S->T on that same
cluster as ``bob`` (SCRAM-SHA-512, literal ACLs on the test's names only). Every security key of the
connector (``source.cluster.``, ``target.cluster.`` and ``producer.override.``: ``security.protocol``,
``sasl.mechanism``, ``sasl.jaas.config``, ``ssl.truststore.location``) is a ``${file:...}``,
``${env:...}`` or ``${directory:...}`` placeholder. The test sees:

- the records arrive on ``S.<topic>`` (the placeholders were resolved for every client);
- ``GET /connectors/{c}/config`` returns the placeholders, as Java's does;
- the config topic's raw bytes hold the placeholders and no password;
- ``GET /mirrors`` shows ``[hidden]`` for ``sasl.jaas.config`` and never a password;
- ``/config/validate`` with a literal password never echoes it;
- the worker's log never holds a password (pyconnect logs no config dump at connector start; Java's
  ``MirrorSourceConfig values:`` dump prints only keys of the connector's own ConfigDef, not the
  prefixed client keys, and ``[hidden]`` for its PASSWORD ones).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from aiokafka import TopicPartition
from aiokafka.admin import NewTopic

from pyconnect.kafka.clients import create_admin, create_consumer
from pyconnect.kafka.probe import SSL_CLOSE_S
from pyconnect.testing.java_reference import JavaConnectWorker
from pyconnect.testing.kafka import KafkaCluster, grant
from pyconnect.testing.kafka_security import ADMIN_USER
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import fleet, running_tasks, status, wait_for
from tests.integration.secured_fleet import secured_worker_properties
from tests.integration.test_secured_failures import produce, read_values

pytestmark = pytest.mark.kafka

MECHANISM = "SCRAM-SHA-512"
USER = "bob"
GROUP = "secrets"
CONFIGS_TOPIC = f"{GROUP}-configs"
JAAS_ENV = "PYCONNECT_TEST_SECRET_JAAS"
PROTOCOL_ENV = "PYCONNECT_TEST_SECRET_PROTOCOL"
T = TypeVar("T")


@pytest.fixture(scope="module")
def cluster(secured_cluster: Callable[[str], KafkaCluster]) -> KafkaCluster:
    return secured_cluster("sasl_ssl")


def keys(cluster: KafkaCluster, user: str) -> dict[str, str]:
    return cluster.client_properties(user, MECHANISM)


def passwords(cluster: KafkaCluster) -> list[str]:
    assert cluster.security is not None
    return list(cluster.security.passwords.values())


@pytest.fixture(scope="module")
def secrets_dir(cluster: KafkaCluster, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``mirror.properties`` (for ``${file:...}``) and ``dir/`` (one file per key, for
    ``${directory:...}``) holding bob's client keys."""
    base = tmp_path_factory.mktemp("secrets")
    bob = keys(cluster, USER)
    lines = {
        "jaas": bob["sasl.jaas.config"],
        "truststore": bob["ssl.truststore.location"],
        "protocol": bob["security.protocol"],
    }
    (base / "mirror.properties").write_text(
        "".join(f"{k}={v.replace(chr(92), chr(92) * 2)}\n" for k, v in lines.items())
    )
    (base / "dir").mkdir()
    for name, value in (
        ("jaas", bob["sasl.jaas.config"]),
        ("mechanism", MECHANISM),
        ("truststore", bob["ssl.truststore.location"]),
    ):
        (base / "dir" / name).write_text(value)
    return base


def worker_properties(cluster: KafkaCluster) -> dict[str, object]:
    """The worker's own clients as ``admin``, and the three config providers."""
    props = secured_worker_properties(keys(cluster, ADMIN_USER))
    props.update(
        {
            "config.providers": "file,env,directory",
            "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
            "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
            "config.providers.directory.class": "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
        }
    )
    return props


@pytest.fixture(scope="module")
def worker(
    cluster: KafkaCluster, secrets_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PyconnectWorker]:
    props = worker_properties(cluster)
    bob = keys(cluster, USER)
    w = PyconnectWorker(
        cluster.bootstrap_servers,
        tmp_path_factory.mktemp("secrets-worker"),
        group_id=GROUP,
        extra=props,
        environment={JAAS_ENV: bob["sasl.jaas.config"], PROTOCOL_ENV: bob["security.protocol"]},
        die_with_parent=True,
    )
    with fleet([w]):
        yield w


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


async def create_topic(cluster: KafkaCluster, topic: str) -> None:
    admin = create_admin(keys(cluster, ADMIN_USER))
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        await admin.close()
        await asyncio.sleep(SSL_CLOSE_S)


def grant_bob(cluster: KafkaCluster, topic: str) -> None:
    """Bob's least privilege for S->T on one cluster (literal names: other tests' principals untouched)."""
    principal = f"User:{USER}"
    for rtype, name, ops in (
        ("topic", topic, ["read", "describe", "describe_configs"]),
        ("topic", f"S.{topic}", ["create", "describe", "write", "alter", "alter_configs"]),
        ("topic", "mm2-offset-syncs.T.internal", ["create", "describe", "write", "read"]),
        ("cluster", "kafka-cluster", ["describe", "alter"]),
    ):
        run(grant(cluster, principal, rtype, name, ops))


def provided_config(cluster: KafkaCluster, secrets: Path, topic: str) -> dict[str, str]:
    """A MirrorSourceConnector config whose every security key is a config-provider placeholder."""
    file = f"{secrets / 'mirror.properties'}"
    directory = f"{secrets / 'dir'}"
    config = {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "tasks.max": "1",
        "source.cluster.alias": "S",
        "target.cluster.alias": "T",
        "topics": topic,
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "sync.topic.acls.enabled": "false",
        "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "source.cluster.bootstrap.servers": cluster.bootstrap_servers,
        "source.cluster.security.protocol": f"${{file:{file}:protocol}}",
        "source.cluster.sasl.mechanism": f"${{directory:{directory}:mechanism}}",
        "source.cluster.sasl.jaas.config": f"${{file:{file}:jaas}}",
        "source.cluster.ssl.truststore.type": "PEM",
        "source.cluster.ssl.truststore.location": f"${{file:{file}:truststore}}",
        "target.cluster.bootstrap.servers": cluster.bootstrap_servers,
        "target.cluster.security.protocol": f"${{env:{PROTOCOL_ENV}}}",
        "target.cluster.sasl.mechanism": MECHANISM,
        "target.cluster.sasl.jaas.config": f"${{env:{JAAS_ENV}}}",
        "target.cluster.ssl.truststore.type": "PEM",
        "target.cluster.ssl.truststore.location": f"${{directory:{directory}:truststore}}",
        "producer.override.security.protocol": f"${{env:{PROTOCOL_ENV}}}",
        "producer.override.sasl.mechanism": f"${{directory:{directory}:mechanism}}",
        "producer.override.sasl.jaas.config": f"${{directory:{directory}:jaas}}",
        "producer.override.ssl.truststore.type": "PEM",
        "producer.override.ssl.truststore.location": f"${{file:{file}:truststore}}",
    }
    return config


def assert_no_password(cluster: KafkaCluster, text: str, where: str) -> None:
    leaked = [p for p in passwords(cluster) if p in text]
    assert not leaked, f"a password is shown in {where}"


def test_providers_fill_every_security_key_and_no_password_is_shown_or_stored(
    cluster: KafkaCluster, worker: PyconnectWorker, secrets_dir: Path, unique: Callable[[str], str]
) -> None:
    topic, name = unique("secret"), unique("secret")
    run(create_topic(cluster, topic))
    grant_bob(cluster, topic)
    config = provided_config(cluster, secrets_dir, topic)
    code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
    assert code == 201, body
    wait_for(f"{name} RUNNING", lambda: running_tasks(worker, name, 1), 60)
    run(produce(cluster, topic, [b"p0", b"p1"]))
    wait_for(
        f"the records on S.{topic}",
        lambda: run(read_values(cluster, f"S.{topic}")) == [b"p0", b"p1"],
        60,
        1.0,
    )

    # the REST API returns the raw config, placeholders and all (Java's /connectors/{c}/config does)
    code, stored = worker.rest("GET", f"/connectors/{name}/config")
    assert code == 200 and stored == {**config, "name": name}, stored

    # the config topic holds the placeholders, never the resolved values
    admin = keys(cluster, ADMIN_USER)
    records = run(read_topic_as(cluster, admin))
    raw = b"".join(v or b"" for _p, _o, _k, v in records).decode(errors="replace")
    assert f"${{env:{JAAS_ENV}}}" in raw and "${file:" in raw and "${directory:" in raw
    assert_no_password(cluster, raw, f"the config topic {CONFIGS_TOPIC}")

    # the mirror status masks the JAAS config (the stored placeholder is a PASSWORD value too)
    code, mirrors = worker.rest("GET", "/mirrors")
    assert code == 200, mirrors
    text = json.dumps(mirrors)
    shown = [c["config"] for flow in mirrors["flows"] for c in flow["connectors"] if c["name"] == name]
    assert shown and shown[0]["source.cluster.sasl.jaas.config"] == "[hidden]", shown
    assert shown[0]["target.cluster.sasl.jaas.config"] == "[hidden]", shown
    assert_no_password(cluster, text, "/mirrors")

    # validate with a literal password never echoes it
    literal = {**config, "source.cluster.sasl.jaas.config": keys(cluster, USER)["sasl.jaas.config"]}
    code, answer = worker.rest(
        "PUT", "/connector-plugins/MirrorSourceConnector/config/validate", {**literal, "name": name}
    )
    assert code == 200, answer
    assert_no_password(cluster, json.dumps(answer), "/config/validate")

    assert_no_password(cluster, worker.log_file.read_text(errors="replace"), "the worker's log")
    assert status(worker, name)["connector"]["state"] == "RUNNING"  # type: ignore[index]
    worker.rest("DELETE", f"/connectors/{name}")


async def read_topic_as(
    cluster: KafkaCluster, config: dict[str, str]
) -> list[tuple[int, int, bytes | None, bytes | None]]:
    """The config topic's records, read as ``admin`` (the secured cluster needs the client keys)."""
    consumer = create_consumer({**config, "auto.offset.reset": "earliest"})
    await consumer.start()
    try:
        tp = TopicPartition(CONFIGS_TOPIC, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        end = (await consumer.end_offsets([tp]))[tp]
        got: list[tuple[int, int, bytes | None, bytes | None]] = []
        for _ in range(40):
            if await consumer.position(tp) >= end:
                break
            for records in (await consumer.getmany(tp, timeout_ms=500)).values():
                got += [(r.partition, r.offset, r.key, r.value) for r in records]
        return got
    finally:
        await consumer.stop()
        await asyncio.sleep(SSL_CLOSE_S)


@pytest.mark.long
def test_a_java_worker_resolves_the_same_placeholders_and_returns_them_raw(
    cluster: KafkaCluster,
    secrets_dir: Path,
    unique: Callable[[str], str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Java's Connect worker with the same providers and the same connector config (source alias
    ``J``): RUNNING, the records copied, ``/connectors/{c}/config`` with the placeholders, and no
    password in its log; what pyconnect does above."""
    bob = keys(cluster, USER)
    monkeypatch.setenv(JAAS_ENV, bob["sasl.jaas.config"])  # the Java process inherits this environment
    monkeypatch.setenv(PROTOCOL_ENV, bob["security.protocol"])
    topic, name = unique("jsecret"), unique("jsecret")
    run(create_topic(cluster, topic))
    grant_bob(cluster, topic)
    run(
        grant(
            cluster,
            f"User:{USER}",
            "topic",
            f"J.{topic}",
            ["create", "describe", "write", "alter", "alter_configs"],
        )
    )
    group = unique("java-secrets")
    java = JavaConnectWorker(
        cluster.bootstrap_servers,
        tmp_path / "java",
        group_id=group,
        extra=worker_properties(cluster),
        die_with_parent=True,
    )
    java.start()
    try:
        java.wait_ready()
        config = {**provided_config(cluster, secrets_dir, topic), "source.cluster.alias": "J"}
        code, body = java.rest("POST", "/connectors", {"name": name, "config": config})
        assert code == 201, body
        wait_for(f"{name} RUNNING on Java", lambda: running_tasks(java, name, 1), 90)
        run(produce(cluster, topic, [b"j0"]))
        wait_for(
            f"the record on J.{topic}", lambda: run(read_values(cluster, f"J.{topic}")) == [b"j0"], 60, 1.0
        )
        code, stored = java.rest("GET", f"/connectors/{name}/config")
        assert code == 200 and stored == {**config, "name": name}, stored
        log = java.log_file.read_text(errors="replace")
        assert_no_password(cluster, log, "Java's log")
        print(f"\nJava: RUNNING, config returned raw, '[hidden]' {log.count('[hidden]')} times in its log")
    finally:
        java.stop(timeout=20)
