"""Failover of a consumer group from cluster A to cluster B: the plan, and committing it.

What ``pyconnect offsets translate --group G --from A --to B`` does (see ``pyconnect.cli``):

1. On B (required): read the checkpoints of G for source A from partition 0 of
   ``policy.checkpoints_topic(A)`` (default ``A.checkpoints.internal``), the latest per target partition,
   exactly what Java's ``RemoteClusterUtils.translateOffsets`` reads; G's state and committed offsets on B.
2. On A, when it can be reached: G's committed offsets (the *source position*). A is allowed to be down
   (a disaster): the plan then says so and uses the checkpoints' upstream offsets as the source position.
3. The offset-syncs topic, when it can be read (on A for ``offset-syncs.topic.location=source``, the
   default; on B for ``target``), indexed with an exact-mode
   :class:`~connectors.mirror.offsets.translation.OffsetSyncStore` to prove where the source position lies
   on B.

One row per partition: source topic and partition, target topic, source offset, translated offset (the
checkpoint's downstream offset: what Java's ``translateOffsets`` answers and what ``--execute``
commits), G's committed offset on B, the expected re-read, its upper bound, and the action. Partitions
G committed on A without a checkpoint get a row with action ``no-checkpoint`` (nothing to commit).

**Expected re-read** of a partition: ``P - translated_offset``, where ``P`` is the offset on B of the
copy of the first record G had not consumed on A (the copy of upstream offset ``source_offset``, or of
the first record after it). It counts the target-partition offsets a consumer of G resuming at the
translated offset reads although G had consumed their originals on A. That is the number of records
re-read unless B's partition is compacted or holds transaction markers (then it is an upper bound).
It is known only where the offset syncs prove ``P`` (a sync at the source offset, or a chain of syncs
proving a contiguous copy through it; see :mod:`connectors.mirror.offsets.translation` for the proof and
its one assumption, that no sync the writer triggered was lost); otherwise it is empty. A negative value
means the translated offset lies that many records *past* ``P``: the consumer would skip them (G was
rewound on A after its last checkpoint). **Max re-read** is an upper bound that needs no contiguity
proof: the distance to the copy of the nearest sync at or above the source offset (empty past the
newest sync, where nothing bounds it). Both need the syncs around the source offset: a compacted
offset-syncs topic keeps only the latest sync per partition, so older positions stay unknown. When A
is down and the offset syncs live on A, neither can be computed from checkpoints alone.

**Actions** (what ``--execute`` does per partition): ``commit`` when G has no offset on B or a smaller
one; ``keep`` when it already has the translated offset; ``skip-rewind`` when G's offset on B is ahead
of the translated one (a consumer already ran on B, or group offset sync got there first); with
``allow_rewind`` that becomes ``rewind`` and is committed too. Committing never happens while G has
members on B: it is refused unless the group is ``Empty`` or unknown (``Dead``) there, checked again
right before the commit with the describe API of each kind of group (DescribeGroups for classic groups,
ConsumerGroupDescribe for ``group.protocol=consumer`` ones, :mod:`pyconnect.kafka.group_view`); the
broker also rejects a commit without a member id for a group with members (UNKNOWN_MEMBER_ID,
STALE_MEMBER_EPOCH ...), which is reported as a refusal too.

Errors are :class:`FailoverError` (one line: unknown alias, B unreachable, no checkpoints) or
:class:`FailoverRefused` (G active on B). Every network step is bounded by ``timeout_s``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TextIO

from connectors.mirror.checkpoint_records import Checkpoint
from connectors.mirror.offsets.failover_calls import (
    EXIT_ERROR,
    EXIT_REFUSED,
    FailoverError,
    FailoverRefused,
    bounded,
    close_quietly,
    commit_offsets,
    described,
    one_line,
    retrying,
)
from connectors.mirror.offsets.failover_plan import remote_topic, source_topic_guess
from connectors.mirror.offsets.mirror_client import (
    MirrorClient,
    MirrorClientError,
    read_offset_syncs,
)
from connectors.mirror.offsets.translate_plan import EXPORT_FIELDS, Action, FailoverPlan, PlanRow
from connectors.mirror.offsets.translate_render import render_csv, render_json, render_text
from connectors.mirror.offsets.translate_requests import (
    TranslateRequest,
    parse_bootstrap,
    request_from_bootstrap,
    request_from_flow,
    request_from_mm2,
)
from connectors.mirror.offsets.translation import OffsetSyncStore
from connectors.mirror.policy import ReplicationPolicy
from connectors.mirror.records import TopicPartition
from pyconnect.config.client_configs import mirror_client_config
from pyconnect.kafka.group_admin import CommittedOffset, GroupAdmin
from pyconnect.kafka.group_view import ACTIVE_GROUP_REJECTIONS

__all__ = [
    "ACTIVE_GROUP_REJECTIONS",
    "EXIT_ERROR",
    "EXIT_REFUSED",
    "EXPORT_FIELDS",
    "ExecuteResult",
    "FailoverError",
    "FailoverPlan",
    "FailoverRefused",
    "PlanRow",
    "TranslateRequest",
    "build_plan",
    "execute_plan",
    "parse_bootstrap",
    "plan_rows",
    "render_csv",
    "render_json",
    "render_text",
    "request_from_bootstrap",
    "request_from_flow",
    "request_from_mm2",
    "run_translate",
]

EMPTY = "Empty"
DEAD = "Dead"
COMMITTABLE_STATES = (EMPTY, DEAD)


@dataclass(frozen=True)
class ExecuteResult:
    committed: dict[tuple[str, int], CommittedOffset]
    group_state: str


# -- planning --------------------------------------------------------------------------------------------


def _action(translated: int | None, current: int | None, allow_rewind: bool) -> Action:
    if translated is None:
        return "no-checkpoint"
    if current is None or current < translated:
        return "commit"
    if current == translated:
        return "keep"
    return "rewind" if allow_rewind else "skip-rewind"


def _reread(
    store: OffsetSyncStore | None, source_tp: tuple[str, int], source_offset: int | None, translated: int
) -> tuple[int | None, int | None]:
    """(expected, max) re-read for a consumer resuming at ``translated``; see the module docstring."""
    if store is None or source_offset is None:
        return None, None
    proven = store.translate(source_tp, source_offset, mode="exact")
    if proven is None or proven.downstream_offset < 0:
        return None, None
    expected = None
    if proven.reread is not None:
        expected = proven.downstream_offset + proven.reread - translated
    maximum = None
    if proven.reread_bound is not None:
        maximum = proven.downstream_offset + proven.reread_bound - translated
        if expected is not None:
            maximum = max(maximum, expected)
    return expected, maximum


async def _target_side(
    request: TranslateRequest, policy: ReplicationPolicy
) -> tuple[dict[TopicPartition, Checkpoint], int, str, dict[tuple[str, int], CommittedOffset]]:
    target = MirrorClient(
        request.target_config, alias=request.target, timeout_s=request.timeout_s, policy=policy
    )
    topic = policy.checkpoints_topic(request.source)
    try:
        topics = await target.list_topics()
        if topic not in topics:
            raise FailoverError(
                f"no checkpoints topic {topic} on cluster {request.target}: is a checkpoint connector "
                f"{request.source}->{request.target} running?"
            )
        checkpoints, skipped = await target.latest_checkpoints(request.group, request.source)
    except MirrorClientError as exc:
        raise FailoverError(str(exc)) from None
    finally:
        await target.close()
    if not checkpoints:
        raise FailoverError(
            f"no checkpoints for group {request.group} in {topic} on cluster {request.target}"
        )
    admin = GroupAdmin(mirror_client_config(request.target_config, "admin"))
    try:
        await bounded(admin.start(), request.timeout_s, request.target)
        states = await retrying(
            lambda: admin.group_states([request.group]), request.timeout_s, request.target
        )
        current = await retrying(
            lambda: admin.committed_offsets(request.group), request.timeout_s, request.target
        )
    except FailoverError:
        raise
    except Exception as exc:
        raise FailoverError(
            f"cannot read group {request.group} on cluster {request.target}: {one_line(exc)}"
        ) from None
    finally:
        await close_quietly(admin)
    return checkpoints, skipped, states.get(request.group, DEAD), current


async def _source_offsets(
    request: TranslateRequest, notes: list[str]
) -> dict[tuple[str, int], CommittedOffset] | None:
    if request.source_config is None or not mirror_client_config(request.source_config, "admin"):
        notes.append(f"cluster {request.source} is not configured: source offsets are the checkpointed ones")
        return None
    admin = GroupAdmin(mirror_client_config(request.source_config, "admin"))
    try:
        await bounded(admin.start(), request.timeout_s, request.source)
        return await retrying(
            lambda: admin.committed_offsets(request.group), request.timeout_s, request.source
        )
    except Exception as exc:
        notes.append(
            f"cluster {request.source} is unreachable ({one_line(exc)}): plan from the checkpoints alone, "
            "source offsets are the checkpointed ones"
        )
        return None
    finally:
        await close_quietly(admin)


async def _offset_syncs(
    request: TranslateRequest, policy: ReplicationPolicy, notes: list[str], source_reachable: bool
) -> tuple[OffsetSyncStore | None, str | None]:
    if request.offset_syncs_location == "source":
        topic, alias, config = (
            policy.offset_syncs_topic(request.target),
            request.source,
            request.source_config,
        )
        if config is None or not source_reachable:
            notes.append(
                f"offset syncs {topic} live on cluster {request.source}, which cannot be read: "
                "re-reads are unknown"
            )
            return None, None
    else:
        topic, alias, config = (
            policy.offset_syncs_topic(request.source),
            request.target,
            request.target_config,
        )
    try:
        syncs, skipped = await read_offset_syncs(
            mirror_client_config(config, "consumer"), topic, request.timeout_s, cluster=f"cluster {alias}"
        )
    except MirrorClientError as exc:
        notes.append(f"offset syncs not read ({exc}): re-reads are unknown")
        return None, None
    if skipped:
        notes.append(f"skipped {skipped} undecodable records in {topic}")
    store = OffsetSyncStore("exact")
    store.start(must_read_to_end=False)
    store.handle_syncs(syncs)
    store.mark_read_to_end()
    return store, topic


def plan_rows(
    request: TranslateRequest,
    checkpoints: Mapping[TopicPartition, Checkpoint],
    source_offsets: Mapping[tuple[str, int], CommittedOffset] | None,
    current: Mapping[tuple[str, int], CommittedOffset],
    store: OffsetSyncStore | None,
    *,
    allow_rewind: bool = False,
) -> list[PlanRow]:
    """The plan's rows from what was read, sorted by source topic and partition (no I/O).

    ``checkpoints``: the group's latest checkpoint per target partition; ``source_offsets``: its committed
    offsets on A by source partition (``None`` when A could not be read); ``current``: its committed
    offsets on B; ``store``: the offset syncs, ready (``None`` when not read).
    """
    policy = request.policy()
    source_topic_of: dict[str, str] = {}
    for topic, _ in source_offsets or {}:
        source_topic_of.setdefault(remote_topic(policy, request.source, request.target, topic), topic)
    rows: list[PlanRow] = []
    covered: set[tuple[str, int]] = set()
    for tp, checkpoint in checkpoints.items():
        source_topic = source_topic_of.get(tp.topic) or source_topic_guess(
            policy, request.source, request.target, tp.topic
        )
        covered.add((source_topic, tp.partition))
        committed = (source_offsets or {}).get((source_topic, tp.partition))
        source_offset = committed.offset if committed is not None else checkpoint.upstream_offset
        on_target = current.get((tp.topic, tp.partition))
        current_offset = None if on_target is None else on_target.offset
        expected, maximum = _reread(
            store, (source_topic, tp.partition), source_offset, checkpoint.downstream_offset
        )
        rows.append(
            PlanRow(
                source_topic,
                tp.partition,
                tp.topic,
                source_offset,
                "source" if committed is not None else "checkpoint",
                checkpoint.upstream_offset,
                checkpoint.downstream_offset,
                current_offset,
                expected,
                maximum,
                _action(checkpoint.downstream_offset, current_offset, allow_rewind),
                checkpoint.metadata,
            )
        )
    for (topic, partition), committed in (source_offsets or {}).items():
        if (topic, partition) in covered:
            continue
        target_topic = remote_topic(policy, request.source, request.target, topic)
        on_target = current.get((target_topic, partition))
        rows.append(
            PlanRow(
                topic,
                partition,
                target_topic,
                committed.offset,
                "source",
                None,
                None,
                None if on_target is None else on_target.offset,
                None,
                None,
                "no-checkpoint",
                committed.metadata,
            )
        )
    rows.sort(key=lambda r: (r.topic, r.partition))
    return rows


async def build_plan(request: TranslateRequest, *, allow_rewind: bool = False) -> FailoverPlan:
    """Read checkpoints, offsets and offset syncs and compute one :class:`PlanRow` per partition.

    Raises :class:`FailoverError` when B cannot be read or holds no checkpoints for the group; problems
    with A or with the offset syncs only add notes.
    """
    policy = request.policy()
    notes: list[str] = []
    checkpoints, skipped, state, current = await _target_side(request, policy)
    if skipped:
        notes.append(f"skipped {skipped} undecodable checkpoint records")
    source_offsets = await _source_offsets(request, notes)
    store, syncs_topic = await _offset_syncs(request, policy, notes, source_offsets is not None)

    rows = plan_rows(request, checkpoints, source_offsets, current, store, allow_rewind=allow_rewind)
    return FailoverPlan(
        request.group,
        request.source,
        request.target,
        policy.checkpoints_topic(request.source),
        rows,
        state,
        source_offsets is not None,
        syncs_topic,
        notes,
    )


# -- executing -------------------------------------------------------------------------------------------


async def execute_plan(plan: FailoverPlan, request: TranslateRequest) -> ExecuteResult:
    """Commit :attr:`FailoverPlan.to_commit` to the group on B, as an admin (no member id).

    Raises :class:`FailoverRefused` when the group is not ``Empty``/``Dead`` on B (checked again here)
    or the coordinator rejects the commit because members joined meanwhile; :class:`FailoverError` for
    any other failure. Nothing is committed when it raises before the commit request.
    """
    offsets = plan.to_commit
    admin = GroupAdmin(mirror_client_config(request.target_config, "admin"))
    try:
        await bounded(admin.start(), request.timeout_s, plan.target)
        views = await retrying(lambda: described(admin, [plan.group]), request.timeout_s, plan.target)
        view = views[plan.group]
        state = view.state
        if not view.idle:
            raise FailoverRefused(
                f"refusing to commit: group {plan.group} is {view.describe()} on cluster {plan.target}, "
                "not Empty; stop its consumers there and run again"
            )
        if not offsets:
            return ExecuteResult({}, state)
        errors = await retrying(
            lambda: commit_offsets(admin, plan.group, offsets), request.timeout_s, plan.target
        )
    except FailoverError:
        raise
    except Exception as exc:
        raise FailoverError(
            f"committing offsets of group {plan.group} on cluster {plan.target} failed: {one_line(exc)}"
        ) from None
    finally:
        await close_quietly(admin)
    if errors:
        codes = sorted(set(errors.values()))
        names = ", ".join(ACTIVE_GROUP_REJECTIONS.get(c, f"error code {c}") for c in codes)
        if any(c in ACTIVE_GROUP_REJECTIONS for c in codes):
            raise FailoverRefused(
                f"refusing to commit: the coordinator rejected the commit for group {plan.group} on cluster "
                f"{plan.target} ({names}): members joined; stop them and run again"
            )
        raise FailoverError(
            f"committing {len(errors)} of {len(offsets)} offsets of group {plan.group} on cluster "
            f"{plan.target} failed ({names})"
        )
    return ExecuteResult(offsets, state)


async def run_translate(
    request: TranslateRequest,
    *,
    execute: bool,
    allow_rewind: bool,
    export: Literal["json", "csv"] | None,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """Print the plan (text, or ``export`` rows and nothing else on ``stdout``), then commit it when
    ``execute``. Notes and, with ``export``, the commit summary go to ``stderr``. Returns the exit code;
    raises :class:`FailoverError` / :class:`FailoverRefused` (the caller prints them as one line)."""
    plan = await build_plan(request, allow_rewind=allow_rewind)
    if export is not None:
        for note in plan.notes:
            print(f"Note: {note}", file=stderr)
        stdout.write(render_json(plan) + "\n" if export == "json" else render_csv(plan))
    else:
        print(render_text(plan), file=stdout)
    stdout.flush()
    if not execute:
        return 0
    result = await execute_plan(plan, request)
    skipped = [r for r in plan.rows if r.action == "skip-rewind"]
    missing = [r for r in plan.rows if r.action == "no-checkpoint"]
    summary = f"Committed {len(result.committed)} offsets of group {plan.group} on cluster {plan.target}"
    if skipped:
        summary += (
            f"; {len(skipped)} partitions already ahead there were left alone (--allow-rewind moves them)"
        )
    if missing:
        summary += f"; {len(missing)} partitions have no checkpoint and were not committed"
    print(summary, file=stderr if export is not None else stdout)
    return 0
