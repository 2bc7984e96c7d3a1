"""send_produce's connection handling, over a fake client and connection (the round trips themselves are in
tests/integration/test_produce_writes.py): not ready, broken, no answer in time, a version it does not write."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiokafka.conn import CloseReason
from aiokafka.errors import KafkaConnectionError, NodeNotReadyError, RequestTimedOutError
from aiokafka.protocol.produce import ProduceRequest

from pyconnect.kafka.produce_writes import send_produce


class FakeWriter:
    def __init__(self, fail: bool = False) -> None:
        self.written: list[bytes] = []
        self.fail = fail

    def writelines(self, frames: list[Any]) -> None:
        if self.fail:
            raise ConnectionResetError("reset by peer")
        self.written.append(b"".join(frames))

    async def drain(self) -> None:
        return None


class FakeConn:
    def __init__(self, versions: dict[int, tuple[int, int]], writer: FakeWriter | None) -> None:
        self._versions = versions
        self._writer = writer
        self._requests: list[Any] = []
        self._client_id = "fake"
        self._request_timeout = 0.05
        self._host, self._port = "127.0.0.1", 9092
        self.closed: list[CloseReason] = []
        self._correlation_id = 0

    def _next_correlation_id(self) -> int:
        self._correlation_id += 1
        return self._correlation_id

    def close(self, reason: CloseReason) -> None:
        self.closed.append(reason)


class FakeClient:
    def __init__(self, conn: FakeConn | None) -> None:
        self.conn = conn
        self.sent_the_usual_way: list[Any] = []

    async def _get_conn(self, node_id: int) -> FakeConn | None:
        return self.conn

    async def send(self, node_id: int, request: Any) -> str:
        self.sent_the_usual_way.append(request)
        return "answered"


def _request(acks: int = -1) -> ProduceRequest:
    return ProduceRequest(
        transactional_id=None, required_acks=acks, timeout=100, topics=[("t", [(0, b"batch")])]
    )


async def test_no_connection_is_node_not_ready() -> None:
    with pytest.raises(NodeNotReadyError):
        await send_produce(FakeClient(None), 1, _request())  # type: ignore[arg-type]


async def test_a_closed_connection_is_a_connection_error() -> None:
    with pytest.raises(KafkaConnectionError, match="No connection to broker"):
        await send_produce(FakeClient(FakeConn({0: (3, 11)}, None)), 1, _request())  # type: ignore[arg-type]


async def test_a_broken_write_closes_the_connection() -> None:
    conn = FakeConn({0: (3, 11)}, FakeWriter(fail=True))
    with pytest.raises(KafkaConnectionError, match="broken: reset by peer"):
        await send_produce(FakeClient(conn), 1, _request())  # type: ignore[arg-type]
    assert conn.closed == [CloseReason.CONNECTION_BROKEN]


async def test_no_answer_in_the_request_timeout_closes_the_connection() -> None:
    conn = FakeConn({0: (3, 11)}, FakeWriter())
    with pytest.raises(RequestTimedOutError):
        await send_produce(FakeClient(conn), 1, _request())  # type: ignore[arg-type]
    assert conn.closed == [CloseReason.CONNECTION_TIMEOUT]
    correlation_id, struct, future = conn._requests[0]
    assert correlation_id == 1 and struct.API_VERSION == 7 and future.cancelled()


async def test_the_answer_is_what_the_reader_sets_on_the_oldest_request() -> None:
    conn = FakeConn({0: (3, 5)}, FakeWriter())
    sending = asyncio.ensure_future(send_produce(FakeClient(conn), 1, _request()))  # type: ignore[arg-type]
    await asyncio.sleep(0)
    _correlation_id, struct, future = conn._requests[0]
    assert struct.API_VERSION == 5  # the highest both sides speak
    future.set_result("response")
    assert await sending == "response"
    assert conn._writer is not None and conn._writer.written[0][6:8] == b"\x00\x05"  # the version field


async def test_acks_zero_waits_for_no_answer() -> None:
    conn = FakeConn({0: (3, 7)}, FakeWriter())
    assert await send_produce(FakeClient(conn), 1, _request(acks=0)) is None  # type: ignore[arg-type]
    assert conn._requests == [] and len(conn._writer.written) == 1  # type: ignore[union-attr]


@pytest.mark.parametrize("versions", [{}, {0: (0, 2)}, {0: (9, 12)}])
async def test_versions_it_does_not_write_go_the_usual_way(versions: dict[int, tuple[int, int]]) -> None:
    client = FakeClient(FakeConn(versions, FakeWriter()))
    request = _request()
    assert await send_produce(client, 1, request) == "answered"  # type: ignore[arg-type]
    assert client.sent_the_usual_way == [request]


async def test_a_batch_in_pieces_is_joined_for_the_usual_way() -> None:
    client = FakeClient(FakeConn({}, FakeWriter()))
    head, records = bytearray(b"head"), memoryview(b"records")
    request = ProduceRequest(
        transactional_id="txn",
        required_acks=-1,
        timeout=100,
        topics=[("t", [(0, (head, records)), (1, b"whole")])],
    )
    assert await send_produce(client, 1, request) == "answered"  # type: ignore[arg-type]
    (sent,) = client.sent_the_usual_way
    assert sent._topics == [("t", [(0, b"headrecords"), (1, b"whole")])]
    assert (sent._transactional_id, sent._required_acks, sent._timeout) == ("txn", -1, 100)
