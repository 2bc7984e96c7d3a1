"""FileOffsetStore: the standalone worker's offsets in a local file, same keys as the offsets topic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyconnect.errors import ConnectError, DataError
from pyconnect.protocol.internal_records import dumps, encode_offset_key
from pyconnect.stores.file_offsets import FileOffsetStore
from pyconnect.stores.memory import MemoryTopic
from pyconnect.stores.offsets import MemoryOffsetStore


async def test_missing_file_is_an_empty_store(tmp_path: Path) -> None:
    store = FileOffsetStore(tmp_path / "offsets.json")
    await store.start()
    assert await store.get("c", [{"id": 0}]) == [None]
    assert await store.connector_offsets("c") == []
    await store.stop()
    assert not (tmp_path / "offsets.json").exists()


async def test_offsets_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "offsets.json"
    store = FileOffsetStore(path)
    await store.start()
    await store.set("c", [({"id": 0}, {"seqno": 7}), ({"id": 1}, {"seqno": 3})])
    await store.set("d", [({"file": "a.txt"}, {"position": 10})])
    await store.set("c", [({"id": 1}, {"seqno": 4})])
    await store.stop()

    again = FileOffsetStore(path)
    await again.start()
    assert await again.get("c", [{"id": 0}, {"id": 1}, {"id": 2}]) == [{"seqno": 7}, {"seqno": 4}, None]
    assert sorted(map(str, await again.connector_offsets("c"))) == sorted(
        map(str, [({"id": 0}, {"seqno": 7}), ({"id": 1}, {"seqno": 4})])
    )
    assert again.connector_partitions("d") == [{"file": "a.txt"}]


async def test_same_key_bytes_as_the_kafka_store(tmp_path: Path) -> None:
    file_store = FileOffsetStore(tmp_path / "offsets.json")
    await file_store.start()
    await file_store.set("c", [({"b": 1, "a": "x"}, {"n": 1})])
    topic = MemoryTopic("offsets", 1)
    kafka_store = MemoryOffsetStore(topic)
    await kafka_store.start()
    await kafka_store.set("c", [({"b": 1, "a": "x"}, {"n": 1})])
    assert list((await file_store.get_raw([encode_offset_key("c", {"b": 1, "a": "x"})])).values()) == [
        topic.all_records()[0].value
    ]
    doc = json.loads((tmp_path / "offsets.json").read_text(encoding="utf-8"))
    assert doc["offsets"] == [
        {"key": topic.all_records()[0].key.decode(), "value": topic.all_records()[0].value.decode()}  # type: ignore[union-attr]
    ]


async def test_existing_key_reused_whatever_the_map_order(tmp_path: Path) -> None:
    path = tmp_path / "offsets.json"
    java_key = dumps(["c", {"b": 1, "a": "x"}])
    path.write_text(
        json.dumps(
            {
                "format": "pyconnect-offsets",
                "version": 1,
                "offsets": [{"key": java_key.decode(), "value": '{"n":1}'}],
            }
        )
    )
    store = FileOffsetStore(path)
    await store.start()
    assert store.key_bytes("c", {"a": "x", "b": 1}) == java_key
    assert await store.get("c", [{"a": "x", "b": 1}]) == [{"n": 1}]
    await store.set("c", [({"a": "x", "b": 1}, {"n": 2})])
    assert len(json.loads(path.read_text())["offsets"]) == 1


async def test_tombstone_removes_the_partition(tmp_path: Path) -> None:
    path = tmp_path / "offsets.json"
    store = FileOffsetStore(path)
    await store.start()
    await store.set("c", [({"id": 0}, {"seqno": 1})])
    await store.set("c", [({"id": 0}, None)])
    assert store.connector_partitions("c") == []
    assert await store.connector_offsets("c") == []
    assert json.loads(path.read_text())["offsets"] == []


async def test_invalid_offsets_are_refused_before_writing(tmp_path: Path) -> None:
    store = FileOffsetStore(tmp_path / "offsets.json")
    await store.start()
    with pytest.raises(DataError):
        await store.set("c", [({"id": [1]}, {"seqno": 1})])
    assert not (tmp_path / "offsets.json").exists()


async def test_non_utf8_raw_values_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "offsets.json"
    store = FileOffsetStore(path)
    await store.start()
    await store.set_raw({b"\xff\xfe": b"\x00\x80"})
    again = FileOffsetStore(path)
    await again.start()
    assert await again.get_raw([b"\xff\xfe"]) == {b"\xff\xfe": b"\x00\x80"}


@pytest.mark.parametrize(
    "content",
    ["not json", '{"offsets": []}', '{"format": "pyconnect-offsets", "version": 9, "offsets": []}', "[1]"],
)
async def test_malformed_file_fails_start(tmp_path: Path, content: str) -> None:
    path = tmp_path / "offsets.json"
    path.write_text(content)
    with pytest.raises(ConnectError, match=str(path)):
        await FileOffsetStore(path).start()


async def test_write_failure_raises_and_is_retried_on_stop(tmp_path: Path) -> None:
    folder = tmp_path / "gone"
    folder.mkdir()
    store = FileOffsetStore(folder / "offsets.json")
    await store.start()
    folder.rmdir()
    with pytest.raises(ConnectError, match="Cannot write offsets file"):
        await store.set("c", [({"id": 0}, {"seqno": 1})])
    folder.mkdir()
    await store.stop()
    assert len(json.loads((folder / "offsets.json").read_text())["offsets"]) == 1


async def test_set_before_start_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConnectError, match="not started"):
        await FileOffsetStore(tmp_path / "o.json").set("c", [({"id": 0}, {"seqno": 1})])
