"""Eager assignor (protocol ``default``, V0): complete assignments, everything restarts each round.

A port of Java's ``EagerAssignor``: connectors sorted by name are dealt round-robin over the member
ids sorted by name, then the *same* circular iterator continues over every task (connectors in
sorted order, task numbers ascending). Each member receives its full assignment; members stop all
their work before every JoinGroup. Config-offset checks are the same as the incremental assignor's.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyconnect.protocol.assignor import ConfigSnapshot
from pyconnect.protocol.connect_assignment import CONFIG_MISMATCH, NO_ERROR, Assignment
from pyconnect.protocol.connect_metadata import WorkerState
from pyconnect.protocol.javahash import java_string_key
from pyconnect.protocol.task_id import ConnectorTaskId


def assign_eager(
    members: Sequence[tuple[str, WorkerState]],
    leader_id: str,
    snapshot: ConfigSnapshot,
    *,
    fresh_snapshot: ConfigSnapshot | None = None,
) -> tuple[dict[str, Assignment], ConfigSnapshot]:
    """Per-member complete assignments and the snapshot they were computed against.

    If the leader's ``snapshot`` is behind the members' maximum offset and ``fresh_snapshot`` has not
    caught up either, every member gets ``CONFIG_MISMATCH`` with the maximum offset.
    """
    leader_url = dict(members)[leader_id].url
    offset = max(state.config_offset for _, state in members)
    if snapshot.offset < offset:
        if fresh_snapshot is None or fresh_snapshot.offset < offset:
            failed = Assignment(CONFIG_MISMATCH, leader_id, leader_url, offset)
            return {member: failed for member, _ in members}, snapshot
        snapshot = fresh_snapshot
        offset = fresh_snapshot.offset
    ordered = sorted((member for member, _ in members), key=java_string_key)
    connectors = sorted(snapshot.task_counts, key=java_string_key)
    owned_c: dict[str, list[str]] = {m: [] for m in ordered}
    owned_t: dict[str, list[ConnectorTaskId]] = {m: [] for m in ordered}
    position = 0
    for connector in connectors:
        owned_c[ordered[position % len(ordered)]].append(connector)
        position += 1
    for connector in connectors:
        for task in snapshot.tasks(connector):
            owned_t[ordered[position % len(ordered)]].append(task)
            position += 1
    assignments = {
        member: Assignment(
            NO_ERROR, leader_id, leader_url, offset, tuple(owned_c[member]), tuple(owned_t[member])
        )
        for member, _ in members
    }
    return assignments, snapshot
