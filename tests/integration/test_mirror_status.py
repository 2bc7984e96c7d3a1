"""The mirror status view on real Kafka: a MirrorSourceConnector mirrors A -> B on two pyconnect
workers, and ``GET /mirrors`` (from either worker), ``/mirrors/ui`` in headless Chromium and
``pyconnect status`` report the flow:

- IN_SYNC while a topic receives a steady trickle, with a topic filled before the mirror started and
  untouched since recognised as STALE (not counted against the flow);
- LAGGING once the target latency is set to its minimum (1 s) and the source is flooded faster than
  the mirror copies (a replication consumer taking 20 records per poll);
- with a MirrorCheckpointConnector of the same aliases in the flow, the checkpoint latency of a
  consumer group reading on A, and its config's secret masked;
- FAILED when a task fails for real: an ExtractField transform meets a record value that is no Struct.

Chromium (Debian's ``chromium``) renders the page; the screenshot is kept under the test's tmp dir and
its path printed.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import NewTopic

from pyconnect.testing.backends import ClusterHandle
from tests.headless_browser import chromium, headless
from tests.integration.fleet import fleet, python_workers, running_tasks, wait_for
from tests.integration.test_mirror_source import _admin, mirror_config

pytestmark = pytest.mark.kafka


async def create_topics(bootstrap: str, *topics: str) -> None:
    admin = await _admin(bootstrap)
    try:
        await admin.create_topics([NewTopic(t, 1, 1) for t in topics])
    finally:
        await admin.close()


async def produce(bootstrap: str, topic: str, count: int, size: int = 100) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, max_batch_size=256 * 1024)
    await producer.start()
    try:
        value = b"x" * size
        for i in range(count):
            await producer.send(topic, value, key=str(i).encode())
        await producer.flush()
    finally:
        await producer.stop()


class Trickle:
    """A few records per second into ``topic`` from a thread until ``stop``."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run(bootstrap, topic)), daemon=True)

    async def _run(self, bootstrap: str, topic: str) -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
        await producer.start()
        try:
            while not self._stop.is_set():
                await producer.send_and_wait(topic, b"tick")
                await asyncio.sleep(0.2)
        finally:
            await producer.stop()

    def __enter__(self) -> Trickle:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=15)


SECRET = "s3cret-value"


def checkpoint_config(source: dict[str, str], group: str) -> dict[str, str]:
    keys = ("source.cluster.alias", "target.cluster.alias", "source.cluster.bootstrap.servers")
    return {
        # the source's byte converters too: checkpoint records are bytes (the worker's JSON converter
        # would write JSON into the checkpoints topic that other flows A->B share)
        **{
            k: source[k]
            for k in (*keys, "target.cluster.bootstrap.servers", "topics", "key.converter", "value.converter")
        },
        "connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
        "tasks.max": "1",
        "groups": group,
        "emit.checkpoints.interval.seconds": "1",
        "refresh.groups.interval.seconds": "1",
        "checkpoints.topic.replication.factor": "1",
        "example.service.password": SECRET,
    }


