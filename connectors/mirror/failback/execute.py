"""``pyconnect failback execute``: the steps of :mod:`.state`, each done once, in order, resumable.

Contract (:class:`FailbackRun`): :meth:`FailbackRun.run` starts at the first step the state has not
recorded and saves the state after every step (and after every group of ``groups-returned``), so a run
killed at any point and started again reaches the same end. The steps:

* ``forward-stopped``: ``PUT /connectors/{forward}/stop`` on the forward fleet, until STOPPED (the task's
  final offset commit writes the offset sync of its last record).
* ``measured``: the forward connector's committed offsets (``GET .../offsets``) and :func:`~.ledger_reads.
  read_ledger`, then what the reverse flow will copy (:func:`~.ledger_reads.read_reverse_plan`: B's own
  topics from their ends recorded by the failover, ``own_ends``); a copy that ends past the target's end
  recorded by the failover stops the run with :class:`CopiedAfterFailover` (exit 10: A came back while
  the forward flow ran, and its late copies lie among the applications' writes on B); a copy end proved
  only by the connector offsets stops it with :class:`Unverified` (exit 8) unless ``accept_unverified``.
* ``quarantined`` (only with a quarantine template): :func:`~.quarantine.quarantine` of the orphans
  (read again from the recorded ranges after a resume).
* ``reverse-started``: the reverse MirrorSourceConnector (:func:`~.reverse_flow.reverse_source_config`)
  is created STOPPED on the reverse fleet, its offsets set to the measured starts (:func:`~.reverse_flow.
  copy_starts`: the copy ends, and B's own topics' ends at the failover), resumed, until RUNNING. An
  existing connector of that name this failback created (recorded in the state before the creation) is
  set to the starts again while still STOPPED (a crash in between), else only resumed; one it did not
  create is refused (:class:`~connectors.mirror.offsets.failover_calls.FailoverRefused`, exit 3). With
  ``adopt`` (the operator named the reverse connector) a connector of that name that exists when the
  run measures is *adopted* (active/active: the flow B->A has run all along): it must be a
  MirrorSourceConnector B->A (else :class:`~connectors.mirror.offsets.failover_flow.FlowConfigError`, exit
  2), its config (not the forward one turned around) decides what it copies, it is never created nor
  re-pointed, only stopped and resumed here (its tasks afresh: one may have failed while A was away), and
  ``forward-resumed`` leaves it running.
* ``caught-up``: a group of the failover with members on B stops the run (:class:`~connectors.mirror.
  offsets.failover_calls.FailoverRefused`, exit 3; the reverse flow keeps copying); then, within
  ``catch_up_timeout_s``, B's last stable offsets must stay still for ``quiet_s`` while the reverse flow
  has committed and synced every record below them; else :class:`NotCaughtUp` (exit 9; run again).
  Once B is quiet, the reverse connector is stopped: its task's final commit writes its offsets and the
  offset sync of its last record at once, instead of at the worker's next offset flush (60 s by
  default); it stays stopped if that shows it caught up, and is resumed otherwise.
* ``groups-returned``: :func:`~.group_return.plan_return` per group (reverse runs read now), refused or
  unproved groups stop the run before any commit, then each group is committed on A and read back
  (:func:`connectors.mirror.offsets.failover_execute.move_group`).
* ``forward-resumed``: the reverse connector is stopped; the forward offset syncs of the records copied
  back are written (:mod:`.return_syncs`: the groups' positions among them translate exactly to B
  afterwards); the forward connector's offsets are set to A's last stable offsets (of the ledger's
  partitions and of the copies back it would copy: under IdentityReplicationPolicy a topic of B's own
  copied back under its name), and it is resumed: the applications' new records on A flow to B again;
  the orphans and the copies back do not (under DefaultReplicationPolicy the copies back, ``B.orders``,
  are a cycle for the forward flow, which never copies them). Before the offsets are set, the audit
  window (:func:`~.proof_reads.read_window`: A's and B's ends, the syncs and checkpoints written so far)
  is recorded once.
* ``audited`` (only with an ``auditor``): the forward flow audited within that window
  (:mod:`.proof`): the records A holds that B lacks must be exactly the orphans, B must hold nothing A
  lacks (every record written on B was copied back), and each returned group's offsets on A and B must
  name the same record (re-read 0, skipped 0). Findings raise :class:`~.proof.AuditFindings` (exit 13;
  nothing is undone, ``execute`` audits again); the verdict is kept in the state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from connectors.mirror.failback.connect_api import ConnectApi
from connectors.mirror.failback.copy_drain import CONNECTOR_WAIT_S, drain, source_offsets
from connectors.mirror.failback.group_reads import group_offsets, read_returns
from connectors.mirror.failback.group_return import GroupReturn
from connectors.mirror.failback.ledger import MirrorEnd
from connectors.mirror.failback.ledger_reads import (
    Ledger,
    flow_runs,
    read_ledger,
    read_reverse_plan,
    reverse_of,
)
from connectors.mirror.failback.positions import Run
from connectors.mirror.failback.proof import Auditor, AuditVerdict, positions_of
from connectors.mirror.failback.proof_reads import audit_request, read_window, run_audit
from connectors.mirror.failback.quarantine import quarantine
from connectors.mirror.failback.return_syncs import return_syncs, write_syncs
from connectors.mirror.failback.reverse_flow import (
    adoption_refusal,
    copied_topics,
    copy_starts,
    reverse_source_config,
)
from connectors.mirror.failback.state import FailbackState
from connectors.mirror.offsets.failover_calls import (
    FailoverError,
    FailoverRefused,
    bounded,
    busy_groups,
    close_quietly,
    cluster_bounds,
    one_line,
)
from connectors.mirror.offsets.failover_execute import move_group
from connectors.mirror.offsets.failover_flow import FailoverFlow, FlowConfigError
from connectors.mirror.offsets.failover_state import FailoverState, parse_key, partition_key
from pyconnect.config.client_configs import mirror_client_config
from pyconnect.kafka.group_admin import GroupAdmin
from pyconnect.kafka.record_offsets import committed_records

__all__ = [
    "EXIT_UNVERIFIED",
    "FailbackRun",
    "Unverified",
]

EXIT_UNVERIFIED = 8
EXIT_COPIED_AFTER_FAILOVER = 10
Partition = tuple[str, int]


class Unverified(FailoverError):
    """What the failback rests on is not proved (expired offset syncs); nothing was changed by this step."""

    exit_code = EXIT_UNVERIFIED


class CopiedAfterFailover(FailoverError):
    """The forward flow copied records past the target's end at the failover: refused, nothing changed."""

    exit_code = EXIT_COPIED_AFTER_FAILOVER


