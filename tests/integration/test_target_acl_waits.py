"""A WRITE ACL removed from a target topic, then granted back, on the session's SASL cluster: the task's
batches for that topic wait with ACL_DENIED (naming the topic, WRITE and the principal) while another
topic flows, and every record arrives once the grant is back (pyconnect.kafka.target_lanes)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.admin import NewTopic
from aiokafka.protocol.admin import DeleteAclsRequest

from pyconnect.kafka.clients import consumer_client_kwargs, create_admin
from pyconnect.protocol.internal_records import State
from pyconnect.testing.kafka import KafkaCluster
from pyconnect.testing.kafka_security import grant
from tests.integration.target_wait_helpers import (
    PlannedTask,
    all_committed,
    connect_producer,
    expected,
    start_run,
    until,
)

pytestmark = pytest.mark.kafka

USER = "alice"
TOPIC, LITERAL, WRITE, ALLOW = 2, 3, 4, 3


@pytest.fixture
def sasl(secured_cluster: Callable[[str], KafkaCluster]) -> KafkaCluster:
    return secured_cluster("sasl_plaintext")


async def revoke_write(cluster: KafkaCluster, topic: str) -> None:
    admin = create_admin(cluster.client_properties("admin"))
    await admin.start()
    try:
        response = await admin._send_request(
            DeleteAclsRequest(TOPIC, topic, LITERAL, f"User:{USER}", "*", WRITE, ALLOW)
        )
        ((error, message, matching),) = response.filter_responses
        assert error == 0 and len(matching) == 1, (error, message, matching)
    finally:
        await admin.close()


async def copies_as_admin(cluster: KafkaCluster, topics: list[str]) -> dict[str, int]:
    """How many times each value is in ``topics``, read as the super user."""
    counted: dict[str, int] = {}
    for topic in topics:
        consumer = AIOKafkaConsumer(
            topic,
            **consumer_client_kwargs(cluster.client_properties("admin")),
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await consumer.start()
        try:
            idle = 0
            while idle < 2:
                got = await consumer.getmany(timeout_ms=1000)
                idle = 0 if got else idle + 1
                for batch in got.values():
                    for record in batch:
                        value = record.value.decode()
                        counted[value] = counted.get(value, 0) + 1
        finally:
            await consumer.stop()
    return counted


def acl_denied(trace: str | None) -> str | None:
    return trace if trace is not None and trace.startswith("ACL_DENIED: ") else None


async def test_a_refused_write_waits_with_acl_denied_until_the_grant_is_back(
    sasl: KafkaCluster, unique: Callable[[str], str]
) -> None:
    guarded, other = unique("guarded"), unique("open")
    admin_props = sasl.client_properties("admin")
    admin = create_admin(admin_props)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(guarded, 1, 1), NewTopic(other, 1, 1)])
    finally:
        await admin.close()
    for topic in (guarded, other):
        await grant(sasl, f"User:{USER}", "topic", topic, ["describe", "write"])
    producer_props = {k: v for k, v in sasl.client_properties(USER).items() if k != "bootstrap.servers"}
    task = PlannedTask({(guarded, 0): 100, (other, 0): 100}, batch=20)
    run = await start_run(
        task, connect_producer(sasl.bootstrap_servers, **producer_props), cluster="cluster S"
    )
    await until("the first records", lambda: all_committed(run, {(guarded, 0): 100, (other, 0): 100}), 30)

    await revoke_write(sasl, guarded)
    revoked = time.monotonic()
    limits = {(guarded, 0): 400, (other, 0): 400}
    task.limits.update(limits)
    trace = await until("ACL_DENIED", lambda: acl_denied(run.trace()), 30)
    to_condition = time.monotonic() - revoked
    assert f"WRITE on topic {guarded} is refused by cluster S for principal User:{USER}" in trace, trace
    await until("the other topic copied", lambda: all_committed(run, {(other, 0): 400}), 30)
    assert run.committed[(guarded, 0)] < 399 and State.FAILED not in run.states()

    granted = time.monotonic()
    await grant(sasl, f"User:{USER}", "topic", guarded, ["write"])
    await until("every record committed", lambda: all_committed(run, limits), 30)
    to_records = time.monotonic() - granted
    await until("the condition cleared", lambda: run.trace() is None, 10)
    run.runner.stop()
    assert await run.runner.wait_stopped(30)
    counted = await copies_as_admin(sasl, [guarded, other])
    assert set(counted) == expected(limits) and max(counted.values()) == 1
    assert State.FAILED not in run.states()
    print(
        f"\nWRITE revoked: ACL_DENIED after {to_condition:.1f} s; every record {to_records:.1f} s after the grant"
    )
