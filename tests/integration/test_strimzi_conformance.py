"""Strimzi's generated configurations run in the pyconnect image and mirror between local clusters.

Each fixture is what Strimzi 1.0's operator generates for one KafkaMirrorMaker2 (v1 layout:
``.spec.target``, ``.spec.mirrors``; tests/integration/strimzi_configs.py ports the generator): the
worker config mounted at ``/opt/kafka/custom-config/``, the passwords and PEM certificates mounted
where its pods mount them, the environment it sets, the container started with its command
``/opt/kafka/kafka_mirror_maker_2_run.sh``, then the connectors created as the operator creates them
(``PUT /connectors/<source>%2D%3E<target>.MirrorSourceConnector/config``). The one change to a
generated config is the last section: this machine's free ports instead of 8083 and 9404 (the
containers share the host's network).

In ``make test``: ``scram_target_tls_source`` (SCRAM-SHA-512 to the target, TLS with a client
certificate to the source, rack from an environment variable, OpenTelemetry tracing, the Strimzi
Metrics Reporter) and the Kubernetes-secret fixture that must refuse to start in one line. The other
fixtures (PLAIN, SCRAM over TLS, OAuth, the JMX exporter) are ``long``.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pyconnect.kafka.clients import create_consumer, create_producer
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.containers import ContainerWorker
from pyconnect.testing.images import ensure_image
from pyconnect.testing.kafka import KafkaCluster, free_ports, start_clusters, stop_clusters
from pyconnect.testing.kafka_security import ADMIN_USER
from tests.integration import strimzi_configs as strimzi
from tests.integration.fleet import wait_for

pytestmark = pytest.mark.kafka

MM2_RUN = "/opt/kafka/kafka_mirror_maker_2_run.sh"
CONNECT_RUN = "/opt/kafka/kafka_connect_run.sh"


@pytest.fixture(scope="module")
def image() -> str:
    return ensure_image("pyconnect")


@pytest.fixture(scope="module")
def scram_cluster(secured_cluster: Callable[[str], KafkaCluster]) -> KafkaCluster:
    return secured_cluster("sasl_plaintext")


@pytest.fixture(scope="module")
def mtls_cluster(secured_cluster: Callable[[str], KafkaCluster]) -> KafkaCluster:
    return secured_cluster("mtls")


@dataclass
class Deployment:
    """A KafkaMirrorMaker2 as Strimzi deploys it: files to mount, environment, connectors to create."""

    worker_config: str
    connectors: dict[str, dict[str, str]]
    environment: dict[str, str]
    files: dict[str, bytes] = field(default_factory=dict)
    command: str = MM2_RUN


def split_pem(pem: bytes) -> tuple[bytes, bytes]:
    """``(certificates, key)`` of a PEM file holding both."""
    text = pem.decode()
    start = text.index("-----BEGIN PRIVATE KEY-----")
    end = text.index("-----END PRIVATE KEY-----") + len("-----END PRIVATE KEY-----\n")
    return (text[:start] + text[end:]).encode(), text[start:end].encode()


def mirror_connectors(
    target: strimzi.ClusterSpec, source: strimzi.ClusterSpec, topic: str, **options: bool
) -> dict[str, dict[str, str]]:
    """The MirrorSourceConnector and MirrorCheckpointConnector of ``source -> target`` as the operator
    creates them (``spec.mirrors[].sourceConnector.config`` as a user would write it)."""
    source_spec = {"replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
                   "sync.topic.acls.enabled": "false", "refresh.topics.interval.seconds": "2"}  # fmt: skip
    checkpoint_spec = {"checkpoints.topic.replication.factor": "1", "sync.group.offsets.enabled": "false",
                       "emit.checkpoints.interval.seconds": "2", "refresh.groups.interval.seconds": "2"}  # fmt: skip
    name = f"{source.alias}->{target.alias}"
    found = {}
    for suffix, spec in (
        (".MirrorSourceConnector", source_spec),
        (".MirrorCheckpointConnector", checkpoint_spec),
    ):
        config = strimzi.connector_config(
            target, source, spec, topics_pattern=topic, groups_pattern=".*", **options
        )
        found[name + suffix] = {
            "connector.class": "org.apache.kafka.connect.mirror" + suffix,
            "tasks.max": "1",
            **config,
        }
    return found


def scram_target_tls_source(scram: KafkaCluster, mtls: KafkaCluster, topic: str, group: str) -> Deployment:
    target = strimzi.ClusterSpec(
        "target",
        scram.bootstrap_servers,
        auth="scram-sha-512",
        username=ADMIN_USER,
        password_secret=("target-admin", "password"),
    )
    source = strimzi.ClusterSpec(
        "source", mtls.bootstrap_servers, trusted=("source-cluster-ca-cert/ca.crt",), auth="tls",
        cert_and_key=("source-admin", "user.crt", "user.key"),
    )  # fmt: skip
    topics = (f"{group}-configs", f"{group}-status", f"{group}-offsets")
    assert mtls.security is not None and scram.security is not None
    certs, key = split_pem(mtls.security.keystore(ADMIN_USER).read_bytes())
    replication = {
        f"{t}.replication.factor": "1" for t in ("config.storage", "offset.storage", "status.storage")
    }
    password = scram.security.passwords[ADMIN_USER].encode()
    return Deployment(
        strimzi.worker_config(
            target,
            group_id=group,
            topics=topics,
            rack_env="STRIMZI_RACK_ID",
            metrics="strimzi",
            user_config=replication,
        ),
        mirror_connectors(target, source, topic, tracing=True, rack=True, metrics_reporter=True),
        {
            **strimzi.environment([target, source]),
            "STRIMZI_RACK_ID": "zone-a",
            "STRIMZI_TRACING": "opentelemetry",
            "OTEL_SERVICE_NAME": "mm2",
        },
        {
            "/opt/kafka/connect-password/target-admin/password": password,
            "/opt/kafka/mm2-password/target/target-admin/password": password,
            "/opt/kafka/mm2-certs/source/source-cluster-ca-cert/ca.crt": mtls.security.ca_file.read_bytes(),
            "/opt/kafka/mm2-certs/source/source-admin/user.crt": certs,
            "/opt/kafka/mm2-certs/source/source-admin/user.key": key,
            "/opt/kafka/custom-config/log4j2.properties": b"rootLogger.level = INFO\n",
        },
    )


class StrimziPod:
    """The container of one Deployment, on this machine's free ports."""

    def __init__(self, image: str, deployment: Deployment, work_dir: Path) -> None:
        self.port, self.metrics_port = free_ports(2)
        config = deployment.worker_config + (
            "##########\n# This machine's ports (the test's one change)\n##########\n"
            f"listeners=http://127.0.0.1:{self.port}\nrest.advertised.port={self.port}\n"
            f"prometheus.metrics.reporter.listener=http://127.0.0.1:{self.metrics_port}\n"
        )
        files = {**deployment.files, "/opt/kafka/custom-config/kafka-connect.properties": config.encode()}
        mounts: dict[str, Path] = {}
        for inside, data in files.items():
            top = "/".join(inside.split("/")[:4])
            host = work_dir / "mounts" / top.strip("/").replace("/", "_")
            target = host / Path(inside).relative_to(top)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            mounts[top] = host
        for path in (work_dir / "mounts").rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        self.deployment = deployment
        self.worker = ContainerWorker(
            "unused:9092",
            work_dir / "pod",
            port=self.port,
            image=image,
            entrypoint=deployment.command,
            command=(),
            mount_work_dir=False,
            mounts=[(host, inside) for inside, host in mounts.items()],
            environment=deployment.environment,
            die_with_parent=True,
        )

    def rest(self, method: str, path: str, body: object = None) -> tuple[int, object]:
        return self.worker.rest(method, path, body)

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=10) as answer:
            return str(answer.read().decode())


