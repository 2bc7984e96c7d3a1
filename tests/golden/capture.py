"""Capture reference bytes and JSON from the Java jars into tests/golden/ (see README.md there).

Run from the repository root::

    .venv/bin/python -m tests.golden.capture                 # every part
    .venv/bin/python -m tests.golden.capture --parts group   # only some: connect, group, mm2

The script starts its own two local KRaft clusters (A and B) in a temporary folder, drives the Java
Connect worker and Java MirrorMaker 2 started from the pinned jars, reads back what they wrote with
aiokafka, and rewrites the data files of the parts it ran. Every wait has a deadline; every process
it started is stopped in a ``finally`` block, the clusters last.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import logging
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.structs import OffsetAndMetadata

from pyconnect.testing.distribution import KAFKA_VERSION, ensure_distribution
from pyconnect.testing.java_reference import JavaConnectWorker, JavaMirrorMaker
from pyconnect.testing.kafka import start_clusters, stop_clusters
from tests.integration.mirror_helpers import SINGLE_BROKER_MM2

GOLDEN_DIR = Path(__file__).resolve().parent
CONNECT_FILE = "connect_internal_topics.json"
GROUP_FILE = "connect_group_protocol.json"
MM2_FILE = "mm2_records.json"

WAIT_S = 90.0
HEARTBEAT_CONNECTOR = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
BYTES_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"

log = logging.getLogger("golden.capture")


# --------------------------------------------------------------------------------------------------
# small helpers


def wait_until(what: str, check: Callable[[], Any], timeout: float = WAIT_S, interval: float = 0.5) -> Any:
    """Call ``check`` until it returns something truthy; TimeoutError naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    last_exc: Exception | None = None
    while True:
        try:
            result = check()
            if result:
                return result
        except (OSError, ValueError, KeyError) as exc:
            last_exc = exc
        if time.monotonic() >= deadline:
            raise TimeoutError(
                f"timed out after {timeout:.0f}s waiting for {what} (last error: {last_exc!r})"
            )
        time.sleep(interval)


def blob(data: bytes | None) -> dict[str, Any] | None:
    """Bytes as base64 plus their UTF-8 text when they are valid UTF-8; None stays None."""
    if data is None:
        return None
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return {"base64": base64.b64encode(data).decode(), "text": text}


