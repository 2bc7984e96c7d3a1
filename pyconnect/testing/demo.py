"""``make demo``: mirror a live topic from cluster A to cluster B with a three-worker pyconnect fleet.

Steps, as an operator would take them: start two local Kafka clusters; start three
``pyconnect distributed`` workers whose Connect group lives on B; create the mirror through REST
with the connector JSON of the Red Hat disaster-recovery guide (IdentityReplicationPolicy, offset
syncs on the target, heartbeat replication off, ``replication.factor: -1``); produce to A; show the
records arriving on B. One live line reports records mirrored, lag, replication latency and the
group-sync staleness (how many records the application would read again if it moved to B now: B's copy
of its offsets trails its commits on A by the checkpoint and sync intervals) until Ctrl-C (or
``--seconds``), which stops everything cleanly: producer, workers (committing offsets), brokers.

The failover drill (``--failover-after``): the application stops on A; while A keeps taking records, B's
copy of the group's offsets is followed until it is the position the application committed on A (the
offset syncs prove where that lies on B; a checkpoint alone may still stand at the record after the
last sync, short of it); the producer stops, the mirror catches up, A's brokers stop, and the application
resumes on B: it re-reads nothing and loses nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import shutil
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from connectors.mirror.offsets.failover_flow import FailoverFlow
from pyconnect.kafka.clients import create_admin
from pyconnect.kafka.topics import TopicSpec, ensure_topic
from pyconnect.kafka.traffic import (
    TrafficCounters,
    produce_at_rate,
    run_application,
    run_application_on,
    tail_and_measure,
)
from pyconnect.testing import demo_failback as failback
from pyconnect.testing import demo_failover as failover
from pyconnect.testing.kafka import start_clusters, stop_clusters
from pyconnect.testing.worker_process import PyconnectWorker

TOPIC = "orders"
PARTITIONS = 6
CONNECTOR = "mm2-source"
MAX_SECONDS = 3600.0
APP_WAIT_S = 60.0


def connector_json(source: str, target: str, tasks: int) -> dict[str, Any]:
    """The MirrorSourceConnector request of the Red Hat DR guide, pointed at the local clusters."""
    return {
        "name": CONNECTOR,
        "config": {
            "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
            "tasks.max": str(tasks),
            "source.cluster.alias": "A",
            "target.cluster.alias": "B",
            "source.cluster.bootstrap.servers": source,
            "target.cluster.bootstrap.servers": target,
            "topics": TOPIC,
            "replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
            "offset-syncs.topic.location": "target",
            "heartbeats.replication.enabled": "false",
            "replication.factor": "-1",
            "refresh.topics.interval.seconds": "5",
            "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            # Headers byte for byte too: with the worker's default SimpleHeaderConverter a mirrored
            # header's bytes arrive Base64-encoded, in Java as here (dedicated mode defaults to this).
            "header.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        },
    }


def say(text: str) -> None:
    print(text, flush=True)


def task_summary(worker: PyconnectWorker) -> str:
    code, body = worker.rest("GET", f"/connectors/{CONNECTOR}/status", timeout=5)
    if code != 200:
        return "status not available yet"
    running = sum(1 for t in body["tasks"] if t["state"] == "RUNNING")
    return f"connector {body['connector']['state']}, tasks {running}/{len(body['tasks'])} RUNNING"


def tasks_running(worker: PyconnectWorker) -> bool:
    code, body = worker.rest("GET", f"/connectors/{CONNECTOR}/status", timeout=5)
    return code == 200 and bool(body["tasks"]) and all(t["state"] == "RUNNING" for t in body["tasks"])


async def create_source_topic(bootstrap: str) -> None:
    admin = create_admin({"bootstrap.servers": bootstrap})
    await admin.start()
    try:
        await ensure_topic(admin, TopicSpec(TOPIC, PARTITIONS, 1))
    finally:
        await admin.close()


def live_on(elapsed: float, phase_s: float, failover_after: float, read_on_a: set[int]) -> bool:
    """Whether the live phase goes on: for ``phase_s``, and before a drill until the application has read
    records on A (at most ``APP_WAIT_S`` more: a busy machine starts it late)."""
    if elapsed < phase_s:
        return True
    return failover_after > 0 and not read_on_a and elapsed < phase_s + APP_WAIT_S


async def live(
    workers: list[PyconnectWorker],
    source: str,
    target: str,
    rate: float,
    seconds: float,
    failover_after: float,
    fail_a: Callable[[], None],
    drill: Drill,
) -> TrafficCounters:
    """The live phase (one line a second) and, ``failover_after`` seconds in (0: never), the failover
    act. Ctrl-C ends either at once."""
    flow = failover.demo_flow(source, target)
    staleness = SyncStaleness()
    interrupted = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, interrupted.set)
    stop_producing, stop_tail, stop_app = asyncio.Event(), asyncio.Event(), asyncio.Event()
    produced, mirrored = TrafficCounters(), TrafficCounters()
    read_on_a: set[int] = set()
    producer = asyncio.create_task(
        produce_at_rate(source, TOPIC, rate, stop_producing, produced, max_seconds=seconds)
    )
    tail = asyncio.create_task(tail_and_measure(target, TOPIC, stop_tail, mirrored))
    app = asyncio.create_task(run_application(source, TOPIC, failover.GROUP, stop_app, read_on_a))
    follower = asyncio.create_task(staleness.follow(flow, stop_tail))
    started = time.monotonic()
    phase_s = min(seconds, failover_after) if failover_after > 0 else seconds
    summary = ""
    try:
        while not interrupted.is_set() and live_on(
            time.monotonic() - started, phase_s, failover_after, read_on_a
        ):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(interrupted.wait(), 1.0)
            if int(time.monotonic() - started) % 5 == 0 or not summary:
                summary = await asyncio.to_thread(task_summary, workers[0])
            p50, p99 = mirrored.latency_percentile(0.5), mirrored.latency_percentile(0.99)
            latency = (
                f"latency p50 {p50:.0f} ms p99 {p99:.0f} ms"
                if p50 is not None and p99 is not None
                else "latency -"
            )
            sys.stdout.write(
                f"\r{time.monotonic() - started:6.0f}s | produced {produced.produced} | mirrored {mirrored.consumed} "
                f"| lag {max(0, produced.produced - mirrored.consumed)} | {latency} | app on A read {len(read_on_a)} "
                f"| {staleness.text()} | {summary}   "
            )
            sys.stdout.flush()
        say("")
        if failover_after > 0 and not interrupted.is_set():
            act = asyncio.create_task(
                failover_act(
                    flow,
                    produced,
                    mirrored,
                    (stop_app, app),
                    (stop_producing, producer),
                    read_on_a,
                    fail_a,
                    drill,
                )
            )
            waiter = asyncio.create_task(interrupted.wait())
            await asyncio.wait([act, waiter], return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if not act.done():
                say("Interrupted during the failover act.")
                act.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await act
    finally:
        for event in (stop_producing, stop_tail, stop_app):
            event.set()
        outcomes = await asyncio.gather(producer, tail, app, follower, return_exceptions=True)
        jobs = ("producer", "consumer", "application on A", "group-sync follower")
        for job, outcome in zip(jobs, outcomes, strict=True):
            if isinstance(outcome, Exception):
                say(f"The demo's {job} failed: {outcome}")
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    mirrored.produced = produced.produced
    return mirrored


async def failover_act(
    flow: FailoverFlow,
    produced: TrafficCounters,
    mirrored: TrafficCounters,
    app: tuple[asyncio.Event, asyncio.Task[dict[int, int]]],
    producer: tuple[asyncio.Event, asyncio.Task[None]],
    read_on_a: set[int],
    fail_a: Callable[[], None],
    drill: Drill,
) -> failover.Verdict:
    """The drill (see the module docstring): the application on A stops, B's copy of its offsets reaches
    its position while A keeps taking records, the producer stops, the mirror catches up, the mirror is
    cut off while A takes its last records, A fails, ``pyconnect failover execute`` moves the group, and
    the application resumes on B at its offsets there."""
    say(f"Failover drill. The application (group '{failover.GROUP}') on A stops ...")
    app[0].set()
    committed = await app[1]
    say(f"  it read {len(read_on_a)} records on A and committed its position")

    def report(line: str) -> None:
        sys.stdout.write(f"\r  group sync on B: {line}   ")
        sys.stdout.flush()

    await failover.wait_for_synced_group(flow, TOPIC, committed, 120, report)
    say(
        "\r  group sync on B: the group's offsets on B are its position on A, 0 records behind "
        "(MirrorCheckpointConnector, sync.group.offsets.enabled)"
    )
    producer[0].set()
    await producer[1]
    say(f"  A took {produced.produced - len(read_on_a)} more records it has not read; the producer stops")
    for _ in range(120):  # up to 60 s
        if mirrored.consumed >= produced.produced:
            break
        await asyncio.sleep(0.5)
    say(f"  the mirror caught up: {mirrored.consumed} of {produced.produced} records on B")
    say(
        f"The mirror is cut off from A (paused) while A takes {failback.ORPHANS} more records; A fails: cluster "
        "A's brokers stop."
    )
    orphans = await failback.cut_off_and_fail(drill.forward, drill.source, TOPIC, produced.produced, fail_a)
    say(
        f"  A took {orphans} records B never got; the operator stops the mirror ({failback.SOURCE_CONNECTOR})"
    )
    moved = await failback.fail_over(drill.forward, drill.work / "failover-state.json")
    say(f"pyconnect failover execute --group {failover.GROUP} --state failover-state.json: {_moved(moved)}")
    order = await run_application_on(
        flow.target_config["bootstrap.servers"], TOPIC, failover.GROUP, PARTITIONS, 60
    )
    verdict = failover.verdict(produced.produced, read_on_a, order)
    say(
        f"The application resumed on B at its translated offsets: it read {verdict.read_on_b} records there, "
        f"re-read {verdict.reread}, lost {verdict.lost} (of {produced.produced} produced)."
    )
    drill.read_on_a, drill.read_on_b = set(read_on_a), list(order)
    drill.mirrored_upto, drill.orphans = produced.produced, orphans
    return verdict


def _moved(report: dict[str, Any]) -> str:
    groups = report.get("groups", [])
    return ", ".join(f"group {g['group']} {g['status']}" for g in groups if isinstance(g, dict)) or "nothing"


@dataclass
class Drill:
    """What the failover drill leaves for the way back: the forward fleet's worker, A's address, the work
    folder; then what the application read on A and on B, the records B got (sequence numbers below
    ``mirrored_upto``) and the ``orphans`` A took after them."""

    forward: PyconnectWorker
    source: str
    work: Path
    read_on_a: set[int] = field(default_factory=set)
    read_on_b: list[int] = field(default_factory=list)
    mirrored_upto: int = 0
    orphans: int = 0


def way_back(
    drill: Drill, reverse: PyconnectWorker, target: str, restart_a: Callable[[], None], *, audit: bool = True
) -> None:
    """The way back after the drill (pyconnect.testing.demo_failback), and its round-trip verdict;
    ``audit``: the failback ends with its Spark audit."""
    first_on_b = drill.mirrored_upto + drill.orphans
    trip = asyncio.run(
        failback.way_back(
            drill.forward,
            reverse,
            (drill.source, target),
            TOPIC,
            PARTITIONS,
            first_on_b,
            restart_a,
            drill.work,
            say,
            audit=audit,
        )
    )
    orphans = set(range(drill.mirrored_upto, first_on_b))
    verdict = failback.round_trip(
        [*sorted(drill.read_on_a), *drill.read_on_b, *trip.read_on_b_after, *trip.read_on_a_after],
        set(range(drill.mirrored_upto)) | trip.written,
        orphans,
    )
    say(
        f"The failback found {trip.orphans} orphans on A (records A took after the mirror's last copy) and "
        f"copied them to {trip.quarantine} on A for their owners; the forward mirror runs again from A's end."
    )
    say(
        f"The application is back on A: it read {len(trip.read_on_a_after)} records there. Round trip A -> B -> A: "
        f"read {verdict.read}, re-read {verdict.reread}, lost {verdict.lost}, orphans read {verdict.orphans_read}."
    )


class SyncStaleness:
    """The live line's group-sync staleness: the records the application would read again if it resumed on
    B now (``>=`` while the offset syncs prove only a lower bound), measured every ``EVERY_S``."""

    EVERY_S = 2.0

    def __init__(self) -> None:
        self.gap: failover.SyncGap | None = None

    def text(self) -> str:
        gap = self.gap
        if gap is None or gap.behind is None:
            return "group sync on B -"
        return f"group sync on B {'' if gap.proven else '>='}{gap.behind} behind"

    async def follow(self, flow: FailoverFlow, stop: asyncio.Event) -> None:
        """Measure until ``stop`` is set (a measurement that fails leaves the last one)."""
        while not stop.is_set():
            with contextlib.suppress(Exception):
                self.gap = await failover.group_sync_gap(flow, TOPIC)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.EVERY_S)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pyconnect.testing.demo", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--dir", type=Path, default=Path("run/demo"), help="work folder (emptied first)")
    parser.add_argument("--rate", type=float, default=200.0, help="records per second produced to A")
    parser.add_argument(
        "--seconds", type=float, default=MAX_SECONDS, help=f"stop after this long (at most {MAX_SECONDS:.0f})"
    )
    parser.add_argument("--tasks", type=int, default=3, help="tasks.max of the mirror")
    parser.add_argument(
        "--failover-after",
        type=float,
        default=30.0,
        help="seconds of live mirroring before the failover drill (0: no drill, mirror until Ctrl-C)",
    )
    parser.add_argument(
        "--no-audit", action="store_true", help="end the way back without the failback's closing Spark audit"
    )
    args = parser.parse_args(argv)
    # The demo's own clients (producer, tail, the application) retry by themselves while brokers start
    # or A goes away; their connection lines would only drown the story (the workers log to files).
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    seconds = min(max(args.seconds, 1.0), MAX_SECONDS)
    work = args.dir.resolve()
    shutil.rmtree(work, ignore_errors=True)

    say("Starting two local Kafka clusters, A and B ...")
    clusters = start_clusters(["A", "B"], work / "kafka", die_with_parent=True)
    source, target = clusters["A"].bootstrap_servers, clusters["B"].bootstrap_servers
    say(f"  A: {source}\n  B: {target}")
    a_down: list[bool] = []
    workers = [
        PyconnectWorker(target, work / f"worker-{i}", group_id="mirror-demo", die_with_parent=True)
        for i in range(3)
    ]
    try:
        say("Starting a fleet of three pyconnect workers (Connect group 'mirror-demo' on B) ...")
        for w in workers:
            w.start()
        for w in workers:
            w.wait_ready()
            say(f"  worker {w.rest_url} ready")
        asyncio.run(create_source_topic(source))
        say(f"Creating the mirror through REST: POST {workers[1].rest_url}connectors")
        code, body = workers[1].rest("POST", "/connectors", connector_json(source, target, args.tasks))
        if code != 201:
            say(f"  the worker refused the connector ({code}): {body}")
            return 1
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not tasks_running(workers[0]):
            time.sleep(0.5)
        say(f"  {task_summary(workers[0])}")
        code, body = workers[1].rest(
            "POST", "/connectors", failover.checkpoint_connector_json(source, target)
        )
        if code != 201:
            say(f"  the worker refused the checkpoint connector ({code}): {body}")
            return 1
        say(
            f"  and {failover.CHECKPOINT_CONNECTOR}, checkpointing group '{failover.GROUP}' and syncing its offsets to B"
        )
        say(f"Mirror status page: {workers[0].rest_url}mirrors/ui   metrics: {workers[0].rest_url}metrics")
        say(
            f"Producing {args.rate:.0f} records/s to A/{TOPIC}; an application (group '{failover.GROUP}') reads "
            f"it on A; mirrored records are read from B/{TOPIC}. Ctrl-C stops."
        )

        def fail_a() -> None:
            stop_clusters([clusters["A"]])
            a_down.append(True)

        drill = Drill(workers[0], source, work)
        result = asyncio.run(
            live(workers, source, target, args.rate, seconds, args.failover_after, fail_a, drill)
        )
        say(f"Produced {result.produced} records to A, {result.consumed} arrived on B so far.")
        if drill.mirrored_upto:

            def restart_a() -> None:
                clusters["A"].start()
                clusters["A"].wait_ready()
                a_down.clear()

            reverse = PyconnectWorker(
                source, work / "worker-back", group_id="mirror-demo-back", die_with_parent=True
            )
            workers.append(reverse)
            way_back(drill, reverse, target, restart_a, audit=not args.no_audit)
        say(f"Final state: {task_summary(workers[0])}")
        return 0
    finally:
        say("Stopping the workers (offsets are committed) and the clusters ...")
        for w in workers:
            w.stop(timeout=20)
        stop_clusters(c for alias, c in clusters.items() if not (alias == "A" and a_down))
        say("Stopped.")


if __name__ == "__main__":
    sys.exit(main())
