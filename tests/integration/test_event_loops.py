"""Workers and Kafka clients on each event loop (pyconnect.event_loop): uvloop and asyncio's own.

uvloop is the default, so every other worker process of the suite runs on it; these tests keep the
asyncio fallback proven, and check that the loop asked for is the loop that runs:

- per loop, a fleet of two workers (``--event-loop``) mirrors a topic of A to B record for record with
  its tasks spread over both workers (so a follower forwards the create to the leader); each worker's
  ``GET /metrics`` names its loop in ``python_eventloop_info`` and its log says so at startup;
- per loop, pyconnect's client factories round-trip a record over SASL_SSL (SCRAM-SHA-256): TLS and
  SASL on the loop's own transports.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from pyconnect import event_loop
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.kafka import KafkaCluster
from pyconnect.testing.kafka_security import ADMIN_USER
from tests.integration.fleet import fleet, python_workers, running_tasks, wait_for
from tests.integration.test_metrics_endpoint import matching, parse, scrape
from tests.integration.test_mirror_source import create_and_fill, mirror_config, source_rows, wait_mirrored
from tests.integration.test_secured_launcher import consume, create_topic, produce

pytestmark = pytest.mark.kafka

LOOPS = (event_loop.UVLOOP, event_loop.ASYNCIO)
RECORDS, PARTITIONS = 200, 2


@pytest.mark.parametrize("loop", LOOPS)
def test_a_fleet_of_two_workers_mirrors_a_topic_on_each_loop(
    loop: str,
    cluster_a: ClusterHandle,
    cluster_b: ClusterHandle,
    unique: Callable[[str], str],
    tmp_path: Path,
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = f"{unique('loop')}-t"
    asyncio.run(create_and_fill(a, topic, PARTITIONS, RECORDS))
    expected = source_rows(a, topic, RECORDS)
    workers = python_workers(b, tmp_path, unique("loop-group"), 2)
    for worker in workers:
        worker.event_loop = loop
    with fleet(workers):
        for worker in workers:
            info = matching(parse(scrape(worker)), "python_eventloop_info")
            assert [dict(labels)["implementation"] for labels in info] == [loop], worker.worker_id
            assert f"Running on the {loop} event loop" in worker.log_tail(400), worker.worker_id
        code, body = workers[1].rest(
            "POST", "/connectors", {"name": "mirror", "config": mirror_config(cluster_a, cluster_b, topic)}
        )
        assert code == 201, body

        def spread() -> dict[int, str] | None:
            tasks = running_tasks(workers[0], "mirror", 2)
            return tasks if tasks and len(set(tasks.values())) == 2 else None

        wait_for("2 RUNNING tasks, one per worker", spread, 60)
        wait_mirrored(b, f"A.{topic}", expected, 60)


@pytest.fixture
def sasl_ssl(secured_cluster: Callable[[str], KafkaCluster]) -> KafkaCluster:
    return secured_cluster("sasl_ssl")


@pytest.mark.long  # make chaos; make test keeps a fleet on each loop and SASL_SSL flows on the default loop
@pytest.mark.parametrize("loop", LOOPS)
def test_clients_round_trip_over_sasl_ssl_on_each_loop(
    loop: str, sasl_ssl: KafkaCluster, unique: Callable[[str], str]
) -> None:
    config = sasl_ssl.client_properties(ADMIN_USER, "SCRAM-SHA-256")
    assert config["security.protocol"] == "SASL_SSL"
    topic = unique("loop-tls")
    value = f"over SASL_SSL on {loop}".encode()

    async def round_trip() -> tuple[str, list[bytes]]:
        await create_topic(config, topic)
        await produce(config, topic, value)
        return event_loop.running_loop_name(), await consume(config, topic)

    assert event_loop.run(round_trip(), loop) == (loop, [value])