async def commit_group(bootstrap: str, group: str, topic: str) -> None:
    """``group`` reads a few records of ``topic`` on A and commits its position."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    await consumer.start()
    try:
        consumer.assign([TopicPartition(topic, 0)])
        deadline = time.monotonic() + 30
        read = 0
        while read < 5 and time.monotonic() < deadline:
            for messages in (await consumer.getmany(timeout_ms=500)).values():
                read = messages[-1].offset + 1
        assert read >= 5, read
        await consumer.commit({TopicPartition(topic, 0): read})
    finally:
        await consumer.stop()


def flow(worker: Any) -> dict[str, Any] | None:
    code, body = worker.rest("GET", "/mirrors")
    assert code == 200, body
    flows = [f for f in body["flows"] if f["flow"] == "A->B"]
    return flows[0] if flows else None


def topics(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["topic"]: t for t in found["topics"]}


def cli_status(url: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "pyconnect.cli", "status", "--url", url, "--timeout", "20"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stdout + done.stderr


def render_page(url: str, out: Path) -> str:
    """The page's DOM after its script ran, and a screenshot at ``out``."""
    profile = out.parent / "chromium-profile"
    budget = "--virtual-time-budget=8000"
    shot = headless(url, profile, budget, f"--screenshot={out}", "--window-size=1280,1000")
    assert out.exists() and out.stat().st_size > 0, shot.stderr[-2000:]
    dom = headless(url, profile, budget, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    return dom.stdout


def test_mirror_status_in_sync_stale_lagging_and_failed(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    chromium()
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    live, stale, group = unique("mst-live"), unique("mst-stale"), unique("mst-readers")
    asyncio.run(create_topics(a, live, stale))
    asyncio.run(produce(a, stale, 50))  # before the mirror starts, and never again
    time.sleep(1.0)
    # The flood below must outrun a mirror held to 20 records a poll: the record path counts them one by
    # one, while the raw path counts whole batches (a flood batch holds about a thousand records).
    config = mirror_config(
        cluster_a,
        cluster_b,
        f"{live},{stale}",
        **{"consumer.max.poll.records": "20", "pyconnect.mirror.raw.batches.enable": "false"},
    )
    with fleet(python_workers(b, tmp_path, unique("mst-group"), 2)) as workers, Trickle(a, live):
        first, second = workers
        code, body = first.rest("POST", "/connectors", {"name": "mirror", "config": config})
        assert code == 201, body
        wait_for("2 RUNNING tasks", lambda: running_tasks(first, "mirror", 2), 60)

        def in_sync() -> dict[str, Any] | None:
            found = flow(first)
            if found is None or found["status"] != "IN_SYNC":
                return None
            rows = topics(found)
            ok = rows.get(f"A.{live}", {}).get("state") == "ACTIVE" and rows.get(f"A.{stale}", {}).get(
                "state"
            ) == ("STALE")
            return found if ok else None

        healthy = wait_for(
            "A->B IN_SYNC with the stale topic recognised",
            in_sync,
            90,
            describe=lambda: {k: (flow(first) or {}).get(k) for k in ("status", "reasons", "topics")},
        )
        rows = topics(healthy)
        assert healthy["target_latency_ms"] == 30_000 and healthy["reasons"] == []
        assert rows[f"A.{live}"]["in_sync"] is True and rows[f"A.{live}"]["latency_ms"] < 30_000
        assert rows[f"A.{stale}"]["records_replicated"] == 50 and rows[f"A.{stale}"]["record_lag"] == 0
        assert rows[f"A.{stale}"]["in_sync"] is None
        assert [c["name"] for c in healthy["connectors"]] == ["mirror"]
        print(f"\nhealthy flow: {json.dumps(healthy['topics'])}")

        # any worker answers with the whole flow (the tasks' metrics gathered from both workers)
        other = flow(second)
        assert other is not None and set(topics(other)) == set(rows)
        task_workers = {t["worker_id"] for t in healthy["connectors"][0]["tasks"]}
        print(f"tasks on {sorted(task_workers)}; second worker sees {sorted(topics(other))}")

        # a checkpoint connector joins the flow: the group's checkpoint latency, and a secret masked
        asyncio.run(commit_group(a, group, live))
        code, body = first.rest(
            "POST", "/connectors", {"name": "mirror-checkpoint", "config": checkpoint_config(config, group)}
        )
        assert code == 201, body
        wait_for("the checkpoint task RUNNING", lambda: running_tasks(first, "mirror-checkpoint", 1), 60)

        def checkpointed() -> dict[str, Any] | None:
            found = flow(second)
            rows = found["checkpoints"] if found else []
            if found and found["status"] == "IN_SYNC" and rows and rows[0]["last_latency_ms"] is not None:
                return found
            return None

        with_checkpoints = wait_for(f"a checkpoint of {group} in the status", checkpointed, 60)
        (row,) = with_checkpoints["checkpoints"]
        assert row["group"] == group and 0 <= row["last_latency_ms"] < 30_000, row
        assert [c["name"] for c in with_checkpoints["connectors"]] == ["mirror", "mirror-checkpoint"]
        assert with_checkpoints["connectors"][1]["config"]["example.service.password"] == "[hidden]"
        assert SECRET not in json.dumps(first.rest("GET", "/mirrors")[1])
        print(f"checkpoints: {with_checkpoints['checkpoints']}")

        code, text = cli_status(first.rest_url)
        assert code == 0 and "A->B  IN_SYNC" in text and "STALE" in text and group in text, text
        print(text)

        shot = tmp_path / "mirror-status.png"
        dom = render_page(first.rest_url.rstrip("/") + "/mirrors/ui", shot)
        assert 'data-flow="A-&gt;B"' in dom and 'data-status="IN_SYNC"' in dom, dom[-3000:]
        assert f'data-topic="A.{stale}" data-state="STALE"' in dom, dom[-3000:]
        print(f"screenshot of the status page: {shot}")

        code, body = first.rest(
            "PUT", "/connectors/mirror/config", {**config, "pyconnect.mirror.target.latency.ms": "999"}
        )
        assert (
            code == 400
            and "Invalid value 999 for configuration pyconnect.mirror.target.latency.ms: "
            "Value must be at least 1000"
            in body["message"]
        ), body

        # falls behind: target latency at its minimum, and a flood the mirror copies 20 records a poll
        code, body = first.rest(
            "PUT", "/connectors/mirror/config", {**config, "pyconnect.mirror.target.latency.ms": "1000"}
        )
        assert code == 200, body
        wait_for(
            "target latency 1000 ms in the status",
            lambda: (f := flow(first)) and f["target_latency_ms"] == 1000,
            60,
        )
        flooded = time.monotonic()
        asyncio.run(produce(a, live, 100_000, size=200))

        def lagging() -> dict[str, Any] | None:
            found = flow(first)
            return found if found is not None and found["status"] == "LAGGING" else None

        behind = wait_for("A->B LAGGING after the flood", lagging, 120)
        row = topics(behind)[f"A.{live}"]
        assert row["in_sync"] is False and row["state"] == "ACTIVE"
        assert any(r.startswith(f"topic A.{live} lags") for r in behind["reasons"]), behind["reasons"]
        print(
            f"LAGGING {time.monotonic() - flooded:.1f} s after the flood began: latency {row['latency_ms']} ms, "
            f"record lag {row['record_lag']}"
        )
        code, text = cli_status(first.rest_url)
        assert code == 4 and "LAGGING" in text, text

        # a task that fails for real: the value of a mirrored record is bytes, not a Struct
        code, body = first.rest(
            "PUT",
            "/connectors/mirror/config",
            {
                **config,
                "transforms": "field",
                "transforms.field.type": "org.apache.kafka.connect.transforms.ExtractField$Value",
                "transforms.field.field": "x",
            },
        )
        assert code == 200, body
        asyncio.run(produce(a, live, 10))

        def failed() -> dict[str, Any] | None:
            found = flow(second)
            return found if found is not None and found["status"] == "FAILED" else None

        broken = wait_for("A->B FAILED after a task failed", failed, 90)
        assert not broken["in_sync"]
        assert any("FAILED" in r and "Only Struct objects" in r for r in broken["reasons"]), broken["reasons"]
        print(f"FAILED: {broken['reasons']}")
        code, text = cli_status(second.rest_url)
        assert code == 4 and "FAILED" in text, text


def test_status_cli_on_an_unreachable_url_is_one_line_and_non_zero() -> None:
    code, text = cli_status("http://127.0.0.1:9")
    assert code == 1
    assert text.strip().count("\n") == 0 and "cannot reach http://127.0.0.1:9/mirrors" in text, text
