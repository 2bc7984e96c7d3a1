"""Our internal-topic codecs against the records a Java 4.3.1 worker wrote (connect_internal_topics.json).

Every captured config, offset and status record is decoded by our decoder, and our encoder must give
back Java's exact key and value bytes. The MirrorMaker 2 file's Connect topics (a second Java writer)
are checked the same way.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pyconnect.protocol.internal_records import (
    CommitRecord,
    ConnectorConfigRecord,
    ConnectorStatus,
    InternalRecordError,
    LoggerLevelRecord,
    RestartRequest,
    SessionKeyRecord,
    State,
    TargetState,
    TargetStateRecord,
    TaskConfigRecord,
    TaskCountRecord,
    TaskStatus,
    TopicStatus,
    decode_config_record,
    decode_offset_key,
    decode_offset_value,
    decode_status_record,
    dumps,
    encode_config_record,
    encode_offset_key,
    encode_offset_value,
    encode_status,
    encode_topic_status,
    encode_topic_status_tombstone,
    java_hash_map_order,
    loads,
)
from pyconnect.protocol.task_id import ConnectorTaskId

GOLDEN = Path(__file__).resolve().parent
CONNECT = json.loads((GOLDEN / "connect_internal_topics.json").read_text())
MM2 = json.loads((GOLDEN / "mm2_records.json").read_text())


def blob(value: dict[str, Any] | None) -> bytes | None:
    return None if value is None else base64.b64decode(value["base64"])


def records(data: dict[str, Any], role: str) -> list[dict[str, Any]]:
    return [r for r in data["records"] if r["role"] == role]


def record_id(record: dict[str, Any]) -> str:
    key = record["key"]["text"] if record["key"] else None
    return f"{record['step']}:{record['partition']}:{record['offset']}:{key}"


CONFIG_RECORDS = records(CONNECT, "config") + records(MM2, "connect-configs-A->B")
OFFSET_RECORDS = records(CONNECT, "offset") + records(MM2, "connect-offsets-A->B")
STATUS_RECORDS = records(CONNECT, "status") + records(MM2, "connect-status-A->B")


@pytest.mark.parametrize("record", CONFIG_RECORDS, ids=record_id)
def test_config_records_round_trip_to_javas_bytes(record: dict[str, Any]) -> None:
    key, value = blob(record["key"]), blob(record["value"])
    decoded = decode_config_record(key, value)
    assert encode_config_record(decoded) == (key, value)


@pytest.mark.parametrize("record", OFFSET_RECORDS, ids=record_id)
def test_offset_records_round_trip_to_javas_bytes(record: dict[str, Any]) -> None:
    key, value = blob(record["key"]), blob(record["value"])
    connector, partition = decode_offset_key(key)
    assert encode_offset_key(connector, partition) == key
    assert encode_offset_value(decode_offset_value(value)) == value


@pytest.mark.parametrize("record", STATUS_RECORDS, ids=record_id)
def test_status_records_round_trip_to_javas_bytes(record: dict[str, Any]) -> None:
    key, value = blob(record["key"]), blob(record["value"])
    parsed_key, status = decode_status_record(key, value)
    assert parsed_key.raw.encode() == key
    if status is None:
        assert value is None
        if parsed_key.topic is not None:
            assert encode_topic_status_tombstone(parsed_key.topic, parsed_key.connector) == (key, None)
        elif parsed_key.task is not None:
            assert encode_status(TaskStatus(parsed_key.task_id, State.DESTROYED, "w", 0)) == (key, None)
        else:
            assert encode_status(ConnectorStatus(parsed_key.connector, State.DESTROYED, "w", 0)) == (
                key,
                None,
            )
    elif isinstance(status, TopicStatus):
        assert encode_topic_status(status) == (key, value)
    else:
        assert encode_status(status) == (key, value)


def test_the_captures_cover_every_record_kind() -> None:
    kinds = Counter(
        type(decode_config_record(blob(r["key"]), blob(r["value"]))).__name__ for r in CONFIG_RECORDS
    )
    assert {
        "SessionKeyRecord",
        "ConnectorConfigRecord",
        "TaskConfigRecord",
        "CommitRecord",
        "TargetStateRecord",
        "RestartRequest",
    } <= set(kinds)
    assert len(OFFSET_RECORDS) > 20 and len(STATUS_RECORDS) > 30


def find(role: str, step: str, key: str) -> list[dict[str, Any]]:
    return [
        r
        for r in CONNECT["records"]
        if r["role"] == role and r["step"] == step and r["key"] and r["key"]["text"] == key
    ]


def test_decoded_values_match_the_scenario() -> None:
    (session,) = find("config", "worker-started", "session-key")
    decoded = decode_config_record(blob(session["key"]), blob(session["value"]))
    assert isinstance(decoded, SessionKeyRecord)
    assert decoded.algorithm == "HmacSHA256" and len(decoded.key_bytes) == 32

    (stopped,) = find("config", "stopped", "target-state-golden-hb")
    assert decode_config_record(blob(stopped["key"]), blob(stopped["value"])) == TargetStateRecord(
        "golden-hb", TargetState.STOPPED
    )
    assert encode_config_record(TargetStateRecord("golden-hb", TargetState.STOPPED))[1] == (
        b'{"state":"PAUSED","state.v2":"STOPPED"}'
    )
    (commit_zero,) = find("config", "stopped", "commit-golden-hb")
    assert decode_config_record(blob(commit_zero["key"]), blob(commit_zero["value"])) == CommitRecord(
        "golden-hb", 0
    )

    (restart,) = find("config", "restarted", "restart-connector-golden-hb")
    assert decode_config_record(blob(restart["key"]), blob(restart["value"])) == RestartRequest(
        "golden-hb", only_failed=False, include_tasks=True
    )
    assert encode_config_record(RestartRequest("golden-hb", include_tasks=True)) == (
        blob(restart["key"]),
        blob(restart["value"]),
    )

    deletions = [
        decode_config_record(blob(r["key"]), blob(r["value"]))
        for r in CONNECT["records"]
        if r["role"] == "config" and r["step"] == "deleted"
    ]
    assert deletions == [
        ConnectorConfigRecord("golden-hb", None),
        TargetStateRecord("golden-hb", None),
        ConnectorConfigRecord("golden-hb-paused", None),
        TargetStateRecord("golden-hb-paused", None),
    ]
    assert encode_config_record(ConnectorConfigRecord("golden-hb", None)) == (b"connector-golden-hb", None)

    (task,) = find("config", "connector-created", "task-golden-hb-0")
    decoded_task = decode_config_record(blob(task["key"]), blob(task["value"]))
    assert isinstance(decoded_task, TaskConfigRecord)
    assert decoded_task.task_id == ConnectorTaskId("golden-hb", 0)
    assert decoded_task.properties is not None
    assert decoded_task.properties["task.class"] == "org.apache.kafka.connect.mirror.MirrorHeartbeatTask"


def test_status_values_carry_version_and_null_trace() -> None:
    running = find("status", "connector-created", "status-task-golden-hb-0")[0]
    key, status = decode_status_record(blob(running["key"]), blob(running["value"]))
    assert isinstance(status, TaskStatus)
    assert (status.task_id, status.state, status.trace, status.version) == (
        ConnectorTaskId("golden-hb", 0),
        State.RUNNING,
        None,
        CONNECT["kafka_version"],
    )
    worker_ids = {url.removeprefix("http://").rstrip("/") for url in CONNECT["worker"]["worker_urls"]}
    assert status.worker_id in worker_ids and status.generation > 0
    unassigned = find("status", "stopped", "status-task-golden-hb-0")[0]
    _, status = decode_status_record(blob(unassigned["key"]), blob(unassigned["value"]))
    assert isinstance(status, TaskStatus) and status.state is State.UNASSIGNED and status.version is None
    topic = find("status", "connector-created", "status-topic-heartbeats:connector-golden-hb")[0]
    key, topic_status = decode_status_record(blob(topic["key"]), blob(topic["value"]))
    assert key.topic == "heartbeats" and key.connector == "golden-hb"
    assert isinstance(topic_status, TopicStatus) and topic_status.task == 0


def test_java_hash_map_order_reproduces_javas_partition_key_bytes() -> None:
    """Java's source tasks build partition maps as HashMaps; the key bytes follow that order."""
    multi_key = 0
    for record in OFFSET_RECORDS:
        connector, partition = decode_offset_key(blob(record["key"]))
        assert partition is not None
        shuffled = dict(reversed(list(partition.items())))
        assert encode_offset_key(connector, java_hash_map_order(shuffled)) == blob(record["key"])
        multi_key += len(partition) > 1
    assert multi_key > 0


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (b"connector-x", b"{not json"),
        (b"connector-x", b'{"properties":"x"}'),
        (b"connector-x", b"[1,2]"),
        (b"task-x", b'{"properties":{}}'),
        (b"task-x-y", b'{"properties":{}}'),
        (b"commit-x", b'{"tasks":"3"}'),
        (b"commit-x", b'{"tasks":1.5}'),
        (b"session-key", b'{"key":"!!","algorithm":"HmacSHA256","creation-timestamp":1}'),
        (b"session-key", b'{"key":"AA==","algorithm":"HmacSHA256","creation-timestamp":1.0}'),
        (b"target-state-x", b'{"state":"RUNNING"}'),
        (b"logger-cluster-x", b'{"level":7}'),
        (b"what-is-this", b"{}"),
        (None, b"{}"),
        (b"connector-x", b"\xff\xfe"),
    ],
)
def test_garbage_config_records_raise_a_clear_error(key: bytes | None, value: bytes) -> None:
    with pytest.raises(InternalRecordError):
        decode_config_record(key, value)


