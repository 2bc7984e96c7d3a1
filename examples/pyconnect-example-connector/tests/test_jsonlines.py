"""JsonLinesSink without a worker: a fake task context, real files in a temporary directory."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pyconnect.api.sink import SinkRecord
from pyconnect.errors import ConnectError

from pyconnect_example.jsonlines import JsonLinesSinkConnector, JsonLinesSinkTask


class FakeReporter:
    def __init__(self) -> None:
        self.reported: list[tuple[SinkRecord, BaseException]] = []

    def report(self, record: SinkRecord, error: BaseException) -> None:
        self.reported.append((record, error))


class FakeContext:
    """The part of ``SinkTaskContext`` the task uses."""

    def __init__(self, config: Mapping[str, str], reporter: FakeReporter | None) -> None:
        self.config = config
        self.reporter = reporter

    def errant_record_reporter(self) -> FakeReporter | None:
        return self.reporter


def record(offset: int, value: Any, key: Any = None) -> SinkRecord:
    return SinkRecord("in", 0, None, key, None, value, offset, timestamp=1000 + offset)


def started(path: Path, reporter: FakeReporter | None = None) -> JsonLinesSinkTask:
    config = {"file": str(path), "topics": "in"}
    task = JsonLinesSinkTask()
    task.initialize(FakeContext(config, reporter))  # type: ignore[arg-type]
    task.start(config)
    return task


def test_records_are_appended_as_json_lines_and_flushed(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    task = started(out)
    task.put([record(0, "zero", key="k"), record(1, {"n": 1})])
    task.put([])
    assert task.pre_commit({}) == {}
    task.stop()
    task = started(out)
    task.put([record(2, None)])
    task.stop()
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0] == {
        "topic": "in",
        "partition": 0,
        "offset": 0,
        "timestamp": 1000,
        "key": "k",
        "value": "zero",
    }
    assert [line["value"] for line in lines] == ["zero", {"n": 1}, None]


def test_a_value_json_cannot_hold_goes_to_the_reporter_and_the_rest_is_written(tmp_path: Path) -> None:
    out, reporter = tmp_path / "out.jsonl", FakeReporter()
    task = started(out, reporter)
    task.put([record(0, "a"), record(1, b"\x00"), record(2, float("nan")), record(3, "b")])
    task.stop()
    assert [json.loads(line)["value"] for line in out.read_text().splitlines()] == ["a", "b"]
    assert [r.kafka_offset for r, _ in reporter.reported] == [1, 2]
    assert "Record in-0@1 cannot be written as JSON" in str(reporter.reported[0][1])


def test_without_a_reporter_such_a_record_fails_the_task(tmp_path: Path) -> None:
    task = started(tmp_path / "out.jsonl")
    with pytest.raises(ConnectError, match="Record in-0@7 cannot be written as JSON"):
        task.put([record(7, b"\x00")])
    task.stop()


def test_validation_wants_an_absolute_path_in_an_existing_directory(tmp_path: Path) -> None:
    def errors(config: dict[str, str]) -> list[str]:
        return JsonLinesSinkConnector().validate(config)["file"].errors

    assert errors({"file": str(tmp_path / "out.jsonl")}) == []
    assert errors({"file": "out.jsonl"}) == [
        "Invalid value out.jsonl for configuration file: must be an absolute path"
    ]
    missing = tmp_path / "nowhere" / "out.jsonl"
    assert errors({"file": str(missing)}) == [
        f"Invalid value {missing} for configuration file: the directory {missing.parent} does not exist"
    ]
    assert errors({}) == ['Missing required configuration "file" which has no default value.']
