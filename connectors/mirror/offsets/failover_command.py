"""``pyconnect failover plan|execute``: move consumer groups along a flow, from what the operator has.

The flow comes from a worker's REST API (``--url`` [``--connector``]), a connector JSON file
(``--connector-config``) or ``mm2.properties`` (``--config`` with ``--flow A->B``), see
:mod:`connectors.mirror.offsets.failover_flow`; ``--worker-config`` resolves config-provider variables as
the worker does. Share groups (KIP-932) move along with the consumer groups (:mod:`connectors.mirror.offsets.failover_share`).
``plan`` reads and prints (:mod:`connectors.mirror.offsets.failover_report`), never
writes; ``execute`` plans, then runs :func:`connectors.mirror.offsets.failover_execute.execute` (with
``--state FILE``: resumable). ``--json`` prints the report document and nothing else on stdout.

Exit codes: 0 done; 1 error (a cluster unreachable, a commit failed); 2 bad input (arguments, an
unreadable or unusable config, a state file of another flow); 3 refused (a group has members on the
target; nothing committed); 5 unknown group (no checkpoint of it); 6 the flow has no checkpoints yet.
Every error is one line on stderr.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from connectors.mirror.failback.reverse_flow import own_topics
from connectors.mirror.offsets.failover_calls import (
    EXIT_ERROR,
    EXIT_USAGE,
    FailoverError,
    UnknownGroup,
    cluster_bounds,
    cluster_topics,
)
from connectors.mirror.offsets.failover_execute import GroupOutcome, execute
from connectors.mirror.offsets.failover_flow import (
    FailoverFlow,
    FlowConfigError,
    fetch_connector_config,
    flow_from_connector_config,
    flow_from_mm2,
    load_connector_file,
)
from connectors.mirror.offsets.failover_plan import FlowPlan, GroupPlan, plan_group, queries, stretches
from connectors.mirror.offsets.failover_reads import FlowReads, read_flow, read_stretches
from connectors.mirror.offsets.failover_report import report_json, report_text
from connectors.mirror.offsets.failover_share import plan_share_group
from connectors.mirror.offsets.failover_state import FailoverState, StateError, partition_key
from connectors.mirror.policy import SOURCE_CLUSTER_ALIAS_CONFIG, replication_policy
from pyconnect.config import properties
from pyconnect.errors import ConnectError
from pyconnect.kafka.group_view import DEAD, GroupView
from pyconnect.rest_client import RestAccess

__all__ = ["FailoverOptions", "build_plan", "load_flow", "run", "run_failover", "run_operator_command"]


@dataclass(frozen=True)
class FailoverOptions:
    """The command line of ``pyconnect failover`` (one flow source among url, connector_config, mm2_config;
    ``rest_access`` reaches a secured worker at ``url``)."""

    action: Literal["plan", "execute"]
    groups: tuple[str, ...] = ()
    all_groups: bool = False
    url: str | None = None
    connector: str | None = None
    connector_config: str | None = None
    mm2_config: str | None = None
    flow: str | None = None
    worker_config: str | None = None
    as_json: bool = False
    timeout_s: float = 30.0
    state_file: str | None = None
    allow_rewind: bool = False
    rest_access: RestAccess | None = None


def _worker_properties(path: str | None) -> Mapping[str, str] | None:
    if path is None:
        return None
    try:
        return properties.load(path)
    except OSError as exc:
        raise FlowConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ConnectError as exc:
        raise FlowConfigError(f"{path}: {str(exc).splitlines()[0]}") from None


def load_flow(options: FailoverOptions) -> FailoverFlow:
    """The flow named by the options (exactly one source; :class:`FlowConfigError` otherwise)."""
    given = [o for o in (options.url, options.connector_config, options.mm2_config) if o is not None]
    if len(given) != 1:
        raise FlowConfigError("give the flow with one of --url, --connector-config or --config (with --flow)")
    if options.mm2_config is not None:
        if options.flow is None:
            raise FlowConfigError("--config needs --flow SOURCE->TARGET")
        return flow_from_mm2(options.mm2_config, options.flow)
    worker = _worker_properties(options.worker_config)
    if options.url is not None:
        name, config = fetch_connector_config(
            options.url, options.connector, options.timeout_s, options.rest_access
        )
        origin = f"connector {name} at {options.url.rstrip('/')}"
    else:
        assert options.connector_config is not None
        name, config = load_connector_file(options.connector_config)
        origin = f"connector {name} in {options.connector_config}"
    return flow_from_connector_config(config, origin=origin, worker_config=worker)


async def build_plan(
    flow: FailoverFlow, groups: tuple[str, ...], *, all_groups: bool, timeout_s: float, allow_rewind: bool
) -> FlowPlan:
    """Read both clusters and plan every group (see :mod:`connectors.mirror.offsets.failover_plan`)."""
    reads = await read_flow(flow, groups, timeout_s, all_groups=all_groups)
    notes = list(reads.notes)
    found = {
        g: queries(
            flow,
            reads.checkpoints[g],
            None if reads.source_offsets is None else reads.source_offsets.get(g, {}),
        )
        for g in reads.groups
    }
    needed = {}
    for group_queries, _ in found.values():
        needed.update(stretches(flow, group_queries, reads.store, reads.syncs))
    records = await read_stretches(flow, [s for _, s in needed.values()], timeout_s, notes)
    proofs = {key: (segment, records.get(stretch)) for key, (segment, stretch) in needed.items()}
    plans = []
    for group in reads.groups:
        view = reads.views[group]
        group_queries, missing = found[group]
        plans.append(
            plan_group(
                flow,
                group,
                (view.state, view.protocol, view.holders),
                group_queries,
                missing,
                reads.target_offsets[group],
                reads.store,
                proofs,
                allow_rewind=allow_rewind,
            )
        )
    plans += _share_plans(flow, reads, all_groups=all_groups, allow_rewind=allow_rewind)
    return FlowPlan(
        flow, reads.source_offsets is not None, reads.store is not None, tuple(plans), tuple(notes)
    )


def _share_plans(
    flow: FailoverFlow, reads: FlowReads, *, all_groups: bool, allow_rewind: bool
) -> list[GroupPlan]:
    """The share groups' plans; with ``all_groups`` those that have nothing along this flow are left out."""
    share, plans = reads.share, []
    for group in share.groups:
        view = share.views.get(group) or GroupView(group, "unknown", DEAD)
        source = None if share.source_starts is None else share.source_starts.get(group, {})
        try:
            planned = plan_share_group(
                flow,
                group,
                view,
                source,
                share.target_starts.get(group, {}),
                reads.store,
                allow_rewind=allow_rewind,
            )
        except UnknownGroup:
            if all_groups:
                continue
            raise
        if planned.partitions or not all_groups:
            plans.append(planned)
    return plans