def test_decoders_are_as_tolerant_as_javas_reader() -> None:
    assert decode_config_record(b"target-state-x", b'{"state":"PAUSED","state.v2":7}') == TargetStateRecord(
        "x", TargetState.PAUSED
    )
    assert decode_config_record(b"target-state-x", b'{"state":"STARTED"}') == TargetStateRecord(
        "x", TargetState.STARTED
    )
    assert decode_config_record(b"restart-connector-x", b'{"include-tasks":"yes"}') == RestartRequest(
        "x", False, False
    )
    assert decode_config_record(b"task-a-b-c-12", b'{"properties":{"k":null}}') == TaskConfigRecord(
        ConnectorTaskId("a-b-c", 12), {"k": None}
    )
    assert decode_config_record(b"commit-x", b'{"tasks":2} trailing') == CommitRecord("x", 2)
    assert decode_config_record(b"connector-x", b"null") == ConnectorConfigRecord("x", None)
    assert decode_config_record(
        b"connector-x", b'{"properties":{"tasks.max":2,"on":true}}'
    ) == ConnectorConfigRecord("x", {"tasks.max": "2", "on": "true"})
    with pytest.raises(InternalRecordError) as raised:
        decode_config_record(b"connector-x", b"nope")
    assert raised.value.converted is False


