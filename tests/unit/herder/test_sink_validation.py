"""Sink-only connector checks with Java's messages, and the example sink plugins' own behaviour."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from connectors.file import FileStreamSinkConnector, FileStreamSinkTask
from connectors.verifiable import VerifiableSinkTask
from pyconnect.api.data import INT64_SCHEMA
from pyconnect.api.sink import SinkRecord, TopicPartition
from pyconnect.config.definition import ConfigValue
from pyconnect.herder.sink_validation import check_sink_config


def errors(props: dict[str, str], group: str | None = "connect-cluster") -> dict[str, list[str]]:
    validated: dict[str, ConfigValue] = {}
    check_sink_config(props, validated, group)
    return {k: v.errors for k, v in validated.items() if v.errors}


def test_exactly_one_of_topics_and_regex() -> None:
    both = "topics and topics.regex are mutually exclusive options, but both are set."
    assert errors({"name": "s", "topics": "a", "topics.regex": "a.*"}) == {
        "topics": [both],
        "topics.regex": [both],
    }
    neither = "Must configure one of topics or topics.regex"
    assert errors({"name": "s", "topics": " "}) == {"topics": [neither], "topics.regex": [neither]}
    assert errors({"name": "s", "topics": "a"}) == {}
    assert errors({"name": "s", "topics.regex": "a.*"}) == {}


def test_dead_letter_queue_topic_is_not_consumed() -> None:
    found = errors({"name": "s", "topics": "a, dlq", "errors.deadletterqueue.topic.name": "dlq"})
    assert found == {
        "topics": [
            "The DLQ topic 'dlq' may not be included in the list of topics ('topics=[a, dlq]') consumed by the connector"
        ]
    }
    found = errors({"name": "s", "topics.regex": "d.*", "errors.deadletterqueue.topic.name": "dlq"})
    assert found["topics.regex"] == [
        "The DLQ topic 'dlq' may not be matched by the regex for the topics ('topics.regex=d.*') consumed by the "
        "connector"
    ]


def test_consumer_group_must_not_be_the_worker_group() -> None:
    assert errors({"name": "cluster", "topics": "a"}, "connect-cluster") == {
        "name": [
            "Consumer group for sink connector named cluster conflicts with Connect worker group connect-cluster"
        ]
    }
    assert errors({"name": "s", "topics": "a", "consumer.override.group.id": "g"}, "g") == {
        "consumer.override.group.id": ["Consumer group g conflicts with Connect worker group g"]
    }
    assert errors({"name": "cluster", "topics": "a"}, None) == {}  # standalone: no worker group


def record(value: object, offset: int = 0, key: object = 1) -> SinkRecord:
    return SinkRecord("t", 0, None, key, INT64_SCHEMA, value, offset)


def test_file_sink_writes_one_line_per_value(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    connector = FileStreamSinkConnector()
    connector.start({"file": str(target), "topics": "t"})
    assert connector.task_configs(2) == [{"file": str(target), "topics": "t"}] * 2
    task = FileStreamSinkTask()
    task.start({"file": str(target)})
    task.put([record(1), record(None, 1), record("x", 2), record(True, 3)])
    task.put([])
    assert task.pre_commit({TopicPartition("t", 0): 4}) == {TopicPartition("t", 0): 4}  # flushes
    assert target.read_text() == "1\nnull\nx\ntrue\n"
    task.stop()


def test_file_sink_refuses_an_unwritable_file(tmp_path: Path) -> None:
    task = FileStreamSinkTask()
    with pytest.raises(Exception, match="Couldn't find or create file"):
        task.start({"file": str(tmp_path / "missing-dir" / "out.txt")})


def test_verifiable_sink_lines_and_flushes(caplog: pytest.LogCaptureFixture) -> None:
    task = VerifiableSinkTask()
    task.start({"name": "v", "id": "2"})
    with caplog.at_level(logging.DEBUG, logger="connectors.verifiable.sink"):
        task.put([record(7, offset=11, key=0)])
        task.flush({TopicPartition("t", 0): 12})
    lines = [json.loads(r.getMessage()) for r in caplog.records]
    assert [line["seqno"] for line in lines] == [7, 7]
    assert lines[0] == {**lines[0], "name": "v", "task": 0, "sinkTask": 2, "topic": "t", "offset": 11}
    assert "flushed" not in lines[0] and lines[1]["flushed"] is True
