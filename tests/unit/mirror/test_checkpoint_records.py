"""Checkpoint and Heartbeat codecs against bytes the Java 4.3.1 jars wrote.

Sources: ``tests/golden/mm2_records.json`` (a running Java MirrorMaker 2) and
``tests/golden/mirror_checkpoint/java_vectors.json`` (``generate.jsh`` in that folder: the Java classes'
own ``recordKey``/``recordValue``/``deserializeRecord`` on edge values and crafted bytes).
"""

from __future__ import annotations

import base64
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.mirror.checkpoint_records import (
    Checkpoint,
    Heartbeat,
    RecordFormatError,
    decode_checkpoint,
    decode_checkpoints,
    decode_heartbeat,
)

GOLDEN = Path(__file__).resolve().parents[2] / "golden"


@cache
def mm2() -> dict[str, Any]:
    return json.loads((GOLDEN / "mm2_records.json").read_text())


@cache
def vectors() -> dict[str, Any]:
    return json.loads((GOLDEN / "mirror_checkpoint" / "java_vectors.json").read_text())


def raw(blob: dict[str, Any] | None) -> bytes | None:
    return None if blob is None else base64.b64decode(blob["base64"])


def text(value: Any) -> str | None:
    """Strings of java_vectors.json; long uniform ones are stored as ``{"repeat", "count"}``."""
    if isinstance(value, dict):
        return str(value["repeat"]) * int(value["count"])
    return value


def unhex(value: str | None) -> bytes | None:
    return None if value is None else bytes.fromhex(value)


def mm2_records(role: str) -> list[dict[str, Any]]:
    return [r for r in mm2()["records"] if r["role"] == role]


# -- records a Java MirrorMaker 2 wrote --------------------------------------------------------------


def test_java_mm2_checkpoints_decode_and_reencode() -> None:
    records = mm2_records("checkpoints")
    assert records
    committed = mm2()["committed_on_A"]
    for r in records:
        key, value = raw(r["key"]), raw(r["value"])
        c = decode_checkpoint(key, value)
        assert (c.record_key(), c.record_value()) == (key, value)
        assert (c.consumer_group_id, c.topic, c.version) == ("golden-group", "A.golden-orders", 0)
        expected = committed[f"golden-orders-{c.partition}"]
        assert (c.upstream_offset, c.metadata) == (expected["offset"], expected["metadata"])
        assert c.offset_and_metadata() == (c.downstream_offset, c.metadata)


@pytest.mark.parametrize(
    ("role", "pair"),
    [("heartbeats-on-B", ("A", "B")), ("heartbeats-on-A", ("B", "A")), ("mirrored-heartbeats", ("B", "A"))],
)
def test_java_mm2_heartbeats_decode_and_reencode(role: str, pair: tuple[str, str]) -> None:
    records = mm2_records(role)
    assert records
    for r in records:
        key, value = raw(r["key"]), raw(r["value"])
        h = decode_heartbeat(key, value)
        assert (h.record_key(), h.record_value()) == (key, value)
        assert (h.source_cluster_alias, h.target_cluster_alias, h.version) == (*pair, 0)


def test_connect_partitions_match_the_java_offsets_topic_keys() -> None:
    keys = {raw(r["key"]) for r in mm2_records("connect-offsets-A->B")}
    for r in mm2_records("checkpoints"):
        c = decode_checkpoint(raw(r["key"]), raw(r["value"]))
        key = json.dumps(["MirrorCheckpointConnector", c.connect_partition()], separators=(",", ":")).encode()
        assert key in keys
    h = Heartbeat("A", "B", 0)
    key = json.dumps(["MirrorHeartbeatConnector", h.connect_partition()], separators=(",", ":")).encode()
    assert key in keys


