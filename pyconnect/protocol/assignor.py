"""Incremental cooperative assignor (leader side, protocols ``compatible``/V1 and ``sessioned``/V2).

A pure port of Java's ``IncrementalCooperativeAssignor`` (KIP-415; V2 adds only KIP-507 request
signing). :func:`assign` takes everything the Java object reads - member metadata in JoinGroup
order, the leader's config snapshot, generations, the clock - plus the leader-local memory
(:class:`AssignorState`), and returns the per-member assignments with the new memory. The caller
keeps the state only while it stays leader (a new leader starts from :data:`INITIAL_STATE`).

Policy, in Java's order: deleted and duplicated items are revoked; items that vanished with a
departed worker are held back for up to ``scheduled.rebalance.max.delay.ms`` and then go to workers
that were empty during the delay (or are treated as new); when no delay is active, surplus items are
revoked from over-loaded workers (connectors and tasks balanced separately, within one) and
successive revoking rounds back off ``40^n`` ms; new and reassigned items are dealt to the least
loaded workers. Assignments carry only newly assigned items and revocations, so moving work to a
new worker takes two rounds (revoke, then assign).

Java's ``HashMap`` iteration decides which worker the revocation walk visits first and the order of
revoked items; :mod:`pyconnect.protocol.javahash` reproduces it so the output matches Java's.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from pyconnect.protocol.connect_assignment import (
    CONFIG_MISMATCH,
    CONNECT_PROTOCOL_V1,
    NO_ERROR,
    ExtendedAssignment,
)
from pyconnect.protocol.connect_metadata import ExtendedWorkerState
from pyconnect.protocol.javahash import (
    default_hash_order,
    hash_set_copy_order,
    java_string_hash,
    java_string_key,
)
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.protocol.worker_load import WorkerLoad, balancing_revocations, water_fill


def _task_hash(task: ConnectorTaskId) -> int:
    return task.java_hash()


@dataclass(frozen=True, slots=True)
class ConfigSnapshot:
    """What the assignor needs from the config topic: its offset and each connector's task count.

    An inconsistent connector (incomplete task commit) has 0 tasks.
    """

    offset: int
    task_counts: Mapping[str, int] = field(default_factory=dict)

    def tasks(self, connector: str) -> list[ConnectorTaskId]:
        return [ConnectorTaskId(connector, i) for i in range(self.task_counts.get(connector, 0))]


@dataclass(frozen=True, slots=True)
class AssignorState:
    """The leader-local memory of the Java assignor between rounds (lost when leadership moves).

    ``previous_*``: what the last round left assigned (plus lost items still being waited for);
    ``revoked_*``: what the last round revoked, to detect revocations members did not apply;
    ``candidate_workers``: members seen empty while lost work waited, in Java's insertion order;
    ``scheduled_rebalance``/``delay``: absolute deadline and last announced delay (0 = none);
    ``previous_generation_id``/``previous_members``: the round these were computed in.
    """

    previous_connectors: frozenset[str] = frozenset()
    previous_tasks: frozenset[ConnectorTaskId] = frozenset()
    revoked_connectors: frozenset[str] = frozenset()
    revoked_tasks: frozenset[ConnectorTaskId] = frozenset()
    revoked_in_previous: bool = False
    candidate_workers: tuple[str, ...] = ()
    scheduled_rebalance: int = 0
    delay: int = 0
    previous_generation_id: int = -1
    previous_members: frozenset[str] = frozenset()
    successive_revoking_rebalances: int = 0


INITIAL_STATE = AssignorState()


@dataclass(frozen=True, slots=True)
class AssignmentResult:
    """Per-member assignments, the assignor's next memory and the leader's view of ownership.

    ``snapshot`` is the config snapshot the assignment was computed against (the fresh one when the
    leader had to catch up); ``owned_*`` map each member to everything it runs after this round.
    """

    assignments: dict[str, ExtendedAssignment]
    state: AssignorState
    snapshot: ConfigSnapshot
    owned_connectors: dict[str, tuple[str, ...]] = field(default_factory=dict)
    owned_tasks: dict[str, tuple[ConnectorTaskId, ...]] = field(default_factory=dict)


def revoking_rebalance_backoff(attempts: int, max_delay: int) -> int:
    """Java's ``ExponentialBackoff(max_delay == 0 ? 0 : 1, 40, max_delay, 0).backoff(attempts)``."""
    initial = min(max_delay, 0 if max_delay == 0 else 1)
    exp_max = math.log(max_delay / max(initial, 1)) / math.log(40) if max_delay > initial else 0.0
    if exp_max == 0:
        return initial
    term = initial * math.pow(40, min(attempts, exp_max))
    return min(int(term), max_delay)


