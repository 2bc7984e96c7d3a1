"""Topic administration the runtime needs: create-if-missing with Java's -1 defaults, partition counts.

Contract:
- ``ensure_topic`` creates the topic when it does not exist and returns its partition count either
  way (an existing topic is never altered). ``partitions=-1`` / ``replication_factor=-1`` mean "the
  broker's default" as in Java's TopicAdmin (KIP-464); they are resolved from the broker's
  ``num.partitions`` / ``default.replication.factor`` because aiokafka speaks CreateTopics only up to
  v3, which does not accept -1.
- ``partition_counts`` reports the partition count of each existing topic and omits missing ones.
- Errors other than "already exists" raise ``TopicAdminError`` with the broker's code and message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

TOPIC_ALREADY_EXISTS = 36
UNKNOWN_TOPIC_OR_PARTITION = 3


class TopicAdminError(RuntimeError):
    """A topic could not be created or described."""


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int = -1
    replication_factor: int = -1
    configs: Mapping[str, str] = field(default_factory=dict)


async def broker_defaults(admin: AIOKafkaAdminClient) -> dict[str, str]:
    """``num.partitions`` and ``default.replication.factor`` of one broker of the cluster."""
    metadata = await admin.describe_cluster()
    broker_id = metadata["brokers"][0]["node_id"]
    wanted = {"num.partitions": None, "default.replication.factor": None}
    responses = await admin.describe_configs(
        [ConfigResource(ConfigResourceType.BROKER, str(broker_id), wanted)]
    )
    values: dict[str, str] = {}
    for response in responses:
        for resource in response.to_object()["resources"]:
            for entry in resource["config_entries"]:
                values[entry["config_names"]] = entry["config_value"]
    return values


async def partition_counts(admin: AIOKafkaAdminClient, topics: Iterable[str]) -> dict[str, int]:
    """Partition counts of the topics that exist. Missing topics are filtered out by listing first:
    a metadata request naming a missing topic would auto-create it on brokers that allow that."""
    existing = set(await admin.list_topics())
    wanted = [t for t in topics if t in existing]
    if not wanted:
        return {}
    counts = {}
    for topic in await admin.describe_topics(wanted):
        if topic["error_code"] == 0:
            counts[topic["topic"]] = len(topic["partitions"])
        elif topic["error_code"] != UNKNOWN_TOPIC_OR_PARTITION:
            raise TopicAdminError(
                f"describing topic {topic['topic']} failed with error code {topic['error_code']}"
            )
    return counts


async def ensure_topic(admin: AIOKafkaAdminClient, spec: TopicSpec) -> int:
    """Create ``spec`` if missing; return the topic's partition count."""
    existing = await partition_counts(admin, [spec.name])
    if spec.name in existing:
        return existing[spec.name]
    partitions, replication = spec.partitions, spec.replication_factor
    if partitions == -1 or replication == -1:
        defaults = await broker_defaults(admin)
        if partitions == -1:
            partitions = int(defaults.get("num.partitions") or 1)
        if replication == -1:
            replication = int(defaults.get("default.replication.factor") or 1)
    response = await admin.create_topics(
        [NewTopic(spec.name, partitions, replication, topic_configs=dict(spec.configs))]
    )
    for topic, code, *message in response.topic_errors:
        if code not in (0, TOPIC_ALREADY_EXISTS):
            detail = message[0] if message and message[0] else f"error code {code}"
            raise TopicAdminError(f"creating topic {topic} failed: {detail}")
    for _ in range(50):
        counts = await partition_counts(admin, [spec.name])
        if spec.name in counts:
            return counts[spec.name]
        await asyncio.sleep(0.1)
    raise TopicAdminError(f"topic {spec.name} was created but its metadata did not appear")


async def topic_config(admin: AIOKafkaAdminClient, topic: str, names: Iterable[str]) -> dict[str, str] | None:
    """Current values of the topic-level configs ``names`` (missing entries omitted); ``None`` when the
    topic's configs cannot be described (missing topic, no permission, old broker)."""
    wanted = dict.fromkeys(names)
    try:
        responses = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic, wanted)])
    except Exception:
        return None
    values: dict[str, str] = {}
    for response in responses:
        for resource in response.to_object()["resources"]:
            if resource["error_code"] != 0:
                return None
            for entry in resource["config_entries"]:
                if entry["config_value"] is not None:
                    values[entry["config_names"]] = entry["config_value"]
    return values


async def kafka_cluster_id(admin: AIOKafkaAdminClient) -> str:
    """The cluster id the brokers report (``GET /`` shows it as ``kafka_cluster_id``)."""
    description = await admin.describe_cluster()
    return str(description["cluster_id"])