async def read_all(bootstrap: str, topic: str, limit_s: float = 30.0) -> list[Any]:
    """Every record of every partition of ``topic``, from the beginning to the current end offsets."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest", group_id=None
    )
    await consumer.start()
    try:
        deadline = time.monotonic() + limit_s
        # An all-topics metadata request: asking for one missing topic could auto-create it.
        cluster = await consumer._client.fetch_all_metadata()
        parts = cluster.partitions_for_topic(topic)
        if not parts:
            return []
        tps = [TopicPartition(topic, p) for p in sorted(parts)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        out: list[Any] = []
        while True:
            positions = {tp: await consumer.position(tp) for tp in tps}
            if all(positions[tp] >= ends[tp] for tp in tps):
                break
            if time.monotonic() >= deadline:
                raise TimeoutError(f"reading {topic} to its end offsets {ends} took over {limit_s:.0f}s")
            batch = await consumer.getmany(timeout_ms=500)
            for records in batch.values():
                out.extend(r for r in records if r.offset < ends[TopicPartition(r.topic, r.partition)])
        out.sort(key=lambda r: (r.partition, r.offset))
        return out
    finally:
        await consumer.stop()


def record_json(r: Any, **extra: Any) -> dict[str, Any]:
    return {
        **extra,
        "topic": r.topic,
        "partition": r.partition,
        "offset": r.offset,
        "timestamp": r.timestamp,
        "timestamp_type": r.timestamp_type,
        "key": blob(r.key),
        "value": blob(r.value),
        "headers": [{"key": k, "value": blob(v)} for k, v in (r.headers or ())],
    }


@dataclass
class TopicRecorder:
    """Reads whole topics again and again; each record is kept once, tagged with the step that first saw it."""

    topics: dict[str, tuple[str, str, str]]  # role -> (cluster alias, bootstrap, topic)
    records: list[dict[str, Any]] = field(default_factory=list)
    seen: set[tuple[str, str, int, int]] = field(default_factory=set)

    def snapshot(self, step: str) -> list[dict[str, Any]]:
        new = []
        for role, (alias, bootstrap, topic) in self.topics.items():
            for r in asyncio.run(read_all(bootstrap, topic)):
                ident = (alias, topic, r.partition, r.offset)
                if ident in self.seen:
                    continue
                self.seen.add(ident)
                new.append(record_json(r, step=step, role=role, cluster=alias))
        self.records.extend(new)
        log.info("step %-22s %d new record(s)", step, len(new))
        return new

    def of(self, role: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r["role"] == role]


def key_texts(records: Iterable[dict[str, Any]]) -> list[str]:
    return [r["key"]["text"] for r in records if r["key"] and r["key"]["text"] is not None]


def write_golden(name: str, data: dict[str, Any]) -> Path:
    path = GOLDEN_DIR / name
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    log.info("wrote %s", path.name)
    return path


# --------------------------------------------------------------------------------------------------
# group protocol


async def describe_group(bootstrap: str, group: str) -> dict[str, Any]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        (response,) = await admin.describe_consumer_groups([group])
    finally:
        await admin.close()
    g = response.groups[0]
    error_code, group_id, state, protocol_type, protocol, members = g[:6]
    return {
        "error_code": error_code,
        "group_id": group_id,
        "state": state,
        "protocol_type": protocol_type,
        "protocol": protocol,
        "describe_groups_version": response.API_VERSION,
        "members": [
            {
                "member_id": m[0],
                "client_id": m[1],
                "client_host": m[2],
                "metadata_hex": m[3].hex(),
                "metadata_base64": base64.b64encode(m[3]).decode(),
                "assignment_hex": m[4].hex(),
                "assignment_base64": base64.b64encode(m[4]).decode(),
            }
            for m in members
        ],
    }


def stable_group(bootstrap: str, group: str, members: int) -> dict[str, Any]:
    """Describe ``group`` until it is Stable with ``members`` members and two reads 3 s apart agree."""

    def settled() -> dict[str, Any] | None:
        first = asyncio.run(describe_group(bootstrap, group))
        if first["state"] != "Stable" or len(first["members"]) != members:
            return None
        time.sleep(3)
        second = asyncio.run(describe_group(bootstrap, group))
        return second if second == first else None

    return wait_until(f"group {group} stable with {members} member(s)", settled)


def group_capture(
    setting: str, workers: list[JavaConnectWorker], bootstrap: str, note: str
) -> dict[str, Any]:
    desc = stable_group(bootstrap, workers[0].group_id, len(workers))
    desc.update(
        connect_protocol_setting=setting,
        note=note,
        worker_urls=[w.rest_url for w in workers],
    )
    return desc


# --------------------------------------------------------------------------------------------------
# Connect worker scenario


def heartbeat_connector_config(bootstrap: str, **overrides: str) -> dict[str, str]:
    config = {
        "connector.class": HEARTBEAT_CONNECTOR,
        "tasks.max": "1",
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": bootstrap,
        "target.cluster.bootstrap.servers": bootstrap,
        "heartbeats.topic.replication.factor": "1",
        "emit.heartbeats.interval.seconds": "1",
        "key.converter": BYTES_CONVERTER,
        "value.converter": BYTES_CONVERTER,
    }
    config.update(overrides)
    return config


@dataclass
class RestLog:
    worker: JavaConnectWorker
    calls: list[dict[str, Any]] = field(default_factory=list)
    step: str = ""

    def __call__(self, method: str, path: str, body: Any = None, expect: Iterable[int] = (200,)) -> Any:
        status, answer = self.worker.rest(method, path, body)
        self.calls.append(
            {
                "step": self.step,
                "method": method,
                "path": path,
                "request": body,
                "status": status,
                "response": answer,
            }
        )
        if status not in tuple(expect):
            raise RuntimeError(f"{method} {path} answered {status}: {answer}")
        return answer


def connector_state(worker: JavaConnectWorker, name: str) -> tuple[str, list[str]] | None:
    status, body = worker.rest("GET", f"/connectors/{name}/status")
    if status != 200:
        return None
    return body["connector"]["state"], [t["state"] for t in body.get("tasks", [])]


def wait_state(worker: JavaConnectWorker, name: str, connector: str, tasks: list[str] | None) -> None:
    """Wait for the connector state and, unless ``tasks`` is None, exactly these task states."""

    def reached() -> bool:
        state = connector_state(worker, name)
        return state is not None and state[0] == connector and (tasks is None or state[1] == tasks)

    wait_until(f"{name} connector {connector} tasks {tasks}", reached)


def capture_connect(clusters: dict[str, Any], work: Path, protocols: list[str]) -> None:
    bootstrap = clusters["A"].bootstrap_servers
    group = "golden-connect"
    name = "golden-hb"
    second = "golden-hb-paused"
    extra = {"offset.flush.interval.ms": 1000}
    w1 = JavaConnectWorker(bootstrap, work / "connect-w1", group_id=group, extra=extra, die_with_parent=True)
    w2 = JavaConnectWorker(bootstrap, work / "connect-w2", group_id=group, extra=extra, die_with_parent=True)
    roles = {
        "config": ("A", bootstrap, w1.config_topic),
        "offset": ("A", bootstrap, w1.offset_topic),
        "status": ("A", bootstrap, w1.status_topic),
    }
    recorder = TopicRecorder(roles)
    rest = RestLog(w1)
    groups: list[dict[str, Any]] = []
    steps: list[dict[str, str]] = []

    def step(label: str, doc: str) -> None:
        rest.step = label
        steps.append({"step": label, "doc": doc})

    def settle_and_snapshot(seconds: float = 2.0) -> list[dict[str, Any]]:
        time.sleep(seconds)
        return recorder.snapshot(rest.step)

    def wait_records(role: str, what: str, pred: Callable[[dict[str, Any]], bool]) -> None:
        def found() -> bool:
            recorder.snapshot(rest.step)
            return any(pred(r) for r in recorder.of(role) if r["step"] == rest.step)

        wait_until(what, found, interval=1.0)

    try:
        step(
            "worker-started",
            "one Java worker joined the empty group (sessioned protocol) and wrote its session key",
        )
        w1.start()
        w1.wait_ready()
        wait_records("config", "session-key record", lambda r: r["key"]["text"] == "session-key")
        settle_and_snapshot(1)

        step(
            "connector-created",
            f"POST /connectors {name} (MirrorHeartbeatConnector, 1 task); running, heartbeats produced, offsets committed",
        )
        rest(
            "POST",
            "/connectors",
            {"name": name, "config": heartbeat_connector_config(bootstrap)},
            expect=(201,),
        )
        wait_state(w1, name, "RUNNING", ["RUNNING"])
        wait_records("offset", "a committed source offset", lambda r: r["value"] is not None)
        wait_records(
            "status", "a topic status record", lambda r: r["key"]["text"].startswith("status-topic-")
        )
        settle_and_snapshot()
        if "sessioned" in protocols:
            groups.append(
                group_capture("sessioned", [w1], bootstrap, f"one worker holding {name} and its task 0")
            )

        step("worker-2-joined", "a second Java worker joined; incremental cooperative rebalance (two rounds)")
        w2.start()
        w2.wait_ready()
        if "sessioned" in protocols:
            groups.append(
                group_capture(
                    "sessioned", [w1, w2], bootstrap, f"two workers after the second joined; {name} 1 task"
                )
            )
        wait_state(w1, name, "RUNNING", ["RUNNING"])
        settle_and_snapshot()

        step("paused", f"PUT /connectors/{name}/pause")
        rest("PUT", f"/connectors/{name}/pause", expect=(202,))
        wait_state(w1, name, "PAUSED", ["PAUSED"])
        settle_and_snapshot()

        step("resumed", f"PUT /connectors/{name}/resume")
        rest("PUT", f"/connectors/{name}/resume", expect=(202,))
        wait_state(w1, name, "RUNNING", ["RUNNING"])
        settle_and_snapshot()

        step("stopped", f"PUT /connectors/{name}/stop (target state STOPPED, zero task configs)")
        rest("PUT", f"/connectors/{name}/stop", expect=(202, 204))
        wait_state(w1, name, "STOPPED", [])
        settle_and_snapshot()
        rest("GET", f"/connectors/{name}/offsets")

        step("offsets-altered", f"PATCH /connectors/{name}/offsets of the STOPPED connector (KIP-875)")
        partition = {"sourceClusterAlias": "A", "targetClusterAlias": "B"}
        rest(
            "PATCH",
            f"/connectors/{name}/offsets",
            {"offsets": [{"partition": partition, "offset": {"offset": 0}}]},
        )
        settle_and_snapshot()
        rest("GET", f"/connectors/{name}/offsets")

        step("offsets-reset", f"DELETE /connectors/{name}/offsets of the STOPPED connector (KIP-875)")
        rest("DELETE", f"/connectors/{name}/offsets")
        wait_records("offset", "an offset tombstone", lambda r: r["value"] is None)
        settle_and_snapshot(1)
        rest("GET", f"/connectors/{name}/offsets")

        step("resumed-after-stop", f"PUT /connectors/{name}/resume of the STOPPED connector")
        rest("PUT", f"/connectors/{name}/resume", expect=(202,))
        wait_state(w1, name, "RUNNING", ["RUNNING"])
        settle_and_snapshot()

        step("reconfigured", f"PUT /connectors/{name}/config with emit.heartbeats.interval.seconds=2")
        rest(
            "PUT",
            f"/connectors/{name}/config",
            heartbeat_connector_config(bootstrap, **{"emit.heartbeats.interval.seconds": "2"}),
        )
        wait_records(
            "config",
            "a task config with the new interval",
            lambda r: (
                r["key"]["text"] == f"task-{name}-0"
                and '"emit.heartbeats.interval.seconds":"2"' in r["value"]["text"]
            ),
        )
        wait_state(w1, name, "RUNNING", ["RUNNING"])
        settle_and_snapshot()

        step("restarted", f"POST /connectors/{name}/restart?includeTasks=true&onlyFailed=false")
        rest("POST", f"/connectors/{name}/restart?includeTasks=true&onlyFailed=false", expect=(202,))
        wait_records(
            "config", "a restart request record", lambda r: r["key"]["text"] == f"restart-connector-{name}"
        )
        wait_state(w1, name, "RUNNING", ["RUNNING"])
        settle_and_snapshot()
        rest("GET", f"/connectors/{name}")
        rest("GET", f"/connectors/{name}/tasks")

        step("created-paused", f"POST /connectors {second} with initial_state PAUSED (KIP-980)")
        body = {
            "name": second,
            "config": heartbeat_connector_config(bootstrap, **{"source.cluster.alias": "C"}),
            "initial_state": "PAUSED",
        }
        rest("POST", "/connectors", body, expect=(201,))
        wait_state(w1, second, "PAUSED", None)
        settle_and_snapshot()
        rest("GET", f"/connectors/{second}/status")

        step("deleted", f"DELETE /connectors/{name} and /connectors/{second}")
        rest("DELETE", f"/connectors/{name}", expect=(204,))
        rest("DELETE", f"/connectors/{second}", expect=(204,))
        wait_until("no connectors left", lambda: w1.rest("GET", "/connectors") == (200, []))
        wait_records(
            "status",
            "status tombstones for the deleted connectors",
            lambda r: r["value"] is None and r["key"]["text"] == f"status-connector-{second}",
        )
        settle_and_snapshot(3)
    finally:
        w2.stop()
        w1.stop()

    write_golden(
        CONNECT_FILE,
        {
            "kafka_version": KAFKA_VERSION,
            "about": "records of a Java Connect worker's config, offset and status topics, tagged by scenario step",
            "worker": {
                "group.id": group,
                "config.storage.topic": w1.config_topic,
                "offset.storage.topic": w1.offset_topic,
                "status.storage.topic": w1.status_topic,
                "offset.storage.partitions": 25,
                "status.storage.partitions": 5,
                "converters": "JsonConverter (Java defaults); internal converters are fixed by the runtime",
                "worker_urls": [w1.rest_url, w2.rest_url],
            },
            "connectors": {name: heartbeat_connector_config("${A}"), second: "same, source.cluster.alias=C"},
            "steps": steps,
            "rest": [_placeholders(c, bootstrap) for c in rest.calls],
            "records": recorder.records,
        },
    )
    if groups:
        _merge_groups(groups)


def _placeholders(obj: Any, bootstrap: str) -> Any:
    """Replace the run's bootstrap address by ``${A}`` so committed files do not carry random ports."""
    return json.loads(json.dumps(obj).replace(bootstrap, "${A}"))


