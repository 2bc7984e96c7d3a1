"""Admin operations on a sink connector's consumer group (KIP-875; Java ``Worker.sinkConnectorOffsets``,
``alterSinkConnectorOffsets`` and ``resetSinkConnectorOffsets``).

Contract: one :class:`SinkGroupAdmin` per request, closed by the caller (``async with``).
``offsets(group)`` lists every committed offset; ``alter(group, offsets)`` commits the non-``None``
offsets as an admin (generation -1) and deletes the committed offsets of partitions given ``None``
(OffsetDelete, API 47, which aiokafka does not ship); ``delete_group(group)`` deletes the group (a
group that does not exist counts as deleted). A group that still has members raises
:class:`GroupNotEmpty`; other per-partition or per-group errors raise :class:`GroupAdminError` with
the broker's error name.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self

from aiokafka.errors import for_code
from aiokafka.protocol.admin import DeleteGroupsRequest
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import Array, Int16, Int32, Schema, String

from pyconnect.api.sink import TopicPartition
from pyconnect.errors import ConnectError
from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.group_admin import CommittedOffset, GroupAdmin

UNKNOWN_MEMBER_ID = 25
GROUP_ID_NOT_FOUND = 69
NON_EMPTY_GROUP = 68
GROUP_SUBSCRIBED_TO_TOPIC = 86
_MEMBERS_PRESENT = {UNKNOWN_MEMBER_ID, NON_EMPTY_GROUP, GROUP_SUBSCRIBED_TO_TOPIC}


class GroupAdminError(ConnectError):
    """The broker refused an operation on the group (its error name in the message)."""


class GroupNotEmpty(GroupAdminError):
    """The group still has members: the connector's tasks have not all stopped."""


def _error(code: int) -> GroupAdminError:
    name = for_code(code).__name__
    return (GroupNotEmpty if code in _MEMBERS_PRESENT else GroupAdminError)(f"{name} (error code {code})")


class _OffsetDeleteResponseV0(Response):
    API_KEY = 47
    API_VERSION = 0
    SCHEMA = Schema(
        ("error_code", Int16),
        ("throttle_time_ms", Int32),
        (
            "topics",
            Array(
                ("name", String("utf-8")), ("partitions", Array(("partition", Int32), ("error_code", Int16)))
            ),
        ),
    )


class _OffsetDeleteRequestV0(RequestStruct):
    API_KEY = 47
    API_VERSION = 0
    RESPONSE_TYPE = _OffsetDeleteResponseV0
    SCHEMA = Schema(
        ("group_id", String("utf-8")),
        ("topics", Array(("name", String("utf-8")), ("partitions", Array(Schema(("partition", Int32)))))),
    )


class OffsetDeleteRequest(Request[_OffsetDeleteRequestV0]):
    """OffsetDelete (API 47) v0: Java's ``Admin.deleteConsumerGroupOffsets``."""

    API_KEY = 47

    def __init__(self, group: str, topics: list[tuple[str, list[tuple[int]]]]) -> None:
        self._group = group
        self._topics = topics

    def build(self, request_struct_class: type[_OffsetDeleteRequestV0]) -> _OffsetDeleteRequestV0:
        return request_struct_class(self._group, self._topics)


class SinkGroupAdmin(GroupAdmin):
    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def offsets(self, group: str) -> dict[TopicPartition, int]:
        found = await self.committed_offsets(group)
        return {TopicPartition(t, p): c.offset for (t, p), c in found.items()}

    async def alter(self, group: str, offsets: Mapping[TopicPartition, int | None]) -> None:
        to_commit = {
            (p.topic, p.partition): CommittedOffset(o, "") for p, o in offsets.items() if o is not None
        }
        errors = await self.alter_offsets(group, to_commit)
        for code in errors.values():
            raise _error(code)
        to_delete: dict[str, list[tuple[int]]] = {}
        for p, o in offsets.items():
            if o is None:
                to_delete.setdefault(p.topic, []).append((p.partition,))
        if not to_delete:
            return
        with self._refusals(group):
            coordinator = await self._admin.find_coordinator(group)
            response: Any = await seam.admin_send_request(
                self._admin, OffsetDeleteRequest(group, list(to_delete.items())), coordinator
            )
        if response.error_code not in (0, GROUP_ID_NOT_FOUND):
            raise _error(response.error_code)
        for _topic, partitions in response.topics:
            for _partition, code in partitions:
                if code:
                    raise _error(code)

    async def delete_group(self, group: str) -> None:
        with self._refusals(group):
            coordinator = await self._admin.find_coordinator(group)
            response: Any = await seam.admin_send_request(
                self._admin, DeleteGroupsRequest([group]), coordinator
            )
        for _group, code in response.results:
            if code and code != GROUP_ID_NOT_FOUND:
                raise _error(code)
