"""The resumable state of ``pyconnect cutover execute|resume`` (pure, plus its JSON file).

A cutover is a sequence of steps, each recorded once done (the file is replaced atomically after every
step, so ``kill -9`` at any point and ``resume`` reach the same end):

1. ``lag-checked``: the forward flow's lag was under the threshold;
2. ``fenced``: the fence on A is up: DENY WRITE ACLs for the named principals (recorded, to be lifted
   by a rollback), or none when the operator stops the producers;
3. ``quiet``: A's last stable offsets stayed still for the quiet period (``source_ends`` records them);
4. ``drained``: the forward flow copied, committed and synced every record below them;
5. ``groups-moved``: each group's offsets on B are committed and read back (``moves``: a failover
   state, per group ``planned`` -> ``committed`` -> ``verified``);
6. ``verified``: A still ends at ``source_ends``, nothing is left to copy, every group's move re-reads
   and skips nothing; the audit ``window`` (both clusters' ends now,
   :class:`~connectors.mirror.failback.proof.AuditBounds`) is recorded;
7. ``promoted``: the forward connector is stopped (A is retired: a stray write there never reaches B);
8. ``audited``: the audit of the flow within that window passed (``audit``: its verdict); a run without
   an auditor ends before it.

:meth:`CutoverState.roll_back` forgets the fence and every step from ``fenced`` on: a run that could not
finish a step before ``groups-moved`` lifts the fence, and ``resume`` raises it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from connectors.mirror.failback.proof import AuditBounds
from connectors.mirror.offsets.failover_state import FailoverState, StateError, load_state, write_atomically

__all__ = ["STEPS", "CutoverState", "StateError"]

STATE_VERSION = 1
STEPS = ("lag-checked", "fenced", "quiet", "drained", "groups-moved", "verified", "promoted", "audited")
ROLLED_BACK = ("fenced", "quiet", "drained")


@dataclass
class CutoverState:
    """Where a cutover of ``flow`` (``source``, ``target``, ``checkpoints_topic``) stands."""

    flow: dict[str, str]
    done: list[str] = field(default_factory=list)
    fence: list[str] = field(default_factory=list)
    """The principals denied WRITE on A (empty: the operator stops the producers)."""
    fenced_topics: list[str] = field(default_factory=list)
    source_ends: dict[str, int] = field(default_factory=dict)
    moves: FailoverState | None = None
    times: dict[str, float] = field(default_factory=dict)
    """Wall-clock time (epoch seconds) each step was recorded."""
    window: AuditBounds | None = None
    audit: dict[str, Any] | None = None

    def is_done(self, step: str) -> bool:
        return step in self.done

    def complete(self, step: str, at: float) -> None:
        if step not in STEPS:
            raise ValueError(f"unknown cutover step {step}")
        if step not in self.done:
            self.done.append(step)
            self.times[step] = at

    def roll_back(self) -> None:
        self.done = [s for s in self.done if s not in ROLLED_BACK]
        self.times = {s: t for s, t in self.times.items() if s not in ROLLED_BACK}
        self.fence, self.fenced_topics, self.source_ends = [], [], {}

    def to_json(self) -> dict[str, Any]:
        return {
            "state_version": STATE_VERSION,
            "kind": "cutover",
            "flow": self.flow,
            "done": list(self.done),
            "fence": list(self.fence),
            "fenced_topics": list(self.fenced_topics),
            "source_ends": dict(self.source_ends),
            "moves": None if self.moves is None else self.moves.to_json(),
            "times": dict(self.times),
            "window": None if self.window is None else self.window.to_json(),
            "audit": self.audit,
        }

    @classmethod
    def from_json(cls, document: Any, origin: str) -> CutoverState:
        if (
            not isinstance(document, dict)
            or document.get("kind") != "cutover"
            or document.get("state_version") != STATE_VERSION
        ):
            raise StateError(f"{origin} is not a cutover state file of version {STATE_VERSION}")
        try:
            state = cls(
                {str(k): str(v) for k, v in document["flow"].items()},
                [str(s) for s in document["done"]],
                [str(p) for p in document["fence"]],
                [str(t) for t in document["fenced_topics"]],
                {str(k): int(v) for k, v in document["source_ends"].items()},
                None if document.get("moves") is None else FailoverState.from_json(document["moves"], origin),
                {str(k): float(v) for k, v in document.get("times", {}).items()},
                None if document.get("window") is None else AuditBounds.from_json(document["window"]),
                document.get("audit"),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            raise StateError(f"{origin} is not a valid cutover state file") from None
        if any(s not in STEPS for s in state.done):
            raise StateError(f"{origin} records an unknown step")
        return state

    @classmethod
    def load(cls, path: Path, flow: dict[str, str]) -> CutoverState:
        """The state in ``path`` (a new one for ``flow`` when the file does not exist)."""
        return load_state(path, flow, cls.from_json, lambda: cls(dict(flow)))

    def save(self, path: Path) -> None:
        write_atomically(path, self.to_json())
