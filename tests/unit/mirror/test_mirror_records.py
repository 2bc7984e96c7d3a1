"""MirrorMaker 2 record codecs and offset-store maps against the bytes Java MirrorMaker 2 wrote."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from connectors.mirror.config import MirrorSourceConfig
from connectors.mirror.records import (
    OffsetSync,
    RecordFormatError,
    TopicPartition,
    decode_topic_partition,
    decode_topic_partitions,
    encode_topic_partitions,
    unwrap_offset,
    unwrap_partition,
    validate_source_offset,
    validate_source_partition,
    wrap_offset,
    wrap_partition,
)
from connectors.mirror.source import MirrorSourceConnector, java_describe_topics_order
from pyconnect.protocol.internal_records import (
    decode_offset_key,
    encode_offset_key,
    encode_offset_value,
    java_hash_map_order,
)

GOLDEN = json.loads((Path(__file__).parents[2] / "golden" / "mm2_records.json").read_text())


def _blob(blob: dict[str, Any] | None) -> bytes | None:
    return None if blob is None else base64.b64decode(blob["base64"])


def _records(role: str) -> list[dict[str, Any]]:
    found = [r for r in GOLDEN["records"] if r["role"] == role]
    assert found, role
    return found


def _task_config(connector: str) -> dict[str, str]:
    for record in _records("connect-configs-A->B"):
        if _blob(record["key"]) == f"task-{connector}-0".encode():
            return dict(json.loads(_blob(record["value"]) or b"")["properties"])
    raise AssertionError(connector)


# -- OffsetSync ------------------------------------------------------------------------------------


def test_offset_syncs_java_wrote_decode_and_reencode_identically() -> None:
    decoded = []
    for record in _records("offset-syncs"):
        key, value = _blob(record["key"]), _blob(record["value"])
        sync = OffsetSync.deserialize_record(key, value)
        assert (sync.record_key(), sync.record_value()) == (key, value)
        assert record["partition"] == 0
        decoded.append(sync)
    assert decoded[0] == OffsetSync("golden-orders", 0, 0, 0)
    assert decoded[1] == OffsetSync("golden-orders", 1, 0, 0)
    assert OffsetSync("golden-orders", 0, 4, 4) in decoded
    assert OffsetSync("golden-orders", 1, 4, 4) in decoded
    assert {s.topic for s in decoded} == {"golden-orders", "heartbeats"}


def test_offset_sync_worked_hex_example() -> None:
    sync = OffsetSync("orders", 3, 1000, 996)
    assert sync.record_key() == bytes.fromhex("00066f7264657273 00000003".replace(" ", ""))
    assert sync.record_value() == bytes.fromhex("00000000000003e8 00000000000003e4".replace(" ", ""))
    assert len(sync.record_value()) == 16
    assert str(sync) == "OffsetSync{topicPartition=orders-3, upstreamOffset=1000, downstreamOffset=996}"


def test_offset_sync_strings_count_utf8_bytes_and_negative_offsets_are_twos_complement() -> None:
    sync = OffsetSync("ü", 0, -1, -2)
    assert sync.record_key()[:2] == b"\x00\x02"
    assert sync.record_value() == b"\xff" * 8 + b"\xff" * 7 + b"\xfe"
    assert OffsetSync.deserialize_record(sync.record_key(), sync.record_value()) == sync


def test_offset_sync_decoding_ignores_trailing_bytes_like_java() -> None:
    sync = OffsetSync("t", 1, 2, 3)
    again = OffsetSync.deserialize_record(sync.record_key() + b"junk", sync.record_value() + b"\x00")
    assert again == sync


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (b"\x00\x05abc", b"\x00" * 16, "only 3 bytes available"),
        (b"\xff\xff", b"\x00" * 16, "cannot be negative"),
        (b"\x00\x01a\x00\x00", b"\x00" * 16, "partition"),
        (b"\x00\x01a\x00\x00\x00\x00", b"\x00" * 15, "upstreamOffset"),
        (None, b"\x00" * 16, "null"),
        (b"\x00\x01a\x00\x00\x00\x00", None, "null"),
        (b"\x00", b"\x00" * 16, "string length"),
    ],
)
def test_malformed_offset_syncs_raise(key: bytes | None, value: bytes | None, message: str) -> None:
    with pytest.raises(RecordFormatError, match=message):
        OffsetSync.deserialize_record(key, value)


def test_values_that_cannot_be_written_raise() -> None:
    with pytest.raises(RecordFormatError, match="larger than the maximum"):
        OffsetSync("x" * 32768, 0, 0, 0).record_key()
    with pytest.raises(RecordFormatError):
        OffsetSync("t", 2**31, 0, 0).record_key()
    with pytest.raises(RecordFormatError):
        OffsetSync("t", 0, 2**63, 0).record_value()
    assert len(OffsetSync("x" * 32767, 0, 0, 0).record_key()) == 2 + 32767 + 4
    with pytest.raises(RecordFormatError, match="surrogate"):
        OffsetSync("a\udc80", 0, 0, 0).record_key()


# -- Connect offset-store maps ---------------------------------------------------------------------


def test_source_partition_keys_are_the_bytes_java_committed() -> None:
    committed = [
        r
        for r in _records("connect-offsets-A->B")
        if (_blob(r["key"]) or b"").startswith(b'["MirrorSourceConnector"')
    ]
    assert len(committed) >= 2
    for record in committed:
        key, value = _blob(record["key"]), _blob(record["value"])
        connector, partition = decode_offset_key(key)
        assert connector == "MirrorSourceConnector" and partition is not None
        topic_partition = unwrap_partition(partition)
        wrapped = wrap_partition(topic_partition.topic, topic_partition.partition, "A")
        assert encode_offset_key("MirrorSourceConnector", wrapped) == key
        offset = unwrap_offset(json.loads(value or b""))
        assert encode_offset_value(wrap_offset(offset)) == value
    assert b'["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"golden-orders"}]' in {
        _blob(r["key"]) for r in committed
    }


def test_wrap_partition_uses_java_hash_map_order() -> None:
    wrapped = wrap_partition("orders", 3, "A")
    assert list(wrapped) == list(java_hash_map_order(wrapped)) == ["cluster", "partition", "topic"]
    assert unwrap_partition(wrapped) == TopicPartition("orders", 3)
    assert wrap_offset(7) == {"offset": 7}


def test_unwrap_offset_defaults_to_minus_one() -> None:
    assert unwrap_offset(None) == -1
    assert unwrap_offset({}) == -1
    assert unwrap_offset({"offset": None}) == -1
    assert unwrap_offset({"offset": 41}) == 41


# -- task.assigned.partitions ----------------------------------------------------------------------


def test_task_assigned_partitions_of_the_java_task_config_decode() -> None:
    config = _task_config("MirrorSourceConnector")
    value = config["task.assigned.partitions"]
    decoded = decode_topic_partitions(value)
    assert decoded == [
        TopicPartition("heartbeats", 0),
        TopicPartition("golden-orders", 0),
        TopicPartition("golden-orders", 1),
    ]
    assert encode_topic_partitions(decoded) == value
    assert config["task.index"] == "0"
    assert config["task.class"] == "org.apache.kafka.connect.mirror.MirrorSourceTask"


def test_topic_partition_decoding_splits_at_the_last_dash() -> None:
    assert decode_topic_partition("my-topic-12") == TopicPartition("my-topic", 12)
    assert str(TopicPartition("my-topic", 12)) == "my-topic-12"
    assert decode_topic_partitions(" a-0 , b-c-1,d-+2 ") == [
        TopicPartition("a", 0),
        TopicPartition("b-c", 1),
        TopicPartition("d", 2),
    ]
    assert decode_topic_partitions("") == decode_topic_partitions(None) == []
    for bad in ("nodash", "t-", "t-1_0", "t-x", "t-2147483648"):
        with pytest.raises(RecordFormatError):
            decode_topic_partition(bad)


# -- KIP-875 validation ----------------------------------------------------------------------------


def test_alter_offsets_validation_follows_java() -> None:
    good = wrap_partition("t", 0, "A")
    validate_source_partition(good)
    validate_source_offset(good, {"offset": 0})
    validate_source_offset(good, None)
    with pytest.raises(RecordFormatError, match="may not be null"):
        validate_source_partition(None)
    with pytest.raises(RecordFormatError, match="missing the 'cluster' key"):
        validate_source_partition({"topic": "t", "partition": 0})
    with pytest.raises(RecordFormatError, match="'topic' key, which must be a string"):
        validate_source_partition({"cluster": "A", "topic": 5, "partition": 0})
    with pytest.raises(RecordFormatError, match="must be an integer"):
        validate_source_partition({"cluster": "A", "topic": "t", "partition": "0"})
    with pytest.raises(RecordFormatError, match="cannot be negative"):
        validate_source_partition({"cluster": "A", "topic": "t", "partition": -1})
    with pytest.raises(RecordFormatError, match="missing the 'offset' key"):
        validate_source_offset(good, {})
    with pytest.raises(RecordFormatError, match="cannot be negative"):
        validate_source_offset(good, {"offset": -1})
    with pytest.raises(RecordFormatError, match="only accepted value is 0"):
        validate_source_offset(good, {"offset": 3}, only_offset_zero=True)


# -- task configs: Java's partition order and round robin ------------------------------------------


def test_partition_order_reproduces_the_java_task_config() -> None:
    config = _task_config("MirrorSourceConnector")
    topics = list(
        dict.fromkeys(tp.topic for tp in decode_topic_partitions(config["task.assigned.partitions"]))
    )
    for given_order in (topics, topics[::-1]):
        assert java_describe_topics_order(given_order) == topics == ["heartbeats", "golden-orders"]


def _started_connector(partitions: list[TopicPartition], props: dict[str, str]) -> MirrorSourceConnector:
    connector = MirrorSourceConnector()
    connector._config = MirrorSourceConfig(props)
    connector._props = props
    connector.known_source_partitions = partitions
    return connector


def test_task_configs_deal_partitions_round_robin_like_java() -> None:
    props = {
        "name": "MirrorSourceConnector",
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "source.cluster.alias": "A",
    }
    partitions = (
        [TopicPartition("t0", p) for p in range(8)]
        + [TopicPartition("t1", p) for p in range(2)]
        + [TopicPartition("t2", p) for p in range(2)]
    )
    configs = _started_connector(partitions, props).task_configs(3)
    assert [c["task.assigned.partitions"] for c in configs] == [
        "t0-0,t0-3,t0-6,t1-1",
        "t0-1,t0-4,t0-7,t2-0",
        "t0-2,t0-5,t1-0,t2-1",
    ]
    assert [c["task.index"] for c in configs] == ["0", "1", "2"]
    assert all({k: v for k, v in c.items() if not k.startswith("task.")} == props for c in configs)
    assert len(_started_connector(partitions[:2], props).task_configs(5)) == 2
    assert _started_connector([], props).task_configs(5) == []
    assert _started_connector(partitions, {**props, "enabled": "false"}).task_configs(5) == []
