"""Applying the nemesis's faults to real processes, and healing them.

:class:`FaultInjector` owns nothing it did not start: it acts on the run's worker processes and broker
nodes (by PID, through their handles) and on the target cluster's client quotas. Each kind is one
:class:`FaultKind` (``apply`` returns what it resolved, ``heal`` undoes it), so network faults plug in
by registering one more kind.

- ``worker-kill``: kill -9 of a worker; heal: start it again (same worker id, port and config) and wait
  (bounded) until it answers REST.
- ``worker-pause``: SIGSTOP past the session timeout; heal: SIGCONT (a zombie that wakes up).
- ``broker-kill``: kill -9 of one node of cluster A or B: the active KRaft controller (asked with
  Kafka's ``MetadataQuorumCommand``), the leader of an internal topic's partition (Connect's
  config/offset/status and the checkpoints topic on B, the offset-syncs topic on A), or any node;
  heal: start it on its data directory. The next broker fault on that cluster first waits (bounded)
  until every node sees every broker again.
- ``slow-target``: ``producer_byte_rate`` as the default client quota of cluster B (Kafka's
  ``ConfigCommand``); heal: delete it.
- ``network-partition``: drop, blackhole or delay on one worker's network route to one cluster (fault
  proxies of :mod:`pyconnect.testing.network_routes`; available when the clusters were started with a
  route per worker, see :func:`route_name`); heal: pass-through again.

``states`` says which workers are down or frozen (and since when a state last changed), so
observers do not count a frozen worker's silence as the REST API failing.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pyconnect.kafka.topic_reads import partition_leaders
from pyconnect.testing.chaos.nemesis import (
    BROKER_KILL,
    PARTITION,
    SLOW_TARGET,
    WORKER_KILL,
    WORKER_PAUSE,
    WORKER_RESTART,
    Fault,
)
from pyconnect.testing.connect_worker import ConnectWorkerProcess
from pyconnect.testing.kafka import BrokerNode, KafkaCluster

JAVA_TOOL_TIMEOUT_S = 60.0
WORKER_READY_S = 90.0
WORKER_STOP_S = 30.0
"""A clean stop that takes longer is finished with SIGKILL."""
BROKER_READY_S = 90.0


class FaultKind(Protocol):
    def apply(self, fault: Fault) -> dict[str, Any]: ...

    def heal(self, fault: Fault, applied: dict[str, Any]) -> float:
        """Undo the fault; returns the monotonic time of the healing act (the restart, SIGCONT or quota
        removal), from which recovery is measured, even when ``heal`` then waits for readiness."""
        ...


@dataclass
class WorkerStates:
    """Which workers are unavailable, and a generation per worker bumped on every change (thread-safe):
    an observer's call counts only when its worker stayed available and unchanged throughout."""

    count: int
    _down: set[int] = field(default_factory=set)
    _generation: list[int] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._generation = [0] * self.count

    def set_down(self, index: int, down: bool) -> None:
        with self._lock:
            (self._down.add if down else self._down.discard)(index)
            self._generation[index] += 1

    def snapshot(self, index: int) -> tuple[bool, int]:
        """(available, generation) of worker ``index``."""
        with self._lock:
            return index not in self._down, self._generation[index]

    def available(self) -> list[int]:
        with self._lock:
            return [i for i in range(self.count) if i not in self._down]


@dataclass
class WorkerKill:
    workers: Sequence[ConnectWorkerProcess]
    states: WorkerStates

    def apply(self, fault: Fault) -> dict[str, Any]:
        index = int(fault.target["worker"]) % len(self.workers)
        worker = self.workers[index]
        self.states.set_down(index, True)
        pid = worker.pid
        self._take_down(worker)
        return {"worker": index, "worker_id": worker.worker_id, "pid": pid}

    def _take_down(self, worker: ConnectWorkerProcess) -> None:
        worker.kill()

    def heal(self, fault: Fault, applied: dict[str, Any]) -> float:
        index = applied["worker"]
        worker = self.workers[index]
        worker.start()
        healed = time.monotonic()
        worker.wait_ready(WORKER_READY_S, healthy=False)
        self.states.set_down(index, False)
        return healed


@dataclass
class WorkerRestart(WorkerKill):
    """A clean restart: SIGTERM (the worker stops its tasks, commits and leaves its group, bounded by
    ``WORKER_STOP_S``), then the same worker starts again at heal."""

    def _take_down(self, worker: ConnectWorkerProcess) -> None:
        worker.stop(WORKER_STOP_S)


