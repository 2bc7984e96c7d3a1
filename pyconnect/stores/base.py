"""What every store needs from its topic: the ``TopicSource``/``RecordLog`` pair.

``TopicSource`` is :class:`~pyconnect.stores.kafka_topic.InternalTopic` (Kafka) or
:class:`~pyconnect.stores.memory.MemoryTopic` (the in-memory twins); ``RecordLog`` is what its
``open()`` returns (:class:`~pyconnect.kafka.log.KafkaLog` or :class:`~pyconnect.stores.memory.MemoryLog`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pyconnect.kafka.log import LogRecord

RecordsCallback = Callable[[Sequence[LogRecord]], None]


class RecordLog(Protocol):
    @property
    def topic(self) -> str: ...

    @property
    def partitions(self) -> list[int]: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def read_to_end(self) -> None: ...

    async def send(
        self,
        key: bytes | None,
        value: bytes | None,
        *,
        partition: int | None = None,
        headers: Sequence[tuple[str, bytes]] | None = None,
    ) -> asyncio.Future[Any]: ...

    async def send_now(
        self, records: Sequence[tuple[bytes | None, bytes | None]], *, partition: int
    ) -> list[asyncio.Future[Any]]: ...


class TopicSource(Protocol):
    @property
    def name(self) -> str: ...

    async def prepare(self) -> None: ...

    def open(self, on_records: RecordsCallback, *, read_only: bool = False) -> RecordLog: ...


def is_retriable(error: BaseException) -> bool:
    """Whether Java would treat the producer error as a ``RetriableException``.

    aiokafka marks most retriable errors with ``retriable = True``; its delivery timeout
    (``KafkaTimeoutError``) is not marked but is Java's retriable ``TimeoutException``.
    """
    return bool(getattr(error, "retriable", False)) or type(error).__name__ == "KafkaTimeoutError"
