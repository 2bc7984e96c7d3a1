"""SASL/OAUTHBEARER with the client-credentials grant, against real brokers that validate the tokens.

The module starts two clusters with OAUTHBEARER enabled (``oauth=True``), S on SASL_PLAINTEXT with an
HTTP token endpoint and T on SASL_SSL with an HTTPS one (trusted through the ``ssl.*`` JAAS options, as
Java reads them). Each has a token server of ``pyconnect.testing.token_server`` issuing RS256 JWTs that live
:data:`TOKEN_LIFETIME_S` seconds, and brokers validating them with Kafka's
``OAuthBearerValidatorCallbackHandler`` against its JWKS endpoint. A broker closes a connection whose
token expired (KIP-368; aiokafka does not re-authenticate), so a client that did not refresh its token
would be locked out after the first expiry.

- the runtime's producer and consumer round-trip records past the expiry of their first token, each
  fetching new tokens on Java's refresh schedule;
- a token the broker does not accept (signed by another key) is refused with the broker's reason;
- an unreachable token endpoint is retried with Java's backoff, then named in the error;
- an HTTPS token endpoint whose certificate the client does not trust is a clear error naming it;
- a pyconnect worker whose own clients (group member, config/offset/status stores) and task clients use
  OAUTHBEARER runs a MirrorSourceConnector S->T configured with ``source.cluster.``/``target.cluster.``
  OAUTHBEARER keys; the records arrive on T, also after every token it started with expired;
- a wrong client secret is the connector's SOURCE_AUTH_FAILED condition, naming the cluster and the token endpoint, the
  worker keeps serving, no secret is in the status or the log, and a good config brings it back;
- an OAUTHBEARER config without a login callback handler (Java's unsecured login) and without a subject
  fails the connector with a line naming the keys;
- a Java console producer accepts the same client properties file (Kafka 4 needs the token URL in the
  system property ``org.apache.kafka.sasl.oauthbearer.allowed.urls``) and our consumer reads its records.
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import TopicPartition
from aiokafka.admin import NewTopic

from pyconnect.config import properties
from pyconnect.errors import AuthenticationError
from pyconnect.kafka.access import cluster_label, start_client
from pyconnect.kafka.clients import create_admin, create_consumer, create_producer
from pyconnect.kafka.oauth_login import OAuthBearerLogin, login_of
from pyconnect.kafka.probe import SSL_CLOSE_S
from pyconnect.testing.backends import BackendUnavailable, chosen_backend
from pyconnect.testing.distribution import ensure_distribution
from pyconnect.testing.kafka import KafkaCluster, free_ports, start_clusters, stop_clusters
from pyconnect.testing.kafka_security import ADMIN_USER, OAUTH_ALLOWED_URLS, OAUTHBEARER
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import fleet, status, wait_for
from tests.integration.secured_fleet import client_security, secured_worker_properties

pytestmark = pytest.mark.kafka

TOKEN_LIFETIME_S = 6
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
WRONG_SECRET = "wrong-secret-0815"
FLOW_S = 40.0


@pytest.fixture(scope="module")
def clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, KafkaCluster]]:
    backend = chosen_backend()
    if backend != "local":
        raise BackendUnavailable(
            f"test_oauthbearer starts its own OAUTHBEARER clusters and needs the local backend; "
            f"PYCONNECT_TEST_BACKEND is {backend!r}"
        )
    started = start_clusters(
        ["S", "T"],
        tmp_path_factory.mktemp("kafka-oauth"),
        security={"S": "sasl_plaintext", "T": "sasl_ssl"},
        oauth=True,
        token_lifetime_s=TOKEN_LIFETIME_S,
        die_with_parent=True,
    )
    try:
        yield started
    finally:
        stop_clusters(started.values())


def oauth(cluster: KafkaCluster, user: str = ADMIN_USER) -> dict[str, str]:
    return cluster.client_properties(user, OAUTHBEARER)


def issued(cluster: KafkaCluster) -> dict[str, int]:
    """How many tokens the cluster's token server issued, per client."""
    security = cluster.security
    assert security is not None
    context = ssl.create_default_context(cafile=str(security.ca_file)) if security.tls else None
    with urllib.request.urlopen(security.token_server_url + "/stats", timeout=5, context=context) as answer:
        return dict(json.load(answer)["issued"])


def provider_of(client: Any) -> OAuthBearerLogin:
    login = login_of(client)
    assert login is not None
    return login


async def create_topic(config: dict[str, str], topic: str) -> None:
    admin = create_admin(config)
    await start_client(admin, config, cluster_label(config))
    try:
        await admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        await admin.close()


