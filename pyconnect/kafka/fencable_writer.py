"""The leader's fencable writer of the config topic (KIP-618; Java ``KafkaConfigBackingStore``'s
``fencableProducer``), used when ``exactly.once.source.support`` is ``preparing`` or ``enabled``.

Contract:
- ``start`` creates a producer with ``transactional.id=connect-cluster-<group.id>`` and initialises its
  transactions, which fences the producer of any earlier leader (its next transaction fails). It waits
  for the producer id at most its ``max.block.ms`` (Java's ``initTransactions``), 60 s at most; a refused ACL
  or no coordinator raises the error :func:`~pyconnect.kafka.transaction_access.transaction_refusal`
  words (naming the transactional id, the operations and the fix);
- ``send(records, timeout)`` writes the records to partition 0 of the config topic in one
  transaction and returns once it is committed; any failure (fenced by a newer leader, timeout, broker
  error) raises :class:`PrivilegedWriteError` and the writer is closed: privileges must be claimed
  again;
- ``close`` is idempotent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from aiokafka import AIOKafkaProducer

from pyconnect.config.client_configs import JAVA_MAX_BLOCK_MS
from pyconnect.errors import ConnectError
from pyconnect.kafka.access import cluster_label
from pyconnect.kafka.clients import create_producer
from pyconnect.kafka.transaction_access import init_timeout_s, transaction_refusal

log = logging.getLogger(__name__)


class PrivilegedWriteError(ConnectError):
    """Java ``PrivilegedWriteException``: a transactional write to the config topic failed."""


class FencableConfigWriter:
    """One transactional producer of the config topic (see the module docstring)."""

    def __init__(self, topic: str, producer_config: Mapping[str, Any]) -> None:
        self._topic = topic
        self._config = dict(producer_config)
        self._producer: AIOKafkaProducer | None = None

    @property
    def transactional_id(self) -> str:
        return str(self._config["transactional.id"])

    async def start(self) -> None:
        if self._producer is not None:
            return
        producer = create_producer(self._config)
        timeout_s = init_timeout_s(int(self._config.get("max.block.ms") or JAVA_MAX_BLOCK_MS) / 1000)
        try:
            async with asyncio.timeout(timeout_s):
                await producer.start()
        except BaseException as exc:
            await producer.stop()
            if isinstance(exc, Exception):
                refusal = transaction_refusal(
                    exc,
                    self.transactional_id,
                    cluster_label(self._config),
                    initialising=True,
                    timeout_s=timeout_s,
                )
                if refusal is not None:
                    raise refusal from exc
            raise
        self._producer = producer

    async def send(self, records: Sequence[tuple[bytes, bytes | None]], timeout: float) -> None:
        producer = self._producer
        if producer is None:
            raise PrivilegedWriteError(
                "Cannot produce to config topic without claiming write privileges first"
            )
        try:
            await asyncio.wait_for(self._transaction(producer, records), timeout)
        except Exception as exc:
            log.warning("Failed to perform fencable send to config topic %s: %s", self._topic, exc)
            await self.close()
            raise PrivilegedWriteError("Failed to perform fencable send to config topic") from exc

    async def _transaction(
        self, producer: AIOKafkaProducer, records: Sequence[tuple[bytes, bytes | None]]
    ) -> None:
        async with producer.transaction():
            sent = [await producer.send(self._topic, value, key=key, partition=0) for key, value in records]
            await asyncio.gather(*sent)

    async def close(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            try:
                await producer.stop()
            except Exception as exc:
                log.debug("Fencable producer of config topic %s did not close cleanly: %s", self._topic, exc)
