"""Share groups (KIP-932) in the continuous group offset sync: their start offsets, translated, on the target.

A share group keeps per partition a start offset (SPSO): every record before it has completed delivery.
Set on the target at its translation, a fail-over resumes the group's share consumers there without
skipping a record: the translation is at or before the first copy of the record at the SPSO (the same
rule as a consumer group's, :mod:`connectors.mirror.offsets.translation`). Records past the SPSO that
the source had already acknowledged one by one are delivered again on the target: share groups are
at-least-once, and only the start offset crosses.

- :func:`find_share_groups` (the connector's discovery, continuous mode only): the source's groups of
  protocol type ``share`` that pass the group filter and have a start offset on a topic the topic
  filter accepts; on a source that cannot describe share offsets, every listed share group that passes
  the group filter (the task then reports it).
- :class:`ShareGroupSync` runs inside each cycle of
  :class:`~connectors.mirror.group_watch.ContinuousGroupSync`: DescribeShareGroupOffsets of the task's
  share groups on the source (one request per coordinator), each group's position there
  (:func:`effective_starts`), translation, then for groups ahead of what the target is known to hold:
  their positions on the target (forward only), the target partitions' log bounds, and one
  AlterShareGroupOffsets per group (:func:`plan_commit`'s rule: within the log, never backwards). The coordinator refuses it while the group has members
  (``NON_EMPTY_GROUP``), in the event that would write it: an active share group is never written; it
  shows ``GROUP_SYNC_BLOCKED`` until it is empty.
- Both clusters must run Kafka 4.2 or later (where share groups are production-ready; told by
  DescribeShareGroupOffsets v1, KIP-1226). Otherwise the share groups are not synced: one WARN naming
  the cluster and the groups, ``GROUP_SYNC_BLOCKED`` per group, and another try every
  :data:`UNSUPPORTED_RETRY_S` (an upgrade is noticed); consumer groups are synced all the same.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from connectors.mirror.filters import GroupFilter, TopicFilter
from connectors.mirror.group_sync import TP, SyncReport, plan_commit
from pyconnect.kafka.group_admin import CommittedOffset
from pyconnect.kafka.group_offsets import ShareGroupsUnsupported, ShareOffsets, SyncAdmin
from pyconnect.protocol.share_group_offsets import LAG_VERSION, NON_EMPTY_GROUP

log = logging.getLogger(__name__)

Translate = Callable[[str, str, int, int], tuple[str, int] | None]
"""``(group, source topic, partition, source offset)`` -> ``(target topic, target offset)`` or ``None``."""
SHARE_PROTOCOL_TYPE = "share"
UNSUPPORTED_RETRY_S = 60.0
RECHECK_S = 30.0
KIND = "share group"


async def find_share_groups(admin: SyncAdmin, groups: GroupFilter, topics: TopicFilter) -> list[str]:
    """The source's share groups to sync (see the module docstring), sorted."""
    listed = sorted(
        g
        for g, kind in (await admin.group_types()).items()
        if kind == SHARE_PROTOCOL_TYPE and groups.should_replicate_group(g)
    )
    if not listed:
        return []
    try:
        answer = await admin.share_offsets(listed)
    except ShareGroupsUnsupported:
        return listed
    return [
        g
        for g in listed
        if g in answer.errors or any(topics.should_replicate_topic(t) for t, _ in answer.offsets.get(g, {}))
    ]


def effective_starts(
    starts: Mapping[TP, int], lags: Mapping[TP, int], ends: Mapping[TP, int]
) -> dict[TP, int]:
    """Where a share group stands per partition: its start offset, or the partition's end read *before*
    the start offsets and lags were (``ends``) when the lag says every record from the start offset to
    the end then had completed delivery (lag 0: Kafka keeps a start offset behind records that completed
    delivery until it next acquires records, so a caught-up group's start offset alone would have
    them delivered again). Records appended after that read are not counted: the answer never passes a
    record that has not completed delivery."""
    return {
        tp: max(start, ends[tp]) if lags.get(tp) == 0 and tp in ends else start
        for tp, start in starts.items()
    }