def _merge_groups(captures: list[dict[str, Any]]) -> None:
    path = GOLDEN_DIR / GROUP_FILE
    existing = json.loads(path.read_text())["captures"] if path.exists() else []
    settings = {c["connect_protocol_setting"] for c in captures}
    kept = [c for c in existing if c["connect_protocol_setting"] not in settings]
    order = {"sessioned": 0, "compatible": 1, "eager": 2}
    merged = sorted(
        kept + captures, key=lambda c: (order.get(c["connect_protocol_setting"], 9), len(c["members"]))
    )
    write_golden(
        GROUP_FILE,
        {
            "kafka_version": KAFKA_VERSION,
            "about": "DescribeGroups answers for Java Connect groups: member metadata and assignment bytes",
            "captures": merged,
        },
    )


def capture_group_protocol(clusters: dict[str, Any], work: Path, setting: str) -> None:
    """Two workers with ``connect.protocol=<setting>`` in their own group, one connector, described."""
    bootstrap = clusters["A"].bootstrap_servers
    group = f"golden-{setting}"
    extra = {"connect.protocol": setting, "offset.flush.interval.ms": 1000}
    workers = [
        JavaConnectWorker(
            bootstrap, work / f"{setting}-w{i}", group_id=group, extra=extra, die_with_parent=True
        )
        for i in (1, 2)
    ]
    captures = []
    try:
        workers[0].start()
        workers[0].wait_ready()
        status, answer = workers[0].rest(
            "POST", "/connectors", {"name": f"hb-{setting}", "config": heartbeat_connector_config(bootstrap)}
        )
        if status != 201:
            raise RuntimeError(f"creating hb-{setting} answered {status}: {answer}")
        wait_state(workers[0], f"hb-{setting}", "RUNNING", ["RUNNING"])
        captures.append(
            group_capture(setting, workers[:1], bootstrap, f"one worker holding hb-{setting} and task 0")
        )
        workers[1].start()
        workers[1].wait_ready()
        captures.append(
            group_capture(setting, workers, bootstrap, f"two workers after the second joined; hb-{setting}")
        )
    finally:
        for w in reversed(workers):
            w.stop()
    _merge_groups(captures)


