"""The resumable state of ``pyconnect failover execute`` (pure, plus reading and writing its JSON file).

A failover moves groups one at a time; each group goes ``planned`` -> ``committed`` -> ``verified``:

* ``planned``: its target offsets are fixed (written before anything is committed);
* ``committed``: the target cluster took the commit of its offsets;
* ``verified``: its committed offsets on the target were read back equal to the plan.

The state file holds the flow and, per group, its status and target offsets. An execute given an
existing file resumes it: groups already ``verified`` are only read back again, the others are committed
with the offsets the file holds (not re-planned: the source may have gone away meanwhile). A file of
another flow is refused. Writes replace the file atomically (write, then rename), so a crash leaves
either the old or the new state.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from pyconnect.errors import ConnectError

__all__ = [
    "STATE_VERSION",
    "FailoverState",
    "GroupProgress",
    "StateError",
    "load_state",
    "parse_key",
    "partition_key",
    "write_atomically",
]

STATE_VERSION = 1
Status = Literal["planned", "committed", "verified"]
ORDER: dict[str, int] = {"planned": 0, "committed": 1, "verified": 2}


class StateError(ConnectError, ValueError):
    """The state file cannot be used (unreadable, another flow, another version); one line."""


def partition_key(topic: str, partition: int) -> str:
    return f"{topic}:{partition}"


def parse_key(key: str) -> tuple[str, int]:
    topic, _, partition = key.rpartition(":")
    return topic, int(partition)


@dataclass
class GroupProgress:
    """One group: its status and the target offsets (``topic:partition`` -> offset) with metadata."""

    status: Status
    targets: dict[str, int]
    metadata: dict[str, str] = field(default_factory=dict)

    def offsets(self) -> dict[tuple[str, int], int]:
        return {parse_key(k): v for k, v in self.targets.items()}


@dataclass
class FailoverState:
    """Where a failover of ``flow`` (``source``, ``target``, ``checkpoints_topic``) stands."""

    flow: dict[str, str]
    groups: dict[str, GroupProgress] = field(default_factory=dict)
    target_ends: dict[str, int] = field(default_factory=dict)
    """The target's last stable offset of every planned partition when the failover first executed
    (``topic:partition`` -> offset): where the mirror's copy stood before the applications wrote there.
    A failback refuses to take later copies of the forward flow for its own (see
    :mod:`connectors.mirror.failback.ledger`)."""
    own_ends: dict[str, int] | None = None
    """The target's last stable offset of every partition of its own topics (not internal, not copies
    from the source by the policy: :func:`connectors.mirror.failback.reverse_flow.own_topics`) when the
    failover first executed: where the applications' writes on the target begin (under
    DefaultReplicationPolicy the producers write B's ``orders`` after a failover, not ``A.orders``). A
    failback's reverse flow copies each of them from there. ``None``: not recorded (a state file of an
    older version)."""

    def advance(self, group: str, status: Status) -> None:
        """Move ``group`` forward to ``status`` (never backwards)."""
        progress = self.groups[group]
        if ORDER[status] > ORDER[progress.status]:
            progress.status = status

    def plan(
        self, group: str, targets: Mapping[tuple[str, int], int], metadata: Mapping[tuple[str, int], str]
    ) -> None:
        """Record the plan of a group not in the state yet (a planned group keeps its first plan)."""
        if group not in self.groups:
            self.groups[group] = GroupProgress(
                "planned",
                {partition_key(t, p): o for (t, p), o in targets.items()},
                {partition_key(t, p): m for (t, p), m in metadata.items()},
            )

    def pending(self) -> list[str]:
        return [g for g, progress in self.groups.items() if progress.status != "verified"]

    def to_json(self) -> dict[str, Any]:
        return {
            "state_version": STATE_VERSION,
            "flow": self.flow,
            "groups": {
                g: {"status": p.status, "targets": p.targets, "metadata": p.metadata}
                for g, p in self.groups.items()
            },
            "target_ends": dict(self.target_ends),
            "own_ends": None if self.own_ends is None else dict(self.own_ends),
        }

    @classmethod
    def from_json(cls, document: Any, origin: str) -> FailoverState:
        if not isinstance(document, dict) or document.get("state_version") != STATE_VERSION:
            raise StateError(f"{origin} is not a failover state file of version {STATE_VERSION}")
        try:
            groups = {
                str(g): GroupProgress(
                    entry["status"],
                    {str(k): int(v) for k, v in entry["targets"].items()},
                    {str(k): str(v) for k, v in entry.get("metadata", {}).items()},
                )
                for g, entry in document["groups"].items()
            }
            flow = {str(k): str(v) for k, v in document["flow"].items()}
            target_ends = {str(k): int(v) for k, v in document.get("target_ends", {}).items()}
            own = document.get("own_ends")
            own_ends = None if own is None else {str(k): int(v) for k, v in own.items()}
        except (KeyError, TypeError, ValueError, AttributeError):
            raise StateError(f"{origin} is not a valid failover state file") from None
        if any(p.status not in ORDER for p in groups.values()):
            raise StateError(f"{origin} holds an unknown group status")
        return cls(flow, groups, target_ends, own_ends)

    @classmethod
    def load(cls, path: Path, flow: Mapping[str, str]) -> FailoverState:
        """The state in ``path`` (a new one for ``flow`` when the file does not exist)."""
        return load_state(path, flow, cls.from_json, lambda: cls(dict(flow)))

    def save(self, path: Path) -> None:
        write_atomically(path, self.to_json())


class FlowState(Protocol):
    flow: dict[str, str]


S = TypeVar("S", bound=FlowState)


def load_state(
    path: Path, flow: Mapping[str, str], parse: Callable[[Any, str], S], new: Callable[[], S]
) -> S:
    """The state of an operator command (failover, failback, cutover) in ``path``, parsed with
    ``parse(document, origin)``; ``new()`` when the file does not exist. :class:`StateError` (one line)
    for an unreadable file or one of another flow."""
    if not path.exists():
        return new()
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StateError(f"cannot read the state file {path}: {exc}") from None
    state = parse(document, str(path))
    if state.flow != dict(flow):
        raise StateError(
            f"the state file {path} is of flow {state.flow.get('source')}->{state.flow.get('target')} "
            f"({state.flow.get('checkpoints_topic')}), not of this one"
        )
    return state


def write_atomically(path: Path, document: Any) -> None:
    """Write ``document`` as JSON to ``path`` through a temporary file and a rename: a crash leaves either
    the old or the new file, never a torn one."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)
