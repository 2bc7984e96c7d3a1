"""``pyconnect failback`` on real Kafka, active/active under DefaultReplicationPolicy: the flows A->B and
B->A both run (each on a Connect fleet of its target cluster), applications write on both clusters; A's applications
fail over to B and come back, and the failback uses the running B->A connector as its reverse flow.

A's topic ``T`` holds ``A-<partition>-<n>``, B's own ``T`` holds ``P-<partition>-<n>`` (B's applications),
which the flow B->A copies to ``B.T`` on A all along. A's group read part of A's ``T``; the forward flow
checkpoints it. The forward connector is paused, A takes the orphans, A's broker is killed, the forward
connector is stopped, ``pyconnect failover execute`` moves the group to ``A.T`` on B. A's applications now
write B's ``T`` (``B-<partition>-<n>``) and read ``A.T`` to its end and part of B's ``T`` (from where it
stood at the failover). A comes back, and ``pyconnect failback execute --reverse-connector mirror-back``:

* adopts ``mirror-back`` (no second reverse connector is created; it runs on afterwards), waits until it
  has copied what B's applications wrote while A was away, returns the group to A's ``T`` past the
  orphans and to A's ``B.T`` at the copy of the record it would have read next on B's ``T``, and resumes
  the forward flow from A's end;
* reading on from there, the group reads every record exactly once (re-read 0, skipped 0); A's ``B.T``
  holds each record of B's ``T`` once; nothing echoes (no ``B.A.T`` on A, no ``A.B.T`` on B); records
  written afterwards flow both ways.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.cutover_drill import connector_configs
from tests.integration.fleet import create_topic, fleet, own_cluster, python_workers, status, wait_for
from tests.integration.test_failback import (
    LATER_ON_A,
    MIRRORED,
    ORPHANS,
    PARTITIONS,
    WRITTEN_ON_B,
    cli,
    commit,
    connectors,
    consume,
    produce,
    read_values,
    serving,
    wait_connector,
)
from tests.integration.test_failback_default import DEFAULT, PRE, topics, wait_checkpointed

pytestmark = pytest.mark.kafka

READ_ON_A = 150
READ_ON_B = 20  # records per partition of B's own T the group reads on B after the failover


def back_flow(a: str, b: str, topic: str) -> dict[str, str]:
    """The flow B->A that runs all along (offset syncs on its target, A)."""
    return connector_configs(b, a, topic, "", aliases=("B", "A"), policy=DEFAULT)["source"]


def values(bootstrap: str, topic: str) -> dict[int, list[str]]:
    return {p: [v for _, v, _ in rows] for p, rows in asyncio.run(read_values(bootstrap, topic)).items()}


def test_an_active_active_failback_uses_the_running_reverse_flow(
    cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    b = cluster_b.bootstrap_servers
    topic = unique("orders")
    back = f"B.{topic}"
    group = unique("app")
    seen = [f"A-{p}-{n}" for p in range(PARTITIONS) for n in range(READ_ON_A)]
    seen += [f"P-{p}-{n}" for p in range(PARTITIONS) for n in range(PRE)]
    with own_cluster(tmp_path / "kafka", "A", 1) as cluster_a:
        a = cluster_a.bootstrap_servers
        asyncio.run(create_topic(a, topic, PARTITIONS))
        asyncio.run(produce(a, topic, "A", 0, MIRRORED))
        asyncio.run(create_topic(b, topic, PARTITIONS))
        asyncio.run(produce(b, topic, "P", 0, PRE))
        asyncio.run(commit(a, group, {(topic, p): READ_ON_A for p in range(PARTITIONS)}))
        asyncio.run(commit(b, group, {(topic, p): PRE for p in range(PARTITIONS)}))
        workers = python_workers(b, tmp_path / "fleet", unique("fleet"), 1)[0]
        # a Connect fleet writes to its own Kafka: the flow into A runs on a fleet of A's. It loses its
        # group while A is away and comes back as a new member: its old assignment then waits the
        # scheduled rebalance delay (KIP-415, 5 minutes by default) before it is given out again
        backward = python_workers(
            a, tmp_path / "back", unique("back"), 1, **{"scheduled.rebalance.max.delay.ms": 2000}
        )[0]
        with fleet([workers, backward]):
            for name, config in connectors(a, b, topic, group, DEFAULT, f"{topic}, {back}").items():
                code, body = workers.rest("POST", "/connectors", {"name": name, "config": config})
                assert code == 201, body
            code, body = backward.rest(
                "POST", "/connectors", {"name": "mirror-back", "config": back_flow(a, b, topic)}
            )
            assert code == 201, body
            wait_connector(workers, "mirror-source", "RUNNING")
            wait_connector(backward, "mirror-back", "RUNNING")
            pre = {p: [f"P-{p}-{n}" for n in range(PRE)] for p in range(PARTITIONS)}
            wait_for(
                "B's records on A",
                # listed first: a consumer's metadata request for a topic A lacks would auto-create it
                lambda: back in asyncio.run(topics(a)) and values(a, back) == pre,
                60,
                interval=1.0,
                describe=lambda: (values(a, back), status(backward, "mirror-back"), backward.log_tail(10)),
            )
            url = ["--url", workers.rest_url, "--connector", "mirror-checkpoint"]
            wait_checkpointed(url, ["--group", group], {group: READ_ON_A}, workers)
            assert workers.rest("PUT", "/connectors/mirror-source/pause")[0] == 202
            wait_for(
                "mirror-source PAUSED",
                lambda: (
                    (status(workers, "mirror-source") or {}).get("connector", {}).get("state") == "PAUSED"
                ),
                30,
            )
            time.sleep(2)
            asyncio.run(produce(a, topic, "A", MIRRORED, ORPHANS))
            cluster_a.nodes[0].kill()
            assert workers.rest("PUT", "/connectors/mirror-source/stop")[0] == 204
            wait_connector(workers, "mirror-source", "STOPPED")
            failover_state = tmp_path / "failover.json"
            done = cli("failover", "execute", *url, "--group", group, "--state", str(failover_state))
            assert done.returncode == 0, done.stderr

            asyncio.run(produce(b, topic, "B", 0, WRITTEN_ON_B))  # mirror-back cannot reach A now
            seen += asyncio.run(consume(b, group, f"A.{topic}", None))
            seen += asyncio.run(consume(b, group, topic, READ_ON_B))

            cluster_a.nodes[0].start()
            cluster_a.wait_ready()
            wait_for("A serving its topic again", functools.partial(serving, a, topic), 120, interval=1.0)
            state = tmp_path / "failback.json"
            args = ["--failover-state", str(failover_state), "--reverse-url", backward.rest_url]
            args += ["--reverse-connector", "mirror-back", "--state", str(state), "--quiet", "2", "--json"]
            args += ["--no-audit"]  # the closing Spark audit is run by the default-policy round trip
            started = time.monotonic()
            done = cli("failback", "execute", *url, *args)
            assert done.returncode == 0, done.stderr
            took = time.monotonic() - started
            report = json.loads(done.stdout)
            assert report["steps_left"] == ["audited"], report
            assert json.loads(state.read_text())["reverse_adopted"], report
            code, names = backward.rest("GET", "/connectors")
            assert code == 200 and names == ["mirror-back"], names  # no second reverse connector
            wait_connector(backward, "mirror-back", "RUNNING")
            wait_connector(workers, "mirror-source", "RUNNING")
            returned = report["returned"][group]
            assert {k: v for k, v in returned.items() if k.startswith(f"{topic}:")} == {
                f"{topic}:{p}": MIRRORED + ORPHANS for p in range(PARTITIONS)
            }, report
            copied = values(a, back)
            for p in range(PARTITIONS):
                # the adopted flow is at least once: a task that failed while A (where its fleet commits its
                # offsets) was away may copy a run again after its restart; every record is there, in order
                # of first copy, and the group returns on a copy of the record it would have read next on B
                assert list(dict.fromkeys(copied[p])) == pre[p] + [
                    f"B-{p}-{n}" for n in range(WRITTEN_ON_B)
                ], p
                at = {offset: value for offset, value, _ in asyncio.run(read_values(a, back))[p]}
                assert at[returned[f"{back}:{p}"]] == f"B-{p}-{READ_ON_B}", (p, returned)
            seen += asyncio.run(consume(a, group, topic, None))
            seen += asyncio.run(consume(a, group, back, None))
            every = {f"A-{p}-{n}" for p in range(PARTITIONS) for n in range(MIRRORED)}
            every |= {
                f"{s}-{p}-{n}"
                for p in range(PARTITIONS)
                for s, k in (("P", PRE), ("B", WRITTEN_ON_B))
                for n in range(k)
            }
            reread, skipped = len(seen) - len(set(seen)), len(every - set(seen))
            written = sum(len(v) for p in range(PARTITIONS) for v in values(b, topic)[p][PRE:])
            copied_back = sum(len(v) for p in range(PARTITIONS) for v in copied[p][PRE:])
            print(
                f"\nactive/active failback execute {took:.1f} s {report['timings_s']}; group read {len(seen)}, "
                f"re-read {reread}, skipped {skipped}; orphans {report['orphans_total']}; value bytes written on "
                f"B since the failover {written}, copied back {copied_back}"
            )
            assert (reread, skipped) == (0, 0)
            assert 0 < written <= copied_back, (written, copied_back)

            asyncio.run(produce(a, topic, "A", MIRRORED + ORPHANS, LATER_ON_A))
            asyncio.run(produce(b, topic, "C", 0, LATER_ON_A))
            later_a = {
                p: [f"A-{p}-{n}" for n in range(MIRRORED)]
                + [f"A-{p}-{n}" for n in range(MIRRORED + ORPHANS, MIRRORED + ORPHANS + LATER_ON_A)]
                for p in range(PARTITIONS)
            }
            later_b = {p: copied[p] + [f"C-{p}-{n}" for n in range(LATER_ON_A)] for p in range(PARTITIONS)}
            wait_for(
                "A's new records on B, once", lambda: values(b, f"A.{topic}") == later_a, 60, interval=1.0
            )
            wait_for("B's new records on A, once", lambda: values(a, back) == later_b, 60, interval=1.0)
            assert f"B.A.{topic}" not in asyncio.run(topics(a))
            assert f"A.B.{topic}" not in asyncio.run(topics(b))
