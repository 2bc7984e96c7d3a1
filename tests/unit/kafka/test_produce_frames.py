"""Produce request frames: the same bytes aiokafka's protocol structs encode, the batches never copied."""

from __future__ import annotations

import struct

import pytest
from aiokafka.protocol.produce import ProduceRequest_v3, ProduceRequest_v5, ProduceRequest_v7

from pyconnect.kafka.produce_frames import produce_frames

TOPICS_JOINED = [
    ("mirror.events", [(0, b"first batch"), (5, b"second batch, longer")]),
    ("t\u00f6pic", [(2, b"x" * 300)]),
]


def _aiokafka_frame(
    cls: type,
    transactional_id: str | None,
    client_id: str,
    topics: list,
    correlation_id: int,
    timeout_ms: int,
) -> bytes:
    request = cls(transactional_id, -1, timeout_ms, topics)
    message = request.build_request_header(correlation_id=correlation_id, client_id=client_id).encode()
    message += request.encode()
    return struct.pack(">i", len(message)) + message


@pytest.mark.parametrize("cls", [ProduceRequest_v3, ProduceRequest_v5, ProduceRequest_v7])
@pytest.mark.parametrize("transactional_id", [None, "mirror-txn-0"])
def test_the_frame_is_the_request_aiokafka_encodes(cls: type, transactional_id: str | None) -> None:
    frames = produce_frames(cls.API_VERSION, 41, "producer-7", transactional_id, -1, 30_000, TOPICS_JOINED)
    assert b"".join(frames) == _aiokafka_frame(cls, transactional_id, "producer-7", TOPICS_JOINED, 41, 30_000)


def test_v8_differs_from_v7_only_in_the_version_field() -> None:
    """Produce v8 changed only the response (KIP-467): the request is v7's with another version."""
    v7 = _aiokafka_frame(ProduceRequest_v7, None, "c", TOPICS_JOINED, 3, 30_000)
    v8 = b"".join(produce_frames(8, 3, "c", None, -1, 30_000, TOPICS_JOINED))
    assert v8[:6] + v8[8:] == v7[:6] + v7[8:]
    assert struct.unpack_from(">h", v8, 6) == (8,)


def test_a_batch_in_pieces_is_framed_as_the_joined_batch_and_no_piece_is_copied() -> None:
    head, records = bytearray(b"H" * 61), memoryview(b"fetched response bytes")[8:]
    whole = bytes(head) + bytes(records)
    pieces = produce_frames(7, 9, "c", None, -1, 1_000, [("t", [(1, (head, records)), (2, whole)])])
    assert b"".join(pieces) == _aiokafka_frame(
        ProduceRequest_v7, None, "c", [("t", [(1, whole), (2, whole)])], 9, 1_000
    )
    assert any(piece is head for piece in pieces)
    assert any(piece is records for piece in pieces)
    assert any(piece is whole for piece in pieces)


def test_null_ids_and_null_records() -> None:
    frame = b"".join(produce_frames(3, 1, None, None, 1, 500, [("t", [(0, None)])]))
    header = struct.pack(">hhih", 0, 3, 1, -1)  # api key, version, correlation id, null client id
    body = struct.pack(">hhiih", -1, 1, 500, 1, 1) + b"t" + struct.pack(">iii", 1, 0, -1)
    expected_body = header + body
    assert frame == struct.pack(">i", len(expected_body)) + expected_body


def test_no_topics() -> None:
    frame = b"".join(produce_frames(7, 2, "c", None, -1, 10, []))
    assert frame == _aiokafka_frame(ProduceRequest_v7, None, "c", [], 2, 10)


@pytest.mark.parametrize("version", [0, 2, 9, 12])
def test_versions_outside_3_to_8_are_refused(version: int) -> None:
    with pytest.raises(ValueError, match=f"Produce v{version} is not encoded here"):
        produce_frames(version, 1, "c", None, -1, 10, [])