def _config_mismatch(
    members: Sequence[tuple[str, ExtendedWorkerState]],
    leader_id: str,
    leader_url: str,
    max_offset: int,
    version: int,
) -> dict[str, ExtendedAssignment]:
    failed = ExtendedAssignment(CONFIG_MISMATCH, leader_id, leader_url, max_offset, version=version)
    return {member: failed for member, _ in members}


def assign(
    members: Sequence[tuple[str, ExtendedWorkerState]],
    leader_id: str,
    snapshot: ConfigSnapshot,
    state: AssignorState,
    *,
    now_ms: int,
    max_delay_ms: int,
    last_completed_generation_id: int,
    generation_id: int,
    protocol_version: int = CONNECT_PROTOCOL_V1,
    fresh_snapshot: ConfigSnapshot | None = None,
) -> AssignmentResult:
    """Compute one round of incremental cooperative assignments (``performAssignment``).

    ``members`` are ``(member_id, decoded metadata)`` in JoinGroup response order and must include
    the leader. If the leader's ``snapshot`` is behind the members' maximum offset, ``fresh_snapshot``
    (a re-read of the config topic) is used when it has caught up; otherwise every member gets
    ``CONFIG_MISMATCH`` and the state is unchanged.
    """
    urls = dict(members)
    leader_url = urls[leader_id].url
    max_offset = max(s.config_offset for _, s in members)
    offset = max_offset
    if snapshot.offset < max_offset:
        if fresh_snapshot is None or fresh_snapshot.offset < max_offset:
            assignments = _config_mismatch(members, leader_id, leader_url, max_offset, protocol_version)
            return AssignmentResult(assignments, state, snapshot)
        snapshot = fresh_snapshot
        offset = fresh_snapshot.offset
    return _perform(
        members, leader_id, leader_url, offset, snapshot, state,
        now_ms, max_delay_ms, last_completed_generation_id, generation_id, protocol_version,
    )  # fmt: skip


