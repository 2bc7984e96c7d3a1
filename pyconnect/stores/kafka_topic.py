"""Where a Kafka-backed store lives: an internal topic, how to create it, and the clients to tail it.

``InternalTopic.prepare()`` runs once before the store's log starts (Java's ``KafkaBasedLog`` topic
initializer): create the topic when it is missing (compacted, the configured partitions and
replication factor, ``-1`` = broker default), then require ``cleanup.policy=compact`` on an existing
topic (skipped when the configs cannot be described, as Java does). ``open(on_records)`` builds the
``KafkaLog``. The stores only see the two methods, which :class:`~pyconnect.stores.memory.MemoryTopic`
also has. The client configs (worker keys, internal-topic producer settings, client ids) come from
:mod:`pyconnect.config.client_configs`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyconnect.errors import ConfigError
from pyconnect.kafka.clients import create_admin
from pyconnect.kafka.log import KafkaLog, RecordsCallback
from pyconnect.kafka.topics import TopicSpec, ensure_topic, topic_config

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class InternalTopic:
    """One internal topic of the worker and the client settings (Java keys) used to reach it.

    ``worker_topic_config`` / ``purpose`` name the topic in errors exactly as Java does (e.g.
    ``config.storage.topic`` / ``connector configurations``).
    """

    name: str
    client_config: Mapping[str, Any]
    partitions: int
    replication_factor: int = -1
    topic_configs: Mapping[str, Any] = field(default_factory=dict)
    producer_config: Mapping[str, Any] = field(default_factory=dict)
    consumer_config: Mapping[str, Any] = field(default_factory=dict)
    worker_topic_config: str = ""
    purpose: str = ""
    create: bool = True

    async def prepare(self) -> None:
        admin = create_admin(self.client_config)
        await admin.start()
        try:
            if self.create:
                configs = {k: str(v) for k, v in self.topic_configs.items()}
                configs["cleanup.policy"] = "compact"
                await ensure_topic(
                    admin, TopicSpec(self.name, self.partitions, self.replication_factor, configs)
                )
            policy = await topic_config(admin, self.name, ["cleanup.policy"])
            if policy is None:
                log.warning(
                    "Unable to use admin client to verify the cleanup policy of '%s' topic is 'compact', either because "
                    "the broker is an older version or because the Kafka principal used for Connect internal topics "
                    "does not have the required permission to describe topic configurations.",
                    self.name,
                )
                return
            found = policy.get("cleanup.policy")
            policies = {p.strip() for p in (found or "").split(",") if p.strip()}
            if policies and policies != {"compact"}:
                raise ConfigError(
                    f"Topic '{self.name}' supplied via the '{self.worker_topic_config}' property is required to have "
                    f"'cleanup.policy=compact' to guarantee consistency and durability of {self.purpose}, but found the "
                    f"topic currently has 'cleanup.policy={found}'. Continuing would likely result in eventually losing "
                    f"{self.purpose} and problems restarting this Connect cluster in the future. Change the "
                    f"'{self.worker_topic_config}' property in the Connect worker configurations to use a topic with "
                    "'cleanup.policy=compact'."
                )
        finally:
            await admin.close()

    def open(self, on_records: RecordsCallback, *, read_only: bool = False) -> KafkaLog:
        return KafkaLog(
            self.name,
            self.client_config,
            on_records,
            producer_config=self.producer_config,
            consumer_config=self.consumer_config,
            read_only=read_only,
        )