def test_status_key_parsing_follows_java() -> None:
    assert decode_status_record(b"status-task-a-b-3", None)[0].task_id == ConnectorTaskId("a-b", 3)
    for bad in (
        b"status-task-x",
        b"status-connector-",
        b"status-topic-nocolon",
        b"status-topic-:connector-c",
        b"other",
    ):
        with pytest.raises(InternalRecordError):
            decode_status_record(bad, None)
    with pytest.raises(InternalRecordError):
        decode_status_record(b"status-connector-c", b'{"state":"NOPE","worker_id":"w","generation":1}')
    with pytest.raises(InternalRecordError):
        decode_status_record(b"status-connector-c", b'{"state":"RUNNING","worker_id":"w"}')


# Bytes Java 4.3.1's JsonConverter (schemas.enable=false) wrote for these values via fromConnectData.
JACKSON_BYTES: list[tuple[Any, bytes]] = [
    (
        'a\x01b\x1fc\n\t\r\b\f/\\"\x7f\u2028\u00e9\U0001f600',
        b'"a\\u0001b\\u001Fc\\n\\t\\r\\b\\f/\\\\\\"\x7f\xe2\x80\xa8\xc3\xa9\\uD83D\\uDE00"',
    ),
    (1.0, b"1.0"),
    (1e7, b"1.0E7"),
    (1e-3, b"0.001"),
    (9.99e-4, b"9.99E-4"),
    (1234567.5, b"1234567.5"),
    (1e21, b"1.0E21"),
    (0.1, b"0.1"),
    (-0.0, b"-0.0"),
    (100.0, b"100.0"),
    (1e16, b"1.0E16"),
    (123456789012.25, b"1.2345678901225E11"),
    (1.7976931348623157e308, b"1.7976931348623157E308"),
    (5e-324, b"4.9E-324"),
    (2.5e-5, b"2.5E-5"),
    (2**63 - 1, b"9223372036854775807"),
    (True, b"true"),
    (float("nan"), b'"NaN"'),
    (float("-inf"), b'"-Infinity"'),
    ("x\ud800y", b'"x\\uD800y"'),
    (
        ["conn", {"cluster": "c", "partition": 1, "topic": "t"}],
        b'["conn",{"cluster":"c","partition":1,"topic":"t"}]',
    ),
]