def _perform(
    members: Sequence[tuple[str, ExtendedWorkerState]],
    leader_id: str,
    leader_url: str,
    offset: int,
    snapshot: ConfigSnapshot,
    state: AssignorState,
    now: int,
    max_delay: int,
    last_completed_generation_id: int,
    generation_id: int,
    version: int,
) -> AssignmentResult:
    st = _Mutable(state, now, max_delay)
    if st.previous_generation_id != last_completed_generation_id:
        st.prev_c, st.prev_t = set(), set()

    order = default_hash_order([m for m, _ in members], java_string_hash)
    metadata = dict(members)
    holdings = {
        m: (
            list(dict.fromkeys(metadata[m].assignment.connectors)),
            list(dict.fromkeys(metadata[m].assignment.tasks)),
        )
        for m in order
    }

    conf_c = set(snapshot.task_counts)
    conf_t = {t for c in conf_c for t in snapshot.tasks(c)}
    active_c = {c for h in holdings.values() for c in h[0]}
    active_t = {t for h in holdings.values() for t in h[1]}

    if st.revoked_c or st.revoked_t:
        if st.revoked_c & active_c or st.revoked_t & active_t:
            st.prev_c, st.prev_t = set(active_c), set(active_t)
        st.revoked_c, st.revoked_t = set(), set()

    deleted_c, deleted_t = st.prev_c - conf_c, st.prev_t - conf_t
    dup_c = {c for c, n in Counter(c for h in holdings.values() for c in h[0]).items() if n > 1}
    dup_t = {t for t, n in Counter(t for h in holdings.values() for t in h[1]).items() if n > 1}
    lost_c = sorted(st.prev_c - active_c - deleted_c, key=java_string_key)
    lost_t = sorted(st.prev_t - active_t - deleted_t)
    created_c = sorted(conf_c - st.prev_c - active_c, key=java_string_key)
    created_t = sorted(conf_t - st.prev_t - active_t)

    current = {
        m: ({c for c in h[0] if c not in deleted_c}, {t for t in h[1] if t not in deleted_t})
        for m, h in holdings.items()
    }
    to_revoke = {
        m: _removal_revocations(holdings[m], deleted_c | dup_c, deleted_t | dup_t, deleted_c, deleted_t)
        for m in order
    }

    loads = [WorkerLoad(m, *holdings[m]) for m in order]
    for load in loads:
        load.remove(list(to_revoke[load.worker][0]), list(to_revoke[load.worker][1]))

    reassign_c, reassign_t = st.handle_lost(lost_c, lost_t, loads)

    st.balance(to_revoke, loads, len(conf_c), len(conf_t))

    to_assign_c = list(dict.fromkeys([*created_c, *reassign_c]))
    to_assign_t = list(dict.fromkeys([*created_t, *reassign_t]))
    water_fill(loads, to_assign_c, "connectors")
    water_fill(loads, to_assign_t, "tasks")

    next_c = {w.worker: list(w.connectors) for w in loads}
    next_t = {w.worker: list(w.tasks) for w in loads}
    all_revoked_c = {c for rc, _ in to_revoke.values() for c in rc}
    all_revoked_t = {t for _, rt in to_revoke.values() for t in rt}
    st.prev_c = ({c for cs in next_c.values() for c in cs} - all_revoked_c) | set(lost_c)
    st.prev_t = ({t for ts in next_t.values() for t in ts} - all_revoked_t) | set(lost_t)
    st.revoked_c |= all_revoked_c
    st.revoked_t |= all_revoked_t
    st.previous_generation_id = generation_id
    st.previous_members = frozenset(order)

    assignments = {}
    owned_c: dict[str, tuple[str, ...]] = {}
    owned_t: dict[str, tuple[ConnectorTaskId, ...]] = {}
    for member, _ in members:
        revoke_c, revoke_t = to_revoke[member]
        assignments[member] = ExtendedAssignment(
            NO_ERROR,
            leader_id,
            leader_url,
            offset,
            tuple(c for c in next_c[member] if c not in current[member][0]),
            tuple(t for t in next_t[member] if t not in current[member][1]),
            tuple(revoke_c),
            tuple(revoke_t),
            st.delay,
            version,
        )
        owned_c[member] = tuple(c for c in next_c[member] if c not in revoke_c)
        owned_t[member] = tuple(t for t in next_t[member] if t not in revoke_t)
    return AssignmentResult(assignments, st.freeze(), snapshot, owned_c, owned_t)


def _removal_revocations(
    holding: tuple[list[str], list[ConnectorTaskId]],
    removed_c: set[str],
    removed_t: set[ConnectorTaskId],
    deleted_c: set[str],
    deleted_t: set[ConnectorTaskId],
) -> tuple[dict[str, None], dict[ConnectorTaskId, None]]:
    """Deleted then duplicated items a member holds, in Java's ``new HashSet<>(holding)`` order
    (computed only when the member holds any: the usual round removes nothing)."""
    c_order = (
        [c for c in hash_set_copy_order(holding[0], java_string_hash) if c in removed_c]
        if not removed_c.isdisjoint(holding[0])
        else []
    )
    t_order = (
        [t for t in hash_set_copy_order(holding[1], _task_hash) if t in removed_t]
        if not removed_t.isdisjoint(holding[1])
        else []
    )
    connectors = [c for c in c_order if c in deleted_c] + [c for c in c_order if c not in deleted_c]
    tasks = [t for t in t_order if t in deleted_t] + [t for t in t_order if t not in deleted_t]
    return dict.fromkeys(connectors), dict.fromkeys(tasks)


def _apply_revocations(
    to_revoke: dict[str, tuple[dict[str, None], dict[ConnectorTaskId, None]]],
    loads: list[WorkerLoad],
    balancing: dict[str, tuple[list[str], list[ConnectorTaskId]]],
) -> None:
    for worker, (connectors, tasks) in balancing.items():
        to_revoke[worker][0].update(dict.fromkeys(connectors))
        to_revoke[worker][1].update(dict.fromkeys(tasks))
    for load in loads:
        connectors, tasks = balancing.get(load.worker, ([], []))
        load.remove(connectors, tasks)


