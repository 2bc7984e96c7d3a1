"""Describe consumer groups of both kinds on one cluster: DescribeGroups and ConsumerGroupDescribe.

Contract: :func:`describe_groups` asks each group's coordinator both APIs (one request per API and
coordinator) and returns a :class:`~pyconnect.kafka.group_view.GroupView` per group, resolved by
:func:`~pyconnect.kafka.group_view.resolve_group`. A broker without ConsumerGroupDescribe (before
KIP-848) is described with DescribeGroups alone. ``GROUP_AUTHORIZATION_FAILED`` in either answer raises
:class:`~pyconnect.errors.AuthorizationError` naming the group and ``cluster``; transport errors raise.

DescribeGroups is sent as v1, or v3 when the broker has it, with a v3 response that carries
``authorized_operations``: aiokafka 0.14 parses a v3 answer with the v2 layout, which garbles every
group after the first one of a request (the second group read with error code -32768).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any, Self

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import IncompatibleBrokerVersion
from aiokafka.protocol.admin import (
    DescribeGroupsRequest_v1,
    DescribeGroupsResponse_v3,
)
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import Array, Boolean, Schema, String

from pyconnect.errors import AuthorizationError
from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.group_view import ClassicEntry, GroupView, member_label, resolve_group
from pyconnect.protocol.consumer_group_describe import (
    API_KEY,
    DescribedGroup,
    decode_response,
    encode_request,
)

GROUP_AUTHORIZATION_FAILED = 30


class _DescribeGroupsRequestV3(RequestStruct):
    API_KEY = 15
    API_VERSION = 3
    RESPONSE_TYPE = DescribeGroupsResponse_v3
    SCHEMA = Schema(("groups", Array(String("utf-8"))), ("include_authorized_operations", Boolean))


class _DescribeGroups(Request[DescribeGroupsRequest_v1 | _DescribeGroupsRequestV3]):
    API_KEY = 15

    def __init__(self, groups: Sequence[str]) -> None:
        self._groups = list(groups)

    def build(
        self, request_struct_class: type[DescribeGroupsRequest_v1 | _DescribeGroupsRequestV3]
    ) -> DescribeGroupsRequest_v1 | _DescribeGroupsRequestV3:
        if request_struct_class.API_VERSION >= 3:
            return _DescribeGroupsRequestV3(self._groups, False)
        return DescribeGroupsRequest_v1(self._groups)


class _ConsumerGroupDescribeResponseV0(Response):
    API_KEY = API_KEY
    API_VERSION = 0
    SCHEMA = Schema()

    groups: list[DescribedGroup]

    @classmethod
    def decode(cls, data: io.BytesIO | bytes) -> Self:
        raw = data if isinstance(data, bytes) else data.read()
        response = cls()
        response.throttle_time_ms, response.groups = decode_response(raw, cls.API_VERSION)
        return response


class _ConsumerGroupDescribeResponseV1(_ConsumerGroupDescribeResponseV0):
    API_VERSION = 1


class _ConsumerGroupDescribeRequestV0(RequestStruct):
    FLEXIBLE_VERSION = True
    API_KEY = API_KEY
    API_VERSION = 0
    RESPONSE_TYPE: Any = _ConsumerGroupDescribeResponseV0
    SCHEMA = Schema()

    def __init__(self, groups: Sequence[str]) -> None:
        super().__init__()
        self._groups = list(groups)

    def encode(self) -> bytes:
        return encode_request(self._groups)


class _ConsumerGroupDescribeRequestV1(_ConsumerGroupDescribeRequestV0):
    API_VERSION = 1
    RESPONSE_TYPE = _ConsumerGroupDescribeResponseV1


class _ConsumerGroupDescribe(Request[_ConsumerGroupDescribeRequestV0 | _ConsumerGroupDescribeRequestV1]):
    API_KEY = API_KEY

    def __init__(self, groups: Sequence[str]) -> None:
        self._groups = list(groups)

    def build(
        self,
        request_struct_class: type[_ConsumerGroupDescribeRequestV0 | _ConsumerGroupDescribeRequestV1],
    ) -> _ConsumerGroupDescribeRequestV0 | _ConsumerGroupDescribeRequestV1:
        return request_struct_class(self._groups)


def _refused(group: str, cluster: str) -> AuthorizationError:
    return AuthorizationError(f"Not authorized to access group: {group} on {cluster}")


async def describe_groups(
    admin: AIOKafkaAdminClient, groups: Sequence[str], cluster: str
) -> dict[str, GroupView]:
    """``{group: GroupView}`` for the distinct ``groups`` (see the module contract)."""
    by_node: dict[int, list[str]] = {}
    for group in dict.fromkeys(groups):
        by_node.setdefault(await admin.find_coordinator(group), []).append(group)
    classic: dict[str, ClassicEntry] = {}
    consumer: dict[str, DescribedGroup] = {}
    for node, members in by_node.items():
        response = await seam.admin_send_request(admin, _DescribeGroups(members), node)
        for entry in response.groups:
            error_code, group_id, state, members_list = entry[0], entry[1], entry[2], entry[5]
            if error_code == GROUP_AUTHORIZATION_FAILED:
                raise _refused(group_id, cluster)
            holders = tuple(member_label(m[-4], m[-3], m[0]) for m in members_list)
            classic[group_id] = ClassicEntry(error_code, state, len(members_list), holders)
        try:
            answer = await seam.admin_send_request(admin, _ConsumerGroupDescribe(members), node)
        except (IncompatibleBrokerVersion, NotImplementedError):
            continue  # a broker before KIP-848: classic groups only
        for described in answer.groups:
            if described.error_code == GROUP_AUTHORIZATION_FAILED:
                raise _refused(described.group_id, cluster)
            consumer[described.group_id] = described
    return {
        group: resolve_group(group, classic.get(group), consumer.get(group) if consumer else None)
        for group in dict.fromkeys(groups)
    }
