"""The testcontainers backend for real, in the normal suite: a broker in a container of the locally built
Kafka image, started through testcontainers on podman's Docker API (pyconnect.testing.backends), and on
it one Connect group of a pyconnect worker in the pyconnect image and a Java worker in the Kafka image.

The mixed group is ``long`` (a Java worker takes a while to start on a shared machine); ``make
test-containers`` runs it, with a wider slice of the suite on this backend (both test clusters in
containers). The normal suite's sibling is the broker test here and the pyconnect worker in its image
(tests/integration/test_container_image.py).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

import pytest

from pyconnect.testing.backends import ClusterHandle, provide_clusters
from pyconnect.testing.containers import ContainerWorker
from pyconnect.testing.images import ensure_image
from pyconnect.testing.podman import podman
from tests.integration.fleet import FAST_GROUP, read_topic, running_tasks, verifiable, wait_for

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def container_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterHandle]:
    with mock.patch.dict(os.environ, {"PYCONNECT_TEST_BACKEND": "testcontainers"}):
        with provide_clusters(tmp_path_factory.mktemp("tc"), ("T",)) as handles:
            yield handles["T"]


def records_by_task(bootstrap: str, topic: str) -> set[int]:
    """The VerifiableSource task ids that wrote to ``topic`` (a bounded read: the tasks keep writing)."""
    records = asyncio.run(read_topic(bootstrap, topic, max_s=5, idle_reads=1))
    return {json.loads(key)["payload"] for _, _, key, _ in records if key}


def test_the_broker_runs_in_a_container_of_the_local_kafka_image(container_cluster: ClusterHandle) -> None:
    assert container_cluster.local is None
    port = container_cluster.bootstrap_servers.rsplit(":", 1)[1]
    listed = podman(
        "ps", "--format", "{{.Image}} {{.Command}}", "--filter", "label=org.pyconnect.test.owner-pid"
    )
    image = ensure_image("kafka")
    assert any(line.startswith(image) for line in listed.stdout.splitlines()), listed.stdout
    assert port.isdigit()


@pytest.mark.long
def test_a_pyconnect_container_and_a_java_container_form_one_connect_group(
    container_cluster: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group = unique("mixed")
    common = {"group_id": group, "extra": dict(FAST_GROUP), "die_with_parent": True}
    python_worker = ContainerWorker(
        container_cluster.bootstrap_servers, tmp_path / "py", image=ensure_image("pyconnect"), **common
    )
    java_worker = ContainerWorker(
        container_cluster.bootstrap_servers,
        tmp_path / "java",
        image=ensure_image("kafka"),
        java=True,
        **common,
    )
    workers = [python_worker, java_worker]
    try:
        for w in workers:
            w.start()
        for w in workers:
            w.wait_ready(timeout=120)
        topic = unique("mixed")
        code, body = python_worker.rest(
            "PUT", "/connectors/verif/config", verifiable(topic, 2, throughput=20)
        )
        assert code == 201, body
        placed = wait_for("2 tasks RUNNING", lambda: running_tasks(java_worker, "verif", 2), 90)
        assert set(placed.values()) == {python_worker.worker_id, java_worker.worker_id}, placed
        code, names = java_worker.rest("GET", "/connectors")
        assert code == 200 and names == ["verif"], names
        tasks = wait_for(
            "records of both tasks",
            lambda: len(found := records_by_task(container_cluster.bootstrap_servers, topic)) == 2 and found,
            60,
        )
        assert sorted(tasks) == [0, 1], tasks
    finally:
        for w in workers:
            w.stop(timeout=30)
