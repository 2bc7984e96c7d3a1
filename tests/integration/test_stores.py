"""The Kafka-backed config, offset and status stores on cluster A.

Writes are read back by a second store instance (a restarted worker), startup checks fail with
Java's messages, corrupt records injected with a raw producer are skipped, and the records a Java
4.3.1 worker wrote (tests/golden/connect_internal_topics.json) replayed into fresh topics are read
into the state the Java worker had.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from pyconnect.errors import ConfigError
from pyconnect.kafka.clients import create_admin
from pyconnect.kafka.log import KafkaLog
from pyconnect.kafka.topics import partition_counts, topic_config
from pyconnect.protocol.internal_records import (
    ConnectorStatus,
    RestartRequest,
    SessionKeyRecord,
    State,
    TargetState,
    TaskStatus,
    TopicStatus,
)
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores import ConfigStore, InternalTopic, OffsetStore, StatusStore
from pyconnect.testing.backends import ClusterHandle

pytestmark = pytest.mark.kafka

GOLDEN = json.loads(
    (Path(__file__).resolve().parents[1] / "golden" / "connect_internal_topics.json").read_text()
)
STEPS = [s["step"] for s in GOLDEN["steps"]]
HB_PARTITION = {"sourceClusterAlias": "A", "targetClusterAlias": "B"}


def internal_topic(
    cluster: ClusterHandle, name: str, partitions: int, purpose: str, setting: str
) -> InternalTopic:
    return InternalTopic(
        name=name,
        client_config={"bootstrap.servers": cluster.bootstrap_servers},
        partitions=partitions,
        replication_factor=-1,
        worker_topic_config=setting,
        purpose=purpose,
    )


def config_topic(cluster: ClusterHandle, name: str) -> InternalTopic:
    return internal_topic(cluster, name, 1, "connector configurations", "config.storage.topic")


def offset_topic(cluster: ClusterHandle, name: str) -> InternalTopic:
    return internal_topic(cluster, name, 25, "source connector offsets", "offset.storage.topic")


def status_topic(cluster: ClusterHandle, name: str) -> InternalTopic:
    return internal_topic(cluster, name, 5, "connector and task statuses", "status.storage.topic")


async def create_topic(cluster: ClusterHandle, name: str, partitions: int, configs: dict[str, str]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs)])
    finally:
        await admin.close()


async def produce(
    cluster: ClusterHandle, topic: str, records: Iterable[tuple[bytes | None, bytes | None, int]]
) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    await producer.start()
    try:
        for key, value, partition in records:
            await producer.send(topic, key=key, value=value, partition=partition)
        await producer.flush()
    finally:
        await producer.stop()


def blob(value: dict[str, Any] | None) -> bytes | None:
    return None if value is None else base64.b64decode(value["base64"])


def golden(
    role: str, until: str | None = None, after: str | None = None
) -> list[tuple[bytes | None, bytes | None, int]]:
    """The Java records of ``role`` first seen in steps ``(after, until]``, in capture order."""
    lo = -1 if after is None else STEPS.index(after)
    hi = len(STEPS) - 1 if until is None else STEPS.index(until)
    return [
        (blob(r["key"]), blob(r["value"]), r["partition"])
        for r in GOLDEN["records"]
        if r["role"] == role and lo < STEPS.index(r["step"]) <= hi
    ]


async def test_config_store_writes_are_read_back_after_a_restart(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    name = unique("configs")
    props = {"connector.class": "Demo", "tasks.max": "2", "name": "c-1"}
    writer = ConfigStore(config_topic(cluster_a, name))
    await writer.start()
    try:
        await writer.put_connector_config("c-1", props)
        await writer.put_task_configs("c-1", [{"task.class": "T", "i": "0"}, {"task.class": "T", "i": "1"}])
        await writer.put_connector_config("gone", {"name": "gone"}, TargetState.PAUSED)
        await writer.put_target_state("c-1", TargetState.PAUSED)
        await writer.put_session_key(SessionKeyRecord(bytes(range(32)), "HmacSHA256", 1729830000000))
        await writer.put_restart_request(RestartRequest("c-1", include_tasks=True))
        await writer.put_logger_level("org.apache.kafka", "DEBUG")
        await writer.remove_connector_config("gone")
        await writer.refresh(30)
        written = writer.snapshot()
    finally:
        await writer.stop()
        await writer.stop()

    admin = create_admin({"bootstrap.servers": cluster_a.bootstrap_servers})
    await admin.start()
    try:
        assert await partition_counts(admin, [name]) == {name: 1}
        assert (await topic_config(admin, name, ["cleanup.policy"])) == {"cleanup.policy": "compact"}
    finally:
        await admin.close()

    reader = ConfigStore(config_topic(cluster_a, name))
    await reader.start()
    try:
        snap = reader.snapshot()
        assert snap == written
        assert snap.offset == 12
        assert snap.connectors() == ["c-1"] and snap.connector_config("c-1") == props
        assert snap.target_state("c-1") is TargetState.PAUSED and snap.target_state("gone") is None
        assert snap.tasks("c-1") == [ConnectorTaskId("c-1", 0), ConnectorTaskId("c-1", 1)]
        assert snap.task_config(ConnectorTaskId("c-1", 1)) == {"task.class": "T", "i": "1"}
        assert snap.session_key == SessionKeyRecord(bytes(range(32)), "HmacSHA256", 1729830000000)
    finally:
        await reader.stop()


async def test_config_topic_with_two_partitions_is_a_startup_error(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    name = unique("configs2")
    await create_topic(cluster_a, name, 2, {"cleanup.policy": "compact"})
    store = ConfigStore(config_topic(cluster_a, name))
    with pytest.raises(ConfigError) as raised:
        await store.start()
    assert str(raised.value) == (
        f"Topic '{name}' supplied via the 'config.storage.topic' property is required to have a single partition "
        "in order to guarantee consistency of connector configurations, but found 2 partitions."
    )


async def test_a_topic_that_is_not_compacted_is_a_startup_error(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    name = unique("status-delete")
    await create_topic(cluster_a, name, 5, {"cleanup.policy": "delete"})
    store = StatusStore(status_topic(cluster_a, name))
    with pytest.raises(
        ConfigError, match=f"Topic '{name}' supplied via the 'status.storage.topic' property is required"
    ):
        await store.start()


async def test_corrupt_records_are_skipped_by_every_store(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    configs, offsets, statuses = unique("configs"), unique("offsets"), unique("status")
    await create_topic(cluster_a, configs, 1, {"cleanup.policy": "compact"})
    await create_topic(cluster_a, offsets, 3, {"cleanup.policy": "compact"})
    await create_topic(cluster_a, statuses, 2, {"cleanup.policy": "compact"})
    await produce(
        cluster_a,
        configs,
        [
            (b"connector-bad", b"\xff\x00not json", 0),
            (b"connector-ok", b'{"properties":{"name":"ok"}}', 0),
            (b"commit-ok", b'{"tasks":"one"}', 0),
            (b"mystery", b"{}", 0),
        ],
    )
    await produce(
        cluster_a,
        offsets,
        [
            (b"garbage", b"{}", 0),
            (b'["src",{"f":"a"}]', b"not json", 1),
            (b'["src",{"f":"b"}]', b'{"pos":2}', 2),
        ],
    )
    await produce(
        cluster_a,
        statuses,
        [
            (b"status-connector-ok", b"{broken", 0),
            (b"status-task-x", b"{}", 1),
            (b"status-connector-ok", b'{"state":"RUNNING","trace":null,"worker_id":"w:1","generation":4}', 0),
        ],
    )
    config_store = ConfigStore(config_topic(cluster_a, configs))
    offset_store = OffsetStore(
        internal_topic(cluster_a, offsets, 3, "source connector offsets", "offset.storage.topic")
    )
    status_store = StatusStore(status_topic(cluster_a, statuses))
    await config_store.start()
    await offset_store.start()
    await status_store.start()
    try:
        snap = config_store.snapshot()
        assert snap.connectors() == ["ok"] and snap.offset == 4
        assert await offset_store.get("src", [{"f": "a"}, {"f": "b"}]) == [None, {"pos": 2}]
        assert status_store.get_connector("ok") == ConnectorStatus("ok", State.RUNNING, "w:1", 4)
        await produce(cluster_a, configs, [(b"connector-later", b'{"properties":{}}', 0)])
        await config_store.refresh(30)
        assert config_store.snapshot().connectors() == ["later", "ok"]
    finally:
        await config_store.stop()
        await offset_store.stop()
        await status_store.stop()


def expected_statuses(records: list[tuple[bytes | None, bytes | None, int]]) -> dict[str, Any]:
    """A small model of the status reader (spec §2.4): last value per key, tombstones delete, and an
    UNASSIGNED task status does not replace a RUNNING one of the same or a newer generation."""
    state: dict[str, Any] = {}
    for key, value, _ in records:
        assert key is not None
        name = key.decode()
        if value is None:
            state.pop(name, None)
            if name.startswith("status-connector-"):
                prefix = "status-task-" + name.removeprefix("status-connector-") + "-"
                for other in [k for k in state if k.startswith(prefix)]:
                    del state[other]
            continue
        parsed = json.loads(value)
        current = state.get(name)
        if (
            name.startswith("status-task-")
            and parsed.get("state") == "UNASSIGNED"
            and current is not None
            and current["state"] == "RUNNING"
            and current["generation"] >= parsed["generation"]
        ):
            continue
        state[name] = parsed
    return state


def assert_statuses(store: StatusStore, records: list[tuple[bytes | None, bytes | None, int]]) -> None:
    expected = expected_statuses(records)
    for name in ("golden-hb", "golden-hb-paused"):
        status = store.get_connector(name)
        want = expected.get(f"status-connector-{name}")
        if want is None:
            assert status is None
        else:
            assert status is not None
            assert (status.state.value, status.worker_id, status.generation, status.version) == (
                want["state"],
                want["worker_id"],
                want["generation"],
                want["version"],
            )
    task = store.get_task(ConnectorTaskId("golden-hb", 0))
    want = expected.get("status-task-golden-hb-0")
    assert (None if task is None else (task.state.value, task.worker_id, task.generation)) == (
        None if want is None else (want["state"], want["worker_id"], want["generation"])
    )
    topic = store.get_topic("golden-hb", "heartbeats")
    assert (topic is None) == ("status-topic-heartbeats:connector-golden-hb" not in expected)


async def test_java_written_records_are_read_into_javas_state(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    configs, offsets, statuses = unique("configs"), unique("offsets"), unique("status")
    await create_topic(cluster_a, configs, 1, {"cleanup.policy": "compact"})
    await create_topic(cluster_a, offsets, 25, {"cleanup.policy": "compact"})
    await create_topic(cluster_a, statuses, 5, {"cleanup.policy": "compact"})
    config_prefix = golden("config", until="created-paused")
    status_prefix = golden("status", until="created-paused")
    await produce(cluster_a, configs, config_prefix)
    await produce(cluster_a, offsets, golden("offset", until="created-paused"))
    await produce(cluster_a, statuses, status_prefix)

    config_store = ConfigStore(config_topic(cluster_a, configs))
    offset_store = OffsetStore(offset_topic(cluster_a, offsets))
    status_store = StatusStore(status_topic(cluster_a, statuses))
    await offset_store.start()
    await status_store.start()
    await config_store.start()
    try:
        snap = config_store.snapshot()
        assert snap.offset == len(config_prefix)
        assert snap.connectors() == ["golden-hb", "golden-hb-paused"]
        assert snap.target_state("golden-hb") is TargetState.STARTED
        assert snap.target_state("golden-hb-paused") is TargetState.PAUSED
        assert snap.connector_config("golden-hb")["emit.heartbeats.interval.seconds"] == "2"  # type: ignore[index]
        assert snap.tasks("golden-hb") == [ConnectorTaskId("golden-hb", 0)]
        assert snap.tasks("golden-hb-paused") == []
        task = snap.task_config(ConnectorTaskId("golden-hb", 0))
        assert (
            task is not None and task["task.class"] == "org.apache.kafka.connect.mirror.MirrorHeartbeatTask"
        )
        applying_commits = [
            v for k, v, _ in config_prefix if k == b"commit-golden-hb" and v != b'{"tasks":0}'
        ]
        assert snap.task_config_generation("golden-hb") == len(applying_commits) - 1
        assert snap.session_key is not None and snap.session_key.algorithm == "HmacSHA256"
        assert await offset_store.connector_offsets("golden-hb") == [(HB_PARTITION, {"offset": 0})]
        assert_statuses(status_store, status_prefix)
        assert status_store.get_connector("golden-hb") is not None

        await produce(cluster_a, configs, golden("config", after="created-paused"))
        await produce(cluster_a, offsets, golden("offset", after="created-paused"))
        await produce(cluster_a, statuses, golden("status", after="created-paused"))
        await config_store.refresh(30)
        await status_store.read_to_end()
        snap = config_store.snapshot()
        assert snap.offset == len(golden("config"))
        assert (
            snap.connectors() == []
            and snap.tasks("golden-hb") == []
            and snap.target_state("golden-hb") is None
        )
        assert_statuses(status_store, golden("status"))
        assert status_store.get_connector("golden-hb") is None
        assert (
            await offset_store.get("golden-hb", [HB_PARTITION])
            == [json.loads(v) if v is not None else None for k, v, _ in golden("offset") if k is not None][
                -1:
            ]
        )
    finally:
        await config_store.stop()
        await status_store.stop()
        await offset_store.stop()


async def test_offset_and_status_stores_write_like_java_and_read_back_after_restart(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    offsets, statuses = unique("offsets"), unique("status")
    offset_store = OffsetStore(offset_topic(cluster_a, offsets))
    status_store = StatusStore(status_topic(cluster_a, statuses))
    await offset_store.start()
    await status_store.start()
    try:
        await offset_store.set("golden-hb", [(HB_PARTITION, {"offset": 0})])
        await offset_store.set("src", [({"file": "a"}, {"pos": 1}), ({"file": "b"}, {"pos": 2})])
        await offset_store.set("src", [({"file": "a"}, None)])
        status_store.put(ConnectorStatus("c", State.RUNNING, "127.0.0.1:8083", 3, None, "1.0"))
        status_store.put(
            TaskStatus(ConnectorTaskId("c", 0), State.FAILED, "127.0.0.1:8083", 3, "trace\n\tat x")
        )
        status_store.put_topic(TopicStatus("orders", "c", 0, 1729830000000))
        await status_store.flush()
    finally:
        await offset_store.stop()
        await status_store.stop()

    records: list[tuple[int, bytes | None]] = []
    raw = KafkaLog(
        offsets,
        {"bootstrap.servers": cluster_a.bootstrap_servers},
        lambda rs: records.extend((r.partition, r.key) for r in rs),
        read_only=True,
    )
    await raw.start()
    await raw.stop()
    assert (12, b'["golden-hb",{"sourceClusterAlias":"A","targetClusterAlias":"B"}]') in records

    offset_store = OffsetStore(offset_topic(cluster_a, offsets))
    status_store = StatusStore(status_topic(cluster_a, statuses))
    await offset_store.start()
    await status_store.start()
    try:
        assert await offset_store.connector_offsets("src") == [({"file": "b"}, {"pos": 2})]
        assert await offset_store.get("golden-hb", [HB_PARTITION]) == [{"offset": 0}]
        assert status_store.get_connector("c") == ConnectorStatus(
            "c", State.RUNNING, "127.0.0.1:8083", 3, None, "1.0"
        )
        failed = status_store.get_task(ConnectorTaskId("c", 0))
        assert failed is not None and failed.state is State.FAILED and failed.trace == "trace\n\tat x"
        assert status_store.get_topics("c") == [TopicStatus("orders", "c", 0, 1729830000000)]
    finally:
        await offset_store.stop()
        await status_store.stop()