async def read_values(config: dict[str, str], topic: str, want: int, timeout_s: float) -> list[bytes]:
    consumer = create_consumer({**config, "auto.offset.reset": "earliest"})
    await start_client(consumer, config, cluster_label(config))
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        got: list[bytes] = []
        deadline = time.monotonic() + timeout_s
        while len(got) < want and time.monotonic() < deadline:
            for records in (await consumer.getmany(tp, timeout_ms=500)).values():
                got.extend(r.value for r in records if r.value is not None)
        return got
    finally:
        await consumer.stop()


def test_clients_keep_working_past_token_expiry_by_refreshing(
    clusters: dict[str, KafkaCluster], unique: Callable[[str], str]
) -> None:
    s = clusters["S"]
    config = oauth(s)
    topic = unique("refresh")
    run_s = 1.7 * TOKEN_LIFETIME_S

    async def scenario() -> tuple[list[bytes], list[bytes], int, int]:
        await create_topic(config, topic)
        producer = create_producer(config)
        consumer = create_consumer({**config, "auto.offset.reset": "earliest"})
        await start_client(producer, config, cluster_label(config))
        await start_client(consumer, config, cluster_label(config))
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        sent: list[bytes] = []
        got: list[bytes] = []
        try:
            started = time.monotonic()
            while time.monotonic() - started < run_s:
                value = f"r{len(sent)}".encode()
                await asyncio.wait_for(producer.send_and_wait(topic, value, partition=0), 30)
                sent.append(value)
                for records in (await consumer.getmany(tp, timeout_ms=400)).values():
                    got.extend(r.value for r in records if r.value is not None)
            deadline = time.monotonic() + 30
            while len(got) < len(sent) and time.monotonic() < deadline:
                for records in (await consumer.getmany(tp, timeout_ms=500)).values():
                    got.extend(r.value for r in records if r.value is not None)
            return sent, got, provider_of(producer).fetches, provider_of(consumer).fetches
        finally:
            await producer.stop()
            await consumer.stop()

    sent, got, producer_tokens, consumer_tokens = asyncio.run(scenario())
    print(
        f"\n{len(sent)} records over {run_s:.0f} s with {TOKEN_LIFETIME_S} s tokens: producer fetched "
        f"{producer_tokens} tokens, consumer {consumer_tokens}"
    )
    assert got == sent
    # refreshed at 80-85% of the first token's life (4.8-5.1 s), before the broker closes its connections
    assert producer_tokens >= 2 and consumer_tokens >= 2


async def refused_start(config: dict[str, str], alias: str) -> str:
    """The message of the AuthenticationError a producer built from ``config`` fails to start with; the
    loop then runs on for SSL_CLOSE_S, so the refused TLS connection is released before the loop ends."""
    producer = create_producer(config)
    with pytest.raises(AuthenticationError) as refused:
        await start_client(producer, config, cluster_label(config, alias))
    await asyncio.sleep(SSL_CLOSE_S)
    return str(refused.value)


def test_a_token_the_broker_rejects_is_refused_with_the_brokers_reason(
    clusters: dict[str, KafkaCluster], tmp_path: Path
) -> None:
    """A JWT the token server did not sign (read from a ``file:`` endpoint, Java's FileJwtRetriever)."""
    s = clusters["S"]
    now = int(time.time())

    def part(doc: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(doc).encode()).decode().rstrip("=")

    forged = tmp_path / "forged.jwt"
    forged.write_text(
        f"{part({'alg': 'RS256', 'kid': 'x'})}.{part({'sub': ADMIN_USER, 'iat': now, 'exp': now + 60})}.c2ln"
    )
    config = {**oauth(s), "sasl.oauthbearer.token.endpoint.url": forged.as_uri()}

    message = asyncio.run(refused_start(config, "S"))
    print(f"\nforged token: {message}")
    assert message == (
        f"Authentication to cluster S ({s.bootstrap_servers}) failed: the broker rejected the OAUTHBEARER "
        'token: {"status":"invalid_token"}'
    )


def test_an_untrusted_https_token_endpoint_is_a_clear_error(clusters: dict[str, KafkaCluster]) -> None:
    t = clusters["T"]
    assert t.security is not None
    config = oauth(t)
    jaas = config["sasl.jaas.config"]
    assert 'ssl.truststore.location="' in jaas
    config["sasl.jaas.config"] = jaas[: jaas.index(" ssl.truststore.type=")] + ";"
    config["sasl.login.retry.backoff.max.ms"] = "500"

    message = asyncio.run(refused_start(config, "T"))
    print(f"\nuntrusted token endpoint: {message}")
    assert message.startswith(
        f"Authentication to cluster T ({t.bootstrap_servers}) failed: OAUTHBEARER login: Cannot reach the "
        f"token endpoint {t.security.token_endpoint_url}: TLS certificate not trusted ("
    ), message


