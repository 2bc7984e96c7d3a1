"""The ``pyconnect`` command line.

``pyconnect distributed worker.properties`` runs one distributed worker from the same file format
as ``connect-distributed.sh``; SIGTERM and Ctrl-C stop it gracefully (tasks commit their offsets,
the worker leaves the group) and it exits, as the JVM does, with 128 + the signal (143 after SIGTERM,
130 after Ctrl-C); ``mirror-maker`` does the same. An unreadable or invalid file is a one-line error naming the key, and
exit code 1.

``pyconnect standalone worker.properties [connector1.properties connector2.json ...]`` runs one
standalone worker (the ``connect-standalone.sh`` equivalent): configs and statuses in memory, source
offsets in ``offset.storage.file.filename``, the same REST API. Each connector file is, as Java 3.5+
reads it (tried in this order): a JSON object of string keys and values (the config itself), a JSON
``{"name": ..., "config": {...}[, "initial_state": ...]}`` (``CreateConnectorRequest``), or a Java
``.properties`` file. Files are read before the worker starts (an error there is a one-line message
and exit code 1); a connector the herder refuses stops the worker with exit code 3, as Java does.

``pyconnect mirror-maker mm2.properties [--clusters A [B ...]]`` runs MirrorMaker 2 in dedicated mode
(the ``connect-mirror-maker.sh`` equivalent, see pyconnect.mirror_maker): one herder per replication
flow whose target is listed (all when ``--clusters`` is left out). A file that cannot run (unreadable,
invalid, no flow) is a one-line error and exit code 1; a valid file that cannot start (a cluster out of
reach) a one-line error and exit code 3, as Java; SIGTERM and Ctrl-C stop every herder gracefully.

``pyconnect status --url URL [--json]`` prints the MirrorMaker 2 flows a worker reports at ``GET /mirrors``
(see pyconnect.mirror_status.client): exit code 0 all in sync, 4 one is not, 1 unreadable (one line). A
secured worker is read with ``--rest-cacert``, ``--rest-cert``/``--rest-key`` and ``--rest-user`` (password
from ``--rest-password-file`` or ``PYCONNECT_REST_PASSWORD``), see pyconnect.rest_client; so are the workers
of ``failover --url`` and ``offsets translate --url``.

``pyconnect audit replication|translation ...`` audits a MirrorMaker 2 flow with Spark (see
spark_analytics.audit_cli): pyspark is imported only when an audit runs. Exit code 1 when the audit
finds missing records or violations.

``pyconnect failover plan|execute (--url URL [--connector NAME] | --connector-config FILE.json | --config
mm2.properties --flow A->B) --group G ...`` plans and executes the failover of consumer groups along a flow
(see connectors.mirror.offsets.failover_command): exit codes 1 error, 2 bad input, 3 refused (a group has
members on the target), 5 unknown group, 6 no checkpoints yet; every error one line.

``pyconnect failback plan|execute|status --url FORWARD_URL --failover-state FILE [--reverse-url URL --state
FILE]`` returns the applications to the original cluster after a failover (see
connectors.mirror.failback.command): the orphans, the reverse flow, the groups back on A, the forward flow
restarted; exit codes 3 refused, 7 no failover recorded, 8 unverified, 9 not caught up yet, 10 the
forward flow copied from A after the failover.

``pyconnect cutover plan|execute|resume --url FORWARD_URL --group G ... --state FILE`` moves the
applications from A to B while both run (see connectors.mirror.cutover.command): lag check, fence,
drain, exact group moves, verification; exit codes 3 refused, 9 not drained, 11 fence not verified, 12
final checks failed.

``pyconnect offsets translate --group G --from A --to B (--config mm2.properties | --bootstrap ...)``, or
with the flow given as for ``failover``, prints the plan of group G from its checkpoints on B (Java's
``translateOffsets``), and with ``--execute`` commits it there (see connectors.mirror.offsets.failover).
Exit codes: 1 error (one line), 3 refused (G has members on B).

Every command but ``audit`` runs on uvloop unless ``--event-loop asyncio`` or
``PYCONNECT_EVENT_LOOP=asyncio`` asks for asyncio's own loop (see pyconnect.event_loop); another name
is a one-line error and exit code 2.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import os
import signal
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from pyconnect import COMPATIBLE_KAFKA_VERSION, __version__, event_loop
from pyconnect.errors import ConfigError, ConnectError
from pyconnect.log_guard import configure_logging

if TYPE_CHECKING:
    from pyconnect.protocol.internal_records import TargetState

EXIT_USAGE = 2


LOG_FORMAT_VARIABLE = "PYCONNECT_LOG_FORMAT"


def add_log_format_option(parser: argparse.ArgumentParser) -> None:
    """``--log-format``: how log lines are written (pyconnect.log_context)."""
    parser.add_argument(
        "--log-format",
        metavar="{java,kv,json}",
        help=f"log line format (default: ${LOG_FORMAT_VARIABLE}, else java: Java's Connect pattern)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pyconnect",
        description="An asyncio Kafka Connect runtime compatible with Apache Kafka Connect, hosting MirrorMaker 2.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"pyconnect {__version__} (Kafka Connect {COMPATIBLE_KAFKA_VERSION} compatible)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    distributed = sub.add_parser(
        "distributed",
        help="run a distributed worker (the connect-distributed.sh equivalent)",
        description="Run one worker of a distributed Connect cluster from a worker.properties file.",
    )
    distributed.add_argument("worker_properties", help="worker config in Java .properties format")
    distributed.add_argument("--log-level", default="INFO", help="root log level (default INFO)")
    event_loop.add_event_loop_option(distributed)
    add_log_format_option(distributed)
    standalone = sub.add_parser(
        "standalone",
        help="run a standalone worker (the connect-standalone.sh equivalent)",
        description="Run a standalone worker from worker.properties, creating the given connectors.",
    )
    standalone.add_argument("worker_properties", help="worker config in Java .properties format")
    standalone.add_argument(
        "connector_configs", nargs="*", help="connector configs: .properties or JSON files"
    )
    standalone.add_argument("--log-level", default="INFO", help="root log level (default INFO)")
    event_loop.add_event_loop_option(standalone)
    add_log_format_option(standalone)
    mirror_maker = sub.add_parser(
        "mirror-maker",
        help="run MirrorMaker 2 in dedicated mode (the connect-mirror-maker.sh equivalent)",
        description="Run the MirrorMaker 2 herders of mm2.properties: one Connect group per replication "
        "flow, on the flow's target cluster.",
    )
    mirror_maker.add_argument("mm2_properties", metavar="mm2.properties", help="MM2 configuration file")
    mirror_maker.add_argument(
        "--clusters",
        nargs="+",
        metavar="CLUSTER",
        help="target cluster aliases this node serves (default: every cluster of the file)",
    )
    mirror_maker.add_argument("--log-level", default="INFO", help="root log level (default INFO)")
    event_loop.add_event_loop_option(mirror_maker)
    add_log_format_option(mirror_maker)
    from pyconnect.cli_cutover import add_cutover_parser
    from pyconnect.cli_failback import add_failback_parser
    from pyconnect.cli_offsets import add_failover_parser, add_offsets_parser
    from pyconnect.rest_client import add_rest_access_arguments

    add_offsets_parser(sub)
    add_failover_parser(sub)
    add_failback_parser(sub)
    add_cutover_parser(sub)
    status = sub.add_parser(
        "status",
        help="print the MirrorMaker 2 flows of a worker's cluster and whether they are in sync",
        description="Read GET /mirrors from a worker and print each flow: its status, topics, checkpoint "
        "latency and connectors. Exit code 0 when every flow is IN_SYNC, 4 when one is not, 1 when the "
        "worker cannot be read. A worker with an HTTPS listener or basic auth is read with the --rest-* "
        "options.",
    )
    status.add_argument(
        "--url", required=True, help="the worker's REST URL, e.g. http://127.0.0.1:8083 or https://host:8443"
    )
    status.add_argument("--json", action="store_true", help="print the JSON document instead of text")
    status.add_argument("--timeout", type=float, default=30.0, help="seconds allowed (default 30)")
    add_rest_access_arguments(status)
    from spark_analytics.audit_cli import add_audit_parser

    add_audit_parser(sub)
    return parser


GC_THRESHOLDS = (100_000, 50, 100)


def tune_garbage_collector() -> None:
    """After startup: move what exists to the permanent generation and collect the young one rarely.

    The data path allocates many short-lived objects per batch (records, headers); with Python's
    default threshold (700) the collector runs constantly and halves mirror throughput. Reference
    counting still frees almost everything at once; the cycle collector only has to run seldom.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


