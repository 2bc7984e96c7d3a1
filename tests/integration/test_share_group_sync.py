"""Share groups (KIP-932) in the continuous group offset sync, on real Kafka.

* Kafka 4.3.1 on both sides (share groups need no broker setting there: the ``share.version`` feature is
  finalized at 1 on a freshly formatted cluster). A share group on A, created by setting its start
  offsets to 0 and then read by Java's share consumer, and a consumer group beside it: the connector
  finds both, assigns them to its task, and B's share group gets A's position (its start offsets, or a
  partition's end where every record has completed delivery; translated: the same offsets, the copy
  being contiguous). While a share consumer of the group is active on B (on
  a topic of B's own), the group is never altered there: GROUP_SYNC_BLOCKED names it on /mirrors; once
  the consumer leaves (closing: a killed one stays a member for the share session timeout), B takes
  A's newer position within seconds.
  ``pyconnect failover execute`` refuses the share group while that consumer is there (exit code 3,
  naming it); once it has left, and with B's start offsets moved back to 0, the plan translates A's and
  execute sets them (then nothing more the second time).
* Kafka 3.9.1 as the target (no share groups): the consumer group is synced, the share group is not;
  one WARN names the cluster and the group, and GROUP_SYNC_BLOCKED stays on the connector's task.
  ``pyconnect failover execute`` of both moves the consumer group and leaves the share group behind with
  a note saying why (exit code 0).
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka.errors import KafkaError

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.java_process import JavaProcess
from pyconnect.testing.kafka import KafkaCluster
from tests.integration.fleet import create_topic, fleet, python_workers, running_tasks, wait_for
from tests.integration.group_sync_helpers import (
    commit_all,
    committed,
    continuous_checkpoints,
    ends,
    group_clients,
    share_position,
    share_starts,
    with_admin,
)
from tests.integration.test_failover_command import cli
from tests.integration.test_mirror_source import create_and_fill, mirror_config, produce

pytestmark = pytest.mark.kafka
PARTITIONS = 2
RECORDS = 400


@pytest.fixture
def java_clients() -> Iterator[list[JavaProcess]]:
    started: list[JavaProcess] = []
    yield started
    for process in started:
        process.stop()


def start_mirror(worker: Any, a: ClusterHandle, b: ClusterHandle, topic: str) -> None:
    config = mirror_config(a, b, topic, **{"tasks.max": "1"})
    code, body = worker.rest("POST", "/connectors", {"name": "mirror-source", "config": config})
    assert code == 201, body
    want = ends(a.bootstrap_servers, topic, PARTITIONS)
    wait_for(f"A.{topic} copied", lambda: ends(b.bootstrap_servers, f"A.{topic}", PARTITIONS) == want, 60)


def set_share_starts(bootstrap: str, group: str, topic: str, offset: int) -> None:
    """Create share group ``group`` (or move it) with start ``offset`` on every partition of ``topic``;
    retried while a fresh cluster's coordinator is not there yet."""
    offsets = {(topic, p): offset for p in range(PARTITIONS)}

    def done() -> bool:
        try:
            answer = asyncio.run(with_admin(bootstrap, "alter_share_offsets", group, offsets))
        except KafkaError as exc:
            if exc.retriable:
                return False
            raise
        assert not answer.error_code and not any(p.error_code for p in answer.partitions), answer  # type: ignore[attr-defined]
        return True

    wait_for(f"share group {group} created", done, 30)


def conditions(worker: Any) -> list[dict[str, Any]]:
    code, body = worker.rest("GET", "/mirrors")
    assert code == 200, body
    return [c for f in body["flows"] for c in f["conditions"] if c["code"] == "GROUP_SYNC_BLOCKED"]