@dataclass
class WorkerPause:
    workers: Sequence[ConnectWorkerProcess]
    states: WorkerStates

    def apply(self, fault: Fault) -> dict[str, Any]:
        index = int(fault.target["worker"]) % len(self.workers)
        worker = self.workers[index]
        if worker.pid is None or not worker.running:
            raise RuntimeError(f"worker {index} is not running: cannot pause it")
        self.states.set_down(index, True)
        os.kill(worker.pid, signal.SIGSTOP)
        return {"worker": index, "worker_id": worker.worker_id, "pid": worker.pid}

    def heal(self, fault: Fault, applied: dict[str, Any]) -> float:
        os.kill(applied["pid"], signal.SIGCONT)
        healed = time.monotonic()
        self.workers[applied["worker"]].wait_ready(WORKER_READY_S, healthy=False)
        self.states.set_down(applied["worker"], False)
        return healed


def run_java_tool(cluster: KafkaCluster, main_class: str, *args: str) -> str:
    """Run one of Kafka's command-line tools from the cluster's distribution; its stdout, or
    RuntimeError with its output when it fails (bounded in time)."""
    cmd = cluster.dist.java_command(main_class, *args, heap="256m")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=JAVA_TOOL_TIMEOUT_S, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{main_class} {' '.join(args)} failed: {proc.stdout}{proc.stderr}")
    return proc.stdout


def active_controller(cluster: KafkaCluster) -> int:
    """The node id of the cluster's active KRaft controller (the quorum leader)."""
    out = run_java_tool(
        cluster,
        "org.apache.kafka.tools.MetadataQuorumCommand",
        "--bootstrap-server",
        cluster.bootstrap_servers,
        "describe",
        "--status",
    )
    found = re.search(r"LeaderId:\s+(\d+)", out)
    if not found:
        raise RuntimeError(f"no LeaderId in the quorum status of {cluster.alias}: {out}")
    return int(found.group(1))


@dataclass
class BrokerKill:
    clusters: Mapping[str, KafkaCluster]
    internal_topics: Mapping[str, Sequence[str]]
    """cluster alias -> the internal topics whose partition leaders a fault may aim at."""
    rng: random.Random
    restarting: dict[str, BrokerNode] = field(default_factory=dict)
    """cluster alias -> the node restarted last, until the cluster is seen whole again."""

    def _choose(self, cluster: KafkaCluster, role: str) -> tuple[BrokerNode, str]:
        if role == "controller":
            try:
                return cluster.node(active_controller(cluster)), "active controller"
            except (RuntimeError, KeyError, subprocess.TimeoutExpired) as exc:
                role_note = f"any (controller unknown: {str(exc).splitlines()[0][:120]})"
                return self.rng.choice(cluster.nodes), role_note
        if role == "internal-leader":
            topics = list(self.internal_topics.get(cluster.alias, ()))
            try:
                leaders = asyncio.run(partition_leaders(cluster.bootstrap_servers, topics)) if topics else {}
            except Exception as exc:
                leaders, note = {}, f"{type(exc).__name__}"
            else:
                note = "no leader found"
            if leaders:
                (topic, partition), leader = self.rng.choice(sorted(leaders.items()))
                return cluster.node(leader), f"leader of {topic}-{partition}"
            return self.rng.choice(cluster.nodes), f"any ({note})"
        return self.rng.choice(cluster.nodes), "any"

    def wait_whole(self, cluster: KafkaCluster) -> None:
        """Before hitting a cluster again, wait (bounded) until its restarted node is back in every
        node's metadata: two nodes down at once would cost the KRaft quorum, which no promise covers."""
        if self.restarting.pop(cluster.alias, None) is not None:
            cluster.wait_ready(BROKER_READY_S)

    def apply(self, fault: Fault) -> dict[str, Any]:
        cluster = self.clusters[fault.target["cluster"]]
        self.wait_whole(cluster)
        node, why = self._choose(cluster, fault.target.get("role", "any"))
        pid = node.pid
        node.kill()
        return {"cluster": cluster.alias, "node": node.node_id, "pid": pid, "chosen_as": why}

    def heal(self, fault: Fault, applied: dict[str, Any]) -> float:
        cluster = self.clusters[applied["cluster"]]
        node = cluster.node(applied["node"])
        node.start()
        self.restarting[cluster.alias] = node
        return time.monotonic()


