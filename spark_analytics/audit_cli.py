"""``pyconnect audit``: the Spark audits from the command line.

``pyconnect audit --config mm2.properties --flow A->B --out DIR`` (or ``--from-snapshot DIR``) runs both
audits of a flow (:mod:`spark_analytics.flow_audit`), shows progress on stderr, prints the verdict and
writes ``DIR/audit.json`` and ``DIR/audit.html``; ``--snapshot DIR`` keeps what was read as Parquet.
``pyconnect audit replication|translation`` run one audit with explicit bootstrap servers and topics.

Importing this module does not import pyspark (``pyconnect --help`` stays fast); :func:`run_audit`
starts a local Spark session only once the arguments are valid.

Exit codes: 0 the audit passed; 1 it found missing or mismatched records (replication) or violations
(translation); 2 usage error; 3 the audit could not run (a cluster unreachable, Spark or its Kafka
source unavailable). Errors are one line on stderr.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from connectors.mirror.policy import (
    INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG,
    REPLICATION_POLICY_CLASS,
    SEPARATOR_CONFIG,
    ReplicationPolicy,
    replication_policy,
)
from pyconnect.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from spark_analytics.kafka_frames import KafkaCluster

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3
_MAX_CAUSES = 20


class AuditUsageError(ValueError):
    """Arguments that parse but do not make sense together."""


class AuditRunError(RuntimeError):
    """The audit could not run; the message is the root cause's first line."""


def _common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source-bootstrap", required=True, metavar="HOST:PORT", help="source cluster")
    parser.add_argument("--target-bootstrap", required=True, metavar="HOST:PORT", help="target cluster")
    parser.add_argument(
        "--source-alias", required=True, metavar="ALIAS", help="source cluster alias (names remote topics)"
    )
    parser.add_argument(
        "--topic",
        dest="topics",
        action="append",
        required=True,
        metavar="TOPIC",
        help="source topic to audit (repeat for more)",
    )
    parser.add_argument(
        "--replication-policy-class",
        metavar="CLASS",
        help="DefaultReplicationPolicy (default) or IdentityReplicationPolicy",
    )
    parser.add_argument("--replication-policy-separator", metavar="SEP", help="the policy's separator")
    for side in ("source", "target"):
        parser.add_argument(
            f"--{side}-property",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help=f"Kafka client property for the {side} cluster (e.g. security.protocol=SSL); repeatable",
        )
    parser.add_argument("--sample", type=int, default=10, metavar="N", help="offending records shown (10)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON, nothing else")
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    parser.add_argument("--driver-memory", default="512m", help="Spark driver heap (default 512m)")
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="seconds allowed for each Kafka metadata call (30)"
    )
    parser.add_argument("--log-level", default="WARNING", help="root log level (default WARNING)")


