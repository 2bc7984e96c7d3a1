"""The group offset sync's policy: what to commit on the target, and how a group that is not synced shows.

Pure (no IO); used by the periodic sync of ``sync.group.offsets.enabled`` (Java's, KIP-545) and by its
continuous mode (:mod:`connectors.mirror.group_watch`, ours).

- :data:`CONTINUOUS_SYNC_KEY` (``pyconnect.sync.group.offsets.continuous``, default false: Java's
  behaviour) turns the sync continuous: source commits are watched several times a second and committed
  on the target at their translation, consumer groups of both protocols and share groups (KIP-932)
  alike. It needs ``sync.group.offsets.enabled=true`` (:func:`continuous_sync_error`).
- :func:`plan_commit` is the rule for one group: each wanted offset is raised to the partition's log
  start, left out past its log end or where the target lacks the partition, and kept only when it
  moves the target's committed offset forward (absent counts as behind). So every offset committed
  lies within its partition's log, and nothing is ever moved backwards.
- :func:`commit_outcome` reads a commit's per-partition error codes: committed, refused because the
  group is active on the target (:data:`~pyconnect.kafka.group_view.ACTIVE_GROUP_REJECTIONS`), refused
  for a coordinator on the move (asked again next time), or failed.
- :class:`SyncReport` is how a group that is not synced shows: the warning condition
  ``GROUP_SYNC_BLOCKED`` (subject: the group, cluster: the target) until it is synced again, a WARN line
  the first time and DEBUG afterwards, an INFO line when it is synced again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.types import Importance, Type
from pyconnect.kafka.group_admin import CommittedOffset
from pyconnect.kafka.group_view import ACTIVE_GROUP_REJECTIONS

TP = tuple[str, int]
GROUP_SYNC_BLOCKED = "GROUP_SYNC_BLOCKED"

CONTINUOUS_SYNC_CONFIG = "pyconnect.sync.group.offsets.continuous"
CONTINUOUS_SYNC_KEY = ConfigKey(
    CONTINUOUS_SYNC_CONFIG,
    Type.BOOLEAN,
    default=False,
    importance=Importance.LOW,
    documentation=(
        "Whether the group offset sync is continuous (pyconnect only; needs sync.group.offsets.enabled="
        "true). Java's sync writes the checkpointed offsets every sync.group.offsets.interval.seconds; the "
        "continuous one watches the source groups' commits several times a second and commits each on "
        "the target at its translation within about a second, for classic, consumer-protocol (KIP-848) "
        "and share groups (KIP-932, Kafka 4.2 or later on both clusters). As Java's, it never writes to "
        "a group that has members on the target and never moves an offset backwards; every offset it "
        "commits lies within the target partition's log."
    ),
)
_CONTINUOUS_DEF = ConfigDef([CONTINUOUS_SYNC_KEY])
SHARE_GROUPS_TASK_CONFIG = "pyconnect.task.assigned.share.groups"
"""Task config (generated): the share groups among ``task.assigned.groups``."""
COORDINATOR_MOVING = frozenset({14, 15, 16})


def with_share_groups(task_config: dict[str, str], share_groups: Sequence[str]) -> dict[str, str]:
    """A checkpoint task's config naming which of its ``task.assigned.groups`` are share groups (left
    as it is when none is: Java's task configs)."""
    assigned = task_config.get("task.assigned.groups", "").split(",")
    shares = [g for g in assigned if g in set(share_groups)]
    return {**task_config, SHARE_GROUPS_TASK_CONFIG: ",".join(shares)} if shares else task_config


