"""The store state machines over in-memory topics: config reader (spec §2.2.3), offsets, status rules (§2.4)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pyconnect.errors import ConfigError, ConnectError, DataError, RetriableError
from pyconnect.protocol.internal_records import (
    ConnectorStatus,
    RestartRequest,
    SessionKeyRecord,
    State,
    TargetState,
    TaskStatus,
    TopicStatus,
    decode_config_record,
    dumps,
    encode_offset_key,
)
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores import MemoryConfigStore, MemoryOffsetStore, MemoryStatusStore, MemoryTopic
from pyconnect.stores.config_events import (
    ConfigEvent,
    ConnectorConfigRemoved,
    ConnectorConfigUpdated,
    LoggerLevelChanged,
    RestartRequested,
    SessionKeyUpdated,
    TargetStateChanged,
    TaskConfigsCommitted,
)

PROPS = {"connector.class": "Demo", "tasks.max": "2", "name": "c"}


class Recorder:
    """A config listener that records every event as a short tuple."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def __call__(self, event: ConfigEvent) -> None:
        match event:
            case ConnectorConfigRemoved(connector=name):
                self.calls.append(("remove", name))
            case ConnectorConfigUpdated(connector=name):
                self.calls.append(("update", name))
            case TaskConfigsCommitted(tasks=tasks):
                self.calls.append(("tasks", list(tasks)))
            case TargetStateChanged(connector=name):
                self.calls.append(("target", name))
            case SessionKeyUpdated(key=key):
                self.calls.append(("session", key.algorithm))
            case RestartRequested(request=request):
                self.calls.append(("restart", request))
            case LoggerLevelChanged(namespace=namespace, level=level):
                self.calls.append(("logger", (namespace, level)))


def task_record(connector: str, n: int, props: dict[str, str] | None = None) -> tuple[bytes, bytes]:
    return f"task-{connector}-{n}".encode(), dumps({"properties": props or {"task.class": "T", "n": str(n)}})


async def started(topic: MemoryTopic | None = None) -> tuple[MemoryConfigStore, Recorder]:
    store = MemoryConfigStore(topic)
    recorder = Recorder()
    store.set_update_listener(recorder)
    await store.start()
    return store, recorder


async def test_task_configs_are_staged_until_their_commit() -> None:
    topic = MemoryTopic("configs")
    store, recorder = await started(topic)
    await store.put_connector_config("c", PROPS)
    topic.append(*task_record("c", 0))
    topic.append(*task_record("c", 1))
    await store.refresh(5)
    snap = store.snapshot()
    assert (
        snap.connectors() == ["c"]
        and snap.tasks("c") == []
        and snap.task_config(ConnectorTaskId("c", 0)) is None
    )
    topic.append(b"commit-c", b'{"tasks":2}')
    await store.refresh(5)
    snap = store.snapshot()
    assert snap.tasks("c") == [ConnectorTaskId("c", 0), ConnectorTaskId("c", 1)]
    assert snap.task_config(ConnectorTaskId("c", 1)) == {"task.class": "T", "n": "1"}
    assert snap.task_config_generation("c") == 0 and snap.applied_connector_config("c") == PROPS
    assert snap.pending_fencing("c") and snap.offset == 4
    assert recorder.calls == [("update", "c"), ("tasks", [ConnectorTaskId("c", 0), ConnectorTaskId("c", 1)])]


async def test_put_task_configs_writes_tasks_then_commit_and_bumps_the_generation() -> None:
    topic = MemoryTopic("configs")
    store, _ = await started(topic)
    await store.put_connector_config("c", PROPS)
    await store.put_task_configs("c", [{"a": "1"}, {"a": "2"}])
    await store.put_task_configs("c", [{"a": "3"}])
    keys = [r.key for r in topic.all_records()]
    assert keys == [b"connector-c", b"task-c-0", b"task-c-1", b"commit-c", b"task-c-0", b"commit-c"]
    assert topic.all_records()[3].value == b'{"tasks":2}'
    snap = store.snapshot()
    assert snap.tasks("c") == [ConnectorTaskId("c", 0)] and snap.all_task_configs("c") == [{"a": "3"}]
    assert snap.task_config_generation("c") == 1
    await store.put_task_configs("c", [])
    assert [r.key for r in topic.all_records()][-1] == b"commit-c" and store.snapshot().tasks("c") == []


