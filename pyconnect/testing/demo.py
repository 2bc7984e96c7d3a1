"""``make demo``: mirror a live topic from cluster A to cluster B with a three-worker pyconnect fleet.

Steps, as an operator would take them: start two local Kafka clusters; start three
``pyconnect distributed`` workers whose Connect group lives on B; create the mirror through REST
with the connector JSON of the Red Hat disaster-recovery guide (IdentityReplicationPolicy, offset
syncs on the target, heartbeat replication off, ``replication.factor: -1``); produce to A; show the
records arriving on B. One live line reports records mirrored, lag and replication latency until
Ctrl-C (or ``--seconds``), which stops everything cleanly: producer, workers (committing offsets),
brokers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

from pyconnect.kafka.clients import create_admin
from pyconnect.kafka.topics import TopicSpec, ensure_topic
from pyconnect.kafka.traffic import TrafficCounters, produce_at_rate, tail_and_measure
from pyconnect.testing.kafka import start_clusters, stop_clusters
from pyconnect.testing.worker_process import PyconnectWorker

TOPIC = "orders"
CONNECTOR = "mm2-source"
MAX_SECONDS = 3600.0


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
        await ensure_topic(admin, TopicSpec(TOPIC, 6, 1))
    finally:
        await admin.close()


async def live(
    workers: list[PyconnectWorker], source: str, target: str, rate: float, seconds: float
) -> TrafficCounters:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    produced, mirrored = TrafficCounters(), TrafficCounters()
    jobs = [
        asyncio.create_task(produce_at_rate(source, TOPIC, rate, stop, produced, max_seconds=seconds)),
        asyncio.create_task(tail_and_measure(target, TOPIC, stop, mirrored)),
    ]
    started = time.monotonic()
    summary = ""
    try:
        while not stop.is_set() and time.monotonic() - started < seconds:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)
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
                f"| lag {max(0, produced.produced - mirrored.consumed)} | {latency} | {summary}   "
            )
            sys.stdout.flush()
    finally:
        stop.set()
        outcomes = await asyncio.gather(*jobs, return_exceptions=True)
        for job, outcome in zip(("producer", "consumer"), outcomes, strict=True):
            if isinstance(outcome, Exception):
                say(f"\nThe demo's {job} failed: {outcome}")
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    say("")
    mirrored.produced = produced.produced
    return mirrored


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
    args = parser.parse_args(argv)
    seconds = min(max(args.seconds, 1.0), MAX_SECONDS)
    work = args.dir.resolve()
    shutil.rmtree(work, ignore_errors=True)

    say("Starting two local Kafka clusters, A and B ...")
    clusters = start_clusters(["A", "B"], work / "kafka", die_with_parent=True)
    source, target = clusters["A"].bootstrap_servers, clusters["B"].bootstrap_servers
    say(f"  A: {source}\n  B: {target}")
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
        say(
            f"Producing {args.rate:.0f} records/s to A/{TOPIC}; mirrored records are read from B/{TOPIC}. Ctrl-C stops."
        )
        result = asyncio.run(live(workers, source, target, args.rate, seconds))
        say(f"Produced {result.produced} records to A, {result.consumed} arrived on B so far.")
        say(f"Final state: {task_summary(workers[0])}")
        return 0
    finally:
        say("Stopping the workers (offsets are committed) and the clusters ...")
        for w in workers:
            w.stop(timeout=20)
        stop_clusters(clusters.values())
        say("Stopped.")


if __name__ == "__main__":
    sys.exit(main())