@pytest.fixture
def pods() -> Iterator[list[StrimziPod]]:
    started: list[StrimziPod] = []
    yield started
    for pod in started:
        pod.worker.stop(timeout=30)


def encoded(name: str) -> str:
    """The connector name as Strimzi's operator puts it in a path (``->`` as ``%2D%3E``)."""
    return name.replace("->", "%2D%3E")


def create_connectors_as_the_operator_does(pod: StrimziPod) -> None:
    for name, config in pod.deployment.connectors.items():
        code, body = pod.rest("PUT", f"/connectors/{encoded(name)}/config", config)
        assert code in (200, 201), (name, body)


def client(cluster: KafkaCluster, mechanism: str | None = None) -> dict[str, str]:
    """The admin user's Java client keys for ``cluster`` (bootstrap included)."""
    assert cluster.security is not None
    return {
        "bootstrap.servers": cluster.bootstrap_servers,
        **cluster.security.client_properties(ADMIN_USER, mechanism),
    }


async def produce(cluster: KafkaCluster, topic: str, count: int) -> None:
    producer = create_producer(client(cluster))
    await producer.start()
    try:
        for i in range(count):
            await producer.send_and_wait(topic, f"r{i}".encode())
    finally:
        await producer.stop()


def test_scram_target_tls_source_with_rack_tracing_and_the_metrics_reporter(
    image: str, scram_cluster: KafkaCluster, mtls_cluster: KafkaCluster, unique: Callable[[str], str],
    tmp_path: Path, pods: list[StrimziPod],
) -> None:  # fmt: skip
    topic, group = unique("smm2"), unique("mm2-cluster")
    pod = StrimziPod(image, scram_target_tls_source(scram_cluster, mtls_cluster, topic, group), tmp_path)
    pods.append(pod)
    pod.worker.start()
    pod.worker.wait_ready(timeout=90)
    log = pod.worker.log_tail(400)
    assert "Preparing MirrorMaker 2 cluster truststores and keystores" in log
    assert "sasl.jaas.config=[hidden]" in log and "WARN STRIMZI_TRACING=opentelemetry" in log
    asyncio.run(produce(mtls_cluster, topic, 20))
    create_connectors_as_the_operator_does(pod)
    source_name = "source%2D%3Etarget.MirrorSourceConnector"
    wait_for(
        "the source connector's task RUNNING",
        lambda: (
            (status := pod.rest("GET", f"/connectors/{source_name}/status")[1])
            and isinstance(status, dict)
            and [t["state"] for t in status.get("tasks", [])] == ["RUNNING"]
        ),
        90,
    )
    mirrored = wait_for(
        "20 records on the target",
        lambda: (
            len(found := asyncio.run(read_topic_secured(scram_cluster, f"source.{topic}"))) >= 20 and found
        ),
        90,
    )
    assert sorted(v for v in mirrored) == sorted(f"r{i}".encode() for i in range(20))
    assert_connector_paths(pod, "source->target.MirrorSourceConnector")
    series = wait_for(
        "the mirror series on the metrics reporter's port",
        lambda: (
            "kafka_connect_mirror_mirrorsourceconnector_record_count{" in (text := pod.metrics()) and text
        ),
        30,
    )
    assert (
        'kafka_connect_connector_metrics_status_info{connector="source->target.MirrorSourceConnector"'
        in series
    )
    code, jmx_named = pod.rest("GET", "/metrics")
    assert code == 200 and "kafka_connect_mirror_mirrorsourceconnector_record_count{" in str(jmx_named)


