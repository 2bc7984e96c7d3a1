"""The running parts of the group offset sync: Java's periodic rounds, and our continuous watcher.

:class:`PeriodicGroupSync` is ``sync.group.offsets.enabled`` as Java runs it (KIP-545), every
``sync.group.offsets.interval.seconds``: the checkpointed downstream offsets (with the upstream commit
metadata) are committed to each group that is ``Empty`` or unknown (``Dead``) on the target, never moving
a committed offset backwards (the group's offsets are read in the same round, for unknown groups too);
right before each commit the group is described again. Unlike Java, groups with members are skipped
instead of relying on the broker's UNKNOWN_MEMBER_ID rejection (KAFKA-14095), and a group that is not idle
is never treated as new (KAFKA-19794: Java commits without the forward-only check to any group that was
not ``Empty`` at its describe, which rewinds a group whose consumers left in between). A refusal by the
coordinator (members joined after the describe) is a skip retried next round.

:class:`ContinuousGroupSync` is the mode ``pyconnect.sync.group.offsets.continuous=true``
(:mod:`connectors.mirror.group_sync`). One coroutine, owned by the checkpoint task (``start``/``stop``;
cancelled and awaited on stop), runs a *cycle* every :data:`WATCH_INTERVAL_S`:

1. the committed offsets of all the task's consumer groups on the source, one OffsetFetch v8 per
   coordinator (KIP-709); offsets that changed are translated (``translate``: the task's offset-sync
   store and topic renaming), unchanged ones again every :data:`RETRANSLATE_S` (newer offset syncs can
   make a translation exact);
2. groups whose translation is ahead of what the target is known to hold are *due*; for them, at once:
   the log start (and remembered log end) of their target partitions, one describe of each kind
   (classic and KIP-848) and their committed offsets on the target; then, for those that are idle,
   :func:`~connectors.mirror.group_sync.plan_commit` and one admin OffsetCommit per group, all groups'
   commits in flight at once;
3. the share groups (:mod:`connectors.mirror.share_group_sync`), likewise.

Why an active group is never written, the race of KAFKA-19794 included: the describe skips groups with
members, and the commit is an admin commit (no member id, generation/epoch -1), which the coordinator
accepts only while the group has no member, checked in the same coordinator event that writes it
(classic groups answer ``UNKNOWN_MEMBER_ID``, consumer-protocol groups ``UNKNOWN_MEMBER_ID`` or
``STALE_MEMBER_EPOCH``; the group coordinator processes a group's events one at a time). A group that
becomes active between the describe and the commit therefore refuses the commit: it is reported
(``GROUP_SYNC_BLOCKED``) and retried next cycle. The describe only spares requests bound to be refused
and names the group's state; the refusal is what protects. Why nothing moves backwards: the target's
committed offsets are read in the same cycle, before the commit, and only forward moves are committed.
What this cannot see is a member that joins, commits and leaves entirely between that read and the
commit (one round trip of ours; a member needs at least three of its own, and a classic group's first
join also waits ``group.initial.rebalance.delay.ms``).

What the target is known to hold is remembered per group and forgotten every :data:`RECHECK_S`, so a
target changed behind the sync's back (an operator's reset, a deleted group) is seen again. Cycles that
fail (a coordinator moving, a broker down) are logged at WARN at most once per :data:`WARN_EVERY_S` and
retried next cycle; a refusal (authorization) ends the watcher and is handed to ``on_refused`` (the task
fails). ``stop`` logs one INFO line with what the watcher did (cycles, commits, requests per API).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from connectors.mirror.checkpoint_records import Checkpoint
from connectors.mirror.filters import TopicFilter
from connectors.mirror.group_sync import TP, CommitPlan, SyncReport, commit_outcome, plan_commit
from connectors.mirror.offsets.translation import OffsetSyncStore
from connectors.mirror.share_group_sync import ShareGroupSync, Translate
from pyconnect.concurrency import cancel_and_wait
from pyconnect.errors import KafkaAccessError
from pyconnect.kafka.group_admin import CommittedOffset, GroupAdmin
from pyconnect.kafka.group_offsets import SyncAdmin

log = logging.getLogger(__name__)
T = TypeVar("T")

WATCH_INTERVAL_S = 0.1
"""How often the continuous sync reads the source groups' commits."""
RECHECK_S = 30.0
RETRANSLATE_S = 5.0
WARN_EVERY_S = 60.0