def assigned_groups(assigned: Sequence[str], originals: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """A task's ``(consumer groups, share groups)`` from its ``task.assigned.groups`` and originals."""
    shares = {g for g in originals.get(SHARE_GROUPS_TASK_CONFIG, "").split(",") if g}
    groups = list(dict.fromkeys(assigned))
    return [g for g in groups if g not in shares], [g for g in groups if g in shares]


def continuous_sync(props: Mapping[str, str]) -> bool:
    """The parsed :data:`CONTINUOUS_SYNC_KEY` (a bad value raises :class:`~pyconnect.errors.ConfigError`)."""
    return bool(_CONTINUOUS_DEF.parse(props)[CONTINUOUS_SYNC_CONFIG])


def continuous_sync_error(props: Mapping[str, str]) -> str | None:
    """Why the key's value cannot be used with the other keys (``None``: usable). A value that is no
    boolean is the config table's error; this is the combination with ``sync.group.offsets.enabled``."""
    value = str(props.get(CONTINUOUS_SYNC_CONFIG, "false")).strip().lower()
    enabled = str(props.get("sync.group.offsets.enabled", "false")).strip().lower()
    if value == "true" and enabled != "true":
        return (
            f"{CONTINUOUS_SYNC_CONFIG}=true is a mode of the group offset sync: it needs "
            "sync.group.offsets.enabled=true"
        )
    return None


@dataclass(frozen=True, slots=True)
class CommitPlan:
    """What :func:`plan_commit` decided for one group."""

    changes: dict[TP, CommittedOffset] = field(default_factory=dict)
    beyond_end: dict[TP, int] = field(default_factory=dict)
    """Wanted offsets past the partition's known log end (asked again with a fresh end)."""
    missing: tuple[TP, ...] = ()
    """Partitions the target does not have (yet)."""


def plan_commit(
    wanted: Mapping[TP, CommittedOffset],
    current: Mapping[TP, CommittedOffset],
    bounds: Mapping[TP, tuple[int, int]],
) -> CommitPlan:
    """The offsets to commit for one group (see the module docstring); ``bounds`` holds each target
    partition's ``(log start, log end)``."""
    changes: dict[TP, CommittedOffset] = {}
    beyond: dict[TP, int] = {}
    missing: list[TP] = []
    for tp, want in wanted.items():
        bound = bounds.get(tp)
        if bound is None:
            missing.append(tp)
            continue
        start, end = bound
        offset = max(want.offset, start)
        if offset > end:
            beyond[tp] = offset
            continue
        have = current.get(tp)
        if have is None or have.offset < offset:
            changes[tp] = CommittedOffset(offset, want.metadata)
    return CommitPlan(changes, beyond, tuple(missing))


Outcome = Literal["committed", "active", "moving", "failed"]


def commit_outcome(errors: Mapping[TP, int]) -> tuple[Outcome, str]:
    """How a commit ended, from its per-partition error codes, and a phrase for messages."""
    codes = sorted(set(errors.values()))
    if not codes:
        return "committed", ""
    if all(c in ACTIVE_GROUP_REJECTIONS for c in codes):
        names = ", ".join(ACTIVE_GROUP_REJECTIONS[c] for c in codes)
        return "active", f"the coordinator refused the commit ({names})"
    if all(c in COORDINATOR_MOVING for c in codes):
        return "moving", f"the group's coordinator is moving (error codes {codes})"
    return "failed", f"error codes {codes}"


class SyncReport:
    """Shows which groups are not synced and why (see the module docstring).

    ``board`` returns the task's condition board (``None`` when it has none); ``log`` is the caller's
    logger, so every line names the task (``name``) in the caller's log.
    """

    def __init__(self, name: str, target_alias: str, board: Callable[[], Any], log: logging.Logger) -> None:
        self._name = name
        self._target = target_alias
        self._board = board
        self._log = log
        self._warned: dict[str, str] = {}

    def blocked(self, group: str, why: str, kind: str = "consumer group", *, warn: bool = True) -> None:
        """``group`` is not synced (active on the target, or the target cannot take it): the condition,
        WARN the first time (unless ``warn`` is false: the caller wrote one line for many groups), then
        DEBUG."""
        board = self._board()
        if board is not None:
            board.set(
                GROUP_SYNC_BLOCKED,
                f"offsets of {kind} {group} are not synced to {self._target}: {why}",
                subject=group,
                cluster=self._target,
            )
        if group in self._warned or not warn:
            self._warned.setdefault(group, why)
            self._log.debug("%s: not syncing offsets of group %s: %s", self._name, group, why)
            return
        self._warned[group] = why
        self._log.warning(
            "%s: not syncing offsets of %s %s on %s: %s; retried every round, logged again after a "
            "successful sync",
            self._name,
            kind,
            group,
            self._target,
            why,
        )

    def synced(self, group: str, kind: str = "consumer group") -> None:
        """``group`` is in sync on the target: its condition goes; INFO if it had been reported."""
        if self._warned.pop(group, None) is not None:
            self._log.info("%s: synced offsets of %s %s again", self._name, kind, group)
        board = self._board()
        if board is not None:
            board.clear(GROUP_SYNC_BLOCKED, group)

    def is_blocked(self, group: str) -> bool:
        return group in self._warned
