"""Group offset sync and failover with consumer-protocol groups (KIP-848, ``group.protocol=consumer``).

aiokafka's consumer speaks only the classic protocol, so the consumer-protocol groups here are run by
Java's console consumer from the fetched 4.3.1 jars. One pyconnect worker on B mirrors a topic A -> B
with MirrorSource and MirrorCheckpoint (group offset sync every second), for four groups:

* ``cons``: consumer-protocol on A (consumed, then stopped), unknown on B: checkpointed, then synced to B.
* ``both``: consumer-protocol on A; on B a consumer-protocol consumer of the same group runs (on a
  B-only topic). While it runs, sync never writes the group's offsets and logs one WARN naming the
  state and protocol; ``pyconnect offsets translate --execute`` refuses with one line; once it stops,
  the group is synced, and ``--execute`` then succeeds (nothing left to commit).
* ``rev``: a consumer-protocol group on A, a classic consumer of it running on B: same as ``both``.
* ``ahead``: a classic group on A; on B a consumer-protocol consumer of it reads the mirrored topic
  to its end. Not written while it runs (one WARN); once stopped it is an Empty consumer-protocol group
  with offsets past the checkpoints, which sync never rewinds.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError

from pyconnect.kafka.group_admin import CommittedOffset, GroupAdmin
from pyconnect.kafka.group_view import ACTIVE_GROUP_REJECTIONS
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.distribution import ensure_distribution
from pyconnect.testing.java_process import JavaProcess
from pyconnect.testing.java_reference import JavaConnectWorker
from tests.integration.fleet import Worker, fleet, python_workers, running_tasks, wait_for
from tests.integration.mirror_helpers import latest_checkpoints
from tests.integration.test_failover_cli import cli
from tests.integration.test_mirror_checkpoint import commit_group, flow, group_offsets
from tests.integration.test_mirror_source import create_and_fill, mirror_config, source_rows, wait_mirrored

pytestmark = [pytest.mark.kafka, pytest.mark.java]

RECORDS = 200
CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
QUICK_JVM = ("-XX:TieredStopAtLevel=1",)
"""Short-lived console consumers start faster (less CPU) with the client compiler only."""


def console_consumer(
    bootstrap: str,
    topic: str,
    group: str,
    log_dir: Path,
    max_messages: int | None = None,
    protocol: str = "consumer",
) -> JavaProcess:
    """Java's console consumer in group ``group`` with ``group.protocol`` (default the new consumer
    protocol; auto-commit on)."""
    args = [
        "--bootstrap-server",
        bootstrap,
        "--topic",
        topic,
        "--group",
        group,
        "--from-beginning",
        "--command-property",
        f"group.protocol={protocol}",
        "--timeout-ms",
        "180000",  # a bound: it exits after 3 min without records
    ]
    if max_messages is not None:
        args += ["--max-messages", str(max_messages)]
    command = ensure_distribution().java_command(CONSOLE_CONSUMER, *args, heap="256m", jvm_opts=QUICK_JVM)
    return JavaProcess(
        command, log_dir / f"console-{group}.log", f"console-{log_dir.name}-{group}", die_with_parent=True
    )


def wait_exited(consumers: Sequence[JavaProcess], timeout: float) -> None:
    """Wait until each console consumer has printed its ``--max-messages`` and closed (committing)."""
    deadline = time.monotonic() + timeout
    while any(c.running for c in consumers) and time.monotonic() < deadline:
        time.sleep(0.2)
    for consumer in consumers:
        consumer.stop()
        assert consumer.exit_code() == 0, consumer.log_tail()


async def committed(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    return {tp: o for tp, (o, _) in (await group_offsets(bootstrap, group)).items()}


async def fill_other(bootstrap: str, topic: str, remote: str) -> None:
    """A B-only topic with 5 records, and the remote topic created empty ahead of the mirror."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 1, 1), NewTopic(remote, 2, 1)])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for i in range(5):
            await producer.send_and_wait(topic, b"x%d" % i)
    finally:
        await producer.stop()


async def refused_commit(bootstrap: str, group: str, topic: str) -> int | None:
    """The coordinator's answer to an admin commit while ``group`` runs (None: accepted, or no
    coordinator yet: the first group of a fresh cluster creates its offsets topic)."""
    admin = GroupAdmin({"bootstrap.servers": bootstrap})
    try:
        errors = await admin.alter_offsets(group, {(topic, 0): CommittedOffset(0)})
    except KafkaError as exc:
        if not exc.retriable:
            raise
        return None
    finally:
        await admin.close()
    return next(iter(errors.values()), None)


