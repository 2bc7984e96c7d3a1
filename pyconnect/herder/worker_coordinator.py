"""The Connect side of group membership: what a worker offers, how the leader assigns, what it holds.

A port of Java's ``WorkerCoordinator`` above a group member (``ConnectGroupMember`` for real Kafka,
a fake in unit tests). One call to :meth:`WorkerCoordinator.rebalance` is one JoinGroup/SyncGroup
round, in Java's order:

1. ``onJoinPrepare``: if the protocol currently in use is eager, everything held is revoked
   (``on_revoked``) before joining; cooperative members keep running what they hold.
2. ``metadata()``: the config snapshot is taken now; the member offers the protocols of its
   ``connect.protocol`` (sessioned > compatible > default), each with its REST URL, the snapshot's
   offset and (V1/V2) its whole current holding.
3. ``onLeaderElected``: as leader, run the eager assignor for ``default`` or the incremental
   cooperative assignor for ``compatible``/``sessioned``. If the leader's snapshot is behind the
   members' max offset, it takes one fresh snapshot; still behind -> ``CONFIG_MISMATCH`` for all.
   The cooperative assignor's memory (:class:`AssignorState`) is kept for the coordinator's whole
   life, like Java's assignor object; it forgets previous assignments by itself when the leader did
   not complete the previous generation (KIP-415).
4. ``onJoinComplete``: decode this member's assignment (any version, tolerant V1 schema); under
   V1/V2 call ``on_revoked`` for revocations, then merge into the holding
   (:func:`merge_into_snapshot`); under eager the assignment is the complete holding.

What to do with the outcome (catch up with the config topic, start work, rejoin after revocations or
after ``delay``) belongs to the herder (spec §3.5); :class:`RebalanceOutcome` carries what it needs.

Concurrency: one task (the herder's tick) calls :meth:`rebalance` / :meth:`drop_assignment` at a
time; the coordinator starts no task of its own. Time comes from the injected ``clock`` (seconds).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pyconnect.protocol.assignor import INITIAL_STATE, AssignorState, ConfigSnapshot, assign
from pyconnect.protocol.connect_assignment import (
    CONNECT_PROTOCOL_V0,
    EMPTY_ASSIGNMENT,
    NO_ERROR,
    Assignment,
    ExtendedAssignment,
    decode_assignment,
    encode_assignment,
    merge_into_snapshot,
)
from pyconnect.protocol.connect_metadata import (
    ConnectProtocolCompatibility,
    ExtendedWorkerState,
    decode_metadata,
    join_group_protocols,
)
from pyconnect.protocol.eager_assignor import assign_eager
from pyconnect.protocol.task_id import ConnectorTaskId

log = logging.getLogger(__name__)

DEFAULT_MAX_DELAY_MS = 300000


class JoinedGroup(Protocol):
    """What a completed join reports (``pyconnect.kafka.group_member.JoinResult``)."""

    @property
    def generation(self) -> int: ...
    @property
    def member_id(self) -> str: ...
    @property
    def leader_id(self) -> str: ...
    @property
    def protocol(self) -> str: ...
    @property
    def is_leader(self) -> bool: ...
    @property
    def assignment(self) -> bytes: ...


class GroupMember(Protocol):
    """The membership driver :class:`WorkerCoordinator` needs (``ConnectGroupMember`` satisfies it).

    ``member_id``/``generation`` must already hold the new round's values while ``assign`` runs.
    """

    @property
    def member_id(self) -> str: ...
    @property
    def generation(self) -> int: ...
    @property
    def rejoin_needed(self) -> asyncio.Event: ...
    async def join(
        self,
        protocols: Sequence[tuple[str, bytes]],
        assign: Callable[[str, Sequence[tuple[str, bytes]]], Awaitable[Mapping[str, bytes]]],
    ) -> JoinedGroup: ...
    def request_rejoin(self, reason: str = ...) -> None: ...


ConfigSnapshotSource = Callable[[], "ConfigSnapshot | tuple[int, ConfigSnapshot]"]
"""Returns the worker's current config snapshot (offset = last consumed record + 1, -1 if empty).

