"""The standalone herder over a real Worker and FileOffsetStore; only the Kafka producer is a fake.

Covers the HerderApi as the REST layer uses it in standalone mode: create, statuses, pause/resume,
stop (tasks removed, offsets editable), restart, delete, and the distributed-only internal endpoint.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pyconnect.config.standalone import StandaloneConfig
from pyconnect.errors import AlreadyExistsError, BadRequestError, NotFoundError
from pyconnect.herder.herder import Herder
from pyconnect.herder.standalone import standalone_herder
from pyconnect.protocol.internal_records import TargetState
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.file_offsets import FileOffsetStore
from pyconnect.worker import task_assembly
from pyconnect.worker.plugins import PluginRegistry
from pyconnect.worker.status import RecordingReporter
from pyconnect.worker.worker import Worker


class FakeBatch:
    def __init__(self) -> None:
        self.count = 0

    def append(self, **_: Any) -> object:
        self.count += 1
        return object()

    def size(self) -> int:
        return 0

    def close(self) -> None:
        pass


class FakeProducer:
    """Acknowledges every batch at once."""

    _max_request_size = 1 << 20

    def __init__(self, _config: Any) -> None:
        self.offset = 0
        # The metadata view a batch sender reads before it hands a batch over: every topic has one partition.
        self.client = SimpleNamespace(
            cluster=SimpleNamespace(partitions_for_topic=lambda _topic: {0}),
            force_metadata_update=lambda: None,
            _topics=set(),
            set_topics=self._set_topics,
        )

    async def _set_topics(self, topics: set[str]) -> None:
        self.client._topics = set(topics)

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def partitions_for(self, _topic: str) -> set[int]:
        return {0}

    def create_batch(self) -> FakeBatch:
        return FakeBatch()

    async def send_batch(self, batch: FakeBatch, _topic: str, partition: int) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        future.set_result(SimpleNamespace(offset=self.offset))
        self.offset += batch.count
        return future


VERIFIABLE = {
    "name": "v",
    "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
    "tasks.max": "2",
    "topic": "t",
    "throughput": "1000",
}


@pytest.fixture
async def herder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Herder]:
    monkeypatch.setattr(task_assembly, "create_producer", FakeProducer)
    config = StandaloneConfig(
        {
            "bootstrap.servers": "127.0.0.1:9",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "offset.storage.file.filename": str(tmp_path / "offsets.json"),
            "offset.flush.interval.ms": "50",
        }
    )
    offsets = FileOffsetStore(tmp_path / "offsets.json")
    await offsets.start()
    worker = Worker(
        "127.0.0.1:8083", config, PluginRegistry.from_entry_points(), offsets, RecordingReporter()
    )
    herder = standalone_herder(config, worker=worker, kafka_cluster_id="cluster")
    await herder.start()
    herder.mark_ready()
    try:
        yield herder
    finally:
        await herder.stop()
        await offsets.stop()


async def eventually(probe: Any, timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not probe():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.02)


def states(herder: Herder, name: str) -> tuple[str, list[str]]:
    info = herder.connector_status(name)
    return info.connector.state, [t.state for t in info.tasks]


async def test_create_runs_connector_and_tasks(herder: Herder) -> None:
    created, info = await herder.put_connector_config("v", VERIFIABLE, allow_replace=False)
    assert created and info.type.value == "source"
    assert info.tasks == [ConnectorTaskId("v", 0), ConnectorTaskId("v", 1)]
    await eventually(lambda: states(herder, "v") == ("RUNNING", ["RUNNING", "RUNNING"]))
    assert herder.connectors() == ["v"]
    task_configs = await herder.task_configs("v")
    assert [t.id.task for t in task_configs] == [0, 1]
    assert all("task.class" in t.config for t in task_configs)
    with pytest.raises(AlreadyExistsError):
        await herder.put_connector_config("v", VERIFIABLE, allow_replace=False)
    await eventually(lambda: len(herder.worker.offset_store.connector_partitions("v")) == 2)


async def test_invalid_config_is_a_bad_request(herder: Herder) -> None:
    with pytest.raises(BadRequestError):
        await herder.put_connector_config("v", {"tasks.max": "1"}, allow_replace=False)
    assert herder.connectors() == []


async def test_pause_resume_stop_and_offsets(herder: Herder) -> None:
    await herder.put_connector_config("v", VERIFIABLE, allow_replace=False)
    await eventually(lambda: states(herder, "v") == ("RUNNING", ["RUNNING", "RUNNING"]))
    await herder.pause_connector("v")
    await eventually(lambda: states(herder, "v") == ("PAUSED", ["PAUSED", "PAUSED"]))
    await herder.resume_connector("v")
    await eventually(lambda: states(herder, "v") == ("RUNNING", ["RUNNING", "RUNNING"]))

    with pytest.raises(BadRequestError, match="STOPPED"):
        await herder.reset_connector_offsets("v")
    await herder.stop_connector("v")
    assert states(herder, "v") == ("STOPPED", [])
    assert (await herder.connector_info("v")).tasks == []
    message = await herder.alter_connector_offsets("v", [({"id": 0}, {"seqno": 41})])
    assert "altered successfully" in message
    offsets = (await herder.connector_offsets("v"))["offsets"]
    assert {"partition": {"id": 0}, "offset": {"seqno": 41}} in offsets
    await herder.reset_connector_offsets("v")
    assert (await herder.connector_offsets("v"))["offsets"] == []

    await herder.resume_connector("v")
    await eventually(lambda: states(herder, "v") == ("RUNNING", ["RUNNING", "RUNNING"]))


async def test_restart_and_delete(herder: Herder) -> None:
    await herder.put_connector_config("v", VERIFIABLE, allow_replace=False)
    await eventually(lambda: states(herder, "v") == ("RUNNING", ["RUNNING", "RUNNING"]))
    assert await herder.restart_connector("v", include_tasks=False, only_failed=False) is None
    plan = await herder.restart_connector("v", include_tasks=True, only_failed=False)
    assert plan is not None and plan.connector.state == "RESTARTING"
    assert [t.state for t in plan.tasks] == ["RESTARTING", "RESTARTING"]
    await eventually(lambda: states(herder, "v") == ("RUNNING", ["RUNNING", "RUNNING"]))
    await herder.restart_task(ConnectorTaskId("v", 1))
    await eventually(lambda: states(herder, "v") == ("RUNNING", ["RUNNING", "RUNNING"]))
    with pytest.raises(NotFoundError):
        await herder.restart_task(ConnectorTaskId("v", 7))

    await herder.delete_connector("v")
    assert herder.connectors() == []
    with pytest.raises(NotFoundError):
        herder.connector_status("v")
    with pytest.raises(NotFoundError):
        await herder.delete_connector("v")


async def test_replace_with_new_task_count_and_initial_state(herder: Herder) -> None:
    await herder.put_connector_config("v", VERIFIABLE, allow_replace=False, initial_state=TargetState.PAUSED)
    await eventually(lambda: states(herder, "v")[0] == "PAUSED")
    await herder.resume_connector("v")
    created, info = await herder.put_connector_config(
        "v", {**VERIFIABLE, "tasks.max": "1"}, allow_replace=True
    )
    assert not created and info.tasks == [ConnectorTaskId("v", 0)]
    await eventually(lambda: states(herder, "v") == ("RUNNING", ["RUNNING"]))
    patched = await herder.patch_connector_config("v", {"tasks.max": "3"})
    assert len(patched.tasks) == 3


async def test_task_configs_from_outside_are_refused(herder: Herder) -> None:
    with pytest.raises(BadRequestError, match="standalone"):
        await herder.put_task_configs("v", [], b"[]", {})
    await herder.set_cluster_logger_level("pyconnect.herder", "DEBUG")
    assert herder.logger_level("pyconnect.herder")["level"] == "DEBUG"
    await herder.set_cluster_logger_level("pyconnect.herder", "INFO")