class PeriodicGroupSync:
    """Java's rounds (see the module docstring); ``report`` shows the groups it does not sync."""

    def __init__(self, name: str, report: SyncReport, task_log: logging.Logger) -> None:
        self._name = name
        self._report = report
        self._log = task_log

    async def run(
        self, admin: GroupAdmin, groups: Sequence[str], checkpoints: Mapping[str, Mapping[TP, Checkpoint]]
    ) -> None:
        """One round over ``groups`` that have checkpoints."""
        due = [g for g in groups if checkpoints.get(g)]
        if not due:
            return
        views = await admin.describe_groups(due)
        for group in due:
            view = views.get(group)
            if view is None or not view.idle:
                self._report.blocked(group, view.describe() if view else "not described")
                continue
            wanted = {
                tp: CommittedOffset(c.downstream_offset, c.metadata) for tp, c in checkpoints[group].items()
            }
            await self._sync_group(admin, group, wanted)

    async def _sync_group(self, admin: GroupAdmin, group: str, wanted: Mapping[TP, CommittedOffset]) -> None:
        current = await admin.committed_offsets(group)
        changes = {tp: o for tp, o in wanted.items() if tp not in current or current[tp].offset < o.offset}
        if not changes:
            self._report.synced(group)
            return
        view = (await admin.describe_groups([group]))[group]
        if not view.idle:
            self._report.blocked(group, view.describe())
            return
        outcome, why = commit_outcome(await admin.alter_offsets(group, changes))
        if outcome == "active":
            self._report.blocked(group, why)
        elif outcome != "committed":
            self._log.warning("%s: unable to sync offsets for consumer group %s (%s)", self._name, group, why)
        else:
            self._report.synced(group)
            self._log.debug("%s: synced %d offsets of group %s", self._name, len(changes), group)


def translator(store: OffsetSyncStore, topics: TopicFilter, rename: Callable[[str], str]) -> Translate:
    """A source group's offset as the continuous sync commits it on the target: the renamed topic and
    the store's translation, or ``None`` (a topic not replicated, an offset not translatable yet)."""

    def translate(group: str, topic: str, partition: int, offset: int) -> tuple[str, int] | None:
        if not topics.should_replicate_topic(topic):
            return None
        downstream = store.translate_downstream(group, (topic, partition), offset)
        if downstream is None or downstream < 0:
            return None
        return rename(topic), downstream

    return translate


def _ahead(wanted: Mapping[TP, CommittedOffset], known: Mapping[TP, int]) -> bool:
    return any(tp not in known or known[tp] < offset.offset for tp, offset in wanted.items())


