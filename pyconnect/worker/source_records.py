"""A source task's records on their way out: transformation chain, then converters, with retries.

Contract:
- :meth:`SourceRecordPipeline.prepare` takes one ``poll()`` batch of records and answers a
  :class:`PreparedRecords`: ``outgoing`` (what goes to the producer, in poll order) and ``results``
  (per polled record: the record as transformed, or ``None`` when the chain dropped it or it was
  skipped after an error). ``results`` is ``None`` on the fast path: every record converted as polled,
  nothing dropped, nothing skipped, ``outgoing[i]`` belongs to ``records[i]``. Otherwise ``outgoing``
  holds one item per non-``None`` result, in the same order (an item ``None``: skipped while
  converting).
- The fast path is taken when nothing fails: the chain's stages are applied inline per record, and
  keys and values are converted per run of records sharing topic and schemas (the batch-first
  converter contract, ``from_connect_batch``; ``from_connect_data`` for converters without it);
  headers per record, only where there are any. A stage that raises sends that record on, stage by
  stage, through the task's :class:`~pyconnect.worker.retry_with_tolerance.RetryWithTolerance`; a
  batch conversion that raises is redone record by record and converter by converter (header, key,
  value: Java's order) through it (the failed batch call is no record's attempt: which record failed
  is unknown).
- A retriable failure is retried after a backoff awaited through ``retry_sleep`` (``False``: the task
  is stopping): then :class:`~pyconnect.worker.retry_with_tolerance.RetryInterrupted` leaves
  ``prepare`` and the whole batch is to be dropped unsent. Records skipped under
  ``errors.tolerance=all`` are counted in ``skipped``.
- Where conversion runs: the runtime's own converters (``pyconnect.*`` classes, quick and never
  blocking) on the loop; when any converter comes from elsewhere (a plugin that may block, e.g. on a
  schema registry), each batch on a plugin thread (one hop per batch), and each retried operation of
  the slow path too.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, cast

from pyconnect.api.source import SourceRecord
from pyconnect.kafka.batch_sender import OutgoingRecord
from pyconnect.transforms.chain import TransformationChain
from pyconnect.worker.plugin_calls import PluginCalls
from pyconnect.worker.retry_with_tolerance import (
    HEADER_CONVERTER,
    KEY_CONVERTER,
    SKIPPED,
    TRANSFORMATION,
    VALUE_CONVERTER,
    RetryWithTolerance,
)
from pyconnect.worker.task_converters import TaskConverters, call_on_loop, call_operation
from pyconnect.worker.worker_connector import java_class_name


class PreparedRecords(NamedTuple):
    """One poll batch ready to send (see the module contract)."""

    outgoing: list[OutgoingRecord | None]
    results: list[SourceRecord | None] | None


class SourceRecordPipeline:
    """Transforms and converts the poll batches of one task (see the module contract)."""

    def __init__(
        self,
        converters: TaskConverters,
        transformations: TransformationChain | None,
        errors: RetryWithTolerance,
        retry_sleep: Callable[[int], Awaitable[bool]],
        calls: PluginCalls,
        owner: str,
    ) -> None:
        self.converters = converters
        self._chain = transformations if transformations else None
        self._errors = errors
        self._retry_sleep = retry_sleep
        self.skipped = 0
        on_loop = converters.runtime_only
        self.convert_batch: Callable[[list[SourceRecord]], Awaitable[list[OutgoingRecord]]] = (
            self._convert_on_loop
            if on_loop
            else calls.bind(owner, "convert", self.convert, routine_cancel=True)
        )
        self._operate: Callable[[Callable[[], Any]], Awaitable[Any]] = (
            call_on_loop if on_loop else calls.bind(owner, "convert", call_operation, routine_cancel=True)
        )

    async def prepare(self, records: list[SourceRecord]) -> PreparedRecords:
        """``records`` transformed and converted; raises ``RetryInterrupted`` when a stop ends a retry."""
        chain = self._chain
        if chain is None:
            try:
                converted = await self.convert_batch(records)
            except Exception:
                return PreparedRecords(await self._convert_one_by_one(records, records), list(records))
            return PreparedRecords(cast("list[OutgoingRecord | None]", converted), None)
        results = await self._transform_all(records, chain)
        transformed = [r for r in results if r is not None]
        originals = [r for r, t in zip(records, results, strict=True) if t is not None]
        outgoing = await self._convert_all(transformed, originals) if transformed else []
        return PreparedRecords(outgoing, results)

    async def _transform_all(
        self, records: list[SourceRecord], chain: TransformationChain
    ) -> list[SourceRecord | None]:
        """Each record through the chain (``None``: dropped, or skipped after an error). The fast path
        applies the stages inline; a record whose stage raises goes on through :meth:`_transform_slowly`."""
        stages = chain.stages
        results: list[SourceRecord | None] = []
        for record in records:
            current: SourceRecord | None = record
            position = 0
            try:
                for position, stage in enumerate(stages):  # noqa: B007  (read by the except)
                    current = stage.apply(current)  # type: ignore[arg-type]
                    if current is None:
                        break
            except Exception as exc:
                current = await self._transform_slowly(chain, record, current, position, exc)
            results.append(current)
        return results

    async def _transform_slowly(
        self,
        chain: TransformationChain,
        original: SourceRecord,
        current: Any,
        position: int,
        error: BaseException,
    ) -> SourceRecord | None:
        """The chain from the stage at ``position`` (which raised ``error`` on ``current``) on, stage by
        stage through the core; ``None`` when dropped or skipped."""
        first: BaseException | None = error
        for stage in chain.stages[position:]:
            value = current

            async def apply(stage: Any = stage, value: Any = value) -> Any:
                return stage.apply(value)

            current = await self._errors.execute_async(
                apply,
                original,
                TRANSFORMATION,
                java_class_name(type(stage.transformation)),
                clock_ms=monotonic_ms,
                sleep=self._retry_sleep,
                first_error=first,
            )
            first = None
            if current is SKIPPED:
                self.skipped += 1
                return None
            if current is None:
                return None
        return current

    async def _convert_all(
        self, records: list[SourceRecord], originals: list[SourceRecord]
    ) -> list[OutgoingRecord | None]:
        """``records`` converted (``None`` for one skipped after an error): the whole batch at once, or,
        when that raises, :meth:`_convert_one_by_one`."""
        try:
            return cast("list[OutgoingRecord | None]", await self.convert_batch(records))
        except Exception:
            return await self._convert_one_by_one(records, originals)

    async def _convert_one_by_one(
        self, records: list[SourceRecord], originals: list[SourceRecord]
    ) -> list[OutgoingRecord | None]:
        """Record by record and converter by converter through the core, after a batch conversion
        raised (that call is not counted as an attempt of any record: which record failed is unknown)."""
        return [await self._convert_slowly(r, o) for r, o in zip(records, originals, strict=True)]

    async def _convert_slowly(self, record: SourceRecord, original: SourceRecord) -> OutgoingRecord | None:
        """One record through the header, key and value converters (Java's order), each a core operation."""
        topic = record.topic
        header_converter, key_converter, value_converter = (
            self.converters.header,
            self.converters.key,
            self.converters.value,
        )

        async def attempt(operation: Callable[[], Any], stage: str, converter: Any) -> Any:
            return await self._errors.execute_async(
                lambda: self._operate(operation),
                original,
                stage,
                java_class_name(type(converter)),
                clock_ms=monotonic_ms,
                sleep=self._retry_sleep,
            )

        headers = await attempt(
            lambda: [
                (h.key, header_converter.from_connect_header(topic, h.key, h.schema, h.value))
                for h in record.headers
            ],
            HEADER_CONVERTER,
            header_converter,
        )
        if headers is not SKIPPED:
            key = await attempt(
                lambda: key_converter.from_connect_data(topic, headers, record.key_schema, record.key),
                KEY_CONVERTER,
                key_converter,
            )
            if key is not SKIPPED:
                value = await attempt(
                    lambda: value_converter.from_connect_data(
                        topic, headers, record.value_schema, record.value
                    ),
                    VALUE_CONVERTER,
                    value_converter,
                )
                if value is not SKIPPED:
                    return _outgoing(record, key, value, headers)
        self.skipped += 1
        return None

    async def _convert_on_loop(self, records: list[SourceRecord]) -> list[OutgoingRecord]:
        return self.convert(records)

    def convert(self, records: list[SourceRecord]) -> list[OutgoingRecord]:
        """Keys and values through ``from_connect_batch``, one call per run of records sharing topic and
        schemas (the batch-first converter contract); headers per record, only where there are any.
        Runs where it is called (the loop, or a plugin thread through ``convert_batch``)."""
        count = len(records)
        keys: list[bytes | None] = [None] * count
        values: list[bytes | None] = [None] * count
        key_converter, value_converter = self.converters.key, self.converters.value
        start = 0
        while start < count:
            first = records[start]
            topic, key_schema, value_schema = first.topic, first.key_schema, first.value_schema
            end = start + 1
            while (
                end < count
                and records[end].topic == topic
                and records[end].key_schema is key_schema
                and records[end].value_schema is value_schema
            ):
                end += 1
            run = records[start:end]
            keys[start:end] = _batch(key_converter, topic, key_schema, [r.key for r in run])
            values[start:end] = _batch(value_converter, topic, value_schema, [r.value for r in run])
            start = end
        header_converter = self.converters.header
        outgoing = []
        for record, key, value in zip(records, keys, values, strict=True):
            topic = record.topic
            headers = (
                [
                    (h.key, header_converter.from_connect_header(topic, h.key, h.schema, h.value))
                    for h in record.headers
                ]
                if record.headers
                else []
            )
            outgoing.append(_outgoing(record, key, value, headers))
        return outgoing


def _outgoing(record: SourceRecord, key: Any, value: Any, headers: Any) -> OutgoingRecord:
    """The producer's record for ``record`` (a negative or absent timestamp: the producer's clock)."""
    timestamp = record.timestamp
    return OutgoingRecord(
        record.topic,
        key,
        value,
        record.kafka_partition,
        timestamp if timestamp is not None and timestamp >= 0 else None,
        headers,
    )


def _batch(converter: Any, topic: str, schema: Any, items: list[Any]) -> list[bytes | None]:
    """``converter.from_connect_batch``, or a loop over ``from_connect_data`` for converters without it."""
    batch = getattr(converter, "from_connect_batch", None)
    if batch is not None:
        return list(batch(topic, schema, items))
    return [converter.from_connect_data(topic, None, schema, item) for item in items]


def monotonic_ms() -> int:
    """The clock a task gives its retry-with-tolerance core (milliseconds)."""
    return int(time.monotonic() * 1000)
