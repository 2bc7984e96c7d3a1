"""A source task's target that is not ready never fails the task (pyconnect.kafka.target_lanes), on real
Kafka: the waiting partition says why with a condition on the task's board (its RUNNING trace), the
task's other partitions and topics keep flowing, and the copy resumes within seconds of the operator's
fix with every record there once; a task stopped or cancelled while blocked commits what the target
acknowledged, so its next instance copies nothing twice.

The target is a private one-node cluster with ``auto.create.topics.enable=false`` and a network route
(``w``) whose proxy can delay or cut the producer's traffic; ACLs are on the session's SASL cluster.
Each test prints what it measured (time to the condition, time to recovery after the fix).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterator

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from pyconnect.kafka.target_waits import WaitBounds
from pyconnect.kafka.task_transactions import TaskTransactions
from pyconnect.log_guard import RepeatGuard
from pyconnect.protocol.internal_records import State
from pyconnect.testing.kafka import KafkaCluster, start_clusters, stop_clusters
from tests.integration.fleet import create_topic, read_topic
from tests.integration.target_wait_helpers import (
    PlannedTask,
    Run,
    all_committed,
    connect_producer,
    copies,
    expected,
    start_run,
    until,
)

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    clusters = start_clusters(
        ["T"],
        tmp_path_factory.mktemp("target-waits"),
        overrides={"auto.create.topics.enable": "false"},
        routes=("w",),
        die_with_parent=True,
    )
    try:
        yield clusters["T"]
    finally:
        stop_clusters(clusters.values(), timeout=15)


async def grow(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_partitions({topic: NewPartitions(partitions)})
    finally:
        await admin.close()


async def set_topic_config(bootstrap: str, topic: str, configs: dict[str, str]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs)])
    finally:
        await admin.close()


async def stop(run: Run) -> None:
    run.runner.stop()
    assert await run.runner.wait_stopped(30)


def condition_line(run: Run, code: str) -> str | None:
    trace = run.trace()
    return trace if trace is not None and trace.startswith(f"{code}: ") else None


async def test_a_partition_the_target_lacks_waits_while_the_rest_of_the_task_flows(
    target: KafkaCluster, unique: Callable[[str], str]
) -> None:
    """The source has 3 partitions, the target topic 1 (a router's smaller topic, or one the broker
    auto-created): partitions 1 and 2 wait with TARGET_TOPIC_MISSING, partition 0 and another topic
    flow; partitions added -> every record arrives once and the condition clears."""
    bootstrap = target.bootstrap_servers
    small, other = unique("small"), unique("other")
    await create_topic(bootstrap, small, 1)
    await create_topic(bootstrap, other, 2)
    limits = {(small, 0): 300, (small, 1): 300, (small, 2): 300, (other, 0): 300, (other, 1): 300}
    began = time.monotonic()
    run = await start_run(PlannedTask(limits), connect_producer(bootstrap))
    line = await until("TARGET_TOPIC_MISSING", lambda: condition_line(run, "TARGET_TOPIC_MISSING"), 20)
    to_condition = time.monotonic() - began
    assert f"topic {small} on cluster T has 1 partition(s) (3 wanted, 1 present)" in line, line
    flowing = {tp: n for tp, n in limits.items() if tp[0] == other or tp[1] == 0}
    await until("the other partitions copied", lambda: all_committed(run, flowing), 20)
    assert run.states() == [State.RUNNING] * len(run.states())

    fixed = time.monotonic()
    await grow(bootstrap, small, 3)
    await until("every record committed", lambda: all_committed(run, limits), 30)
    to_records = time.monotonic() - fixed
    await until("the condition cleared", lambda: run.trace() is None, 10)
    to_clear = time.monotonic() - fixed
    await stop(run)
    counted = await copies(bootstrap, [small, other])
    assert set(counted) == expected(limits) and max(counted.values()) == 1
    assert State.FAILED not in run.states()
    print(
        f"\nmissing partitions: condition after {to_condition:.1f} s; after the partitions were added, "
        f"every record in {to_records:.1f} s, condition cleared in {to_clear:.1f} s; "
        f"{sum(counted.values())} records, 0 duplicates"
    )


async def test_a_topic_the_target_does_not_create_waits_until_the_operator_creates_it(
    target: KafkaCluster, unique: Callable[[str], str]
) -> None:
    """``auto.create.topics.enable=false``: the task does not fail after the client's metadata timeout
    (40 s) but waits with TARGET_TOPIC_MISSING; the operator creates the topic -> every record."""
    bootstrap = target.bootstrap_servers
    absent, other = unique("absent"), unique("other")
    await create_topic(bootstrap, other, 1)
    limits = {(absent, 0): 200, (absent, 1): 200, (other, 0): 200}
    began = time.monotonic()
    run = await start_run(PlannedTask(limits), connect_producer(bootstrap))
    line = await until("TARGET_TOPIC_MISSING", lambda: condition_line(run, "TARGET_TOPIC_MISSING"), 20)
    to_condition = time.monotonic() - began
    assert f"topic {absent} does not exist on cluster T (2 wanted, 0 present)" in line, line
    await until("the other topic copied", lambda: all_committed(run, {(other, 0): 200}), 20)

    fixed = time.monotonic()
    await create_topic(bootstrap, absent, 2)
    await until("every record committed", lambda: all_committed(run, limits), 30)
    to_records = time.monotonic() - fixed
    await until("the condition cleared", lambda: run.trace() is None, 10)
    await stop(run)
    counted = await copies(bootstrap, [absent, other])
    assert set(counted) == expected(limits) and max(counted.values()) == 1
    assert State.FAILED not in run.states()
    print(
        f"\nabsent topic: condition after {to_condition:.1f} s; every record {to_records:.1f} s after creation"
    )


async def test_a_record_larger_than_the_topic_accepts_waits_until_the_limit_is_raised(
    target: KafkaCluster, unique: Callable[[str], str]
) -> None:
    """A 20,000-byte record for a topic whose ``max.message.bytes`` is 12,000: RECORD_TOO_LARGE naming
    the partition, the size and the limit; the other partition flows; the limit raised -> the record
    and those behind it arrive, in order, once."""
    bootstrap = target.bootstrap_servers
    topic = unique("large")
    await create_topic(bootstrap, topic, 2, {"max.message.bytes": "12000"})
    limits = {(topic, 0): 100, (topic, 1): 100}
    task = PlannedTask(limits, batch=20, sizes={(topic, 0, 30): 20_000})
    began = time.monotonic()
    run = await start_run(task, connect_producer(bootstrap))
    line = await until("RECORD_TOO_LARGE", lambda: condition_line(run, "RECORD_TOO_LARGE"), 20)
    to_condition = time.monotonic() - began
    assert f"for {topic}-0 as larger than the topic's max.message.bytes (12000)" in line, line
    assert "1 record(s)" in line and "subject " + f"{topic}-0" in line, line
    await until("the other partition copied", lambda: all_committed(run, {(topic, 1): 100}), 20)
    assert run.committed.get((topic, 0), -1) == 29  # nothing past the refused record

    fixed = time.monotonic()
    await set_topic_config(bootstrap, topic, {"max.message.bytes": "1048588"})
    await until("every record committed", lambda: all_committed(run, limits), 30)
    to_records = time.monotonic() - fixed
    await until("the condition cleared", lambda: run.trace() is None, 10)
    await stop(run)
    counted = await copies(bootstrap, [topic])
    assert set(counted) == expected(limits) and max(counted.values()) == 1
    print(
        f"\nrecord too large: condition after {to_condition:.1f} s; every record {to_records:.1f} s after the fix"
    )


@pytest.mark.parametrize("ending", ["stop", "cancel"])
async def test_a_task_ended_while_a_partition_waits_commits_what_was_acknowledged(
    target: KafkaCluster, unique: Callable[[str], str], ending: str
) -> None:
    """A reconfiguration while partition 1 waits for the target: the task is stopped (or cancelled, its
    graceful bound passed); a new instance starts from the committed offsets; the partition is added.
    Nothing the target acknowledged is copied twice."""
    bootstrap = target.bootstrap_servers
    topic = unique("reconf")
    await create_topic(bootstrap, topic, 1)
    limits = {(topic, 0): 500, (topic, 1): 500}
    first = await start_run(PlannedTask(limits), connect_producer(bootstrap), graceful_s=1)
    await until("waiting", lambda: condition_line(first, "TARGET_TOPIC_MISSING"), 20)
    await until("partition 0 acknowledged", lambda: first.runner.records_written >= 500, 20)
    if ending == "stop":
        await stop(first)
    else:
        assert not await first.runner.wait_stopped(0)  # cancelled at once: the graceful bound passed
    assert first.committed.get((topic, 0)) == 499 and (topic, 1) not in first.committed
    assert State.FAILED not in first.states()

    await grow(bootstrap, topic, 2)
    second = await start_run(
        PlannedTask(limits, start=first.committed),
        connect_producer(bootstrap),
        committed=dict(first.committed),
    )
    await until("every record committed", lambda: all_committed(second, limits), 30)
    await stop(second)
    counted = await copies(bootstrap, [topic])
    assert set(counted) == expected(limits)
    duplicates = sum(counted.values()) - len(counted)
    print(
        f"\n{ending} while blocked on a missing partition: {sum(counted.values())} records, {duplicates} duplicates"
    )
    assert duplicates == 0


async def test_a_task_cancelled_while_the_target_is_slow_commits_what_it_acknowledged(
    target: KafkaCluster, unique: Callable[[str], str]
) -> None:
    """Every request takes over a second to answer (a delayed route); the task is cancelled with
    batches in flight; what the target acknowledged (before the cancel, and while the producer closed)
    is committed, so the next instance copies none of it again."""
    bootstrap = target.bootstrap_servers
    route = target.route("w")
    topic = unique("slow")
    await create_topic(bootstrap, topic, 2)
    limits = {(topic, 0): 400, (topic, 1): 400}
    first = await start_run(PlannedTask(limits, batch=20), connect_producer(route.bootstrap_servers))
    try:
        await until("some records acknowledged", lambda: first.runner.records_written >= 100, 20)
        route.delay(0.6)
        await asyncio.sleep(1.0)
        assert first.runner.records_written < 800
        assert not await first.runner.wait_stopped(0)
    finally:
        route.heal()
    written = first.runner.records_written
    assert all(first.committed.get(tp, -1) >= 0 for tp in limits)

    second = await start_run(
        PlannedTask(limits, start=first.committed),
        connect_producer(bootstrap),
        committed=dict(first.committed),
    )
    await until("every record committed", lambda: all_committed(second, limits), 30)
    await stop(second)
    counted = await copies(bootstrap, [topic])
    assert set(counted) == expected(limits)
    duplicates = sum(counted.values()) - len(counted)
    print(f"\ncancelled on a slow target after {written} acknowledged: {duplicates} duplicates")
    twice = sorted(
        (v for v, n in counted.items() if n > 1), key=lambda v: (v.split(":")[1], int(v.split(":")[2]))
    )
    # what to look at when this fails: which records, against what the first run committed
    assert duplicates == 0, (twice[:3], twice[-3:], first.committed, written, first.runner.records_written)


async def test_a_target_that_answers_nothing_is_unreachable_until_it_answers_again(
    target: KafkaCluster, unique: Callable[[str], str]
) -> None:
    """The route to the target is cut (half-open) for 8 s, four times the reachability bound: the task
    raises TARGET_UNREACHABLE, stays RUNNING, and clears it once acknowledgements resume; no record is
    lost."""
    route = target.route("w")
    topic = unique("cut")
    await create_topic(target.bootstrap_servers, topic, 1)
    limits = {(topic, 0): 1000}
    task = PlannedTask({(topic, 0): 100}, batch=10)
    run = await start_run(task, connect_producer(route.bootstrap_servers), bounds=WaitBounds(None, 2.0))
    try:
        await until("the first records", lambda: all_committed(run, {(topic, 0): 100}), 20)
        route.blackhole()
        cut = time.monotonic()
        task.limits[(topic, 0)] = 1000
        await until("TARGET_UNREACHABLE", lambda: condition_line(run, "TARGET_UNREACHABLE"), 20)
        to_condition = time.monotonic() - cut
        await asyncio.sleep(max(0.0, 8.0 - (time.monotonic() - cut)))
    finally:
        route.heal()
    healed = time.monotonic()
    await until("the condition cleared", lambda: run.trace() is None, 60)
    to_clear = time.monotonic() - healed
    await until("every record committed", lambda: all_committed(run, limits), 60)
    await stop(run)
    counted = await copies(target.bootstrap_servers, [topic])
    assert set(counted) == expected(limits) and State.FAILED not in run.states()
    print(
        f"\ncut route: TARGET_UNREACHABLE after {to_condition:.1f} s, cleared {to_clear:.1f} s after healing"
    )


async def test_past_its_wait_bound_the_task_fails_naming_topic_partition_and_count(
    target: KafkaCluster, unique: Callable[[str], str], caplog: pytest.LogCaptureFixture
) -> None:
    """``pyconnect.target.wait.max.ms``: a partition still missing after the bound fails the task with
    our error (never the client's assertion), logged once at ERROR even through the quiet-logs guard."""
    bootstrap = target.bootstrap_servers
    topic = unique("bounded")
    await create_topic(bootstrap, topic, 1)
    limits = {(topic, 0): 50, (topic, 1): 50}
    run = await start_run(PlannedTask(limits), connect_producer(bootstrap), bounds=WaitBounds(2.0))
    await until("FAILED", lambda: State.FAILED in run.states(), 20)
    assert await run.runner.wait_stopped(30)
    (trace,) = [t for _item, state, t in run.reporter.reports if state == State.FAILED]
    assert trace is not None
    first = trace.splitlines()[0]
    assert first.startswith(
        "pyconnect.kafka.target_waits.TargetWaitExceeded: Gave up waiting for partition 1 of topic "
        f"{topic} on cluster T after "
    ), first
    assert first.endswith("ms (pyconnect.target.wait.max.ms=2000): the topic has 1 partition(s)"), first
    assert "AssertionError" not in trace and "Unrecognized partition" not in trace
    failures = [r for r in caplog.records if r.getMessage().startswith("Task c-0 failed")]
    assert len(failures) == 1 and failures[0].getMessage() == f"Task c-0 failed: {first}"
    guard = RepeatGuard()
    assert guard.filter(failures[0]) and failures[0].levelno == logging.ERROR


def eos_producer(bootstrap: str, group: str) -> AIOKafkaProducer:
    return AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, transactional_id=f"{group}-c-0"
    )


