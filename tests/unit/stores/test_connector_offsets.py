"""A connector's own ``offsets.storage.topic`` (Java ``ConnectorOffsetBackingStore``), on in-memory topics:
which topic serves a connector, lookups from the primary only, the union listed by ``GET .../offsets``,
and the write order that keeps a reset from leaving stale offsets in the worker's topic."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from pyconnect.config.standalone import StandaloneConfig
from pyconnect.config.worker import WorkerConfig
from pyconnect.errors import DataError
from pyconnect.protocol.internal_records import encode_offset_key
from pyconnect.stores.connector_offsets import ConnectorOffsets, offsets_topic_for
from pyconnect.stores.memory import MemoryTopic
from pyconnect.stores.offsets import MemoryOffsetStore

BASE = {
    "bootstrap.servers": "127.0.0.1:9092",
    "group.id": "g",
    "config.storage.topic": "g-configs",
    "offset.storage.topic": "g-offsets",
    "status.storage.topic": "g-status",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
}


def worker(**extra: str) -> WorkerConfig:
    return WorkerConfig({**BASE, **extra})


def producer(bootstrap: str = "127.0.0.1:9092") -> dict[str, str]:
    return {"bootstrap.servers": bootstrap}


@pytest.mark.parametrize(
    ("eos", "connector", "producer_bootstrap", "expected"),
    [
        # regular tasks: a topic of its own only when the connector names one
        ("disabled", {}, "127.0.0.1:9092", ("g-offsets", False)),
        ("disabled", {"offsets.storage.topic": "c-offsets"}, "127.0.0.1:9092", ("c-offsets", True)),
        ("disabled", {"offsets.storage.topic": "g-offsets"}, "127.0.0.1:9092", ("g-offsets", False)),
        ("disabled", {"offsets.storage.topic": "  "}, "127.0.0.1:9092", ("g-offsets", False)),
        # exactly-once: the offsets go where the producer writes, under the worker's name by default
        ("enabled", {}, "127.0.0.1:9092", ("g-offsets", False)),
        ("enabled", {}, "127.0.0.1:9093", ("g-offsets", True)),
        ("enabled", {"offsets.storage.topic": "c-offsets"}, "127.0.0.1:9092", ("c-offsets", True)),
        # the same servers in another order and spacing are the same cluster
        ("enabled", {}, " 127.0.0.1:9092 ", ("g-offsets", False)),
    ],
)
def test_the_topic_that_serves_a_connector(
    eos: str, connector: dict[str, str], producer_bootstrap: str, expected: tuple[str, bool]
) -> None:
    choice = offsets_topic_for(
        worker(**{"exactly.once.source.support": eos}), connector, producer(producer_bootstrap)
    )
    assert (choice.topic, choice.own_store) == expected


def test_a_standalone_worker_keeps_every_offset_in_its_file() -> None:
    config = StandaloneConfig(
        {
            "bootstrap.servers": "127.0.0.1:9092",
            "offset.storage.file.filename": "/nonexistent/offsets",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        }
    )
    assert config.connector_offsets_topics_permitted is False
    choice = offsets_topic_for(config, {"offsets.storage.topic": "c-offsets"}, producer())
    assert choice.own_store is False


async def stores() -> tuple[MemoryOffsetStore, MemoryOffsetStore, ConnectorOffsets]:
    connector_topic, worker_topic = MemoryTopic("c-offsets", 5), MemoryTopic("g-offsets", 25)
    primary, secondary = MemoryOffsetStore(connector_topic), MemoryOffsetStore(worker_topic)
    await secondary.start()
    return primary, secondary, ConnectorOffsets(primary, secondary, owns_primary=True)


async def test_lookups_answer_from_the_connectors_topic_only_and_listings_show_the_union() -> None:
    primary, secondary, view = await stores()
    await secondary.set("c", [({"p": 0}, {"o": 10}), ({"p": 1}, {"o": 11})])
    await view.start()
    await primary.set("c", [({"p": 1}, {"o": 21}), ({"p": 2}, {"o": 22})])
    # Java: the connector store answers every key, null when absent, over the worker store's answer
    assert await view.get("c", [{"p": 0}, {"p": 1}, {"p": 2}]) == [None, {"o": 21}, {"o": 22}]
    listed = sorted(await view.connector_offsets("c"), key=lambda pair: pair[0]["p"])
    assert listed == [({"p": 0}, None), ({"p": 1}, {"o": 21}), ({"p": 2}, {"o": 22})]
    assert sorted(p["p"] for p in view.connector_partitions("c")) == [0, 1, 2]


async def test_writes_go_to_the_connectors_topic_then_a_copy_to_the_workers() -> None:
    primary, secondary, view = await stores()
    await view.set("c", [({"p": 0}, {"o": 5})])
    assert await primary.get("c", [{"p": 0}]) == [{"o": 5}]
    assert await secondary.get("c", [{"p": 0}]) == [{"o": 5}]
    # a reset: tombstones reach the worker's topic first, then both agree
    await view.set("c", [({"p": 0}, None)])
    assert await primary.get("c", [{"p": 0}]) == [None]
    assert await secondary.get("c", [{"p": 0}]) == [None]
    assert view.connector_partitions("c") == []


async def test_a_failed_tombstone_copy_fails_the_write_before_the_connectors_topic_changes() -> None:
    primary, secondary, view = await stores()
    await view.set("c", [({"p": 0}, {"o": 5})])
    secondary.topic.fail_sends(RuntimeError("worker topic down"))  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError, match="worker topic down"):
        await view.set("c", [({"p": 0}, None)])
    assert await primary.get("c", [{"p": 0}]) == [{"o": 5}], "nothing reached the connector topic"


async def test_a_failed_copy_of_regular_offsets_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    primary, secondary, view = await stores()
    secondary.topic.fail_sends(RuntimeError("worker topic down"))  # type: ignore[attr-defined]
    with caplog.at_level(logging.WARNING, logger="pyconnect.stores.connector_offsets"):
        await view.set("c", [({"p": 0}, {"o": 7})])
    assert await primary.get("c", [{"p": 0}]) == [{"o": 7}]
    assert await secondary.get("c", [{"p": 0}]) == [None]
    assert "worker topic down" in caplog.text


async def test_keys_java_wrote_in_another_order_are_reused_in_the_connectors_topic() -> None:
    primary, _secondary, view = await stores()
    java_key = b'["c",{"b":1,"a":2}]'
    primary.topic.append(java_key, b'{"o":1}')  # type: ignore[attr-defined]
    await view.start()
    assert view.key_bytes("c", {"a": 2, "b": 1}) == java_key
    assert view.key_bytes("c", {"a": 3}) == encode_offset_key("c", {"a": 3})


async def test_bad_partitions_are_refused_before_anything_is_written() -> None:
    primary, secondary, view = await stores()
    bad: Any = {"p": [1, 2]}
    with pytest.raises(DataError):
        await view.set("c", [(bad, {"o": 1})])
    assert primary.connector_partitions("c") == [] and secondary.connector_partitions("c") == []


async def test_a_stopped_view_does_not_reopen() -> None:
    _primary, _secondary, view = await stores()
    await view.start()
    await view.stop()
    with pytest.raises(Exception, match="closed"):
        await view.get("c", [{"p": 0}])


async def test_a_worker_only_view_is_the_worker_store() -> None:
    worker_store = MemoryOffsetStore()
    await worker_store.start()
    view = ConnectorOffsets.worker_only(worker_store)
    await view.set("c", [({"p": 0}, {"o": 1})])
    assert await worker_store.get("c", [{"p": 0}]) == [{"o": 1}]
    assert await view.connector_offsets("c") == [({"p": 0}, {"o": 1})]
    await view.stop()  # never stops what the worker owns
    assert await worker_store.get("c", [{"p": 0}]) == [{"o": 1}]
