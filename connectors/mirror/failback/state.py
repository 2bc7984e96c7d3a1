"""The resumable state of ``pyconnect failback execute`` (pure, plus reading and writing its JSON file).

A failback is a sequence of steps, each done once and recorded before the next starts:

1. ``forward-stopped``: the forward flow's MirrorSourceConnector is STOPPED (it must not copy A's orphans
   into B, where the applications now write);
2. ``measured``: per source partition the forward copy's end (:class:`~.ledger.MirrorEnd`), the orphans
   (:class:`~.ledger.OrphanRange`) and A's end offset (where the reverse flow's copies will start) are
   fixed, and so are, per partition of B the reverse flow copies, the first offset it copies
   (``reverse_starts``, :func:`~.reverse_flow.reverse_starts`) and A's end offset of its copy there
   (in ``source_ends`` too: under DefaultReplicationPolicy B's ``orders`` is copied to ``B.orders``); a
   resumed run never measures again (the reverse flow appends to A from here). When the reverse
   connector named by the operator already exists (active/active: the flow B->A runs all along), it is
   *adopted* (``reverse_adopted``): measured with its own config, never created, re-pointed or left
   stopped;
3. ``quarantined``: the orphans were copied to the quarantine topic (only when asked);
4. ``reverse-started``: the reverse flow's MirrorSourceConnector exists with its offsets at the mirror
   ends and runs (an adopted one: stopped and resumed, its tasks afresh); ``reverse_created`` is recorded
   before the failback creates it, so that a resumed run tells its own connector from one left by an
   earlier failback;
5. ``caught-up``: no group has members on B, B's end offsets stayed still for the quiet period, and the
   reverse flow copied (and synced) everything below them;
6. ``groups-returned``: every group's offsets on A are committed and read back (``returns``: a failover
   state along the reverse flow, per group ``planned`` -> ``committed`` -> ``verified``);
7. ``forward-resumed``: the reverse flow is stopped (an adopted one runs on), the forward connector's
   offsets are set to A's end (the orphans and the copies back are not copied to B again) and it runs;
   the audit ``window`` (both clusters' ends before it ran, :class:`~.proof.AuditBounds`) is recorded
   first;
8. ``audited``: the audit of the round trip within that window passed (``audit``: its verdict); a run
   without an auditor ends before it.

A file of another flow is refused; writes replace the file atomically (a crash leaves the old or the new
state), so ``execute`` after ``kill -9`` at any point resumes at the first step not recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from connectors.mirror.failback.ledger import MirrorEnd, OrphanRange
from connectors.mirror.failback.proof import AuditBounds
from connectors.mirror.offsets.failover_state import (
    FailoverState,
    StateError,
    load_state,
    parse_key,
    partition_key,
    write_atomically,
)

__all__ = ["STEPS", "FailbackState", "StateError"]

STATE_VERSION = 1
STEPS = (
    "forward-stopped",
    "measured",
    "quarantined",
    "reverse-started",
    "caught-up",
    "groups-returned",
    "forward-resumed",
    "audited",
)


@dataclass
class FailbackState:
    """Where a failback of ``flow`` (``source``, ``target``, ``checkpoints_topic``) stands."""

    flow: dict[str, str]
    done: list[str] = field(default_factory=list)
    ends: dict[str, MirrorEnd] = field(default_factory=dict)
    orphans: dict[str, OrphanRange] = field(default_factory=dict)
    source_ends: dict[str, int] = field(default_factory=dict)
    returns: FailoverState | None = None
    quarantine: str | None = None
    window: AuditBounds | None = None
    audit: dict[str, Any] | None = None
    reverse_starts: dict[str, int] = field(default_factory=dict)
    reverse_adopted: bool = False
    reverse_created: bool = False

    def is_done(self, step: str) -> bool:
        return step in self.done

    def complete(self, step: str) -> None:
        """Record ``step`` as done (steps are recorded once, in :data:`STEPS` order)."""
        if step not in STEPS:
            raise ValueError(f"unknown failback step {step}")
        if step not in self.done:
            self.done.append(step)

    def next_step(self) -> str | None:
        return next((s for s in STEPS if s not in self.done), None)

    def measured(
        self,
        ends: list[MirrorEnd],
        orphans: list[OrphanRange],
        source_ends: dict[tuple[str, int], int],
        reverse_starts: dict[tuple[str, int], int] | None = None,
    ) -> None:
        """Fix the measures (see step 2): ``source_ends`` by partition of A (the ledger's and the copies'
        of B's own topics), ``reverse_starts`` by partition of B (``None``: not measured, as by a plan
        without the forward connector's config)."""
        self.ends = {partition_key(e.topic, e.partition): e for e in ends}
        self.orphans = {partition_key(o.topic, o.partition): o for o in orphans}
        self.source_ends = {partition_key(t, p): o for (t, p), o in source_ends.items()}
        self.reverse_starts = {partition_key(t, p): o for (t, p), o in (reverse_starts or {}).items()}

    def end_of(self, topic: str, partition: int) -> MirrorEnd | None:
        return self.ends.get(partition_key(topic, partition))

    def to_json(self) -> dict[str, Any]:
        return {
            "state_version": STATE_VERSION,
            "kind": "failback",
            "flow": self.flow,
            "done": list(self.done),
            "quarantine": self.quarantine,
            "mirror_ends": {
                k: {"last_copied": e.last_copied, "target_end": e.target_end, "evidence": e.evidence}
                for k, e in self.ends.items()
            },
            "orphans": {
                k: {"first": o.first, "last": o.last, "count": o.count, "size": o.size}
                for k, o in self.orphans.items()
            },
            "source_ends": dict(self.source_ends),
            "reverse_starts": dict(self.reverse_starts),
            "reverse_adopted": self.reverse_adopted,
            "reverse_created": self.reverse_created,
            "returns": None if self.returns is None else self.returns.to_json(),
            "window": None if self.window is None else self.window.to_json(),
            "audit": self.audit,
        }

    @classmethod
    def from_json(cls, document: Any, origin: str) -> FailbackState:
        if (
            not isinstance(document, dict)
            or document.get("kind") != "failback"
            or document.get("state_version") != STATE_VERSION
        ):
            raise StateError(f"{origin} is not a failback state file of version {STATE_VERSION}")
        try:
            ends = {}
            for key, e in document["mirror_ends"].items():
                topic, partition = parse_key(key)
                ends[key] = MirrorEnd(
                    topic, partition, int(e["last_copied"]), int(e["target_end"]), e["evidence"]
                )
            orphans = {}
            for key, o in document["orphans"].items():
                topic, partition = parse_key(key)
                orphans[key] = OrphanRange(
                    topic, partition, o["first"], o["last"], int(o["count"]), int(o["size"])
                )
            state = cls(
                {str(k): str(v) for k, v in document["flow"].items()},
                [str(s) for s in document["done"]],
                ends,
                orphans,
                {str(k): int(v) for k, v in document["source_ends"].items()},
                None
                if document.get("returns") is None
                else FailoverState.from_json(document["returns"], origin),
                document.get("quarantine"),
                None if document.get("window") is None else AuditBounds.from_json(document["window"]),
                document.get("audit"),
                {str(k): int(v) for k, v in document.get("reverse_starts", {}).items()},
                bool(document.get("reverse_adopted", False)),
                bool(document.get("reverse_created", False)),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            raise StateError(f"{origin} is not a valid failback state file") from None
        if any(s not in STEPS for s in state.done):
            raise StateError(f"{origin} records an unknown step")
        return state

    @classmethod
    def load(cls, path: Path, flow: dict[str, str]) -> FailbackState:
        """The state in ``path`` (a new one for ``flow`` when the file does not exist)."""
        return load_state(path, flow, cls.from_json, lambda: cls(dict(flow)))

    def save(self, path: Path) -> None:
        write_atomically(path, self.to_json())