def test_an_unreachable_token_endpoint_is_retried_then_named(clusters: dict[str, KafkaCluster]) -> None:
    s = clusters["S"]
    (closed,) = free_ports(1)
    endpoint = f"http://127.0.0.1:{closed}/token"
    config = {
        **oauth(s),
        "sasl.oauthbearer.token.endpoint.url": endpoint,
        "sasl.login.retry.backoff.max.ms": "800",
    }

    started = time.monotonic()
    message = asyncio.run(refused_start(config, "S"))
    took = time.monotonic() - started
    print(f"\nunreachable token endpoint, FAILED after {took:.1f} s: {message}")
    assert message.startswith(
        f"Authentication to cluster S ({s.bootstrap_servers}) failed: OAUTHBEARER login: Cannot reach the "
        f"token endpoint {endpoint}: "
    ), message
    assert "(gave up after " in message and took < 10


def worker_properties(t: KafkaCluster) -> dict[str, object]:
    """The worker's own clients and its default producer/consumer/admin: ``admin`` on T, OAUTHBEARER."""
    return secured_worker_properties(client_security(oauth(t)))


@pytest.fixture(scope="module")
def worker(
    clusters: dict[str, KafkaCluster], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PyconnectWorker]:
    t = clusters["T"]
    w = PyconnectWorker(
        t.bootstrap_servers,
        tmp_path_factory.mktemp("oauth-worker"),
        group_id="oauth",
        extra=worker_properties(t),
        die_with_parent=True,
    )
    with fleet([w]):
        yield w


def mirror_config(clusters: dict[str, KafkaCluster], topic: str, source: dict[str, str]) -> dict[str, str]:
    target = oauth(clusters["T"])
    return {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "tasks.max": "1",
        "source.cluster.alias": "S",
        "target.cluster.alias": "T",
        **{f"source.cluster.{k}": v for k, v in source.items()},
        **{f"target.cluster.{k}": v for k, v in target.items()},
        "topics": topic,
        "replication.factor": "1",
        "offset-syncs.topic.location": "target",
        "offset-syncs.topic.replication.factor": "1",
        "refresh.topics.interval.seconds": "2",
        "sync.topic.acls.enabled": "false",
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
    }


def running(worker: PyconnectWorker, name: str) -> dict[str, Any]:
    def probe() -> dict[str, Any] | None:
        body = status(worker, name)
        if not body or body["connector"]["state"] != "RUNNING" or not body["tasks"]:
            return None
        return body if all(t["state"] == "RUNNING" for t in body["tasks"]) else None

    return wait_for(f"{name} and its tasks RUNNING", probe, FLOW_S)


async def produce(config: dict[str, str], topic: str, values: list[bytes]) -> None:
    producer = create_producer(config)
    await start_client(producer, config, cluster_label(config))
    try:
        for value in values:
            await producer.send_and_wait(topic, value, partition=0)
    finally:
        await producer.stop()


def test_a_worker_on_oauthbearer_mirrors_with_oauthbearer_source_and_target_keys(
    clusters: dict[str, KafkaCluster], worker: PyconnectWorker, unique: Callable[[str], str]
) -> None:
    s, t = clusters["S"], clusters["T"]
    before = issued(t).get(ADMIN_USER, 0)
    topic = unique("mirror")
    asyncio.run(create_topic(oauth(s), topic))
    asyncio.run(produce(oauth(s), topic, [b"m0", b"m1", b"m2"]))
    name = unique("mirror")
    code, body = worker.rest(
        "POST", "/connectors", {"name": name, "config": mirror_config(clusters, topic, oauth(s))}
    )
    assert code == 201, body
    running(worker, name)
    got = asyncio.run(read_values(oauth(t), f"S.{topic}", 3, FLOW_S))
    assert got == [b"m0", b"m1", b"m2"]
    time.sleep(TOKEN_LIFETIME_S + 2)  # every token the worker and the task started with has expired
    asyncio.run(produce(oauth(s), topic, [b"m3"]))
    got = asyncio.run(read_values(oauth(t), f"S.{topic}", 4, FLOW_S))
    assert got == [b"m0", b"m1", b"m2", b"m3"]
    running(worker, name)
    code, body = worker.rest("GET", "/connectors")
    assert code == 200 and name in body, body
    tokens = issued(t)[ADMIN_USER] - before
    print(f"\nmirrored 4 records S->T across a token expiry; T's token server issued {tokens} more tokens")
    assert tokens >= 2
    worker.rest("DELETE", f"/connectors/{name}")


