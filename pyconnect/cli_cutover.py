"""The ``pyconnect cutover plan|execute|resume`` command line (connectors.mirror.cutover.command).

The forward fleet is reached with ``--url`` (and the ``--rest-*`` options of :mod:`pyconnect.cli_offsets`);
exit codes and one-line errors are :mod:`connectors.mirror.cutover.command`'s.
"""

from __future__ import annotations

import argparse
import sys

from pyconnect.cli_offsets import add_audit_options, add_command_options, spark_auditor, with_rest_access
from pyconnect.rest_client import RestAccess, add_rest_access_arguments

DESCRIPTION = (
    "Move the applications of a MirrorMaker 2 flow A->B from A to B while both run: check the lag, fence "
    "the producers on A (DENY WRITE ACLs for --fence-principal, or verify A stays still once the operator "
    "stopped them), drain the mirror, move each group exactly, verify, and retire the forward connector. "
    "Each step is recorded in --state; resume continues after any interruption. Exit codes: 0 done, 1 "
    "error, 2 bad input, 3 refused (lag over --max-lag, a group still active; nothing changed), 9 the "
    "mirror did not drain in time, 11 A kept taking writes (the fence is lifted in both), 12 the final "
    "checks failed, 13 the closing Spark audit found a record missing, altered or out of order, or a group that "
    "would re-read or skip (resume audits again)."
)


def add_cutover_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``pyconnect cutover plan|execute|resume``."""
    cutover = sub.add_parser(
        "cutover",
        help="move applications from A to B while both run (plan, execute, resume)",
        description=DESCRIPTION,
    )
    actions = cutover.add_subparsers(dest="cutover_command", metavar="ACTION", required=True)
    for name, text in (
        ("plan", "print the lag, the fence and each group's move; change nothing"),
        ("execute", "run the cutover's steps, recorded in --state"),
        ("resume", "continue the cutover of --state after an interruption"),
    ):
        step = actions.add_parser(name, help=text, description=DESCRIPTION)
        step.add_argument("--url", required=True, help="REST URL of a worker of the forward fleet (A->B)")
        step.add_argument(
            "--connector", metavar="NAME", help="the flow's checkpoint connector (default: the only one)"
        )
        step.add_argument(
            "--source-connector",
            metavar="NAME",
            help="the forward MirrorSourceConnector (default: the only one of the flow)",
        )
        step.add_argument(
            "--worker-config",
            metavar="WORKER_PROPERTIES",
            help="the worker's properties, to resolve ${provider:...} variables",
        )
        step.add_argument(
            "--group",
            dest="groups",
            action="append",
            default=[],
            metavar="GROUP",
            help="a group to move (repeatable)",
        )
        step.add_argument(
            "--all-groups", action="store_true", help="every group with checkpoints in the flow"
        )
        step.add_argument("--state", metavar="FILE", help="the cutover's progress file")
        step.add_argument(
            "--fence-principal",
            dest="principals",
            action="append",
            default=[],
            metavar="PRINCIPAL",
            help="deny this principal WRITE on A's mirrored topics during the cutover (repeatable; A needs an authorizer)",
        )
        step.add_argument(
            "--max-lag",
            type=int,
            default=100_000,
            help="refuse above this many records of lag (default 100000)",
        )
        step.add_argument(
            "--quiet", type=float, default=5.0, help="seconds A must take no write once fenced (default 5)"
        )
        step.add_argument(
            "--fence-timeout",
            type=float,
            default=300.0,
            help="seconds to wait for A to be still (default 300)",
        )
        step.add_argument(
            "--drain-timeout",
            type=float,
            default=300.0,
            help="seconds to wait for the mirror to drain (default 300)",
        )
        if name == "execute":
            step.add_argument(
                "--dry-run", action="store_true", help="print what execute would do; change nothing"
            )
        if name != "plan":
            add_audit_options(step, "cutover")
        add_rest_access_arguments(step)
        add_command_options(step)


def run_cutover(args: argparse.Namespace, loop: str) -> int:
    return with_rest_access(args, lambda access: _run_cutover(args, loop, access))


def _run_cutover(args: argparse.Namespace, loop: str, access: RestAccess | None) -> int:
    from connectors.mirror.cutover.command import CutoverOptions
    from connectors.mirror.cutover.command import run_cutover as run

    options = CutoverOptions(
        args.cutover_command,
        url=args.url,
        connector=args.connector,
        worker_config=args.worker_config,
        source_connector=args.source_connector,
        groups=tuple(args.groups),
        all_groups=args.all_groups,
        state_file=args.state,
        principals=tuple(args.principals),
        max_lag=args.max_lag,
        quiet_s=args.quiet,
        fence_timeout_s=args.fence_timeout,
        drain_timeout_s=args.drain_timeout,
        timeout_s=args.timeout,
        dry_run=getattr(args, "dry_run", False),
        as_json=args.json,
        rest_access=access,
        auditor=None if getattr(args, "no_audit", True) else spark_auditor,
        audit_out=getattr(args, "audit_out", None),
        announce=lambda line: print(line, file=sys.stderr, flush=True),
    )
    return run(options, loop, sys.stdout, sys.stderr)
