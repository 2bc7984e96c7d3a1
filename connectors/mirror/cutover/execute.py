"""``pyconnect cutover execute|resume``: the steps of :mod:`.state`, each done once, in order, resumable.

Contract (:class:`CutoverRun`): :meth:`CutoverRun.run` starts at the first step the state has not
recorded and saves the state after each (and after each group of ``groups-moved``). The steps:

* ``lag-checked``: :func:`~connectors.mirror.failback.copy_drain.copy_progress` of the forward flow
  (records of A past the forward connector's committed offsets); over ``max_lag`` is :class:`TooFar`
  (exit 3), nothing changed.
* ``fenced``: with principals, DENY WRITE ACLs on A's mirrored topics for each
  (:mod:`.fence`); without, nothing: the operator stops the producers.
* ``quiet``: A's last stable offsets must stay still for ``quiet_s`` within ``fence_timeout_s``
  (checked every half second); they are recorded. Otherwise :class:`FenceNotVerified` (exit 11).
* ``drained``: :func:`~connectors.mirror.failback.copy_drain.drain` of the forward connector (it may
  be left STOPPED, which its final commit needs); A's ends must still be the recorded ones
  (:class:`FenceNotVerified` otherwise); time out: ``NotCaughtUp`` (exit 9).
* ``groups-moved``: the groups active on A or B stop the run (exit 3); then the failover plan of the
  groups along the flow (:func:`connectors.mirror.offsets.failover_command.build_plan`, A readable: the
  positions are exact) is executed (:func:`connectors.mirror.offsets.failover_execute.execute`) with the
  state's ``moves``.
* ``verified``: A's ends still the recorded ones, nothing left to copy, every group's plan re-reads and
  skips nothing: otherwise :class:`NotVerified` (exit 12; nothing is rolled back: the groups moved). The
  audit window (:func:`~connectors.mirror.failback.proof_reads.read_window`) is recorded.
* ``promoted``: the forward connector stopped (A is retired). The applications may start on B now: the
  audit reads only the recorded window.
* ``audited`` (only with an ``auditor``): the forward flow audited within the window
  (:mod:`connectors.mirror.failback.proof`): every record of A on B, nothing on B that A lacks, no copy out
  of order, each moved group's offsets on A and B naming the same record. Findings raise
  :class:`~connectors.mirror.failback.proof.AuditFindings` (exit 13; ``resume`` audits again).

A failure at ``fenced``, ``quiet`` or ``drained`` (or a refusal at ``groups-moved``) lifts the fence and
forgets those steps (:meth:`~.state.CutoverState.roll_back`) before the error propagates: nothing stays
fenced by a cutover that stopped, and ``resume`` starts the fence again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from connectors.mirror.cutover.fence import lift_fence, raise_fence
from connectors.mirror.cutover.state import CutoverState
from connectors.mirror.failback.connect_api import ConnectApi
from connectors.mirror.failback.copy_drain import CONNECTOR_WAIT_S, copy_progress, drain
from connectors.mirror.failback.group_reads import group_offsets
from connectors.mirror.failback.proof import Auditor, AuditVerdict, positions_of
from connectors.mirror.failback.proof_reads import audit_request, read_window, run_audit
from connectors.mirror.offsets.failover_calls import (
    FailoverError,
    FailoverRefused,
    busy_groups,
    cluster_bounds,
)
from connectors.mirror.offsets.failover_command import build_plan
from connectors.mirror.offsets.failover_execute import GroupOutcome, execute
from connectors.mirror.offsets.failover_flow import FailoverFlow
from connectors.mirror.offsets.failover_plan import FlowPlan
from connectors.mirror.offsets.failover_state import FailoverState, parse_key, partition_key

__all__ = [
    "EXIT_FENCE_NOT_VERIFIED",
    "EXIT_NOT_VERIFIED",
    "CutoverRun",
    "FenceNotVerified",
    "NotVerified",
    "TooFar",
    "flow_partitions",
]

EXIT_FENCE_NOT_VERIFIED = 11
EXIT_NOT_VERIFIED = 12
POLL_S = 0.25
Partition = tuple[str, int]


class TooFar(FailoverRefused):
    """The forward flow lags more than the threshold: nothing changed."""


class FenceNotVerified(FailoverError):
    """A's end offsets moved while they had to stay still: the fence was lifted."""

    exit_code = EXIT_FENCE_NOT_VERIFIED


