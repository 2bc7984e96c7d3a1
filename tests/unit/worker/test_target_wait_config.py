"""``pyconnect.target.wait.max.ms`` and the target's reachability bound (pyconnect.worker.target_wait_config):
parsed from a connector config, refused with a 400 naming the key at create and counted by
``/config/validate``, and handed to the connector's tasks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import pyconnect.worker.worker as worker_module
from pyconnect.config.standalone import StandaloneConfig
from pyconnect.errors import BadRequestError
from pyconnect.herder.herder import Herder
from pyconnect.herder.standalone import standalone_herder
from pyconnect.kafka.target_waits import WaitBounds
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.file_offsets import FileOffsetStore
from pyconnect.worker import task_assembly
from pyconnect.worker.plugins import PluginRegistry
from pyconnect.worker.status import RecordingReporter
from pyconnect.worker.target_wait_config import target_label, target_wait_error, wait_bounds
from tests.unit.herder.test_standalone_herder import VERIFIABLE, FakeProducer, eventually

KEY = "pyconnect.target.wait.max.ms"


def test_absent_means_for_ever_and_fifteen_seconds_to_unreachable() -> None:
    assert wait_bounds({}) == WaitBounds(None, 15.0)


def test_the_bound_and_half_the_target_latency_are_read() -> None:
    bounds = wait_bounds({KEY: " 120000 ", "pyconnect.mirror.target.latency.ms": "10000"})
    assert bounds == WaitBounds(120.0, 5.0)
    assert wait_bounds({"pyconnect.mirror.target.latency.ms": "1000"}).unreachable_after_s == 1.0


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("0", f"Invalid value 0 for configuration {KEY}: Value must be at least 1"),
        ("-5", f"Invalid value -5 for configuration {KEY}: Value must be at least 1"),
        ("soon", f"Invalid value soon for configuration {KEY}: Not a number of type LONG"),
        ("1", None),
        (None, None),
    ],
)
def test_only_a_positive_duration_is_valid(value: str | None, error: str | None) -> None:
    assert target_wait_error(value) == error


def test_a_mirror_tasks_target_is_named_by_its_alias() -> None:
    assert target_label("cluster 127.0.0.1:9092", {"target.cluster.alias": "B"}) == (
        "target cluster B (127.0.0.1:9092)"
    )
    assert target_label("cluster 127.0.0.1:9092", {}) == "cluster 127.0.0.1:9092"
    assert target_label("the worker's Kafka cluster", {"target.cluster.alias": "B"}) == "target cluster B"


@pytest.fixture
async def herder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Herder]:
    monkeypatch.setattr(task_assembly, "create_producer", FakeProducer)
    config = StandaloneConfig(
        {
            "bootstrap.servers": "127.0.0.1:9",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "offset.storage.file.filename": str(tmp_path / "offsets.json"),
        }
    )
    offsets = FileOffsetStore(tmp_path / "offsets.json")
    await offsets.start()
    worker = worker_module.Worker(
        "127.0.0.1:8083", config, PluginRegistry.from_entry_points(), offsets, RecordingReporter()
    )
    found = standalone_herder(config, worker=worker, kafka_cluster_id="cluster")
    await found.start()
    found.mark_ready()
    try:
        yield found
    finally:
        await found.stop()
        await offsets.stop()


async def test_an_invalid_bound_is_a_bad_request_naming_the_key(herder: Herder) -> None:
    with pytest.raises(BadRequestError, match=f"Invalid value 0 for configuration {KEY}"):
        await herder.put_connector_config("v", {**VERIFIABLE, KEY: "0"}, allow_replace=False)
    assert herder.connectors() == []
    infos = await herder.validate_connector_config("VerifiableSource", {**VERIFIABLE, KEY: "later"})
    assert infos["error_count"] == 1
    (entry,) = [c for c in infos["configs"] if c["value"]["name"] == KEY]
    assert entry["value"]["errors"] == [
        f"Invalid value later for configuration {KEY}: Not a number of type LONG"
    ]
    valid = await herder.validate_connector_config("VerifiableSource", {**VERIFIABLE, KEY: "60000"})
    assert valid["error_count"] == 0


async def test_the_bound_reaches_the_connectors_tasks(herder: Herder) -> None:
    await herder.put_connector_config(
        "v", {**VERIFIABLE, "tasks.max": "1", KEY: "60000"}, allow_replace=False
    )
    task_id = ConnectorTaskId("v", 0)
    await eventually(lambda: task_id in herder.worker.tasks)
    assert herder.worker.tasks[task_id].sender.lanes.waits.bounds == WaitBounds(60.0, 15.0)
