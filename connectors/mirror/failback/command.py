"""``pyconnect failback plan|execute|status``: the way back to the original cluster after a failover.

The forward flow A->B is read as ``pyconnect failover`` reads it (``--url`` [``--connector``] of the
forward fleet, or ``--connector-config``/``--config --flow`` for ``plan``); ``--failover-state`` is the
state file of the failover being undone: it proves a failover happened along this flow and names the
groups to return. ``execute`` and ``status`` need the forward fleet (``--url``), the reverse fleet (a
Connect fleet whose workers write to A, ``--reverse-url``) and their own state file (``--state``).

* ``plan`` changes nothing: per partition the forward copy's end and its evidence, the orphans, what B
  holds past the copy's end (what the reverse flow will copy back), and where each group would return.
  The forward connector may still run: its numbers are then a snapshot.
* ``execute`` runs :class:`~.execute.FailbackRun` (resumable; see :mod:`.state`).
* ``status`` prints the state file's steps and, once the reverse flow exists, its connector state and
  the records it has yet to copy.

Exit codes: 0 done; 1 error; 2 bad input; 3 refused (a group active on B or A, a rewind); 7 no failover
recorded (no failover state file, another flow's, or a failover that did not finish); 8 unverified (a
copy end or a group position no offset sync proves; ``--accept-unverified`` goes on); 9 the reverse flow
has not caught up in time (it keeps running: run ``execute`` again); 10 the forward flow copied records
from A after the failover (A came back while it ran): they lie among the applications' writes on B, and
no failback can tell them apart; nothing is changed; 13 the closing audit (:mod:`.proof`) found records A
holds beyond the orphans, records of B not copied back, or a group that would re-read or skip (nothing
is undone; ``execute`` audits again). Every error is one line on stderr.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from connectors.mirror.failback.connect_api import ConnectApi
from connectors.mirror.failback.copy_drain import source_offsets
from connectors.mirror.failback.execute import FailbackRun, copied_after
from connectors.mirror.failback.group_reads import read_returns
from connectors.mirror.failback.ledger_reads import read_ledger, read_reverse_plan
from connectors.mirror.failback.proof import Auditor
from connectors.mirror.failback.report import report_json, report_text
from connectors.mirror.failback.reverse_flow import reverse_source_config
from connectors.mirror.failback.state import FailbackState
from connectors.mirror.offsets.failover_calls import FailoverError
from connectors.mirror.offsets.failover_command import FailoverOptions, load_flow, run_operator_command
from connectors.mirror.offsets.failover_flow import FailoverFlow, FlowConfigError
from connectors.mirror.offsets.failover_state import FailoverState, StateError
from pyconnect.rest_client import RestAccess

__all__ = [
    "EXIT_NO_FAILOVER",
    "FailbackOptions",
    "NoFailover",
    "forward_connector",
    "recorded_failover",
    "run",
    "run_failback",
]

EXIT_NO_FAILOVER = 7


class NoFailover(FailoverError):
    """No finished failover of this flow is recorded: there is nothing to fail back from."""

    exit_code = EXIT_NO_FAILOVER


@dataclass(frozen=True)
class FailbackOptions:
    """The command line of ``pyconnect failback``."""

    action: Literal["plan", "execute", "status"]
    failover_state: str | None = None
    url: str | None = None
    connector: str | None = None
    connector_config: str | None = None
    mm2_config: str | None = None
    flow: str | None = None
    worker_config: str | None = None
    source_connector: str | None = None
    reverse_url: str | None = None
    reverse_connector: str | None = None
    state_file: str | None = None
    quarantine: str | None = None
    accept_unverified: bool = False
    allow_rewind: bool = False
    quiet_s: float = 5.0
    catch_up_timeout_s: float = 300.0
    timeout_s: float = 30.0
    as_json: bool = False
    rest_access: RestAccess | None = None
    auditor: Auditor | None = None
    """Runs the closing audit (``execute``); ``None`` ends the failback without it."""
    audit_out: str | None = None
    """Where the audit's reports go (default: ``<state file>.audit``)."""


def recorded_failover(path: str | None, flow: FailoverFlow) -> FailoverState:
    """The finished failover along ``flow`` recorded in ``path`` (every group verified);
    :class:`NoFailover` otherwise."""
    if path is None:
        raise NoFailover(
            "give the failover's state file with --failover-state: no failover is recorded without it"
        )
    file = Path(path)
    if not file.exists():
        raise NoFailover(f"no failover is recorded: {path} does not exist")
    try:
        state = FailoverState.load(file, flow.state_key)
    except StateError as exc:
        raise NoFailover(f"no failover of flow {flow.name} is recorded: {exc}") from None
    if not state.groups:
        raise NoFailover(f"the failover recorded in {path} moved no group")
    pending = state.pending()
    if pending:
        raise NoFailover(
            f"the failover recorded in {path} did not finish (group {pending[0]} is not verified): "
            "run pyconnect failover execute with it first"
        )
    return state


