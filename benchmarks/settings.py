"""The sizes of one benchmark run: ``quick`` (about ten minutes on a 2-core machine) or ``full``.

High-latency link: ``wan_delay_ms`` of delay each way between the connectors and the source cluster.
Exactly-once: a backlog of ``eos_backlog`` records of ``eos_record_size`` bytes per transaction
boundary, ``transaction.boundary.interval.ms=eos_interval_ms`` for ``interval``; latency at the first of
``latency_rates``.
Checkpoint lag: ``checkpoint_samples`` commits, each after ``checkpoint_records_per_sample`` new
records, with the emit and group-offset sync intervals given to both systems' checkpoint connectors.
Metrics cost: how many times each side (recording metrics or not) drains each backlog
(``metrics_cost_rounds``).
Audit at scale: the Spark flow audit of each of ``audit_sizes`` mirrored records of ``audit_record_size``
bytes in ``audit_partitions`` partitions, driver and executor heaps as given, each audit bounded by
``audit_timeout_s``.
Profile: py-spy's sampling rate. Event loop: how many times each loop's worker drains each backlog
(``event_loop_rounds``; the quick backlogs drain in seconds, so they are drained more often). Control plane: a fresh fleet of ``control_plane_workers`` per size in
``control_plane_sizes`` (connectors), ``control_plane_concurrency`` REST writes in flight, each
listing GET repeated ``control_plane_repeats`` times, every phase bounded by
``control_plane_phase_timeout_s``.
Cutover: ``cutover_runs`` cutovers per ``--quiet`` setting of ``cutover_quiet_s`` at ``cutover_rate``
records/s with ``cutover_groups`` groups (``benchmarks.cutover``).
Many partitions: ``many_partitions_topics`` topics of ``partitions`` partitions (one record each) copied
by one worker, then ``many_partitions_added`` more topics added on the source; every wait bounded by
``drain_timeout_s``, idle figures over ``idle_window_s``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SCENARIOS = (
    "limit",
    "throughput",
    "latency",
    "resources",
    "startup",
    "failover",
    "checkpoint_lag",
    "scale_out",
    "event_loop",
    "profile",
    "control_plane",
    "exactly_once",
    "wan",
    "compressed",
    "metrics_cost",
    "audit_scale",
    "many_partitions",
    "group_sync",
    "cutover",
)


@dataclass(frozen=True)
class BenchSettings:
    mode: str
    partitions: int = 8
    tasks_max: int = 4
    backlog: dict[str, int] = field(default_factory=dict)
    record_size: dict[str, int] = field(default_factory=lambda: {"100b": 100, "1kb": 1024})
    limit_records: dict[str, int] = field(default_factory=dict)
    latency_rates: tuple[int, ...] = ()
    latency_warmup_s: float = 5.0
    latency_duration_s: float = 30.0
    latency_record_size: int = 100
    startup_backlog: int = 1000
    failover_rate: int = 500
    failover_workers: int = 3
    failover_pre_kill_s: float = 5.0
    failover_post_recovery_s: float = 5.0
    rebalance_delay_ms: int = 30000
    idle_window_s: float = 30.0
    drain_timeout_s: float = 900.0
    java_dedicated: bool = True
    checkpoint_samples: int = 10
    checkpoint_records_per_sample: int = 5
    emit_checkpoints_interval_s: int = 1
    sync_group_offsets_interval_s: int = 1
    profile_rate_hz: int = 100
    profile_native: bool = False
    """py-spy's ``--native``: C frames (uvloop, the socket and buffer calls) in the profile too."""
    scale_out_workers: int = 2
    event_loop_rounds: int = 2
    control_plane_sizes: tuple[int, ...] = (300, 1000)
    control_plane_workers: int = 3
    control_plane_concurrency: int = 8
    control_plane_repeats: int = 20
    control_plane_phase_timeout_s: float = 900.0
    eos_backlog: int = 300_000
    eos_record_size: int = 1024
    eos_interval_ms: int = 1000
    wan_delay_ms: int = 20
    metrics_cost_rounds: int = 3
    audit_sizes: tuple[int, ...] = (1_000_000, 10_000_000)
    audit_partitions: int = 4
    audit_record_size: int = 100
    audit_driver_memory: str = "1g"
    audit_executor_memory: str = "1g"
    backlog_timestamps: str = "CreateTime"
    """``message.timestamp.type`` of the backlog source topics (``bench-tp-*`` and the compressed
    scenario's): Kafka's default, ``CreateTime``, which lets a mirror copy batches as they are;
    ``LogAppendTime`` batches must be re-stamped record by record (pyconnect's raw path does it for
    uncompressed batches without decoding them, compressed ones take its record path)."""
    audit_timeout_s: float = 3600.0
    broker_heap: str = "2g"
    """Max heap of each benchmark broker: the many-partitions scenario puts about 9,000 partitions on
    each cluster, which a 512 MB broker (the test clusters' default) does not survive."""
    many_partitions_topics: int = 1000
    many_partitions_added: int = 100
    cutover_runs: int = 5
    """Cutovers per ``--quiet`` setting (each on a fresh topic and fresh groups)."""
    cutover_quiet_s: tuple[float, ...] = (1.0, 5.0)
    cutover_rate: int = 5000
    cutover_groups: int = 10
    cutover_partitions: int = 4
    cutover_load_s: float = 20.0
    cutover_after_s: float = 3.0
    cutover_warmup_runs: int = 1
    """Runs first on the fresh brokers, listed but left out of the percentiles (the brokers' JIT warm-up)."""
    cutover_kill_every: int = 2
    """Every this-many-th run (over the whole series) is killed once and resumed; 0: none."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def quick() -> BenchSettings:
    return BenchSettings(
        mode="quick",
        backlog={"100b": 400_000, "1kb": 100_000},
        limit_records={"100b": 500_000, "1kb": 100_000},
        latency_rates=(500, 2000),
        latency_warmup_s=4.0,
        latency_duration_s=15.0,
        rebalance_delay_ms=10000,
        idle_window_s=10.0,
        drain_timeout_s=240.0,
        checkpoint_samples=8,
        event_loop_rounds=4,
        control_plane_sizes=(100,),
        control_plane_repeats=10,
        control_plane_phase_timeout_s=300.0,
        eos_backlog=50_000,
        metrics_cost_rounds=6,
        audit_sizes=(100_000,),
        audit_timeout_s=900.0,
        many_partitions_topics=100,
        many_partitions_added=20,
        cutover_runs=2,
        cutover_quiet_s=(1.0,),
        cutover_load_s=10.0,
    )


def full() -> BenchSettings:
    return BenchSettings(
        mode="full",
        backlog={"100b": 2_000_000, "1kb": 500_000},
        limit_records={"100b": 5_000_000, "1kb": 1_000_000},
        latency_rates=(1000, 5000, 10000),
        latency_warmup_s=30.0,
        latency_duration_s=60.0,
        failover_rate=1000,
        rebalance_delay_ms=30000,
        idle_window_s=60.0,
        drain_timeout_s=1800.0,
        checkpoint_samples=20,
    )