async def read_topic_secured(cluster: KafkaCluster, topic: str) -> list[bytes]:
    return await read_topic_as(cluster, topic, "SCRAM-SHA-512")


async def read_topic_as(cluster: KafkaCluster, topic: str, mechanism: str) -> list[bytes]:
    """The values of ``topic`` read as the admin user with ``mechanism`` (empty while it does not exist)."""
    consumer = create_consumer(
        {**client(cluster, mechanism), "auto.offset.reset": "earliest", "enable.auto.commit": "false"},
        topic,
    )
    values: list[bytes] = []
    try:
        await consumer.start()
        idle = 0
        while idle < 2:
            got = await consumer.getmany(timeout_ms=1000)
            idle = 0 if got else idle + 1
            values += [r.value for batch in got.values() for r in batch if r.value is not None]
    finally:
        await consumer.stop()
    return values


def assert_connector_paths(pod: StrimziPod, name: str) -> None:
    """Every REST path the operator uses, with the name as it encodes it and with ``>`` encoded alone."""
    for spelled in (encoded(name), name.replace(">", "%3E")):
        for method, path, expected in (
            ("GET", f"/connectors/{spelled}", 200),
            ("GET", f"/connectors/{spelled}/config", 200),
            ("GET", f"/connectors/{spelled}/status", 200),
            ("GET", f"/connectors/{spelled}/topics", 200),
            ("GET", f"/connectors/{spelled}/tasks", 200),
            ("GET", f"/connectors/{spelled}/offsets", 200),
            ("PUT", f"/connectors/{spelled}/pause", 202),
            ("PUT", f"/connectors/{spelled}/resume", 202),
            ("POST", f"/connectors/{spelled}/restart?includeTasks=false&onlyFailed=true", 202),
            ("POST", f"/connectors/{spelled}/tasks/0/restart", 204),
        ):
            code, body = pod.rest(method, path)
            assert code == expected, (method, path, code, body)
        code, body = pod.rest("GET", f"/connectors/{spelled}")
        assert isinstance(body, dict) and body["name"] == name, body
    code, body = pod.rest("GET", "/connectors?expand=status")
    assert code == 200 and name in body, body  # type: ignore[operator]
    code, body = pod.rest("GET", "/connector-plugins")
    assert code == 200, body
    code, body = pod.rest(
        "PUT", "/admin/loggers/org.apache.kafka.connect.mirror?scope=cluster", {"level": "INFO"}
    )
    assert code in (200, 204), body
    code, body = pod.rest("GET", "/health")
    assert code == 200, body


