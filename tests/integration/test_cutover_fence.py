"""``pyconnect cutover --fence-principal`` on real Kafka with an authorizer: the producers of A fenced by
DENY WRITE ACLs, the applications moved to B, and a fence that cannot be verified rolled back.

Cluster A is the session's SASL_PLAINTEXT cluster (an authorizer; users ``admin``, ``alice``, ``bob``),
B the session's plain cluster. Producer ``alice`` writes sequence-numbered records to a topic of A
(record ``n`` of a partition holds ``n``), retrying each record until it lands, and once told, on B; two
groups committed part of the topic on A. A forward fleet on B mirrors it as ``admin`` (offset syncs on
B, IdentityReplicationPolicy) and checkpoints the groups.

* **Rollback**: while ``bob`` (not fenced) keeps writing to A, ``cutover execute --fence-principal
  User:alice`` cannot see A still: exit 11 after ``--fence-timeout``, nothing left fenced (no DENY ACL on
  A, alice writes again), the state file back to its first step.
* **Cutover**: ``cutover execute --fence-principal User:alice``: alice's writes fail from the fence on,
  the mirror drains, the groups move, the forward connector stops; alice then writes to B from the
  record that failed. Checked: B holds alice's records 0..n of every partition once each; each group's
  offsets on B are its offsets on A; A is still fenced. The write pause (alice's last record on A to her
  first on B) and the command's ``fenced_to_promoted_s`` are printed.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka.errors import KafkaError

from pyconnect.kafka.acls import AclPermissionType, PatternType, ResourceType
from pyconnect.kafka.clients import create_producer
from pyconnect.kafka.mirror_admin import MirrorAdmin
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.kafka import KafkaCluster
from pyconnect.testing.kafka_security import grant
from tests.integration.failover_drill import read_all
from tests.integration.fleet import fleet, python_workers, wait_for
from tests.integration.test_failback import cli, commit, committed, connectors, one_line_error, wait_connector

pytestmark = pytest.mark.kafka

PARTITIONS = 2
BOB = 10**6
SECURITY_KEYS = ("security.protocol", "sasl.mechanism", "sasl.jaas.config")


@pytest.fixture
def sasl(secured_cluster: Callable[[str], KafkaCluster]) -> KafkaCluster:
    return secured_cluster("sasl_plaintext")


class Writer:
    """One producer thread: record ``n`` of each partition in turn, each retried until it lands, on A
    (as ``config``) until :meth:`move_to` gives it B's config; bounded by ``MAX_S``."""

    MAX_S = 300.0

    def __init__(self, config: dict[str, str], topic: str) -> None:
        self.config, self.topic = config, topic
        self.next = [0] * PARTITIONS
        self.failures = 0
        self.last_error = ""
        self.last_ok: float | None = None
        self.last_ok_on_a: float | None = None
        self.first_moved_ok: float | None = None
        self.last_on_a = [0] * PARTITIONS
        self._moved: dict[str, str] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    def start(self) -> None:
        self._thread.start()

    def move_to(self, config: dict[str, str]) -> None:
        self._moved = config

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    async def _run(self) -> None:
        started, on = time.monotonic(), None
        producer = None
        try:
            while not self._stop.is_set() and time.monotonic() - started < self.MAX_S:
                wanted = self._moved or self.config
                if wanted is not on:
                    if producer is not None:
                        await producer.stop()
                    if wanted is self._moved and self.last_on_a == [0] * PARTITIONS:
                        self.last_on_a = list(self.next)
                    producer = create_producer(
                        wanted, acks="all", request_timeout_ms=3000, enable_idempotence=False
                    )
                    await producer.start()
                    on = wanted
                p = sum(self.next) % PARTITIONS
                try:
                    await (await producer.send(self.topic, b"%d" % self.next[p], partition=p))
                except KafkaError as exc:
                    self.failures += 1
                    self.last_error = repr(exc)
                    await producer.stop()  # as an application would: a new producer, the same record
                    producer, on = None, None
                    await asyncio.sleep(0.1)
                    continue
                self.next[p] += 1
                self.last_ok = time.monotonic()
                if on is not self._moved:
                    self.last_ok_on_a = self.last_ok
                elif self.first_moved_ok is None:
                    self.first_moved_ok = self.last_ok
                await asyncio.sleep(0.002)
        finally:
            if producer is not None:
                await producer.stop()


async def deny_acls(cluster: KafkaCluster, topic: str) -> list[str]:
    admin = MirrorAdmin(cluster.client_properties("admin"))
    await admin.start()
    try:
        found = await admin.describe_acls(ResourceType.TOPIC, topic, PatternType.LITERAL)
    finally:
        await admin.close()
    return [str(b.principal) for b in found if b.permission_type == AclPermissionType.DENY]