async def test_incomplete_commit_makes_the_connector_inconsistent_until_a_complete_one() -> None:
    topic = MemoryTopic("configs")
    store, recorder = await started(topic)
    await store.put_connector_config("c", PROPS)
    topic.append(*task_record("c", 1))
    topic.append(b"commit-c", b'{"tasks":2}')
    await store.refresh(5)
    snap = store.snapshot()
    assert snap.inconsistent_connectors == {"c"} and snap.tasks("c") == [] and snap.task_count("c") == 2
    assert ("tasks", []) in recorder.calls
    topic.append(*task_record("c", 0))
    topic.append(*task_record("c", 1))
    topic.append(*task_record("c", 2))  # a stale extra id (compaction) is allowed
    topic.append(b"commit-c", b'{"tasks":2}')
    await store.refresh(5)
    snap = store.snapshot()
    assert snap.inconsistent_connectors == frozenset() and len(snap.tasks("c")) == 2


async def test_deletion_writes_javas_tombstones_and_removes_the_connector() -> None:
    topic = MemoryTopic("configs")
    store, recorder = await started(topic)
    await store.put_connector_config("c", PROPS, TargetState.PAUSED)
    await store.put_task_configs("c", [{"a": "1"}])
    await store.remove_connector_config("c")
    records = topic.all_records()
    assert [(r.key, r.value) for r in records[-2:]] == [(b"connector-c", None), (b"target-state-c", None)]
    snap = store.snapshot()
    assert snap.connectors() == [] and snap.target_state("c") is None and snap.tasks("c") == []
    assert snap.task_config(ConnectorTaskId("c", 0)) is None and snap.task_count("c") == 0
    assert recorder.calls[-1] == ("remove", "c")
    topic.append(b"commit-c", b'{"tasks":1}')  # a commit for a deleted connector is ignored
    await store.refresh(5)
    assert store.snapshot().tasks("c") == [] and store.snapshot().connectors() == []


async def test_a_target_state_written_with_read_back_is_in_the_snapshot_when_the_write_returns() -> None:
    """Java's ``stopConnector`` reads STOPPED back before it answers: the next request sees it."""

    class Refreshes(MemoryConfigStore):
        def __init__(self) -> None:
            super().__init__()
            self.refreshed: list[float] = []

        async def refresh(self, timeout: float) -> None:
            self.refreshed.append(timeout)
            await super().refresh(timeout)

    store = Refreshes()
    await store.start()
    await store.put_connector_config("c", PROPS)
    await store.put_target_state("c", TargetState.PAUSED)
    assert store.refreshed == []  # pause and resume wait for the broker's ack only, as in Java
    await store.put_target_state("c", TargetState.STOPPED, read_back_timeout=5)
    assert store.refreshed == [5]
    assert store.snapshot().target_state("c") is TargetState.STOPPED


async def test_initial_target_state_is_written_first_and_applies_to_the_new_connector() -> None:
    topic = MemoryTopic("configs")
    store, recorder = await started(topic)
    await store.put_connector_config("c", PROPS, TargetState.STOPPED)
    first, second = topic.all_records()
    assert (first.key, first.value) == (b"target-state-c", b'{"state":"PAUSED","state.v2":"STOPPED"}')
    assert second.key == b"connector-c"
    assert store.snapshot().target_state("c") is TargetState.STOPPED
    assert recorder.calls == [("update", "c")]  # no target-state callback before the connector exists
    await store.put_target_state("c", TargetState.STARTED)
    await store.refresh(5)
    await store.put_target_state("c", TargetState.STARTED)
    await store.refresh(5)
    assert recorder.calls[1:] == [("target", "c")]  # unchanged state: no second callback
    topic.append(b"target-state-c", None)  # tombstone while the config exists -> STARTED
    await store.put_target_state("c", TargetState.PAUSED)
    topic.append(b"target-state-c", None)
    await store.refresh(5)
    assert store.snapshot().target_state("c") is TargetState.STARTED


