"""``pyconnect failback`` on real Kafka: A->B, A cut, failover to B, writes on B, A back, the way back.

Both mirrors at least once (``make test``) or exactly once (``make chaos``: transaction markers on both
clusters). Cluster A is this module's own (one broker, killed with SIGKILL, then started again on its data); B is the
session's cluster. A topic of A holds numbered records (value ``A-<partition>-<n>`` at offset ``n``); two
groups have consumed part of it on A. A forward fleet on B mirrors it under IdentityReplicationPolicy
(offset syncs on B), checkpointing the groups. Then the forward connector is paused and A takes records
the mirror never copies (the orphans), A's broker is killed, the operator stops the forward connector and
``pyconnect failover execute`` moves the groups to B. The applications write ``B-<partition>-<n>`` records
on B and the groups read there, one to the end, one part of the way. A comes back, a reverse fleet writing
to A starts, and ``pyconnect failback``:

* ``plan`` finds exactly the orphans (offset ranges and counts) with the offset syncs as evidence;
* ``execute`` with a group still consuming on B is refused (exit 3) after starting the reverse flow, and
  run again once it stopped: the reverse flow copies back exactly the records written on B (no echo of
  the mirrored ones), the orphans land in ``<topic>.orphans`` with their origin in headers, each group
  moves on A to where it stopped on B, the forward flow restarts from A's end; its closing Spark audit
  passes: within the recorded window A lacks on B exactly the orphans (same offsets), B holds nothing A
  lacks, each group's offsets on A and B name the same record;
* reading on from there, each group reads every record of the round trip exactly once (re-read 0,
  skipped 0); the group that read B to its end never reads an orphan, the one that stopped before the
  copy's end reads each orphan once, as the report's ``orphans_ahead`` says; the forward flow's plan
  translates each group's position on A back to exactly where it stopped on B (the forward offset syncs
  the failback wrote for the records copied back); new records on A reach B, nothing comes back twice;
* bad input: no failover state (exit 7), no reverse fleet (exit 2); ``status`` and a repeated
  ``execute`` report the finished state and change nothing.
"""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError

from pyconnect.kafka.group_admin import CommittedOffset, GroupAdmin
from pyconnect.kafka.record_offsets import partition_bounds
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.cutover_drill import IDENTITY, connector_configs
from tests.integration.fleet import create_topic, fleet, own_cluster, python_workers, status, wait_for

pytestmark = pytest.mark.kafka

PARTITIONS = 2
MIRRORED = 200  # records per partition copied to B before the cut
ORPHANS = 30  # records per partition written to A after the mirror stopped copying
WRITTEN_ON_B = 50  # records per partition the applications write on B after the failover
LATER_ON_A = 10  # records per partition written on A once the applications are back
CLI_TIMEOUT_S = 240


