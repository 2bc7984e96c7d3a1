"""One chaos run, start to finish: two three-node clusters, a fleet of three pyconnect workers mirroring
A -> B (MirrorSource, MirrorCheckpoint and MirrorHeartbeat connectors), the workload, the nemesis's
faults one after another, a quiet period, the verdict from the data, the Spark audits (optional) and
the report in ``out_dir``.

``run(config)`` returns the report (a JSON-ready dict; ``report["verdict"]["broken_promises"]`` is empty
when every promise held). Everything it starts (brokers, workers, threads) it stops before returning,
by PID, also when it fails; every wait is bounded. The run's own log is ``out_dir/run.log``; brokers
and workers log under ``out_dir/clusters`` and ``out_dir/workers``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pyconnect.kafka.sequenced_traffic import Workload, create_topics
from pyconnect.kafka.topic_reads import end_offsets, read_partitions
from pyconnect.testing.chaos import nemesis
from pyconnect.testing.chaos.faults import AppliedFault, FaultInjector, route_name
from pyconnect.testing.chaos.nemesis import Fault, Timing
from pyconnect.testing.chaos.observer import Observer, all_running
from pyconnect.testing.chaos.readers import read_checkpoints, read_offset_commits
from pyconnect.testing.chaos.report import log_levels, write_report
from pyconnect.testing.chaos.verdict import (
    CheckpointRecord,
    Verdict,
    judge_checkpoints,
    judge_offset_commits,
    judge_partition,
    percentile,
    recovery_times,
)
from pyconnect.testing.kafka import KafkaCluster, start_clusters, stop_clusters
from pyconnect.testing.worker_process import PyconnectWorker

log = logging.getLogger("pyconnect.chaos")

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
SOURCE, CHECKPOINT, HEARTBEAT = "chaos-source", "chaos-checkpoint", "chaos-heartbeat"
CONNECTORS = (SOURCE, CHECKPOINT, HEARTBEAT)
GROUP = "chaos-app"
CONNECT_GROUP = "chaos-connect"
CHECKPOINTS_TOPIC = "A.checkpoints.internal"
OFFSET_SYNCS_TOPIC = "mm2-offset-syncs.B.internal"
REPLICATION = 3
AUDIT_TIMEOUT_S = 900.0


@dataclass
class RunConfig:
    seed: int
    duration_s: float
    out_dir: Path
    kinds: Sequence[str] = nemesis.KINDS
    exactly_once: bool = False
    faults: Sequence[Fault] | None = None
    """A fixed schedule instead of the seeded one (the short test's)."""
    max_faults: int = 40
    topics: int = 2
    partitions: int = 3
    rate: float = 20.0
    """Records per second per partition."""
    batch: int = 1
    """Records per partition per acknowledged round of the workload (``rate / batch`` rounds a second)."""
    workers: int = 3
    session_timeout_ms: int = 6000
    rebalance_delay_ms: int = 10000
    quiet_s: float = 120.0
    """At most this long after the last fault for the lag to reach zero with every task RUNNING."""
    lag_bound: int = 0
    """Recovery means lag <= this (0: three seconds of traffic)."""
    recovery_bound_s: float = 90.0
    settle_s: float = 5.0
    warm_s: float = 180.0
    """At most this long from creating the connectors to every task RUNNING with the lag under its bound."""
    """After a fault's recovery, at least this long before the next fault."""
    audits: bool = False
    timing: Timing = field(default_factory=Timing)


def say(message: str) -> None:
    log.info(message)
    print(f"[chaos {time.strftime('%H:%M:%S')}] {message}", flush=True)


def source_connector(a: str, b: str, topics: Sequence[str], eos: bool, tasks: int) -> dict[str, str]:
    config = {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "tasks.max": str(tasks),
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": a,
        "target.cluster.bootstrap.servers": b,
        "topics": ",".join(topics),
        "replication.factor": str(REPLICATION),
        "offset-syncs.topic.replication.factor": str(REPLICATION),
        "refresh.topics.interval.seconds": "5",
        "sync.topic.configs.enabled": "false",
        "sync.topic.acls.enabled": "false",
        "offset.lag.max": "10",
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
    }
    if eos:
        config |= {"exactly.once.support": "required", "source.consumer.isolation.level": "read_committed"}
    return config


def checkpoint_connector(a: str, b: str, topics: Sequence[str]) -> dict[str, str]:
    return {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
        "tasks.max": "1",
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": a,
        "target.cluster.bootstrap.servers": b,
        "topics": ",".join(topics),
        "groups": GROUP,
        "emit.checkpoints.interval.seconds": "1",
        "refresh.groups.interval.seconds": "2",
        "sync.group.offsets.enabled": "true",
        "sync.group.offsets.interval.seconds": "1",
        "checkpoints.topic.replication.factor": str(REPLICATION),
        "key.converter": BYTES,
        "value.converter": BYTES,
    }


def heartbeat_connector(a: str, b: str) -> dict[str, str]:
    return {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
        "tasks.max": "1",
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": a,
        "target.cluster.bootstrap.servers": b,
        "emit.heartbeats.interval.seconds": "1",
        "heartbeats.topic.replication.factor": str(REPLICATION),
        "key.converter": BYTES,
        "value.converter": BYTES,
    }


ENV_PROVIDER = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
SOURCE_VAR, TARGET_VAR = "CHAOS_SOURCE_BOOTSTRAP", "CHAOS_TARGET_BOOTSTRAP"


def make_workers(config: RunConfig, clusters: dict[str, KafkaCluster], routed: bool) -> list[PyconnectWorker]:
    """The fleet on cluster B. ``routed``: each worker reaches both clusters through its own network
    route (:func:`faults.route_name`), its own clients and its connectors' alike: the connectors name
    the clusters as ``${env:CHAOS_SOURCE_BOOTSTRAP}`` and ``${env:CHAOS_TARGET_BOOTSTRAP}``, which each
    worker's EnvVarConfigProvider resolves to its routes (task configs keep the reference)."""
    extra: dict[str, object] = {
        "session.timeout.ms": config.session_timeout_ms,
        "heartbeat.interval.ms": 1000,
        "offset.flush.interval.ms": 1000,
        "scheduled.rebalance.max.delay.ms": config.rebalance_delay_ms,
        "config.storage.replication.factor": REPLICATION,
        "offset.storage.replication.factor": REPLICATION,
        "status.storage.replication.factor": REPLICATION,
    }
    if config.exactly_once:
        extra["exactly.once.source.support"] = "enabled"
    if routed:
        extra |= {"config.providers": "env", "config.providers.env.class": ENV_PROVIDER}
    workers = []
    for i in range(config.workers):
        a, b = (
            clusters[c].route(route_name(i)).bootstrap_servers if routed else clusters[c].bootstrap_servers
            for c in "AB"
        )
        workers.append(
            PyconnectWorker(
                b,
                config.out_dir / "workers" / f"w{i}",
                group_id=CONNECT_GROUP,
                extra=extra,
                die_with_parent=True,
                environment={SOURCE_VAR: a, TARGET_VAR: b} if routed else {},
            )
        )
    return workers


def wait_until(what: str, probe: Any, timeout_s: float, interval_s: float = 1.0) -> float:
    """Seconds until ``probe()`` was truthy; TimeoutError naming ``what`` after ``timeout_s``."""
    started = time.monotonic()
    while True:
        try:
            if probe():
                return time.monotonic() - started
        except OSError:
            pass
        if time.monotonic() - started > timeout_s:
            raise TimeoutError(f"{what}: not within {timeout_s:.0f} s")
        time.sleep(interval_s)


def create_connectors(workers: Sequence[PyconnectWorker], configs: dict[str, dict[str, str]]) -> None:
    for name, body in configs.items():

        def created(name: str = name, body: dict[str, str] = body) -> bool:
            code, answer = workers[0].rest("PUT", f"/connectors/{name}/config", body)
            if code >= 500:
                log.warning("PUT %s: %s %s", name, code, answer)
            elif code >= 400:
                raise RuntimeError(f"connector {name} refused: {code} {answer}")
            return code < 300

        wait_until(f"connector {name} created", created, 60)


def fleet_running(workers: Sequence[PyconnectWorker]) -> bool:
    code, body = workers[0].rest("GET", "/connectors?expand=status", timeout=10)
    return code == 200 and all_running(body, CONNECTORS)


def wait_recovered(observer: Observer, lag_bound: int, bound_s: float) -> float | None:
    """Seconds from now until a new sample shows every task RUNNING and the lag within ``lag_bound``;
    None after ``bound_s``."""
    started = time.monotonic()
    seen = len(observer.samples)
    while time.monotonic() - started <= bound_s:
        fresh = observer.samples[seen:]
        if any(s.all_running and s.lag <= lag_bound for s in fresh):
            return time.monotonic() - started
        time.sleep(0.5)
    return None


def run_audits(a: str, b: str, topics: Sequence[str], read_committed: bool) -> dict[str, Any]:
    """The Spark replication and translation audits through ``pyconnect audit`` (one process each).
    ``read_committed``: both clusters are read with ``isolation.level=read_committed`` (an exactly-once
    run: records of aborted transactions are no copies; Spark's Kafka source reads uncommitted ones
    by default)."""
    common = ["--source-bootstrap", a, "--target-bootstrap", b, "--source-alias", "A"]
    if read_committed:
        for side in ("--source-property", "--target-property"):
            common += [side, "isolation.level=read_committed"]
    for t in topics:
        common += ["--topic", t]
    commands = {
        "replication": ["replication", *common],
        "translation": ["translation", *common, "--target-alias", "B", "--group", GROUP],
    }
    results: dict[str, Any] = {}
    for name, args in commands.items():
        cmd = [sys.executable, "-m", "pyconnect.cli", "audit", *args, "--json"]
        started = time.monotonic()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=AUDIT_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            results[name] = {"exit_code": None, "summary": f"timed out after {AUDIT_TIMEOUT_S:.0f} s"}
            continue
        try:
            body = json.loads(proc.stdout)
        except ValueError:
            body = {"output": (proc.stdout + proc.stderr)[-2000:]}
        body["exit_code"] = proc.returncode
        body["seconds"] = round(time.monotonic() - started, 1)
        if name == "replication" and "totals" in body:
            body["summary"] = f"exit {proc.returncode}; totals {body['totals']}"
        elif name == "translation" and "violations" in body:
            body["summary"] = (
                f"exit {proc.returncode}; {body['violations']} checkpoint violations, syncs {body.get('syncs')}"
            )
        else:
            body["summary"] = f"exit {proc.returncode}"
        results[name] = body
    return results


def judge(
    config: RunConfig,
    a: str,
    b: str,
    topics: Sequence[str],
    observer: Observer,
    heals: list[tuple[str, float, float]],
    final_lag: int,
    final_running: bool,
    lag_bound: int,
) -> Verdict:
    isolation = "read_committed"
    partitions, copies_at, target_end = [], {}, {}
    for topic in topics:
        source = asyncio.run(read_partitions(a, topic, isolation=isolation))
        remote = f"A.{topic}"
        target = asyncio.run(read_partitions(b, remote, isolation=isolation))
        ends = asyncio.run(end_offsets(b, remote, sorted(target), isolation)) if target else {}
        for p in range(config.partitions):
            seqs = [int(v or b"-1") for _o, _k, v in source.get(p, [])]
            copies = [(o, int(v or b"-1")) for o, _k, v in target.get(p, [])]
            verdict, at = judge_partition(topic, p, seqs, copies)
            partitions.append(verdict)
            copies_at[(topic, p)] = at
            target_end[(topic, p)] = ends.get(p, 0)
    checkpoints = [
        CheckpointRecord(
            c.consumer_group_id,
            c.topic.removeprefix("A."),
            c.partition,
            c.upstream_offset,
            c.downstream_offset,
        )
        for c in asyncio.run(read_checkpoints(b, CHECKPOINTS_TOPIC, GROUP))
    ]
    return Verdict(
        partitions=partitions,
        checkpoints=judge_checkpoints(checkpoints, copies_at, target_end),
        recovery_s=recovery_times(heals, observer.samples, lag_bound),
        lag_bound=lag_bound,
        recovery_bound_s=config.recovery_bound_s,
        rest_calls=len(observer.latencies_ms),
        rest_failures=len(observer.failures),
        rest_p99_ms=percentile(observer.latencies_ms, 0.99),
        final_lag=final_lag,
        final_all_running=final_running,
        exactly_once=config.exactly_once,
        offset_commits=judge_offset_commits(
            asyncio.run(read_offset_commits(b, f"{CONNECT_GROUP}-offsets", SOURCE))
        ),
    )


def run(config: RunConfig) -> dict[str, Any]:
    out = config.out_dir.resolve()
    out.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(out / "run.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    logging.getLogger("pyconnect.chaos").addHandler(handler)
    logging.getLogger("pyconnect.chaos").setLevel(logging.INFO)
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    schedule = (
        list(config.faults)
        if config.faults is not None
        else nemesis.schedule(
            config.seed,
            config.duration_s,
            config.kinds,
            workers=config.workers,
            max_faults=config.max_faults,
            timing=config.timing,
        )
    )
    say(f"seed {config.seed}: {len(schedule)} faults in {config.duration_s:.0f} s; report in {out}")
    for f in schedule:
        say(f"  scheduled {f.describe()}")
    topics = [f"chaos-{i}" for i in range(config.topics)]
    lag_bound = config.lag_bound or int(3 * config.rate * config.topics * config.partitions)
    clusters: dict[str, KafkaCluster] = {}
    workers: list[PyconnectWorker] = []
    workload: Workload | None = None
    observer: Observer | None = None
    injector: FaultInjector | None = None
    applied: list[AppliedFault] = []
    report: dict[str, Any] = {}
    started = time.monotonic()
    try:
        routed = nemesis.PARTITION in {f.kind for f in schedule}
        routes = tuple(route_name(i) for i in range(config.workers)) if routed else ()
        clusters = start_clusters(
            ["A", "B"], out / "clusters", brokers=3, die_with_parent=True, routes=routes
        )
        a, b = clusters["A"].bootstrap_servers, clusters["B"].bootstrap_servers
        ca, cb = (f"${{env:{SOURCE_VAR}}}", f"${{env:{TARGET_VAR}}}") if routed else (a, b)
        say(f"clusters up in {time.monotonic() - started:.0f} s: A {a}, B {b}")
        asyncio.run(create_topics(a, topics, config.partitions, REPLICATION))
        workload = Workload(
            a, b, topics, config.partitions, rate=config.rate, group=GROUP, batch=config.batch
        )
        workload.start()
        workers = make_workers(config, clusters, routed)
        for w in workers:
            w.start()
        for w in workers:
            w.wait_ready()
        tasks = config.topics * config.partitions // 2 or 1
        create_connectors(
            workers,
            {
                SOURCE: source_connector(ca, cb, topics, config.exactly_once, tasks),
                CHECKPOINT: checkpoint_connector(ca, cb, topics),
                HEARTBEAT: heartbeat_connector(ca, cb),
            },
        )
        assert workload is not None
        live = workload
        warm = wait_until(
            "the fleet running with the lag under its bound",
            lambda: fleet_running(workers) and live.lag() <= lag_bound,
            config.warm_s,
        )
        say(f"fleet mirroring after {warm:.0f} s (lag {workload.lag()}); faults start")
        injector = FaultInjector(
            clusters,
            workers,
            {
                "B": [
                    str(workers[0].config_topic),
                    str(workers[0].offset_topic),
                    str(workers[0].status_topic),
                    CHECKPOINTS_TOPIC,
                ],
                "A": [OFFSET_SYNCS_TOPIC],
            },
            config.seed,
        )
        for f in schedule:
            if not injector.supports(f.kind):
                raise ValueError(f"fault kind {f.kind} is not available in this run")
        observer = Observer(workers, injector.states, CONNECTORS, workload.lag)
        t0 = time.monotonic()
        observer.start(t0)
        delay, not_before = 0.0, t0
        for f in schedule:
            # a fault waits for the previous one's recovery: later faults shift by what healing and
            # recovering took beyond the schedule, so each recovery is measured alone
            start_at = max(t0 + f.start_s + delay, not_before)
            delay = start_at - (t0 + f.start_s)
            time.sleep(max(0.0, start_at - time.monotonic()))
            try:
                done = injector.apply(f)
            except Exception as exc:
                say(f"could not apply {f.describe()}: {exc}")
                applied.append(AppliedFault(f, {}, time.monotonic(), error=f"apply: {exc}"))
                continue
            say(f"applied {f.describe()} -> {done.applied}")
            time.sleep(max(0.0, done.started_at + f.heal_after_s - time.monotonic()))
            try:
                injector.heal(done)
                say(f"healed {f.kind} after {time.monotonic() - done.started_at:.1f} s")
            except Exception as exc:
                done.error = f"heal: {exc}"
                injector.open = None
                say(f"could not heal {f.describe()}: {exc}")
            applied.append(done)
            recovered = wait_recovered(observer, lag_bound, config.recovery_bound_s)
            say(f"recovered {recovered:.1f} s after the heal" if recovered is not None else "not recovered")
            not_before = time.monotonic() + config.settle_s
        time.sleep(max(0.0, t0 + config.duration_s + delay - time.monotonic()))
        acked = workload.stop_producing()
        stopped_producing = time.monotonic()
        say(
            f"faults over at {stopped_producing - t0:.0f} s; {sum(acked.values())} records produced; quiet period"
        )
        watcher = observer

        def caught_up() -> bool:
            latest = watcher.latest()
            return live.lag() == 0 and latest is not None and latest.all_running

        try:
            quiet = wait_until("lag zero with every task RUNNING", caught_up, config.quiet_s)
            say(f"caught up {quiet:.0f} s after the last record")
        except TimeoutError as exc:
            say(f"{exc} (lag {workload.lag()})")
        time.sleep(3)  # one more round of checkpoints for the group's final commits
        final_lag = workload.lag()
        latest = observer.latest()
        final_running = bool(latest and latest.all_running)
        observer.stop()
        horizon = time.monotonic() - t0
        heals: list[tuple[str, float, float]] = []
        healed = [x for x in applied if x.healed_at is not None]
        for i, x in enumerate(healed):
            assert x.healed_at is not None
            nxt = healed[i + 1].started_at - t0 if i + 1 < len(healed) else horizon
            heals.append((x.fault.kind, x.healed_at - t0, nxt))
        workload.stop()
        say("reading both clusters for the verdict")
        verdict = judge(config, a, b, topics, observer, heals, final_lag, final_running, lag_bound)
        audits = run_audits(a, b, topics, config.exactly_once) if config.audits else {}
        report = {
            "run": {
                "seed": config.seed,
                "duration_s": config.duration_s,
                "kinds": list(config.kinds) if config.faults is None else sorted({f.kind for f in schedule}),
                "exactly_once": config.exactly_once,
                "topics": topics,
                "partitions": config.partitions,
                "rate_per_partition": config.rate,
                "batch_per_partition": config.batch,
                "workers": config.workers,
                "session_timeout_ms": config.session_timeout_ms,
                "scheduled_rebalance_max_delay_ms": config.rebalance_delay_ms,
                "wall_s": round(time.monotonic() - started, 1),
                "timing": asdict(config.timing),
            },
            "schedule": [f.to_json() for f in schedule],
            "faults": [
                {
                    "fault": x.fault.to_json(),
                    "applied": x.applied,
                    "started_s": round(x.started_at - t0, 2),
                    "healed_s": None if x.healed_at is None else round(x.healed_at - t0, 2),
                    "peak_lag": max(
                        (
                            s.lag
                            for s in observer.samples
                            if x.started_at - t0 <= s.t_s <= (x.healed_at or x.started_at) - t0 + 30
                        ),
                        default=None,
                    ),
                    "error": x.error,
                }
                for x in applied
            ],
            "verdict": verdict.to_json(),
            "rest_failures": observer.failures[:50],
            "timeline": [[s.t_s, s.lag, s.all_running] for s in observer.samples],
            "audits": audits,
            "memory": {"peak_rss_mb": [round(kb / 1024, 1) for kb in observer.peak_rss_kb]},
            "logs": log_levels(sorted((out / "workers").glob("*/worker.log"))),
            "workload": {
                "acked": sum(acked.values()),
                "consumed": workload.consumed,
                "errors": dict(workload.errors),
            },
        }
        paths = write_report(out, report)
        say(f"report: {paths[1]}")
        return report
    finally:
        if injector is not None:
            injector.release()
        if observer is not None:
            observer.stop()
        if workload is not None:
            try:
                workload.stop()
            except RuntimeError as exc:
                say(str(exc))
        with ThreadPoolExecutor(max_workers=max(1, len(workers))) as pool:
            list(pool.map(lambda w: w.stop(timeout=20), workers))
        stop_clusters(clusters.values(), timeout=15)
        logging.getLogger("pyconnect.chaos").removeHandler(handler)
        handler.close()