class _Mutable:
    """Working copy of :class:`AssignorState` for one round, plus the lost-work rules."""

    def __init__(self, state: AssignorState, now: int, max_delay: int) -> None:
        self.prev_c = set(state.previous_connectors)
        self.prev_t = set(state.previous_tasks)
        self.revoked_c = set(state.revoked_connectors)
        self.revoked_t = set(state.revoked_tasks)
        self.revoked_in_previous = state.revoked_in_previous
        self.candidates: dict[str, None] = dict.fromkeys(state.candidate_workers)
        self.scheduled = state.scheduled_rebalance
        self.delay = state.delay
        self.previous_generation_id = state.previous_generation_id
        self.previous_members = state.previous_members
        self.successive = state.successive_revoking_rebalances
        self.now = now
        self.max_delay = max_delay

    def reset_delay(self) -> None:
        self.candidates = {}
        self.scheduled = 0
        self.delay = 0

    def handle_lost(
        self, lost_c: list[str], lost_t: list[ConnectorTaskId], loads: list[WorkerLoad]
    ) -> tuple[list[str], list[ConnectorTaskId]]:
        """``handleLostAssignments``: returns lost items to deal as new; may assign to candidates."""
        if not lost_c and not lost_t and not self.revoked_in_previous:
            self.reset_delay()
            return [], []
        active = {w.worker for w in loads}
        if (self.scheduled <= 0 and active >= self.previous_members) or self.max_delay == 0:
            return lost_c, lost_t
        if self.scheduled > 0 and self.now >= self.scheduled:
            by_worker = {w.worker: w for w in loads}
            candidates = [by_worker[c] for c in self.candidates if c in by_worker]
            result: tuple[list[str], list[ConnectorTaskId]] = ([], [])
            if candidates:
                for i, connector in enumerate(lost_c):
                    candidates[i % len(candidates)].connectors[connector] = None
                for i, task in enumerate(lost_t):
                    candidates[i % len(candidates)].tasks[task] = None
            else:
                result = (lost_c, lost_t)
            self.reset_delay()
            self.revoked_in_previous = False
            return result
        empty = default_hash_order([w.worker for w in loads if w.is_empty()], java_string_hash)
        self.candidates.update(dict.fromkeys(empty))
        if self.now < self.scheduled:
            remaining = self.scheduled - self.now
            self.delay = min(remaining, self.max_delay) if remaining > 0 else 0
        else:
            self.delay = self.max_delay
        self.scheduled = self.now + self.delay
        return [], []

    def balance(
        self,
        to_revoke: dict[str, tuple[dict[str, None], dict[ConnectorTaskId, None]]],
        loads: list[WorkerLoad],
        configured_connectors: int,
        configured_tasks: int,
    ) -> None:
        """Load-balancing revocations, unless a delay is active or successive revocations back off."""
        if self.delay != 0:
            self.revoked_in_previous = False
            return
        balancing = balancing_revocations(configured_connectors, configured_tasks, loads)
        if self.revoked_in_previous and balancing:
            self.successive += 1
            self.delay = revoking_rebalance_backoff(self.successive, self.max_delay)
            if self.delay != 0:
                self.scheduled = self.now + self.delay
            else:
                _apply_revocations(to_revoke, loads, balancing)
        elif balancing:
            _apply_revocations(to_revoke, loads, balancing)
            self.revoked_in_previous = True
        elif self.revoked_in_previous:
            self.revoked_in_previous = False
            self.successive = 0

    def freeze(self) -> AssignorState:
        return replace(
            INITIAL_STATE,
            previous_connectors=frozenset(self.prev_c),
            previous_tasks=frozenset(self.prev_t),
            revoked_connectors=frozenset(self.revoked_c),
            revoked_tasks=frozenset(self.revoked_t),
            revoked_in_previous=self.revoked_in_previous,
            candidate_workers=tuple(self.candidates),
            scheduled_rebalance=self.scheduled,
            delay=self.delay,
            previous_generation_id=self.previous_generation_id,
            previous_members=self.previous_members,
            successive_revoking_rebalances=self.successive,
        )