@pytest.mark.parametrize(("value", "expected"), JACKSON_BYTES, ids=[repr(v)[:30] for v, _ in JACKSON_BYTES])
def test_json_writer_matches_jacksons_escapes_and_number_format(value: Any, expected: bytes) -> None:
    assert dumps(value) == expected


def test_json_reader_matches_jsonconverter_edge_cases() -> None:
    assert loads(b"") is None and loads(b"  ") is None and loads(None) is None
    assert loads(b'{"a":1} xx') == {"a": 1}
    assert loads(b"99999999999999999999") == 7766279631452241919  # Jackson BigInteger -> Long
    for bad in (b"NaN", b'{"a":1,}', b"\xff"):
        with pytest.raises(InternalRecordError):
            loads(bad)


# Values the 4.3.1 jars wrote for records the scenario capture does not contain: the public
# KafkaConfigBackingStore schemas (TASK_COUNT_RECORD_V0, LOGGER_LEVEL_V0, RESTART_REQUEST_V0,
# CONNECTOR_CONFIGURATION_V0) as Structs through JsonConverter, and KafkaStatusBackingStore's own
# serialize / serializeTopicStatus (base64 of the exact bytes).
JAVA_VALUES: list[tuple[Any, str]] = [
    (TaskCountRecord("c", 3), "eyJ0YXNrLWNvdW50IjozfQ=="),
    (LoggerLevelRecord("org.apache", "DEBUG"), "eyJsZXZlbCI6IkRFQlVHIn0="),
    (
        RestartRequest("c", only_failed=True, include_tasks=False),
        "eyJpbmNsdWRlLXRhc2tzIjpmYWxzZSwib25seS1mYWlsZWQiOnRydWV9",
    ),
    (
        ConnectorConfigRecord("c", {"name": "c\u00e9\U0001f600", "nullable": None, "x": "${file:/a:b}"}),
        "eyJwcm9wZXJ0aWVzIjp7Im5hbWUiOiJjw6lcdUQ4M0RcdURFMDAiLCJudWxsYWJsZSI6bnVsbCwieCI6IiR7ZmlsZTovYTpifSJ9fQ==",
    ),
    (
        TaskStatus(
            ConnectorTaskId("c", 2),
            State.FAILED,
            "10.0.0.5:8083",
            7,
            "org.apache.kafka.connect.errors.ConnectException: boom\n\tat X.y(X.java:1)\n",
            "1.2.3",
        ),
        "eyJzdGF0ZSI6IkZBSUxFRCIsInRyYWNlIjoib3JnLmFwYWNoZS5rYWZrYS5jb25uZWN0LmVycm9ycy5Db25uZWN0RXhjZXB0aW9uOiBib29t"
        "XG5cdGF0IFgueShYLmphdmE6MSlcbiIsIndvcmtlcl9pZCI6IjEwLjAuMC41OjgwODMiLCJnZW5lcmF0aW9uIjo3LCJ2ZXJzaW9uIjoiMS4y"
        "LjMifQ==",
    ),
    (
        ConnectorStatus("c", State.STOPPED, "10.0.0.5:8083", 2147483647),
        "eyJzdGF0ZSI6IlNUT1BQRUQiLCJ0cmFjZSI6bnVsbCwid29ya2VyX2lkIjoiMTAuMC4wLjU6ODA4MyIsImdlbmVyYXRpb24iOjIxNDc0ODM2"
        "NDcsInZlcnNpb24iOm51bGx9",
    ),
    (
        TopicStatus("orders.v1", "c", 4, 9223372036854775807),
        "eyJ0b3BpYyI6eyJuYW1lIjoib3JkZXJzLnYxIiwiY29ubmVjdG9yIjoiYyIsInRhc2siOjQsImRpc2NvdmVyVGltZXN0YW1wIjo5MjIzMzcy"
        "MDM2ODU0Nzc1ODA3fX0=",
    ),
]


@pytest.mark.parametrize(
    ("record", "java_value"), JAVA_VALUES, ids=[type(r).__name__ for r, _ in JAVA_VALUES]
)
def test_records_outside_the_scenario_match_the_jars_bytes(record: Any, java_value: str) -> None:
    expected = base64.b64decode(java_value)
    if isinstance(record, TopicStatus):
        key, value = encode_topic_status(record)
        assert decode_status_record(key, value)[1] == record
    elif isinstance(record, ConnectorStatus | TaskStatus):
        key, value = encode_status(record)
        assert decode_status_record(key, value)[1] == record
    else:
        key, value = encode_config_record(record)
        assert decode_config_record(key, value) == record
    assert value == expected