async def view(bootstrap: str, group: str) -> str:
    admin = GroupAdmin({"bootstrap.servers": bootstrap})
    try:
        return (await admin.describe_groups([group]))[group].describe()
    finally:
        await admin.close()


@pytest.fixture
def java_consumers() -> Iterator[list[JavaProcess]]:
    started: list[JavaProcess] = []
    yield started
    for process in started:
        process.stop()


# The Java variant runs the same flow on a Java Connect worker from the 4.3.1 jars, for comparison: its
# admin client also describes each kind with its own API, but it attempts the commit to the active groups
# every round (the broker refuses it) and logs a WARN each time; the failover CLI steps are ours only.
@pytest.mark.parametrize("kind", ["pyconnect", pytest.param("java", marks=pytest.mark.long)])
def test_consumer_protocol_groups_are_synced_only_while_idle_on_the_target(
    kind: str,
    cluster_a: ClusterHandle,
    cluster_b: ClusterHandle,
    unique: Callable[[str], str],
    tmp_path: Path,
    java_consumers: list[JavaProcess],
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    prefix = unique("k848")
    topic, remote, other = f"{prefix}-t", f"A.{prefix}-t", unique("b-only")
    cons, both, rev, ahead = (unique(g) for g in ("cons", "both", "rev", "ahead"))
    asyncio.run(create_and_fill(a, topic, 2, RECORDS))
    expected = source_rows(a, topic, RECORDS)
    asyncio.run(fill_other(b, other, remote))

    # Consumer-protocol consumers of ``cons``, ``both`` and ``rev`` read part of the topic on A and
    # stop; on B consumers of ``both`` (consumer protocol) and ``rev`` (classic) keep running on a
    # B-only topic. All start at once.
    started = time.monotonic()
    on_a = [
        console_consumer(a, topic, cons, tmp_path / "a", 120),
        console_consumer(a, topic, both, tmp_path / "a", 60),
        console_consumer(a, topic, rev, tmp_path / "a", 90),
    ]
    java_consumers.extend(on_a)
    java_consumers.append(console_consumer(b, other, both, tmp_path / "b"))
    java_consumers.append(console_consumer(b, other, rev, tmp_path / "b", protocol="classic"))
    # ``ahead`` is classic on A; on B a consumer-protocol consumer of it reads the remote topic as the
    # mirror fills it: its offsets there end up past the checkpoints; stopped, it is an Empty
    # consumer-protocol group.
    java_consumers.append(console_consumer(b, remote, ahead, tmp_path / "b"))
    for process in java_consumers:
        process.start()
    asyncio.run(commit_group(a, ahead, topic))  # classic group on A
    wait_exited(on_a, 60)
    upstream = {g: asyncio.run(committed(a, g)) for g in (cons, both, rev, ahead)}
    assert all(upstream.values()), upstream
    print(f"\ngroups on A in {time.monotonic() - started:.1f} s: {upstream}")
    on_b, on_b_remote = java_consumers[3:5], java_consumers[5]
    active = {both: "consumer", rev: "classic"}
    for group, protocol in [*active.items(), (ahead, "consumer")]:
        # Described Stable by the API of its kind, and the coordinator refuses an admin commit.
        stable = f"Stable ({protocol} protocol, 1 member)"
        wait_for(f"{group} {stable} on B", lambda g=group, s=stable: asyncio.run(view(b, g)) == s, 60)
        assert asyncio.run(refused_commit(b, group, other)) in ACTIVE_GROUP_REJECTIONS

    workers: Sequence[Worker] = (
        python_workers(b, tmp_path, unique("k848-worker"), 1)
        if kind == "pyconnect"
        else [
            JavaConnectWorker(b, tmp_path / "java-worker", group_id=unique("k848-java"), die_with_parent=True)
        ]
    )
    with fleet(workers) as (worker,):
        connectors = {
            "mirror-source": mirror_config(cluster_a, cluster_b, f"{prefix}-.*", **{"tasks.max": "1"}),
            "mirror-checkpoint": flow(
                cluster_a,
                cluster_b,
                "MirrorCheckpointConnector",
                groups=f"{cons},{both},{rev},{ahead}",
                topics=f"{prefix}-.*",
                **{
                    "emit.checkpoints.interval.seconds": "1",
                    "refresh.groups.interval.seconds": "2",
                    "sync.group.offsets.enabled": "true",
                    "sync.group.offsets.interval.seconds": "1",
                    "checkpoints.topic.replication.factor": "1",
                },
            ),
        }
        for name, config in connectors.items():
            code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
            assert code == 201, body
        for name in connectors:
            wait_for(f"{name} RUNNING", functools.partial(running_tasks, worker, name, 1), 60)
        wait_mirrored(b, remote, expected, 60)
        posted = time.monotonic()

        def checkpointed(group: str) -> dict[tuple[str, int], int] | None:
            """The group's latest checkpoints once they cover its upstream positions and, on ours, once
            they are exact: a contiguous copy keeps offsets, so exact translation lands on the upstream
            position (Java's lands up to offset.lag.max before it). A checkpoint emitted before the
            offset sync that proves the copy contiguous reached B is not exact yet; a later one is."""
            latest = latest_checkpoints(b, group)
            want = {(remote, p): n for (_, p), n in upstream[group].items()}
            found = {tp: c.upstream_offset for tp, c in latest.items() if tp in want}
            if found != want:
                return None
            downstream = {tp: c.downstream_offset for tp, c in latest.items()}
            return downstream if kind == "java" or downstream == want else None

        downstream = {
            g: wait_for(f"checkpoints of {g}", functools.partial(checkpointed, g), 60) for g in upstream
        }

        # The idle consumer-protocol group is synced to B.
        wait_for(f"{cons} synced on B", lambda: asyncio.run(committed(b, cons)) == downstream[cons], 30)
        synced_s = time.monotonic() - posted

        # The running groups are not touched: several sync rounds later they hold only their own offsets.
        time.sleep(4)
        for group, process in zip(active, on_b, strict=True):
            assert set(asyncio.run(committed(b, group))) <= {(other, 0)}, group
            assert process.running
        log = worker.log_file.read_text(errors="replace")
        if kind == "java":
            refusals = {
                g: log.count(f"Unable to sync offsets for consumer group {g}.") for g in [*active, ahead]
            }
            print(f"\nJava: commit refusals logged at WARN while active: {refusals}")
            assert all(n >= 2 for n in refusals.values()), refusals
        for group, protocol in [*active.items(), (ahead, "consumer")] if kind == "pyconnect" else ():
            warned = [
                line for line in log.splitlines() if f"not syncing offsets of consumer group {group} " in line
            ]
            assert len(warned) == 1, warned
            assert "WARN" in warned[0] and f"Stable ({protocol} protocol, 1 member)" in warned[0], warned

        # A consumer-protocol group that ran on B and stopped (Empty) is never rewound: on 4.3.1
        # DescribeGroups calls it Dead, which reads as "new, commit everything".
        on_b_remote.stop()
        end = {(remote, p): len(rows) for p, rows in expected.items()}
        wait_for(f"{ahead} committed the end on B", lambda: asyncio.run(committed(b, ahead)) == end, 30)
        assert asyncio.run(view(b, ahead)) == "Empty (consumer protocol, 0 members)"
        assert all(downstream[ahead][tp] < end[tp] for tp in end), (downstream[ahead], end)
        time.sleep(3)  # three sync rounds
        assert asyncio.run(committed(b, ahead)) == end

        # Failover of the active consumer-protocol group is refused with one line.
        args = ["--group", both, "--from", "A", "--to", "B", "--bootstrap", f"A={a}", "--bootstrap", f"B={b}"]
        refused = cli(*args, "--execute")
        assert refused.returncode == 3, (refused.stdout, refused.stderr)
        lines = refused.stderr.strip().splitlines()
        assert lines == [
            f"pyconnect: refusing to commit: group {both} is Stable (consumer protocol, 1 member) on cluster B, "
            "not Empty; stop its consumers there and run again"
        ], refused.stderr
        assert set(asyncio.run(committed(b, both))) <= {(other, 0)}

        # Once its consumers stop, each group is synced (its own offsets on B kept).
        stopped = time.monotonic()
        for process in on_b:
            process.stop()
        for group in active:
            want = {**downstream[group], **{(other, 0): 5}}
            wait_for(
                f"{group} synced after stop", lambda g=group, w=want: asyncio.run(committed(b, g)) == w, 30
            )
        resumed_s = time.monotonic() - stopped

        # Idle now, the consumer-protocol group takes the failover: nothing left to move.
        done = cli(*args, "--execute")
        assert done.returncode == 0, (done.stdout, done.stderr)
        assert f"Group {both} on B: Empty" in done.stdout, done.stdout
        assert f"Committed 0 offsets of group {both} on cluster B" in done.stdout, done.stdout
        print(
            f"idle group synced {synced_s:.1f} s after the checkpoints; active ones {resumed_s:.1f} s after stop"
        )
