"""The ``pyconnect offsets translate`` and ``pyconnect failover plan|execute`` command lines.

Parsers (:func:`add_offsets_parser`, :func:`add_failover_parser`) and runners (:func:`run_offsets`,
:func:`run_failover`) for :mod:`pyconnect.cli`. Both commands read the flow the same ways: a worker's REST
URL, the checkpoint connector's JSON file, or ``mm2.properties`` with a flow name
(:mod:`connectors.mirror.offsets.failover_flow`); ``offsets translate`` also takes bare bootstrap
servers. With ``--url``, a secured worker (HTTPS, client certificate, basic auth) is reached with the
``--rest-*`` options of :mod:`pyconnect.rest_client`; they are an error without ``--url``. Exit codes and
one-line errors: see each command's description (bad ``--rest-*`` input is bad input).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from typing import Any

from pyconnect import event_loop
from pyconnect.errors import ConnectError
from pyconnect.rest_client import RestAccess, RestClientError, add_rest_access_arguments

_REST_OPTIONS = {
    "rest_cacert": "--rest-cacert",
    "rest_cert": "--rest-cert",
    "rest_key": "--rest-key",
    "rest_key_password_file": "--rest-key-password-file",
    "rest_user": "--rest-user",
    "rest_password_file": "--rest-password-file",
    "rest_password": "--rest-password",
}


def add_flow_options(parser: argparse.ArgumentParser, *, with_bootstrap: bool) -> None:
    """Where the flow is read from: exactly one of a worker's REST URL, a connector JSON file, mm2.properties
    (and, for ``offsets translate``, bare bootstrap servers)."""
    flow = parser.add_mutually_exclusive_group(required=True)
    flow.add_argument(
        "--url",
        help="REST URL of a worker running the flow's MirrorCheckpointConnector, e.g. http://127.0.0.1:8083",
    )
    flow.add_argument(
        "--connector-config",
        metavar="FILE.json",
        help="the MirrorCheckpointConnector's JSON ({name, config} or the bare config)",
    )
    flow.add_argument("--config", metavar="MM2_PROPERTIES", help="mm2.properties of dedicated mode")
    if with_bootstrap:
        flow.add_argument(
            "--bootstrap",
            action="append",
            metavar="ALIAS=HOST:PORT",
            help="bootstrap servers of a cluster (default replication policy, no security settings; repeat "
            "for FROM and TO; FROM may be left out when it is down)",
        )
    parser.add_argument(
        "--connector", metavar="NAME", help="with --url: the checkpoint connector (default: the only one)"
    )
    parser.add_argument("--flow", metavar="SOURCE->TARGET", help="with --config: the flow, e.g. A->B")
    parser.add_argument(
        "--worker-config",
        metavar="WORKER_PROPERTIES",
        help="with --url or --connector-config: the worker's properties, whose config.providers resolve "
        "${provider:...} variables in the connector config",
    )
    add_rest_access_arguments(parser)


def add_command_options(step: argparse.ArgumentParser) -> None:
    """The options every operator command has: ``--json``, ``--timeout``, ``--log-level`` and the event loop."""
    step.add_argument("--json", action="store_true", help="print the report as JSON, nothing else")
    step.add_argument(
        "--timeout", type=float, default=30.0, help="seconds allowed for each cluster call (default 30)"
    )
    step.add_argument("--log-level", default="WARNING", help="root log level (default WARNING)")
    event_loop.add_event_loop_option(step)


def add_audit_options(step: argparse.ArgumentParser, command: str) -> None:
    """``--no-audit`` and ``--audit-out DIR``: the Spark audit that closes ``command``."""
    step.add_argument(
        "--no-audit",
        action="store_true",
        help=f"end the {command} without its closing Spark audit (the report says it was not audited)",
    )
    step.add_argument(
        "--audit-out",
        metavar="DIR",
        help="where the closing audit writes audit.json and audit.html (default: the state file's name + .audit)",
    )


def spark_auditor(request: Any) -> Any:
    """The closing audit of failback and cutover (``spark_analytics.move_audit``), imported when it runs: a
    one-line error names the missing part when PySpark is not installed."""
    try:
        from spark_analytics.move_audit import audit_move
    except ImportError as exc:
        raise RuntimeError(
            f"{exc}: install the spark extra (pip install 'pyconnect[spark]') or give --no-audit"
        ) from None
    return audit_move(request)


def rest_access(args: argparse.Namespace) -> RestAccess | None:
    """The access to the worker of ``--url`` (``None`` without ``--url``); a one-line
    :class:`FlowConfigError` for bad ``--rest-*`` input or ``--rest-*`` options without ``--url``."""
    from connectors.mirror.offsets.failover_flow import FlowConfigError

    if args.url is None:
        given = [option for dest, option in _REST_OPTIONS.items() if getattr(args, dest, None) is not None]
        if given:
            raise FlowConfigError(
                f"{', '.join(given)} without --url: the --rest-* options reach the worker of --url"
            )
        return None
    try:
        return RestAccess.from_args(args)
    except RestClientError as exc:
        raise FlowConfigError(str(exc)) from None


def add_offsets_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``pyconnect offsets translate`` (connectors.mirror.offsets.failover)."""
    offsets = sub.add_parser(
        "offsets",
        help="consumer-group offsets across mirrored clusters (failover)",
        description="Consumer-group offsets across clusters mirrored by MirrorMaker 2.",
    )
    actions = offsets.add_subparsers(dest="offsets_command", metavar="ACTION", required=True)
    translate = actions.add_parser(
        "translate",
        help="plan (and with --execute commit) a group's checkpointed offsets on the cluster you fail over to",
        description="Translate the committed offsets of GROUP on cluster FROM to cluster TO from the "
        "checkpoints on TO (what Java's RemoteClusterUtils.translateOffsets answers), print the plan with the "
        "expected re-read per partition, and with --execute commit it to GROUP on TO (only when the group has "
        "no members there). `pyconnect failover` commits positions the offset syncs and the target's records "
        "prove exact. Exit codes: 0 done, 1 error, 2 usage, 3 refused (the group is active on TO).",
    )
    translate.add_argument("--group", required=True, help="consumer group id (the same on both clusters)")
    translate.add_argument(
        "--from", dest="source", metavar="ALIAS", help="source cluster (--config, --bootstrap)"
    )
    translate.add_argument(
        "--to", dest="target", metavar="ALIAS", help="target cluster (--config, --bootstrap)"
    )
    add_flow_options(translate, with_bootstrap=True)
    translate.add_argument("--execute", action="store_true", help="commit the translated offsets on TO")
    translate.add_argument(
        "--allow-rewind",
        action="store_true",
        help="with --execute, also move offsets the group already has on TO backwards",
    )
    translate.add_argument(
        "--export", choices=("json", "csv"), help="print the plan as machine-readable rows, nothing else"
    )
    translate.add_argument(
        "--offset-syncs-location",
        choices=("source", "target"),
        help="where the offset-syncs topic lives (default: the flow's offset-syncs.topic.location, or source)",
    )
    translate.add_argument(
        "--timeout", type=float, default=30.0, help="seconds allowed for each cluster call (default 30)"
    )
    translate.add_argument("--log-level", default="WARNING", help="root log level (default WARNING)")
    event_loop.add_event_loop_option(translate)