A ``(offset, snapshot)`` pair is accepted too; the pair's offset wins.
"""

RevocationListener = Callable[[str | None, Sequence[str], Sequence[ConnectorTaskId]], Awaitable[None]]
"""Java's ``WorkerRebalanceListener.onRevoked(leader, connectors, tasks)``."""


@dataclass(frozen=True, slots=True)
class LeaderState:
    """The leader's view after its assignment (Java ``LeaderState``): who runs what, at which URL.

    Under the cooperative protocol owners are the holdings after this round's revocations (items
    whose reassignment is delayed have no owner).
    """

    member_urls: Mapping[str, str]
    connector_owners: Mapping[str, str]
    task_owners: Mapping[ConnectorTaskId, str]

    def owner_url(self, item: str | ConnectorTaskId) -> str | None:
        owner = (
            self.task_owners.get(item)
            if isinstance(item, ConnectorTaskId)
            else self.connector_owners.get(item)
        )
        return None if owner is None else self.member_urls.get(owner)


@dataclass(frozen=True, slots=True)
class RebalanceOutcome:
    """One completed round as this worker sees it.

    ``assignment`` is this member's assignment as received (V1/V2: only new items + revocations;
    V0: complete). ``holding`` is what the member runs from now on (Java's ``assignmentSnapshot``),
    the allocation it advertises next time. ``leader_state`` is set only on the leader.
    """

    generation: int
    member_id: str
    leader_id: str
    leader_url: str | None
    protocol: ConnectProtocolCompatibility
    is_leader: bool
    assignment: ExtendedAssignment
    holding: ExtendedAssignment
    leader_state: LeaderState | None = field(default=None, compare=False)

    @property
    def error(self) -> int:
        return self.assignment.error

    @property
    def failed(self) -> bool:
        """True for ``CONFIG_MISMATCH``: the leader could not reach the members' max config offset."""
        return self.assignment.error != NO_ERROR

    @property
    def config_offset(self) -> int:
        return self.assignment.config_offset

    @property
    def delay(self) -> int:
        """Milliseconds after which the member should rejoin (0 = no scheduled rejoin)."""
        return self.assignment.delay

    @property
    def eager(self) -> bool:
        return self.protocol is ConnectProtocolCompatibility.EAGER

    @property
    def revoked(self) -> bool:
        """Whether this round revoked anything from this member (then it must rejoin at once)."""
        return bool(self.assignment.revoked_connectors or self.assignment.revoked_tasks)