class SignalStop(asyncio.Event):
    """An event set by SIGTERM or SIGINT; ``exit_code`` is then ``128 + signal``, as the JVM exits (143
    after SIGTERM), else 0."""

    signum: int | None = None

    def received(self, signum: int) -> None:
        self.signum = signum
        self.set()

    @property
    def exit_code(self) -> int:
        return 0 if self.signum is None else 128 + self.signum


@contextlib.contextmanager
def stop_on_signals() -> Iterator[SignalStop]:
    """Inside a running event loop: an event that SIGTERM and SIGINT set while the block runs; the
    handlers are removed when it ends (after the block's own cleanup)."""
    stop = SignalStop()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.received, int(sig))
    try:
        yield stop
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(sig)


async def run_distributed(path: str) -> int:
    from pyconnect.config.properties import load
    from pyconnect.runtime import DistributedRuntime

    runtime = DistributedRuntime(load(path))
    with stop_on_signals() as stop:
        try:
            await runtime.start()
            tune_garbage_collector()
            logging.getLogger("pyconnect").info("Worker ready at %s", runtime.rest_url)
            await stop.wait()
            logging.getLogger("pyconnect").info("Stopping the worker")
        finally:
            await runtime.stop()
    return stop.exit_code


class ConnectorCreationError(ConnectError):
    """A connector from the command line could not be created (Java exits with 3)."""