class NotVerified(FailoverError):
    """The final checks failed after the groups moved (one line says which)."""

    exit_code = EXIT_NOT_VERIFIED


def flow_partitions(
    flow: FailoverFlow, committed: dict[Partition, int], synced: set[Partition]
) -> list[Partition]:
    """The source partitions of the flow, heartbeat topics left out: those with a committed forward offset
    (the caller passes the syncs' partitions only when there is none yet: an offset-syncs topic can hold
    syncs of topics long gone)."""
    policy = flow.policy()
    return sorted(tp for tp in {*committed, *synced} if not policy.is_heartbeats_topic(tp[0]))


@dataclass
class CutoverRun:
    """One execute or resume (see the module contract)."""

    flow: FailoverFlow
    state: CutoverState
    forward: ConnectApi
    forward_connector: str
    groups: tuple[str, ...]
    partitions: list[Partition]
    timeout_s: float
    all_groups: bool = False
    principals: tuple[str, ...] = ()
    max_lag: int = 100_000
    quiet_s: float = 5.0
    fence_timeout_s: float = 300.0
    drain_timeout_s: float = 300.0
    save: Callable[[CutoverState], None] = lambda _: None
    clock: Callable[[], float] = time.time
    lag: int | None = None
    plan: FlowPlan | None = None
    outcomes: list[GroupOutcome] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    auditor: Auditor | None = None
    audit_out: str = "cutover-audit"
    verdict: AuditVerdict | None = None
    announce: Callable[[str], None] = lambda _: None

    async def run(self) -> None:
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("lag-checked", self._check_lag),
            ("fenced", self._fence),
            ("quiet", self._quiet),
            ("drained", self._drain),
            ("groups-moved", self._move_groups),
            ("verified", self._verify),
            ("promoted", self._promote),
        ]
        if self.auditor is not None:
            steps.append(("audited", self._audit))
        for step, action in steps:
            if self.state.is_done(step):
                continue
            started = time.monotonic()
            try:
                await action()
            except FailoverError:
                if step in ("fenced", "quiet", "drained", "groups-moved") and not self.state.is_done(
                    "groups-moved"
                ):
                    await self._roll_back()
                raise
            self.timings[step] = round(time.monotonic() - started, 3)
            self.state.complete(step, self.clock())
            self.save(self.state)
            if step == "promoted" and self.auditor is not None:
                self.announce(
                    f"promoted: the applications may start on {self.flow.target}; the closing audit runs now"
                )

    def _starts(self) -> dict[Partition, int]:
        return {tp: 0 for tp in self.partitions}

    async def _check_lag(self) -> None:
        progress = await copy_progress(
            self.forward, self.forward_connector, self.flow, self._starts(), self.timeout_s
        )
        self.lag = progress.left
        if progress.left > self.max_lag:
            raise TooFar(
                f"the flow {self.flow.name} lags {progress.left} records (over --max-lag {self.max_lag}): "
                "nothing was changed"
            )

    async def _fence(self) -> None:
        topics = sorted({t for t, _ in self.partitions})
        self.state.fence, self.state.fenced_topics = list(self.principals), topics
        self.save(self.state)  # recorded before it exists: a rollback after kill -9 lifts it
        if self.principals:
            await raise_fence(self.flow, self.principals, topics, self.timeout_s)

    async def _ends(self) -> dict[Partition, int]:
        bounds = await cluster_bounds(
            self.flow.source_config, self.flow.source, self.partitions, self.timeout_s
        )
        return {tp: end for tp, (_, end) in bounds.items()}

    async def _quiet(self) -> None:
        deadline = time.monotonic() + self.fence_timeout_s
        last, still_since = await self._ends(), time.monotonic()
        while time.monotonic() < deadline:
            await asyncio.sleep(POLL_S)
            now = await self._ends()
            if now != last:
                last, still_since = now, time.monotonic()
            elif time.monotonic() - still_since >= self.quiet_s:
                self.state.source_ends = {partition_key(t, p): o for (t, p), o in now.items()}
                return
        raise FenceNotVerified(
            f"cluster {self.flow.source} kept taking writes for {self.fence_timeout_s:.0f} s (its end offsets "
            f"never stayed still for {self.quiet_s:g} s): the producers are not stopped; the fence was lifted"
        )

    async def _still_quiet(self) -> None:
        recorded = {parse_key(k): v for k, v in self.state.source_ends.items()}
        now = await self._ends()
        moved = [
            f"{t}-{p}: {recorded[(t, p)]} -> {o}" for (t, p), o in now.items() if o != recorded.get((t, p))
        ]
        if moved:
            raise FenceNotVerified(
                f"cluster {self.flow.source} took writes after the fence ({', '.join(moved[:3])}); the fence "
                "was lifted"
            )

    async def _drain(self) -> None:
        await self.forward.resume(self.forward_connector)  # a resumed run may find it stopped
        await self.forward.wait_state(self.forward_connector, "RUNNING", CONNECTOR_WAIT_S)
        await drain(
            self.forward,
            self.forward_connector,
            self.flow,
            self._starts(),
            quiet_s=min(self.quiet_s, 2.0),
            timeout_s=self.drain_timeout_s,
            call_timeout_s=self.timeout_s,
            settled=True,
        )
        await self._still_quiet()

    async def _active(self, config: dict[str, str], cluster: str) -> list[str]:
        busy = await busy_groups(config, cluster, self.groups, self.timeout_s)
        return [f"group {g} is {v.describe()} on cluster {cluster}" for g, v in busy.items()]

    async def _move_groups(self) -> None:
        moves = self.state.moves or FailoverState(
            {
                "source": self.flow.source,
                "target": self.flow.target,
                "checkpoints_topic": self.flow.checkpoints_topic,
            }
        )
        self.state.moves = moves
        if not moves.groups:
            active = [
                *await self._active(self.flow.source_config, self.flow.source),
                *await self._active(self.flow.target_config, self.flow.target),
            ]
            if active:
                raise FailoverRefused(
                    f"refusing to move the groups: {'; '.join(active)}; stop their consumers and resume (the "
                    "fence was lifted)"
                )
        self.plan = await build_plan(
            self.flow, self.groups, all_groups=self.all_groups, timeout_s=self.timeout_s, allow_rewind=False
        )
        self.outcomes = await execute(
            self.flow, self.plan, moves, self.timeout_s, lambda _: self.save(self.state)
        )

    async def _verify(self) -> None:
        await self._still_quiet()
        progress = await copy_progress(
            self.forward, self.forward_connector, self.flow, self._starts(), self.timeout_s
        )
        if progress.left:
            raise NotVerified(
                f"{progress.left} records of cluster {self.flow.source} are not on {self.flow.target}"
            )
        plan = self.plan or await build_plan(
            self.flow, self.groups, all_groups=self.all_groups, timeout_s=self.timeout_s, allow_rewind=False
        )
        self.plan = plan
        costly = [
            f"group {g.group} (re-read {g.expected_reread}, skipped {g.expected_skipped})"
            for g in plan.groups
            if g.expected_reread != 0 or g.expected_skipped != 0
        ]
        if costly:
            raise NotVerified(f"the moves are not exact: {', '.join(costly)}")
        self.state.window = await read_window(self.flow, self.partitions, self.timeout_s)

    async def _promote(self) -> None:
        await self.forward.stop(self.forward_connector)
        await self.forward.wait_state(self.forward_connector, "STOPPED", CONNECTOR_WAIT_S)

    async def _roll_back(self) -> None:
        if self.state.fence:
            await lift_fence(self.flow, tuple(self.state.fence), self.state.fenced_topics, self.timeout_s)
        self.state.roll_back()
        self.save(self.state)

    async def _audit(self) -> None:
        assert self.auditor is not None and self.state.window is not None
        moved = self.state.moves.groups if self.state.moves else {}
        groups = sorted(moved)
        _, on_source = await group_offsets(self.flow.source_config, self.flow.source, groups, self.timeout_s)
        policy = self.flow.policy()
        remote = {t: policy.format_remote_topic(self.flow.source, t) for t, _ in self.partitions}
        positions = positions_of(
            {g: p.offsets() for g, p in moved.items()}, on_source, remote, moved_on_source=False
        )
        request = audit_request(
            "cutover",
            self.flow,
            self.state.window,
            groups,
            positions,
            self.audit_out,
            timeout_s=self.timeout_s,
        )
        self.verdict = await run_audit(self.auditor, request, self._record_audit)

    def _record_audit(self, audit: dict[str, Any]) -> None:
        self.state.audit = audit
        self.save(self.state)