def add_audit_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``audit replication`` and ``audit translation`` under the ``pyconnect`` parser."""
    audit = sub.add_parser(
        "audit",
        help="Spark audits of what MirrorMaker 2 replicated and how it translated offsets",
        description="Audit a MirrorMaker 2 flow with Spark. Without AUDIT: both audits of one flow of "
        "mm2.properties (--config, --flow) or of a snapshot (--from-snapshot), with JSON and HTML reports "
        "in --out. With AUDIT: records (replication) or checkpoints and offset syncs (translation) of "
        "explicit topics. Exit codes: 0 passed, 1 findings, 2 usage, 3 could not run.",
    )
    flow = audit.add_argument_group("flow audit (without AUDIT)")
    flow.add_argument("--config", metavar="MM2_PROPERTIES", help="mm2.properties naming both clusters")
    flow.add_argument("--flow", metavar="SOURCE->TARGET", help="the flow to audit, e.g. A->B")
    flow.add_argument("--topics", metavar="REGEX", help="source topics to audit (default: the flow's topics)")
    flow.add_argument(
        "--groups", metavar="REGEX", help="groups whose checkpoints to audit (default: the flow's)"
    )
    flow.add_argument("--out", metavar="DIR", help="where audit.json and audit.html are written")
    flow.add_argument("--snapshot", metavar="DIR", help="also keep what was read as Parquet in DIR")
    flow.add_argument("--from-snapshot", metavar="DIR", help="audit a snapshot instead of the clusters")
    flow.add_argument(
        "--allow-lag", dest="flow_allow_lag", action="store_true", help="accept the not-yet-copied tail"
    )
    flow.add_argument(
        "--delivery",
        choices=("exactly-once", "at-least-once"),
        help="the flow's promise: duplicates on the target are findings under exactly-once (default: "
        "exactly-once when the target's exactly.once.source.support is enabled in the config)",
    )
    flow.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    flow.add_argument("--log-level", default="WARNING", help="root log level (default WARNING)")
    flow.add_argument(
        "--sample", dest="flow_sample", type=int, default=10, metavar="N", help="records shown (10)"
    )
    flow.add_argument(
        "--master", dest="flow_master", default="local[2]", metavar="MASTER", help="Spark master (local[2])"
    )
    flow.add_argument(
        "--driver-memory",
        dest="flow_driver_memory",
        default="512m",
        metavar="SIZE",
        help="driver heap (512m)",
    )
    flow.add_argument(
        "--timeout",
        dest="flow_timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="seconds per Kafka metadata call (30)",
    )
    kinds = audit.add_subparsers(dest="audit_command", metavar="AUDIT")
    replication = kinds.add_parser(
        "replication",
        help="missing, duplicated and mismatched records between source topics and their remote topics",
        description="Compare each source topic with its remote topic on the target, record by record "
        "(partition, key, value, headers, timestamp), and report per partition.",
    )
    _common_arguments(replication)
    replication.add_argument(
        "--allow-lag",
        action="store_true",
        help="pass when the only missing records are the not-yet-copied tail of a partition",
    )
    replication.add_argument(
        "--delivery",
        choices=("exactly-once", "at-least-once"),
        default="at-least-once",
        help="the flow's promise: under exactly-once a duplicate on the target is a finding (exit 1); "
        "under at-least-once (the default) duplicates are reported only",
    )
    translation = kinds.add_parser(
        "translation",
        help="check every checkpoint and offset sync against the records on both clusters",
        description="Check the safety rule of every checkpoint (the translated offset never passes the "
        "first record the group has not consumed) and every offset sync, and report re-read counts.",
    )
    _common_arguments(translation)
    translation.add_argument("--target-alias", required=True, metavar="ALIAS", help="target cluster alias")
    translation.add_argument(
        "--group", dest="groups", action="append", default=[], metavar="GROUP", help="only this group"
    )
    translation.add_argument(
        "--offset-syncs-location",
        choices=("source", "target"),
        default="source",
        help="cluster holding the offset-syncs topic (default source)",
    )


def parse_properties(items: Sequence[str], option: str) -> dict[str, str]:
    """``["k=v", ...]`` -> ``{"k": "v"}``; an item without ``=`` or with an empty key is a usage error."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise AuditUsageError(f"{option} expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value
    return out


def policy_from_args(args: argparse.Namespace) -> ReplicationPolicy:
    config: dict[str, object] = {}
    if args.replication_policy_class:
        config[REPLICATION_POLICY_CLASS] = args.replication_policy_class
    if args.replication_policy_separator is not None:
        config[SEPARATOR_CONFIG] = args.replication_policy_separator
        config[INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG] = "true"
    return replication_policy(config)