async def test_connector_without_target_state_defaults_to_started() -> None:
    store, _ = await started()
    await store.put_connector_config("c", PROPS)
    assert store.snapshot().target_state("c") is TargetState.STARTED


async def test_records_read_at_startup_fire_no_callbacks_and_restarts_are_events() -> None:
    topic = MemoryTopic("configs")
    writer, _ = await started(topic)
    await writer.put_connector_config("c", PROPS)
    await writer.put_restart_request(RestartRequest("c", only_failed=True, include_tasks=True))
    await writer.put_logger_level("org.apache", "DEBUG")
    reader, recorder = await started(topic)
    assert recorder.calls == [] and reader.snapshot().connectors() == ["c"]
    await writer.put_restart_request(RestartRequest("c", include_tasks=True))
    await writer.put_logger_level("org.apache", "INFO")
    await reader.refresh(5)
    assert recorder.calls == [
        ("restart", RestartRequest("c", only_failed=False, include_tasks=True)),
        ("logger", ("org.apache", "INFO")),
    ]
    assert reader.snapshot().offset == writer.snapshot().offset == 5


async def test_a_second_store_on_the_topic_hears_writes_from_the_tail() -> None:
    topic = MemoryTopic("configs")
    writer, _ = await started(topic)
    reader, recorder = await started(topic)
    await writer.put_connector_config("c", PROPS)
    for _ in range(10):
        if recorder.calls:
            break
        await asyncio.sleep(0)
    assert recorder.calls == [("update", "c")]
    assert reader.snapshot().connector_config("c") == PROPS


async def test_session_key_and_fencing_records() -> None:
    store, recorder = await started()
    key = SessionKeyRecord(b"\x01" * 32, "HmacSHA256", 1729830000000)
    await store.put_session_key(key)
    await store.put_connector_config("c", PROPS)
    await store.put_task_configs("c", [{"a": "1"}])
    assert store.snapshot().session_key == key and store.snapshot().pending_fencing("c")
    await store.put_task_count_record("c", 1)
    snap = store.snapshot()
    assert not snap.pending_fencing("c") and snap.task_count_record("c") == 1
    assert ("session", "HmacSHA256") in recorder.calls


async def test_corrupt_records_are_skipped_and_only_valid_json_moves_the_offset() -> None:
    topic = MemoryTopic("configs")
    store, recorder = await started(topic)
    await store.put_connector_config("c", PROPS)
    assert store.offset == 1
    topic.append(b"connector-d", b"\x00garbage")  # not JSON: Java's converter fails, offset stays
    await store.refresh(5)
    assert store.offset == 1
    topic.append(b"connector-d", b'{"properties":7}')  # JSON, wrong shape: skipped, offset moves
    topic.append(b"unknown-key", b"{}")
    topic.append(None, b"{}")
    topic.append(b"task-nonumber", b'{"properties":{}}')
    await store.put_connector_config("e", PROPS)
    assert store.offset == 7 and store.snapshot().connectors() == ["c", "e"]
    assert recorder.calls == [("update", "c"), ("update", "e")]


async def test_a_failing_listener_does_not_stop_the_store() -> None:
    class Boom(Recorder):
        def __call__(self, event: ConfigEvent) -> None:
            if isinstance(event, ConnectorConfigUpdated):
                raise RuntimeError("listener bug")

    store = MemoryConfigStore()
    store.set_update_listener(Boom())
    await store.start()
    await store.put_connector_config("a", PROPS)
    await store.put_connector_config("b", PROPS)
    assert store.snapshot().connectors() == ["a", "b"]