def plain_target_scram_tls_source(
    scram: KafkaCluster, sasl_ssl: KafkaCluster, topic: str, group: str
) -> Deployment:
    """PLAIN to the target, SCRAM-SHA-512 over TLS (a trusted CA, a truststore made from it) to the
    source, the JMX exporter's metrics (``KAFKA_CONNECT_JMX_EXPORTER_ENABLED``)."""
    target = strimzi.ClusterSpec(
        "target",
        scram.bootstrap_servers,
        auth="plain",
        username=ADMIN_USER,
        password_secret=("target-admin", "password"),
    )
    source = strimzi.ClusterSpec(
        "source", sasl_ssl.bootstrap_servers, trusted=("source-cluster-ca-cert/*.crt",), auth="scram-sha-512",
        username=ADMIN_USER, password_secret=("source-admin", "password"),
    )  # fmt: skip
    assert scram.security is not None and sasl_ssl.security is not None
    replication = {
        f"{t}.replication.factor": "1" for t in ("config.storage", "offset.storage", "status.storage")
    }
    target_password = scram.security.passwords[ADMIN_USER].encode()
    return Deployment(
        strimzi.worker_config(
            target,
            group_id=group,
            topics=(f"{group}-c", f"{group}-s", f"{group}-o"),
            metrics="jmx",
            user_config=replication,
        ),
        mirror_connectors(target, source, topic),
        {**strimzi.environment([target, source]), "KAFKA_CONNECT_JMX_EXPORTER_ENABLED": "true"},
        {
            "/opt/kafka/connect-password/target-admin/password": target_password,
            "/opt/kafka/mm2-password/target/target-admin/password": target_password,
            "/opt/kafka/mm2-password/source/source-admin/password": sasl_ssl.security.passwords[
                ADMIN_USER
            ].encode(),
            "/opt/kafka/mm2-certs/source/source-cluster-ca-cert/ca.crt": sasl_ssl.security.ca_file.read_bytes(),
        },
    )


@pytest.mark.long
def test_plain_target_scram_over_tls_source_and_the_jmx_exporter_port(
    image: str, scram_cluster: KafkaCluster, secured_cluster: Callable[[str], KafkaCluster],
    unique: Callable[[str], str], tmp_path: Path, pods: list[StrimziPod],
) -> None:  # fmt: skip
    sasl_ssl = secured_cluster("sasl_ssl")
    topic, group = unique("pmm2"), unique("mm2-plain")
    pod = StrimziPod(image, plain_target_scram_tls_source(scram_cluster, sasl_ssl, topic, group), tmp_path)
    pods.append(pod)
    pod.worker.start()
    pod.worker.wait_ready(timeout=90)
    asyncio.run(produce(sasl_ssl, topic, 20))
    create_connectors_as_the_operator_does(pod)
    mirrored = wait_for(
        "20 records on the target",
        lambda: (
            len(found := asyncio.run(read_topic_secured(scram_cluster, f"source.{topic}"))) >= 20 and found
        ),
        120,
    )
    assert sorted(mirrored) == sorted(f"r{i}".encode() for i in range(20))

    def jmx_exporter_port() -> str:
        with urllib.request.urlopen("http://127.0.0.1:9404/metrics", timeout=10) as answer:
            return str(answer.read().decode())

    exported = wait_for(
        "the mirror series on the JMX exporter's port",
        lambda: (
            "kafka_connect_mirror_mirrorsourceconnector_record_count{" in (text := jmx_exporter_port())
            and text
        ),
        30,
    )
    assert "kafka_connect_worker_connector_count" in exported
    code, _ = pod.rest("GET", "/metrics")
    assert code == 200


