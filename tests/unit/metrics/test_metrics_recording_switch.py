"""``pyconnect.metrics.recording.enabled=false``: the data path records nothing (the benchmark's off side)."""

from __future__ import annotations

import pytest

from pyconnect.config.worker import WorkerConfig
from pyconnect.errors import ConfigError
from pyconnect.metrics.connect import ConnectMetrics, SourceTaskMetrics, TaskMetrics
from pyconnect.metrics.registry import MetricsHub, Sensor
from pyconnect.metrics.sink_task import SinkTaskMetrics
from pyconnect.protocol.internal_records import State
from pyconnect.worker.worker import RECORDING_CONFIG, metrics_hub, metrics_recording

BASE = {
    "bootstrap.servers": "k:9092",
    "group.id": "g",
    "config.storage.topic": "c",
    "offset.storage.topic": "o",
    "status.storage.topic": "s",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
}


@pytest.mark.parametrize(("value", "expected"), [(None, True), ("", True), ("true", True), ("FALSE", False)])
def test_the_switch_reads_true_or_false(value: str | None, expected: bool) -> None:
    props = dict(BASE) if value is None else {**BASE, RECORDING_CONFIG: value}
    assert metrics_recording(props) is expected
    assert metrics_hub(WorkerConfig(props)).recording is expected


def test_a_bad_value_is_one_line_naming_the_key() -> None:
    with pytest.raises(ConfigError) as caught:
        metrics_recording({RECORDING_CONFIG: "off"})
    assert str(caught.value) == (
        "Invalid value off for configuration pyconnect.metrics.recording.enabled: "
        "Expected value to be either true or false"
    )


def test_with_recording_off_the_data_path_never_reaches_a_sensor(monkeypatch: pytest.MonkeyPatch) -> None:
    connect = ConnectMetrics("w", MetricsHub(recording=False))
    source = SourceTaskMetrics(connect, "c", 0)
    task = TaskMetrics(connect, "c", 0, State.RUNNING)
    sink = SinkTaskMetrics(connect, "s", 0)

    def refuse(self: Sensor, value: float = 1.0, now_ms: int | None = None) -> None:
        raise AssertionError(f"sensor {self.name} recorded with recording off")

    monkeypatch.setattr(Sensor, "record", refuse)
    source.record_poll(100, 1.5)
    source.record_write(100, 0)
    task.record_batch(100)
    task.record_commit(3.0, True)
    sink.record_read(10)
    sink.record_put(10, 1.0)
    sink.record_active(10)
    assert source.active_records == 0


def test_with_recording_on_the_same_calls_are_measured() -> None:
    hub = MetricsHub()
    connect = ConnectMetrics("w", hub)
    source = SourceTaskMetrics(connect, "c", 0)
    source.record_poll(100, 1.5)
    source.record_write(60, 0)
    values = {r.name.name: r.value for r in hub.read() if r.name.group == "source-task-metrics"}
    assert values["source-record-poll-total"] == 100.0
    assert values["source-record-write-total"] == 60.0
    assert values["source-record-active-count"] == 40.0