@pytest.mark.java
@pytest.mark.long  # ~55 s of Java share consumers; the test below syncs a target before 4.2 in make test
def test_share_group_start_offsets_follow_and_an_active_share_group_is_left_alone(
    cluster_a: ClusterHandle,
    cluster_b: ClusterHandle,
    unique: Callable[[str], str],
    tmp_path: Path,
    java_clients: list[JavaProcess],
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic, remote, other = unique("sgs"), f"A.{unique('sgs')}", unique("b-only")
    remote = f"A.{topic}"
    share, group = unique("share"), unique("cons")
    asyncio.run(create_and_fill(a, topic, PARTITIONS, RECORDS))
    asyncio.run(create_topic(b, other))
    asyncio.run(commit_all(a, [group], topic, PARTITIONS, 50))
    set_share_starts(a, share, topic, 0)  # the share group exists on A, reading from the beginning
    reader = group_clients("share", a, topic, share, "120", "0", log_dir=tmp_path, name="share-a1")
    java_clients.append(reader)
    reader.start()
    with fleet(python_workers(b, tmp_path, unique("sgs-worker"), 1)) as (worker,):
        start_mirror(worker, cluster_a, cluster_b, topic)
        wait_for("the share consumer on A done", lambda: not reader.running, 90)
        assert "acknowledged" in reader.log_file.read_text(), reader.log_tail()
        on_a = share_position(a, share)
        assert on_a and any(o > 0 for o in on_a.values()), (on_a, share_starts(a, [share]))
        config = continuous_checkpoints(cluster_a, cluster_b, f"{share},{group}", topic)
        code, body = worker.rest("POST", "/connectors", {"name": "mirror-checkpoint", "config": config})
        assert code == 201, body
        wait_for(
            "checkpoint task RUNNING", functools.partial(running_tasks, worker, "mirror-checkpoint", 1), 60
        )
        code, tasks = worker.rest("GET", "/connectors/mirror-checkpoint/tasks")
        assert code == 200 and tasks[0]["config"]["pyconnect.task.assigned.share.groups"] == share, tasks

        want = {(remote, p): o for (_, p), o in on_a.items()}
        created = time.monotonic()
        wait_for("B's share group at A's start offsets", lambda: share_starts(b, [share])[share] == want, 30)
        wait_for(
            "the consumer group on B",
            lambda: committed(b, [group])[group] == {(remote, p): 50 for p in range(PARTITIONS)},
            30,
        )
        print(
            f"\nshare group synced {time.monotonic() - created:.1f} s after the connector was created: {want}"
        )

        # A share consumer of the group joins on B (on a topic of B's own) and stays; the group reads on.
        member = group_clients("share", b, other, share, "0", "30", log_dir=tmp_path, name="share-b")
        java_clients.append(member)
        member.start()
        wait_for("the member on B", lambda: "acknowledged" in member.log_file.read_text(errors="replace"), 60)
        # new records on A, so the second reader moves the group's start offsets even when the first one
        # acquired every record there was
        asyncio.run(produce(a, topic, PARTITIONS, RECORDS, first=RECORDS))
        more = group_clients("share", a, topic, share, "120", "0", log_dir=tmp_path, name="share-a2")
        java_clients.append(more)
        more.start()
        wait_for("the second share consumer on A done", lambda: not more.running, 90)
        newer = share_position(a, share)
        assert newer != on_a, (newer, on_a)
        blocked = wait_for(
            "GROUP_SYNC_BLOCKED for the share group",
            lambda: [c for c in conditions(worker) if c["subject"] == share],
            30,
        )
        assert "share group" in blocked[0]["message"] and "NON_EMPTY_GROUP" in blocked[0]["message"], blocked
        assert member.running
        assert {tp: o for tp, o in share_starts(b, [share])[share].items() if tp[0] == remote} == want
        # the failover command refuses the share group while it has a member on B, and names it
        url = ["--url", worker.rest_url, "--connector", "mirror-checkpoint"]
        refused = cli("execute", *url, "--group", share)
        assert refused.returncode == 3, (refused.stdout, refused.stderr)
        assert f"group {share} is Stable (share protocol, 1 member) on cluster B" in refused.stderr, (
            refused.stderr
        )
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr

        wait_for("the member on B leaving the group", lambda: not member.running, 60)  # closes by itself
        left = time.monotonic()

        def on_b_and_a() -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], int]]:
            """B's start offsets of the flow's remote topic, and A's now (its coordinator may still move
            them after the reader exits, as it persists the last acknowledgements)."""
            on_b = {tp: o for tp, o in share_starts(b, [share])[share].items() if tp[0] == remote}
            return on_b, {(remote, p): o for (_, p), o in share_position(a, share).items()}

        wait_for(
            "B's share group at A's newer start offsets",
            lambda: (lambda pair: pair[0] == pair[1] and pair[1] != want)(on_b_and_a()),
            60,
            interval=1.0,
            describe=lambda: f"B, A: {on_b_and_a()}; conditions: {conditions(worker)}",
        )
        wait_for(
            "the condition cleared", lambda: not [c for c in conditions(worker) if c["subject"] == share], 15
        )
        print(f"synced {time.monotonic() - left:.1f} s after the share consumer on B left")

        # failover with A up: B's start offsets moved back to 0 are planned and set at A's translation
        code, _ = worker.rest("PUT", "/connectors/mirror-checkpoint/stop")
        assert code == 204
        wait_for(
            "the checkpoint connector STOPPED",
            lambda: (
                worker.rest("GET", "/connectors/mirror-checkpoint/status")[1]["connector"]["state"]
                == "STOPPED"
            ),
            30,
        )
        at_a = {(remote, p): o for (_, p), o in share_position(a, share).items()}
        set_share_starts(b, share, remote, 0)
        planned = cli("plan", *url, "--group", share, "--json")
        assert planned.returncode == 0, planned.stderr
        report = json.loads(planned.stdout)["groups"][0]
        assert report["target_protocol"] == "share" and report["status"] == "planned", report
        rows = {(p["target_topic"], p["partition"]): p for p in report["partitions"]}
        assert {tp: p["target_offset"] for tp, p in rows.items()} == at_a, report
        assert {p["action"] for p in rows.values()} <= {"commit", "keep"}, report
        # proven 0 where the syncs place the start offset; unknown (null) at a partition's end, never more
        assert report["expected_reread"] in (0, None), report
        done = cli("execute", *url, "--group", share, "--json")
        assert done.returncode == 0, done.stderr
        moved = json.loads(done.stdout)["groups"][0]
        assert moved["status"] == "verified" and moved["committed"] == sum(o > 0 for o in at_a.values()), (
            moved
        )
        assert {tp: o for tp, o in share_position(b, share).items() if tp[0] == remote} == at_a
        again = json.loads(cli("execute", *url, "--group", share, "--json").stdout)["groups"][0]
        assert again["committed"] == 0 and again["status"] == "verified", again