async def test_config_topic_with_more_than_one_partition_fails_startup() -> None:
    store = MemoryConfigStore(MemoryTopic("my-configs", 2))
    with pytest.raises(ConfigError) as raised:
        await store.start()
    assert str(raised.value) == (
        "Topic 'my-configs' supplied via the 'config.storage.topic' property is required to have a single partition "
        "in order to guarantee consistency of connector configurations, but found 2 partitions."
    )
    with pytest.raises(ConnectError):
        await store.put_target_state("c", TargetState.PAUSED)


async def test_start_and_stop_are_idempotent_and_writes_after_stop_fail() -> None:
    store = MemoryConfigStore()
    await store.start()
    await store.start()
    await store.put_connector_config("c", PROPS)
    await store.stop()
    await store.stop()
    with pytest.raises(ConnectError):
        await store.put_connector_config("c", PROPS)


async def test_failed_write_raises_a_connect_error() -> None:
    topic = MemoryTopic("configs")
    store, _ = await started(topic)
    topic.fail_sends(RuntimeError("broker says no"))
    with pytest.raises(ConnectError, match="Error writing connector configuration to Kafka"):
        await store.put_connector_config("c", PROPS)


def test_snapshot_of_java_golden_sequence_via_the_state_machine() -> None:
    from pyconnect.stores import ConfigStateMachine

    machine = ConfigStateMachine()
    for key, value in [
        (b"connector-a-b", b'{"properties":{"name":"a-b"}}'),
        (b"task-a-b-0", b'{"properties":{"x":"1"}}'),
        (b"commit-a-b", b'{"tasks":1}'),
    ]:
        machine.apply(decode_config_record(key, value))
    assert machine.snapshot().tasks("a-b") == [ConnectorTaskId("a-b", 0)]


# ---------------------------------------------------------------------------------------------- offsets


async def test_offsets_round_trip_and_tombstones() -> None:
    topic = MemoryTopic("offsets", 25)
    store = MemoryOffsetStore(topic)
    await store.start()
    p1, p2 = {"file": "a"}, {"file": "b"}
    await store.set("src", [(p1, {"pos": 1}), (p2, {"pos": 2.5})])
    assert await store.get("src", [p1, p2, {"file": "c"}]) == [{"pos": 1}, {"pos": 2.5}, None]
    assert sorted(p["file"] for p in store.connector_partitions("src")) == ["a", "b"]
    await store.set("src", [(p1, None)])
    assert await store.get("src", [p1]) == [None]
    assert await store.connector_offsets("src") == [(p2, {"pos": 2.5})]
    restarted = MemoryOffsetStore(topic)
    await restarted.start()
    assert await restarted.connector_offsets("src") == [(p2, {"pos": 2.5})]
    assert restarted.connector_partitions("other") == []


async def test_offsets_written_with_another_key_order_are_found_and_overwritten_in_place() -> None:
    topic = MemoryTopic("offsets", 25)
    java_key = b'["src",{"topic":"t","partition":1,"cluster":"A"}]'
    topic.append(java_key, b'{"offset":7}')
    store = MemoryOffsetStore(topic)
    await store.start()
    ours = {"cluster": "A", "partition": 1, "topic": "t"}
    assert encode_offset_key("src", ours) != java_key
    assert await store.get("src", [ours]) == [{"offset": 7}]
    await store.set("src", [(ours, {"offset": 8})])
    assert topic.all_records()[-1].key == java_key
    assert await store.get_raw([java_key]) == {java_key: b'{"offset":8}'}


async def test_offset_keys_land_on_the_partition_java_picks() -> None:
    topic = MemoryTopic("offsets", 25)
    store = MemoryOffsetStore(topic)
    await store.start()
    await store.set("golden-hb", [({"sourceClusterAlias": "A", "targetClusterAlias": "B"}, {"offset": 0})])
    (record,) = topic.all_records()
    assert record.partition == 12  # where the Java worker's record is in the golden capture


