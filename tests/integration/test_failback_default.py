"""``pyconnect failback`` on real Kafka under DefaultReplicationPolicy: the forward flow writes A's topic
``T`` to ``A.T`` on B; after the failover the applications write B's own ``T`` and read both.

Cluster A is this module's own (one broker, killed with SIGKILL, started again on its data); B is the
session's cluster. ``T`` on A holds numbered records (``A-<partition>-<n>`` at offset ``n``); B's own ``T``
already holds ``PRE`` records the groups read before (an earlier period: the failback must not copy them).
A forward fleet on B mirrors ``T`` to ``A.T`` (offset syncs on B) and checkpoints the groups; the forward
connector is paused, A takes the orphans, A's broker is killed, the forward connector is stopped and
``pyconnect failover execute`` moves the groups to ``A.T`` (and records where B's own ``T`` ended). The
applications write ``B-<partition>-<n>`` on B's ``T``; one group reads ``A.T`` and ``T`` to their ends, one
part of each. A comes back, a reverse fleet writing to A starts, and ``pyconnect failback``:

* ``plan`` finds exactly the orphans, and plans the reverse flow to copy B's ``T`` from where it ended at
  the failover;
* ``execute`` (without its closing Spark audit; with it in ``make chaos``, where it must pass) copies
  back to A's ``B.T`` exactly the records written on B since the failover (not the
  earlier ones, nothing of ``A.T``: no ``B.A.T`` on A), returns each group to A's ``T`` (from ``A.T``)
  and to A's ``B.T`` (from B's ``T``) where it stopped, and restarts the forward flow from A's end;
* reading on from there on A, each group reads every record of the round trip exactly once (re-read 0,
  skipped 0 by sequence numbers), the orphans once when it returned before them; new records on A reach
  ``A.T`` on B and nothing is copied twice or echoed (no ``A.B.T`` on B);
* before that, with the forward flow running again, its checkpoints translate each group's position on
  A's ``B.T`` to exactly where it stopped on B's ``T`` (the forward offset syncs the failback wrote).
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient

from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import create_topic, fleet, own_cluster, python_workers, wait_for
from tests.integration.test_failback import (
    LATER_ON_A,
    MIRRORED,
    ORPHANS,
    PARTITIONS,
    WRITTEN_ON_B,
    check_reads,
    cli,
    commit,
    committed,
    connectors,
    consume,
    orphans_then_loss,
    produce,
    read_values,
    serving,
    wait_connector,
)

pytestmark = pytest.mark.kafka

DEFAULT = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
PRE = 5  # records per partition of B's own topic before the failover, read by the groups then


async def topics(bootstrap: str) -> set[str]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return set(await admin.list_topics())
    finally:
        await admin.close()


@pytest.mark.parametrize("audited", [False, pytest.param(True, marks=pytest.mark.long)])
def test_a_round_trip_under_the_default_policy_copies_back_only_bs_own_records(
    audited: bool, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    b = cluster_b.bootstrap_servers
    topic = unique("orders")
    remote, back = f"A.{topic}", f"B.{topic}"
    prefix = unique("app")
    groups = {f"{prefix}-all": None, f"{prefix}-part": 20}  # group -> what it reads on B per partition
    seen: dict[str, list[str]] = {g: [] for g in groups}
    timings: dict[str, float] = {}
    with own_cluster(tmp_path / "kafka", "A", 1) as cluster_a:
        a = cluster_a.bootstrap_servers
        asyncio.run(create_topic(a, topic, PARTITIONS))
        asyncio.run(produce(a, topic, "A", 0, MIRRORED))
        asyncio.run(create_topic(b, topic, PARTITIONS))
        asyncio.run(produce(b, topic, "P", 0, PRE))
        on_a = {f"{prefix}-all": 150, f"{prefix}-part": 120}
        for group, upto in on_a.items():
            asyncio.run(commit(a, group, {(topic, p): upto for p in range(PARTITIONS)}))
            asyncio.run(commit(b, group, {(topic, p): PRE for p in range(PARTITIONS)}))
            seen[group] += [f"A-{p}-{n}" for p in range(PARTITIONS) for n in range(upto)]
            seen[group] += [f"P-{p}-{n}" for p in range(PARTITIONS) for n in range(PRE)]
        forward = python_workers(b, tmp_path / "forward", unique("forward"), 1)[0]
        with fleet([forward]):
            flows = connectors(a, b, topic, f"{prefix}-.*", DEFAULT, f"{topic}, {back}")
            for name, config in flows.items():
                code, body = forward.rest("POST", "/connectors", {"name": name, "config": config})
                assert code == 201, body
            wait_connector(forward, "mirror-source", "RUNNING")
            url = ["--url", forward.rest_url, "--connector", "mirror-checkpoint"]
            group_args = [x for g in groups for x in ("--group", g)]
            wait_checkpointed(url, group_args, on_a, forward)
            orphans_then_loss(forward, cluster_a, topic)

            failover_state = tmp_path / "failover.json"
            started = time.monotonic()
            done = cli("failover", "execute", *url, *group_args, "--state", str(failover_state), "--json")
            assert done.returncode == 0, done.stderr
            timings["failover execute"] = time.monotonic() - started
            recorded = json.loads(failover_state.read_text())
            own_ends = recorded["own_ends"]  # B is shared: its other topics are recorded too
            assert {p: own_ends.get(f"{topic}:{p}") for p in range(PARTITIONS)} == dict.fromkeys(
                range(PARTITIONS), PRE
            ), own_ends
            assert not any(k.startswith(remote) for k in own_ends), own_ends
            asyncio.run(produce(b, topic, "B", 0, WRITTEN_ON_B))
            for group, budget in groups.items():
                seen[group] += asyncio.run(consume(b, group, remote, budget))
                seen[group] += asyncio.run(consume(b, group, topic, budget))
            stopped_on_b = {g: asyncio.run(committed_on(b, g, topic)) for g in groups}

            cluster_a.nodes[0].start()
            cluster_a.wait_ready()
            wait_for("A serving its topic again", functools.partial(serving, a, topic), 120, interval=1.0)
            reverse = python_workers(a, tmp_path / "reverse", unique("reverse"), 1)[0]
            with fleet([reverse]):
                base = [*url, "--failover-state", str(failover_state)]
                state = tmp_path / "failback.json"
                full = [*base, "--reverse-url", reverse.rest_url, "--state", str(state), "--quiet", "2"]
                started = time.monotonic()
                plan = cli("failback", "plan", *base, "--json")
                assert plan.returncode == 0, plan.stderr
                timings["failback plan"] = time.monotonic() - started
                check_plan(json.loads(plan.stdout), topic, groups)

                started = time.monotonic()
                done = cli("failback", "execute", *full, "--json", *([] if audited else ["--no-audit"]))
                assert done.returncode == 0, done.stderr
                timings["failback execute"] = time.monotonic() - started
                report = json.loads(done.stdout)
                assert report["steps_left"] == ([] if audited else ["audited"]), report
                if audited:  # the closing Spark audit (minutes on a small machine: make chaos)
                    audit = report["audit"]
                    assert (
                        audit["ok"] and audit["a_only"] == PARTITIONS * ORPHANS == report["orphans_total"]
                    ), audit
                    assert audit["b_only"] == 0, audit
                assert json.loads(state.read_text())["reverse_starts"] == {
                    f"{topic}:{p}": PRE for p in range(PARTITIONS)
                }
                wait_connector(forward, "mirror-source", "RUNNING")
                check_translation_after_return(url, group_args, back, stopped_on_b)
                check_round_trip(a, b, topic, groups, seen, report)
                check_forward_again(a, b, topic)
                print(f"\nround trip timings (s): { {k: round(v, 1) for k, v in timings.items()} }")
                print(f"failback execute steps (s): {report['timings_s']}")


def wait_checkpointed(url: list[str], group_args: list[str], on_a: dict[str, int], forward: Any) -> None:
    def checkpointed() -> bool:
        done = cli("failover", "plan", *url, *group_args, "--json")
        if done.returncode != 0:
            return False
        plans = json.loads(done.stdout)["groups"]
        return len(plans) == len(on_a) and all(
            p["checkpoint"] and p["checkpoint"]["upstream"] == on_a[g["group"]]
            for g in plans
            for p in g["partitions"]
        )

    wait_for(
        "every group checkpointed",
        checkpointed,
        90,
        interval=1.0,
        describe=lambda: (cli("failover", "plan", *url, *group_args).stderr, forward.log_tail(15)),
    )


async def committed_on(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    return {p: o for (t, p), o in (await committed(bootstrap, group)).items() if t == topic}


def check_plan(plan: dict[str, Any], topic: str, groups: dict[str, int | None]) -> None:
    assert plan["copied_after_failover"] == [], plan
    rows = {p["partition"]: p for p in plan["partitions"]}
    assert sorted(rows) == list(range(PARTITIONS)), plan
    for row in rows.values():
        assert row["target_topic"] == f"A.{topic}" and row["evidence"] == "offset syncs", row
        assert row["last_copied"] == MIRRORED - 1, row
        assert (row["orphans"]["first"], row["orphans"]["last"], row["orphans"]["count"]) == (
            MIRRORED,
            MIRRORED + ORPHANS - 1,
            ORPHANS,
        ), row
        assert row["target_offsets_past_end"] == 0, row  # nobody writes A.T on B
    assert plan["orphans_total"] == ORPHANS * PARTITIONS
    for group in plan["groups"]:
        assert group["others"] == [], group
        # B's own T returns on A's B.T, which holds nothing yet: every position is the copy's start
        own = [p for p in group["partitions"] if p["target_topic"] == topic]
        assert [p["topic"] for p in own] == [f"B.{topic}"] * PARTITIONS, group
        assert all(p["returns_to"] == 0 and p["evidence"] == "reverse start" for p in own), group


def check_round_trip(
    a: str,
    b: str,
    topic: str,
    groups: dict[str, int | None],
    seen: dict[str, list[str]],
    report: dict[str, Any],
) -> None:
    on_a = asyncio.run(read_values(a, topic))
    copied = asyncio.run(read_values(a, f"B.{topic}"))
    on_b = asyncio.run(read_values(b, topic))
    for p in range(PARTITIONS):
        assert [v for _, v, _ in on_a[p]] == [f"A-{p}-{n}" for n in range(MIRRORED + ORPHANS)], p
        assert [v for _, v, _ in copied[p]] == [f"B-{p}-{n}" for n in range(WRITTEN_ON_B)], p
    on_a_topics = asyncio.run(topics(a))
    assert f"B.A.{topic}" not in on_a_topics and f"B.{topic}" in on_a_topics, on_a_topics
    orphans = {f"A-{p}-{n}" for p in range(PARTITIONS) for n in range(MIRRORED, MIRRORED + ORPHANS)}
    every = {f"A-{p}-{n}" for p in range(PARTITIONS) for n in range(MIRRORED)}
    every |= {
        f"{s}-{p}-{n}"
        for p in range(PARTITIONS)
        for s, k in (("P", PRE), ("B", WRITTEN_ON_B))
        for n in range(k)
    }
    print("\ngroup read-on-A-B-A re-read skipped orphans-read returned-to")
    for group in groups:
        seen[group] += asyncio.run(consume(a, group, topic, None))
        seen[group] += asyncio.run(consume(a, group, f"B.{topic}", None))
        check_reads(group, seen[group], every, orphans, report, reads_orphans=bool(groups[group]))
    written = sum(len(v) for p in range(PARTITIONS) for _, v, _ in on_b[p][PRE:])
    back = sum(len(v) for p in range(PARTITIONS) for _, v, _ in copied[p])
    print(
        f"orphans {report['orphans_total']}; value bytes written on B since the failover {written}, copied back {back}"
    )
    assert back == written > 0


def check_translation_after_return(
    url: list[str], group_args: list[str], back: str, stopped_on_b: dict[str, dict[int, int]]
) -> None:
    """Once the forward flow runs again, its checkpoints of each group's position on A's ``B.T`` (where
    the failback returned it: one at the end of the copies back, one inside them) name B's ``T``
    (renamed, as MirrorCheckpointTask does for a topic that came from the target) at exactly where it
    stopped there: the forward offset syncs the failback wrote for the copies back."""

    def exact() -> bool:
        done = cli("failover", "plan", *url, *group_args, "--json")
        if done.returncode != 0:
            return False
        for group in json.loads(done.stdout)["groups"]:
            found = {p["partition"]: p["target_offset"] for p in group["partitions"] if p["topic"] == back}
            if found != stopped_on_b[group["group"]]:
                return False
        return True

    wait_for(
        "the groups' positions on A's copies translating to where they stopped on B",
        exact,
        90,
        interval=1.0,
        describe=lambda: cli("failover", "plan", *url, *group_args, "--json").stdout[-2500:],
    )


def check_forward_again(a: str, b: str, topic: str) -> None:
    asyncio.run(produce(a, topic, "A", MIRRORED + ORPHANS, LATER_ON_A))
    expected = {
        p: [f"A-{p}-{n}" for n in range(MIRRORED)]
        + [f"A-{p}-{n}" for n in range(MIRRORED + ORPHANS, MIRRORED + ORPHANS + LATER_ON_A)]
        for p in range(PARTITIONS)
    }

    def arrived() -> bool:
        on_b = asyncio.run(read_values(b, f"A.{topic}"))
        return all([v for _, v, _ in on_b.get(p, [])] == expected[p] for p in range(PARTITIONS))

    wait_for(
        "the records written on A again, and only those, on B",
        arrived,
        60,
        interval=1.0,
        describe=lambda: {
            p: [v for _, v, _ in rows][-12:] for p, rows in asyncio.run(read_values(b, f"A.{topic}")).items()
        },
    )
    on_b_topics = asyncio.run(topics(b))
    assert f"A.B.{topic}" not in on_b_topics, on_b_topics
    own = asyncio.run(read_values(b, topic))
    assert all(len(own[p]) == PRE + WRITTEN_ON_B for p in range(PARTITIONS)), own
