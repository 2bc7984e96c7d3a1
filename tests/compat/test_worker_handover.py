"""Java and pyconnect workers take over each other's internal topics.

One side creates connectors (running, created PAUSED, stopped), runs them and stops; the other side
starts on the same group and topics and must show the same connectors, configs and target states,
and resume VerifiableSource from the committed offsets without losing or repeating records.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.java_reference import JavaConnectWorker
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import (
    FAST_GROUP,
    Worker,
    fleet,
    gaps_and_duplicates,
    read_seqnos_sync,
    running_tasks,
    status,
    verifiable,
    wait_for,
)

pytestmark = [pytest.mark.kafka, pytest.mark.java]


def create_three(worker: Worker, topic: str) -> dict[str, dict[str, str]]:
    """A running connector, one created PAUSED and one stopped; returns their configs as stored."""
    configs = {}
    for name, initial in (("running", None), ("paused", "PAUSED"), ("stopped", None)):
        body: dict[str, object] = {"name": name, "config": verifiable(f"{topic}-{name}", 2, 50)}
        if initial:
            body["initial_state"] = initial
        code, info = worker.rest("POST", "/connectors", body)
        assert code == 201, info
        configs[name] = info["config"]
    wait_for("the running connector's tasks", lambda: running_tasks(worker, "running", 2), 90)
    code, _ = worker.rest("PUT", "/connectors/stopped/stop")
    assert code == 204
    return configs


def assert_same_cluster_view(worker: Worker, configs: dict[str, dict[str, str]]) -> None:
    code, names = worker.rest("GET", "/connectors")
    assert code == 200 and sorted(names) == ["paused", "running", "stopped"]
    for name, config in configs.items():
        assert worker.rest("GET", f"/connectors/{name}/config") == (200, config)
    wait_for("the running connector's tasks", lambda: running_tasks(worker, "running", 2), 90)
    wait_for(
        "paused to be PAUSED",
        lambda: (s := status(worker, "paused")) and s["connector"]["state"] == "PAUSED",
        60,
    )
    wait_for(
        "stopped to be STOPPED",
        lambda: (s := status(worker, "stopped")) and s["connector"]["state"] == "STOPPED",
        60,
    )
    code, tasks = worker.rest("GET", "/connectors/stopped/tasks")
    assert code == 200 and tasks == [], "a stopped connector has no task configs"


def handover(first: Sequence[Worker], second: Sequence[Worker], bootstrap: str, topic: str) -> None:
    with fleet(first):
        configs = create_three(first[0], topic)
        time.sleep(3)
    before = read_seqnos_sync(bootstrap, f"{topic}-running")
    with fleet(second):
        assert_same_cluster_view(second[0], configs)
        time.sleep(3)
    after = read_seqnos_sync(bootstrap, f"{topic}-running")
    assert sorted(after) == [0, 1]
    for task, values in after.items():
        gaps, duplicates = gaps_and_duplicates(values)
        assert gaps == 0 and duplicates == 0, (
            f"task {task}: {gaps} lost, {duplicates} repeated across the handover"
        )
        assert len(values) > len(before[task]), "the other runtime went on from the committed offset"


@pytest.mark.parametrize(
    "first",
    [pytest.param("pyconnect", marks=pytest.mark.long), "java"],
    ids=["java-takes-over-pyconnect", "pyconnect-takes-over-java"],
)
def test_worker_handover(
    first: str, cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group, topic = unique("handover"), unique("out")
    ours: list[Worker] = [
        PyconnectWorker(
            cluster_a.bootstrap_servers,
            tmp_path / f"py-{i}",
            group_id=group,
            extra=FAST_GROUP,
            die_with_parent=True,
        )
        for i in range(2)
    ]
    java: list[Worker] = [
        JavaConnectWorker(
            cluster_a.bootstrap_servers,
            tmp_path / "java",
            group_id=group,
            extra=FAST_GROUP,
            die_with_parent=True,
        )
    ]
    if first == "pyconnect":
        handover(ours, java, cluster_a.bootstrap_servers, topic)
    else:
        handover(java, ours, cluster_a.bootstrap_servers, topic)