def cli(command: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyconnect", command, *args],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


def connectors(
    a: str, b: str, topic: str, groups: str, policy: str = IDENTITY, checkpointed: str | None = None
) -> dict[str, dict[str, str]]:
    """The forward flow's source and checkpoint connectors (``checkpointed``: the checkpoint connector's
    topics, ``topic`` by default), as the cutover drill configures them."""
    configs = connector_configs(a, b, topic, groups, policy=policy, checkpointed=checkpointed)
    return {"mirror-source": configs["source"], "mirror-checkpoint": configs["checkpoint"]}


async def produce(bootstrap: str, topic: str, prefix: str, start: int, count: int) -> None:
    """``count`` records per partition, values ``<prefix>-<partition>-<n>`` for ``n`` from ``start``."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
    await producer.start()
    try:
        for p in range(PARTITIONS):
            for n in range(start, start + count):
                await producer.send(topic, f"{prefix}-{p}-{n}".encode(), key=str(n).encode(), partition=p)
        await producer.flush()
    finally:
        await producer.stop()


def client(cluster: str | dict[str, str]) -> dict[str, str]:
    """Java client keys of a cluster given by its bootstrap servers or its client keys."""
    return {"bootstrap.servers": cluster} if isinstance(cluster, str) else dict(cluster)


async def commit(cluster: str | dict[str, str], group: str, offsets: dict[tuple[str, int], int]) -> None:
    """Commit ``offsets`` for the member-less ``group``, retrying while a new cluster's coordinator loads."""
    admin = GroupAdmin(client(cluster))
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                errors = await admin.alter_offsets(
                    group, {tp: CommittedOffset(o) for tp, o in offsets.items()}
                )
            except KafkaError as exc:
                if not exc.retriable or time.monotonic() > deadline:
                    raise
                errors = {("coordinator", 0): 15}
            if not errors or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        assert not errors, errors
    finally:
        await admin.close()


async def committed(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    admin = GroupAdmin({"bootstrap.servers": bootstrap})
    try:
        return {tp: c.offset for tp, c in (await admin.committed_offsets(group)).items()}
    finally:
        await admin.close()


async def consume(bootstrap: str, group: str, topic: str, budget: int | None) -> list[str]:
    """What a consumer of ``group`` reads from its committed offsets: every record to the end, or at most
    ``budget`` per partition; it commits where it stopped and leaves."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
    )
    await consumer.start()
    seen: list[str] = []
    try:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        taken = dict.fromkeys(tps, 0)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            open_tps = [
                tp
                for tp in tps
                if await consumer.position(tp) < ends[tp] and (budget is None or taken[tp] < budget)
            ]
            if not open_tps:
                break
            got = await consumer.getmany(*open_tps, timeout_ms=500)
            for tp, records in got.items():
                for record in records:
                    if budget is not None and taken[tp] >= budget:
                        consumer.seek(tp, record.offset)
                        break
                    seen.append((record.value or b"").decode())
                    taken[tp] += 1
        await consumer.commit({tp: await consumer.position(tp) for tp in tps})
    finally:
        await consumer.stop()
    return seen


async def read_values(bootstrap: str, topic: str) -> dict[int, list[tuple[int, str, dict[str, bytes]]]]:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, isolation_level="read_committed"
    )
    await consumer.start()
    rows: dict[int, list[tuple[int, str, dict[str, bytes]]]] = {}
    try:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any([await consumer.position(tp) < ends[tp] for tp in tps]):
            for tp, records in (await consumer.getmany(timeout_ms=500)).items():
                rows.setdefault(tp.partition, []).extend(
                    (r.offset, (r.value or b"").decode(), {k: bytes(v) for k, v in r.headers})
                    for r in records
                )
    finally:
        await consumer.stop()
    return rows


def serving(bootstrap: str, topic: str) -> bool:
    """Whether every partition of ``topic`` answers its offsets (a broker restarted after SIGKILL
    recovers its logs before its partitions have a leader again)."""
    try:
        asyncio.run(
            partition_bounds({"bootstrap.servers": bootstrap}, [(topic, p) for p in range(PARTITIONS)], 5)
        )
    except Exception:
        return False
    return True


def one_line_error(done: subprocess.CompletedProcess[str], code: int, contains: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == code and len(lines) == 1 and contains in lines[0], (code, done)
    assert done.stdout == ""


def wait_connector(worker: Any, name: str, state: str) -> None:
    def ready() -> bool:
        body = status(worker, name)
        return (
            bool(body)
            and body["connector"]["state"] == state
            and (
                state != "RUNNING"
                or (bool(body["tasks"]) and all(t["state"] == "RUNNING" for t in body["tasks"]))
            )
        )

    wait_for(f"{name} {state}", ready, 60, describe=lambda: status(worker, name))


def orphans_then_loss(forward: Any, cluster_a: Any, topic: str) -> None:
    """The mirror cut off from A (paused once its last copy is synced), ``ORPHANS`` records per partition
    written to A, A's broker killed, and the operator's first act: the forward connector stopped (it must
    not copy A's orphans when A returns)."""
    assert forward.rest("PUT", "/connectors/mirror-source/pause")[0] == 202
    wait_for(
        "mirror-source PAUSED",
        lambda: (status(forward, "mirror-source") or {}).get("connector", {}).get("state") == "PAUSED",
        30,
    )
    time.sleep(2)  # the task's offset commit after its last copy syncs that record
    asyncio.run(produce(cluster_a.bootstrap_servers, topic, "A", MIRRORED, ORPHANS))
    cluster_a.nodes[0].kill()
    assert forward.rest("PUT", "/connectors/mirror-source/stop")[0] == 204
    wait_connector(forward, "mirror-source", "STOPPED")


def hold(b: str, group: str, topic: str, until: threading.Event, joined: threading.Event) -> None:
    async def member() -> None:
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=b, group_id=group, enable_auto_commit=False)
        await consumer.start()
        try:
            deadline = time.monotonic() + 120
            while not until.is_set() and time.monotonic() < deadline:
                await consumer.getmany(timeout_ms=200)
                if consumer.assignment():
                    joined.set()
        finally:
            await consumer.stop()

    asyncio.run(member())


DELIVERIES = {"at-least-once": {}, "exactly-once": {"exactly.once.source.support": "enabled"}}


@pytest.mark.parametrize("delivery", ["at-least-once", pytest.param("exactly-once", marks=pytest.mark.long)])
def test_a_round_trip_returns_every_group_to_a_rereading_and_skipping_nothing(
    delivery: str, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    b = cluster_b.bootstrap_servers
    topic = unique("orders")
    prefix = unique("app")
    groups = {f"{prefix}-all": None, f"{prefix}-part": 20}  # group -> what it reads on B per partition
    seen: dict[str, list[str]] = {g: [] for g in groups}
    with own_cluster(tmp_path / "kafka", "A", 1) as cluster_a:
        a = cluster_a.bootstrap_servers
        asyncio.run(create_topic(a, topic, PARTITIONS))
        asyncio.run(produce(a, topic, "A", 0, MIRRORED))
        on_a = {f"{prefix}-all": 150, f"{prefix}-part": 120}
        for group, upto in on_a.items():
            asyncio.run(commit(a, group, {(topic, p): upto for p in range(PARTITIONS)}))
            seen[group] += [f"A-{p}-{n}" for p in range(PARTITIONS) for n in range(upto)]
        forward = python_workers(b, tmp_path / "forward", unique("forward"), 1, **DELIVERIES[delivery])[0]
        with fleet([forward]):
            for name, config in connectors(a, b, topic, f"{prefix}-.*").items():
                code, body = forward.rest("POST", "/connectors", {"name": name, "config": config})
                assert code == 201, body
            wait_connector(forward, "mirror-source", "RUNNING")
            url = ["--url", forward.rest_url, "--connector", "mirror-checkpoint"]
            group_args = [x for g in groups for x in ("--group", g)]

            def checkpointed() -> bool:
                done = cli("failover", "plan", *url, *group_args, "--json")
                if done.returncode != 0:
                    return False
                plans = json.loads(done.stdout)["groups"]
                return all(
                    p["checkpoint"] and p["checkpoint"]["upstream"] == on_a[g["group"]]
                    for g in plans
                    for p in g["partitions"]
                ) and len(plans) == len(groups)

            wait_for(
                "every group checkpointed",
                checkpointed,
                90,
                interval=1.0,
                describe=lambda: (
                    cli("failover", "plan", *url, *group_args).stderr,
                    status(forward, "mirror-checkpoint"),
                    forward.log_tail(15),
                ),
            )
            orphans_then_loss(forward, cluster_a, topic)

            failover_state = tmp_path / "failover.json"
            done = cli("failover", "execute", *url, *group_args, "--state", str(failover_state), "--json")
            assert done.returncode == 0, done.stderr
            asyncio.run(produce(b, topic, "B", 0, WRITTEN_ON_B))
            for group, budget in groups.items():
                seen[group] += asyncio.run(consume(b, group, topic, budget))

            cluster_a.nodes[0].start()
            cluster_a.wait_ready()
            wait_for("A serving its topic again", functools.partial(serving, a, topic), 120, interval=1.0)
            reverse = python_workers(a, tmp_path / "reverse", unique("reverse"), 1, **DELIVERIES[delivery])[0]
            with fleet([reverse]):
                base = [*url, "--failover-state", str(failover_state)]
                state = tmp_path / "failback.json"
                fleets = [*base, "--reverse-url", reverse.rest_url, "--state", str(state)]
                full = [*fleets, "--quiet", "2"]
                check_bad_input(url, base, tmp_path)
                check_late_copies_refused(url, failover_state, reverse.rest_url, tmp_path)
                plan = cli("failback", "plan", *base, "--json")
                assert plan.returncode == 0, plan.stderr
                check_plan(json.loads(plan.stdout), markers=delivery == "exactly-once")

                until, joined = threading.Event(), threading.Event()
                holder = threading.Thread(target=hold, args=(b, f"{prefix}-all", topic, until, joined))
                holder.start()
                try:
                    assert joined.wait(60), "the consumer on B never joined"
                    refused = cli("failback", "execute", *full, "--quarantine")
                    one_line_error(refused, 3, f"group {prefix}-all is Stable")
                finally:
                    until.set()
                    holder.join(timeout=60)
                recorded = json.loads(state.read_text())["done"]
                assert recorded == ["forward-stopped", "measured", "quarantined", "reverse-started"], recorded

                started = time.monotonic()
                done = cli("failback", "execute", *full, "--quarantine", "--json")
                assert done.returncode == 0, done.stderr
                report = json.loads(done.stdout)
                print(
                    f"\nfailback execute (resumed) took {time.monotonic() - started:.1f} s: {report['timings_s']}"
                )
                assert report["steps_left"] == [], report
                check_audit(report)
                check_round_trip(a, b, topic, groups, seen, report)
                wait_connector(forward, "mirror-source", "RUNNING")
                check_translation_after_return(url, group_args, b, topic)
                check_forward_again(a, b, topic)
                again = cli("failback", "execute", *full, "--json")
                assert again.returncode == 0 and json.loads(again.stdout)["timings_s"] == {}, again
                shown = cli("failback", "status", *fleets)
                assert shown.returncode == 0 and "left: none" in shown.stdout, shown


def check_audit(report: dict[str, Any]) -> None:
    """The closing audit: A lacks nothing on B but the orphans, at their offsets; B holds nothing A lacks
    (every record written on B came back); each group's offsets on A and B name the same record."""
    audit = report["audit"]
    print(f"\n{audit['verdict']} ({audit['seconds']} s)")
    assert audit["ok"], audit["findings"]
    assert audit["a_only"] == report["orphans_total"] == PARTITIONS * ORPHANS, audit
    assert audit["b_only"] == 0 and set(audit["groups"]) == set(report["returned"]), audit
    for p in audit["partitions"]:
        assert (p["a_only_first"], p["a_only_last"]) == (MIRRORED, MIRRORED + ORPHANS - 1), p
    assert all(Path(f).is_file() for f in audit["reports"]), audit["reports"]


def check_bad_input(url: list[str], base: list[str], tmp_path: Path) -> None:
    one_line_error(cli("failback", "plan", *url), 7, "give the failover's state file with --failover-state")
    missing = tmp_path / "never.json"
    one_line_error(cli("failback", "plan", *url, "--failover-state", str(missing)), 7, "does not exist")
    one_line_error(cli("failback", "execute", *base, "--state", str(tmp_path / "x.json")), 2, "needs --url")


def check_late_copies_refused(url: list[str], failover_state: Path, reverse_url: str, tmp_path: Path) -> None:
    """A failover whose recorded target ends lie before the forward copy's end (as when A returned while the
    forward flow still ran) is refused with exit 10, before anything is measured or started."""
    document = json.loads(failover_state.read_text())
    assert document["target_ends"], document
    document["target_ends"] = {k: v - 5 for k, v in document["target_ends"].items()}
    late = tmp_path / "late-failover.json"
    late.write_text(json.dumps(document))
    state = tmp_path / "late-failback.json"
    args = [*url, "--failover-state", str(late), "--reverse-url", reverse_url, "--state", str(state)]
    one_line_error(
        cli("failback", "execute", *args), 10, "the forward flow copied records from A after the failover"
    )
    assert json.loads(state.read_text())["done"] == ["forward-stopped"]
    plan = cli("failback", "plan", *url, "--failover-state", str(late), "--json")
    assert plan.returncode == 0 and len(json.loads(plan.stdout)["copied_after_failover"]) == PARTITIONS, plan


def check_plan(plan: dict[str, Any], *, markers: bool) -> None:
    assert plan["copied_after_failover"] == [], plan
    rows = {p["partition"]: p for p in plan["partitions"]}
    assert sorted(rows) == list(range(PARTITIONS)), plan
    for p, row in rows.items():
        assert row["evidence"] == "offset syncs", row
        assert row["last_copied"] == MIRRORED - 1, row
        assert row["orphans"]["count"] == ORPHANS, row
        assert (row["orphans"]["first"], row["orphans"]["last"]) == (MIRRORED, MIRRORED + ORPHANS - 1), row
        # past the copy's end on B: the records written there, after the commit marker of the forward
        # flow's last transaction when it copies exactly once
        assert row["target_offsets_past_end"] == WRITTEN_ON_B + (1 if markers else 0), (p, row)
    assert plan["orphans_total"] == ORPHANS * PARTITIONS


def check_round_trip(
    a: str,
    b: str,
    topic: str,
    groups: dict[str, int | None],
    seen: dict[str, list[str]],
    report: dict[str, Any],
) -> None:
    on_a = asyncio.run(read_values(a, topic))
    for p in range(PARTITIONS):
        values = [v for _, v, _ in on_a[p]]
        expected = [f"A-{p}-{n}" for n in range(MIRRORED + ORPHANS)] + [
            f"B-{p}-{n}" for n in range(WRITTEN_ON_B)
        ]
        assert values == expected, (p, values[MIRRORED - 2 :])
    quarantined = asyncio.run(read_values(a, f"{topic}.orphans"))
    for p in range(PARTITIONS):
        assert [v for _, v, _ in quarantined[p]] == [
            f"A-{p}-{n}" for n in range(MIRRORED, MIRRORED + ORPHANS)
        ]
        assert quarantined[p][0][2]["pyconnect.orphan.offset"] == str(MIRRORED).encode()
    orphans = {f"A-{p}-{n}" for p in range(PARTITIONS) for n in range(MIRRORED, MIRRORED + ORPHANS)}
    every = {f"A-{p}-{n}" for p in range(PARTITIONS) for n in range(MIRRORED)} | {
        f"B-{p}-{n}" for p in range(PARTITIONS) for n in range(WRITTEN_ON_B)
    }
    print("\ngroup read-on-A-B-A re-read skipped orphans-read returned-to")
    for group in groups:
        seen[group] += asyncio.run(consume(a, group, topic, None))
        check_reads(group, seen[group], every, orphans, report, reads_orphans=bool(groups[group]))
    on_b = asyncio.run(read_values(b, topic))
    written = sum(len(v) for p in range(PARTITIONS) for _, v, _ in on_b[p][MIRRORED:])
    back = sum(len(v) for p in range(PARTITIONS) for _, v, _ in on_a[p][MIRRORED + ORPHANS :])
    print(f"orphans {report['orphans_total']}; value bytes written on B {written}, copied back {back}")
    assert back == written > 0


def check_reads(
    group: str,
    seen: list[str],
    every: set[str],
    orphans: set[str],
    report: dict[str, Any],
    *,
    reads_orphans: bool,
) -> None:
    """What ``group`` read over the round trip (``seen``): every record of ``every`` once (re-read 0, skipped
    0), printed as a row; a group that returned before the orphans (``reads_orphans``) reads each once, as
    the report's ``orphans_ahead`` warned, the others never."""
    reread, skipped = len(seen) - len(set(seen)), len(every - set(seen))
    print(group, len(seen), reread, skipped, len(orphans & set(seen)), report["returned"][group])
    assert (reread, skipped) == (0, 0), group
    ahead = sum(p["orphans_ahead"] for r in report["groups"] if r["group"] == group for p in r["partitions"])
    assert len(orphans & set(seen)) == ahead == (len(orphans) if reads_orphans else 0), group


def check_translation_after_return(url: list[str], group_args: list[str], b: str, topic: str) -> None:
    """With the forward flow running again, its checkpoints translate each group's position on A (the end
    of the records copied back, where both groups read to) to exactly B's end, where the records they
    copy back end: the failback's forward offset syncs (without them: the forward copy's old end on B,
    short of the records written there)."""
    ends = {p: rows[-1][0] + 1 for p, rows in asyncio.run(read_values(b, topic)).items()}

    def exact() -> bool:
        done = cli("failover", "plan", *url, *group_args, "--json")
        if done.returncode != 0:
            return False
        for group in json.loads(done.stdout)["groups"]:
            found = {p["partition"]: p["target_offset"] for p in group["partitions"]}
            if found != ends:
                return False
        return True

    wait_for(
        "the groups' positions on A translating to where they stopped on B",
        exact,
        90,
        interval=1.0,
        describe=lambda: cli("failover", "plan", *url, *group_args).stdout[-1500:],
    )


def check_forward_again(a: str, b: str, topic: str) -> None:
    asyncio.run(produce(a, topic, "A", MIRRORED + ORPHANS, LATER_ON_A))
    expected = {
        p: [f"A-{p}-{n}" for n in range(MIRRORED)]
        + [f"B-{p}-{n}" for n in range(WRITTEN_ON_B)]
        + [f"A-{p}-{n}" for n in range(MIRRORED + ORPHANS, MIRRORED + ORPHANS + LATER_ON_A)]
        for p in range(PARTITIONS)
    }

    def arrived() -> bool:
        on_b = asyncio.run(read_values(b, topic))
        return all([v for _, v, _ in on_b.get(p, [])] == expected[p] for p in range(PARTITIONS))

    wait_for(
        "the records written on A again, and only those, on B",
        arrived,
        60,
        interval=1.0,
        describe=lambda: {
            p: [v for _, v, _ in rows][-12:] for p, rows in asyncio.run(read_values(b, topic)).items()
        },
    )