class ContinuousGroupSync:
    """The continuous mode (see the module docstring). ``translate`` maps ``(group, topic, partition,
    source offset)`` to ``(target topic, target offset)`` or ``None``; ``on_refused`` takes a refusal."""

    def __init__(
        self,
        name: str,
        groups: Sequence[str],
        admins: tuple[SyncAdmin, SyncAdmin],
        translate: Translate,
        report: SyncReport,
        on_refused: Callable[[KafkaAccessError], None],
        *,
        shares: Sequence[str] = (),
        interval_s: float = WATCH_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._name = name
        self._groups = list(groups)
        self._source, self._target = admins
        self._translate = translate
        self._report = report
        self._on_refused = on_refused
        self._interval_s = interval_s
        self._clock = clock
        self._seen: dict[str, dict[TP, CommittedOffset]] = {}
        self._wanted: dict[str, dict[TP, CommittedOffset]] = {}
        self._known: dict[str, dict[TP, int]] = {}
        self._recheck_at = self._retranslate_at = clock()
        self._warned_at: float | None = None
        self._group_warned_at: dict[str, float] = {}
        self._task: asyncio.Task[None] | None = None
        self._started = clock()
        self.stats: Counter[str] = Counter()
        self.shares = ShareGroupSync(name, shares, admins, translate, report, clock=clock) if shares else None

    def start(self) -> None:
        """Start the watcher coroutine (idempotent)."""
        if self._task is None:
            self._started = self._clock()
            self._task = asyncio.create_task(self._run(), name=f"{self._name}-group-offset-sync")

    async def stop(self) -> None:
        """Cancel the watcher and wait for it; logs what it did. Idempotent."""
        task, self._task = self._task, None
        if task is None:
            return
        await cancel_and_wait(task, log=log)
        log.info(
            "%s: continuous group offset sync stopped after %.1f s: %s",
            self._name,
            self._clock() - self._started,
            json.dumps(self.summary(), sort_keys=True),
        )

    def summary(self) -> dict[str, Any]:
        """Cycles, commits and requests so far (per cluster and API)."""
        shares = self.shares.stats if self.shares is not None else Counter()
        return {
            **dict(self.stats + shares),
            "source_requests": dict(self._source.requests),
            "target_requests": dict(self._target.requests),
        }

    async def _run(self) -> None:
        while True:
            started = self._clock()
            try:
                await self.cycle()
                spent_ms = int((self._clock() - started) * 1000)
                self.stats["cycle_ms_total"] += spent_ms
                self.stats["cycle_ms_max"] = max(self.stats["cycle_ms_max"], spent_ms)
            except KafkaAccessError as exc:
                self._on_refused(exc)
                return
            except Exception as exc:  # a coordinator moving, a broker down: the next cycle retries
                self.stats["failed_cycles"] += 1
                now = self._clock()
                if self._warned_at is None or now - self._warned_at >= WARN_EVERY_S:
                    self._warned_at = now
                    log.warning(
                        "%s: group offset sync cycle failed (retried every %.1f s, logged at most every "
                        "%.0f s): %r",
                        self._name,
                        self._interval_s,
                        WARN_EVERY_S,
                        exc,
                    )
            await asyncio.sleep(max(0.0, self._interval_s - (self._clock() - started)))

    def _warn(self, group: str, message: str, *args: object) -> None:
        """WARN for ``group`` at most once per :data:`WARN_EVERY_S` (DEBUG in between)."""
        now = self._clock()
        last = self._group_warned_at.get(group)
        if last is not None and now - last < WARN_EVERY_S:
            log.debug(message, *args)
            return
        self._group_warned_at[group] = now
        log.warning(message, *args)

    async def cycle(self) -> None:
        """One cycle (see the module docstring)."""
        self.stats["cycles"] += 1
        now = self._clock()
        if now >= self._recheck_at:
            self._known.clear()
            self._recheck_at = now + RECHECK_S
        retranslate = now >= self._retranslate_at
        if retranslate:
            self._retranslate_at = now + RETRANSLATE_S
        if self._groups:
            source = await self._timed("source", self._source.fetch_committed(self._groups))
            for group, offsets in source.items():
                if retranslate or offsets != self._seen.get(group):
                    self._seen[group] = offsets
                    self._wanted[group] = self._translated(group, offsets)
            due = {g: w for g, w in self._wanted.items() if w and _ahead(w, self._known.get(g, {}))}
            if due:
                await self._sync(due)
        if self.shares is not None:
            await self.shares.cycle()

    async def _timed(self, phase: str, work: Awaitable[T]) -> T:
        """``await work``, its time added to ``stats["<phase>_ms"]`` (where a cycle's time goes)."""
        started = self._clock()
        try:
            return await work
        finally:
            spent = int((self._clock() - started) * 1000)
            self.stats[f"{phase}_ms"] += spent
            self.stats[f"{phase}_ms_max"] = max(self.stats[f"{phase}_ms_max"], spent)

    def _translated(self, group: str, offsets: Mapping[TP, CommittedOffset]) -> dict[TP, CommittedOffset]:
        wanted: dict[TP, CommittedOffset] = {}
        for (topic, partition), committed in offsets.items():
            found = self._translate(group, topic, partition, committed.offset)
            if found is not None:
                wanted[(found[0], partition)] = CommittedOffset(found[1], committed.metadata)
        return wanted

    async def _sync(self, due: dict[str, dict[TP, CommittedOffset]]) -> None:
        target = self._target
        partitions = {tp for wanted in due.values() for tp in wanted}
        starts, ends, views, current = await self._timed(
            "target",
            asyncio.gather(
                target.log_starts(partitions),
                target.log_ends(partitions),
                target.describe(list(due)),
                target.fetch_committed(list(due)),
            ),
        )
        idle = []
        for group in due:
            view = views.get(group)
            if view is None or not view.idle:
                self.stats["skipped_active"] += 1
                self._report.blocked(group, view.describe() if view else "not described")
            else:
                idle.append(group)
        plans = {g: self._plan(due[g], current[g], starts, ends) for g in idle if g in current}
        beyond = {tp for plan in plans.values() for tp in plan.beyond_end}
        if beyond:  # the copy moved on since the remembered end: ask once more
            ends = {**ends, **await target.log_ends(beyond, refresh=True)}
            plans = {g: self._plan(due[g], current[g], starts, ends) for g in plans}
        results = await self._timed(
            "commit",
            asyncio.gather(
                *(self._commit(g, due[g], current[g], plan) for g, plan in plans.items()),
                return_exceptions=True,
            ),
        )
        for result in results:
            if isinstance(result, BaseException):
                raise result

    @staticmethod
    def _plan(
        wanted: Mapping[TP, CommittedOffset],
        current: Mapping[TP, CommittedOffset],
        starts: Mapping[TP, int],
        ends: Mapping[TP, int],
    ) -> CommitPlan:
        bounds = {tp: (starts[tp], ends[tp]) for tp in wanted if tp in starts and tp in ends}
        return plan_commit(wanted, current, bounds)

    async def _commit(
        self,
        group: str,
        wanted: Mapping[TP, CommittedOffset],
        current: Mapping[TP, CommittedOffset],
        plan: CommitPlan,
    ) -> None:
        known = {tp: c.offset for tp, c in current.items()}
        known.update({tp: wanted[tp].offset for tp in plan.missing})  # asked again when the source moves
        if plan.changes:
            outcome, why = commit_outcome(await self._target.commit(group, plan.changes))
            if outcome == "active":
                self.stats["commits_refused_active"] += 1
                self._report.blocked(group, why)
                return
            if outcome != "committed":
                self.stats[f"commits_{outcome}"] += 1
                if outcome == "moving":
                    log.debug("%s: offsets of group %s not synced: %s", self._name, group, why)
                else:
                    self._warn(
                        group, "%s: unable to sync offsets for consumer group %s (%s)", self._name, group, why
                    )
                return
            self.stats["commits"] += 1
            self.stats["offsets_committed"] += len(plan.changes)
            known.update({tp: c.offset for tp, c in plan.changes.items()})
        self._known[group] = known
        self._report.synced(group)