# --------------------------------------------------------------------------------------------------
# MirrorMaker 2 dedicated mode


MM2_TOPIC = "golden-orders"
MM2_GROUP = "golden-group"
MM2_RECORDS = 10
MM2_BASE_TS = 1_700_000_000_000
MM2_COMMITS = {0: (3, "golden-meta"), 1: (5, "")}


def mm2_properties(a: str, b: str) -> dict[str, object]:
    return {
        "clusters": "A, B",
        "A.bootstrap.servers": a,
        "B.bootstrap.servers": b,
        "A->B.enabled": "true",
        "A->B.topics": MM2_TOPIC,
        "A->B.groups": MM2_GROUP,
        **SINGLE_BROKER_MM2,
        "emit.checkpoints.interval.seconds": 1,
        "emit.heartbeats.interval.seconds": 1,
        "sync.group.offsets.enabled": "true",
        "sync.group.offsets.interval.seconds": 1,
        "refresh.topics.interval.seconds": 2,
        "refresh.groups.interval.seconds": 2,
        "A.offset.flush.interval.ms": 1000,
        "B.offset.flush.interval.ms": 1000,
    }


async def mm2_prepare_source(bootstrap: str) -> list[dict[str, Any]]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(MM2_TOPIC, num_partitions=2, replication_factor=1)])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    produced = []
    try:
        for i in range(MM2_RECORDS):
            md = await producer.send_and_wait(
                MM2_TOPIC,
                key=f"k{i}".encode(),
                value=f"v{i}".encode(),
                partition=i % 2,
                timestamp_ms=MM2_BASE_TS + i,
                headers=[("h", f"x{i}".encode())],
            )
            produced.append(
                {
                    "partition": md.partition,
                    "offset": md.offset,
                    "key": f"k{i}",
                    "value": f"v{i}",
                    "timestamp": MM2_BASE_TS + i,
                }
            )
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        MM2_TOPIC,
        bootstrap_servers=bootstrap,
        group_id=MM2_GROUP,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        deadline = time.monotonic() + 30
        while not consumer.assignment() and time.monotonic() < deadline:
            await consumer.getmany(timeout_ms=500)
        await consumer.commit(
            {
                TopicPartition(MM2_TOPIC, p): OffsetAndMetadata(off, meta)
                for p, (off, meta) in MM2_COMMITS.items()
            }
        )
    finally:
        await consumer.stop()
    return produced


