"""A source connector's own ``offsets.storage.topic`` (KIP-618), next to the Java 4.3.1 worker.

Same steps on a Java worker and on ours: a VerifiableSource commits offsets to the worker's topic; once
stopped it is given a topic of its own. Then both answer ``GET .../offsets`` with the partition only
the worker's topic knows and a ``null`` offset, the resumed task starts over at seqno 0 (a lookup does
not fall back to the worker's topic), the new topic is created compacted, every offset it gets is
copied to the worker's topic, and a reset clears both. Under exactly-once support (ours), the
connector's topic is written in the task's transactions: a worker restarted cleanly resumes from it
with every seqno exactly once.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient

from pyconnect.kafka.topics import topic_config
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.connect_worker import ConnectWorkerProcess
from pyconnect.testing.java_reference import JavaConnectWorker
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import FAST_GROUP, fleet, read_topic, running_tasks, status, verifiable, wait_for
from tests.integration.test_zombie_fencing import EOS, assert_exactly_once, log_end, seqnos_per_task

pytestmark = [pytest.mark.kafka, pytest.mark.java]

QUICK_COMMITS = {**FAST_GROUP, "offset.flush.interval.ms": "500"}


def offsets_records(bootstrap: str, topic: str, connector: str) -> list[tuple[bytes, bytes | None]]:
    """The ``[connector, partition]`` records of an offsets topic, in order (``read_committed``)."""
    records = asyncio.run(read_topic(bootstrap, topic, max_s=10, idle_reads=1, poll_ms=500))
    return [(k, v) for _, _, k, v in records if k is not None and json.loads(k)[0] == connector]


async def cleanup_policy(bootstrap: str, topic: str) -> str | None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        found = await topic_config(admin, topic, ["cleanup.policy"])
        return None if found is None else found.get("cleanup.policy")
    finally:
        await admin.close()


def stop_and_wait(worker: ConnectWorkerProcess, name: str) -> None:
    assert worker.rest("PUT", f"/connectors/{name}/stop")[0] == 204
    wait_for(
        f"{name} STOPPED",
        lambda: (s := status(worker, name)) and s["connector"]["state"] == "STOPPED" and not s["tasks"],
        60,
    )


def shape(answer: tuple[int, Any]) -> tuple[int, Any]:
    """A ``GET .../offsets`` answer with each committed seqno replaced by ``"n"`` (timing differs)."""
    code, body = answer
    if code != 200:
        return code, body
    return code, [
        (entry["partition"], None if entry["offset"] is None else sorted(entry["offset"]))
        for entry in body["offsets"]
    ]


def run_steps(worker: ConnectWorkerProcess, topic: str, offsets_topic: str) -> dict[str, Any]:
    """The scenario of the module docstring on one worker; what each step showed."""
    bootstrap = worker.bootstrap_servers
    seen: dict[str, Any] = {}
    config = verifiable(topic, 1, throughput=40)
    code, body = worker.rest("POST", "/connectors", {"name": "verif", "config": config})
    assert code == 201, body
    wait_for("1 task RUNNING", lambda: running_tasks(worker, "verif", 1), 90)
    wait_for("the first run's records", lambda: asyncio.run(log_end(bootstrap, topic, 0)) >= 40, 30)
    stop_and_wait(worker, "verif")
    seen["worker topic only"] = shape(worker.rest("GET", "/connectors/verif/offsets"))
    first_run = asyncio.run(log_end(bootstrap, topic, 0))
    code, body = worker.rest(
        "PUT", "/connectors/verif/config", {**config, "offsets.storage.topic": offsets_topic}
    )
    assert code == 200, body
    time.sleep(1)
    seen["own topic, before it ran"] = shape(worker.rest("GET", "/connectors/verif/offsets"))
    assert worker.rest("PUT", "/connectors/verif/resume")[0] == 202
    wait_for("1 task RUNNING again", lambda: running_tasks(worker, "verif", 1), 90)
    wait_for(
        "the resumed task's records",
        lambda: asyncio.run(log_end(bootstrap, topic, 0)) >= first_run + 40,
        60,
    )
    stop_and_wait(worker, "verif")
    after = worker.rest("GET", "/connectors/verif/offsets")
    seen["own topic, after it ran"] = shape(after)
    seqnos = seqnos_per_task(bootstrap, topic)[0]
    seen["resumed at"] = seqnos[first_run]
    seen["cleanup.policy"] = asyncio.run(cleanup_policy(bootstrap, offsets_topic))
    own = offsets_records(bootstrap, offsets_topic, "verif")
    copied = offsets_records(bootstrap, str(worker.offset_topic), "verif")
    seen["own topic's last offset is the worker topic's last"] = bool(own) and own[-1] == copied[-1]
    (entry,) = after[1]["offsets"]
    seen["GET answers the own topic's last offset"] = (
        own[-1][1] == json.dumps(entry["offset"], separators=(",", ":")).encode()
    )
    code, body = worker.rest("DELETE", "/connectors/verif/offsets")
    seen["reset"] = code
    seen["after reset"] = shape(worker.rest("GET", "/connectors/verif/offsets"))
    seen["last records after reset"] = (
        offsets_records(bootstrap, offsets_topic, "verif")[-1][1],
        offsets_records(bootstrap, str(worker.offset_topic), "verif")[-1][1],
    )
    return seen


@pytest.mark.long  # ~37 s beside a Java worker; the exactly-once case below is the short one in make test
def test_a_connector_given_its_own_offsets_topic_behaves_as_on_java(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    seen: dict[str, dict[str, Any]] = {}
    for label, kind in (("java", JavaConnectWorker), ("pyconnect", PyconnectWorker)):
        worker = kind(
            bootstrap,
            tmp_path / label,
            group_id=unique(f"own-{label}"),
            extra=QUICK_COMMITS,
            die_with_parent=True,
        )
        with fleet([worker]):
            seen[label] = run_steps(worker, unique(f"out-{label}"), unique(f"own-offsets-{label}"))
    for step, java in seen["java"].items():
        print(f"{step}: java {java!r}, pyconnect {seen['pyconnect'][step]!r}")
    assert seen["pyconnect"] == seen["java"]
    # What both showed, spelled out:
    java = seen["java"]
    assert java["worker topic only"] == (200, [({"id": 0}, ["seqno"])])
    assert java["own topic, before it ran"] == (200, [({"id": 0}, None)])
    assert java["resumed at"] == 0, "no fallback to the worker's topic"
    assert java["cleanup.policy"] == "compact"
    assert java["own topic's last offset is the worker topic's last"] is True
    assert java["GET answers the own topic's last offset"] is True
    assert java["reset"] == 200 and java["after reset"] == (200, [])
    assert java["last records after reset"] == (None, None)


@pytest.mark.parametrize(
    "where", [pytest.param("own topic", marks=pytest.mark.long), "producer on another cluster"]
)
def test_exactly_once_writes_the_connectors_offsets_in_its_transactions(
    where: str,
    cluster_a: ClusterHandle,
    cluster_b: ClusterHandle,
    unique: Callable[[str], str],
    tmp_path: Path,
) -> None:
    """``own topic``: the connector names ``offsets.storage.topic``; ``producer on another cluster``:
    the workers run on A, the task producer writes to B, so the offsets live in a topic of the
    worker's name on B (Java's ``offsetStoreForExactlyOnceSourceTask``)."""
    bootstrap = cluster_a.bootstrap_servers
    group, topic = unique("own-eos"), unique("out")
    if where == "own topic":
        data, offsets_topic = bootstrap, unique("own-offsets")
        extra = {"offsets.storage.topic": offsets_topic}
    else:
        data, offsets_topic = cluster_b.bootstrap_servers, f"{group}-offsets"
        extra = {"producer.override.bootstrap.servers": cluster_b.bootstrap_servers}
    config = verifiable(topic, 2, throughput=100, **extra)

    def worker(n: int) -> PyconnectWorker:
        return PyconnectWorker(
            bootstrap, tmp_path / f"py-{n}", group_id=group, extra={**FAST_GROUP, **EOS}, die_with_parent=True
        )

    first = worker(0)
    with fleet([first]):
        code, body = first.rest("POST", "/connectors", {"name": "verif", "config": config})
        assert code == 201, body
        wait_for("2 tasks RUNNING", lambda: running_tasks(first, "verif", 2), 60)
        wait_for("100 records", lambda: asyncio.run(log_end(data, topic, 0)) >= 100, 60)
    first_end = asyncio.run(log_end(data, topic, 0))
    committed = offsets_records(data, offsets_topic, "verif")
    assert committed, "the task's transactions wrote the connector's offsets topic"
    uncommitted = asyncio.run(read_topic(data, offsets_topic, "read_uncommitted", max_s=10, idle_reads=1))
    assert len([r for r in uncommitted if r[2] is not None]) == len(committed), "no aborted offsets"
    copied = offsets_records(bootstrap, str(first.offset_topic), "verif")
    assert copied and set(copied) <= set(committed), "the worker's topic holds copies of committed offsets"
    second = worker(1)
    with fleet([second]):
        wait_for("2 tasks RUNNING on the second worker", lambda: running_tasks(second, "verif", 2), 60)
        wait_for("100 more records", lambda: asyncio.run(log_end(data, topic, 0)) >= first_end + 100, 60)
        stop_and_wait(second, "verif")
        code, body = second.rest("GET", "/connectors/verif/offsets")
    assert code == 200 and sorted(e["partition"]["id"] for e in body["offsets"]) == [0, 1], body
    assert_exactly_once(seqnos_per_task(data, topic), 2, f"EOS, {where}, worker replaced")
