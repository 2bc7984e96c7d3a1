"""The nemesis: a seeded schedule of faults for one chaos run (pure: no IO, no clock, no processes).

``schedule(seed, duration_s, kinds, ...)`` draws, from ``random.Random(seed)`` only, a list of
:class:`Fault` (kind, target, start, heal-after) within ``duration_s`` seconds of the run's start. The
same arguments always give the same schedule, so a run is replayed by its seed; the schedule goes into
the report as JSON (:meth:`Fault.to_json`).

Contract:
- Faults never overlap: each starts after the previous one healed plus ``gap_s`` (a fleet of three
  workers and clusters of three brokers survive one fault at a time, which is the promise under test).
- At most ``max_faults``; at least one of every enabled kind when the duration allows it (kinds are
  drawn from a shuffled round-robin, so a short run still covers each kind once).
- ``target`` is abstract (which worker index, which cluster and which broker role); the fault
  injector resolves a role such as ``controller`` or ``internal-leader`` against the live cluster.
- ``heal_after_s`` of a pause is past ``session_timeout_s`` (a zombie that wakes up after the group
  moved on).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

WORKER_KILL = "worker-kill"
WORKER_RESTART = "worker-restart"
WORKER_PAUSE = "worker-pause"
BROKER_KILL = "broker-kill"
SLOW_TARGET = "slow-target"
PARTITION = "network-partition"

KINDS: tuple[str, ...] = (WORKER_KILL, WORKER_RESTART, WORKER_PAUSE, BROKER_KILL, SLOW_TARGET, PARTITION)
"""Every fault kind the harness knows; a run enables a subset (network faults need the fault proxy)."""

BROKER_ROLES = ("controller", "internal-leader", "any")
"""Which broker a broker fault hits: the active KRaft controller, the leader of an internal topic's
partition (Connect's config/offset/status topics on the workers' cluster, offset-syncs on the source
cluster), or any node."""

NETWORK_MODES = ("drop", "blackhole", "delay")


@dataclass(frozen=True)
class Fault:
    """One fault: ``kind`` hits ``target`` at ``start_s`` (seconds from the run's start) and is healed
    ``heal_after_s`` later."""

    kind: str
    start_s: float
    heal_after_s: float
    target: dict[str, Any] = field(default_factory=dict)

    @property
    def heal_s(self) -> float:
        return self.start_s + self.heal_after_s

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        target = ", ".join(f"{k}={v}" for k, v in sorted(self.target.items()))
        return f"{self.kind}({target}) at {self.start_s:.1f}s for {self.heal_after_s:.1f}s"


@dataclass(frozen=True)
class Timing:
    """The durations the schedule draws from (seconds)."""

    session_timeout_s: float = 6.0
    kill_down_s: tuple[float, float] = (2.0, 8.0)
    restart_down_s: tuple[float, float] = (1.0, 4.0)
    """A clean stop (SIGTERM, the worker leaves its group) and the time until it starts again."""
    pause_past_session_s: tuple[float, float] = (2.0, 8.0)
    broker_down_s: tuple[float, float] = (5.0, 15.0)
    slow_s: tuple[float, float] = (10.0, 20.0)
    partition_s: tuple[float, float] = (5.0, 15.0)
    gap_s: tuple[float, float] = (15.0, 25.0)
    """Between one fault's heal and the next fault: time to recover, measured by the verdict."""
    warm_up_s: float = 10.0


def _heal_after(kind: str, rng: random.Random, timing: Timing) -> float:
    if kind == WORKER_KILL:
        return rng.uniform(*timing.kill_down_s)
    if kind == WORKER_RESTART:
        return rng.uniform(*timing.restart_down_s)
    if kind == WORKER_PAUSE:
        return timing.session_timeout_s + rng.uniform(*timing.pause_past_session_s)
    if kind == BROKER_KILL:
        return rng.uniform(*timing.broker_down_s)
    if kind == SLOW_TARGET:
        return rng.uniform(*timing.slow_s)
    return rng.uniform(*timing.partition_s)


def _target(kind: str, rng: random.Random, workers: int, modes: list[str]) -> dict[str, Any]:
    """Where ``kind`` strikes; network modes are drawn like kinds, each once per shuffled round of
    ``modes`` (refilled here), so that a run with enough partitions tries every mode."""
    if kind in (WORKER_KILL, WORKER_RESTART, WORKER_PAUSE):
        return {"worker": rng.randrange(workers)}
    if kind == BROKER_KILL:
        return {"cluster": rng.choice(("A", "B")), "role": rng.choice(BROKER_ROLES)}
    if kind == SLOW_TARGET:
        return {"cluster": "B", "producer_byte_rate": rng.choice((512, 1024, 4096))}
    if not modes:
        modes.extend(NETWORK_MODES)
        rng.shuffle(modes)
    return {
        "worker": rng.randrange(workers),
        "cluster": rng.choice(("A", "B")),
        "mode": modes.pop(),
    }


def schedule(
    seed: int,
    duration_s: float,
    kinds: Sequence[str],
    *,
    workers: int = 3,
    max_faults: int = 50,
    timing: Timing = Timing(),
) -> list[Fault]:
    """The faults of a run (see the module docstring); ValueError on an unknown kind or no kinds."""
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise ValueError(f"fault kinds {list(kinds)}: expected a non-empty subset of {', '.join(KINDS)}")
    if workers < 1 or max_faults < 0 or duration_s < 0:
        raise ValueError("workers must be >= 1, max_faults and duration_s >= 0")
    rng = random.Random(seed)
    faults: list[Fault] = []
    order: list[str] = []
    modes: list[str] = []
    at = timing.warm_up_s
    while len(faults) < max_faults:
        if not order:
            order = list(dict.fromkeys(kinds))
            rng.shuffle(order)
        kind = order.pop()
        heal_after = round(_heal_after(kind, rng, timing), 1)
        if at + heal_after > duration_s:
            break
        faults.append(Fault(kind, round(at, 1), heal_after, _target(kind, rng, workers, modes)))
        at += heal_after + rng.uniform(*timing.gap_s)
    return faults


def fixed(faults: Sequence[tuple[str, float, float, dict[str, Any]]]) -> list[Fault]:
    """A hand-written schedule (the short test's): ``(kind, start_s, heal_after_s, target)`` in order,
    checked not to overlap."""
    out = [Fault(kind, start, heal, dict(target)) for kind, start, heal, target in faults]
    for before, after in itertools.pairwise(out):
        if after.start_s < before.heal_s:
            raise ValueError(f"{after.describe()} starts before {before.describe()} heals")
    for f in out:
        if f.kind not in KINDS:
            raise ValueError(f"unknown fault kind {f.kind!r}")
    return out
