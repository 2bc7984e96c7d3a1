"""``pyconnect cutover`` on real Kafka: a planned move A -> B under load, killed with SIGKILL after every
step it reaches and resumed, moving three groups that re-read and skip nothing.

Clusters A and B are the session's. A topic of A takes sequence-numbered records (record ``n`` of a
partition holds ``n``) at 1,000 records/s while three classic groups read it on A, committing every
250 ms; a forward fleet on B mirrors it (IdentityReplicationPolicy, offset syncs on B) and checkpoints the
groups. Bad input first: no group (exit 2), ``resume`` without a state file (exit 2), a lag threshold the
flow is over (exit 3, nothing recorded). Then the operator stops the consumers and the producers and runs
``cutover execute``: the test kills it (``kill -9``) as soon as its state file records a new step and
runs ``cutover resume`` until it finishes by itself (:func:`pyconnect.testing.cutover_drill.cut_over`).
Checked: every step recorded once, the forward
connector STOPPED, B holds every record A took (no gap, no duplicate) and each group resumes on B
re-reading nothing and skipping nothing (by sequence numbers); a ``resume`` of the finished cutover
changes nothing. It runs without the closing Spark audit (``--no-audit``: the step stays left);
``test_cutover_repeated.py`` (``make chaos``) audits every cutover it runs. The write pause (the producers' stop to the step ``promoted``;
the audit runs after it) and the kills are printed.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from connectors.mirror.cutover.state import STEPS
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.cutover_drill import cut_over
from tests.integration.failover_drill import Traffic, committed, measure, read_all
from tests.integration.fleet import create_topic, fleet, python_workers, status, wait_for
from tests.integration.test_failback import cli, connectors, one_line_error, wait_connector

pytestmark = pytest.mark.kafka

PARTITIONS = 3
RATE = 1000


def test_a_cutover_killed_at_every_step_and_resumed_moves_every_group_exactly(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = unique("orders")
    prefix = unique("app")
    groups = [f"{prefix}-{i}" for i in range(3)]
    asyncio.run(create_topic(a, topic, PARTITIONS))
    forward = python_workers(b, tmp_path / "forward", unique("forward"), 1)[0]
    traffic = Traffic({"bootstrap.servers": a}, topic, PARTITIONS, RATE, groups)
    with fleet([forward]):
        for name, config in connectors(a, b, topic, f"{prefix}-.*").items():
            code, body = forward.rest("POST", "/connectors", {"name": name, "config": config})
            assert code == 201, body
        wait_connector(forward, "mirror-source", "RUNNING")
        url = ["--url", forward.rest_url, "--connector", "mirror-checkpoint"]
        group_args = [x for g in groups for x in ("--group", g)]
        state = tmp_path / "cutover.json"
        try:
            traffic.start()
            wait_for(
                "every group checkpointed on B",
                lambda: cli("failover", "plan", *url, *group_args).returncode == 0,
                120,
                interval=1.0,
            )
            time.sleep(2)
            one_line_error(cli("cutover", "plan", *url), 2, "name the groups with --group")
            one_line_error(
                cli("cutover", "resume", *url, *group_args, "--state", str(state)), 2, "resume needs"
            )
            over = cli("cutover", "execute", *url, *group_args, "--state", str(state), "--max-lag", "0")
            one_line_error(over, 3, "lags")
            assert json.loads(state.read_text())["done"] == [] if state.exists() else True
            dry = cli("cutover", "execute", *url, *group_args, "--state", str(state), "--dry-run", "--json")
            assert dry.returncode == 0 and json.loads(dry.stdout)["steps_left"][0] == "lag-checked", dry
            for group in groups:
                traffic.stop_group(group)
            positions = {g: asyncio.run(committed({"bootstrap.servers": a}, g, topic)) for g in groups}
            traffic.stop()
            stopped_at = time.time()
        finally:
            traffic.stop()
        assert not traffic.errors, traffic.errors
        outcome = cut_over([*url, *group_args, "--quiet", "2", "--no-audit"], state, STEPS, timeout_s=180)
        assert outcome.failure is None and outcome.report is not None, outcome
        kills, report = outcome.kills, outcome.report
        pause = json.loads(state.read_text())["times"]["promoted"] - stopped_at
        assert report["steps_left"] == ["audited"] and report["steps_done"] == [
            "lag-checked",
            "fenced",
            "quiet",
            "drained",
            "groups-moved",
            "verified",
            "promoted",
        ], report
        assert (status(forward, "mirror-source") or {})["connector"]["state"] == "STOPPED"
        again = cli("cutover", "resume", *url, *group_args, "--state", str(state), "--no-audit", "--json")
        assert again.returncode == 0 and json.loads(again.stdout)["timings_s"] == {}, again

    records = asyncio.run(read_all({"bootstrap.servers": b}, topic, PARTITIONS))
    for p, rows in records.items():
        seqs = [s for _, s in rows]
        assert seqs == list(range(traffic.produced[p])), (p, len(seqs), traffic.produced[p])
    print(
        f"\ncutover under {RATE} records/s: {sum(traffic.produced)} records; killed after {kills}; write pause {pause:.1f} s"
    )
    print("group read-on-B re-read skipped")
    for group in groups:
        moved = measure(
            group, positions[group], asyncio.run(committed({"bootstrap.servers": b}, group, topic)), records
        )
        print(group, moved.read, moved.reread, moved.skipped)
        assert (moved.reread, moved.skipped) == (0, 0), moved
