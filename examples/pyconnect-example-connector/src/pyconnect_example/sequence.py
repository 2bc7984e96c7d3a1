"""SequenceSource: writes the numbers 0, 1, 2, ... to one topic and resumes where it left off.

Config (:data:`CONFIG_DEF`): ``topic`` (required; a legal Kafka topic name), ``batch.size`` (numbers
per ``poll``, 1..10000, default 10), ``interval.ms`` (pause before each batch, 0..1000, default 100)
and ``count`` (how many numbers in all, ``-1`` for no end; default -1).

Records: no key, an INT64 value ``n``, source partition ``{"topic": <topic>}`` and source offset
``{"next": n + 1}``, the next number to write. The worker commits the offset of every record Kafka
acknowledged; a task that starts reads it back and continues from there, so a restarted worker does
not begin again at 0. A new ``topic`` is a new source partition: the sequence starts over in it.

A sequence is one ordered stream: the connector runs one task whatever ``tasks.max`` says.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from typing import Any, cast

from pyconnect.api.connector import ExactlyOnceSupport, SourceConnector
from pyconnect.api.data import INT64_SCHEMA
from pyconnect.api.source import SourceRecord, SourceTask
from pyconnect.config import ConfigDef, ConfigKey, Importance, Type
from pyconnect.config.validators import Range
from pyconnect.errors import ConfigError

from pyconnect_example import __version__

TOPIC_CONFIG = "topic"
BATCH_SIZE_CONFIG = "batch.size"
INTERVAL_MS_CONFIG = "interval.ms"
COUNT_CONFIG = "count"
NEXT_FIELD = "next"

log = logging.getLogger(__name__)

_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]{1,249}")


def topic_name(name: str, value: object) -> None:
    """A config validator: ``value`` must be a name Kafka accepts for a topic. Validators also run
    with ``None`` for a missing key (already reported as missing), so ``None`` passes here."""
    if value is None:
        return
    if not isinstance(value, str) or value in (".", "..") or not _TOPIC_NAME.fullmatch(value):
        raise ConfigError(
            f"Invalid value {value} for configuration {name}: a topic name is 1 to 249 of "
            "a-z, A-Z, 0-9, '.', '_' and '-', and not '.' or '..'"
        )


CONFIG_DEF = ConfigDef(
    [
        ConfigKey(
            TOPIC_CONFIG,
            Type.STRING,
            importance=Importance.HIGH,
            documentation="The topic the numbers are written to.",
            validator=topic_name,
        ),
        ConfigKey(
            BATCH_SIZE_CONFIG,
            Type.INT,
            10,
            importance=Importance.MEDIUM,
            documentation="How many numbers each poll returns.",
            validator=Range.between(1, 10_000),
        ),
        ConfigKey(
            INTERVAL_MS_CONFIG,
            Type.LONG,
            100,
            importance=Importance.MEDIUM,
            documentation="How long each poll waits before its batch (at most a second, so that a "
            "pause or a stop is never held up).",
            validator=Range.between(0, 1000),
        ),
        ConfigKey(
            COUNT_CONFIG,
            Type.LONG,
            -1,
            importance=Importance.LOW,
            documentation="How many numbers to write in all; -1 for no end.",
            validator=Range.at_least(-1),
        ),
    ]
)


class SequenceSourceConnector(SourceConnector):
    """Checks its config at start and hands it to one task."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def start(self, props: Mapping[str, str]) -> None:
        CONFIG_DEF.parse(props)  # a bad config fails the connector with the key's message
        self._props = dict(props)

    def task_class(self) -> type:
        return SequenceSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]

    def stop(self) -> None:
        return None

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport:
        """The stream is a pure function of the committed offset, so it can run exactly once."""
        return ExactlyOnceSupport.SUPPORTED


class SequenceSourceTask(SourceTask):
    """``start`` reads the committed offset; each ``poll`` waits ``interval.ms`` and returns the next
    ``batch.size`` numbers. Both are coroutines: they run on the worker's event loop and only await."""

    def version(self) -> str:
        return __version__

    async def start(self, props: Mapping[str, str]) -> None:
        config = CONFIG_DEF.parse(props)
        self.topic = str(config[TOPIC_CONFIG])
        self.batch_size = cast(int, config[BATCH_SIZE_CONFIG])
        self.interval_s = cast(int, config[INTERVAL_MS_CONFIG]) / 1000
        self.count = cast(int, config[COUNT_CONFIG])
        self.partition: dict[str, Any] = {"topic": self.topic}
        committed = await self.context.offset_storage_reader.offset(self.partition)
        self.next = int(committed[NEXT_FIELD]) if committed is not None else 0
        log.info("Writing the sequence to %s from %d", self.topic, self.next)

    async def poll(self) -> list[SourceRecord] | None:
        # The runtime cancels a pending poll when the task stops: nothing changes before the sleep
        # ends, and self.next moves only together with the return, so a cancelled poll loses nothing.
        await asyncio.sleep(self.interval_s if self.count < 0 or self.next < self.count else 1.0)
        end = self.next + self.batch_size
        if self.count >= 0:
            end = min(end, self.count)
        if end <= self.next:
            return None
        records = [
            SourceRecord(self.partition, {NEXT_FIELD: n + 1}, self.topic, value_schema=INT64_SCHEMA, value=n)
            for n in range(self.next, end)
        ]
        self.next = end
        return records

    async def stop(self) -> None:
        return None
