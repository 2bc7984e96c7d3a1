"""``pyconnect cutover plan|execute|resume``: move the applications from A to B while both run.

The flow is read as ``pyconnect failover`` reads it, from the forward fleet (``--url`` [``--connector``
CHECKPOINT]: the forward MirrorSourceConnector is found there, or named with ``--source-connector``);
``--group`` (repeatable) or ``--all-groups`` name the groups to move. ``--fence-principal`` (repeatable)
fences those principals' producers on A with DENY WRITE ACLs; without it the operator stops the
producers and the command verifies A stays still. The steps and their state file: :mod:`.state`;
what each does: :mod:`.execute`.

* ``plan`` (``--dry-run`` of execute) changes nothing: the lag, the partitions and the fence, each
  group's move as the failover plans it now, the steps left in the state file.
* ``execute`` runs the steps (``--state FILE``, resumable); ``resume`` continues the file's cutover
  (it must exist).

Exit codes: 0 done; 1 error; 2 bad input; 3 refused (lag over ``--max-lag``, a group active on A or B:
nothing changed, the fence lifted); 9 the mirror did not drain in time (fence lifted); 11 A took writes
while it had to stay still (fence lifted); 12 the final checks failed after the groups moved; 13 the
closing audit found a record of A missing or altered on B, a record on B that A lacks, or a moved group
that would re-read or skip (``resume`` audits again). Every error is one line on stderr. Once promoted, a
line on stderr says the applications may start on B while the audit runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from connectors.mirror.cutover.execute import CutoverRun, flow_partitions
from connectors.mirror.cutover.fence import fence_bindings
from connectors.mirror.cutover.state import STEPS, CutoverState
from connectors.mirror.failback.command import forward_connector
from connectors.mirror.failback.connect_api import ConnectApi
from connectors.mirror.failback.copy_drain import copy_progress, source_offsets
from connectors.mirror.failback.ledger_reads import flow_runs
from connectors.mirror.failback.proof import Auditor, audit_lines
from connectors.mirror.offsets.failover_calls import FailoverError
from connectors.mirror.offsets.failover_command import (
    FailoverOptions,
    build_plan,
    load_flow,
    run_operator_command,
)
from connectors.mirror.offsets.failover_flow import FailoverFlow, FlowConfigError
from connectors.mirror.offsets.failover_report import report_json as moves_json
from connectors.mirror.offsets.mirror_client import MirrorClientError
from pyconnect.rest_client import RestAccess

__all__ = ["CutoverOptions", "run", "run_cutover"]


@dataclass(frozen=True)
class CutoverOptions:
    """The command line of ``pyconnect cutover``."""

    action: Literal["plan", "execute", "resume"]
    url: str | None = None
    connector: str | None = None
    worker_config: str | None = None
    source_connector: str | None = None
    groups: tuple[str, ...] = ()
    all_groups: bool = False
    state_file: str | None = None
    principals: tuple[str, ...] = ()
    max_lag: int = 100_000
    quiet_s: float = 5.0
    fence_timeout_s: float = 300.0
    drain_timeout_s: float = 300.0
    timeout_s: float = 30.0
    dry_run: bool = False
    as_json: bool = False
    rest_access: RestAccess | None = None
    auditor: Auditor | None = None
    """Runs the closing audit (``execute``, ``resume``); ``None`` ends the cutover at ``promoted``."""
    audit_out: str | None = None
    """Where the audit's reports go (default: ``<state file>.audit``)."""
    announce: Callable[[str], None] = lambda _: None
    """Where the line saying the cutover was promoted goes (before the audit runs)."""