def test_fenced_producers_move_to_b_and_an_unverified_fence_is_rolled_back(
    sasl: KafkaCluster, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    b = cluster_b.bootstrap_servers
    admin = sasl.client_properties("admin")
    topic = unique("orders")
    prefix = unique("app")
    groups = [f"{prefix}-{i}" for i in range(2)]
    asyncio.run(create_topic_as(admin, topic))
    for user in ("alice", "bob"):
        asyncio.run(grant(sasl, f"User:{user}", "topic", topic, ["write", "describe"]))
    for group, upto in zip(groups, (20, 40), strict=True):
        asyncio.run(commit(admin, group, {(topic, p): upto for p in range(PARTITIONS)}))
    alice = Writer(sasl.client_properties("alice"), topic)
    forward = python_workers(b, tmp_path / "forward", unique("forward"), 1)[0]
    with fleet([forward]):
        config = connectors(sasl.bootstrap_servers, b, topic, f"{prefix}-.*")
        for name, body in config.items():
            body.update({f"source.cluster.{k}": admin[k] for k in SECURITY_KEYS})
            code, answer = forward.rest("POST", "/connectors", {"name": name, "config": body})
            assert code == 201, answer
        wait_connector(forward, "mirror-source", "RUNNING")
        url = ["--url", forward.rest_url, "--connector", "mirror-checkpoint"]
        group_args = [x for g in groups for x in ("--group", g)]
        alice.start()
        try:
            wait_for(
                "the groups checkpointed on B",
                lambda: cli("failover", "plan", *url, *group_args).returncode == 0,
                120,
                interval=1.0,
            )
            check_rollback(sasl, url, group_args, topic, alice, tmp_path)
            state = tmp_path / "cutover.json"
            done = cli(
                "cutover",
                "execute",
                *url,
                *group_args,
                "--state",
                str(state),
                "--fence-principal",
                "User:alice",
                "--quiet",
                "2",
                "--no-audit",
                "--json",
            )
            alice.move_to({"bootstrap.servers": b})
            assert done.returncode == 0, done.stderr
            report = json.loads(done.stdout)
            wait_for("alice writing on B", lambda: alice.first_moved_ok is not None, 30)
            time.sleep(1)
        finally:
            alice.stop()
    assert (
        report["steps_left"] == ["audited"] and alice.last_ok is not None and alice.first_moved_ok is not None
    )
    records = asyncio.run(read_all({"bootstrap.servers": b}, topic, PARTITIONS))
    for p, rows in records.items():
        assert [s for _, s in rows if s < BOB] == list(range(alice.next[p])), p
    for group, upto in zip(groups, (20, 40), strict=True):
        assert asyncio.run(committed(b, group)) == {(topic, p): upto for p in range(PARTITIONS)}, group
    assert asyncio.run(deny_acls(sasl, topic)) == ["User:alice"]
    assert alice.last_ok_on_a is not None
    pause = alice.first_moved_ok - alice.last_ok_on_a
    print(
        f"\nfenced cutover: write pause {pause:.1f} s (fenced to promoted {report['fenced_to_promoted_s']} s), "
        f"alice's writes failed "
        f"{alice.failures} times, wrote {sum(alice.last_on_a)} records on A then {sum(alice.next) - sum(alice.last_on_a)} on B"
    )
    assert pause > 0


def check_rollback(
    sasl: KafkaCluster, url: list[str], group_args: list[str], topic: str, alice: Writer, tmp_path: Path
) -> None:
    bob = Writer(sasl.client_properties("bob"), topic)
    bob.next = [BOB] * PARTITIONS  # bob's records (they reach B too) are told apart by their numbers
    bob.start()
    try:
        state = tmp_path / "rollback.json"
        refused = cli(
            "cutover",
            "execute",
            *url,
            *group_args,
            "--state",
            str(state),
            "--fence-principal",
            "User:alice",
            "--quiet",
            "2",
            "--fence-timeout",
            "6",
        )
        one_line_error(refused, 11, "kept taking writes")
        assert json.loads(state.read_text())["done"] == ["lag-checked"]
        assert asyncio.run(deny_acls(sasl, topic)) == []
        before = sum(alice.next)
        wait_for(
            "alice writing again",
            lambda: sum(alice.next) > before + 10,
            30,
            describe=lambda: alice.last_error,
        )
    finally:
        bob.stop()


async def create_topic_as(config: dict[str, Any], topic: str) -> None:
    from aiokafka.admin import NewTopic

    from pyconnect.kafka.clients import create_admin

    admin = create_admin(config)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
    finally:
        await admin.close()