@pytest.fixture
def old_target(kafka_release: Callable[[str], KafkaCluster]) -> KafkaCluster:
    return kafka_release("3.9.1")


def test_a_target_before_kafka_4_2_syncs_consumer_groups_and_says_why_not_share_groups(
    cluster_a: ClusterHandle,
    old_target: KafkaCluster,
    unique: Callable[[str], str],
    tmp_path: Path,
) -> None:
    a, old = cluster_a.bootstrap_servers, old_target.bootstrap_servers
    target = ClusterHandle("B", old)
    topic = unique("sgo")
    remote = f"A.{topic}"
    share, group = unique("share"), unique("cons")
    asyncio.run(create_and_fill(a, topic, PARTITIONS, RECORDS))
    asyncio.run(commit_all(a, [group], topic, PARTITIONS, 30))
    set_share_starts(a, share, topic, 20)
    with fleet(python_workers(old, tmp_path, unique("sgo-worker"), 1)) as (worker,):  # Connect on the target
        start_mirror(worker, cluster_a, target, topic)
        config = continuous_checkpoints(
            cluster_a, target, f"{share},{group}", topic, **{"emit.checkpoints.interval.seconds": "1"}
        )
        code, body = worker.rest("POST", "/connectors", {"name": "mirror-checkpoint", "config": config})
        assert code == 201, body
        wait_for(
            "checkpoint task RUNNING", functools.partial(running_tasks, worker, "mirror-checkpoint", 1), 60
        )
        wait_for(
            "the consumer group on the 3.9.1 target",
            lambda: committed(old, [group])[group] == {(remote, p): 30 for p in range(PARTITIONS)},
            30,
        )

        def share_blocked() -> list[str]:
            code, status = worker.rest("GET", "/connectors/mirror-checkpoint/status")
            assert code == 200, status
            trace = status["tasks"][0].get("trace") or ""
            return [line for line in trace.splitlines() if share in line]

        lines = wait_for("GROUP_SYNC_BLOCKED for the share group", share_blocked, 30)
        assert "Kafka 4.2 or later" in lines[0] and "has no share groups" in lines[0], lines
        time.sleep(2)  # many more cycles
        log = worker.log_file.read_text(errors="replace")
        warned = [line for line in log.splitlines() if "not syncing the offsets of share groups" in line]
        assert len(warned) == 1 and "WARN" in warned[0] and share in warned[0], warned
        print(f"\n{warned[0]}")

        # the failover command moves the consumer group and leaves the share group behind with a note
        url = ["--url", worker.rest_url, "--connector", "mirror-checkpoint"]
        done = cli("execute", *url, "--group", group, "--group", share, "--json")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert [(g["group"], g["status"]) for g in report["groups"]] == [(group, "verified")], report
        note = [n for n in report["notes"] if share in n]
        assert note and "share groups move between Kafka 4.2 or later clusters" in note[0], report["notes"]
        print(note[0])
