"""The dead-letter-queue topic of one sink task (Java ``DeadLetterQueueReporter``'s Kafka side).

Contract: ``start()`` creates the topic when it is missing (1 partition, the configured replication
factor; ``-1`` = the broker default; "already exists" is fine), then starts the producer; a failure
raises ``ConnectError("Could not initialize dead letter queue with topic=<t>")`` and leaves no open
client. ``send(key, value, headers, timestamp)`` queues one record and returns a future that is done
when Kafka acknowledged it (or failed). ``stop()`` flushes and closes; idempotent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from aiokafka import AIOKafkaProducer

from pyconnect.errors import ConnectError
from pyconnect.kafka.access import cluster_label, start_client
from pyconnect.kafka.clients import create_producer
from pyconnect.kafka.mirror_admin import MirrorAdmin, NewTopicSpec


class DeadLetterQueueWriter:
    def __init__(
        self,
        topic: str,
        replication_factor: int,
        producer_config: Mapping[str, Any],
        admin_config: Mapping[str, Any],
    ) -> None:
        self.topic = topic
        self._replication_factor = replication_factor
        self._producer_config = dict(producer_config)
        self._admin_config = dict(admin_config)
        self._producer: AIOKafkaProducer | None = None

    async def start(self) -> None:
        admin = MirrorAdmin(self._admin_config)
        try:
            await admin.start()
            if self.topic not in await admin.topic_partitions():
                errors = await admin.create_topics(
                    [NewTopicSpec(self.topic, 1, self._replication_factor, {})]
                )
                if errors.get(self.topic):
                    raise ConnectError(f"{errors[self.topic]}")
        except Exception as exc:
            raise ConnectError(
                f"Could not initialize dead letter queue with topic={self.topic}: {exc}"
            ) from exc
        finally:
            await admin.close()
        producer = create_producer(self._producer_config)
        await start_client(producer, self._producer_config, cluster_label(self._producer_config))
        self._producer = producer

    async def send(
        self,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[tuple[str, bytes | None]],
        timestamp: int | None,
    ) -> asyncio.Future[Any]:
        if self._producer is None:
            raise ConnectError(f"the dead letter queue producer for {self.topic} is not running")
        return await self._producer.send(
            self.topic,
            value,
            key=key,
            headers=[(k, v if v is not None else b"") for k, v in headers],
            timestamp_ms=timestamp,
        )

    async def stop(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.stop()