class StartFailed(ConnectError):
    """A valid configuration could not be started, e.g. a cluster is unreachable (Java exits with 3)."""


def _config_value(path: str, key: str, value: object) -> str:
    """Jackson's binding of a JSON scalar to ``String``; anything else is an error naming the key."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise ConfigError(
        f"Connector configuration at '{path}' has an invalid value for '{key}': expected a string, "
        f"not {'null' if value is None else type(value).__name__}"
    )


def load_connector_file(path: str) -> tuple[str, dict[str, str], TargetState | None]:
    """``(name, config, initial target state or None)`` from a connector config file (Java's
    ``ConnectStandalone.parseConnectorConfigurationFile``)."""
    from pyconnect.config import properties
    from pyconnect.herder.entities import initial_target_state

    try:
        with open(path, "rb") as file:
            raw = file.read()
    except OSError as exc:
        raise ConfigError(f"Cannot read connector configuration file {path}: {exc.strerror or exc}") from None
    missing_name = f"Connector configuration at '{path}' is missing the mandatory 'name' configuration"
    try:
        doc = json.loads(raw)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        if not any(isinstance(v, (dict, list)) for v in doc.values()):
            config = {str(k): _config_value(path, str(k), v) for k, v in doc.items()}
            if "name" not in config:
                raise ConfigError(missing_name)
            return config["name"], config, None
        name, body, state = doc.get("name"), doc.get("config"), doc.get("initial_state")
        if not isinstance(body, dict):
            raise ConfigError(
                f"Connector configuration at '{path}' has an invalid 'config': expected an object"
            )
        if not isinstance(name, str):
            raise ConfigError(missing_name)
        config = {str(k): _config_value(path, str(k), v) for k, v in body.items()}
        if "name" in config and config["name"] != name:
            raise ConfigError(
                f"Connector name configuration in 'config' doesn't match the one specified in 'name' at '{path}'"
            )
        config["name"] = name
        target = None
        if state is not None:
            try:
                target = initial_target_state(str(state))
            except ValueError:
                raise ConfigError(
                    f"Connector configuration at '{path}' has an invalid 'initial_state': {state} "
                    "(expected RUNNING, PAUSED or STOPPED)"
                ) from None
        return name, config, target
    config = properties.loads(raw.decode("iso-8859-1"), path)
    if "name" not in config:
        raise ConfigError(missing_name)
    return config["name"], config, None


async def run_standalone(path: str, connector_files: list[str]) -> int:
    from pyconnect.config.properties import load
    from pyconnect.runtime import StandaloneRuntime

    connectors = [(file, *load_connector_file(file)) for file in connector_files]
    runtime = StandaloneRuntime(load(path))
    logger = logging.getLogger("pyconnect")
    with stop_on_signals() as stop:
        try:
            await runtime.start()
            for file, name, config, target in connectors:
                try:
                    await runtime.add_connector(name, config, target)
                except ConnectError as exc:
                    logger.error("Failed to create connector for %s: %s", file, exc)
                    raise ConnectorCreationError(
                        f"Failed to create connector {name} from {file}: {exc}"
                    ) from None
            runtime.mark_ready()
            tune_garbage_collector()
            logger.info("Standalone worker ready at %s", runtime.rest_url)
            await stop.wait()
            logger.info("Stopping the worker")
        finally:
            await runtime.stop()
    return 0


async def run_mirror_maker(path: str, clusters: list[str] | None) -> int:
    from pyconnect.mirror_maker import MirrorMaker

    mirror_maker = MirrorMaker.from_file(path, clusters)
    with stop_on_signals() as stop:
        try:
            try:
                await mirror_maker.start()
            except ConnectError as exc:
                raise StartFailed(f"Failed to start MirrorMaker: {exc}") from None
            tune_garbage_collector()
            await stop.wait()
        finally:
            await mirror_maker.stop()
    logging.getLogger("pyconnect").info("MirrorMaker exited")
    return stop.exit_code


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "status":
        from pyconnect.mirror_status import client
        from pyconnect.rest_client import RestAccess, RestClientError

        try:
            access = RestAccess.from_args(args)
        except RestClientError as exc:
            print(f"pyconnect: {exc}", file=sys.stderr)
            return client.EXIT_ERROR
        return client.run(
            args.url, as_json=args.json, timeout_s=args.timeout, access=access, out=sys.stdout, err=sys.stderr
        )
    log_format = getattr(args, "log_format", None) or os.environ.get(LOG_FORMAT_VARIABLE) or "java"
    try:
        configure_logging(args.log_level, log_format=log_format)
    except ValueError as exc:
        print(f"pyconnect: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "audit":
        from spark_analytics.audit_cli import run_audit

        return run_audit(args)
    try:
        loop = event_loop.requested_loop(args.event_loop)
    except event_loop.EventLoopChoiceError as exc:
        print(f"pyconnect: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.command in ("offsets", "failover"):
        from pyconnect.cli_offsets import run_failover, run_offsets

        return run_offsets(args, loop) if args.command == "offsets" else run_failover(args, loop)
    if args.command == "failback":
        from pyconnect.cli_failback import run_failback

        return run_failback(args, loop)
    if args.command == "cutover":
        from pyconnect.cli_cutover import run_cutover

        return run_cutover(args, loop)
    try:
        if args.command == "mirror-maker":
            return event_loop.run(run_mirror_maker(args.mm2_properties, args.clusters), loop)
        if args.command == "standalone":
            return event_loop.run(run_standalone(args.worker_properties, list(args.connector_configs)), loop)
        return event_loop.run(run_distributed(args.worker_properties), loop)
    except (ConnectorCreationError, StartFailed) as exc:
        print(f"pyconnect: {exc}".splitlines()[0], file=sys.stderr)
        return 3
    except (ConnectError, ValueError, OSError) as exc:
        print(f"pyconnect: {exc}".splitlines()[0], file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