async def test_invalid_offsets_are_rejected_before_writing() -> None:
    topic = MemoryTopic("offsets", 25)
    store = MemoryOffsetStore(topic)
    await store.start()
    with pytest.raises(DataError):
        await store.set("src", [({"file": "a"}, {"pos": [1, 2]})])
    with pytest.raises(DataError):
        await store.set("src", [({"file": {"nested": 1}}, {"pos": 1})])
    assert topic.all_records() == []


async def test_offset_records_with_garbage_keys_are_skipped() -> None:
    topic = MemoryTopic("offsets", 3)
    topic.append(b"not json", b'{"offset":1}', partition=0)
    topic.append(b'["only-one"]', b'{"offset":1}', partition=0)
    topic.append(b'["src",{"p":1}]', b'{"offset":1}', partition=0)
    store = MemoryOffsetStore(topic)
    await store.start()
    assert store.connector_partitions("src") == [{"p": 1}]


# ---------------------------------------------------------------------------------------------- status


def connector_status(state: State, worker: str, generation: int) -> ConnectorStatus:
    return ConnectorStatus("c", state, worker, generation)


def task_status(state: State, worker: str, generation: int, task: int = 0) -> TaskStatus:
    return TaskStatus(ConnectorTaskId("c", task), state, worker, generation)


OPEN_STATUS_STORES: list[MemoryStatusStore] = []


@pytest.fixture(autouse=True)
async def stop_status_stores() -> AsyncIterator[None]:
    yield
    while OPEN_STATUS_STORES:
        await OPEN_STATUS_STORES.pop().stop()


async def status_store(topic: MemoryTopic) -> MemoryStatusStore:
    store = MemoryStatusStore(topic)
    await store.start()
    OPEN_STATUS_STORES.append(store)
    return store


async def test_status_put_is_read_back_and_destroyed_is_a_tombstone() -> None:
    topic = MemoryTopic("status", 5)
    store = await status_store(topic)
    store.put(connector_status(State.RUNNING, "w1:8083", 3))
    store.put(task_status(State.RUNNING, "w1:8083", 3))
    store.put(task_status(State.PAUSED, "w1:8083", 3, task=1))
    await store.flush()
    await store.read_to_end()
    assert store.get_connector("c") == connector_status(State.RUNNING, "w1:8083", 3)
    assert [s.state for s in store.get_all("c")] == [State.RUNNING, State.PAUSED]
    value = next(r.value for r in topic.all_records() if r.key == b"status-connector-c")
    assert value == b'{"state":"RUNNING","trace":null,"worker_id":"w1:8083","generation":3,"version":null}'
    store.put(task_status(State.DESTROYED, "w1:8083", 3, task=1))
    await store.flush()
    await store.read_to_end()
    assert topic.all_records()[-1].value is None and store.get_task(ConnectorTaskId("c", 1)) is None
    store.put(connector_status(State.DESTROYED, "w1:8083", 3))
    await store.flush()
    await store.read_to_end()
    assert store.get_connector("c") is None and store.get_all("c") == []
    other = await status_store(topic)
    assert other.get_connector("c") is None and other.connectors() == set()


async def test_safe_writes_lose_to_a_higher_generation_of_another_worker() -> None:
    topic = MemoryTopic("status", 5)
    store = await status_store(topic)
    store.put(connector_status(State.RUNNING, "w2:8083", 5))
    await store.flush()
    await store.read_to_end()
    before = len(topic.all_records())
    store.put_safe(connector_status(State.UNASSIGNED, "w1:8083", 4))
    await store.flush()
    assert len(topic.all_records()) == before
    store.put_safe(connector_status(State.FAILED, "w2:8083", 1))  # same worker: allowed
    store.put_safe(connector_status(State.UNASSIGNED, "w1:8083", 5))  # same generation: allowed
    await store.flush()
    assert len(topic.all_records()) == before + 2


