"""A producer's produce requests written as framing plus the batches' own buffers, not re-encoded.

aiokafka (0.14) sends a produce request the way it sends any request: ``AIOKafkaConnection.send``
encodes the whole ``ProduceRequest`` struct field by field and concatenates header, body and size, so
each record batch is copied four or more times, into buffers of the request's size (fresh memory
each time for requests past the allocator's mmap threshold), before the kernel copies it once more.
For a mirror whose batches are fetched bytes this was the larger part of its copying.

Contract: ``write_produce_frames(producer)`` (once per producer, before or after ``start``) makes the
producer's sender write each produce request with :func:`~pyconnect.kafka.produce_frames.produce_frames`
and one ``writelines`` on the partition leader's connection, then read the answer through the same
connection as any other: same correlation ids, same response decoding, same timeouts (the
connection's request timeout; on expiry the connection is closed and ``RequestTimedOutError`` raised,
as ``AIOKafkaClient.send`` does), same errors (``NodeNotReadyError`` without a connection,
``KafkaConnectionError`` on a broken one). Everything else the sender does is aiokafka's own: which
batches go together, retries and re-queueing, idempotence sequence numbers and transactions, the
handling of each partition's answer. A request whose negotiated Produce version is outside v3-v8
(aiokafka negotiates at most v7), or to a connection that negotiated no versions, goes through
aiokafka's own encoding, with any batch given in pieces joined first.

A batch's buffer may be a tuple of pieces (``RawBatch._build`` of a producer that writes frames:
the rewritten header and the fetched records as they are): :func:`writes_frames` tells a batch maker
whether the producer takes pieces.

Seams used (aiokafka 0.14): ``Sender._send_produce_req(node_id, batches)`` is replaced on the
producer's sender instance (it makes a ``SendProduceReqHandler``, awaits its ``do`` and unmutes
the node and partitions; the replacement does the same with a handler whose client writes frames);
``SendProduceReqHandler.do`` calls ``self._client.send``, ``force_metadata_update`` and
``_maybe_wait_metadata``; ``ProduceRequest`` keeps ``_transactional_id``, ``_required_acks``,
``_timeout`` and ``_topics``; ``AIOKafkaClient._get_conn``; a connection's ``_versions``,
``_writer``, ``_requests`` (``(correlation_id, request_struct, future)``; the reader answers the
oldest with ``request_struct.parse_response_header`` and ``RESPONSE_TYPE``), ``_client_id``,
``_request_timeout`` and ``_next_correlation_id``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.client import AIOKafkaClient
from aiokafka.conn import CloseReason
from aiokafka.errors import KafkaConnectionError, NodeNotReadyError, RequestTimedOutError
from aiokafka.producer.sender import SendProduceReqHandler
from aiokafka.protocol.produce import ProduceRequest
from aiokafka.util import wait_for

from pyconnect.kafka.produce_frames import HIGHEST_VERSION, LOWEST_VERSION, PRODUCE_API_KEY, produce_frames

_MARK = "_pyconnect_writes_produce_frames"
AIOKAFKA_HIGHEST_PRODUCE = 7  # the newest Produce version aiokafka decodes an answer of


def writes_frames(producer: Any) -> bool:
    """Whether ``producer``'s produce requests are written by :func:`write_produce_frames`."""
    sender = getattr(producer, "_sender", None)
    return bool(getattr(sender, _MARK, False))


def _version(versions: dict[int, tuple[int, int]]) -> int | None:
    span = versions.get(PRODUCE_API_KEY)
    if span is None:
        return None
    highest = min(span[1], AIOKAFKA_HIGHEST_PRODUCE, HIGHEST_VERSION)
    return highest if highest >= max(span[0], LOWEST_VERSION) else None


async def send_produce(client: AIOKafkaClient, node_id: int, request: ProduceRequest) -> Any:
    """``client.send(node_id, request)`` for a produce request, written as frames; see the module
    docstring."""
    conn: Any = await client._get_conn(node_id)
    if conn is None:
        raise NodeNotReadyError(f"Attempt to send a request to node which is not ready (node id {node_id}).")
    version = _version(conn._versions)
    if version is None:
        return await client.send(node_id, _joined(request))
    writer = conn._writer
    if writer is None:
        raise KafkaConnectionError(f"No connection to broker at {conn._host}:{conn._port}")
    acks = request._required_acks
    correlation_id = conn._next_correlation_id()
    frames = produce_frames(
        version,
        correlation_id,
        conn._client_id,
        request._transactional_id,
        acks,
        request._timeout,
        request._topics,
    )
    try:
        writer.writelines(frames)
    except OSError as exc:
        conn.close(reason=CloseReason.CONNECTION_BROKEN)
        raise KafkaConnectionError(f"Connection at {conn._host}:{conn._port} broken: {exc}") from exc
    if acks == 0:
        await writer.drain()
        return None
    future = asyncio.get_running_loop().create_future()
    conn._requests.append((correlation_id, _answer_struct(version), future))
    try:
        return await wait_for(future, conn._request_timeout)
    except TimeoutError as exc:
        conn.close(reason=CloseReason.CONNECTION_TIMEOUT)
        raise RequestTimedOutError() from exc


def _joined(request: ProduceRequest) -> ProduceRequest:
    """``request`` with every batch given in pieces joined into one buffer, for aiokafka's own encoding."""
    if not any(type(batch) is tuple for _, partitions in request._topics for _, batch in partitions):
        return request
    topics = [
        (
            topic,
            [
                (partition, b"".join(batch) if type(batch) is tuple else batch)
                for partition, batch in partitions
            ],
        )
        for topic, partitions in request._topics
    ]
    return ProduceRequest(
        transactional_id=request._transactional_id,
        required_acks=request._required_acks,
        timeout=request._timeout,
        topics=topics,
    )


_ANSWER_STRUCTS: dict[int, Any] = {}


def _answer_struct(version: int) -> Any:
    """A request struct of ``version`` with no topics: the reader takes from it only the response header
    parser and ``RESPONSE_TYPE``."""
    struct = _ANSWER_STRUCTS.get(version)
    if struct is None:
        empty = ProduceRequest(transactional_id=None, required_acks=1, timeout=0, topics=[])
        struct = _ANSWER_STRUCTS[version] = empty.prepare({PRODUCE_API_KEY: (version, version)})
    return struct


class _FrameWritingClient:
    """The producer's client as its produce handler sees it, with ``send`` writing frames."""

    __slots__ = ("_client",)

    def __init__(self, client: AIOKafkaClient) -> None:
        self._client = client

    async def send(self, node_id: int, request: Any, **kwargs: Any) -> Any:
        if isinstance(request, ProduceRequest) and not kwargs:
            return await send_produce(self._client, node_id, request)
        return await self._client.send(node_id, request, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class _FrameWritingHandler(SendProduceReqHandler):
    def __init__(self, sender: Any, batches: Any) -> None:
        super().__init__(sender, batches)
        self._client = _FrameWritingClient(sender.client)


def write_produce_frames(producer: AIOKafkaProducer) -> None:
    """See the module docstring."""
    sender: Any = producer._sender
    if getattr(sender, _MARK, False):
        return

    async def send_produce_request(node_id: int, batches: Any) -> None:
        handler = _FrameWritingHandler(sender, batches)
        await handler.do(node_id)
        sender._in_flight.remove(node_id)
        for tp in batches:
            sender._muted_partitions.remove(tp)

    sender._send_produce_req = send_produce_request
    setattr(sender, _MARK, True)


__all__ = ["send_produce", "write_produce_frames", "writes_frames"]
