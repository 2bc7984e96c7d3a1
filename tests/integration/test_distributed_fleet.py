"""A fleet of ``pyconnect distributed`` processes on real Kafka behaves as one Connect cluster.

Spread of tasks, failover after kill -9 (immediate and delayed), a worker that comes back, and a
full fleet restart that resumes from committed offsets.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.connect_worker import group_leader_url
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import (
    fleet,
    gaps_and_duplicates,
    python_workers,
    read_seqnos_sync,
    running_tasks,
    status,
    verifiable,
    wait_for,
)

pytestmark = pytest.mark.kafka

SESSION_TIMEOUT_S = 6.0


def test_three_workers_spread_six_tasks_and_survive_kill_9(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group, topic = unique("fleet"), unique("out")
    workers = python_workers(
        cluster_a.bootstrap_servers, tmp_path, group, 3, **{"scheduled.rebalance.max.delay.ms": 0}
    )
    with fleet(workers):
        ids = {w.worker_id for w in workers}
        code, body = workers[2].rest("POST", "/connectors", {"name": "verif", "config": verifiable(topic, 6)})
        assert code == 201, body

        owners = wait_for("6 RUNNING tasks", lambda: running_tasks(workers[0], "verif", 6), 60)
        assert sorted(Counter(owners.values()).values()) == [2, 2, 2], owners
        assert set(owners.values()) == ids
        assert status(workers[1], "verif")["connector"]["worker_id"] in ids  # type: ignore[index]

        leader = group_leader_url(cluster_a.bootstrap_servers, group)
        victim = next(w for w in workers if w.rest_url != leader)
        observer = next(w for w in workers if w is not victim)
        victim.kill()
        killed_at = time.monotonic()
        survivors = ids - {victim.worker_id}
        moved = wait_for(
            "the victim's tasks RUNNING elsewhere",
            lambda: (o := running_tasks(observer, "verif", 6)) and set(o.values()) <= survivors and o,
            SESSION_TIMEOUT_S + 30,
        )
        failover_s = time.monotonic() - killed_at
        print(f"\nkill -9 to all tasks RUNNING elsewhere: {failover_s:.1f} s")
        assert sorted(Counter(moved.values()).values()) == [3, 3]
        assert failover_s < SESSION_TIMEOUT_S + 15

        restarted_at = time.monotonic()
        victim.start()
        victim.wait_ready()
        back = wait_for(
            "the returning worker to get work back",
            lambda: (
                (o := running_tasks(observer, "verif", 6))
                and sorted(Counter(o.values()).values()) == [2, 2, 2]
                and o
            ),
            60,
        )
        print(f"returning worker start to balanced 2/2/2: {time.monotonic() - restarted_at:.1f} s")
        assert set(back.values()) == ids

    seqnos = read_seqnos_sync(cluster_a.bootstrap_servers, topic)
    assert sorted(seqnos) == list(range(6))
    for task, values in seqnos.items():
        gaps, _dups = gaps_and_duplicates(values)
        assert gaps == 0, f"task {task} lost records"


def test_a_scheduled_delay_holds_lost_tasks_for_the_returning_worker(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group, topic = unique("fleet"), unique("out")
    delay_ms = 20000
    workers = python_workers(
        cluster_a.bootstrap_servers, tmp_path, group, 3, **{"scheduled.rebalance.max.delay.ms": delay_ms}
    )
    with fleet(workers):
        assert (
            workers[0].rest("POST", "/connectors", {"name": "held", "config": verifiable(topic, 6)})[0] == 201
        )
        owners = wait_for("6 RUNNING tasks", lambda: running_tasks(workers[0], "held", 6), 60)
        leader = group_leader_url(cluster_a.bootstrap_servers, group)
        assert leader in {w.rest_url for w in workers}
        victim = next(w for w in workers if w.rest_url != leader)
        observer = next(w for w in workers if w is not victim)
        lost = {t for t, w in owners.items() if w == victim.worker_id}
        assert len(lost) == 2

        victim.kill()
        killed_at = time.monotonic()
        time.sleep(SESSION_TIMEOUT_S + 5)
        observed = status(observer, "held")
        assert observed is not None
        for task in observed["tasks"]:
            if task["id"] in lost:
                assert task["worker_id"] == victim.worker_id, (
                    "lost tasks wait for the delay, not for another worker"
                )

        victim.start()
        victim.wait_ready()
        back = wait_for(
            "the lost tasks back on the returning worker",
            lambda: (
                (o := running_tasks(observer, "held", 6))
                and {t for t, w in o.items() if w == victim.worker_id} == lost
                and o
            ),
            delay_ms / 1000 + 30,
        )
        assert sorted(Counter(back.values()).values()) == [2, 2, 2]
        assert time.monotonic() - killed_at >= SESSION_TIMEOUT_S, (
            "nothing moved before the member was evicted"
        )


def test_full_fleet_restart_resumes_from_committed_offsets(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group, topic = unique("fleet"), unique("out")
    workers = python_workers(cluster_a.bootstrap_servers, tmp_path, group, 2)
    with fleet(workers):
        assert (
            workers[1].rest("POST", "/connectors", {"name": "resume", "config": verifiable(topic, 2, 100)})[0]
            == 201
        )
        wait_for("2 RUNNING tasks", lambda: running_tasks(workers[0], "resume", 2), 60)
        time.sleep(3)
    before = read_seqnos_sync(cluster_a.bootstrap_servers, topic)
    assert all(len(v) > 50 for v in before.values()), {k: len(v) for k, v in before.items()}

    with fleet(workers):
        wait_for("2 RUNNING tasks after the restart", lambda: running_tasks(workers[0], "resume", 2), 60)
        time.sleep(2)
    after = read_seqnos_sync(cluster_a.bootstrap_servers, topic)
    for task, values in after.items():
        gaps, duplicates = gaps_and_duplicates(values)
        assert gaps == 0, f"task {task} lost records across the restart"
        assert duplicates == 0, f"task {task} re-sent {duplicates} records after a graceful stop"
        assert len(values) > len(before[task]), "the task went on after the restart"


def test_operations_through_any_worker(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group, topic = unique("fleet"), unique("out")
    workers = python_workers(cluster_a.bootstrap_servers, tmp_path, group, 2)
    a, b = workers
    with fleet(workers):
        assert a.rest("POST", "/connectors", {"name": "ops", "config": verifiable(topic, 2)})[0] == 201
        wait_for("2 RUNNING tasks", lambda: running_tasks(b, "ops", 2), 60)

        def connector_state(worker: PyconnectWorker = b) -> str | None:
            body = status(worker, "ops")
            return body["connector"]["state"] if body else None

        assert b.rest("PUT", "/connectors/ops/pause")[0] == 202
        wait_for(
            "PAUSED",
            lambda: (
                connector_state() == "PAUSED"
                and {t["state"] for t in status(b, "ops")["tasks"]} == {"PAUSED"}
            ),
            30,
        )  # type: ignore[index]
        assert a.rest("PUT", "/connectors/ops/resume")[0] == 202
        wait_for("RUNNING again", lambda: running_tasks(a, "ops", 2), 30)

        code, plan = b.rest("POST", "/connectors/ops/restart?includeTasks=true")
        assert code == 202 and plan["connector"]["state"] == "RESTARTING"
        assert {t["state"] for t in plan["tasks"]} == {"RESTARTING"}
        wait_for("RUNNING after the restart", lambda: running_tasks(a, "ops", 2), 30)
        assert a.rest("POST", "/connectors/ops/restart")[0] == 204
        for worker in workers:
            assert worker.rest("POST", "/connectors/ops/tasks/1/restart")[0] == 204, (
                "any worker forwards to the owner"
            )
        assert a.rest("POST", "/connectors/ops/tasks/9/restart")[0] == 404

        config = verifiable(topic, 3)
        assert b.rest("PUT", "/connectors/ops/config", config)[0] == 200
        owners = wait_for("3 RUNNING tasks after the reconfiguration", lambda: running_tasks(a, "ops", 3), 60)
        assert set(owners.values()) == {a.worker_id, b.worker_id}
        code, tasks = b.rest("GET", "/connectors/ops/tasks")
        assert code == 200 and [t["id"]["task"] for t in tasks] == [0, 1, 2]
        assert tasks[0]["config"]["task.class"] == "org.apache.kafka.connect.tools.VerifiableSourceTask"

        code, body = a.rest("POST", "/connectors/ops/tasks?forward=false", [{"k": "v"}])
        assert code in (400, 409), body
        if code == 400:
            assert body["message"] == "Internal request missing required signature"

        code, definitions = b.rest("GET", "/connector-plugins/MirrorSourceConnector/config")
        assert code == 200, "the Red Hat guide's call lists the mirror connector's config definitions"
        names = {d["name"] for d in definitions}
        assert {
            "topics",
            "replication.policy.class",
            "offset-syncs.topic.location",
            "source.cluster.alias",
        } <= names

        assert b.rest("DELETE", "/connectors/ops")[0] == 204
        wait_for(
            "the connector gone on both workers",
            lambda: all(w.rest("GET", "/connectors")[1] == [] for w in workers),
            30,
        )
        assert a.rest("GET", "/connectors/ops")[0] == 404
        assert b.rest("DELETE", "/connectors/ops")[0] == 404