class WorkerCoordinator:
    """Builds this worker's JoinGroup protocols, assigns as leader, tracks what this worker holds.

    ``mode`` is ``connect.protocol`` (``eager``/``compatible``/``sessioned`` or the enum);
    ``rest_url`` the advertised URL with its trailing ``/``; ``max_delay_ms`` is
    ``scheduled.rebalance.max.delay.ms``. ``on_revoked`` is awaited whenever Java's listener would
    see ``onRevoked``: eager revocation before a join, cooperative revocations after one, and
    :meth:`drop_assignment`.
    """

    def __init__(
        self,
        member: GroupMember,
        *,
        mode: ConnectProtocolCompatibility | str,
        rest_url: str,
        config_snapshot: ConfigSnapshotSource,
        max_delay_ms: int = DEFAULT_MAX_DELAY_MS,
        clock: Callable[[], float] = time.time,
        on_revoked: RevocationListener | None = None,
    ) -> None:
        self.member = member
        self.mode = (
            mode
            if isinstance(mode, ConnectProtocolCompatibility)
            else ConnectProtocolCompatibility.from_config(mode)
        )
        self.rest_url = rest_url
        self.max_delay_ms = max_delay_ms
        self._config_snapshot = config_snapshot
        self._clock = clock
        self._on_revoked = on_revoked
        self._holding: ExtendedAssignment | None = None
        self._current_protocol = self.mode
        self._last_completed_generation = -1
        self._snapshot: ConfigSnapshot | None = None
        self._assignor_state = INITIAL_STATE
        self._leader_state: LeaderState | None = None
        self._needs_join_prepare = True
        self._offered: tuple[ExtendedWorkerState, list[tuple[str, bytes]]] | None = None
        self._members: dict[str, tuple[bytes, ExtendedWorkerState]] = {}

    # -- state ----------------------------------------------------------------------------------

    @property
    def holding(self) -> ExtendedAssignment | None:
        """What this worker holds (Java's ``assignmentSnapshot``); None before the first round."""
        return self._holding

    @property
    def current_protocol(self) -> ConnectProtocolCompatibility:
        """The protocol the group selected last (initially this worker's own ``connect.protocol``)."""
        return self._current_protocol

    @property
    def last_completed_generation(self) -> int:
        return self._last_completed_generation

    @property
    def assignor_state(self) -> AssignorState:
        """The cooperative assignor's leader-local memory (for inspection and tests)."""
        return self._assignor_state

    @property
    def leader_state(self) -> LeaderState | None:
        """Set while this worker is leader of the last completed round."""
        return self._leader_state

    @property
    def config_snapshot(self) -> ConfigSnapshot | None:
        """The snapshot taken for the last JoinGroup (refreshed by the leader when it was behind)."""
        return self._snapshot

    def rejoin_needed(self) -> bool:
        """Java's ``rejoinNeededOrPending``: the member asked, or nothing valid is held."""
        return self.member.rejoin_needed.is_set() or self._holding is None or self._holding.failed

    def request_rejoin(self, reason: str) -> None:
        self.member.request_rejoin(reason)

    def metadata(self) -> list[tuple[str, bytes]]:
        """Take the config snapshot and return the JoinGroup protocols (Java ``metadata()``)."""
        self._snapshot = self._take_snapshot()
        state = ExtendedWorkerState(self.rest_url, self._snapshot.offset, self._holding or EMPTY_ASSIGNMENT)
        if self._offered is None or self._offered[0] != state:
            self._offered = (state, join_group_protocols(state, self.mode))
        return list(self._offered[1])

    # -- rounds ---------------------------------------------------------------------------------

    async def rebalance(self) -> RebalanceOutcome:
        """Run one JoinGroup/SyncGroup round through the member; see the module docstring.

        Errors of the member (``GroupJoinError`` ...) and of ``on_revoked`` propagate; the holding is
        then unchanged. The eager pre-join revocation runs once per completed round, like Java's
        ``needsJoinPrepare``: retrying after a failed join does not revoke the same work again.
        """
        self._leader_state = None
        if self._needs_join_prepare:
            holding = self._holding
            eager = self._current_protocol is ConnectProtocolCompatibility.EAGER
            if eager and holding is not None and not holding.failed:
                await self._revoke(holding.leader, holding.connectors, holding.tasks)
            self._needs_join_prepare = False
        result = await self.member.join(self.metadata(), self._assign)
        return await self._complete(result)

    async def drop_assignment(self, reason: str) -> ExtendedAssignment | None:
        """Revoke everything held and forget it (coordinator unreachable; Java ``poll``).

        Returns what was held. The next :meth:`rebalance` then advertises an empty holding.
        """
        holding, self._holding = self._holding, None
        if holding is not None and not holding.failed:
            log.info("Revoking assignment %s: %s", holding, reason)
            await self._revoke(holding.leader, holding.connectors, holding.tasks)
        self._leader_state = None
        return holding

    async def _revoke(
        self, leader: str | None, connectors: Sequence[str], tasks: Sequence[ConnectorTaskId]
    ) -> None:
        if self._on_revoked is not None:
            await self._on_revoked(leader, tuple(connectors), tuple(tasks))

    async def _complete(self, result: JoinedGroup) -> RebalanceOutcome:
        received = decode_assignment(result.assignment)
        protocol = ConnectProtocolCompatibility.from_protocol(result.protocol)
        self._current_protocol = protocol
        eager = protocol is ConnectProtocolCompatibility.EAGER
        if not eager and (received.revoked_connectors or received.revoked_tasks):
            await self._revoke(received.leader, received.revoked_connectors, received.revoked_tasks)
        holding = merge_into_snapshot(self._holding, received, eager=eager)
        self._holding = holding
        self._needs_join_prepare = True
        self._last_completed_generation = result.generation
        if not result.is_leader:
            self._leader_state = None
        log.info(
            "Joined generation %d as %s (leader %s, protocol %s): assigned %s, revoked %s, delay %d, offset %d, error %d",
            result.generation, result.member_id, received.leader, protocol.protocol,
            _describe(received.connectors, received.tasks),
            _describe(received.revoked_connectors, received.revoked_tasks),
            received.delay, received.config_offset, received.error,
        )  # fmt: skip
        return RebalanceOutcome(
            generation=result.generation,
            member_id=result.member_id,
            leader_id=result.leader_id,
            leader_url=received.leader_url,
            protocol=protocol,
            is_leader=result.is_leader,
            assignment=received,
            holding=holding,
            leader_state=self._leader_state,
        )

    # -- leader ---------------------------------------------------------------------------------

    async def _assign(self, protocol: str, members: Sequence[tuple[str, bytes]]) -> dict[str, bytes]:
        """``onLeaderElected``: run the assignor for the selected protocol and encode each assignment."""
        mode = ConnectProtocolCompatibility.from_protocol(protocol)
        leader_id = self.member.member_id
        decoded = self._decode_members(members)
        snapshot = self._snapshot if self._snapshot is not None else self._take_snapshot()
        max_offset = max(state.config_offset for _, state in decoded)
        fresh = self._take_snapshot() if snapshot.offset < max_offset else None
        urls = {member_id: state.url for member_id, state in decoded}
        if mode is ConnectProtocolCompatibility.EAGER:
            complete, used = assign_eager(decoded, leader_id, snapshot, fresh_snapshot=fresh)
            self._snapshot = used
            encoded = {m: encode_assignment(a, CONNECT_PROTOCOL_V0) for m, a in complete.items()}
            self._leader_state = _eager_leader_state(urls, complete)
            return encoded
        result = assign(
            decoded,
            leader_id,
            snapshot,
            self._assignor_state,
            now_ms=int(self._clock() * 1000),
            max_delay_ms=self.max_delay_ms,
            last_completed_generation_id=self._last_completed_generation,
            generation_id=self.member.generation,
            protocol_version=mode.version,
            fresh_snapshot=fresh,
        )
        self._assignor_state = result.state
        self._snapshot = result.snapshot
        if all(not a.failed for a in result.assignments.values()):
            self._leader_state = LeaderState(
                urls,
                {c: m for m, cs in result.owned_connectors.items() for c in cs},
                {t: m for m, ts in result.owned_tasks.items() for t in ts},
            )
        return {m: encode_assignment(a, mode.version) for m, a in result.assignments.items()}

    def _decode_members(self, members: Sequence[tuple[str, bytes]]) -> list[tuple[str, ExtendedWorkerState]]:
        """Each member's metadata, decoded again only when its bytes changed since the last round
        this worker led (a member that gained no work offers the same holding, and holdings grow
        with the cluster)."""
        previous, self._members = self._members, {}
        decoded = []
        for member_id, metadata in members:
            known = previous.get(member_id)
            state = known[1] if known is not None and known[0] == metadata else decode_metadata(metadata)
            self._members[member_id] = (bytes(metadata), state)
            decoded.append((member_id, state))
        return decoded

    def _take_snapshot(self) -> ConfigSnapshot:
        taken = self._config_snapshot()
        if isinstance(taken, tuple):
            offset, snapshot = taken
            return snapshot if snapshot.offset == offset else ConfigSnapshot(offset, snapshot.task_counts)
        return taken


def _eager_leader_state(urls: Mapping[str, str], assignments: Mapping[str, Assignment]) -> LeaderState | None:
    if any(a.failed for a in assignments.values()):
        return None
    return LeaderState(
        urls,
        {c: m for m, a in assignments.items() for c in a.connectors},
        {t: m for m, a in assignments.items() for t in a.tasks},
    )


def _describe(connectors: Sequence[str], tasks: Sequence[ConnectorTaskId]) -> str:
    return "[" + ", ".join([*connectors, *(str(t) for t in tasks)]) + "]"