def add_failover_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``pyconnect failover plan|execute`` (connectors.mirror.offsets.failover_command)."""
    failover = sub.add_parser(
        "failover",
        help="move consumer groups to the target of a MirrorMaker 2 flow (plan, execute)",
        description="Plan or execute the failover of consumer groups along a MirrorMaker 2 flow, read from a "
        "worker's REST API (--url), the checkpoint connector's JSON (--connector-config) or mm2.properties "
        "(--config, --flow); a worker with an HTTPS listener or basic auth is read with the --rest-* options. "
        "The plan lists per group and partition the source offset, the checkpoint, the "
        "target offset and what a consumer re-reads or skips; execute commits it (never to a group with "
        "members on the target), reads it back, and with --state resumes an interrupted run. Exit codes: "
        "0 done, 1 error, 2 bad input, 3 refused (a group is active on the target), 5 unknown group, "
        "6 the flow has no checkpoints yet.",
    )
    steps = failover.add_subparsers(dest="failover_command", metavar="ACTION", required=True)
    for name, text in (
        ("plan", "print the plan; change nothing"),
        ("execute", "commit the plan on the target cluster, group by group"),
    ):
        step = steps.add_parser(name, help=text, description=failover.description)
        step.add_argument(
            "--group",
            dest="groups",
            action="append",
            default=[],
            metavar="GROUP",
            help="a group (repeatable)",
        )
        step.add_argument(
            "--all-groups", action="store_true", help="every group with checkpoints in the flow"
        )
        add_flow_options(step, with_bootstrap=False)
        add_command_options(step)
        if name == "execute":
            step.add_argument(
                "--state",
                metavar="FILE",
                help="progress file: written as groups move, and an existing one is resumed",
            )
            step.add_argument(
                "--allow-rewind",
                action="store_true",
                help="also move offsets a group already has on the target backwards",
            )


def quiet_clients(log_level: str) -> None:
    if log_level.upper() != "DEBUG":
        logging.getLogger("aiokafka").setLevel(logging.CRITICAL)


def _translate_request(args: argparse.Namespace) -> object:
    from connectors.mirror.offsets import failover
    from connectors.mirror.offsets.failover_command import FailoverOptions, load_flow

    if (args.config is not None and args.flow is None) or args.bootstrap is not None:
        if args.source is None or args.target is None:
            raise failover.FailoverError("--config and --bootstrap need --from ALIAS and --to ALIAS")
        if args.source == args.target:
            raise failover.FailoverError(f"--from and --to name the same cluster {args.source}")
    access = rest_access(args)
    if args.bootstrap is not None:
        return failover.request_from_bootstrap(
            args.bootstrap, args.group, args.source, args.target, args.timeout, args.offset_syncs_location
        )
    if args.config is not None and args.flow is None:
        return failover.request_from_mm2(
            args.config, args.group, args.source, args.target, args.timeout, args.offset_syncs_location
        )
    options = FailoverOptions(
        "plan",
        url=args.url,
        rest_access=access,
        connector=args.connector,
        connector_config=args.connector_config,
        mm2_config=args.config,
        flow=args.flow,
        worker_config=args.worker_config,
        timeout_s=args.timeout,
    )
    return failover.request_from_flow(
        load_flow(options), args.group, args.timeout, args.offset_syncs_location
    )


def run_offsets(args: argparse.Namespace, loop: str) -> int:
    from connectors.mirror.offsets import failover
    from connectors.mirror.offsets.failover_flow import FlowConfigError

    quiet_clients(args.log_level)
    try:
        request = _translate_request(args)
        assert isinstance(request, failover.TranslateRequest)
        return event_loop.run(
            failover.run_translate(
                request,
                execute=args.execute,
                allow_rewind=args.allow_rewind,
                export=args.export,
                stdout=sys.stdout,
                stderr=sys.stderr,
            ),
            loop,
        )
    except failover.FailoverRefused as exc:
        print(f"pyconnect: {exc}".splitlines()[0], file=sys.stderr)
        return failover.EXIT_REFUSED
    except (failover.FailoverError, FlowConfigError, ConnectError, ValueError, OSError) as exc:
        print(f"pyconnect: {exc}".splitlines()[0], file=sys.stderr)
        return failover.EXIT_ERROR


def with_rest_access(args: argparse.Namespace, command: Callable[[RestAccess | None], int]) -> int:
    """An operator command (failover, failback, cutover): the clients' logs quieted, the ``--rest-*``
    access read (bad input: one line, exit code 2), then ``command(access)``."""
    from connectors.mirror.offsets.failover_calls import EXIT_USAGE
    from connectors.mirror.offsets.failover_flow import FlowConfigError

    quiet_clients(args.log_level)
    try:
        access = rest_access(args)
    except FlowConfigError as exc:
        print(f"pyconnect: {exc}".splitlines()[0], file=sys.stderr)
        return EXIT_USAGE
    return command(access)


def run_failover(args: argparse.Namespace, loop: str) -> int:
    return with_rest_access(args, lambda access: _run_failover(args, loop, access))


def _run_failover(args: argparse.Namespace, loop: str, access: RestAccess | None) -> int:
    from connectors.mirror.offsets.failover_command import FailoverOptions
    from connectors.mirror.offsets.failover_command import run_failover as run

    options = FailoverOptions(
        args.failover_command,
        rest_access=access,
        groups=tuple(args.groups),
        all_groups=args.all_groups,
        url=args.url,
        connector=args.connector,
        connector_config=args.connector_config,
        mm2_config=args.config,
        flow=args.flow,
        worker_config=args.worker_config,
        as_json=args.json,
        timeout_s=args.timeout,
        state_file=getattr(args, "state", None),
        allow_rewind=getattr(args, "allow_rewind", False),
    )
    return run(options, loop, sys.stdout, sys.stderr)