async def read_offsets(bootstrap: str, offsets_topic: str) -> dict[tuple[str, int], int]:
    """The source offsets committed to ``offsets_topic`` (visible to read_committed), newest last."""
    found: dict[tuple[str, int], int] = {}
    for _partition, _offset, key, value in await read_topic(bootstrap, offsets_topic, idle_reads=2):
        if key is not None and value is not None:
            partition = json.loads(key)[1]
            found[(partition["topic"], partition["partition"])] = json.loads(value)["n"]
    return found


async def test_an_exactly_once_task_stopped_while_a_partition_waits_aborts_and_copies_nothing_twice(
    target: KafkaCluster, unique: Callable[[str], str]
) -> None:
    """Under exactly-once the hand-over waits in place (the transaction needs every batch): the task
    raises TARGET_TOPIC_MISSING, a stop aborts the open transaction instead of failing, and the next
    instance, started from the committed offsets, leaves every record visible once to read_committed."""
    bootstrap = target.bootstrap_servers
    topic, offsets_topic, group = unique("eos"), unique("offsets"), unique("g")
    await create_topic(bootstrap, topic, 1)
    await create_topic(bootstrap, offsets_topic, 1)
    task = PlannedTask({(topic, 0): 200, (topic, 1): 0})
    producer = eos_producer(bootstrap, group)
    first = await start_run(task, producer, transactions=TaskTransactions(producer, offsets_topic, "c-0"))
    await until("partition 0 committed", lambda: first.runner.commits >= 4, 20)
    task.limits.update({(topic, 0): 400, (topic, 1): 200})
    await until("waiting", lambda: condition_line(first, "TARGET_TOPIC_MISSING"), 20)
    await stop(first)
    assert State.FAILED not in first.states()

    await grow(bootstrap, topic, 2)
    committed = await read_offsets(bootstrap, offsets_topic)
    assert committed.get((topic, 0), -1) >= 199 and (topic, 1) not in committed
    limits = {(topic, 0): 400, (topic, 1): 200}
    left = sum(n - committed.get(tp, -1) - 1 for tp, n in limits.items())
    producer = eos_producer(bootstrap, group)
    second = await start_run(
        PlannedTask(limits, start=committed),
        producer,
        transactions=TaskTransactions(producer, offsets_topic, "c-0"),
    )
    await until("every record sent", lambda: second.runner.records_written >= left, 30)
    await stop(second)
    counted = await copies(bootstrap, [topic], "read_committed")
    assert set(counted) == expected(limits)
    duplicates = sum(counted.values()) - len(counted)
    print(
        f"\nexactly-once stop while blocked: {sum(counted.values())} records visible, {duplicates} duplicates"
    )
    assert duplicates == 0


