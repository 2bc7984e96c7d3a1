"""One benchmark run: two fresh clusters, the perf-tool limit, then each system through the scenarios.

Order: clusters A (source) and B (target) start; source topics are created and the throughput
backlogs written once with ProducerPerformance (every system drains the very same records); the
physical limit is measured on separate topics; then each system in turn runs

- a *single-worker session*: one fresh worker (start-up timeline, then the 100 B and 1 KB backlog
  drains, then latency at fixed input rates), its RSS sampled throughout;
- a *fleet session*: three fresh workers with one connector (idle CPU and RSS, then failover);
- a *checkpoint session*: one fresh worker with a source and a checkpoint connector
  (``benchmarks.checkpoint_lag``);
- a *many-partitions session*: one fresh worker with one connector over thousands of one-record
  topics (``benchmarks.many_partitions``; Connect systems only), after which that system's added
  source topics and its target topics are deleted;
- a *control-plane session* per connector count: three fresh workers, many connectors created,
  listed, restarted and deleted through REST (``benchmarks.control_plane``; Connect systems only,
  and pyconnect's runs even when its MirrorSourceConnector is unavailable: it uses
  VerifiableSourceConnector).

pyconnect's single-worker session is followed by the *event-loop* drains: one fresh worker on uvloop
and one on asyncio's loop drain the same backlogs again, in turn and for several rounds
(``Bench._event_loops``).
pyconnect's single-worker session ends with the *profile*: the backlogs drained once more under
another alias with py-spy attached (``benchmarks.profiler``), after the peak RSS is taken, so the
measured figures are not perturbed. The folded stacks are kept in ``artifacts`` (file name -> text)
for the caller to write beside results.json.

Systems run one after the other, never at once, on the same brokers. A system that cannot run is
recorded with its reason and no figure. Every wait is bounded; every process is stopped by PID.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from benchmarks import (
    audit_scale,
    checkpoint_lag,
    compressed,
    control_plane,
    cutover,
    exactly_once,
    group_sync,
    many_partitions,
    metrics_cost,
    perftools,
    profiler,
    runners,
    wan,
    workload,
)
from benchmarks.procstats import RssSampler, rss_mb, total_cpu_seconds
from benchmarks.settings import BenchSettings
from benchmarks.stats import combine_drains, cpu_seconds_per_million, latency_summary, rate
from pyconnect.testing.connect_worker import ConnectWorkerProcess, group_leader_url
from pyconnect.testing.distribution import KafkaDistribution
from pyconnect.testing.kafka import KafkaCluster, start_clusters, stop_clusters

log = logging.getLogger("benchmarks")

READY_TIMEOUT_S = 120.0
RUNNING_TIMEOUT_S = 120.0
DESCRIPTIONS = {
    "many_partitions": "One fresh worker per Connect system runs one MirrorSourceConnector (tasks.max as in the "
    "other scenarios, refresh.topics.interval.seconds=5, topics = a regex matching the shared topics and the "
    "system's own added ones; the same JSON on both systems but for the source alias) over many_partitions_topics "
    "source topics of 8 partitions holding one record per partition, every target topic created beforehand. "
    "Copy = connector creation to the summed end offset of all the target topics equalling the records produced "
    "(one ListOffsets call for every partition per poll, every 0.5 s). Idle = CPU-seconds per second of the "
    "worker's process tree over idle_window_s, 5 s after the copy, with nothing arriving, and its RSS at the end "
    "of that window. Reconfigure = many_partitions_added more topics of 8 partitions (one record each) created "
    "and written on the source, from the start of their creation to all their records on the target: it "
    "includes up to refresh.topics.interval.seconds (5 s) before the connector notices them, then the task "
    "reconfiguration and the copy.",
    "wan": "The source cluster reached through proxies that delay every byte by wan_delay_ms each way (a "
    "round trip of twice that), as across regions: one fresh worker per Connect system drains the 1 KB "
    "throughput backlog again under an alias of its own, measured as in the throughput scenario, then "
    "latency at the first fixed rate over the same link. The target and the workers' own cluster stay local.",
    "compressed": "Backlogs compressed by their producer (lz4, zstd; 1 KB text-like records of a payload file, "
    "the 1 KB backlog's count, CreateTime): one fresh worker per Connect system (Java Connect, pyconnect) "
    "drains each with the throughput scenario's connector JSON plus producer.override.compression.type set "
    "to the source's codec, the same on both, measured as in the throughput scenario.",
    "exactly_once": "One fresh worker per Connect system with exactly.once.source.support=enabled drains a "
    "backlog of sequence-numbered 1 KB records with MirrorSourceConnector at each transaction boundary (poll; "
    "interval, every transaction.boundary.interval.ms), the same JSON on both systems plus "
    "consumer.isolation.level=read_committed; a drain ends when the target's end offset (records plus commit "
    "markers) is at least the backlog and has settled, and then a read_committed reader must see every record "
    "exactly once. Then latency at the first fixed rate with the poll boundary, as in the latency scenario "
    "(append times: the wait for the commit is not included).",
    "metrics_cost": "pyconnect only: three fresh workers on the same brokers, one recording metrics (the default) "
    "and two with pyconnect.metrics.recording.enabled=false (off, and a control whose ratio to off is the run's "
    "noise floor), drain the throughput backlogs under an alias per side and round (which side goes first "
    "rotates), measured as in the throughput scenario, for the rounds "
    "in the settings; then each mirrors the latency scenario's fixed rates on a topic of its own; peak RSS per "
    "worker over its session. Nothing scrapes during the measured drains, so the ratios metrics_on_vs_off_* "
    "(recording / not recording) are the recording's cost; the recording worker then drains the first backlog "
    "once more with py-spy attached while /metrics is scraped every second, which gives the share of its CPU in "
    "recording and in serving scrapes.",
    "limit": "Kafka's ProducerPerformance then ConsumerPerformance on the source cluster (acks=all, linger.ms=5, "
    "batch.size=65536), 8 partitions: what the brokers themselves move on this machine. ProducerPerformance is "
    "one producer; a mirror with several tasks runs several, so its 100 B rate can come close to it.",
    "throughput": "One worker drains a backlog already in the source topic (8 partitions, tasks.max=4). "
    "records/s and CPU are taken from the first record seen in the target topic to the last "
    "(target end offsets polled every 0.2 s); MB/s counts value bytes; wall s is connector creation to done. "
    "Dedicated MirrorMaker starts with the backlog waiting, so its drain overlaps its own start-up "
    "(its checkpoint and heartbeat connectors start too); its wall time is counted from process start.",
    "latency": "Sequence-numbered 100 B records produced at fixed rates; latency is target LogAppendTime minus "
    "source LogAppendTime per record, matched by sequence number (after a warm-up phase at the highest rate).",
    "resources": "Peak RSS of the single worker over its whole session (start-up, drains, latency); idle CPU "
    "and RSS of a three-worker fleet running one connector with no input.",
    "startup": "A fresh worker: process start to REST ready, to all tasks RUNNING after the connector is "
    "created at once, and to the first record in the target topic (1,000-record backlog waiting).",
    "failover": "Three workers, input at a fixed rate; kill -9 of the follower (not the group leader) hosting most "
    "tasks, so the scheduled rebalance delay applies; time to all tasks RUNNING on the survivors. "
    "Records lost = source sequence numbers absent from the target.",
    "group_sync": group_sync.DESCRIPTION,
    "cutover": cutover.DESCRIPTION,
    "checkpoint_lag": "One worker runs MirrorSourceConnector (offset.lag.max=0) and MirrorCheckpointConnector "
    "(emit.checkpoints.interval.seconds=1, sync.group.offsets.enabled=true, sync.group.offsets.interval.seconds=1, "
    "one group, one task each) with the same JSON on both systems. Each sample: a few records mirrored and their "
    "offset sync written, a random pause within the emit interval, then the group's offset is committed on the "
    "source. Checkpoint lag = LogAppendTime of the checkpoint for that offset in <alias>.checkpoints.internal on "
    "the target minus the commit's acknowledgement; group-offset lag = when the group's committed offset on the "
    "target first holds the translated offset (polled every 50 ms) minus the same.",
    "scale_out": "pyconnect only: a fleet of two workers (one Connect group, two processes on the same machine) "
    "drains the throughput backlogs once more under another alias; tasks.max=4 gives each worker two tasks. "
    "A Java worker already spreads its tasks over every core of one JVM, while one pyconnect worker is one Python "
    "process on one core: this is how an operator gives pyconnect a second core. records/s and CPU as in the "
    "throughput scenario, CPU summed over both workers; the ratio is to Java's one worker in the throughput "
    "scenario of the same run.",
    "control_plane": "A fresh fleet of three workers per connector count N runs N VerifiableSourceConnectors "
    "(tasks.max=1, throughput=1: one record per second per task) with the same JSON on both systems, so the "
    "cost is the runtime's own: config-topic writes, rebalances, status reads and forwarding. Writes go "
    "round-robin to the three workers (two thirds reach a follower and are forwarded), a fixed number in flight; "
    "create = the first POST /connectors to the last answer; all RUNNING = until every connector and task reports "
    "RUNNING; GET /connectors?expand=status and ?expand=info are timed one at a time, round-robin, with all N "
    "RUNNING; restart = POST /connectors/<c>/restart (the connector only) for every connector; delete = DELETE "
    "for every connector, all gone = until every worker lists none. A write answered 409 or 5xx is retried "
    "(counted) and its time is part of the phase.",
    "event_loop": "pyconnect only: two fresh workers, one on uvloop (the default) and one on asyncio's own loop "
    "(--event-loop asyncio), each checked on its /metrics to run the loop it was given, drain the throughput "
    "backlogs again under an alias per loop and round: for each backlog one worker after the other (which loop "
    "goes first alternates from round to round), for the number of rounds in the settings. "
    "Each drain is measured as in the throughput scenario; a loop's records/s are its measured records over its "
    "summed measured windows, its CPU per record over the same records. The ratios uvloop_vs_asyncio_<size> "
    "divide the uvloop worker's records/s by the asyncio worker's.",
    "audit_scale": "pyconnect only: the Spark flow audit (pyconnect audit --config mm2.properties --flow A->B: "
    "replication and translation audits) of N mirrored records per size: N records of 100 B (ProducerPerformance, "
    "distinct payload lines, 4 partitions, CreateTime) mirrored A->B by one fresh pyconnect worker running "
    "MirrorSourceConnector and MirrorCheckpointConnector, a group committed at half of every partition on A and "
    "checkpointed on B, the worker stopped; then the audit in a child process on local[2] and through "
    "spark-submit on a Spark standalone cluster (master and two one-core workers on 127.0.0.1). Wall = process "
    "start to exit (Spark start-up included); records/s = source + target records scanned per wall second; peak "
    "RSS summed over the driver's processes (the audit or spark-submit process, driver JVM, Python driver) and "
    "over the executors' (executor JVMs and Spark's Python workers; in local[2] the executors are threads of the "
    "driver JVM), sampled every 0.5 s by PID. The verdict must be pass.",
    "profile": "pyconnect's worker drains the throughput backlogs once more (under another alias, after the measured "
    "drains) with py-spy attached (sampling at the rate in the settings, idle samples excluded, frames per "
    "function): shares are of the worker's CPU samples from connector creation to the last record. The folded "
    "stacks are stored beside results.json.",
}


class Bench:
    def __init__(
        self,
        settings: BenchSettings,
        selected: Iterable[str],
        work_dir: Path,
        dist: KafkaDistribution,
        systems: Iterable[str] = ("java-connect", "java-dedicated", "pyconnect"),
    ) -> None:
        self.s = settings
        self.selected = set(selected)
        self.work_dir = work_dir
        self.dist = dist
        self.system_names = list(systems)
        self.scenarios: dict[str, dict[str, Any]] = {
            name: {"description": DESCRIPTIONS[name], "status": "ok", "reason": None, "systems": {}}
            for name in DESCRIPTIONS
            if name in self.selected
        }
        self.systems: dict[str, dict[str, Any]] = {}
        self.clusters: dict[str, KafkaCluster] = {}
        self.artifacts: dict[str, str] = {}

    # ---- bookkeeping ---------------------------------------------------------------------------

    def put(
        self, scenario: str, system: str, status: str, metrics: Any = None, reason: str | None = None
    ) -> None:
        if scenario in self.scenarios:
            self.scenarios[scenario]["systems"][system] = {
                "status": status,
                "reason": reason,
                "metrics": metrics,
            }

    def wants(self, *names: str) -> bool:
        return any(n in self.selected for n in names)

    @property
    def a(self) -> str:
        return self.clusters["A"].bootstrap_servers

    @property
    def b(self) -> str:
        return self.clusters["B"].bootstrap_servers

    # ---- the run -------------------------------------------------------------------------------

    def run(self) -> dict[str, dict[str, Any]]:
        log.info("starting clusters A and B")
        routes = (wan.ROUTE,) if self.wants("wan") else ()
        self.clusters = start_clusters(
            ["A", "B"], self.work_dir / "kafka", die_with_parent=True, routes=routes, heap=self.s.broker_heap
        )
        try:
            if routes:
                self.clusters["A"].route(wan.ROUTE).delay(self.s.wan_delay_ms / 1000)
            self._prepare()
            if self.wants("limit"):
                self._limit()
            for system in self.system_names:
                self._system(system)
        finally:
            log.info("stopping clusters")
            stop_clusters(self.clusters.values(), timeout=20)
        for sc in self.scenarios.values():
            statuses = {e["status"] for e in sc["systems"].values()}
            if sc["status"] == "ok" and statuses and statuses != {"ok"}:
                sc["status"] = "partial" if "ok" in statuses else "failed"
                if not sc["reason"]:
                    sc["reason"] = "not every system produced figures: see each system's reason"
        return self.scenarios

    def _prepare(self) -> None:
        p = self.s.partitions
        sources = []
        if self.wants(
            "throughput",
            "resources",
            "startup",
            "latency",
            "profile",
            "scale_out",
            "event_loop",
            "wan",
            "metrics_cost",
        ):
            backlogs = [f"bench-tp-{size}" for size in self.s.backlog]
            workload.create_topics(self.a, backlogs, p, {"message.timestamp.type": self.s.backlog_timestamps})
            sources += backlogs
            sources.append("bench-startup")
        workload.create_topics(self.a, sources, p)
        targets = [runners.remote_topic(sys, t) for sys in self.system_names for t in sources]
        workload.create_topics(self.b, targets, p)
        if self.wants("wan"):
            workload.create_topics(self.b, [f"{alias}.bench-tp-1kb" for alias in wan.WAN_ALIASES.values()], p)
        if self.wants("throughput", "resources", "profile", "scale_out", "event_loop", "wan", "metrics_cost"):
            for size, n in self.s.backlog.items():
                log.info("writing the %s backlog: %d records", size, n)
                perftools.produce(
                    self.dist,
                    self.a,
                    f"bench-tp-{size}",
                    n,
                    self.s.record_size[size],
                    self.work_dir / "tools" / f"backlog-{size}.log",
                )
        if self.wants("compressed"):
            self._prepare_compressed()
        if self.wants("control_plane"):
            workload.create_topics(self.b, [control_plane.CONTROL_TOPIC], 1, {})
        if self.wants("many_partitions"):
            log.info("writing the many-partitions topics: %d x %d", self.s.many_partitions_topics, p)
            many_partitions.prepare_source(self.a, self.s.many_partitions_topics, p)
        if self.wants("exactly_once"):
            eos_sources = [f"bench-eos-{b}" for b in exactly_once.BOUNDARIES]
            workload.create_topics(self.a, eos_sources, p)
            eos_systems = [s for s in self.system_names if s != "java-dedicated"]
            workload.create_topics(
                self.b, [runners.remote_topic(s, t) for s in eos_systems for t in eos_sources], p
            )
            for topic in eos_sources:
                log.info("writing the %s backlog: %d records", topic, self.s.eos_backlog)
                exactly_once.produce_backlog(self.a, topic, self.s.eos_backlog, self.s.eos_record_size)
        if sources:
            perftools.produce(
                self.dist,
                self.a,
                "bench-startup",
                self.s.startup_backlog,
                100,
                self.work_dir / "tools" / "startup.log",
            )

    def _prepare_compressed(self) -> None:
        """The compressed scenario's source topics, their backlogs and the target topics."""
        p, size = self.s.partitions, "1kb"
        sources = [compressed.topic(codec) for codec in compressed.CODECS]
        workload.create_topics(self.a, sources, p, {"message.timestamp.type": self.s.backlog_timestamps})
        workload.create_topics(
            self.b,
            [
                f"{alias}.{t}"
                for s, alias in compressed.ALIASES.items()
                if s in self.system_names
                for t in sources
            ],
            p,
        )
        payload = compressed.write_payload_file(
            self.work_dir / "tools" / "compressed-payload.txt",
            compressed.PAYLOAD_LINES,
            self.s.record_size[size],
        )
        for codec in compressed.CODECS:
            log.info("writing the %s backlog: %d records", codec, self.s.backlog[size])
            perftools.produce(
                self.dist,
                self.a,
                compressed.topic(codec),
                self.s.backlog[size],
                self.s.record_size[size],
                self.work_dir / "tools" / f"backlog-{codec}.log",
                payload_file=payload,
                producer_props={"compression.type": codec},
            )

    def _limit(self) -> None:
        metrics: dict[str, Any] = {}
        try:
            for size, n in self.s.limit_records.items():
                topic = f"bench-limit-{size}"
                workload.create_topics(self.a, [topic], self.s.partitions)
                log.info("limit: ProducerPerformance %s x %d", size, n)
                produced = perftools.produce(
                    self.dist,
                    self.a,
                    topic,
                    n,
                    self.s.record_size[size],
                    self.work_dir / "tools" / f"limit-p-{size}.log",
                )
                log.info("limit: ConsumerPerformance %s x %d", size, n)
                consumed = perftools.consume(
                    self.dist, self.a, topic, n, self.work_dir / "tools" / f"limit-c-{size}.log"
                )
                metrics[size] = {"produce": produced, "consume": consumed}
            self.put("limit", "brokers", "ok", metrics)
        except Exception as exc:
            log.exception("limit failed")
            self.put("limit", "brokers", "failed", metrics or None, _short(exc))

    def _system(self, system: str) -> None:
        if system == "pyconnect":
            available, reason = runners.pyconnect_mirror_available()
        else:
            available, reason = True, None
        self.systems[system] = {"available": available, "reason": reason}
        scenario_names = ["throughput", "startup", "resources"]
        if system != "java-dedicated":
            scenario_names += ["latency", "failover", "checkpoint_lag", "many_partitions"]
        if system == "pyconnect":
            scenario_names += ["profile", "scale_out", "event_loop", "metrics_cost", "audit_scale"]
            scenario_names += ["group_sync", "cutover"]
        if not available:
            for name in scenario_names:
                self.put(name, system, "unavailable", reason=reason)
            log.warning("%s: %s", system, reason)
            self._control_plane(system)
            return
        if system == "java-dedicated":
            if not self.s.java_dedicated:
                for name in scenario_names:
                    self.put(name, system, "skipped", reason="dedicated mode disabled in these settings")
                return
            self._dedicated()
            return
        if self.wants("throughput", "latency", "resources", "startup") or (
            system == "pyconnect" and self.wants("profile")
        ):
            self._single_worker(system)
        if system == "pyconnect" and self.wants("event_loop"):
            self._event_loops(system)
        if system == "pyconnect" and self.wants("metrics_cost"):
            self._metrics_cost(system)
        if self.wants("failover", "resources"):
            self._fleet(system)
        if self.wants("checkpoint_lag"):
            self._checkpoint_lag(system)
        if system == "pyconnect" and self.wants("scale_out"):
            self._scale_out(system)
        if self.wants("exactly_once"):
            self._exactly_once(system)
        if self.wants("wan"):
            self._wan(system)
        if self.wants("compressed"):
            self._compressed(system)
        if self.wants("many_partitions"):
            self._many_partitions(system)
        if system == "pyconnect" and self.wants("audit_scale"):
            self._audit_scale(system)
        if system == "pyconnect" and self.wants("group_sync"):
            self.put("group_sync", system, *group_sync.session(self.a, self.b, self.work_dir, self.s))
        if system == "pyconnect" and self.wants("cutover"):
            self.put("cutover", system, *cutover.session(self.a, self.b, self.work_dir, self.s))
            metrics = self.scenarios["cutover"]["systems"][system]["metrics"]
            if metrics:
                self.artifacts["cutover.md"] = "\n".join(["# Cutover runs", "", *cutover.markdown(metrics)])
                self.artifacts["cutover.json"] = json.dumps(metrics, indent=2) + "\n"
        self._control_plane(system)

    def _audit_scale(self, system: str) -> None:
        """The audit-at-scale scenario (:mod:`benchmarks.audit_scale`): mirror N records, audit them twice."""
        try:
            metrics = audit_scale.measure(self.s, self.dist, self.a, self.b, self.work_dir)
        except Exception as exc:
            log.exception("audit_scale failed")
            self.put("audit_scale", system, "failed", reason=_short(exc))
            return
        if metrics["all_pass"] and not metrics["failures"]:
            self.put("audit_scale", system, "ok", metrics)
        else:
            reason = "; ".join(metrics["failures"]) or "an audit did not pass: see each mode's verdict"
            self.put("audit_scale", system, "failed", metrics, reason)

    # ---- single worker: start-up, throughput, latency, peak RSS --------------------------------

    def _single_worker(self, system: str) -> None:
        worker = runners.make_workers(system, self.b, self.work_dir / "workers", 1)[0]
        sampler = RssSampler(lambda: [worker.pid] if worker.pid else [], interval=0.5, max_seconds=3 * 3600)
        current = "startup"
        try:
            t0 = time.monotonic()
            worker.start()
            sampler.start()
            worker.wait_ready(READY_TIMEOUT_S, interval=0.02)  # fine polling: the step is measured
            rest_ready = time.monotonic() - t0
            startup_target = runners.remote_topic(system, "bench-startup")
            runners.create_connector(
                worker,
                "bench-startup",
                runners.connector_config(system, self.a, self.b, ["bench-startup"], self.s.tasks_max),
            )
            runners.wait_running(worker, "bench-startup", None, RUNNING_TIMEOUT_S, interval=0.05)
            tasks_running = time.monotonic() - t0
            first = _wait_first_record(self.b, startup_target, 60.0)
            first_record = first - t0
            self.put(
                "startup",
                system,
                "ok",
                {
                    "rest_ready_s": round(rest_ready, 3),
                    "tasks_running_s": round(tasks_running, 3),
                    "first_record_s": round(first_record, 3),
                },
            )
            log.info(
                "%s start-up: REST %.2fs, tasks %.2fs, first record %.2fs",
                system,
                rest_ready,
                tasks_running,
                first_record,
            )
            runners.delete_connector(worker, "bench-startup")
            current = "throughput"
            if self.wants("throughput", "resources"):
                tp: dict[str, Any] = {}
                if system == "pyconnect":
                    tp["event_loop"] = runners.event_loop_of(worker)
                for size, n in self.s.backlog.items():
                    topic = f"bench-tp-{size}"
                    name = f"bench-tp-{size}"
                    tp[size] = self._connector_drain(
                        worker,
                        name,
                        runners.connector_config(system, self.a, self.b, [topic], self.s.tasks_max),
                        runners.remote_topic(system, topic),
                        n,
                        self.s.record_size[size],
                    )
                    log.info("%s throughput %s: %s", system, size, tp[size])
                    runners.delete_connector(worker, name)
                self.put("throughput", system, "ok", tp)
            current = "latency"
            if self.wants("latency"):
                self.put("latency", system, "ok", self._latency(system, worker))
            peak = sampler.stop()
            if peak:
                self._resources(system, peak_rss_mb=round(max(peak.values()), 1))
            if system == "pyconnect" and self.wants("profile"):
                self._profile(system, worker)
        except Exception as exc:
            log.exception("%s single-worker session failed in %s", system, current)
            order = ["startup", "throughput", "latency"]
            for name in order[order.index(current) :]:
                self._failed(name, system, exc, worker)
            self._resources(system, failed=_short(exc))
        finally:
            sampler.stop()
            worker.stop(20)

    def _latency(
        self,
        system: str,
        worker: ConnectWorkerProcess,
        *,
        suffix: str = "",
        extra_config: dict[str, str] | None = None,
        rates: tuple[int, ...] | None = None,
    ) -> dict[str, Any]:
        """p50/p99 at each of ``rates`` (default the settings'), the connector ``bench-lat<suffix>``
        given ``extra_config`` over the flow settings."""
        source = f"bench-lat{suffix}-{runners.ALIASES[system]}"
        name = f"bench-lat{suffix}"
        target = runners.remote_topic(system, source)
        workload.create_topics(self.a, [source], self.s.partitions)
        workload.create_topics(self.b, [target], self.s.partitions)
        runners.create_connector(
            worker,
            name,
            {
                **runners.connector_config(system, self.a, self.b, [source], self.s.tasks_max),
                **(extra_config or {}),
            },
        )
        runners.wait_running(worker, name, None, RUNNING_TIMEOUT_S)
        producer = workload.RateProducer(self.a, source, size=self.s.latency_record_size)
        rates = rates or self.s.latency_rates
        # warm-up at the highest rate: the brokers' and a JVM worker's code paths are compiled before
        # the first measured phase, whichever system runs first on freshly started brokers
        producer.produce(max(rates), self.s.latency_warmup_s)
        _wait_first_record(self.b, target, 60.0)
        phases = []
        for r in rates:
            worker.check_alive()
            log.info("%s latency: %d records/s for %.0fs", system, r, self.s.latency_duration_s)
            phases.append((r, *producer.produce(r, self.s.latency_duration_s)))
        _wait_caught_up(self.a, source, self.b, target, 120.0)
        src = workload.read_all(self.a, source)
        tgt = workload.read_all(self.b, target)
        runners.delete_connector(worker, name)
        per_rate = []
        for r, first, last, achieved in phases:
            lat = [
                float(tgt.timestamps[s] - src.timestamps[s])
                for s in range(first, last)
                if s in tgt.timestamps and s in src.timestamps
            ]
            entry: dict[str, Any] = {
                "rate": r,
                "achieved_rate": round(achieved, 1),
                "missing": (last - first) - len(lat),
            }
            if lat:
                entry.update(latency_summary(lat))
            else:
                entry.update(count=0, p50_ms=None, p99_ms=None, max_ms=None)
            per_rate.append(entry)
            log.info("%s latency at %d/s: %s", system, r, entry)
        return {"rates": per_rate, "record_size": self.s.latency_record_size, "timestamp_resolution_ms": 1}

    def _wan(self, system: str) -> None:
        """The high-latency-link scenario (:mod:`benchmarks.wan`) on one fresh worker of ``system``."""
        if system not in wan.WAN_ALIASES:
            return
        route = self.clusters["A"].route(wan.ROUTE).bootstrap_servers
        alias = wan.WAN_ALIASES[system]
        worker = runners.make_workers(system, self.b, self.work_dir / "wan-workers", 1)[0]
        metrics: dict[str, Any] = {"one_way_delay_ms": self.s.wan_delay_ms}
        try:
            worker.start()
            worker.wait_ready(READY_TIMEOUT_S)
            topic, name = "bench-tp-1kb", "bench-wan-1kb"
            config = {
                **runners.connector_config(system, self.a, self.b, [topic], self.s.tasks_max, alias=alias),
                **wan.source_overrides(route),
            }
            metrics["1kb"] = self._connector_drain(
                worker, name, config, f"{alias}.{topic}", self.s.backlog["1kb"], self.s.record_size["1kb"]
            )
            log.info("%s drain over the delayed link: %s", system, metrics["1kb"])
            runners.delete_connector(worker, name)
            metrics["latency"] = self._latency(
                system,
                worker,
                suffix="-wan",
                extra_config=wan.source_overrides(route),
                rates=self.s.latency_rates[:1],
            )
            self.put("wan", system, "ok", metrics)
        except Exception as exc:
            log.exception("%s high-latency-link scenario failed", system)
            self._failed("wan", system, exc, worker, metrics)
        finally:
            worker.stop(20)

    def _failed(
        self,
        scenario: str,
        system: str,
        exc: BaseException,
        worker: ConnectWorkerProcess,
        metrics: Any = None,
    ) -> None:
        """Record ``scenario`` as failed on ``system``: the error, the tail of the worker's log, and the
        figures taken before it (if any)."""
        self.put(
            scenario,
            system,
            "failed",
            metrics or None,
            f"{_short(exc)}; worker log tail: {worker.log_tail(8)}",
        )

    def _connector_drain(
        self,
        worker: ConnectWorkerProcess,
        name: str,
        config: Mapping[str, str],
        target_topic: str,
        records: int,
        record_size: int,
        *,
        drain: Callable[..., dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Create connector ``name`` on ``worker`` and measure the drain of ``records`` into
        ``target_topic`` from its creation (``drain``: :func:`_drain`, or a variant of that signature)."""
        t_create = time.monotonic()
        runners.create_connector(worker, name, config)
        return (drain or _drain)(
            lambda: [worker.pid] if worker.pid else [],
            self.b,
            target_topic,
            records,
            record_size,
            t_create,
            self.s.drain_timeout_s,
            worker.check_alive,
        )

    def _compressed(self, system: str) -> None:
        """The compressed-source scenario (:mod:`benchmarks.compressed`) on one fresh worker of ``system``."""
        if system not in compressed.ALIASES:
            return
        alias = compressed.ALIASES[system]
        worker = runners.make_workers(system, self.b, self.work_dir / "compressed-workers", 1)[0]
        metrics: dict[str, Any] = {}
        try:
            worker.start()
            worker.wait_ready(READY_TIMEOUT_S)
            for codec in compressed.CODECS:
                topic = compressed.topic(codec)
                name = f"bench-{topic}"
                config = {
                    **runners.connector_config(
                        system, self.a, self.b, [topic], self.s.tasks_max, alias=alias
                    ),
                    **compressed.overrides(codec),
                }
                metrics[codec] = self._connector_drain(
                    worker, name, config, f"{alias}.{topic}", self.s.backlog["1kb"], self.s.record_size["1kb"]
                )
                log.info("%s drain of the %s backlog: %s", system, codec, metrics[codec])
                runners.delete_connector(worker, name)
            self.put("compressed", system, "ok", metrics)
        except Exception as exc:
            log.exception("%s compressed-source scenario failed", system)
            self._failed("compressed", system, exc, worker, metrics)
        finally:
            worker.stop(20)

    def _many_partitions(self, system: str) -> None:
        """The many-partitions scenario (:mod:`benchmarks.many_partitions`) on one fresh worker of ``system``."""
        if system not in many_partitions.MP_ALIASES:
            return
        worker = runners.make_workers(system, self.b, self.work_dir / "many-partitions", 1)[0]
        try:
            worker.start()
            worker.wait_ready(READY_TIMEOUT_S)
            metrics = many_partitions.measure(system, worker, self.a, self.b, self.s)
            self.put("many_partitions", system, "ok", metrics)
        except Exception as exc:
            log.exception("%s many-partitions scenario failed", system)
            self._failed("many_partitions", system, exc, worker)
        finally:
            worker.stop(20)
            many_partitions.cleanup(system, self.a, self.b, self.s)

    def _exactly_once(self, system: str) -> None:
        """The exactly-once scenario (:mod:`benchmarks.exactly_once`) on one fresh worker of ``system``."""
        if system == "java-dedicated":
            return
        base = self.work_dir / "eos-workers"
        worker = runners.make_workers(system, self.b, base, 1, extra=exactly_once.WORKER_SETTINGS)[0]
        metrics: dict[str, Any] = {}
        try:
            worker.start()
            worker.wait_ready(READY_TIMEOUT_S)
            for boundary in exactly_once.BOUNDARIES:
                topic = f"bench-eos-{boundary}"
                config = exactly_once.connector_config(
                    system, self.a, self.b, topic, self.s.tasks_max, boundary, self.s.eos_interval_ms
                )
                metrics[boundary] = self._connector_drain(
                    worker,
                    topic,
                    config,
                    runners.remote_topic(system, topic),
                    self.s.eos_backlog,
                    self.s.eos_record_size,
                    drain=exactly_once.drain_committed,
                )
                log.info("%s exactly-once drain, %s boundary: %s", system, boundary, metrics[boundary])
                runners.delete_connector(worker, topic)
            extra = {"transaction.boundary": "poll", "consumer.isolation.level": "read_committed"}
            metrics["latency"] = self._latency(
                system, worker, suffix="-eos", extra_config=extra, rates=self.s.latency_rates[:1]
            )
            self.put("exactly_once", system, "ok", metrics)
        except Exception as exc:
            log.exception("%s exactly-once scenario failed", system)
            self._failed("exactly_once", system, exc, worker, metrics)
        finally:
            worker.stop(20)

    def _resources(self, system: str, **fields: Any) -> None:
        if not self.wants("resources"):
            return
        entry = self.scenarios["resources"]["systems"].setdefault(
            system, {"status": "ok", "reason": None, "metrics": {}}
        )
        failed = fields.pop("failed", None)
        if failed:
            entry["status"] = "failed"
            entry["reason"] = failed
        entry["metrics"] = {**(entry["metrics"] or {}), **fields}

    def _profile(self, system: str, worker: ConnectWorkerProcess) -> None:
        """Drain each backlog again under ``PROFILE_ALIAS`` with py-spy attached to the worker."""
        executable = profiler.py_spy_executable()
        if executable is None or worker.pid is None:
            reason = (
                "py-spy is not installed (pip install -e '.[bench]')" if executable is None else "no worker"
            )
            self.put("profile", system, "skipped", reason=reason)
            return
        metrics: dict[str, Any] = {
            "rate_hz": self.s.profile_rate_hz,
            "native": self.s.profile_native,
            "alias": runners.PROFILE_ALIAS,
            "sizes": {},
        }
        try:
            for size in self.s.backlog:
                topic = f"bench-tp-{size}"
                name = f"bench-prof-{size}"
                workload.create_topics(self.b, [f"{runners.PROFILE_ALIAS}.{topic}"], self.s.partitions)
                recorder = profiler.PySpyRecorder(
                    worker.pid,
                    self.work_dir / "profiles" / f"{size}.txt",
                    self.s.profile_rate_hz,
                    executable,
                    native=self.s.profile_native,
                )
                log.info("%s profile: draining the %s backlog under py-spy", system, size)
                recorder.start()
                try:
                    drained = self._connector_drain(
                        worker,
                        name,
                        runners.connector_config(
                            system, self.a, self.b, [topic], self.s.tasks_max, alias=runners.PROFILE_ALIAS
                        ),
                        f"{runners.PROFILE_ALIAS}.{topic}",
                        self.s.backlog[size],
                        self.s.record_size[size],
                    )
                finally:
                    raw = recorder.stop()
                runners.delete_connector(worker, name)
                stacks = profiler.parse_folded(raw)
                file_name = f"profile-{system}-{size}.folded.txt"
                self.artifacts[file_name] = profiler.render_folded(stacks)
                rps, cpu = drained.get("records_per_s"), drained.get("cpu_s_per_million")
                metrics["sizes"][size] = {
                    "file": file_name,
                    "records_per_s_under_profiler": rps,
                    "cpu_percent_of_one_core": None
                    if rps is None or cpu is None
                    else round(rps * cpu / 1e4, 1),
                    "drain": drained,
                    **profiler.summarize(stacks),
                }
                log.info("%s profile %s: %d samples", system, size, metrics["sizes"][size]["samples"])
            self.put("profile", system, "ok", metrics)
        except Exception as exc:
            log.exception("%s profile failed", system)
            self.put("profile", system, "failed", metrics if metrics["sizes"] else None, _short(exc))

    # ---- event loops: the same drains on uvloop and on asyncio's loop ------------------------------

    def _event_loops(self, system: str) -> None:
        """One fresh worker per loop of ``EVENT_LOOP_ALIASES``; each backlog drained by both in turn,
        ``event_loop_rounds`` times; which loop drains a backlog first alternates from round to round
        (and from backlog to backlog within a round)."""
        loops = list(runners.EVENT_LOOP_ALIASES)
        workers = {
            loop: runners.make_workers(
                system, self.b, self.work_dir / "event-loop" / loop, 1, event_loop=loop
            )[0]
            for loop in loops
        }
        metrics: dict[str, Any] = {loop: {"alias": runners.EVENT_LOOP_ALIASES[loop]} for loop in loops}
        metrics["rounds"] = self.s.event_loop_rounds
        drains: dict[str, dict[str, list[dict[str, Any]]]] = {loop: {} for loop in loops}
        try:
            for worker in workers.values():
                worker.start()
            for loop, worker in workers.items():
                worker.wait_ready(READY_TIMEOUT_S)
                running = runners.event_loop_of(worker)
                if running != loop:
                    raise RuntimeError(f"the worker started with --event-loop {loop} runs on {running}")
                metrics[loop]["event_loop"] = running
            self._alternating_drains(
                system, workers, self.s.event_loop_rounds, runners.EVENT_LOOP_ALIASES, "bench-loop", drains
            )
            for loop in loops:
                for size, runs in drains[loop].items():
                    metrics[loop][size] = combine_drains(runs, self.s.record_size[size])
            self.put("event_loop", system, "ok", metrics)
        except Exception as exc:
            log.exception("%s event-loop drains failed", system)
            tails = "; ".join(f"{loop}: {w.log_tail(4)}" for loop, w in workers.items())
            self.put("event_loop", system, "failed", reason=f"{_short(exc)}; log tails: {tails}"[:1500])
        finally:
            for worker in workers.values():
                worker.stop(20)

    def _alternating_drains(
        self,
        system: str,
        workers: Mapping[str, ConnectWorkerProcess],
        rounds: int,
        aliases: Mapping[str, str],
        name_prefix: str,
        drains: dict[str, dict[str, list[dict[str, Any]]]],
    ) -> None:
        """Each backlog drained by every worker of ``workers`` (side -> worker) in turn, ``rounds`` times,
        into a fresh target topic ``<alias><round>.<topic>`` per drain; which side drains first
        rotates from round to round and from backlog to backlog (two sides: they alternate). Appends each drain to
        ``drains[side][size]`` (``first_of_pair`` says whether that side went first)."""
        sides = list(workers)
        for round_ in range(rounds):
            for index, (size, n) in enumerate(self.s.backlog.items()):
                topic = f"bench-tp-{size}"
                turn = (round_ + index) % len(sides)
                order = sides[turn:] + sides[:turn]
                for side in order:
                    worker = workers[side]
                    alias = f"{aliases[side]}{round_}"
                    target, name = f"{alias}.{topic}", f"{name_prefix}-{alias}-{size}"
                    workload.create_topics(self.b, [target], self.s.partitions)
                    drained = self._connector_drain(
                        worker,
                        name,
                        runners.connector_config(
                            system, self.a, self.b, [topic], self.s.tasks_max, alias=alias
                        ),
                        target,
                        n,
                        self.s.record_size[size],
                    )
                    drained["first_of_pair"] = side == order[0]
                    drains[side].setdefault(size, []).append(drained)
                    log.info("%s %s, %s backlog, round %d: %s", system, side, size, round_ + 1, drained)
                    runners.delete_connector(worker, name)

    def _metrics_cost(self, system: str) -> None:
        """The metrics-cost scenario (:mod:`benchmarks.metrics_cost`): one fresh worker per side."""
        sides = list(metrics_cost.SIDES)
        workers = {
            side: runners.make_workers(
                system, self.b, self.work_dir / "metrics-cost" / side, 1, extra=metrics_cost.SIDES[side]
            )[0]
            for side in sides
        }
        samplers = {
            side: RssSampler(_pids_of(w), interval=0.5, max_seconds=3 * 3600) for side, w in workers.items()
        }
        metrics: dict[str, Any] = {side: {"settings": metrics_cost.SIDES[side]} for side in sides}
        metrics["rounds"] = self.s.metrics_cost_rounds
        drains: dict[str, dict[str, list[dict[str, Any]]]] = {side: {} for side in sides}
        try:
            for side, worker in workers.items():
                worker.start()
                samplers[side].start()
            for worker in workers.values():
                worker.wait_ready(READY_TIMEOUT_S)
            self._alternating_drains(
                system, workers, self.s.metrics_cost_rounds, metrics_cost.ALIASES, "bench-metrics", drains
            )
            for side in sides:
                for size, runs in drains[side].items():
                    metrics[side][size] = combine_drains(runs, self.s.record_size[size])
            if "on" in workers:
                metrics["on"]["profile"] = self._metrics_profile(system, workers["on"])
            latency: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
            for index, side in enumerate(metrics_cost.LATENCY_ORDER):
                latency[side].append(self._latency(system, workers[side], suffix=f"-{side}{index}"))
            for side in sides:
                metrics[side]["latency"] = metrics_cost.combine_latency(latency[side])
            for side in sides:
                peak = samplers[side].stop()
                metrics[side]["peak_rss_mb"] = round(max(peak.values()), 1) if peak else None
            if "on" in workers:
                metrics["on"]["metrics_scrape_bytes"] = len(runners.scrape(workers["on"], "/metrics"))
            self.put("metrics_cost", system, "ok", metrics)
        except Exception as exc:
            log.exception("%s metrics-cost drains failed", system)
            tails = "; ".join(f"{side}: {w.log_tail(4)}" for side, w in workers.items())
            self.put("metrics_cost", system, "failed", reason=f"{_short(exc)}; log tails: {tails}"[:1500])
        finally:
            for sampler in samplers.values():
                sampler.stop()
            for worker in workers.values():
                worker.stop(20)

    def _metrics_profile(self, system: str, worker: ConnectWorkerProcess) -> dict[str, Any]:
        """The recording worker drains the first backlog once more with py-spy attached; the share of
        its CPU samples in metrics code (:func:`benchmarks.metrics_cost.metrics_share`)."""
        executable = profiler.py_spy_executable()
        if executable is None or worker.pid is None:
            return {"skipped": "py-spy is not installed (pip install -e '.[bench]')"}
        size, n = next(iter(self.s.backlog.items()))
        topic, alias = f"bench-tp-{size}", metrics_cost.PROFILE_ALIAS
        name = f"bench-metrics-prof-{size}"
        workload.create_topics(self.b, [f"{alias}.{topic}"], self.s.partitions)
        recorder = profiler.PySpyRecorder(
            worker.pid, self.work_dir / "profiles" / "metrics-on.txt", self.s.profile_rate_hz, executable
        )
        recorder.start()
        try:
            t_create = time.monotonic()
            runners.create_connector(
                worker,
                name,
                runners.connector_config(system, self.a, self.b, [topic], self.s.tasks_max, alias=alias),
            )
            with runners.Scraper(worker, "/metrics", 1.0):
                drained = _drain(
                    _pids_of(worker),
                    self.b,
                    f"{alias}.{topic}",
                    n,
                    self.s.record_size[size],
                    t_create,
                    self.s.drain_timeout_s,
                    worker.check_alive,
                )
        finally:
            raw = recorder.stop()
        runners.delete_connector(worker, name)
        stacks = profiler.parse_folded(raw)
        self.artifacts[f"profile-metrics-on-{size}.folded.txt"] = profiler.render_folded(stacks)
        share = metrics_cost.metrics_share(stacks)
        log.info("metrics on, profiled %s drain: %s; %s", size, drained, share)
        return {"backlog": size, "records_per_s": drained.get("records_per_s"), **share}

    # ---- checkpoint lag ------------------------------------------------------------------------

    def _checkpoint_lag(self, system: str) -> None:
        worker = runners.make_workers(system, self.b, self.work_dir / "checkpoint", 1)[0]
        try:
            worker.start()
            worker.wait_ready(READY_TIMEOUT_S)
            metrics = checkpoint_lag.measure(system, worker, self.a, self.b, self.s)
            log.info(
                "%s checkpoint lag: checkpoint %s, group offset %s",
                system,
                metrics["checkpoint_lag"],
                metrics["group_offset_lag"],
            )
            self.put("checkpoint_lag", system, "ok", metrics)
        except Exception as exc:
            log.exception("%s checkpoint session failed", system)
            self._failed("checkpoint_lag", system, exc, worker)
        finally:
            worker.stop(20)

    # ---- control plane ---------------------------------------------------------------------------

    def _control_plane(self, system: str) -> None:
        """One fresh fleet per connector count of ``control_plane_sizes`` (``benchmarks.control_plane``)."""
        if not self.wants("control_plane") or system == "java-dedicated":
            return
        metrics: dict[str, Any] = {
            "workers": self.s.control_plane_workers,
            "concurrency": self.s.control_plane_concurrency,
            "repeats": self.s.control_plane_repeats,
            "connector": control_plane.connector_config(),
            "sizes": [],
        }
        for n in self.s.control_plane_sizes:
            workers = runners.make_workers(
                system,
                self.b,
                self.work_dir / "control-plane" / f"{system}-{n}",
                self.s.control_plane_workers,
            )
            try:
                for w in workers:
                    w.start()
                for w in workers:
                    w.wait_ready(READY_TIMEOUT_S)
                log.info("%s control plane: %d connectors on %d workers", system, n, len(workers))
                figures = control_plane.measure(
                    workers,
                    n,
                    concurrency=self.s.control_plane_concurrency,
                    repeats=self.s.control_plane_repeats,
                    phase_timeout_s=self.s.control_plane_phase_timeout_s,
                    log=lambda line: log.info("%s control plane: %s", system, line),
                )
                leader = _leader_url(self.b, workers[0].group_id)
                figures["leader_worker"] = next(
                    (
                        i
                        for i, w in enumerate(workers)
                        if leader and w.rest_url.rstrip("/") == leader.rstrip("/")
                    ),
                    None,
                )
                metrics["sizes"].append(figures)
            except Exception as exc:
                log.exception("%s control plane failed with %d connectors", system, n)
                tails = "; ".join(f"{w.worker_id}: {w.log_tail(4)}" for w in workers)
                self.put(
                    "control_plane",
                    system,
                    "failed",
                    metrics if metrics["sizes"] else None,
                    f"{n} connectors: {_short(exc)}; log tails: {tails}"[:1500],
                )
                return
            finally:
                for w in workers:
                    w.stop(30)
        self.put("control_plane", system, "ok", metrics)

    # ---- fleet: idle CPU, failover -------------------------------------------------------------

    def _scale_out(self, system: str) -> None:
        """Drain each backlog with a fleet of ``scale_out_workers`` workers, under ``SCALE_OUT_ALIAS``."""
        workers = runners.make_workers(system, self.b, self.work_dir / "scale-out", self.s.scale_out_workers)
        sampler = RssSampler(lambda: [w.pid for w in workers if w.pid], interval=0.5, max_seconds=3 * 3600)
        try:
            for w in workers:
                w.start()
            for w in workers:
                w.wait_ready(READY_TIMEOUT_S)
            sampler.start()
            metrics: dict[str, Any] = {"workers": len(workers)}
            for size, n in self.s.backlog.items():
                topic = f"bench-tp-{size}"
                name = f"bench-so-{size}"
                target = f"{runners.SCALE_OUT_ALIAS}.{topic}"
                workload.create_topics(self.b, [target], self.s.partitions)
                t_create = time.monotonic()
                runners.create_connector(
                    workers[0],
                    name,
                    runners.connector_config(
                        system, self.a, self.b, [topic], self.s.tasks_max, alias=runners.SCALE_OUT_ALIAS
                    ),
                )

                def check_all() -> None:
                    for w in workers:
                        w.check_alive()

                drained = _drain(
                    lambda: [w.pid for w in workers if w.pid],
                    self.b,
                    target,
                    n,
                    self.s.record_size[size],
                    t_create,
                    self.s.drain_timeout_s,
                    check_all,
                )
                tasks = runners.running_tasks(workers[0], name, None) or {}
                drained["tasks_per_worker"] = sorted(Counter(tasks.values()).values(), reverse=True)
                metrics[size] = drained
                log.info("%s scale-out %s: %s", system, size, drained)
                runners.delete_connector(workers[0], name)
            peak = sampler.stop()
            if peak:
                metrics["peak_rss_mb_total"] = round(sum(peak.values()), 1)
            self.put("scale_out", system, "ok", metrics)
        except Exception as exc:
            log.exception("%s scale-out failed", system)
            self._failed("scale_out", system, exc, workers[0])
        finally:
            sampler.stop()
            for w in workers:
                w.stop(20)

    def _fleet(self, system: str) -> None:
        extra = {"scheduled.rebalance.max.delay.ms": self.s.rebalance_delay_ms}
        workers = runners.make_workers(
            system, self.b, self.work_dir / "fleet", self.s.failover_workers, extra
        )
        source = f"bench-fo-{runners.ALIASES[system]}"
        target = runners.remote_topic(system, source)
        producer = workload.RateProducer(self.a, source, size=100)
        current = "resources"
        try:
            workload.create_topics(self.a, [source], self.s.partitions)
            workload.create_topics(self.b, [target], self.s.partitions)
            for w in workers:
                w.start()
            for w in workers:
                w.wait_ready(READY_TIMEOUT_S)
            runners.create_connector(
                workers[0],
                "bench-fo",
                runners.connector_config(system, self.a, self.b, [source], self.s.tasks_max),
            )
            tasks = runners.wait_running(workers[0], "bench-fo", None, RUNNING_TIMEOUT_S)
            pids = [w.pid for w in workers if w.pid]
            time.sleep(3.0)
            cpu0 = total_cpu_seconds(pids)
            time.sleep(self.s.idle_window_s)
            cpu1 = total_cpu_seconds(pids)
            rss = [rss_mb(p) for p in pids]
            if cpu0 is None or cpu1 is None or any(r is None for r in rss):
                raise RuntimeError("a fleet worker exited during the idle window")
            self._resources(
                system,
                idle_fleet_workers=len(pids),
                idle_window_s=self.s.idle_window_s,
                idle_fleet_cpu_percent=round((cpu1 - cpu0) / self.s.idle_window_s * 100, 2),
                idle_rss_mb_mean=round(sum(r for r in rss if r) / len(rss), 1),
                idle_rss_mb=[round(r, 1) for r in rss if r],
            )
            current = "failover"
            if not self.wants("failover"):
                return
            delay_s = self.s.rebalance_delay_ms / 1000
            producer.start_background(self.s.failover_rate, self.s.failover_pre_kill_s + delay_s + 180)
            time.sleep(self.s.failover_pre_kill_s)
            _wait_first_record(self.b, target, 30.0)
            tasks = runners.running_tasks(workers[0], "bench-fo", None) or tasks
            counts: dict[str, int] = {}
            for wid in tasks.values():
                counts[wid] = counts.get(wid, 0) + 1
            connector_host = _connector_worker(workers[0], "bench-fo")
            leader_url = _leader_url(self.b, workers[0].group_id)
            victim_id = _pick_victim(counts, workers, leader_url)
            victim = next(w for w in workers if w.worker_id == victim_id)
            survivors = [w for w in workers if w is not victim]
            t_kill = time.monotonic()
            victim.kill()
            runners.wait_running(
                survivors[0],
                "bench-fo",
                len(tasks),
                delay_s + RUNNING_TIMEOUT_S,
                live={w.worker_id for w in survivors},
            )
            recovery = time.monotonic() - t_kill
            log.info("%s failover: all tasks RUNNING again %.2fs after kill -9", system, recovery)
            time.sleep(self.s.failover_post_recovery_s)
            produced = producer.stop_background()
            _wait_caught_up(self.a, source, self.b, target, 120.0)
            src = workload.read_all(self.a, source)
            tgt = workload.read_all(self.b, target)
            lost = len(set(src.timestamps) - set(tgt.timestamps))
            self.put(
                "failover",
                system,
                "ok",
                {
                    "recovery_s": round(recovery, 3),
                    "records_produced": produced,
                    "source_records": src.records,
                    "target_records": tgt.records,
                    "records_lost": lost,
                    "duplicates": tgt.duplicates,
                    "killed_worker_tasks": counts[victim_id],
                    "killed_worker_ran_connector": connector_host == victim_id,
                    "killed_worker_was_leader": None
                    if leader_url is None
                    else leader_url.rstrip("/") == victim.rest_url.rstrip("/"),
                    "tasks": len(tasks),
                    "workers": len(workers),
                    "scheduled_rebalance_max_delay_ms": self.s.rebalance_delay_ms,
                    "input_rate": self.s.failover_rate,
                },
            )
        except Exception as exc:
            log.exception("%s fleet session failed in %s", system, current)
            if current == "resources":
                self._resources(system, failed=_short(exc))
            self.put(
                "failover", system, "failed", reason=f"{_short(exc)}; log tail: {workers[0].log_tail(8)}"
            )
        finally:
            try:
                producer.stop_background(10)
            except Exception:
                log.debug("producer already failed", exc_info=True)
            for w in workers:
                w.stop(20)

    # ---- Java dedicated mode: throughput (and its start-up to first record) --------------------

    def _dedicated(self) -> None:
        system = "java-dedicated"
        if not self.wants("throughput", "resources"):
            return  # its start-up figure comes from the 100 B drain, which needs the backlog
        tp: dict[str, Any] = {}
        peak = 0.0
        try:
            for size, n in self.s.backlog.items():
                topic = f"bench-tp-{size}"
                mm2 = runners.make_dedicated(
                    self.a, self.b, self.work_dir / f"dedicated-{size}", [topic], self.s.tasks_max
                )
                sampler = RssSampler(_pids_of(mm2), interval=0.5, max_seconds=3600)
                try:
                    t0 = time.monotonic()
                    mm2.start()
                    sampler.start()
                    tp[size] = _drain(
                        _pids_of(mm2),
                        self.b,
                        runners.remote_topic(system, topic),
                        n,
                        self.s.record_size[size],
                        t0,
                        self.s.drain_timeout_s + 120,
                        mm2.check_alive,
                    )
                    tp[size]["wall_s_measured_from"] = "process_start"
                    if size == "100b" and tp[size].get("first_record_after_s") is not None:
                        self.put(
                            "startup",
                            system,
                            "ok",
                            {
                                "rest_ready_s": None,
                                "tasks_running_s": None,
                                "first_record_s": tp[size]["first_record_after_s"],
                            },
                        )
                    log.info("%s throughput %s: %s", system, size, tp[size])
                finally:
                    peak = max([peak, *sampler.stop().values()])
                    mm2.stop(20)
            self.put("throughput", system, "ok", tp)
            self._resources(system, peak_rss_mb=round(peak, 1))
        except Exception as exc:
            log.exception("java-dedicated failed")
            self.put("throughput", system, "failed", tp or None, _short(exc))
            self._resources(system, failed=_short(exc))
        if "startup" in self.scenarios and system not in self.scenarios["startup"]["systems"]:
            self.put("startup", system, "failed", reason="no first record measured")


def _connector_worker(worker: ConnectWorkerProcess, name: str) -> str | None:
    status, body = worker.rest("GET", f"/connectors/{name}/status", timeout=5)
    return body["connector"]["worker_id"] if status == 200 else None


def _pick_victim(counts: dict[str, int], workers: list[ConnectWorkerProcess], leader_url: str | None) -> str:
    """The worker to kill: a follower hosting the most tasks (the leader only when no follower hosts any).

    Killing the leader takes a different path in the incremental cooperative protocol (the new leader
    holds no previous assignment, so lost tasks are reassigned without the scheduled delay); killing a
    follower exercises ``scheduled.rebalance.max.delay.ms`` and keeps runs comparable.
    """
    leader = next(
        (w.worker_id for w in workers if leader_url and w.rest_url.rstrip("/") == leader_url.rstrip("/")),
        None,
    )
    followers = {wid: n for wid, n in counts.items() if wid != leader}
    pool = followers or counts
    return max(pool, key=lambda k: pool[k])


def _leader_url(bootstrap: str, group: str) -> str | None:
    try:
        return group_leader_url(bootstrap, group)
    except Exception:
        log.debug("could not read the group leader", exc_info=True)
        return None


def _pids_of(process: Any) -> Callable[[], list[int]]:
    return lambda: [process.pid] if process.pid else []


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) < 600 else text[:600] + "..."


def _wait_first_record(bootstrap: str, topic: str, timeout: float) -> float:
    """Monotonic time at which ``topic`` first holds a record (polled every 50 ms)."""
    watcher = workload.OffsetWatcher(bootstrap, topic)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if watcher.count() > 0:
                return time.monotonic()
            time.sleep(0.05)
    finally:
        watcher.close()
    raise TimeoutError(f"no record reached {topic} within {timeout:.0f}s")


def _wait_caught_up(source: str, src_topic: str, target: str, tgt_topic: str, timeout: float) -> None:
    """Wait until the target topic holds at least as many records as the source (bounded)."""
    want = workload.end_offset_total(source, src_topic)
    watcher = workload.OffsetWatcher(target, tgt_topic)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and watcher.count() < want:
            time.sleep(0.25)
    finally:
        watcher.close()


def _drain(
    pids: Callable[[], list[int]],
    bootstrap: str,
    topic: str,
    records: int,
    record_size: int,
    t_create: float,
    timeout: float,
    check_alive: Callable[[], None],
) -> dict[str, Any]:
    """Poll the target topic until it holds ``records``; rate and CPU from the first record seen to the last."""
    watcher = workload.OffsetWatcher(bootstrap, topic)
    first: tuple[float, int, float] | None = None
    cpu_at_create = total_cpu_seconds(pids()) or 0.0
    try:
        deadline = time.monotonic() + timeout
        count = 0
        while time.monotonic() < deadline:
            check_alive()
            count = watcher.count()
            now = time.monotonic()
            if first is None and count > 0:
                cpu = total_cpu_seconds(pids())
                first = (now, count, cpu if cpu is not None else float("nan"))
            if count >= records:
                break
            time.sleep(0.2)
        else:
            raise TimeoutError(f"{topic} holds {count} of {records} records after {timeout:.0f}s")
        done = time.monotonic()
        cpu_done = total_cpu_seconds(pids())
    finally:
        watcher.close()
    assert first is not None
    t_first, c_first, cpu_first = first
    window = done - t_first
    moved = count - c_first
    measured_from = "first_record"
    if moved < records // 2:
        # The backlog was mostly mirrored before the first poll saw it: measure from creation instead.
        window, moved, measured_from = done - t_create, count, "connector_creation"
        cpu_first = cpu_at_create
    rps = rate(moved, window)
    cpu = None if cpu_done is None else cpu_done - cpu_first
    return {
        "records": records,
        "target_records": count,
        "records_per_s": None if rps is None else round(rps, 1),
        "mb_per_s": None if rps is None else round(rps * record_size / 1e6, 3),
        "cpu_s_per_million": None if cpu is None else _round(cpu_seconds_per_million(cpu, moved)),
        "measured_records": moved,
        "measured_window_s": round(window, 3),
        "measured_from": measured_from,
        "first_record_after_s": round(t_first - t_create, 3),
        "wall_s": round(done - t_create, 3),
    }


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)
