"""Workers started at the same moment on a fresh cluster: all of them start (Java's do too).

The first worker creates the internal topics; the others find them existing ("already exists") and
open them while the new topics' metadata may not have reached every broker yet. Each worker waits for
the metadata as Java's KafkaBasedLog does, instead of exiting with "topic ... does not exist".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pyconnect.testing.kafka import KafkaCluster
from tests.integration.fleet import fleet, own_cluster, python_workers, running_tasks, verifiable, wait_for

pytestmark = pytest.mark.kafka

ROUNDS = 3
WORKERS = 3


@pytest.fixture(scope="module")
def fresh_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    """A new three-node cluster: a topic created through one node reaches the others' metadata later."""
    with own_cluster(tmp_path_factory.mktemp("fresh"), "F", brokers=3) as cluster:
        yield cluster


@pytest.mark.long  # a fresh cluster and three rounds; the fleets of make test start on fresh internal topics
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_workers_cold_started_together_on_fresh_internal_topics_all_come_up(
    fresh_cluster: KafkaCluster, unique: Callable[[str], str], tmp_path: Path, round_: int
) -> None:
    group, topic = unique(f"cold-{round_}"), unique("out")
    workers = python_workers(fresh_cluster.bootstrap_servers, tmp_path, group, WORKERS)
    with fleet(workers):
        for worker in workers:
            worker.check_alive()
        code, body = workers[-1].rest(
            "POST", "/connectors", {"name": "v", "config": verifiable(topic, WORKERS)}
        )
        assert code == 201, body
        placed = wait_for(f"{WORKERS} RUNNING tasks", lambda: running_tasks(workers[0], "v", WORKERS), 60)
        assert len(placed) == WORKERS
