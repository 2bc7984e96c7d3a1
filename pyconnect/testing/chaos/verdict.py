"""The verdict of a chaos run, from the data itself (pure: every input is already read).

Inputs, per source partition: the sequence numbers of the source records in offset order (the
workload writes partition-local sequence numbers into the values), the target copies in target offset
order, and the checkpoints of the workload's consumer group. Outputs:

- per partition: ``produced`` (distinct source records), ``copies`` (target records), ``lost`` (source
  records with no copy), ``duplicated`` (copies beyond the first of a record), ``out_of_order`` (first
  copies that land after the first copy of a later source record: a gap later filled), ``foreign``
  (target records that are no source record);
- checkpoints: one is **ahead** when its downstream offset ``d`` passes the true position ``T``: the
  lowest target offset holding a copy of a source record at or after the checkpoint's upstream offset
  ``u`` (the target's end when none is copied yet). It is the rule of the Spark translation audit: a
  consumer resuming at ``d`` then misses nothing it had not consumed on the source;
- recovery: for each healed fault, seconds from its heal to the first sample where every task ran and
  the lag was within the bound (``None``: not within the next fault's start or the end of the run);
- REST: p99 latency of ``GET /connectors?expand=status`` and the failed calls;
- committed source offsets: every commit of the mirror's source offsets in the worker's offsets topic,
  in topic order per source partition; a **rewind** is a commit below the highest one before it (a
  zombie that woke up and committed the positions it held: issue 16 point 7). A tombstone (an offset
  reset through REST) starts the partition's history over.

``broken_promises`` turns a :class:`Verdict` into the list of promises broken (empty: kept):
at-least-once (nothing lost), exactly-once (also no duplicate, judged under read_committed), order,
checkpoints never ahead, every task RUNNING and the lag back to zero at the end, recovery within the
bound after each fault, REST answering throughout, no committed source offset going back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

PartitionKey = tuple[str, int]
"""(source topic, partition)."""


@dataclass(frozen=True)
class CheckpointRecord:
    group: str
    topic: str
    """The source topic (the workload maps remote names back)."""
    partition: int
    upstream: int
    downstream: int


@dataclass
class PartitionVerdict:
    topic: str
    partition: int
    produced: int = 0
    copies: int = 0
    lost: int = 0
    duplicated: int = 0
    out_of_order: int = 0
    foreign: int = 0
    source_duplicates: int = 0
    """Records the source itself holds twice (a producer retry): counted once, reported for honesty."""
    lost_sample: list[int] = field(default_factory=list)
    """The first lost sequence numbers (at most 10)."""
    out_of_order_sample: list[int] = field(default_factory=list)


@dataclass
class CheckpointVerdict:
    checked: int = 0
    ahead: int = 0
    ahead_sample: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class OffsetCommitVerdict:
    commits: int = 0
    partitions: int = 0
    rewinds: int = 0
    max_rewind: int = 0
    """The largest step back, in source offsets."""
    rewind_sample: list[dict[str, Any]] = field(default_factory=list)


def judge_offset_commits(history: Sequence[tuple[PartitionKey, int | None]]) -> OffsetCommitVerdict:
    """``history``: ``((topic, partition), offset)`` commits in topic order per partition (``None``: a
    tombstone). See the module docstring."""
    verdict = OffsetCommitVerdict()
    highest: dict[PartitionKey, int] = {}
    seen: set[PartitionKey] = set()
    for key, offset in history:
        if offset is None:
            highest.pop(key, None)
            continue
        verdict.commits += 1
        seen.add(key)
        top = highest.get(key)
        if top is not None and offset < top:
            verdict.rewinds += 1
            verdict.max_rewind = max(verdict.max_rewind, top - offset)
            if len(verdict.rewind_sample) < 10:
                verdict.rewind_sample.append(
                    {"topic": key[0], "partition": key[1], "committed": offset, "after": top}
                )
        else:
            highest[key] = offset
    verdict.partitions = len(seen)
    return verdict


@dataclass(frozen=True)
class Sample:
    """One observation of the fleet during the run: ``t_s`` from the run's start, the total lag in
    records (source end minus what the target holds, over all partitions), whether every task of every
    connector was RUNNING."""

    t_s: float
    lag: int
    all_running: bool


@dataclass
class Verdict:
    partitions: list[PartitionVerdict]
    checkpoints: CheckpointVerdict
    recovery_s: dict[str, list[float | None]]
    """fault kind -> seconds to recover after each of its faults, in order."""
    lag_bound: int
    recovery_bound_s: float
    rest_calls: int
    rest_failures: int
    rest_p99_ms: float | None
    final_lag: int
    final_all_running: bool
    exactly_once: bool
    offset_commits: OffsetCommitVerdict = field(default_factory=OffsetCommitVerdict)

    @property
    def totals(self) -> dict[str, int]:
        keys = ("produced", "copies", "lost", "duplicated", "out_of_order", "foreign", "source_duplicates")
        return {k: sum(getattr(p, k) for p in self.partitions) for k in keys}

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["totals"] = self.totals
        out["broken_promises"] = broken_promises(self)
        return out


def judge_partition(
    topic: str, partition: int, source: Sequence[int], target: Sequence[tuple[int, int]]
) -> tuple[PartitionVerdict, list[list[int]]]:
    """One partition's counts, plus ``copies_at``: for each source offset, the target offsets of all
    its copies. ``source`` holds the sequence numbers of the source partition in offset order (offsets
    from 0: a fresh topic written without transactions); ``target`` the ``(target offset, sequence
    number)`` of every copy, in offset order."""
    verdict = PartitionVerdict(topic, partition)
    offset_of: dict[int, int] = {}
    for offset, seq in enumerate(source):
        if seq in offset_of:
            verdict.source_duplicates += 1
        else:
            offset_of[seq] = offset
    verdict.produced = len(offset_of)
    verdict.copies = len(target)
    copies_at: list[list[int]] = [[] for _ in source]
    seen: set[int] = set()
    highest_first = -1
    for target_offset, seq in target:
        source_offset = offset_of.get(seq)
        if source_offset is None:
            verdict.foreign += 1
            continue
        copies_at[source_offset].append(target_offset)
        if seq in seen:
            verdict.duplicated += 1
            continue
        seen.add(seq)
        if source_offset < highest_first:
            verdict.out_of_order += 1
            if len(verdict.out_of_order_sample) < 10:
                verdict.out_of_order_sample.append(seq)
        highest_first = max(highest_first, source_offset)
    missing = [seq for seq in offset_of if seq not in seen]
    verdict.lost = len(missing)
    verdict.lost_sample = sorted(missing)[:10]
    return verdict, copies_at


def judge_checkpoints(
    checkpoints: Sequence[CheckpointRecord],
    copies_at: Mapping[PartitionKey, Sequence[Sequence[int]]],
    target_end: Mapping[PartitionKey, int],
) -> CheckpointVerdict:
    """Check every checkpoint against the true position (module docstring). ``copies_at[(topic, p)][u]``
    lists the target offsets of every copy of the source record at offset ``u`` (first copies and
    later ones: a later copy of a record at or after ``u`` placed before ``d`` also counts, since the
    rule is the lowest copy of any record at or after ``u``); ``target_end`` is the target partition's
    end offset. A checkpoint of a partition with no data read is skipped (counted as not checked)."""
    verdict = CheckpointVerdict()
    lowest_from: dict[PartitionKey, list[int]] = {}
    for key, per_offset in copies_at.items():
        suffix = [math.inf] * (len(per_offset) + 1)
        for u in range(len(per_offset) - 1, -1, -1):
            here = min(per_offset[u], default=math.inf)
            suffix[u] = min(here, suffix[u + 1])
        lowest_from[key] = [int(x) if x != math.inf else -1 for x in suffix]
    for c in checkpoints:
        key = (c.topic, c.partition)
        if key not in lowest_from or key not in target_end:
            continue
        table = lowest_from[key]
        lowest = table[c.upstream] if 0 <= c.upstream < len(table) else -1
        true_position = lowest if lowest >= 0 else target_end[key]
        verdict.checked += 1
        if c.downstream > true_position:
            verdict.ahead += 1
            if len(verdict.ahead_sample) < 10:
                verdict.ahead_sample.append({**asdict(c), "true_position": true_position})
    return verdict


def recovery_times(
    heals: Sequence[tuple[str, float, float]], samples: Sequence[Sample], lag_bound: int
) -> dict[str, list[float | None]]:
    """fault kind -> seconds from each heal to the first sample at or after it with every task RUNNING
    and ``lag <= lag_bound``, looking no further than ``horizon_s``. ``heals`` holds ``(kind, heal_s,
    horizon_s)``; ``None`` when no sample qualifies before the horizon."""
    out: dict[str, list[float | None]] = {}
    ordered = sorted(samples, key=lambda s: s.t_s)
    for kind, heal_s, horizon_s in heals:
        found: float | None = None
        for s in ordered:
            if s.t_s < heal_s:
                continue
            if s.t_s > horizon_s:
                break
            if s.all_running and s.lag <= lag_bound:
                found = round(s.t_s - heal_s, 2)
                break
        out.setdefault(kind, []).append(found)
    return out


def percentile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank ``q`` quantile (0 < q <= 1) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def broken_promises(v: Verdict) -> list[str]:
    """The promises the run broke, one line each naming the numbers (empty: every promise kept)."""
    broken: list[str] = []
    t = v.totals
    if t["lost"]:
        where = [f"{p.topic}-{p.partition}: {p.lost} (first {p.lost_sample})" for p in v.partitions if p.lost]
        broken.append(f"at-least-once: {t['lost']} records lost ({'; '.join(where)})")
    if v.exactly_once and t["duplicated"]:
        where = [f"{p.topic}-{p.partition}: {p.duplicated}" for p in v.partitions if p.duplicated]
        broken.append(f"exactly-once: {t['duplicated']} duplicates under read_committed ({'; '.join(where)})")
    if t["out_of_order"]:
        broken.append(f"order: {t['out_of_order']} records copied after a later record of their partition")
    if t["foreign"]:
        broken.append(f"integrity: {t['foreign']} target records are no source record")
    if v.checkpoints.ahead:
        broken.append(
            f"checkpoints: {v.checkpoints.ahead} of {v.checkpoints.checked} ahead of the data "
            f"(first {v.checkpoints.ahead_sample[:3]})"
        )
    if v.final_lag != 0:
        broken.append(f"lag: {v.final_lag} records not copied after the quiet period")
    if not v.final_all_running:
        broken.append("tasks: not every task RUNNING after the quiet period")
    slow = {
        kind: times
        for kind, times in v.recovery_s.items()
        if any(x is None or x > v.recovery_bound_s for x in times)
    }
    if slow:
        broken.append(f"recovery: beyond {v.recovery_bound_s:.0f} s (lag <= {v.lag_bound}) after {slow}")
    if v.offset_commits.rewinds:
        c = v.offset_commits
        broken.append(
            f"rewinds: {c.rewinds} of {c.commits} committed source offsets went back (by up to "
            f"{c.max_rewind}; first {c.rewind_sample[:3]})"
        )
    if v.rest_calls == 0 or v.rest_failures:
        broken.append(f"REST: {v.rest_failures} of {v.rest_calls} GET /connectors?expand=status calls failed")
    return broken