def test_spec_worked_examples() -> None:
    c = Checkpoint("g1", "A.orders", 3, 1000, 997)
    assert c.record_key().hex(" ") == "00 02 67 31 00 08 41 2e 6f 72 64 65 72 73 00 00 00 03"
    assert c.record_value().hex(" ") == "00 00 00 00 00 00 00 00 03 e8 00 00 00 00 00 00 03 e5 00 00"
    h = Heartbeat("A", "B", 1700000000000)
    assert h.record_key().hex(" ") == "00 01 41 00 01 42"
    assert h.record_value().hex(" ") == "00 00 00 00 01 8b cf e5 68 00"


# -- jshell vectors ----------------------------------------------------------------------------------


def _lone_surrogate(*values: str | None) -> bool:
    return any(v is not None and any(0xD800 <= ord(ch) <= 0xDFFF for ch in v) for v in values)


@pytest.mark.parametrize("case", vectors()["checkpoint_encode"], ids=lambda c: str(c["to_string"])[:60])
def test_checkpoint_encode_matches_java(case: dict[str, Any]) -> None:
    c = Checkpoint(
        case["group"],
        case["topic"],
        case["partition"],
        case["upstream"],
        case["downstream"],
        text(case["metadata"]),  # type: ignore[arg-type]
    )
    if _lone_surrogate(case["group"], case["topic"], text(case["metadata"])):
        # Java writes '?' plus zero padding (its size estimate counts the surrogate); we refuse instead.
        assert case["key"].endswith("000000") or case["value"].endswith("0000")
        with pytest.raises(RecordFormatError, match="UTF-8"):
            c.record_key() + c.record_value()
        return
    if "error" in case:
        with pytest.raises(RecordFormatError):
            c.record_key() + c.record_value()
        return
    assert str(c) == text(case["to_string"])
    assert c.record_key().hex() == case["key"]
    assert c.record_value().hex() == case["value"]
    assert decode_checkpoint(c.record_key(), c.record_value()) == c


@pytest.mark.parametrize("case", vectors()["heartbeat_encode"], ids=lambda c: str(c["to_string"]))
def test_heartbeat_encode_matches_java(case: dict[str, Any]) -> None:
    h = Heartbeat(case["source"], case["target"], case["timestamp"])
    if _lone_surrogate(case["source"], case["target"]):
        with pytest.raises(RecordFormatError, match="UTF-8"):
            h.record_key()
        return
    if "error" in case:
        with pytest.raises(RecordFormatError):
            h.record_key()
        return
    assert str(h) == case["to_string"]
    assert (h.record_key().hex(), h.record_value().hex()) == (case["key"], case["value"])
    assert decode_heartbeat(h.record_key(), h.record_value()) == h


def _java_utf8_divergence(case: dict[str, Any]) -> bool:
    """The one crafted key holding an encoded surrogate (ED B0 80): Java emits one U+FFFD, Python three."""
    return "edb080" in (case["value"] or "")


@pytest.mark.parametrize("case", vectors()["checkpoint_decode"], ids=lambda c: f"{c['key']}/{c['value']}")
def test_checkpoint_decode_matches_java(case: dict[str, Any]) -> None:
    key, value = unhex(case["key"]), unhex(case["value"])
    if "error" in case:
        with pytest.raises(RecordFormatError):
            decode_checkpoint(key, value)
        return
    c = decode_checkpoint(key, value)
    got = [c.consumer_group_id, c.topic, c.partition, c.upstream_offset, c.downstream_offset, c.metadata]
    want = [case[k] for k in ("group", "topic", "partition", "upstream", "downstream", "metadata")]
    if _java_utf8_divergence(case):
        assert got[:5] == want[:5] and want[5] == "\ufffd" and got[5] == "\ufffd" * 3
        return
    assert got == want
    assert c.version == int(case["value"][:4], 16) - (0x10000 if case["value"][0] in "89abcdef" else 0)