def remote_topics_from_args(args: argparse.Namespace, policy: ReplicationPolicy) -> dict[str, str]:
    """Source topic -> remote topic for every ``--topic`` (order kept, duplicates dropped)."""
    topics = [t.strip() for t in args.topics]
    if any(not t for t in topics):
        raise AuditUsageError("--topic needs a topic name")
    if not args.source_alias.strip():
        raise AuditUsageError("--source-alias needs a cluster alias")
    if args.sample < 0:
        raise AuditUsageError("--sample cannot be negative")
    if args.timeout <= 0:
        raise AuditUsageError("--timeout must be positive")
    return {t: policy.format_remote_topic(args.source_alias, t) for t in dict.fromkeys(topics)}


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if getattr(args, "audit_command", None) is None:
        from spark_analytics.flow_cli import run_flow

        return run_flow(args, out, err)
    policy = policy_from_args(args)
    remote_topics = remote_topics_from_args(args, policy)
    source_properties = parse_properties(args.source_property, "--source-property")
    target_properties = parse_properties(args.target_property, "--target-property")

    from spark_analytics.kafka_frames import KafkaCluster
    from spark_analytics.session import local_spark

    source = KafkaCluster(args.source_bootstrap, source_properties, args.timeout)
    target = KafkaCluster(args.target_bootstrap, target_properties, args.timeout)
    with local_spark(
        f"pyconnect-audit-{args.audit_command}", master=args.master, memory=args.driver_memory
    ) as spark:
        try:
            return _audit(spark, args, policy, remote_topics, source, target, out)
        except Exception as exc:
            # Read the Java cause while the gateway still runs (it is shut when the session ends).
            raise AuditRunError(error_line(exc)) from None


def _audit(
    spark: SparkSession,
    args: argparse.Namespace,
    policy: ReplicationPolicy,
    remote_topics: dict[str, str],
    source: KafkaCluster,
    target: KafkaCluster,
    out: TextIO,
) -> int:
    if args.audit_command == "replication":
        from spark_analytics.replication_audit import dumps, run_replication_audit

        replication = run_replication_audit(
            spark, source, target, remote_topics, source_alias=args.source_alias, sample=args.sample
        )
        print(dumps(replication) if args.json else replication.render(), file=out)
        duplicates = args.delivery == "exactly-once" and replication.total("duplicates") > 0
        if duplicates and not args.json:
            print(
                f"replication audit: {replication.total('duplicates')} duplicates on the target of a flow "
                "that runs exactly-once",
                file=out,
            )
        return EXIT_OK if replication.ok(allow_lag=args.allow_lag) and not duplicates else EXIT_FINDINGS
    from spark_analytics.translation_audit import dumps as dumps_translation
    from spark_analytics.translation_audit import run_translation_audit

    translation = run_translation_audit(
        spark,
        source,
        target,
        remote_topics,
        source_alias=args.source_alias,
        target_alias=args.target_alias,
        offset_syncs_topic=policy.offset_syncs_topic(args.target_alias),
        offset_syncs_on_target=args.offset_syncs_location == "target",
        checkpoints_topic=policy.checkpoints_topic(args.source_alias),
        groups=args.groups,
        sample=args.sample,
    )
    print(dumps_translation(translation) if args.json else translation.render(), file=out)
    return EXIT_OK if translation.ok() else EXIT_FINDINGS


def error_line(exc: BaseException) -> str:
    """The first line of the root cause, with a Java exception's own message when there is one."""
    text = ""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            cause = java
            for _ in range(_MAX_CAUSES):
                deeper = cause.getCause()
                if deeper is None or deeper.equals(cause):
                    break
                cause = deeper
            text = f"{cause.getClass().getSimpleName()}: {cause.getMessage()}"
        except Exception:
            text = ""
    if not text:
        try:
            text = str(exc)
        except Exception:
            text = ""
    lines = text.strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """``pyconnect audit ...`` without the rest of ``pyconnect`` (the entry of a submitted job)."""
    parser = argparse.ArgumentParser(prog="pyconnect")
    add_audit_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["audit", *(sys.argv[1:] if argv is None else argv)])
    return run_audit(args)


def run_audit(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the audit ``args`` describes; print the report to ``out`` and errors (one line) to ``err``."""
    out = out or sys.stdout
    err = err or sys.stderr
    for noisy in ("py4j", "pyspark"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    try:
        return _run(args, out, err)
    except (AuditUsageError, ConfigError) as exc:
        print(f"pyconnect audit: {error_line(exc)}", file=err)
        return EXIT_USAGE
    except Exception as exc:
        print(f"pyconnect audit: could not run the audit: {error_line(exc)}", file=err)
        return EXIT_ERROR