@dataclass
class SlowTarget:
    clusters: Mapping[str, KafkaCluster]

    def _config(self, cluster: KafkaCluster, *change: str) -> None:
        run_java_tool(
            cluster,
            "kafka.admin.ConfigCommand",
            "--bootstrap-server",
            cluster.bootstrap_servers,
            "--alter",
            *change,
            "--entity-type",
            "clients",
            "--entity-default",
        )

    def apply(self, fault: Fault) -> dict[str, Any]:
        cluster = self.clusters[fault.target.get("cluster", "B")]
        rate = int(fault.target.get("producer_byte_rate", 16384))
        self._config(cluster, "--add-config", f"producer_byte_rate={rate}")
        return {"cluster": cluster.alias, "producer_byte_rate": rate}

    def heal(self, fault: Fault, applied: dict[str, Any]) -> float:
        self._config(self.clusters[applied["cluster"]], "--delete-config", "producer_byte_rate")
        return time.monotonic()


def route_name(worker: int) -> str:
    """The network route (:mod:`pyconnect.testing.network_routes`) worker ``worker`` uses on each cluster."""
    return f"w{worker}"


@dataclass
class NetworkPartition:
    """Cuts or slows one worker's route to one cluster (every broker at once): ``drop`` resets its
    connections and refuses new ones, ``blackhole`` holds every byte (half-open connections), ``delay``
    adds ``delay_s`` each way. The worker's REST API stays reachable (it is not on the route)."""

    clusters: Mapping[str, KafkaCluster]
    workers: Sequence[ConnectWorkerProcess]

    def apply(self, fault: Fault) -> dict[str, Any]:
        index = int(fault.target["worker"]) % len(self.workers)
        cluster = self.clusters[fault.target["cluster"]]
        route = cluster.route(route_name(index))
        mode = fault.target.get("mode", "drop")
        if mode == "drop":
            route.drop()
        elif mode == "blackhole":
            route.blackhole()
        elif mode == "delay":
            route.delay(float(fault.target.get("delay_s", 0.3)))
        else:
            raise ValueError(f"network fault mode {mode!r}: expected drop, blackhole or delay")
        return {
            "worker": index,
            "worker_id": self.workers[index].worker_id,
            "cluster": cluster.alias,
            "mode": mode,
        }

    def heal(self, fault: Fault, applied: dict[str, Any]) -> float:
        self.clusters[applied["cluster"]].route(route_name(applied["worker"])).heal()
        return time.monotonic()


@dataclass
class AppliedFault:
    """A fault as it happened: ``started_at`` once it took effect (after resolving its target),
    ``healed_at`` at the healing act (monotonic clock)."""

    fault: Fault
    applied: dict[str, Any]
    started_at: float
    healed_at: float | None = None
    error: str | None = None


class FaultInjector:
    """Applies and heals faults on the run's processes; one fault at a time (the nemesis never overlaps)."""

    def __init__(
        self,
        clusters: Mapping[str, KafkaCluster],
        workers: Sequence[ConnectWorkerProcess],
        internal_topics: Mapping[str, Sequence[str]],
        seed: int,
    ) -> None:
        self.states = WorkerStates(len(workers))
        self.kinds: dict[str, FaultKind] = {
            WORKER_KILL: WorkerKill(workers, self.states),
            WORKER_RESTART: WorkerRestart(workers, self.states),
            WORKER_PAUSE: WorkerPause(workers, self.states),
            BROKER_KILL: BrokerKill(clusters, internal_topics, random.Random(seed)),
            SLOW_TARGET: SlowTarget(clusters),
        }
        if all(route_name(i) in c.routes for c in clusters.values() for i in range(len(workers))):
            self.kinds[PARTITION] = NetworkPartition(clusters, workers)
        self.open: AppliedFault | None = None

    def supports(self, kind: str) -> bool:
        return kind in self.kinds

    def apply(self, fault: Fault) -> AppliedFault:
        if fault.kind not in self.kinds:
            raise ValueError(f"fault kind {fault.kind!r} is not available in this run")
        resolved = self.kinds[fault.kind].apply(fault)
        self.open = AppliedFault(fault, resolved, time.monotonic())
        return self.open

    def heal(self, applied: AppliedFault) -> None:
        applied.healed_at = self.kinds[applied.fault.kind].heal(applied.fault, applied.applied)
        self.open = None

    def release(self) -> None:
        """Heal the fault still open, if any (a run that fails midway); errors are swallowed after one
        attempt, since the caller is already unwinding and stops every process next."""
        if self.open is not None:
            applied, self.open = self.open, None
            try:
                self.kinds[applied.fault.kind].heal(applied.fault, applied.applied)
            except Exception:
                pass