async def group_offsets(bootstrap: str, group: str) -> dict[str, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        offsets = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    return {f"{tp.topic}-{tp.partition}": om.offset for tp, om in sorted(offsets.items())}


def capture_mm2(clusters: dict[str, Any], work: Path) -> None:
    a, b = clusters["A"].bootstrap_servers, clusters["B"].bootstrap_servers
    produced = asyncio.run(mm2_prepare_source(a))
    props = mm2_properties(a, b)
    mm2 = JavaMirrorMaker(props, work / "mm2", die_with_parent=True)
    roles = {
        "offset-syncs": ("A", a, "mm2-offset-syncs.B.internal"),
        "checkpoints": ("B", b, "A.checkpoints.internal"),
        "heartbeats-on-B": ("B", b, "heartbeats"),
        "heartbeats-on-A": ("A", a, "heartbeats"),
        "mirrored-topic": ("B", b, f"A.{MM2_TOPIC}"),
        "mirrored-heartbeats": ("B", b, "A.heartbeats"),
        "connect-offsets-A->B": ("B", b, "mm2-offsets.A.internal"),
        "connect-configs-A->B": ("B", b, "mm2-configs.A.internal"),
        "connect-status-A->B": ("B", b, "mm2-status.A.internal"),
    }
    recorder = TopicRecorder(roles)

    def have(role: str, pred: Callable[[dict[str, Any]], bool], count: int) -> bool:
        mm2.check_alive()
        recorder.snapshot("running")
        return sum(1 for r in recorder.of(role) if pred(r)) >= count

    def mm2_offsets_ready() -> bool:
        """Distinct mm2-offsets keys: the source task at each partition's last offset, the checkpoint task."""
        mm2.check_alive()
        recorder.snapshot("running")
        last = f'{{"offset":{MM2_RECORDS // 2 - 1}}}'
        ready = set()
        for r in recorder.of("connect-offsets-A->B"):
            key = r["key"]["text"]
            source = key.startswith('["MirrorSourceConnector"') and MM2_TOPIC in key
            if r["value"] is not None and (
                (source and r["value"]["text"] == last) or "MirrorCheckpoint" in key
            ):
                ready.add(key)
        return len(ready) >= 2 * len(MM2_COMMITS)

    synced: dict[str, int] = {}
    herder_group: dict[str, Any] = {}
    try:
        mm2.start()
        wait_until(
            "mirrored records on B", lambda: have("mirrored-topic", lambda r: True, MM2_RECORDS), interval=2
        )
        wait_until(
            "checkpoints for both partitions",
            lambda: have("checkpoints", lambda r: True, len(MM2_COMMITS)),
            interval=2,
        )
        wait_until(
            "heartbeats on A and B",
            lambda: have("heartbeats-on-A", bool, 1) and have("heartbeats-on-B", bool, 1),
        )
        wait_until(
            "source offsets of the last records and checkpoint offsets for both partitions",
            mm2_offsets_ready,
            interval=2,
        )
        synced = wait_until(
            "group offsets synced to B",
            lambda: (o := asyncio.run(group_offsets(b, MM2_GROUP))) and len(o) == len(MM2_COMMITS) and o,
            interval=2,
        )
        wait_until(
            "mirrored heartbeats A.heartbeats on B", lambda: have("mirrored-heartbeats", bool, 1), timeout=30
        )
        time.sleep(2)
        recorder.snapshot("running")
        synced = asyncio.run(group_offsets(b, MM2_GROUP))
        herder_group = stable_group(b, "A-mm2", 1)
    finally:
        mm2.stop()

    config = {k: (str(v).replace(a, "${A}").replace(b, "${B}")) for k, v in props.items()}
    write_golden(
        MM2_FILE,
        {
            "kafka_version": KAFKA_VERSION,
            "about": "records Java MirrorMaker 2 (dedicated mode, A->B) wrote, read back from both clusters",
            "mm2_properties": config,
            "topic": MM2_TOPIC,
            "group": MM2_GROUP,
            "produced_to_A": produced,
            "committed_on_A": {
                f"{MM2_TOPIC}-{p}": {"offset": off, "metadata": meta}
                for p, (off, meta) in MM2_COMMITS.items()
            },
            "synced_group_offsets_on_B": synced,
            "herder_group_A->B": herder_group,
            "topics": {role: {"cluster": c, "topic": t} for role, (c, _, t) in roles.items()},
            "records": recorder.records,
        },
    )


# --------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.golden.capture", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--parts", default="mm2,connect,group", help="comma-separated: connect, group, mm2")
    parser.add_argument(
        "--protocols",
        default="sessioned,compatible,eager",
        help="connect.protocol settings to capture group bytes for (sessioned comes from the connect part)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs) after the run")
    args = parser.parse_args(argv)
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    protocols = [p.strip() for p in args.protocols.split(",") if p.strip()]
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    ensure_distribution()

    tmp = Path(tempfile.mkdtemp(prefix="pyconnect-golden-"))
    log.info("working in %s", tmp)
    clusters: dict[str, Any] = {}
    started = time.monotonic()
    try:
        clusters = start_clusters(["A", "B"], tmp / "kafka", die_with_parent=True)
        if "mm2" in parts:
            capture_mm2(clusters, tmp)
        if "connect" in parts:
            capture_connect(clusters, tmp, protocols)
        if "group" in parts:
            for setting in protocols:
                if setting != "sessioned" or "connect" not in parts:
                    capture_group_protocol(clusters, tmp, setting)
    finally:
        stop_clusters(clusters.values())
        if not args.keep:
            import shutil

            with contextlib.suppress(OSError):
                shutil.rmtree(tmp)
    log.info("done in %.0fs", time.monotonic() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
