"""KIP-618 zombie fencing next to the Java 4.3.1 worker.

- The ``tasks-fencing-C`` record a Java worker with ``exactly.once.source.support=enabled`` writes is
  byte for byte the one we write, and our config reader parses it.
- The internal ``PUT /connectors/{c}/fence`` answers a Java worker and a pyconnect worker the same
  (unsigned, bad signature, unknown connector, a source connector), with exactly-once support enabled
  and disabled; so does an offset reset of the stopped connector, and both record the same task counts
  (under EOS: the reset's fencing round records 0 tasks).
- Java and pyconnect take over each other's internal topics under EOS: the taker reads the other's
  task-count record (no fencing round is needed, so none is recorded) and a ``read_committed`` reader
  sees every seqno once across both handovers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pyconnect.protocol.internal_records import TaskCountRecord, decode_config_record, encode_config_record
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.connect_worker import ConnectWorkerProcess, group_leader_url
from pyconnect.testing.java_reference import JavaConnectWorker
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import FAST_GROUP, fleet, running_tasks, status, verifiable, wait_for
from tests.integration.test_zombie_fencing import (
    assert_exactly_once,
    config_records,
    put_fence,
    seqnos_per_task,
    signed_empty_body,
    task_counts,
)

pytestmark = [pytest.mark.kafka, pytest.mark.java]

EOS = {"exactly.once.source.support": "enabled", "scheduled.rebalance.max.delay.ms": 0}


def fence_answers(worker: ConnectWorkerProcess) -> list[tuple[int, object]]:
    headers = signed_empty_body(worker)
    bad = {**headers, "X-Connect-Authorization": "AAAA"}
    return [
        worker.rest("PUT", "/connectors/verif/fence"),
        put_fence(worker, "nope", bad),
        put_fence(worker, "nope", headers),
        put_fence(worker, "verif", headers),
        put_fence(worker, "verif", headers),
    ]


@pytest.mark.parametrize("eos", ["enabled", pytest.param("disabled", marks=pytest.mark.long)])
def test_the_fence_endpoint_and_the_task_count_record_match_java(
    eos: str, cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    extra = {**FAST_GROUP, "exactly.once.source.support": eos}
    java = JavaConnectWorker(
        bootstrap, tmp_path / "java", group_id=unique("fence-java"), extra=extra, die_with_parent=True
    )
    ours = PyconnectWorker(
        bootstrap, tmp_path / "py", group_id=unique("fence-py"), extra=extra, die_with_parent=True
    )
    answers: dict[str, list[tuple[int, object]]] = {}
    records: dict[str, list[tuple[bytes | None, bytes | None]]] = {}
    with fleet([java, ours]):
        for label, worker in (("java", java), ("pyconnect", ours)):
            config = verifiable(unique(f"out-{label}"), 2)
            code, body = worker.rest("POST", "/connectors", {"name": "verif", "config": config})
            assert code == 201, body
            wait_for(f"{label}: 2 tasks RUNNING", lambda w=worker: running_tasks(w, "verif", 2), 90)
            answers[label] = fence_answers(worker)
            # KIP-875: a stopped connector's offsets reset (under EOS after a fencing round)
            assert worker.rest("PUT", "/connectors/verif/stop")[0] == 204
            wait_for(
                f"{label}: verif STOPPED",
                lambda w=worker: (s := status(w, "verif")) and s["connector"]["state"] == "STOPPED",
                60,
            )
            answers[label].append(worker.rest("DELETE", "/connectors/verif/offsets"))
            answers[label].append(worker.rest("GET", "/connectors/verif/offsets"))
            time.sleep(1)
            records[label] = [(k, v) for k, v in config_records(worker) if k == b"tasks-fencing-verif"]
    print(f"\nfence endpoint (EOS {eos}): {answers['java']}")
    assert answers["pyconnect"] == answers["java"]
    assert records["pyconnect"] == records["java"]
    if eos == "enabled":
        assert records["java"] == [
            encode_config_record(TaskCountRecord("verif", 2)),
            encode_config_record(TaskCountRecord("verif", 0)),
        ]
        assert decode_config_record(*records["java"][0]) == TaskCountRecord("verif", 2)


@pytest.mark.long
def test_java_and_pyconnect_take_over_each_others_fenced_generations(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    group, topic = unique("fence-handover"), unique("out")
    extra = {**FAST_GROUP, **EOS}

    def ours(n: int) -> PyconnectWorker:
        return PyconnectWorker(
            bootstrap, tmp_path / f"py-{n}", group_id=group, extra=extra, die_with_parent=True
        )

    java = JavaConnectWorker(bootstrap, tmp_path / "java", group_id=group, extra=extra, die_with_parent=True)
    first = ours(0)
    with fleet([first]):
        code, body = first.rest("POST", "/connectors", {"name": "verif", "config": verifiable(topic, 2, 100)})
        assert code == 201, body
        wait_for("pyconnect: 2 tasks RUNNING", lambda: running_tasks(first, "verif", 2), 60)
        time.sleep(3)
    assert task_counts(first, "verif") == [2]
    with fleet([java]):
        wait_for("java: 2 tasks RUNNING", lambda: running_tasks(java, "verif", 2), 90)
        time.sleep(3)
    assert task_counts(first, "verif") == [2], "Java read our record: no new fencing round"
    last = ours(1)
    with fleet([last]):
        wait_for("pyconnect again: 2 tasks RUNNING", lambda: running_tasks(last, "verif", 2), 60)
        time.sleep(3)
    assert task_counts(first, "verif") == [2], "we read Java's view: no new fencing round"
    assert_exactly_once(seqnos_per_task(bootstrap, topic), 2, "pyconnect -> java -> pyconnect")


@pytest.mark.long  # ~25 s each; the handover test below keeps Java and pyconnect fencing together in make test
@pytest.mark.parametrize("leader", ["pyconnect", "java"])
def test_a_mixed_fleet_fences_across_implementations(
    leader: str, cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    """One Java and one pyconnect worker in one group under EOS: the follower's tasks ask the leader of
    the other implementation for their fencing round (the signed ``PUT .../fence``); each generation
    is recorded once and every seqno arrives once."""
    bootstrap = cluster_a.bootstrap_servers
    group, topic = unique("fence-mixed"), unique("out")
    extra = {**FAST_GROUP, **EOS}
    java = JavaConnectWorker(bootstrap, tmp_path / "java", group_id=group, extra=extra, die_with_parent=True)
    ours = PyconnectWorker(bootstrap, tmp_path / "py", group_id=group, extra=extra, die_with_parent=True)
    first, second = (ours, java) if leader == "pyconnect" else (java, ours)
    with fleet([first]):
        with fleet([second]):
            config = verifiable(topic, 2, 100)
            code, body = second.rest("POST", "/connectors", {"name": "verif", "config": config})
            assert code == 201, body
            owners = wait_for("2 tasks RUNNING", lambda: running_tasks(first, "verif", 2), 90)
            for tasks in (4, 3):
                time.sleep(2)
                code, body = second.rest(
                    "PUT", "/connectors/verif/config", {**config, "tasks.max": str(tasks)}
                )
                assert code == 200, body
                owners = wait_for(
                    f"{tasks} tasks RUNNING", lambda n=tasks: running_tasks(first, "verif", n), 90
                )
            assert set(owners.values()) == {first.worker_id, second.worker_id}, owners
            assert group_leader_url(bootstrap, group) == first.rest_url, "the first worker leads"
            time.sleep(2)
            counts = task_counts(first, "verif")
    print(f"\nleader {leader}: task-count records {counts}, owners {owners}")
    assert counts == [2, 4, 3], counts
    assert_exactly_once(seqnos_per_task(bootstrap, topic), 4, f"mixed fleet, {leader} leading")