@pytest.mark.parametrize("case", vectors()["heartbeat_decode"], ids=lambda c: f"{c['key']}/{c['value']}")
def test_heartbeat_decode_matches_java(case: dict[str, Any]) -> None:
    key, value = unhex(case["key"]), unhex(case["value"])
    if "error" in case:
        with pytest.raises(RecordFormatError):
            decode_heartbeat(key, value)
        return
    h = decode_heartbeat(key, value)
    assert (h.source_cluster_alias, h.target_cluster_alias, h.timestamp) == (
        case["source"],
        case["target"],
        case["timestamp"],
    )


# -- properties ----------------------------------------------------------------------------------------

_text = st.text(max_size=40).filter(lambda s: not _lone_surrogate(s))
_long = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_int = st.integers(min_value=-(2**31), max_value=2**31 - 1)


@settings(max_examples=200, deadline=None)
@given(group=_text, topic=_text, partition=_int, up=_long, down=_long, metadata=_text)
def test_checkpoint_round_trip(
    group: str, topic: str, partition: int, up: int, down: int, metadata: str
) -> None:
    c = Checkpoint(group, topic, partition, up, down, metadata)
    key, value = c.record_key(), c.record_value()
    assert len(key) == 2 + len(group.encode()) + 2 + len(topic.encode()) + 4
    assert len(value) == 2 + 8 + 8 + 2 + len(metadata.encode())
    assert decode_checkpoint(key, value) == c
    # v0 readers ignore appended fields and any version number (spec §4.1)
    newer = b"\x00\x01" + value[2:] + b"\x00\x00\x00\x07future"
    assert decode_checkpoint(key + b"junk", newer) == c
    assert decode_checkpoint(key, newer).version == 1


@settings(max_examples=200, deadline=None)
@given(source=_text, target=_text, timestamp=_long)
def test_heartbeat_round_trip(source: str, target: str, timestamp: int) -> None:
    h = Heartbeat(source, target, timestamp)
    assert decode_heartbeat(h.record_key(), h.record_value()) == h


@settings(max_examples=300, deadline=None)
@given(key=st.one_of(st.none(), st.binary(max_size=40)), value=st.one_of(st.none(), st.binary(max_size=40)))
def test_garbage_raises_only_record_format_error(key: bytes | None, value: bytes | None) -> None:
    for decode in (decode_checkpoint, decode_heartbeat):
        try:
            decode(key, value)
        except RecordFormatError:
            pass


@settings(max_examples=100, deadline=None)
@given(cut=st.integers(min_value=0, max_value=19))
def test_every_truncation_is_a_record_format_error(cut: int) -> None:
    c = Checkpoint("g1", "A.orders", 3, 1000, 997, "m")
    with pytest.raises(RecordFormatError):
        decode_checkpoint(c.record_key(), c.record_value()[:cut])
    with pytest.raises(RecordFormatError):
        decode_checkpoint(c.record_key()[: min(cut, 15)], c.record_value())


def test_invalid_values_refused_on_encode() -> None:
    for bad in (
        Checkpoint("g", "t", 2**31, 0, 0),
        Checkpoint("g", "t", 0, 2**63, 0),
        Checkpoint("g", "t", 0, 0, 0, "x" * 32768),
        Checkpoint("g", "t", 0, 0, 0, None),  # type: ignore[arg-type]
        Checkpoint("g", "t", True, 0, 0),
    ):
        with pytest.raises(RecordFormatError):
            bad.record_key() + bad.record_value()
    assert len(Checkpoint("g", "t", 0, 0, 0, "é" * 16383).record_value()) == 20 + 32766


def test_decode_checkpoints_skips_and_counts_malformed() -> None:
    good = Checkpoint("g", "A.t", 0, 5, 5)
    records = [
        (good.record_key(), good.record_value()),
        (None, None),
        (b"\x00", b""),
        (good.record_key(), b"\x00"),
    ]
    decoded, skipped = decode_checkpoints(records)
    assert decoded == [good] and skipped == 3
