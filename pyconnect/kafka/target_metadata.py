"""What an aiokafka producer knows about its target, read for the lanes (pyconnect.kafka.target_lanes):
the one place they reach into the producer's client and accumulator.

- :func:`readiness`: whether a batch for ``topic``/``partition`` can go now, from the producer's
  metadata as it stands (no request): ``None``; a :class:`~pyconnect.kafka.target_waits.Blocked` (the
  topic or the partition missing, the topic hidden by an ACL); or :data:`NO_LEADER` (a leader
  election: nothing to tell an operator, the producer retries). aiokafka's own table is read in place
  (``ClusterMetadata._partitions``; its accessors copy a set per call); other clients through
  ``partitions_for_topic`` and ``leader_for_partition``.
- :func:`withdraw_queued`: the partition's batches still queued in the producer (not yet on the wire)
  are taken out of the accumulator (``MessageAccumulator._batches``) and failed with ``error``: their
  futures and drain waiters (read at once, so asyncio never reports them) say so to whoever waits.
- :func:`max_message_bytes`: the topic's ``max.message.bytes`` as a broker describes it (one
  DescribeConfigs through the producer's own client, bounded by ``timeout_s``), or ``None`` when it
  cannot say (no DESCRIBE_CONFIGS for this principal, no answer).
- :func:`sasl_principal`: ``User:<name>`` of a producer that authenticates with a user name.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiokafka.errors import KafkaError
from aiokafka.protocol.admin import DescribeConfigsRequest
from aiokafka.structs import TopicPartition

from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.target_waits import ACL_DENIED, Blocked, missing

NO_LEADER = object()
"""Not ready, for no reason an operator is told about (a leader election; the producer retries)."""
_TOPIC_RESOURCE = 2
_SASL_USER_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def readiness(
    producer: Any, topic: str, partition: int, principal: str | None = None
) -> Blocked | object | None:
    """See the module docstring."""
    cluster = producer.client.cluster
    if topic in getattr(cluster, "unauthorized_topics", ()):
        return Blocked(ACL_DENIED, topic, partition, operation="DESCRIBE", principal=principal)
    table = seam.cluster_partitions_table(cluster)
    if type(table) is dict:
        found = table.get(topic)
        if found is None:
            return missing(topic, partition, None)
        state = found.get(partition)
        if state is None:
            return missing(topic, partition, len(found))
        return NO_LEADER if state.leader is None or state.leader == -1 else None
    known = cluster.partitions_for_topic(topic)
    if known is None:
        return missing(topic, partition, None)
    if partition not in known:
        return missing(topic, partition, len(known))
    leader_of = getattr(cluster, "leader_for_partition", None)
    if leader_of is not None:
        leader = leader_of(TopicPartition(topic, partition))
        if leader is None or leader == -1:
            return NO_LEADER
    return None


def withdraw_queued(producer: Any, topic: str, partition: int, error: BaseException) -> int:
    """See the module docstring; returns how many batches were withdrawn."""
    accumulator = seam.producer_accumulator(producer)
    queues = seam.accumulator_queues(accumulator)
    if not queues:
        return 0
    queue = queues.pop(TopicPartition(topic, partition), None) or ()
    for queued in queue:
        queued.failure(error)
        waiter = seam.batch_drain_waiter(queued)
        if waiter is not None and waiter.done() and not waiter.cancelled():
            waiter.exception()
    return len(queue)


async def max_message_bytes(producer: Any, topic: str, timeout_s: float) -> int | None:
    """See the module docstring."""
    client = producer.client
    try:
        node = client.get_random_node()
        if node is None:
            return None
        request = DescribeConfigsRequest([(_TOPIC_RESOURCE, topic, ["max.message.bytes"])])
        async with asyncio.timeout(timeout_s):
            response = await client.send(node, request)
        for resource in response.to_object()["resources"]:
            if resource["error_code"] == 0:
                for entry in resource["config_entries"]:
                    if entry["config_names"] == "max.message.bytes":
                        return int(entry["config_value"])
    except (KafkaError, OSError, TimeoutError, ValueError, KeyError, TypeError):
        return None
    return None


def sasl_principal(producer: Any) -> str | None:
    """See the module docstring."""
    client = getattr(producer, "client", None)
    security_protocol, user, mechanism = seam.client_sasl(client)
    protocol = str(security_protocol or "")
    if protocol.startswith("SASL") and user and mechanism in _SASL_USER_MECHANISMS:
        return f"User:{user}"
    return None