async def test_unassigned_task_status_does_not_replace_a_newer_running_one() -> None:
    topic = MemoryTopic("status", 5)
    store = await status_store(topic)
    store.put(task_status(State.RUNNING, "w2:8083", 7))
    store.put(task_status(State.UNASSIGNED, "w1:8083", 7))
    await store.flush()
    await store.read_to_end()
    assert store.get_task(ConnectorTaskId("c", 0)) == task_status(State.RUNNING, "w2:8083", 7)
    store.put(task_status(State.UNASSIGNED, "w1:8083", 8))
    await store.flush()
    await store.read_to_end()
    assert store.get_task(ConnectorTaskId("c", 0)) == task_status(State.UNASSIGNED, "w1:8083", 8)


async def test_a_cut_off_workers_late_unassigned_never_hides_the_new_owners_running_connector() -> None:
    """w1 owned the connector at generation 4, was cut off, and stopped it while w2 took it over at 5;
    w1's UNASSIGNED (safe by w1's stale cache) lands after w2's RUNNING and must not replace it. The
    owner's own UNASSIGNED still applies, and so does one from a newer generation."""
    topic = MemoryTopic("status", 5)
    store = await status_store(topic)
    store.put(connector_status(State.RUNNING, "w2:8083", 5))
    store.put(connector_status(State.UNASSIGNED, "w1:8083", 4))
    store.put(connector_status(State.UNASSIGNED, "w1:8083", 5))
    await store.flush()
    await store.read_to_end()
    assert store.get_connector("c") == connector_status(State.RUNNING, "w2:8083", 5)
    store.put(connector_status(State.UNASSIGNED, "w2:8083", 5))  # the owner stopped it
    await store.flush()
    await store.read_to_end()
    assert store.get_connector("c") == connector_status(State.UNASSIGNED, "w2:8083", 5)
    store.put(connector_status(State.RUNNING, "w2:8083", 6))
    store.put(connector_status(State.UNASSIGNED, "w1:8083", 7))
    await store.flush()
    await store.read_to_end()
    assert store.get_connector("c") == connector_status(State.UNASSIGNED, "w1:8083", 7)


async def test_retriable_send_failures_are_retried_and_others_dropped() -> None:
    topic = MemoryTopic("status", 5)
    store = await status_store(topic)
    topic.fail_sends(RetriableError("not leader"), RetriableError("not leader"))
    store.put(connector_status(State.RUNNING, "w1:8083", 2))
    await asyncio.wait_for(store.flush(), 5)
    assert [r.key for r in topic.all_records()] == [b"status-connector-c"]
    topic.fail_sends(ValueError("record too large"))
    store.put(task_status(State.RUNNING, "w1:8083", 2))
    await asyncio.wait_for(store.flush(), 5)
    assert len(topic.all_records()) == 1


async def test_a_retry_is_abandoned_when_the_generation_moved_on() -> None:
    topic = MemoryTopic("status", 5)
    store = MemoryStatusStore(topic, retry_backoff_s=0.05)
    await store.start()
    OPEN_STATUS_STORES.append(store)
    topic.fail_sends(RetriableError("not leader"))
    store.put(task_status(State.RUNNING, "w1:8083", 2))
    await asyncio.sleep(0)
    store.put(task_status(State.RUNNING, "w1:8083", 3, task=1))
    await asyncio.wait_for(store.flush(), 5)
    assert [r.key for r in topic.all_records()] == [b"status-task-c-1"]


async def test_topic_statuses() -> None:
    topic = MemoryTopic("status", 5)
    store = await status_store(topic)
    store.put_topic(TopicStatus("orders", "c", 0, 1729830000000))
    store.put_topic(TopicStatus("audit", "c", 1, 1729830000001))
    await store.flush()
    await store.read_to_end()
    assert sorted(t.topic for t in store.get_topics("c")) == ["audit", "orders"]
    assert store.get_topic("c", "orders") == TopicStatus("orders", "c", 0, 1729830000000)
    store.delete_topic("c", "orders")
    await store.flush()
    await store.read_to_end()
    assert [t.topic for t in store.get_topics("c")] == ["audit"] and store.get_topics("x") == []


