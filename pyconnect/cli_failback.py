"""The ``pyconnect failback plan|execute|status`` command line (connectors.mirror.failback.command).

The forward flow is read as ``pyconnect failover`` reads it (the ``--url``/``--connector-config``/
``--config`` options and ``--rest-*`` of :mod:`pyconnect.cli_offsets`); exit codes and one-line errors
are :mod:`connectors.mirror.failback.command`'s.
"""

from __future__ import annotations

import argparse
import sys

from pyconnect.cli_offsets import (
    add_audit_options,
    add_command_options,
    add_flow_options,
    spark_auditor,
    with_rest_access,
)
from pyconnect.rest_client import RestAccess

DESCRIPTION = (
    "Return the applications to the original cluster A after a failover of the MirrorMaker 2 flow A->B: "
    "find what A holds that B never got (the orphans, optionally copied to a quarantine topic), copy what "
    "the applications wrote on B back to A with a reverse flow on a second Connect fleet (--reverse-url), "
    "move each group on A to where it stopped on B, and restart the forward flow from A's end. plan "
    "changes nothing; execute runs the steps, resumable from --state; status shows where it stands. Exit "
    "codes: 0 done, 1 error, 2 bad input, 3 refused (a group active on B or A, a rewind), 7 no failover "
    "recorded, 8 unverified (give --accept-unverified), 9 the reverse flow has not caught up yet (run "
    "execute again), 10 the forward flow copied from A after the failover (stop it before A returns), 13 "
    "the closing Spark audit found records A holds beyond the orphans, records of B not copied back or a group "
    "that would re-read or skip (execute audits again)."
)


def add_failback_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``pyconnect failback plan|execute|status``."""
    failback = sub.add_parser(
        "failback",
        help="return to the original cluster after a failover (plan, execute, status)",
        description=DESCRIPTION,
    )
    actions = failback.add_subparsers(dest="failback_command", metavar="ACTION", required=True)
    for name, text in (
        ("plan", "print the orphans and where each group returns; change nothing"),
        ("execute", "run the failback's steps (resumable with --state)"),
        ("status", "print the steps done and the reverse flow's state"),
    ):
        step = actions.add_parser(name, help=text, description=DESCRIPTION)
        add_flow_options(step, with_bootstrap=False)
        step.add_argument(
            "--failover-state", metavar="FILE", help="the state file of the failover being undone (required)"
        )
        step.add_argument(
            "--source-connector",
            metavar="NAME",
            help="the forward MirrorSourceConnector (default: the only one of the flow)",
        )
        step.add_argument(
            "--reverse-url", metavar="URL", help="REST URL of a worker of the fleet that writes to A"
        )
        step.add_argument(
            "--reverse-connector",
            metavar="NAME",
            help=(
                "the reverse connector's name (default failback-B-to-A); naming one that already runs B->A "
                "(active/active) makes the failback use it: never created, re-pointed or left stopped"
            ),
        )
        step.add_argument("--state", metavar="FILE", help="the failback's progress file (execute, status)")
        step.add_argument("--allow-rewind", action="store_true", help="also move a group back on A")
        step.add_argument(
            "--accept-unverified",
            action="store_true",
            help="go on where no offset sync proves a copy's end or a group's position",
        )
        add_command_options(step)
        if name == "execute":
            add_audit_options(step, "failback")
            step.add_argument(
                "--quarantine",
                nargs="?",
                const="{topic}.orphans",
                metavar="TEMPLATE",
                help="copy the orphans to this topic on A ({topic} is the source topic; default {topic}.orphans)",
            )
            step.add_argument(
                "--quiet",
                type=float,
                default=5.0,
                help="seconds B must take no write before the groups return (default 5)",
            )
            step.add_argument(
                "--catch-up-timeout",
                type=float,
                default=300.0,
                help="seconds to wait for the reverse flow (default 300)",
            )


def run_failback(args: argparse.Namespace, loop: str) -> int:
    return with_rest_access(args, lambda access: _run_failback(args, loop, access))


def _run_failback(args: argparse.Namespace, loop: str, access: RestAccess | None) -> int:
    from connectors.mirror.failback.command import FailbackOptions
    from connectors.mirror.failback.command import run_failback as run

    options = FailbackOptions(
        args.failback_command,
        failover_state=args.failover_state,
        url=args.url,
        connector=args.connector,
        connector_config=args.connector_config,
        mm2_config=args.config,
        flow=args.flow,
        worker_config=args.worker_config,
        source_connector=args.source_connector,
        reverse_url=args.reverse_url,
        reverse_connector=args.reverse_connector,
        state_file=args.state,
        quarantine=getattr(args, "quarantine", None),
        accept_unverified=args.accept_unverified,
        allow_rewind=args.allow_rewind,
        quiet_s=getattr(args, "quiet", 5.0),
        catch_up_timeout_s=getattr(args, "catch_up_timeout", 300.0),
        timeout_s=args.timeout,
        as_json=args.json,
        rest_access=access,
        auditor=None if getattr(args, "no_audit", True) else spark_auditor,
        audit_out=getattr(args, "audit_out", None),
    )
    return run(options, loop, sys.stdout, sys.stderr)