def test_a_wrong_client_secret_is_a_clear_condition_of_the_connector_and_the_worker_stays_up(
    clusters: dict[str, KafkaCluster], worker: PyconnectWorker, unique: Callable[[str], str]
) -> None:
    s = clusters["S"]
    assert s.security is not None
    topic = unique("secret")
    asyncio.run(create_topic(oauth(s), topic))
    bad_source = {"bootstrap.servers": s.bootstrap_servers, "security.protocol": "SASL_PLAINTEXT"}
    bad_source |= {
        "sasl.mechanism": OAUTHBEARER,
        **s.security.oauth_client_properties(ADMIN_USER, WRONG_SECRET),
    }
    name = unique("secret")
    log_before = len(worker.log_file.read_text(errors="replace"))
    started = time.monotonic()
    code, body = worker.rest(
        "POST", "/connectors", {"name": name, "config": mirror_config(clusters, topic, bad_source)}
    )
    assert code == 201, body
    connector = wait_for(
        f"{name} RUNNING with SOURCE_AUTH_FAILED",
        lambda: (
            (b := status(worker, name))
            and b["connector"]["state"] == "RUNNING"
            and (b["connector"].get("trace") or "").startswith("SOURCE_AUTH_FAILED: ")
            and b["connector"]
        ),
        30,
    )
    took = time.monotonic() - started
    line = connector["trace"].splitlines()[0]
    print(f"\nwrong secret: RUNNING with the condition after {took:.1f} s: {line}")
    assert (
        f"Authentication to source cluster S ({s.bootstrap_servers}) "
        f"failed: OAUTHBEARER login: The token endpoint {s.security.token_endpoint_url} refused the login: "
        "HTTP 401 {invalid_client - Client authentication failed}"
    ) in line, line
    assert worker.running and worker.rest("GET", "/")[0] == 200
    log = worker.log_file.read_text(errors="replace")[log_before:]
    secrets = [
        WRONG_SECRET,
        *(p for c in clusters.values() if c.security for p in c.security.passwords.values()),
    ]
    for text in (connector["trace"], log):
        assert not [secret for secret in secrets if secret in text], "a secret is shown"
    code, body = worker.rest("PUT", f"/connectors/{name}/config", mirror_config(clusters, topic, oauth(s)))
    assert code == 200, body
    running(worker, name)
    worker.rest("DELETE", f"/connectors/{name}")


@pytest.mark.java
def test_a_java_client_accepts_the_same_properties_file(
    clusters: dict[str, KafkaCluster], unique: Callable[[str], str], tmp_path: Path
) -> None:
    s = clusters["S"]
    assert s.security is not None
    config = oauth(s)
    topic = unique("java")
    asyncio.run(create_topic(config, topic))
    path = tmp_path / "client.properties"
    path.write_text(properties.dumps(config))
    dist = ensure_distribution()
    command = dist.java_command(
        "org.apache.kafka.tools.ConsoleProducer",
        "--bootstrap-server",
        s.bootstrap_servers,
        "--topic",
        topic,
        "--command-config",
        str(path),
        heap="256m",
        jvm_opts=(f"-D{OAUTH_ALLOWED_URLS}={s.security.token_endpoint_url}",),
    )
    before = issued(s).get(ADMIN_USER, 0)
    done = subprocess.run(command, input=b"j0\nj1\n", capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert issued(s)[ADMIN_USER] > before, "the Java client logged in through the token server"
    assert asyncio.run(read_values(config, topic, 2, 20)) == [b"j0", b"j1"]


def test_an_oauthbearer_config_without_a_login_handler_fails_the_connector_naming_the_key(
    clusters: dict[str, KafkaCluster], worker: PyconnectWorker, unique: Callable[[str], str]
) -> None:
    """Java's default for OAUTHBEARER is the unsecured login, which needs a subject in the JAAS value."""
    s = clusters["S"]
    source = {k: v for k, v in oauth(s).items() if k != "sasl.login.callback.handler.class"}
    name = unique("nohandler")
    config = mirror_config(clusters, unique("nohandler"), source)
    code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
    assert code == 201, body
    connector = wait_for(
        f"{name} FAILED",
        lambda: (b := status(worker, name)) and b["connector"]["state"] == "FAILED" and b["connector"],
        30,
    )
    line = connector["trace"].splitlines()[0]
    print(f"\nno login handler: {line}")
    assert "the unsecured OAUTHBEARER login needs unsecuredLoginStringClaim_sub" in line, line
    assert "sasl.login.callback.handler.class" in line, line
    assert worker.running and worker.rest("GET", "/")[0] == 200
    worker.rest("DELETE", f"/connectors/{name}")