async def test_corrupt_status_records_are_skipped() -> None:
    topic = MemoryTopic("status", 1)
    topic.append(b"status-connector-c", b"{{{")
    topic.append(b"status-task-c", b'{"state":"RUNNING"}')
    topic.append(b"status-connector-c", b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":1}')
    topic.append(b"status-topic-x", b"{}")
    store = await status_store(topic)
    assert store.get_connector("c") == connector_status(State.RUNNING, "w", 1)
    await store.stop()
    await store.stop()


def test_stores_from_a_worker_config_use_javas_topics_client_ids_and_producer_settings() -> None:
    from pyconnect.config.worker import WorkerConfig
    from pyconnect.stores import ConfigStore, InternalTopic, OffsetStore, StatusStore

    worker = WorkerConfig(
        {
            "bootstrap.servers": "127.0.0.1:9092",
            "group.id": "G",
            "client.id": "w1",
            "config.storage.topic": "cfg",
            "offset.storage.topic": "off",
            "status.storage.topic": "st",
            "config.storage.replication.factor": "-1",
            "offset.storage.min.insync.replicas": "1",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        },
        environ={},
    )
    config, offsets, status = (
        ConfigStore.from_worker_config(worker).topic,
        OffsetStore.from_worker_config(worker).topic,
        StatusStore.from_worker_config(worker).topic,
    )
    assert (
        isinstance(config, InternalTopic)
        and isinstance(offsets, InternalTopic)
        and isinstance(status, InternalTopic)
    )
    assert (config.name, config.partitions, config.replication_factor) == ("cfg", 1, -1)
    assert (offsets.name, offsets.partitions, offsets.topic_configs) == (
        "off",
        25,
        {"min.insync.replicas": "1"},
    )
    assert (status.name, status.partitions) == ("st", 5)
    assert config.producer_config["client.id"] == "G-w1-configs"
    assert config.producer_config["enable.idempotence"] == "false"
    assert status.consumer_config["client.id"] == "G-w1-statuses"
    assert "delivery.timeout.ms" not in status.producer_config
    # a source-offsets write the worker gave up on (offset.flush.timeout.ms, 5 s by default) is not
    # retried later by the client, where it could land after a newer owner's commit (beyond Java)
    assert offsets.producer_config["delivery.timeout.ms"] == "5000"
    assert config.producer_config["delivery.timeout.ms"] == str(2**31 - 1)  # Java's, for the configs
    assert config.client_config["bootstrap.servers"] == "127.0.0.1:9092"


async def test_a_zombies_failure_report_never_overwrites_the_new_owners_running_status() -> None:
    """Reports are written as Java's AbstractHerder writes them: FAILED and UNASSIGNED safely, the rest
    plainly (a RUNNING of any worker is written)."""
    topic = MemoryTopic("status", 5)
    store = await status_store(topic)
    store.report(task_status(State.RUNNING, "w2:8083", 9))  # the new owner, generation 9
    await store.flush()
    await store.read_to_end()
    store.report(task_status(State.FAILED, "w1:8083", 8))  # the zombie of generation 8 fails
    store.report(task_status(State.UNASSIGNED, "w1:8083", 8))
    await store.flush()
    await store.read_to_end()
    assert store.get_task(ConnectorTaskId("c", 0)) == task_status(State.RUNNING, "w2:8083", 9)
    store.report(task_status(State.FAILED, "w2:8083", 9))  # the owner itself fails: written
    await store.flush()
    await store.read_to_end()
    assert store.get_task(ConnectorTaskId("c", 0)) == task_status(State.FAILED, "w2:8083", 9)