async def forward_connector(api: ConnectApi, flow: FailoverFlow, name: str | None) -> str:
    """The flow's MirrorSourceConnector on the fleet of ``api``: ``name`` when given (it must exist), else
    the only one whose aliases are the flow's; :class:`FlowConfigError` otherwise."""
    if name is not None:
        if not await api.exists(name):
            raise FlowConfigError(f"the worker at {api.url} has no connector {name}")
        return name
    found = await api.mirror_sources(flow.source, flow.target)
    if len(found) != 1:
        which = f"several ({', '.join(found)})" if found else "none"
        raise FlowConfigError(
            f"the worker at {api.url} runs {which} MirrorSourceConnector of flow {flow.name}: name it with "
            "--source-connector"
        )
    return found[0]


def _fleets(options: FailbackOptions, flow: FailoverFlow) -> tuple[ConnectApi, ConnectApi, str]:
    if options.url is None or options.reverse_url is None:
        raise FlowConfigError(f"failback {options.action} needs --url (the forward fleet) and --reverse-url")
    if options.state_file is None:
        raise FlowConfigError(f"failback {options.action} needs --state FILE")
    reverse_name = options.reverse_connector or f"failback-{flow.target}-to-{flow.source}"
    return (
        ConnectApi(options.url, options.rest_access, options.timeout_s),
        ConnectApi(options.reverse_url, options.rest_access, options.timeout_s),
        reverse_name,
    )


async def _plan(options: FailbackOptions, flow: FailoverFlow, failover: FailoverState) -> dict[str, Any]:
    committed: dict[tuple[str, int], int] = {}
    forward_name, forward_config = None, {}
    if options.url is not None:
        api = ConnectApi(options.url, options.rest_access, options.timeout_s)
        forward_name = await forward_connector(api, flow, options.source_connector)
        committed = source_offsets(await api.offsets(forward_name), flow.source)
        forward_config = await api.config(forward_name)
    ledger = await read_ledger(flow, committed, options.timeout_s, keep_records=False)
    ends = [p.end for p in ledger.partitions]
    reverse = await read_reverse_plan(
        flow, reverse_source_config(forward_config), ends, failover.own_ends, options.timeout_s
    )
    state = FailbackState(flow.state_key)
    state.measured(
        ends,
        [p.orphans for p in ledger.partitions],
        {
            **reverse.copy_ends,
            **{(p.end.topic, p.end.partition): p.source_bounds[1] for p in ledger.partitions},
        },
        reverse.starts,
    )
    returns = await read_returns(
        flow, state, sorted(failover.groups), options.timeout_s, allow_rewind=options.allow_rewind
    )
    document = report_json(
        "plan", flow, state, ledger=ledger, returns=returns, forward_connector=forward_name
    )
    document["copied_after_failover"] = copied_after(
        flow, [p.end for p in ledger.partitions], failover.target_ends
    )
    return document


async def run(options: FailbackOptions, stdout: TextIO) -> int:
    """Plan, execute or show the failback as the options say, print the report; errors raise."""
    flow = load_flow(
        FailoverOptions(
            "plan",
            url=options.url,
            connector=options.connector,
            connector_config=options.connector_config,
            mm2_config=options.mm2_config,
            flow=options.flow,
            worker_config=options.worker_config,
            timeout_s=options.timeout_s,
            rest_access=options.rest_access,
        )
    )
    failover = recorded_failover(options.failover_state, flow)
    groups = sorted(failover.groups)
    if options.action == "plan":
        document = await _plan(options, flow, failover)
    else:
        forward, reverse, reverse_name = _fleets(options, flow)
        assert options.state_file is not None
        path = Path(options.state_file)
        state = FailbackState.load(path, flow.state_key)
        forward_name = await forward_connector(forward, flow, options.source_connector)
        if options.action == "status":
            document = await _status(flow, state, reverse, reverse_name)
        else:
            failback = FailbackRun(
                flow,
                state,
                forward,
                forward_name,
                reverse,
                reverse_name,
                groups,
                options.timeout_s,
                failover_ends=failover.target_ends,
                own_ends=failover.own_ends,
                adopt=options.reverse_connector is not None,
                quarantine_template=options.quarantine,
                accept_unverified=options.accept_unverified,
                allow_rewind=options.allow_rewind,
                quiet_s=options.quiet_s,
                catch_up_timeout_s=options.catch_up_timeout_s,
                save=lambda s: s.save(path),
                auditor=options.auditor,
                audit_out=options.audit_out or f"{path}.audit",
            )
            await failback.run()
            document = report_json(
                "execute",
                flow,
                state,
                ledger=failback.ledger,
                returns=failback.returns,
                forward_connector=forward_name,
                reverse_connector=reverse_name,
                timings=failback.timings,
            )
    if options.as_json:
        stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        print(report_text(document), file=stdout)
    stdout.flush()
    return 0


async def _status(flow: FailoverFlow, state: FailbackState, reverse: ConnectApi, name: str) -> dict[str, Any]:
    document = report_json("status", flow, state, reverse_connector=name)
    if await reverse.exists(name):
        document["reverse_state"] = (await reverse.states(name))[0]
        copied = source_offsets(await reverse.offsets(name), flow.target)
        document["reverse_copied"] = {f"{t}:{p}": o for (t, p), o in sorted(copied.items())}
    return document


def run_failback(options: FailbackOptions, loop: str, stdout: TextIO, stderr: TextIO) -> int:
    """:func:`run` on the event loop ``loop``; every error becomes one line on ``stderr`` and its exit code."""
    return run_operator_command(run(options, stdout), loop, stderr)