@pytest.fixture(scope="module")
def oauth_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    """A one-node SASL_PLAINTEXT cluster with OAUTHBEARER and its token server (local backend)."""
    started = start_clusters(
        ["O"],
        tmp_path_factory.mktemp("kafka-oauth-strimzi"),
        security="sasl_plaintext",
        oauth=True,
        die_with_parent=True,
    )
    try:
        yield started["O"]
    finally:
        stop_clusters(started.values())


def oauth_target(oauth: KafkaCluster, plain: ClusterHandle, topic: str, group: str) -> Deployment:
    """``authentication: {type: custom, sasl: true}`` with Kafka's OAUTHBEARER client-credentials login to
    the target (the client secret from a mounted Secret, ``${strimzidir:...}`` inside ``sasl.jaas.config``),
    a plaintext source."""
    assert oauth.security is not None
    login = oauth.security.oauth_client_properties(
        ADMIN_USER, "${strimzidir:/opt/kafka/oauth-secret:client-secret}"
    )
    target = strimzi.ClusterSpec(
        "target",
        oauth.bootstrap_servers,
        auth="custom",
        custom_sasl=True,
        custom={"sasl.mechanism": "OAUTHBEARER", **login},
    )
    source = strimzi.ClusterSpec("source", plain.bootstrap_servers)
    replication = {
        f"{t}.replication.factor": "1" for t in ("config.storage", "offset.storage", "status.storage")
    }
    return Deployment(
        strimzi.worker_config(
            target, group_id=group, topics=(f"{group}-c", f"{group}-s", f"{group}-o"), user_config=replication
        ),
        mirror_connectors(target, source, topic),
        strimzi.environment([target, source]),
        {"/opt/kafka/oauth-secret/client-secret": oauth.security.passwords[ADMIN_USER].encode()},
    )


@pytest.mark.long
def test_oauthbearer_target_with_the_client_secret_inside_sasl_jaas_config(
    image: str, oauth_cluster: KafkaCluster, cluster_a: ClusterHandle, unique: Callable[[str], str],
    tmp_path: Path, pods: list[StrimziPod],
) -> None:  # fmt: skip
    topic, group = unique("omm2"), unique("mm2-oauth")
    pod = StrimziPod(image, oauth_target(oauth_cluster, cluster_a, topic, group), tmp_path)
    pods.append(pod)
    pod.worker.start()
    pod.worker.wait_ready(timeout=90)
    asyncio.run(produce_plain(cluster_a.bootstrap_servers, topic, 20))
    create_connectors_as_the_operator_does(pod)
    mirrored = wait_for(
        "20 records on the target",
        lambda: (
            len(found := asyncio.run(read_topic_as(oauth_cluster, f"source.{topic}", "OAUTHBEARER"))) >= 20
            and found
        ),
        120,
    )
    assert sorted(mirrored) == sorted(f"r{i}".encode() for i in range(20))


async def produce_plain(bootstrap: str, topic: str, count: int) -> None:
    producer = create_producer({"bootstrap.servers": bootstrap})
    await producer.start()
    try:
        for i in range(count):
            await producer.send_and_wait(topic, f"r{i}".encode())
    finally:
        await producer.stop()


def test_a_tls_target_read_through_the_kubernetes_api_refuses_to_start_in_one_line(
    image: str, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path, pods: list[StrimziPod]
) -> None:
    group = unique("k8s-secrets")
    target = strimzi.ClusterSpec(
        "target", cluster_b.bootstrap_servers, trusted=("target-cluster-ca-cert/ca.crt",)
    )
    deployment = Deployment(
        strimzi.worker_config(target, group_id=group, topics=(f"{group}-c", f"{group}-s", f"{group}-o")),
        {},
        strimzi.environment([target]),
        command=CONNECT_RUN,
    )
    pod = StrimziPod(image, deployment, tmp_path)
    pods.append(pod)
    pod.worker.start()
    deadline = time.monotonic() + 60
    while pod.worker.running and time.monotonic() < deadline:
        time.sleep(0.2)
    assert pod.worker.process is not None and pod.worker.process.exit_code() == 1, pod.worker.log_tail()
    errors = [line for line in pod.worker.log_tail(200).splitlines() if line.startswith("pyconnect: ")]
    assert len(errors) == 1, pod.worker.log_tail()
    assert "io.strimzi.kafka.KubernetesSecretConfigProvider is not available in pyconnect" in errors[0]
    assert "ca.crt" in errors[0] and "BEGIN" not in errors[0]
    assert "Worker ready" not in pod.worker.log_tail(200)
    json.dumps(errors)
