"""Shared fixtures: the two real Kafka clusters (A and B) and unique names per test.

Clusters come from pyconnect.testing.backends (local KRaft launcher by default). A test that asks
for them and cannot get them errors with the backend's message: it never skips. Every test fails
on a leaked task or aiokafka client, in this process or in a worker it started (tests/leak_guard.py).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator

import pytest

from pyconnect.testing.backends import ClusterHandle, provide_clusters, provide_secured_clusters
from pyconnect.testing.kafka import KafkaCluster
from pyconnect.testing.kafka_versions import provide_release_clusters
from tests.alert_watch import AlertWatch, alert_watch
from tests.leak_guard import leak_guard, pytest_sessionfinish  # noqa: F401  (fixture and hook)


@pytest.fixture(scope="session")
def kafka_clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ClusterHandle]]:
    """Clusters ``A`` and ``B`` for the whole session."""
    with provide_clusters(tmp_path_factory.mktemp("kafka")) as handles:
        yield handles


@pytest.fixture(scope="session")
def cluster_a(kafka_clusters: dict[str, ClusterHandle]) -> ClusterHandle:
    return kafka_clusters["A"]


@pytest.fixture(scope="session")
def cluster_b(kafka_clusters: dict[str, ClusterHandle]) -> ClusterHandle:
    return kafka_clusters["B"]


@pytest.fixture(scope="session")
def cluster_c(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterHandle]:
    """A third cluster ``C`` for three-cluster topologies (A->B->C); started only when a test asks."""
    with provide_clusters(tmp_path_factory.mktemp("kafka-c"), ("C",)) as handles:
        yield handles["C"]


@pytest.fixture(scope="session")
def secured_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], KafkaCluster]]:
    """``secured_cluster("sasl_ssl")`` -> a local one-node cluster with that security (``sasl_plaintext``,
    ``sasl_ssl``, ``ssl`` or ``mtls``; users ``admin`` (super user), ``alice``, ``bob``), started the
    first time a test asks for that protocol and shared by the session. Call it from a fixture, not
    from a coroutine. ``cluster.client_properties(user, mechanism)`` gives Java client keys and
    ``pyconnect.testing.kafka.grant`` adds ACLs."""
    with provide_secured_clusters(tmp_path_factory.mktemp("kafka-secured")) as get:
        yield get


@pytest.fixture(scope="session")
def kafka_release(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], KafkaCluster]]:
    """``kafka_release("3.9.1")`` -> a local one-node plaintext cluster of that Apache Kafka release
    (pyconnect.testing.kafka_versions: 2.x/3.x, before 3.3 with ZooKeeper; jars fetched by ``make
    kafka``), started the first time a test asks for that version and shared by the session. Call it
    from a fixture, not from a coroutine."""
    with provide_release_clusters(tmp_path_factory.mktemp("kafka-releases")) as get:
        yield get


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """``unique("topic")`` -> a topic/group name no other test (or earlier run) uses."""
    base = re.sub(r"[^A-Za-z0-9]+", "-", request.node.name).strip("-")[:40]

    def make(prefix: str = "t") -> str:
        return f"{prefix}-{base}-{uuid.uuid4().hex[:8]}"

    return make


@pytest.fixture(scope="session")
def alerts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AlertWatch]:
    """One real Prometheus evaluating the shipped alert rules for the session (tests/alert_watch.py):
    ``alerts.scrape([worker addresses])``, then ``alerts.wait_firing(code, timeout_s)``."""
    with alert_watch(tmp_path_factory.mktemp("alerts")) as watch:
        yield watch
