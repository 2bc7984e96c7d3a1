"""``GET /health`` tells the truth on every worker of a real fleet (KIP-1017 and beyond).

- both workers of a fresh fleet answer 200 ``healthy`` (Java's body);
- the config topic refuses the leader's writes (its ``max.message.bytes`` shrunk below a connector's
  config): the create answers 500, the leader's ``/health`` 500 ``unhealthy`` naming the failed write,
  the follower's 503 naming the leader; once the topic takes writes again and one succeeds, both 200;
- the leader frozen (SIGSTOP, within its session timeout): the follower answers 503, its leader
  "could not be reached"; after SIGCONT both answer 200 again.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from pyconnect.herder.health import HEALTHY_MESSAGE
from pyconnect.kafka.group_member import describe_group
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.connect_worker import ConnectWorkerProcess, group_leader_url
from tests.integration.fleet import fleet, python_workers, running_tasks, verifiable, wait_for

pytestmark = pytest.mark.kafka

HEALTHY_BODY = {"status": "healthy", "message": HEALTHY_MESSAGE}


async def set_topic_config(bootstrap: str, topic: str, key: str, value: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, {key: value})])
    finally:
        await admin.close()


def group_state(bootstrap: str, group: str) -> str:
    described = asyncio.run(describe_group({"bootstrap.servers": bootstrap}, group, timeout_s=15))
    return str(described["state"])


def health(worker: ConnectWorkerProcess) -> tuple[int, Any]:
    return worker.rest("GET", "/health")


def all_healthy(workers: list[ConnectWorkerProcess]) -> bool:
    return all(health(w) == (200, HEALTHY_BODY) for w in workers)


def test_every_worker_says_when_the_fleet_cannot_take_writes(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    group, topic = unique("health"), unique("out")
    # A session timeout longer than the freeze below: the frozen leader stays the leader.
    workers = python_workers(bootstrap, tmp_path, group, 2, **{"session.timeout.ms": 30000})
    with fleet(workers):
        wait_for("both workers healthy", lambda: all_healthy(list(workers)), 60)
        leader_url = wait_for("a leader", lambda: group_leader_url(bootstrap, group), 30)
        leader = next(w for w in workers if w.rest_url == leader_url)
        follower = next(w for w in workers if w is not leader)

        config_topic = leader.config_topic
        assert config_topic is not None
        asyncio.run(set_topic_config(bootstrap, config_topic, "max.message.bytes", "2048"))
        big = verifiable(topic, 1, padding="x" * 8192)
        code, body = follower.rest("POST", "/connectors", {"name": "big", "config": big})
        assert code == 500, (code, body)

        code, body = health(leader)
        assert (code, body["status"]) == (500, "unhealthy"), body
        assert "its last write to the config topic failed at" in body["message"], body
        assert "MessageSizeTooLarge" in body["message"] or "RecordTooLarge" in body["message"], body
        code, body = health(follower)
        assert (code, body["status"]) == (503, "unhealthy"), body
        assert body["message"].startswith(
            f"This worker is healthy but the cluster cannot accept writes: its leader at {leader.rest_url}"
        ), body
        assert "its last write to the config topic failed" in body["message"], body

        asyncio.run(set_topic_config(bootstrap, config_topic, "max.message.bytes", "1048588"))
        code, body = follower.rest("POST", "/connectors", {"name": "small", "config": verifiable(topic, 1)})
        assert code == 201, (code, body)
        # The new connector's task configs start one more rebalance; a leader frozen inside it would
        # hold the follower in its join too (a 500 "ensuring membership", as in Java). Freeze it only
        # once that round is over.
        wait_for("the new connector's task running", lambda: running_tasks(follower, "small", 1), 60)
        wait_for("a stable group", lambda: group_state(bootstrap, group) == "Stable" or None, 30)
        wait_for("both workers healthy again", lambda: all_healthy(list(workers)), 30)

        assert leader.pid is not None
        os.kill(leader.pid, signal.SIGSTOP)
        try:
            code, body = health(follower)
            assert (code, body["status"]) == (503, "unhealthy"), body
            assert f"its leader at {leader.rest_url} could not be reached" in body["message"], body
        finally:
            os.kill(leader.pid, signal.SIGCONT)
        wait_for("both workers healthy after the leader woke", lambda: all_healthy(list(workers)), 60)
