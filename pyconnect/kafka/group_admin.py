"""Consumer-group operations of the mirror's checkpoint connector and task, the failover command and
the sink group tools, on one cluster (:class:`GroupAdmin`), with the committed offset value they share.

Contract: transport and coordinator errors raise; refusals raise
:class:`~pyconnect.errors.AuthorizationError` naming the group or topic; other per-partition commit
errors are returned. Classic and consumer-protocol (KIP-848) groups are listed, read and committed
alike.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka.protocol.commit import OffsetCommitRequest

from pyconnect.errors import AuthorizationError
from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.admin_client import AdminClient
from pyconnect.kafka.group_describe import describe_groups
from pyconnect.kafka.group_view import GroupView

log = logging.getLogger(__name__)

TOPIC_AUTHORIZATION_FAILED = 29
GROUP_AUTHORIZATION_FAILED = 30


# -- consumer groups (MirrorCheckpointConnector / MirrorCheckpointTask) ---------------------------------

CONSUMER_PROTOCOL_TYPES = ("consumer", "")
"""Protocol types Java's ``Admin.listConsumerGroups`` reports (Connect and other groups are left out)."""


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    """A group's committed offset for one partition (Java ``OffsetAndMetadata``; metadata ``""`` if none)."""

    offset: int
    metadata: str = ""


def admin_offset_commit(group: str, offsets: Mapping[tuple[str, int], CommittedOffset]) -> Any:
    """The OffsetCommit request an admin sends for ``group`` (generation -1, no member id: Java's
    ``alterConsumerGroupOffsets``), ``offsets`` grouped by topic."""
    by_topic: dict[str, list[tuple[int, int, str]]] = {}
    for (topic, partition), committed in offsets.items():
        by_topic.setdefault(topic, []).append((partition, committed.offset, committed.metadata))
    return OffsetCommitRequest(
        group,
        OffsetCommitRequest.DEFAULT_GENERATION_ID,
        "",
        OffsetCommitRequest.DEFAULT_RETENTION_TIME,
        list(by_topic.items()),
    )


class GroupAdmin(AdminClient):
    """Consumer-group operations of the checkpoint connector and task on one cluster.

    Errors: transport and coordinator errors raise (the caller's scheduler logs them); refusals raise
    :class:`AuthorizationError` naming the group or topic; other per-partition commit errors are returned.
    Classic groups and consumer-protocol groups (KIP-848) are listed, read and committed alike; each
    kind is described with its own API (:meth:`describe_groups`). Group states are the broker's strings
    (``Empty``, ``Stable``, ``Reconciling``, ``Dead`` ...), ``Unknown`` when a describe went unanswered.
    """

    async def list_consumer_groups(self) -> list[str]:
        """Ids of the consumer groups of every broker (protocol type ``consumer`` or empty): classic
        and consumer-protocol groups alike (ListGroups before v5 gives both protocol type ``consumer``)."""
        await self.start()
        with self._refusals():
            listed = await self._admin.list_consumer_groups()
        return sorted({g[0] for g in listed if len(g) < 2 or g[1] in CONSUMER_PROTOCOL_TYPES})

    async def committed_offsets(self, group: str) -> dict[tuple[str, int], CommittedOffset]:
        """Every committed offset of ``group`` (partitions without an offset left out)."""
        await self.start()
        with self._refusals(group):
            found = await self._admin.list_consumer_group_offsets(group)
        return {
            (tp.topic, tp.partition): CommittedOffset(om.offset, om.metadata or "")
            for tp, om in found.items()
            if om.offset >= 0
        }

    async def describe_groups(self, groups: Sequence[str]) -> dict[str, GroupView]:
        """``{group: GroupView}``: each group described with DescribeGroups and ConsumerGroupDescribe
        (:mod:`pyconnect.kafka.group_describe`), so that classic and consumer-protocol (KIP-848) groups
        both show their real state; a group this principal may not DESCRIBE raises
        :class:`AuthorizationError`."""
        await self.start()
        if not groups:
            return {}
        with self._refusals():
            return await describe_groups(self._admin, groups, self.cluster)

    async def group_states(self, groups: Sequence[str]) -> dict[str, str]:
        """``{group: state}`` of :meth:`describe_groups` (``Dead`` for groups the coordinator does not
        know, ``Unknown`` when a describe answered an error)."""
        return {group: view.state for group, view in (await self.describe_groups(groups)).items()}

    async def alter_offsets(
        self, group: str, offsets: Mapping[tuple[str, int], CommittedOffset]
    ) -> dict[tuple[str, int], int]:
        """Commit ``offsets`` for ``group`` as an admin (generation -1, no member id), as Java's
        ``alterConsumerGroupOffsets``; the coordinator rejects it while the group has members.
        Returns the non-zero error codes per partition (empty on success); a refused group (READ) or
        topic raises :class:`AuthorizationError`."""
        await self.start()
        if not offsets:
            return {}
        request = admin_offset_commit(group, offsets)
        with self._refusals(group):
            coordinator = await self._admin.find_coordinator(group)
            response = await seam.admin_send_request(self._admin, request, coordinator)
        errors: dict[tuple[str, int], int] = {}
        for topic, partitions in response.topics:
            for partition, code in partitions:
                if code == GROUP_AUTHORIZATION_FAILED:
                    raise AuthorizationError(f"Not authorized to access group: {group} on {self.cluster}")
                if code == TOPIC_AUTHORIZATION_FAILED:
                    raise AuthorizationError(f"Not authorized to access topics: [{topic}] on {self.cluster}")
                if code:
                    errors[(topic, partition)] = code
        return errors