@pytest.mark.long
@pytest.mark.timeout(600)
async def test_a_task_rides_out_a_target_outage_of_minutes(
    target: KafkaCluster, unique: Callable[[str], str]
) -> None:
    """The target's only broker killed for 150 s (five times the producer's request timeout, more than
    its metadata timeouts): the task stays RUNNING with TARGET_UNREACHABLE, and after the restart the
    condition clears and every record arrives (the short run: the 8 s cut route above)."""
    bootstrap = target.bootstrap_servers
    topic = unique("outage")
    await create_topic(bootstrap, topic, 2)
    task = PlannedTask({(topic, 0): 100, (topic, 1): 100}, batch=10)
    run = await start_run(task, connect_producer(bootstrap), bounds=WaitBounds(None, 5.0))
    await until("the first records", lambda: all_committed(run, {(topic, 0): 100, (topic, 1): 100}), 30)
    (node,) = target.nodes
    node.kill()
    killed = time.monotonic()
    try:
        limits = {(topic, 0): 2000, (topic, 1): 2000}
        task.limits.update(limits)
        await until("TARGET_UNREACHABLE", lambda: condition_line(run, "TARGET_UNREACHABLE"), 30)
        to_condition = time.monotonic() - killed
        await asyncio.sleep(max(0.0, 150.0 - (time.monotonic() - killed)))
        assert State.FAILED not in run.states()
    finally:
        node.start()
        await asyncio.get_running_loop().run_in_executor(None, target.wait_ready)
    restarted = time.monotonic()
    await until("the condition cleared", lambda: run.trace() is None, 120)
    to_clear = time.monotonic() - restarted
    await until("every record committed", lambda: all_committed(run, limits), 120)
    await stop(run)
    counted = await copies(bootstrap, [topic])
    assert set(counted) == expected(limits) and State.FAILED not in run.states()
    print(
        f"\n150 s outage: TARGET_UNREACHABLE after {to_condition:.1f} s, cleared {to_clear:.1f} s after the "
        f"restart; {sum(counted.values())} records, {sum(counted.values()) - len(counted)} duplicates"
    )