async def _target_ends(flow: FailoverFlow, plan: FlowPlan, timeout_s: float) -> dict[str, int]:
    """The target's last stable offsets of the plan's partitions (see ``FailoverState.target_ends``)."""
    partitions = sorted({tp for g in plan.groups for tp in g.targets})
    bounds = await cluster_bounds(flow.target_config, flow.target, partitions, timeout_s)
    return {partition_key(t, p): end for (t, p), (_, end) in bounds.items()}


async def _own_ends(flow: FailoverFlow, timeout_s: float) -> dict[str, int]:
    """The target's last stable offsets of its own topics' partitions (see ``FailoverState.own_ends``)."""
    back = replication_policy({**flow.policy_config, SOURCE_CLUSTER_ALIAS_CONFIG: flow.target})
    topics = await cluster_topics(flow.target_config, flow.target, timeout_s)
    partitions = [(t, p) for t in own_topics(back, flow.source, topics) for p in topics[t]]
    bounds = await cluster_bounds(flow.target_config, flow.target, partitions, timeout_s)
    return {partition_key(t, p): end for (t, p), (_, end) in bounds.items()}


def _saver(path: Path | None) -> Callable[[FailoverState], None] | None:
    if path is None:
        return None

    def save(state: FailoverState) -> None:
        state.save(path)

    return save


async def run(options: FailoverOptions, stdout: TextIO, stderr: TextIO) -> int:
    """Plan (and execute) as the options say, print the report; errors raise (see :func:`run_failover`)."""
    if not options.groups and not options.all_groups:
        raise FlowConfigError("name the groups with --group (repeatable) or --all-groups")
    flow = load_flow(options)
    state_path = Path(options.state_file) if options.state_file else None
    state = FailoverState.load(state_path, flow.state_key) if state_path else FailoverState(flow.state_key)
    plan = await build_plan(
        flow,
        options.groups,
        all_groups=options.all_groups,
        timeout_s=options.timeout_s,
        allow_rewind=options.allow_rewind,
    )
    outcomes: list[GroupOutcome] = []
    if options.action == "execute":
        if not state.target_ends:
            state.target_ends = await _target_ends(flow, plan, options.timeout_s)
            state.own_ends = await _own_ends(flow, options.timeout_s)
        outcomes = await execute(flow, plan, state, options.timeout_s, _saver(state_path))
    if options.as_json:
        document = report_json(options.action, plan, outcomes, str(state_path) if state_path else None)
        stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        print(report_text(plan, outcomes), file=stdout)
    stdout.flush()
    return 0


def run_failover(options: FailoverOptions, loop: str, stdout: TextIO, stderr: TextIO) -> int:
    """:func:`run` on the event loop ``loop``; every error becomes one line on ``stderr`` and its exit code."""
    return run_operator_command(run(options, stdout, stderr), loop, stderr)


def run_operator_command(main: Coroutine[Any, Any, int], loop: str, stderr: TextIO) -> int:
    """Run ``main`` (an operator command: failover, failback, cutover) on the event loop ``loop``; every
    error becomes one line ``pyconnect: <message>`` on ``stderr`` and its exit code: bad input
    (:class:`FlowConfigError`, :class:`StateError`) 2, a :class:`FailoverError` its own, any other
    error 1."""
    from pyconnect import event_loop

    try:
        return event_loop.run(main, loop)
    except (FlowConfigError, StateError) as exc:
        code, message = EXIT_USAGE, str(exc)
    except FailoverError as exc:
        code, message = exc.exit_code, str(exc)
    except (ConnectError, ValueError, OSError) as exc:
        code, message = EXIT_ERROR, str(exc) or type(exc).__name__
    print(f"pyconnect: {message}".splitlines()[0], file=stderr)
    return code
