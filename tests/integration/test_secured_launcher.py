"""Secured clusters from the local launcher, against the real broker.

For SASL_PLAINTEXT (SCRAM-SHA-512 and PLAIN), SASL_SSL (SCRAM-SHA-256), SSL and mTLS: the right
credentials round-trip a record, wrong ones are refused with the reason the client logs, and a
principal without ACLs is denied (TopicAuthorizationFailed) until ``grant`` allows it. One cluster per
protocol for the session (``secured_cluster``). Every client is built from Java client keys by the
runtime's own translation (``pyconnect.kafka.clients``), so these tests also cover that mapping.
The ``up --security`` CLI is checked end to end on a cluster of its own.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiokafka import TopicPartition
from aiokafka.admin import NewTopic
from aiokafka.errors import KafkaConnectionError, TopicAuthorizationFailedError

from pyconnect.config import properties
from pyconnect.kafka.clients import create_admin, create_consumer, create_producer
from pyconnect.kafka.probe import SSL_CLOSE_S
from pyconnect.testing.kafka import STATE_FILE, KafkaCluster, down, grant
from pyconnect.testing.kafka_security import ADMIN_USER, untrusted_material
from tests.integration.test_launcher import cli

pytestmark = pytest.mark.kafka

WAIT_S = 30.0


@dataclass(frozen=True)
class Case:
    protocol: str
    mechanism: str | None = None

    def __str__(self) -> str:
        return f"{self.protocol}-{self.mechanism}" if self.mechanism else self.protocol

    @property
    def unprivileged(self) -> str | None:
        """The user without ACLs: ``alice``, or on ``ssl`` the anonymous client (no certificate)."""
        return None if self.protocol == "ssl" else "alice"


CASES = [
    pytest.param(Case("sasl_plaintext", "SCRAM-SHA-512"), marks=pytest.mark.long),
    pytest.param(Case("sasl_plaintext", "PLAIN"), marks=pytest.mark.long),
    Case("sasl_ssl", "SCRAM-SHA-256"),
    pytest.param(Case("sasl_ssl", "PLAIN"), marks=pytest.mark.long),
    pytest.param(Case("ssl"), marks=pytest.mark.long),
    Case("mtls"),
]
"""make test: SASL over TLS and mutual TLS (each of SASL, TLS and client certificates once); make chaos:
every protocol and mechanism."""


@pytest.fixture(params=CASES, ids=str)
def secured(
    request: pytest.FixtureRequest, secured_cluster: Callable[[str], KafkaCluster]
) -> tuple[Case, KafkaCluster]:
    case: Case = request.param
    return case, secured_cluster(case.protocol)


async def create_topic(config: dict[str, str], topic: str) -> None:
    admin = create_admin(config, request_timeout_ms=10000)
    await asyncio.wait_for(admin.start(), WAIT_S)
    try:
        response = await asyncio.wait_for(admin.create_topics([NewTopic(topic, 1, 1)]), WAIT_S)
    finally:
        await admin.close()
        await asyncio.sleep(SSL_CLOSE_S)  # TLS sockets close on the loop, after stop() returns
    assert [error for _, error, *_ in response.topic_errors] == [0], response


async def produce(config: dict[str, Any], topic: str, value: bytes) -> None:
    producer = create_producer({"request.timeout.ms": "10000", **config})
    try:
        await asyncio.wait_for(producer.start(), WAIT_S)
        await asyncio.wait_for(producer.send_and_wait(topic, value), WAIT_S)
    finally:
        await producer.stop()
        await asyncio.sleep(SSL_CLOSE_S)  # TLS sockets close on the loop, after stop() returns


async def consume(config: dict[str, Any], topic: str, expected: int = 1) -> list[bytes]:
    consumer = create_consumer({**config, "auto.offset.reset": "earliest", "enable.auto.commit": "false"})
    got: list[bytes] = []
    try:
        await asyncio.wait_for(consumer.start(), WAIT_S)
        consumer.assign([TopicPartition(topic, 0)])
        deadline = time.monotonic() + WAIT_S
        for _ in range(200):
            if len(got) >= expected or time.monotonic() > deadline:
                break
            batches = await asyncio.wait_for(consumer.getmany(timeout_ms=500), WAIT_S)
            got.extend(r.value for records in batches.values() for r in records)
    finally:
        await consumer.stop()
        await asyncio.sleep(SSL_CLOSE_S)  # TLS sockets close on the loop, after stop() returns
    return got


async def refused(config: dict[str, Any]) -> None:
    """A producer with ``config`` cannot even bootstrap."""
    with pytest.raises(KafkaConnectionError, match="Unable to bootstrap"):
        await produce({**config, "request.timeout.ms": "5000"}, "never-written", b"x")


def client_log(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("aiokafka"))


async def test_right_credentials_round_trip(secured: tuple[Case, KafkaCluster], unique) -> None:
    case, cluster = secured
    topic = unique("secured")
    config = cluster.client_properties(ADMIN_USER, case.mechanism)
    assert config["security.protocol"] == {"ssl": "SSL", "mtls": "SSL"}.get(
        case.protocol, case.protocol.upper()
    )
    await create_topic(config, topic)
    await produce(config, topic, b"over " + str(case).encode())
    assert await consume(config, topic) == [b"over " + str(case).encode()]


async def test_wrong_credentials_are_refused(
    secured: tuple[Case, KafkaCluster], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    case, cluster = secured
    caplog.set_level(logging.ERROR, logger="aiokafka")
    await refused({"bootstrap.servers": cluster.bootstrap_servers})  # PLAINTEXT to a secured listener
    config = cluster.client_properties("alice", case.mechanism)
    keystore, foreign_ca = untrusted_material(tmp_path, ADMIN_USER)
    if case.mechanism:
        password = cluster.security.passwords["alice"]  # type: ignore[union-attr]
        wrong = config["sasl.jaas.config"].replace(f'password="{password}"', 'password="not-alices"')
        assert wrong != config["sasl.jaas.config"]
        await refused({**config, "sasl.jaas.config": wrong})
        reason = (
            "Authentication failed: Invalid username or password"  # the broker's PlainServerCallbackHandler
            if case.mechanism == "PLAIN"
            else f"Authentication failed during authentication due to invalid credentials with SASL mechanism {case.mechanism}"
        )
        assert f"[Error 58] SaslAuthenticationFailed: {reason}" in client_log(caplog)
    if cluster.security.tls:  # type: ignore[union-attr]
        # the client does not trust the broker: a CA other than the cluster's
        caplog.clear()
        await refused({**config, "ssl.truststore.location": str(foreign_ca)})
        assert "CERTIFICATE_VERIFY_FAILED" in client_log(caplog)
    if case.protocol == "mtls":
        # the broker does not trust the client: CN=admin from another CA, or no certificate at all
        caplog.clear()
        await refused({**config, "ssl.keystore.location": str(keystore)})
        no_certificate = {k: v for k, v in config.items() if not k.startswith("ssl.keystore.")}
        await refused(no_certificate)
        assert client_log(caplog).count(f"Connection at {cluster.bootstrap_servers} closed") >= 2


async def test_principal_without_acls_is_denied_until_granted(
    secured: tuple[Case, KafkaCluster], unique
) -> None:
    case, cluster = secured
    topic = unique("acl")
    await create_topic(cluster.client_properties(ADMIN_USER, case.mechanism), topic)
    config = cluster.client_properties(case.unprivileged, case.mechanism)
    principal = f"User:{case.unprivileged or 'ANONYMOUS'}"

    # Non-idempotent: an idempotent producer with no WRITE anywhere fails earlier, on InitProducerId
    # (ClusterAuthorizationFailed), before the topic is looked at.
    with pytest.raises(TopicAuthorizationFailedError):
        await produce({**config, "enable.idempotence": "false"}, topic, b"denied")

    await grant(cluster, principal, "topic", topic, ["write", "read", "describe"])
    await produce(config, topic, b"granted")
    assert await consume(config, topic) == [b"granted"]
    with pytest.raises(TopicAuthorizationFailedError):
        await produce({**config, "enable.idempotence": "false"}, unique("other"), b"still denied")


async def test_cli_up_security_prints_client_files_status_grant_down(tmp_path: Path, unique) -> None:
    work = tmp_path / "clusters"
    try:
        up = await asyncio.to_thread(
            cli, "up", "--clusters", "X", "--dir", str(work), "--security", "sasl_ssl"
        )
        assert up.returncode == 0, up.stderr
        first, *described = up.stdout.splitlines()
        bootstrap = json.loads(first)["X"]
        ca = work.resolve() / "X" / "security" / "ca.pem"
        assert described[0] == (
            f"X: sasl_ssl on {bootstrap}; super users User:broker, User:admin; CA certificate {ca}"
        )
        assert len(described) == 1 + 3 * 3, up.stdout  # admin, alice, bob x SCRAM-SHA-256/512, PLAIN
        files = {
            line.split(" ")[1] + " " + line.split(" ")[2]: line.rsplit(" -> ", 1)[1] for line in described[1:]
        }
        admin = properties.load(files["admin SCRAM-SHA-512"])
        assert admin["bootstrap.servers"] == bootstrap and admin["ssl.truststore.location"] == str(ca)
        bob = properties.load(files["bob PLAIN"])

        topic = unique("cli")
        await create_topic(admin, topic)
        with pytest.raises(TopicAuthorizationFailedError):
            await produce({**bob, "enable.idempotence": "false"}, topic, b"denied")
        granted = await asyncio.to_thread(
            cli, "grant", "--dir", str(work), "--cluster", "X", "--principal", "User:bob",
            "--resource-type", "topic", "--name", topic, "--operations", "write,describe,read",
        )  # fmt: skip
        assert granted.returncode == 0, granted.stderr
        assert granted.stdout.strip() == f"granted User:bob write,describe,read on topic {topic}"
        await produce(bob, topic, b"from bob")
        assert await consume(admin, topic) == [b"from bob"]

        status = await asyncio.to_thread(cli, "status", "--dir", str(work))
        assert status.stdout.strip() == f"X: {bootstrap} running nodes [1] (sasl_ssl)", status.stderr
        stopped = await asyncio.to_thread(cli, "down", "--dir", str(work))
        assert stopped.stdout.strip() == "stopped 1 broker process(es)", stopped.stderr
    finally:
        if (work / STATE_FILE).exists():
            down(work, timeout=10)
