"""KIP-618, first step: with ``exactly.once.source.support=preparing`` the leader writes the config topic
through a fencable transactional producer (``connect-cluster-<group.id>``), on real Kafka.

- a fleet of two workers creates and runs a connector; the config topic's records are transactional
  (commit markers take offsets, so the offsets a consumer sees have gaps; without exactly-once they
  are contiguous);
- the leader is killed; the new leader claims the privileges (fencing the old producer) and writes;
- two stores claiming the same transactional id: the older one is fenced, its write fails and it
  holds no privileges any more; the newer one writes;
- ``enabled``: the connector is created and its source task runs, writing its records in transactions
  (commit markers between a ``read_committed`` reader's offsets); the worker keeps serving.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from pyconnect.config.worker import WorkerConfig
from pyconnect.errors import ConnectError
from pyconnect.stores.config import ConfigStore
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.connect_worker import group_leader_url
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import (
    fleet,
    python_workers,
    read_topic,
    running_tasks,
    status,
    verifiable,
    wait_for,
)

pytestmark = pytest.mark.kafka


async def config_topic_offsets(
    bootstrap: str, topic: str, isolation: str = "read_uncommitted", max_s: float = 30.0
) -> list[int]:
    """The offsets of ``topic``'s records, read until two idle reads or for at most ``max_s`` seconds."""
    records = await read_topic(bootstrap, topic, isolation, max_s, idle_reads=2, poll_ms=500)
    return [offset for _, offset, _, _ in records]


def test_a_preparing_fleet_writes_its_config_topic_in_transactions_and_a_new_leader_takes_over(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group, topic = unique("eos-prep"), unique("out")
    workers = python_workers(
        cluster_a.bootstrap_servers, tmp_path, group, 2, **{"exactly.once.source.support": "preparing"}
    )
    with fleet(workers):
        code, body = workers[1].rest("POST", "/connectors", {"name": "verif", "config": verifiable(topic, 2)})
        assert code == 201, body
        wait_for("2 RUNNING tasks", lambda: running_tasks(workers[0], "verif", 2), 60)

        offsets = asyncio.run(config_topic_offsets(cluster_a.bootstrap_servers, workers[0].config_topic))
        assert offsets, "records in the config topic"
        gaps = [b - a for a, b in itertools.pairwise(offsets) if b - a > 1]
        assert gaps, f"transaction markers between the leader's writes: {offsets}"

        leader = group_leader_url(cluster_a.bootstrap_servers, group)
        victim = next(w for w in workers if w.rest_url == leader)
        survivor = next(w for w in workers if w is not victim)
        victim.kill()

        def created() -> bool:
            code, _ = survivor.rest("POST", "/connectors", {"name": "second", "config": verifiable(topic, 1)})
            return code in (201, 409) and survivor.rest("GET", "/connectors/second")[0] == 200

        wait_for("the new leader to write the config topic", created, 60, interval=1.0)
        wait_for("both connectors RUNNING", lambda: running_tasks(survivor, "second", 1), 60)
        assert status(survivor, "verif") is not None


async def test_the_older_of_two_claimants_is_fenced(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    group = unique("eos-fence")
    config = WorkerConfig(
        {
            "bootstrap.servers": cluster_a.bootstrap_servers,
            "group.id": group,
            "config.storage.topic": f"{group}-configs",
            "offset.storage.topic": f"{group}-offsets",
            "status.storage.topic": f"{group}-status",
            "config.storage.replication.factor": "1",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "exactly.once.source.support": "preparing",
        }
    )
    older, newer = ConfigStore.from_worker_config(config), ConfigStore.from_worker_config(config)
    await older.start()
    await newer.start()
    try:
        with pytest.raises(ConnectError, match="without claiming write privileges"):
            await older.put_connector_config("c", {"connector.class": "X"})
        await older.claim_write_privileges()
        await older.put_connector_config("c", {"connector.class": "X", "v": "1"})
        await newer.claim_write_privileges()  # fences the older producer
        with pytest.raises(ConnectError, match="fencable send"):
            await older.put_connector_config("c", {"connector.class": "X", "v": "stale"})
        assert not older.holds_write_privileges
        await newer.put_connector_config("c", {"connector.class": "X", "v": "2"})
        await older.refresh(10)
        assert dict(older.snapshot().connector_config("c") or {}) == {"connector.class": "X", "v": "2"}
    finally:
        await older.stop()
        await newer.stop()


def test_enabled_runs_source_tasks_in_transactions(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group, topic = unique("eos-on"), unique("out")
    worker = PyconnectWorker(
        cluster_a.bootstrap_servers,
        tmp_path / "w",
        group_id=group,
        extra={"exactly.once.source.support": "enabled"},
        die_with_parent=True,
    )
    with fleet([worker]):
        code, body = worker.rest("POST", "/connectors", {"name": "verif", "config": verifiable(topic, 1)})
        assert code == 201, body
        wait_for("the task RUNNING", lambda: running_tasks(worker, "verif", 1), 60)

        def committed() -> list[int]:
            return asyncio.run(
                config_topic_offsets(cluster_a.bootstrap_servers, topic, "read_committed", max_s=3)
            )

        offsets = wait_for(
            "records committed to the output topic",
            lambda: got if len(got := committed()) >= 5 else None,
            30,
        )
        gaps = [b - a for a, b in itertools.pairwise(offsets) if b - a > 1]
        assert gaps, f"a commit marker after each poll's transaction: {offsets}"
        assert worker.rest("GET", "/")[0] == 200
