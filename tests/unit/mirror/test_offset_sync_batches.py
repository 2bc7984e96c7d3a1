"""Offset syncs written in batches (connectors.mirror.offsets.sync_batches), over a fake producer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from connectors.mirror.offsets.sync_batches import send_offset_syncs
from connectors.mirror.records import OffsetSync
from pyconnect.errors import ConnectError


class _Builder:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.records: list[tuple[bytes, bytes]] = []

    def append(self, *, timestamp: Any, key: bytes, value: bytes) -> object | None:
        assert timestamp is None  # the producer stamps the current time, as a plain send does
        if len(self.records) == self.capacity:
            return None
        self.records.append((key, value))
        return object()


class _Producer:
    """``create_batch``/``send_batch``; each delivery resolves as the test says."""

    def __init__(self, capacity: int, *, refuse_at: int | None = None) -> None:
        self.capacity = capacity
        self.refuse_at = refuse_at
        self.sent: list[tuple[str, int, list[tuple[bytes, bytes]]]] = []
        self.deliveries: list[asyncio.Future[None]] = []

    def create_batch(self) -> _Builder:
        return _Builder(self.capacity)

    async def send_batch(self, builder: _Builder, topic: str, *, partition: int) -> asyncio.Future[None]:
        if self.refuse_at is not None and len(self.sent) == self.refuse_at:
            raise ConnectError("no room in the queue")
        self.sent.append((topic, partition, builder.records))
        delivery: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.deliveries.append(delivery)
        return delivery


def _group(count: int) -> tuple[list[tuple[OffsetSync, Any]], list[list[BaseException | None]]]:
    calls: list[list[BaseException | None]] = [[] for _ in range(count)]
    group = [(OffsetSync("t", 0, 10 * i, 100 + i), calls[i].append) for i in range(count)]
    return group, calls


async def _until(condition: Any) -> None:
    for _ in range(100):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("never happened")


def test_syncs_leave_in_order_in_as_few_batches_as_fit_and_each_done_is_called_once() -> None:
    async def main() -> None:
        producer = _Producer(capacity=2)
        group, calls = _group(5)
        sending = asyncio.ensure_future(send_offset_syncs(producer, "mm2-offset-syncs.B.internal", group))
        await _until(lambda: len(producer.sent) == 3)
        assert [len(records) for _t, _p, records in producer.sent] == [2, 2, 1]
        assert {(t, p) for t, p, _r in producer.sent} == {("mm2-offset-syncs.B.internal", 0)}
        flat = [record for _t, _p, records in producer.sent for record in records]
        assert flat == [(sync.record_key(), sync.record_value()) for sync, _done in group]
        assert calls == [[]] * 5  # nothing is done before its batch is acknowledged
        producer.deliveries[0].set_result(None)
        producer.deliveries[1].set_exception(ConnectError("NOT_ENOUGH_REPLICAS"))
        producer.deliveries[2].set_result(None)
        await sending
        assert [c[0] is None for c in calls] == [True, True, False, False, True]
        assert all(len(c) == 1 for c in calls)

    asyncio.run(main())


def test_a_batch_that_cannot_be_handed_over_fails_it_and_the_rest_once() -> None:
    async def main() -> None:
        producer = _Producer(capacity=2, refuse_at=1)
        group, calls = _group(5)
        sending = asyncio.ensure_future(send_offset_syncs(producer, "syncs", group))
        await sending  # the second batch was refused: nothing after it was handed over, nothing awaited
        assert len(producer.sent) == 1 and all(len(c) == 1 for c in calls)
        assert all(isinstance(c[0], ConnectError) for c in calls)

    asyncio.run(main())


def test_a_cancelled_send_fails_every_sync_not_yet_done_and_stays_cancelled() -> None:
    async def main() -> None:
        producer = _Producer(capacity=2)
        group, calls = _group(3)
        sending = asyncio.ensure_future(send_offset_syncs(producer, "syncs", group))
        await _until(lambda: len(producer.sent) == 2)
        producer.deliveries[0].set_result(None)
        await _until(lambda: calls[0] != [])
        sending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await sending
        assert calls[0] == calls[1] == [None]
        assert len(calls[2]) == 1 and isinstance(calls[2][0], ConnectError)
        assert "cancelled" in str(calls[2][0])

    asyncio.run(main())
