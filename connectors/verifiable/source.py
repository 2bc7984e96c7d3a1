"""Port of Java's ``VerifiableSourceConnector`` / ``VerifiableSourceTask`` (``org.apache.kafka.connect.tools``).

Task config keys (the connector copies its own config into every task and adds ``id``): ``name``
(connector name), ``id`` (task number), ``topic``, ``throughput`` (records per second; negative = no
limit, 0 = produce one record then wait for stop) and ``complete.record.data`` (``true``: the value is
a struct ``{name, task, topic, time_ms, seqno}`` instead of the INT64 seqno). Records have key
INT32 ``id``, source partition ``{"id": id}`` and source offset ``{"seqno": n}``, so the offsets topic
holds ``["<name>",{"id":0}]`` -> ``{"seqno":n}`` exactly as Java writes; a restarted task resumes at the
committed seqno + 1.

Each produced and each committed record yields one JSON line in Java's key order. Java prints them to
stdout; here they go to the ``connectors.verifiable.source`` logger at DEBUG, and also to stdout when
the connector config has ``verifiable.stdout=true`` (an addition of this port).
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Mapping
from typing import Any

import pyconnect
from connectors.verifiable.throttle import Clock, SystemClock, ThroughputThrottler
from pyconnect.api.connector import SourceConnector
from pyconnect.api.converters.jackson import dumps
from pyconnect.api.data import INT32_SCHEMA, INT64_SCHEMA, SchemaBuilder, Struct
from pyconnect.api.source import RecordMetadata, SourceRecord, SourceTask
from pyconnect.config.definition import ConfigDef
from pyconnect.errors import ConnectError

log = logging.getLogger(__name__)

NAME_CONFIG = "name"
ID_CONFIG = "id"
TOPIC_CONFIG = "topic"
THROUGHPUT_CONFIG = "throughput"
COMPLETE_RECORD_DATA_CONFIG = "complete.record.data"
STDOUT_CONFIG = "verifiable.stdout"
ID_FIELD = "id"
SEQNO_FIELD = "seqno"

COMPLETE_VALUE_SCHEMA = (
    SchemaBuilder.struct()
    .field("name", SchemaBuilder.string().build())
    .field("task", INT32_SCHEMA)
    .field("topic", SchemaBuilder.string().build())
    .field("time_ms", INT64_SCHEMA)
    .field("seqno", INT64_SCHEMA)
    .build()
)
_JAVA_LONG = re.compile(r"[+-]?\d+")


def _parse_long(text: str | None, bits: int) -> int:
    if (
        text is None
        or not _JAVA_LONG.fullmatch(text)
        or not -(2 ** (bits - 1)) <= int(text) < 2 ** (bits - 1)
    ):
        raise ConnectError("Invalid VerifiableSourceTask configuration")
    return int(text)


class VerifiableSourceConnector(SourceConnector):
    """Creates ``tasks.max`` tasks, each the connector config plus its ``id``."""

    def __init__(self) -> None:
        self._config: dict[str, str] = {}

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    def start(self, props: Mapping[str, str]) -> None:
        self._config = dict(props)

    def task_class(self) -> type:
        return VerifiableSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self._config, ID_CONFIG: str(i)} for i in range(max_tasks)]

    def stop(self) -> None:
        return None

    def config(self) -> ConfigDef:
        """Empty, as in Java: the task reads its keys without declaring them."""
        return ConfigDef()


class VerifiableSourceTask(SourceTask):
    """One record per ``poll``, throttled to ``throughput``. ``clock`` may be replaced before ``start``."""

    java_class = "org.apache.kafka.connect.tools.VerifiableSourceTask"
    clock: Clock = SystemClock()

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    async def start(self, props: Mapping[str, str]) -> None:
        self.name = props.get(NAME_CONFIG)
        self.id = _parse_long(props.get(ID_CONFIG), 32)
        self.topic = props.get(TOPIC_CONFIG)
        throughput = _parse_long(props.get(THROUGHPUT_CONFIG), 64)
        self.partition: dict[str, Any] = {ID_FIELD: self.id}
        previous = await self.context.offset_storage_reader.offset(self.partition)
        self.seqno = int(previous[SEQNO_FIELD]) + 1 if previous is not None else 0
        self.starting_seqno = self.seqno
        self.throttler = ThroughputThrottler(throughput, self.clock.time_ms(), self.clock)
        self.complete_record_data = str(props.get(COMPLETE_RECORD_DATA_CONFIG)).lower() == "true"
        self.stdout = str(props.get(STDOUT_CONFIG)).lower() == "true"
        log.info(
            "Started VerifiableSourceTask %s-%s producing to topic %s resuming from seqno %s",
            self.name,
            self.id,
            self.topic,
            self.starting_seqno,
        )

    def _emit(self, line: str) -> None:
        log.debug("%s", line)
        if self.stdout:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def _line(self, time_ms: int, seqno: Any, committed: bool) -> str:
        data: dict[str, Any] = {"committed": True} if committed else {}
        data.update(task=self.id, seqno=seqno, time_ms=time_ms, name=self.name, topic=self.topic)
        return dumps(data).decode()

    async def poll(self) -> list[SourceRecord]:
        seqno = self.seqno
        if self.throttler.should_throttle(seqno - self.starting_seqno, self.clock.time_ms()):
            await self.throttler.throttle()
        now_ms = self.clock.time_ms()
        self._emit(self._line(now_ms, seqno, committed=False))
        if self.complete_record_data:
            value: Any = Struct(COMPLETE_VALUE_SCHEMA)
            for field, field_value in (
                ("name", self.name),
                ("task", self.id),
                ("topic", self.topic),
                ("time_ms", now_ms),
                ("seqno", seqno),
            ):
                value.put(field, field_value)
            value_schema = COMPLETE_VALUE_SCHEMA
        else:
            value, value_schema = seqno, INT64_SCHEMA
        record = SourceRecord(
            self.partition,
            {SEQNO_FIELD: seqno},
            self.topic or "",
            None,
            INT32_SCHEMA,
            self.id,
            value_schema,
            value,
        )
        self.seqno = seqno + 1
        return [record]

    async def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        seqno = record.value.get("seqno") if isinstance(record.value, Struct) else record.value
        self._emit(self._line(self.clock.time_ms(), seqno, committed=True))

    async def stop(self) -> None:
        throttler = getattr(self, "throttler", None)
        if throttler is not None:
            throttler.wakeup()
