"""ShareGroupDescribe (API key 77, KIP-932): a share group's state and members.

What the failover command asks before it sets a share group's start offsets on the target: a share group
with members there is refused (as a consumer group with members is), and the refusal names each member.
Kafka 4.1 and later answer v1 (4.0 answered v0, with the same layout); both are flexible versions.
A group that does not exist answers ``GROUP_ID_NOT_FOUND`` (69); a group of another type answers
``GROUP_ID_NOT_FOUND`` too, with a message saying so.

Contract (pure, no IO):
- :func:`encode_request` is the v0/v1 request body for ``group_ids`` (authorized operations not asked).
- :func:`decode_response` reads a v0/v1 response body into :class:`ShareGroupDescribed` entries.
- Malformed or truncated input raises :class:`~pyconnect.protocol.primitives.ProtocolError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyconnect.protocol.flexible import FlexibleReader, FlexibleWriter

API_KEY = 77
VERSIONS = (0, 1)
GROUP_ID_NOT_FOUND = 69


@dataclass(frozen=True, slots=True)
class ShareMember:
    """One member of a described share group: who it is, and the topics it subscribed to."""

    member_id: str
    client_id: str
    client_host: str
    topics: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ShareGroupDescribed:
    """One group of a ShareGroupDescribe answer (``state`` is ``Empty``, ``Stable``, ``Dead`` ...)."""

    group_id: str
    error_code: int
    error_message: str | None
    state: str
    members: tuple[ShareMember, ...]


def encode_request(group_ids: Sequence[str]) -> bytes:
    """The ShareGroupDescribe v0/v1 request body."""
    return FlexibleWriter().array(group_ids, FlexibleWriter.string).boolean(False).no_tags().to_bytes()


def _skip_assignment(r: FlexibleReader) -> None:
    def topic(t: FlexibleReader) -> None:
        t.uuid()
        t.string()
        t.array(FlexibleReader.int32)
        t.tagged_fields()

    r.array(topic)
    r.tagged_fields()


def _member(r: FlexibleReader) -> ShareMember:
    member_id = r.string()
    r.nullable_string()  # rack
    r.int32()  # member epoch
    client_id, client_host = r.string(), r.string()
    topics = tuple(r.array(FlexibleReader.string))
    _skip_assignment(r)
    r.tagged_fields()
    return ShareMember(member_id, client_id, client_host, topics)


def _group(r: FlexibleReader) -> ShareGroupDescribed:
    code, message = r.int16(), r.nullable_string()
    group_id, state = r.string(), r.string()
    r.int32()  # group epoch
    r.int32()  # assignment epoch
    r.string()  # assignor
    members = tuple(r.array(_member))
    r.int32()  # authorized operations
    r.tagged_fields()
    return ShareGroupDescribed(group_id, code, message, state, members)


def decode_response(data: bytes) -> tuple[int, list[ShareGroupDescribed]]:
    """``(throttle_time_ms, groups)`` of a ShareGroupDescribe v0/v1 response body."""
    reader = FlexibleReader(data, "ShareGroupDescribe response")
    throttle = reader.int32()
    groups = reader.array(_group)
    reader.tagged_fields()
    reader.expect_end()
    return throttle, groups