async def _run(options: CutoverOptions) -> dict[str, Any]:
    if options.url is None:
        raise FlowConfigError("cutover needs --url: the forward fleet stops, drains and checks its connector")
    if not options.groups and not options.all_groups:
        raise FlowConfigError("name the groups with --group (repeatable) or --all-groups")
    flow = load_flow(
        FailoverOptions(
            "plan",
            url=options.url,
            connector=options.connector,
            worker_config=options.worker_config,
            timeout_s=options.timeout_s,
            rest_access=options.rest_access,
        )
    )
    api = ConnectApi(options.url, options.rest_access, options.timeout_s)
    forward = await forward_connector(api, flow, options.source_connector)
    path = Path(options.state_file) if options.state_file else None
    if options.action == "resume" and (path is None or not path.exists()):
        raise FlowConfigError("resume needs the --state FILE of a cutover that started")
    if options.action != "plan" and path is None:
        raise FlowConfigError(f"cutover {options.action} needs --state FILE")
    state = CutoverState.load(path, flow.state_key) if path else CutoverState(flow.state_key)
    committed = source_offsets(await api.offsets(forward), flow.source)
    synced: set[tuple[str, int]] = set()
    if not committed:  # the offset-syncs topic is read only when the connector has committed nothing yet
        try:
            _, newest, _ = await flow_runs(flow, options.timeout_s)
            synced = set(newest)
        except MirrorClientError:
            pass
    partitions = flow_partitions(flow, committed, synced)
    if not partitions:
        raise FailoverError(
            f"the connector {forward} has copied nothing of flow {flow.name} yet: nothing to move"
        )
    run = CutoverRun(
        flow,
        state,
        api,
        forward,
        options.groups,
        partitions,
        options.timeout_s,
        all_groups=options.all_groups,
        principals=options.principals or tuple(state.fence),
        max_lag=options.max_lag,
        quiet_s=options.quiet_s,
        fence_timeout_s=options.fence_timeout_s,
        drain_timeout_s=options.drain_timeout_s,
        save=(lambda s: s.save(path)) if path else (lambda _: None),
        auditor=options.auditor,
        audit_out=options.audit_out or f"{path}.audit",
        announce=options.announce,
    )
    if options.action == "plan" or options.dry_run:
        progress = await copy_progress(api, forward, flow, {tp: 0 for tp in partitions}, options.timeout_s)
        plan = await build_plan(
            flow,
            options.groups,
            all_groups=options.all_groups,
            timeout_s=options.timeout_s,
            allow_rewind=False,
        )
        document = _report("plan", flow, state, forward, run, moves_json("plan", plan))
        document["lag"] = progress.left
        document["fence_acls"] = [
            f"DENY {b.principal} WRITE topic {b.name}"
            for b in fence_bindings(run.principals, sorted({t for t, _ in partitions}))
        ]
        return document
    await run.run()
    moves = moves_json("execute", run.plan, run.outcomes) if run.plan is not None else {}
    return _report(options.action, flow, state, forward, run, moves)


def _report(
    action: str, flow: FailoverFlow, state: CutoverState, forward: str, run: CutoverRun, moves: dict[str, Any]
) -> dict[str, Any]:
    fenced, promoted = state.times.get("fenced"), state.times.get("promoted")
    return {
        "action": action,
        "flow": {"source": flow.source, "target": flow.target, "origin": flow.origin},
        "forward_connector": forward,
        "steps_done": list(state.done),
        "steps_left": [s for s in STEPS if s not in state.done],
        "lag": run.lag,
        "fence": {"principals": list(state.fence or run.principals), "topics": state.fenced_topics},
        "source_ends": dict(state.source_ends),
        "fenced_to_promoted_s": None if fenced is None or promoted is None else round(promoted - fenced, 3),
        "groups": moves.get("groups", []),
        "timings_s": dict(run.timings),
        "audit": state.audit,
    }


def _text(document: dict[str, Any]) -> str:
    flow = document["flow"]
    lines = [
        f"cutover {document['action']} of flow {flow['source']}->{flow['target']} ({flow['origin']}), forward "
        f"connector {document['forward_connector']}",
        f"steps done: {', '.join(document['steps_done']) or 'none'}; left: {', '.join(document['steps_left']) or 'none'}",
    ]
    if document.get("lag") is not None:
        lines.append(f"lag: {document['lag']} records")
    principals = document["fence"]["principals"]
    lines.append(
        f"fence on {flow['source']}: DENY WRITE for {', '.join(principals)}"
        if principals
        else f"fence on {flow['source']}: the operator stops the producers; the command verifies {flow['source']} stays still"
    )
    for group in document["groups"]:
        lines.append(
            f"group {group['group']}: {group.get('status')}, expected re-read {group.get('expected_reread')}, "
            f"skipped {group.get('expected_skipped')}"
        )
    if document.get("fenced_to_promoted_s") is not None:
        lines.append(f"fenced to promoted: {document['fenced_to_promoted_s']:.1f} s")
    lines += audit_lines(document.get("audit"))
    if document["timings_s"]:
        lines.append("step times: " + ", ".join(f"{k} {v:.1f} s" for k, v in document["timings_s"].items()))
    return "\n".join(lines)


async def run(options: CutoverOptions, stdout: TextIO) -> int:
    document = await _run(options)
    if options.as_json:
        stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        print(_text(document), file=stdout)
    stdout.flush()
    return 0


def run_cutover(options: CutoverOptions, loop: str, stdout: TextIO, stderr: TextIO) -> int:
    """:func:`run` on the event loop ``loop``; every error becomes one line on ``stderr`` and its exit code."""
    return run_operator_command(run(options, stdout), loop, stderr)
