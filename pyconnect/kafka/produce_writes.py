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

The aiokafka internals this relies on (the sender's produce step, which is replaced, the handler's
client, the connection's and the request's private fields) are reached only through
:mod:`pyconnect.kafka.aiokafka_seam` (its patch point 1), which names each of them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.client import AIOKafkaClient
from aiokafka.conn import CloseReason
from aiokafka.errors import KafkaConnectionError, NodeNotReadyError, RequestTimedOutError
from aiokafka.protocol.produce import ProduceRequest
from aiokafka.util import wait_for

from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.produce_frames import HIGHEST_VERSION, LOWEST_VERSION, PRODUCE_API_KEY, produce_frames

AIOKAFKA_HIGHEST_PRODUCE = 7  # the newest Produce version aiokafka decodes an answer of


def writes_frames(producer: Any) -> bool:
    """Whether ``producer``'s produce requests are written by :func:`write_produce_frames`."""
    return seam.produce_writer_installed(producer)


def _version(versions: dict[int, tuple[int, int]]) -> int | None:
    span = versions.get(PRODUCE_API_KEY)
    if span is None:
        return None
    highest = min(span[1], AIOKAFKA_HIGHEST_PRODUCE, HIGHEST_VERSION)
    return highest if highest >= max(span[0], LOWEST_VERSION) else None


async def send_produce(client: AIOKafkaClient, node_id: int, request: ProduceRequest) -> Any:
    """``client.send(node_id, request)`` for a produce request, written as frames; see the module
    docstring."""
    conn: Any = await seam.client_connection(client, node_id)
    if conn is None:
        raise NodeNotReadyError(f"Attempt to send a request to node which is not ready (node id {node_id}).")
    version = _version(seam.connection_versions(conn))
    if version is None:
        return await client.send(node_id, _joined(request))
    writer = seam.connection_writer(conn)
    if writer is None:
        raise KafkaConnectionError(f"No connection to broker at {seam.connection_address(conn)}")
    transactional_id, acks, timeout, topics = seam.produce_request_fields(request)
    correlation_id = seam.connection_next_correlation_id(conn)
    frames = produce_frames(
        version,
        correlation_id,
        seam.connection_client_id(conn),
        transactional_id,
        acks,
        timeout,
        topics,
    )
    try:
        writer.writelines(frames)
    except OSError as exc:
        conn.close(reason=CloseReason.CONNECTION_BROKEN)
        raise KafkaConnectionError(f"Connection at {seam.connection_address(conn)} broken: {exc}") from exc
    if acks == 0:
        await writer.drain()
        return None
    future = asyncio.get_running_loop().create_future()
    seam.connection_expect_answer(conn, correlation_id, _answer_struct(version), future)
    try:
        return await wait_for(future, seam.connection_request_timeout(conn))
    except TimeoutError as exc:
        conn.close(reason=CloseReason.CONNECTION_TIMEOUT)
        raise RequestTimedOutError() from exc


def _joined(request: ProduceRequest) -> ProduceRequest:
    """``request`` with every batch given in pieces joined into one buffer, for aiokafka's own encoding."""
    transactional_id, acks, timeout, request_topics = seam.produce_request_fields(request)
    if not any(type(batch) is tuple for _, partitions in request_topics for _, batch in partitions):
        return request
    topics = [
        (
            topic,
            [
                (partition, b"".join(batch) if type(batch) is tuple else batch)
                for partition, batch in partitions
            ],
        )
        for topic, partitions in request_topics
    ]
    return ProduceRequest(
        transactional_id=transactional_id,
        required_acks=acks,
        timeout=timeout,
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


def write_produce_frames(producer: AIOKafkaProducer) -> None:
    """See the module docstring."""
    seam.install_produce_writer(producer, send_produce)


__all__ = ["send_produce", "write_produce_frames", "writes_frames"]
