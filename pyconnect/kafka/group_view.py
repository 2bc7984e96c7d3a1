"""What one consumer group is on one cluster, from the two describe APIs (classic and KIP-848 groups).

A consumer group is either a *classic* group (members speak JoinGroup/SyncGroup; DescribeGroups reports
it) or a *consumer-protocol* group (``group.protocol=consumer``, KIP-848; ConsumerGroupDescribe reports
it, while DescribeGroups up to v5 answers it as ``Dead`` without an error). Listing finds both (ListGroups
gives protocol type ``consumer`` to either kind). Offsets may be written from outside the group (an admin
commit: no member id, generation/epoch -1) only while the group is idle.

Contract (pure, no IO):
- :func:`resolve_group` combines one group's DescribeGroups entry and ConsumerGroupDescribe entry
  (``None`` when that API was not asked or the broker lacks it) into a :class:`GroupView`. A
  ConsumerGroupDescribe entry without error wins (the group is a consumer-protocol group); otherwise a
  DescribeGroups entry without error whose state is not ``Dead`` makes it classic; both answering
  "no such group" (``Dead`` / ``GROUP_ID_NOT_FOUND``) make it ``unknown`` and ``Dead``; a broker whose
  consumer protocol is off (Kafka 3.7 to 3.9 by default) answers ConsumerGroupDescribe
  ``UNSUPPORTED_VERSION``, which says the same as ``GROUP_ID_NOT_FOUND``. Any other error
  (a coordinator loading or moving, an unexpected code) gives state ``Unknown``, which is never idle:
  an unanswered question never permits a write. Authorization failures are the caller's to raise.
- :attr:`GroupView.idle`: ``Empty`` or ``Dead`` (Java's MirrorCheckpointTask syncs only those).
- :func:`share_view` is the view of a share group (KIP-932) from its ShareGroupDescribe entry: protocol
  ``share``; ``GROUP_ID_NOT_FOUND`` (no such group, or not a share group) is ``Dead``, any other error
  ``Unknown``.
- :data:`ACTIVE_GROUP_REJECTIONS`: OffsetCommit error codes with which a coordinator refuses an admin
  commit because the group has (or just got) members, for either kind of group.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pyconnect.protocol.consumer_group_describe import GROUP_ID_NOT_FOUND, DescribedGroup
from pyconnect.protocol.share_group_describe import ShareGroupDescribed

Protocol = Literal["classic", "consumer", "share", "unknown"]

EMPTY = "Empty"
DEAD = "Dead"
UNKNOWN = "Unknown"
IDLE_STATES = frozenset({EMPTY, DEAD})
UNSUPPORTED_VERSION = 35

ACTIVE_GROUP_REJECTIONS = {
    22: "ILLEGAL_GENERATION",
    25: "UNKNOWN_MEMBER_ID",
    27: "REBALANCE_IN_PROGRESS",
    68: "NON_EMPTY_GROUP",
    69: "GROUP_ID_NOT_FOUND",
    110: "FENCED_MEMBER_EPOCH",
    113: "STALE_MEMBER_EPOCH",
}
"""OffsetCommit errors a coordinator answers to a member-less commit while the group is not idle."""


@dataclass(frozen=True, slots=True)
class ClassicEntry:
    """One group of a DescribeGroups answer."""

    error_code: int
    state: str
    members: int
    holders: tuple[str, ...] = field(default=(), compare=False)
    """Each member as ``client-id@host (member id)``."""


@dataclass(frozen=True, slots=True)
class GroupView:
    """One consumer group on one cluster: its protocol, the broker's state string and its member count."""

    group: str
    protocol: Protocol
    state: str
    members: int = 0
    error: str | None = None
    holders: tuple[str, ...] = field(default=(), compare=False)
    """Each member as ``client-id@host (member id)``, when the describe answer named them."""

    @property
    def idle(self) -> bool:
        """The group may take an admin commit: ``Empty`` or unknown (``Dead``), never ``Unknown``."""
        return self.state in IDLE_STATES

    def describe(self) -> str:
        """``Stable (consumer protocol, 1 member)`` and the like, for one-line messages."""
        if self.protocol == "unknown":
            return "unknown" if self.state == DEAD else f"{self.state} ({self.error or 'not described'})"
        plural = "" if self.members == 1 else "s"
        return f"{self.state} ({self.protocol} protocol, {self.members} member{plural})"


def member_label(client_id: str, client_host: str, member_id: str) -> str:
    """How a member is named in messages: ``client-id@host (member id)``."""
    return f"{client_id}@{client_host.lstrip('/')} ({member_id})"


def resolve_group(group: str, classic: ClassicEntry | None, consumer: DescribedGroup | None) -> GroupView:
    """The view of ``group`` from its two describe answers (see the module contract)."""
    if consumer is not None and consumer.error_code == 0:
        holders = tuple(member_label(m.client_id, m.client_host, m.member_id) for m in consumer.members)
        return GroupView(group, "consumer", consumer.state, len(consumer.member_ids), holders=holders)
    if classic is not None and classic.error_code == 0 and classic.state != DEAD:
        return GroupView(group, "classic", classic.state, classic.members, holders=classic.holders)
    errors = []
    if classic is None:
        errors.append("DescribeGroups not answered")
    elif classic.error_code not in (0, GROUP_ID_NOT_FOUND):
        errors.append(f"DescribeGroups error code {classic.error_code}")
    if consumer is not None and consumer.error_code not in (0, GROUP_ID_NOT_FOUND, UNSUPPORTED_VERSION):
        errors.append(f"ConsumerGroupDescribe error code {consumer.error_code}")
    if errors:
        return GroupView(group, "unknown", UNKNOWN, 0, "; ".join(errors))
    return GroupView(group, "unknown", DEAD)


def share_view(found: ShareGroupDescribed) -> GroupView:
    """The view of a share group from its ShareGroupDescribe entry: ``Dead`` when it does not exist (or is
    no share group), ``Unknown`` on any other error (never idle)."""
    if found.error_code == 0:
        holders = tuple(member_label(m.client_id, m.client_host, m.member_id) for m in found.members)
        return GroupView(found.group_id, "share", found.state, len(found.members), holders=holders)
    if found.error_code == GROUP_ID_NOT_FOUND:
        return GroupView(found.group_id, "unknown", DEAD)
    why = f"ShareGroupDescribe error code {found.error_code}"
    return GroupView(
        found.group_id, "unknown", UNKNOWN, 0, f"{why}: {found.error_message}" if found.error_message else why
    )