class ShareGroupSync:
    """The share groups of one checkpoint task (see the module docstring); one cycle at a time."""

    def __init__(
        self,
        name: str,
        groups: Sequence[str],
        admins: tuple[SyncAdmin, SyncAdmin],
        translate: Translate,
        report: SyncReport,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._name = name
        self._groups = list(groups)
        self._source, self._target = admins
        self._translate = translate
        self._report = report
        self._clock = clock
        self._known: dict[str, dict[TP, int]] = {}
        self._source_partitions: set[TP] = set()
        self._recheck_at = clock() + RECHECK_S
        self._retry_at: float | None = None
        self._warned: str | None = None
        self._failed: set[str] = set()
        self.stats: Counter[str] = Counter()

    async def cycle(self) -> None:
        """Read the source's start offsets; set those ahead of the target's there."""
        now = self._clock()
        if self._retry_at is not None and now < self._retry_at:
            return
        if now >= self._recheck_at:
            self._known.clear()
            self._recheck_at = now + RECHECK_S
        parts = self._source_partitions
        ends = await self._source.log_ends(parts, refresh=True) if parts else {}
        source = await self._describe(self._source)
        if source is None:
            return
        self._source_partitions = {tp for starts in source.offsets.values() for tp in starts}
        wanted: dict[str, dict[TP, CommittedOffset]] = {}
        for group, starts in source.offsets.items():
            position = effective_starts(starts, source.lags.get(group, {}), ends)
            translated = self._translated(group, position)
            known = self._known.get(group, {})
            if translated and any(known.get(tp, -1) < o.offset for tp, o in translated.items()):
                wanted[group] = translated
        if not wanted:
            return
        partitions = {tp for offsets in wanted.values() for tp in offsets}
        target_ends = await self._target.log_ends(partitions, refresh=True)
        current = await self._describe(self._target, list(wanted))
        if current is None:
            return
        self._retry_at = None
        await self._sync(wanted, current, await self._target.log_starts(partitions), target_ends)

    async def _describe(self, admin: SyncAdmin, groups: Sequence[str] | None = None) -> ShareOffsets | None:
        """The share offsets of ``groups`` (default: all) on ``admin``'s cluster, or ``None`` when that
        cluster cannot take part (reported)."""
        try:
            answer = await admin.share_offsets(self._groups if groups is None else groups)
        except ShareGroupsUnsupported as exc:
            self._unsupported(f"{exc}: share groups are synced between Kafka 4.2 or later clusters")
            return None
        if answer.version < LAG_VERSION:
            self._unsupported(
                f"{admin.cluster} answers DescribeShareGroupOffsets v{answer.version} only: share groups are "
                "synced between Kafka 4.2 or later clusters"
            )
            return None
        return answer

    def _unsupported(self, why: str) -> None:
        self._retry_at = self._clock() + UNSUPPORTED_RETRY_S
        self.stats["unsupported"] += 1
        for group in self._groups:
            self._report.blocked(group, why, KIND, warn=False)
        if self._warned != why:
            self._warned = why
            log.warning(
                "%s: not syncing the offsets of share groups %s: %s; other groups are synced, tried again "
                "every %.0f s",
                self._name,
                ", ".join(self._groups),
                why,
                UNSUPPORTED_RETRY_S,
            )

    def _translated(self, group: str, offsets: Mapping[TP, int]) -> dict[TP, CommittedOffset]:
        wanted: dict[TP, CommittedOffset] = {}
        for (topic, partition), start in offsets.items():
            found = self._translate(group, topic, partition, start)
            if found is not None:
                wanted[(found[0], partition)] = CommittedOffset(found[1])
        return wanted

    async def _sync(
        self,
        wanted: dict[str, dict[TP, CommittedOffset]],
        current: ShareOffsets,
        starts: Mapping[TP, int],
        ends: Mapping[TP, int],
    ) -> None:
        bounds = {tp: (starts[tp], ends[tp]) for tp in starts if tp in ends}
        jobs = []
        for group, offsets in wanted.items():
            if group in current.errors:
                continue  # not a share group on the target, or its coordinator is moving: next cycle
            position = effective_starts(current.offsets.get(group, {}), current.lags.get(group, {}), ends)
            have = {tp: CommittedOffset(o) for tp, o in position.items()}
            plan = plan_commit(offsets, have, bounds)
            known = {tp: c.offset for tp, c in have.items()} | {tp: offsets[tp].offset for tp in plan.missing}
            jobs.append(self._alter(group, {tp: c.offset for tp, c in plan.changes.items()}, known))
        for result in await asyncio.gather(*jobs, return_exceptions=True):
            if isinstance(result, BaseException):
                raise result

    async def _alter(self, group: str, changes: dict[TP, int], known: dict[TP, int]) -> None:
        if changes:
            answer = await self._target.alter_share_offsets(group, changes)
            if answer.error_code == NON_EMPTY_GROUP:
                self.stats["share_commits_refused_active"] += 1
                self._report.blocked(group, "the coordinator refused the commit (NON_EMPTY_GROUP)", KIND)
                return
            failed = {(p.topic, p.partition): p.error_code for p in answer.partitions if p.error_code}
            if answer.error_code or failed:
                self.stats["share_commits_failed"] += 1
                first = group not in self._failed
                self._failed.add(group)
                log.log(
                    logging.WARNING if first else logging.DEBUG,
                    "%s: start offsets of share group %s not set on %s: %s%s",
                    self._name,
                    group,
                    self._target.cluster,
                    answer.error_message or answer.error_code or failed,
                    "; retried every cycle, logged again after a success" if first else "",
                )
                return
            self._failed.discard(group)
            self.stats["share_commits"] += 1
            known.update(changes)
        self._known[group] = known
        self._report.synced(group, KIND)
