"""Shared fixtures: the two real Kafka clusters (A and B) and unique names per test.

Clusters come from pyconnect.testing.backends (local KRaft launcher by default). A test that asks
for them and cannot get them errors with the backend's message: it never skips.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator

import pytest

from pyconnect.testing.backends import ClusterHandle, provide_clusters


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


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """``unique("topic")`` -> a topic/group name no other test (or earlier run) uses."""
    base = re.sub(r"[^A-Za-z0-9]+", "-", request.node.name).strip("-")[:40]

    def make(prefix: str = "t") -> str:
        return f"{prefix}-{base}-{uuid.uuid4().hex[:8]}"

    return make