def copied_after(flow: FailoverFlow, ends: list[MirrorEnd], failover_ends: Mapping[str, int]) -> list[str]:
    """The target partitions whose forward copy ends past the target's end when the failover executed
    (``partition: end > end at failover``); empty when the failover recorded no ends (an older state
    file) or the copy stopped before it."""
    policy = flow.policy()
    found = []
    for end in ends:
        key = partition_key(policy.format_remote_topic(flow.source, end.topic), end.partition)
        if key in failover_ends and end.target_end > failover_ends[key]:
            found.append(f"{key.replace(':', '-')}: {end.target_end} > {failover_ends[key]}")
    return found


@dataclass
class FailbackRun:
    """One execute (see the module contract)."""

    flow: FailoverFlow
    state: FailbackState
    forward: ConnectApi
    forward_connector: str
    reverse: ConnectApi
    reverse_connector: str
    groups: list[str]
    timeout_s: float
    failover_ends: Mapping[str, int] = field(default_factory=dict)
    own_ends: Mapping[str, int] | None = None
    adopt: bool = False
    quarantine_template: str | None = None
    accept_unverified: bool = False
    allow_rewind: bool = False
    quiet_s: float = 5.0
    catch_up_timeout_s: float = 300.0
    save: Callable[[FailbackState], None] = lambda _: None
    timings: dict[str, float] = field(default_factory=dict)
    returns: list[GroupReturn] = field(default_factory=list)
    ledger: Ledger | None = None
    auditor: Auditor | None = None
    audit_out: str = "failback-audit"
    verdict: AuditVerdict | None = None

    async def run(self) -> None:
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("forward-stopped", self._stop_forward),
            ("measured", self._measure),
            ("quarantined", self._quarantine),
            ("reverse-started", self._start_reverse),
            ("caught-up", self._catch_up),
            ("groups-returned", self._return_groups),
            ("forward-resumed", self._resume_forward),
        ]
        if self.auditor is not None:
            steps.append(("audited", self._audit))
        for step, action in steps:
            if self.state.is_done(step):
                continue
            started = time.monotonic()
            await action()
            self.timings[step] = round(time.monotonic() - started, 3)
            self.state.complete(step)
            self.save(self.state)

    # -- steps ---------------------------------------------------------------------------------

    async def _stop_forward(self) -> None:
        await self.forward.stop(self.forward_connector)
        await self.forward.wait_state(self.forward_connector, "STOPPED", CONNECTOR_WAIT_S)

    async def _measure(self) -> None:
        committed = source_offsets(await self.forward.offsets(self.forward_connector), self.flow.source)
        ledger = await read_ledger(
            self.flow, committed, self.timeout_s, keep_records=self.quarantine_template is not None
        )
        after = copied_after(self.flow, [p.end for p in ledger.partitions], self.failover_ends)
        if after:
            raise CopiedAfterFailover(
                f"the forward flow copied records from {self.flow.source} after the failover ({', '.join(after)}): "
                f"they lie among the applications' writes on {self.flow.target}; stop the forward connector "
                "before the original cluster returns (it is left stopped; nothing else was changed)"
            )
        guessed = [p.end for p in ledger.partitions if not p.end.proved]
        if guessed and not self.accept_unverified:
            names = ", ".join(f"{e.topic}-{e.partition}" for e in guessed)
            raise Unverified(
                f"no offset sync proves where the copy of {names} ended on cluster {self.flow.target} "
                "(expired or never written): give --accept-unverified to go on with the connector offsets"
            )
        self.ledger = ledger
        ends = [p.end for p in ledger.partitions]
        adopted = self.adopt and await self.reverse.exists(self.reverse_connector)
        if adopted:
            reverse_config = await self.reverse.config(self.reverse_connector)
            refusal = adoption_refusal(reverse_config, self.flow.target, self.flow.source)
            if refusal:
                raise FlowConfigError(
                    f"connector {self.reverse_connector} at {self.reverse.url} cannot be the reverse flow: "
                    f"{refusal}"
                )
        else:
            reverse_config = reverse_source_config(await self.forward.config(self.forward_connector))
        reverse = await read_reverse_plan(self.flow, reverse_config, ends, self.own_ends, self.timeout_s)
        self.state.reverse_adopted = adopted
        self.state.measured(
            ends,
            [p.orphans for p in ledger.partitions],
            {
                **reverse.copy_ends,
                **{(p.end.topic, p.end.partition): p.source_bounds[1] for p in ledger.partitions},
            },
            reverse.starts,
        )
        self.state.quarantine = self.quarantine_template

    async def _quarantine(self) -> None:
        template = self.state.quarantine
        if template is None:
            return
        if self.ledger is not None and self.ledger.records:
            records = self.ledger.records
        else:
            stretches = [
                (o.topic, o.partition, o.first - 1, o.last + 1)
                for o in self.state.orphans.values()
                if o.first is not None and o.last is not None
            ]
            read = await committed_records(
                mirror_client_config(self.flow.source_config, "consumer"), stretches, self.timeout_s
            )
            records = {(s[0], s[1]): found for s, found in read.items()}
        await quarantine(
            self.flow.source,
            self.flow.source_config,
            records,
            template,
            f"pyconnect-failback-{self.flow.source}-{self.flow.target}",
            self.timeout_s,
        )

    def _starts(self) -> dict[Partition, int]:
        """The first offset the reverse flow copies, by partition of B (a state measured by an older
        version holds none: then the forward copies, from their ends)."""
        if self.state.reverse_starts:
            return {parse_key(k): v for k, v in self.state.reverse_starts.items()}
        policy = self.flow.policy()
        return {
            (policy.format_remote_topic(self.flow.source, e.topic), e.partition): e.target_end
            for e in self.state.ends.values()
        }

    async def _start_reverse(self) -> None:
        if self.state.reverse_adopted:  # its tasks afresh: one may have failed while A was away
            await self.reverse.stop(self.reverse_connector)
            await self.reverse.wait_state(self.reverse_connector, "STOPPED", CONNECTOR_WAIT_S)
        else:
            await self._create_reverse()
        await self.reverse.resume(self.reverse_connector)
        await self.reverse.wait_state(self.reverse_connector, "RUNNING", CONNECTOR_WAIT_S)

    async def _create_reverse(self) -> None:
        """Create the reverse connector STOPPED and set its offsets to the measured starts; after a crash
        in between, set them again while it is still STOPPED (it never ran). A connector of that name
        this failback did not create (one left by an earlier failback, copying from its old offsets) is
        refused: :class:`~connectors.mirror.offsets.failover_calls.FailoverRefused`."""
        name = self.reverse_connector
        if not await self.reverse.exists(name):
            self.state.reverse_created = True
            self.save(self.state)
            config = reverse_source_config(await self.forward.config(self.forward_connector))
            await self.reverse.create(name, config, "STOPPED")
        elif not self.state.reverse_created:
            raise FailoverRefused(
                f"a connector {name} exists at {self.reverse.url} that this failback did not create (left by "
                "an earlier failback?): delete it, or name it with --reverse-connector to use it as the "
                "reverse flow"
            )
        elif (await self.reverse.states(name))[0] != "STOPPED":
            return
        await self.reverse.wait_state(name, "STOPPED", CONNECTOR_WAIT_S)
        await self.reverse.alter_offsets(name, copy_starts(self.flow.target, self._starts()))

    async def _target_views(self) -> None:
        busy = await busy_groups(self.flow.target_config, self.flow.target, self.groups, self.timeout_s)
        if busy:
            named = "; ".join(f"group {g} is {v.describe()}" for g, v in busy.items())
            raise FailoverRefused(
                f"{named} on cluster {self.flow.target}: the reverse flow runs; stop the applications "
                f"on {self.flow.target} and run execute again"
            )

    async def _catch_up(self) -> None:
        await self._target_views()
        await self.reverse.resume(self.reverse_connector)  # a run interrupted while it was stopped
        await drain(
            self.reverse,
            self.reverse_connector,
            reverse_of(self.flow),
            self._starts(),
            quiet_s=self.quiet_s,
            timeout_s=self.catch_up_timeout_s,
            call_timeout_s=self.timeout_s,
        )

    async def _copies_back(self) -> dict[Partition, tuple[str, list[Run]]]:
        """Per partition of A that holds copies back (the forward flow's own topic under
        IdentityReplicationPolicy, the copy of one of B's own topics): its B topic and the reverse runs of
        that B partition."""
        reverse = reverse_of(self.flow)
        runs, _, _ = await flow_runs(reverse, self.timeout_s)
        back = reverse.policy()
        return {
            (back.format_remote_topic(self.flow.target, topic), partition): (
                topic,
                runs.get((topic, partition), []),
            )
            for topic, partition in self._starts()
        }

    async def _return_groups(self) -> None:
        back = reverse_of(self.flow)
        returns = self.state.returns or FailoverState(
            {"source": back.source, "target": back.target, "checkpoints_topic": back.checkpoints_topic}
        )
        self.state.returns = returns
        todo = [g for g in self.groups if g not in returns.groups]
        if todo:
            self.returns = await read_returns(
                self.flow, self.state, todo, self.timeout_s, allow_rewind=self.allow_rewind
            )
            refused = [r.refused for r in self.returns if r.refused]
            if refused:
                raise FailoverRefused(
                    f"refusing to return the groups: {'; '.join(refused)} (nothing was committed)"
                )
            unproved = [f"{r.group} {p.target_topic}-{p.partition}" for r in self.returns for p in r.unproved]
            if unproved and not self.accept_unverified:
                raise Unverified(
                    f"no offset sync proves where {', '.join(unproved)} returns: give --accept-unverified to "
                    "leave those partitions at their offsets on the original cluster"
                )
            for planned in self.returns:
                returns.plan(planned.group, planned.offsets(), {})
            self.save(self.state)
        admin = GroupAdmin(mirror_client_config(back.target_config, "admin"))
        try:
            await bounded(admin.start(), self.timeout_s, back.target)
            for group in returns.pending():
                await move_group(admin, back, group, returns, self.timeout_s, resumed=group not in todo)
                self.save(self.state)
        except FailoverError:
            raise
        except Exception as exc:
            raise FailoverError(f"committing on cluster {back.target} failed: {one_line(exc)}") from None
        finally:
            await close_quietly(admin)

    async def _resume_forward(self) -> None:
        if not self.state.reverse_adopted:
            await self.reverse.stop(self.reverse_connector)
            await self.reverse.wait_state(self.reverse_connector, "STOPPED", CONNECTOR_WAIT_S)
        copies = await self._copies_back()
        await write_syncs(self.flow, return_syncs(copies), self.timeout_s)
        ledger = [parse_key(k) for k in self.state.ends]
        if self.state.window is None:
            self.state.window = await read_window(self.flow, ledger, self.timeout_s)
            self.save(self.state)
        copied = copied_topics(
            await self.forward.config(self.forward_connector),
            self.flow.policy(),
            self.flow.target,
            {t for t, _ in copies},
        )
        partitions = sorted({*ledger, *(tp for tp in copies if tp[0] in copied)})
        bounds = await cluster_bounds(self.flow.source_config, self.flow.source, partitions, self.timeout_s)
        await self.forward.alter_offsets(
            self.forward_connector,
            copy_starts(self.flow.source, {tp: end for tp, (_, end) in bounds.items()}),
        )
        await self.forward.resume(self.forward_connector)
        await self.forward.wait_state(self.forward_connector, "RUNNING", CONNECTOR_WAIT_S)
        if self.state.reverse_adopted:
            await self.reverse.resume(self.reverse_connector)
            await self.reverse.wait_state(self.reverse_connector, "RUNNING", CONNECTOR_WAIT_S)

    async def _audit(self) -> None:
        assert self.auditor is not None and self.state.window is not None
        groups = sorted(self.state.returns.groups) if self.state.returns else []
        returned = self.state.returns.groups if self.state.returns else {}
        _, on_target = await group_offsets(self.flow.target_config, self.flow.target, groups, self.timeout_s)
        policy = self.flow.policy()
        remote = {
            e.topic: policy.format_remote_topic(self.flow.source, e.topic) for e in self.state.ends.values()
        }
        positions = positions_of(
            {g: p.offsets() for g, p in returned.items()}, on_target, remote, moved_on_source=True
        )
        orphans = {(o.topic, o.partition): o for o in self.state.orphans.values()}
        request = audit_request(
            "failback",
            self.flow,
            self.state.window,
            groups,
            positions,
            self.audit_out,
            expected=orphans,
            timeout_s=self.timeout_s,
        )
        self.verdict = await run_audit(self.auditor, request, self._record_audit)

    def _record_audit(self, audit: dict[str, Any]) -> None:
        self.state.audit = audit
        self.save(self.state)
