"""Group offsets of many groups at a time, for a sync that runs several times a second (KIP-709, KIP-932).

:class:`SyncAdmin` is a :class:`~pyconnect.kafka.group_admin.GroupAdmin` that remembers each group's
coordinator (one FindCoordinator per group until the coordinator moves) and counts the requests it
sends (:attr:`SyncAdmin.requests`, by API name), with:

- :meth:`~SyncAdmin.fetch_committed`: committed offsets of many groups, one OffsetFetch v8 request per
  coordinator (:mod:`pyconnect.protocol.offset_fetch`); a broker before Kafka 3.0 is asked one group at
  a time. Groups whose coordinator did not answer (moving, loading) are left out of the answer (asked
  again next time); partitions without an offset, or with an error, are left out.
- :meth:`~SyncAdmin.describe`: :meth:`GroupAdmin.describe_groups` with the remembered coordinators.
- :meth:`~SyncAdmin.commit`: an admin OffsetCommit (generation -1, no member id) of one group, as
  :meth:`GroupAdmin.alter_offsets`; the coordinator refuses it while the group has members. Commits
  go out on the client's two connections to the coordinator in turn, unless ``spread_commits`` is
  false: for a caller with several commits of one group in flight, whose order must hold (the sync
  keeps one per group).
- :meth:`~SyncAdmin.share_offsets` / :meth:`~SyncAdmin.alter_share_offsets`: share-group start offsets
  (DescribeShareGroupOffsets, AlterShareGroupOffsets; :mod:`pyconnect.protocol.share_group_offsets`). A
  cluster without them raises :class:`ShareGroupsUnsupported`; answers carry the version the broker
  spoke (v1 means Kafka 4.2 or later).
- :meth:`~SyncAdmin.group_types`: every group with its protocol type (``consumer``, ``share``, ...).
- :meth:`~SyncAdmin.log_starts` / :meth:`~SyncAdmin.log_ends`: ListOffsets of the partitions' leaders,
  partitions the cluster lacks (or whose leader errs) left out.

Refusals (authorization) raise :class:`~pyconnect.errors.AuthorizationError` naming the group or topic
and the cluster; transport errors raise. One event loop uses an instance at a time.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self, cast

from aiokafka import TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.client import ConnectionGroup
from aiokafka.errors import IncompatibleBrokerVersion
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.offset import OffsetRequest
from aiokafka.protocol.types import Schema

from pyconnect.errors import AuthorizationError, ConnectError
from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.group_admin import CommittedOffset, GroupAdmin, admin_offset_commit
from pyconnect.kafka.group_describe import describe_groups
from pyconnect.kafka.group_view import UNKNOWN, GroupView, share_view
from pyconnect.protocol import offset_fetch, share_group_describe, share_group_offsets
from pyconnect.protocol.share_group_offsets import AlterAnswer

TP = tuple[str, int]
COORDINATOR_ERRORS = {
    14: "COORDINATOR_LOAD_IN_PROGRESS",
    15: "COORDINATOR_NOT_AVAILABLE",
    16: "NOT_COORDINATOR",
}
"""Group errors after which the group's coordinator is looked up again."""
TOPIC_AUTHORIZATION_FAILED = 29
GROUP_AUTHORIZATION_FAILED = 30
EARLIEST = -2
LATEST = -1
MAX_GROUPS_PER_REQUEST = 200
API_NAMES = {2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch", 10: "FindCoordinator"}
API_NAMES |= {15: "DescribeGroups", 16: "ListGroups", 69: "ConsumerGroupDescribe"}
API_NAMES |= {90: "DescribeShareGroupOffsets", 91: "AlterShareGroupOffsets"}


class ShareGroupsUnsupported(ConnectError):
    """The cluster cannot read or set share-group offsets (a Kafka release before 4.0 or 4.1); the
    message names the cluster and the API it lacks."""


# -- raw requests over aiokafka's transport ----------------------------------------------------------


class _Answer(Response):
    """A response decoded by one of our codecs: ``answer`` holds what the codec returned."""

    API_KEY = -1
    API_VERSION = -1
    SCHEMA = Schema()
    answer: Any

    @classmethod
    def _decode(cls, raw: bytes) -> Any:
        raise NotImplementedError

    @classmethod
    def decode(cls, data: io.BytesIO | bytes) -> Self:
        response = cls()
        response.answer = cls._decode(data if isinstance(data, bytes) else data.read())
        return response


class _Body(RequestStruct):
    """A request whose body one of our codecs encoded."""

    FLEXIBLE_VERSION = True
    API_KEY = -1
    API_VERSION = -1
    RESPONSE_TYPE: Any = _Answer
    SCHEMA = Schema()

    def __init__(self, body: bytes) -> None:
        super().__init__()
        self._body = body

    def encode(self) -> bytes:
        return self._body


class _OffsetFetchAnswer(_Answer):
    API_KEY, API_VERSION = offset_fetch.API_KEY, offset_fetch.VERSION

    @classmethod
    def _decode(cls, raw: bytes) -> Any:
        return offset_fetch.decode_response(raw)[1]


class _OffsetFetchBody(_Body):
    API_KEY, API_VERSION, RESPONSE_TYPE = offset_fetch.API_KEY, offset_fetch.VERSION, _OffsetFetchAnswer


class _OffsetFetch(Request[_OffsetFetchBody]):
    API_KEY = offset_fetch.API_KEY

    def __init__(self, groups: Sequence[str]) -> None:
        self._body = offset_fetch.encode_request(dict.fromkeys(groups))

    def build(self, request_struct_class: type[_OffsetFetchBody]) -> _OffsetFetchBody:
        return request_struct_class(self._body)


class _DescribeShareAnswerV0(_Answer):
    API_KEY, API_VERSION = share_group_offsets.DESCRIBE_API_KEY, 0

    @classmethod
    def _decode(cls, raw: bytes) -> Any:
        return share_group_offsets.decode_describe_response(raw, cls.API_VERSION)[1]


class _DescribeShareAnswerV1(_DescribeShareAnswerV0):
    API_VERSION = 1


class _DescribeShareBodyV0(_Body):
    API_KEY, API_VERSION, RESPONSE_TYPE = share_group_offsets.DESCRIBE_API_KEY, 0, _DescribeShareAnswerV0


class _DescribeShareBodyV1(_Body):
    API_KEY, API_VERSION, RESPONSE_TYPE = share_group_offsets.DESCRIBE_API_KEY, 1, _DescribeShareAnswerV1


class _DescribeShare(Request[_DescribeShareBodyV0 | _DescribeShareBodyV1]):
    API_KEY = share_group_offsets.DESCRIBE_API_KEY

    def __init__(self, groups: Sequence[str]) -> None:
        self._body = share_group_offsets.encode_describe_request(dict.fromkeys(groups))

    def build(
        self, request_struct_class: type[_DescribeShareBodyV0 | _DescribeShareBodyV1]
    ) -> _DescribeShareBodyV0 | _DescribeShareBodyV1:
        return request_struct_class(self._body)


class _ShareDescribeAnswerV0(_Answer):
    API_KEY, API_VERSION = share_group_describe.API_KEY, 0

    @classmethod
    def _decode(cls, raw: bytes) -> Any:
        return share_group_describe.decode_response(raw)[1]


class _ShareDescribeAnswerV1(_ShareDescribeAnswerV0):
    API_VERSION = 1


class _ShareDescribeBodyV0(_Body):
    API_KEY, API_VERSION, RESPONSE_TYPE = share_group_describe.API_KEY, 0, _ShareDescribeAnswerV0


class _ShareDescribeBodyV1(_Body):
    API_KEY, API_VERSION, RESPONSE_TYPE = share_group_describe.API_KEY, 1, _ShareDescribeAnswerV1


class _ShareDescribe(Request[_ShareDescribeBodyV0 | _ShareDescribeBodyV1]):
    API_KEY = share_group_describe.API_KEY

    def __init__(self, groups: Sequence[str]) -> None:
        self._body = share_group_describe.encode_request(groups)

    def build(
        self, request_struct_class: type[_ShareDescribeBodyV0 | _ShareDescribeBodyV1]
    ) -> _ShareDescribeBodyV0 | _ShareDescribeBodyV1:
        return request_struct_class(self._body)


class _AlterShareAnswer(_Answer):
    API_KEY, API_VERSION = share_group_offsets.ALTER_API_KEY, share_group_offsets.ALTER_VERSION

    @classmethod
    def _decode(cls, raw: bytes) -> Any:
        return share_group_offsets.decode_alter_response(raw)[1]


class _AlterShareBody(_Body):
    API_KEY, API_VERSION = share_group_offsets.ALTER_API_KEY, share_group_offsets.ALTER_VERSION
    RESPONSE_TYPE = _AlterShareAnswer


class _AlterShare(Request[_AlterShareBody]):
    API_KEY = share_group_offsets.ALTER_API_KEY

    def __init__(self, group: str, offsets: Mapping[TP, int]) -> None:
        by_topic: dict[str, list[tuple[int, int]]] = {}
        for (topic, partition), start in offsets.items():
            by_topic.setdefault(topic, []).append((partition, start))
        self._body = share_group_offsets.encode_alter_request(group, by_topic)

    def build(self, request_struct_class: type[_AlterShareBody]) -> _AlterShareBody:
        return request_struct_class(self._body)


# -- the admin --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShareOffsets:
    """A DescribeShareGroupOffsets answer: start offsets per group (partitions without share state left
    out), the group errors, the version the broker answered, and from v1 (Kafka 4.2, KIP-1226) each
    partition's lag: the records from the start offset to the partition's end that have not completed
    delivery (``-1`` when the broker does not know)."""

    version: int
    offsets: dict[str, dict[TP, int]]
    errors: dict[str, int]
    lags: dict[str, dict[TP, int]] = field(default_factory=dict)


class _Coordinators:
    """What :func:`describe_groups` asks of an admin client, answered with remembered coordinators."""

    def __init__(self, owner: SyncAdmin) -> None:
        self._owner = owner

    async def find_coordinator(self, group: str) -> int:
        return await self._owner.coordinator(group)

    async def _send_request(self, request: Request[Any], node_id: int | None = None) -> Any:
        return await self._owner.send(request, node_id)


class SyncAdmin(GroupAdmin):
    """See the module docstring."""

    def __init__(
        self, java_config: Mapping[str, Any], cluster: str | None = None, *, spread_commits: bool = True
    ) -> None:
        super().__init__(java_config, cluster)
        self._spread_commits = spread_commits
        self._coordinators: dict[str, int] = {}
        self._batched_fetch = True
        self._metadata: Any = None
        self._ends: dict[TP, int] = {}
        self.requests: Counter[str] = Counter()
        self._spread = False

    async def send(self, request: Request[Any], node_id: int | None = None) -> Any:
        """Send ``request`` (to ``node_id``, else any broker), counted in :attr:`requests`."""
        self.requests[API_NAMES.get(request.API_KEY, str(request.API_KEY))] += 1
        return await seam.admin_send_request(self._admin, request, node_id)

    async def _send_spread(self, request: Request[Any], node_id: int) -> Any:
        """Send ``request`` on one of the client's two connections to ``node_id``, in turn: a broker
        answers one connection's requests one at a time, so commits of many groups in flight at once
        wait half as long."""
        self.requests[API_NAMES.get(request.API_KEY, str(request.API_KEY))] += 1
        self._spread = not self._spread
        group = ConnectionGroup.COORDINATION if self._spread else ConnectionGroup.DEFAULT
        return await seam.admin_client(self._admin).send(node_id, request, group=group)

    async def coordinator(self, group: str) -> int:
        node = self._coordinators.get(group)
        if node is None:
            self.requests["FindCoordinator"] += 1
            node = self._coordinators[group] = await self._admin.find_coordinator(group)
        return node

    def forget_coordinator(self, group: str) -> None:
        self._coordinators.pop(group, None)

    async def _by_coordinator(self, groups: Iterable[str]) -> dict[int, list[str]]:
        nodes: dict[int, list[str]] = {}
        for group in dict.fromkeys(groups):
            nodes.setdefault(await self.coordinator(group), []).append(group)
        return {
            node: chunk
            for node, members in nodes.items()
            for chunk in (
                members[i : i + MAX_GROUPS_PER_REQUEST]
                for i in range(0, len(members), MAX_GROUPS_PER_REQUEST)
            )
        }

    def _refused_group(self, group: str) -> AuthorizationError:
        return AuthorizationError(f"Not authorized to access group: {group} on {self.cluster}")

    async def fetch_committed(self, groups: Sequence[str]) -> dict[str, dict[TP, CommittedOffset]]:
        """``{group: {(topic, partition): CommittedOffset}}`` for the groups whose coordinator answered."""
        await self.start()
        if not groups:
            return {}
        if not self._batched_fetch:
            return {group: await self.committed_offsets(group) for group in dict.fromkeys(groups)}
        found: dict[str, dict[TP, CommittedOffset]] = {}
        with self._refusals():
            for node, members in (await self._by_coordinator(groups)).items():
                try:
                    response = await self.send(_OffsetFetch(members), node)
                except (IncompatibleBrokerVersion, NotImplementedError):
                    self._batched_fetch = False  # a broker before Kafka 3.0 (KIP-709)
                    return await self.fetch_committed(groups)
                for answer in response.answer:
                    offsets = self._group_offsets(answer)
                    if offsets is not None:
                        found[answer.group_id] = offsets
        return found

    def _group_offsets(self, answer: offset_fetch.FetchedGroup) -> dict[TP, CommittedOffset] | None:
        if answer.error_code == GROUP_AUTHORIZATION_FAILED:
            raise self._refused_group(answer.group_id)
        if answer.error_code:
            if answer.error_code in COORDINATOR_ERRORS:
                self.forget_coordinator(answer.group_id)
            return None
        offsets: dict[TP, CommittedOffset] = {}
        for p in answer.partitions:
            if p.error_code == TOPIC_AUTHORIZATION_FAILED:
                raise AuthorizationError(f"Not authorized to access topics: [{p.topic}] on {self.cluster}")
            if p.error_code == 0 and p.offset >= 0:
                offsets[(p.topic, p.partition)] = CommittedOffset(p.offset, p.metadata or "")
        return offsets

    async def describe(self, groups: Sequence[str]) -> dict[str, GroupView]:
        """:meth:`GroupAdmin.describe_groups` with the remembered coordinators; a group left
        ``Unknown`` has its coordinator looked up again next time."""
        await self.start()
        if not groups:
            return {}
        with self._refusals():
            views = await describe_groups(
                cast(AIOKafkaAdminClient, _Coordinators(self)), groups, self.cluster
            )
        for group, view in views.items():
            if view.state == UNKNOWN:
                self.forget_coordinator(group)
        return views

    async def commit(self, group: str, offsets: Mapping[TP, CommittedOffset]) -> dict[TP, int]:
        """Admin OffsetCommit of ``offsets``; the non-zero error codes per partition (empty: committed)."""
        await self.start()
        if not offsets:
            return {}
        request = admin_offset_commit(group, offsets)
        with self._refusals(group):
            node = await self.coordinator(group)
            response = await (
                self._send_spread(request, node) if self._spread_commits else self.send(request, node)
            )
        errors: dict[TP, int] = {}
        for topic, partitions in response.topics:
            for partition, code in partitions:
                if code == GROUP_AUTHORIZATION_FAILED:
                    raise self._refused_group(group)
                if code == TOPIC_AUTHORIZATION_FAILED:
                    raise AuthorizationError(f"Not authorized to access topics: [{topic}] on {self.cluster}")
                if code:
                    errors[(topic, partition)] = code
        if any(code in COORDINATOR_ERRORS for code in errors.values()):
            self.forget_coordinator(group)
        return errors

    async def group_types(self) -> dict[str, str]:
        """``{group: protocol type}`` of every group of every broker (ListGroups); share groups have
        protocol type ``share``, classic and consumer-protocol groups ``consumer``."""
        await self.start()
        with self._refusals():
            listed = await self._admin.list_consumer_groups()
        self.requests["ListGroups"] += 1
        return {str(entry[0]): str(entry[1]) if len(entry) > 1 else "" for entry in listed}

    async def share_offsets(self, groups: Sequence[str]) -> ShareOffsets:
        """Start offsets of the share groups ``groups`` (DescribeShareGroupOffsets, all partitions)."""
        await self.start()
        offsets: dict[str, dict[TP, int]] = {}
        errors: dict[str, int] = {}
        lags: dict[str, dict[TP, int]] = {}
        version = share_group_offsets.LAG_VERSION
        with self._refusals():
            for node, members in (await self._by_coordinator(groups)).items():
                try:
                    response = await self.send(_DescribeShare(members), node)
                except (IncompatibleBrokerVersion, NotImplementedError):
                    raise ShareGroupsUnsupported(
                        f"{self.cluster} has no share groups (it does not answer DescribeShareGroupOffsets)"
                    ) from None
                version = min(version, response.API_VERSION)
                for answer in response.answer:
                    self._share_answer(answer, offsets, errors, lags)
        return ShareOffsets(version, offsets, errors, lags)

    def _share_answer(
        self,
        answer: share_group_offsets.ShareGroupOffsets,
        offsets: dict[str, dict[TP, int]],
        errors: dict[str, int],
        lags: dict[str, dict[TP, int]],
    ) -> None:
        if answer.error_code == GROUP_AUTHORIZATION_FAILED:
            raise self._refused_group(answer.group_id)
        if answer.error_code:
            errors[answer.group_id] = answer.error_code
            if answer.error_code in COORDINATOR_ERRORS:
                self.forget_coordinator(answer.group_id)
            return
        found = offsets.setdefault(answer.group_id, {})
        lag = lags.setdefault(answer.group_id, {})
        for p in answer.partitions:
            if p.error_code == TOPIC_AUTHORIZATION_FAILED:
                raise AuthorizationError(f"Not authorized to access topics: [{p.topic}] on {self.cluster}")
            if p.error_code == 0 and p.start_offset >= 0:
                found[(p.topic, p.partition)] = p.start_offset
                if p.lag is not None:
                    lag[(p.topic, p.partition)] = p.lag

    async def describe_share(self, groups: Sequence[str]) -> dict[str, GroupView]:
        """The views of the share groups ``groups`` (ShareGroupDescribe): protocol ``share``, the state and
        members; a group that does not exist (or is not a share group) is ``Dead``, any other error
        ``Unknown`` (never idle)."""
        await self.start()
        views: dict[str, GroupView] = {}
        with self._refusals():
            for node, members in (await self._by_coordinator(groups)).items():
                try:
                    response = await self.send(_ShareDescribe(members), node)
                except (IncompatibleBrokerVersion, NotImplementedError):
                    raise ShareGroupsUnsupported(
                        f"{self.cluster} has no share groups (it does not answer ShareGroupDescribe)"
                    ) from None
                for found in response.answer:
                    if found.error_code == GROUP_AUTHORIZATION_FAILED:
                        raise self._refused_group(found.group_id)
                    views[found.group_id] = share_view(found)
                    if found.error_code in COORDINATOR_ERRORS:
                        self.forget_coordinator(found.group_id)
        return views

    async def alter_share_offsets(self, group: str, offsets: Mapping[TP, int]) -> AlterAnswer:
        """Set start offsets of share group ``group`` (AlterShareGroupOffsets); the answer as the broker
        gave it (``NON_EMPTY_GROUP`` while the group has members)."""
        await self.start()
        with self._refusals(group):
            try:
                response = await self.send(_AlterShare(group, offsets), await self.coordinator(group))
            except (IncompatibleBrokerVersion, NotImplementedError):
                raise ShareGroupsUnsupported(
                    f"{self.cluster} cannot set share group offsets (it does not answer AlterShareGroupOffsets)"
                ) from None
        answer: AlterAnswer = response.answer
        if answer.error_code == GROUP_AUTHORIZATION_FAILED:
            raise self._refused_group(group)
        if answer.error_code in COORDINATOR_ERRORS:
            self.forget_coordinator(group)
        return answer

    async def log_starts(self, partitions: Iterable[TP]) -> dict[TP, int]:
        """The log start offset of each partition (one ListOffsets per leader)."""
        return await self._list_offsets(partitions, EARLIEST)

    async def log_ends(self, partitions: Iterable[TP], *, refresh: bool = False) -> dict[TP, int]:
        """The log end offset of each partition, remembered: asked again only for partitions not known
        yet, or all of them with ``refresh`` (an end offset never moves back while the log is kept)."""
        wanted = list(dict.fromkeys(partitions))
        missing = wanted if refresh else [tp for tp in wanted if tp not in self._ends]
        if missing:
            self._ends.update(await self._list_offsets(missing, LATEST))
        return {tp: self._ends[tp] for tp in wanted if tp in self._ends}

    async def _list_offsets(self, partitions: Iterable[TP], timestamp: int) -> dict[TP, int]:
        await self.start()
        wanted = list(dict.fromkeys(partitions))
        if not wanted:
            return {}
        with self._refusals():
            by_leader = await self._leaders(wanted)
            found: dict[TP, int] = {}
            for leader, topics in by_leader.items():
                request = OffsetRequest(
                    -1, 0, [(t, [(p, timestamp) for p in ps]) for t, ps in topics.items()]
                )
                response = await self.send(request, leader)
                for topic, answers in response.topics:
                    for partition, error_code, *info in answers:
                        if error_code == TOPIC_AUTHORIZATION_FAILED:
                            raise AuthorizationError(
                                f"Not authorized to access topics: [{topic}] on {self.cluster}"
                            )
                        if error_code:
                            self._metadata = None  # a leader moved: metadata asked again next time
                            continue
                        found[(topic, partition)] = (
                            (info[0][0] if info[0] else 0) if response.API_VERSION == 0 else info[1]
                        )
        return found

    async def _leaders(self, partitions: Sequence[TP]) -> dict[int, dict[str, list[int]]]:
        for attempt in range(2):
            if self._metadata is None or attempt:
                self.requests["Metadata"] += 1
                self._metadata = await seam.admin_client(self._admin).fetch_all_metadata()
            by_leader: dict[int, dict[str, list[int]]] = {}
            unknown = False
            for topic, partition in partitions:
                leader = self._metadata.leader_for_partition(TopicPartition(topic, partition))
                if leader is None or leader < 0:
                    unknown = True
                    continue
                by_leader.setdefault(leader, {}).setdefault(topic, []).append(partition)
            if not unknown:
                break
        return by_leader
