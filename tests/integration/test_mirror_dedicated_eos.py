"""Dedicated MirrorMaker with exactly-once source support on the target (``B.exactly.once.source.support
= enabled``) on two nodes sharing one file with the internal REST server (KIP-710).

The follower's MirrorSourceConnector tasks start only after the leader fenced the previous task
generation: asked through the internal ``PUT /A/B/connectors/MirrorSourceConnector/fence``. A topic
created while both run makes a new generation (a fencing round of the 4 older producers); every task
ends RUNNING on both nodes and a ``read_committed`` reader of B sees each source record exactly once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pyconnect.protocol.internal_records import State
from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import read_topic, wait_for
from tests.integration.test_mirror_dedicated import (
    KEEP,
    alone,
    group_assignment,
    mirror_maker,
    running,
    shared_flow_file,
    statuses,
)
from tests.integration.test_mirror_source import create_and_fill
from tests.integration.test_zombie_fencing import task_counts_in

pytestmark = pytest.mark.kafka


def committed_values(bootstrap: str, topic: str) -> dict[int, list[bytes | None]]:
    by_partition: dict[int, list[bytes | None]] = {}
    for partition, _, _, value in asyncio.run(read_topic(bootstrap, topic, max_s=20)):
        by_partition.setdefault(partition, []).append(value)
    return by_partition


def source_tasks_running(bootstrap: str, nodes: int) -> bool:
    """4 MirrorSourceConnector tasks RUNNING, spread over ``nodes`` workers."""
    workers = [
        s.worker_id
        for name, s in statuses(bootstrap, "A").items()
        if name.startswith("status-task-MirrorSourceConnector-") and s.state == State.RUNNING
    ]
    return len(workers) == 4 and len(set(workers)) == nodes


def test_two_dedicated_nodes_fence_zombies_through_the_internal_rest_server(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    prefix = unique("eos-nodes")
    topic, late = f"{prefix}-t", f"{prefix}-late"
    asyncio.run(create_and_fill(a, topic, 4, 400, KEEP))
    path = shared_flow_file(tmp_path / "mm2.properties", a, b, prefix)
    path.write_text(path.read_text() + "B.exactly.once.source.support = enabled\n")
    first, second = (mirror_maker(path, tmp_path / f"node-{i}") for i in range(2))
    with running(first):
        wait_for("the first node leading alone", lambda: alone(b, first.internal_rest_url), 60)
        with running(second):

            def spread() -> bool:
                leader, held = group_assignment(b, "A-mm2")
                follower = str(second.internal_rest_url)
                return leader == first.internal_rest_url and any(
                    t.startswith("MirrorSourceConnector-") for t in held.get(follower, ([], []))[1]
                )

            wait_for("source tasks on the follower", spread, 90)
            wait_for("4 source tasks RUNNING on both nodes", lambda: source_tasks_running(b, 2), 60)
            asyncio.run(create_and_fill(a, late, 2, 40, KEEP))  # a new task generation
            wait_for(
                "the new topic on B",
                lambda: sum(map(len, committed_values(b, f"A.{late}").values())) == 40,
                90,
                1.0,
            )
            wait_for("4 source tasks RUNNING again", lambda: source_tasks_running(b, 2), 60)
            time.sleep(2)
        logs = first.log_since_start() + second.log_since_start()
    counts = task_counts_in(b, "mm2-configs.A.internal", "MirrorSourceConnector")
    print(f"\ntask-count records of MirrorSourceConnector: {counts}")
    assert len(counts) >= 2 and counts[-1] == 4, counts
    assert "Fencing out 4 task producers for source connector MirrorSourceConnector" in logs
    assert "Failed to perform zombie fencing" not in logs, "no fencing failed on either node"
    for name, rows in ((topic, 400), (late, 40)):
        source = committed_values(a, name)
        target = committed_values(b, f"A.{name}")
        assert sum(map(len, target.values())) == rows, f"A.{name}: each record exactly once"
        assert target == source, f"A.{name}: the same values in the same order per partition"
