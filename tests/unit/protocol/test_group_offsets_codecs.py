"""OffsetFetch v8, DescribeShareGroupOffsets v0/v1 and AlterShareGroupOffsets v0 codecs against bytes the
Kafka 4.3.1 client jars produce.

tests/golden/group_offsets/capture.jsh wrote golden.txt with the jars' own message classes (what the
Java admin client serializes): an OffsetFetch of two groups (topics listed, and null for all), with a
non-ASCII topic, a null and a non-ASCII metadata, a partition and a group error; share group offsets of
a group with a partition without share state and of an unknown group with an error message; an
AlterShareGroupOffsets answer with a partition error, and the refusal of a non-empty group.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyconnect.protocol import offset_fetch, share_group_offsets
from pyconnect.protocol.flexible import FlexibleReader, FlexibleWriter, unsigned_varint
from pyconnect.protocol.offset_fetch import FetchedGroup, FetchedPartition
from pyconnect.protocol.primitives import ProtocolError
from pyconnect.protocol.share_group_offsets import (
    AlterAnswer,
    AlteredPartition,
    ShareGroupOffsets,
    SharePartitionOffset,
)

GOLDEN = dict(
    line.split(" ", 1)
    for line in (Path(__file__).parents[2] / "golden" / "group_offsets" / "golden.txt")
    .read_text()
    .splitlines()
    if line.strip()
)


def golden(name: str) -> bytes:
    return bytes.fromhex(GOLDEN[name])


def test_offset_fetch_request_matches_the_java_client() -> None:
    body = offset_fetch.encode_request({"g1": {"t1": [0, 1], "t\u00f8": [2]}, "g2": None})
    assert body == golden("OF_REQ8")


def test_offset_fetch_response_decodes_as_java_wrote_it() -> None:
    throttle, groups = offset_fetch.decode_response(golden("OF_RESP8"))
    assert throttle == 5
    assert groups == [
        FetchedGroup(
            "g1",
            0,
            (
                FetchedPartition("t1", 0, 42, 3, "m\u00e9ta", 0),
                FetchedPartition("t1", 1, -1, -1, None, 0),
                FetchedPartition("t\u00f8", 2, 7, -1, "", 29),
            ),
        ),
        FetchedGroup("g2", 16, ()),
    ]


@pytest.mark.parametrize("version", [0, 1])
def test_describe_share_offsets_request_matches_the_java_client(version: int) -> None:
    body = share_group_offsets.encode_describe_request({"sg": {"t1": [0, 1]}, "sg\u00e9": None})
    assert body == golden(f"DSGO_REQ{version}")


@pytest.mark.parametrize("version", [0, 1])
def test_describe_share_offsets_response_decodes_as_java_wrote_it(version: int) -> None:
    throttle, groups = share_group_offsets.decode_describe_response(golden(f"DSGO_RESP{version}"), version)
    assert throttle == 9
    lag = (lambda v: v) if version else (lambda v: None)
    assert groups == [
        ShareGroupOffsets(
            "sg",
            0,
            None,
            (
                SharePartitionOffset("t1", 0, 10, 0, lag(40), 0, None),
                SharePartitionOffset("t1", 1, -1, -1, lag(-1), 0, None),
            ),
        ),
        ShareGroupOffsets("sg\u00e9", 69, "Group sg\u00e9 not found.", ()),
    ]


def test_describe_share_offsets_v1_bytes_read_as_v0_are_refused() -> None:
    with pytest.raises(ProtocolError):
        share_group_offsets.decode_describe_response(golden("DSGO_RESP1"), 0)
    with pytest.raises(ProtocolError):
        share_group_offsets.decode_describe_response(golden("DSGO_RESP1"), 2)


def test_alter_share_offsets_request_matches_the_java_client() -> None:
    assert share_group_offsets.encode_alter_request("sg", {"t1": [(0, 10), (1, 20)]}) == golden("ASGO_REQ0")


def test_alter_share_offsets_responses_decode_as_java_wrote_them() -> None:
    assert share_group_offsets.decode_alter_response(golden("ASGO_RESP0")) == (
        0,
        AlterAnswer(
            0, None, (AlteredPartition("t1", 0, 0, None), AlteredPartition("t1", 1, 3, "no such partition"))
        ),
    )
    assert share_group_offsets.decode_alter_response(golden("ASGO_RESP0_REFUSED")) == (
        0,
        AlterAnswer(68, "The group is not empty.", ()),
    )


@pytest.mark.parametrize(
    ("name", "decode"),
    [
        ("OF_RESP8", offset_fetch.decode_response),
        ("DSGO_RESP1", lambda data: share_group_offsets.decode_describe_response(data, 1)),
        ("ASGO_RESP0", share_group_offsets.decode_alter_response),
    ],
)
def test_every_truncation_and_trailing_bytes_raise_protocol_error(name: str, decode: object) -> None:
    data = golden(name)
    assert callable(decode)
    for cut in range(1, len(data)):
        with pytest.raises(ProtocolError):
            decode(data[:cut])
    with pytest.raises(ProtocolError):
        decode(data + b"\x00")


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_unsigned_varints_round_trip(value: int) -> None:
    reader = FlexibleReader(unsigned_varint(value), "test")
    assert reader.uvarint() == value
    reader.expect_end()


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=20),
        st.none() | st.dictionaries(st.text(max_size=10), st.lists(st.integers(0, 2**31 - 1), max_size=4)),
        max_size=5,
    )
)
def test_offset_fetch_requests_read_back(groups: dict[str, dict[str, list[int]] | None]) -> None:
    reader = FlexibleReader(offset_fetch.encode_request(groups), "request")

    def topic(r: FlexibleReader) -> tuple[str, list[int]]:
        item = (r.string(), r.array(FlexibleReader.int32))
        r.tagged_fields()
        return item

    def group(r: FlexibleReader) -> tuple[str, dict[str, list[int]] | None]:
        group_id, topics = r.string(), r.nullable_array(topic)
        r.tagged_fields()
        return group_id, None if topics is None else dict(topics)

    assert dict(reader.array(group)) == groups
    assert reader.boolean() is False
    reader.tagged_fields()
    reader.expect_end()


def test_writer_refuses_values_out_of_range() -> None:
    with pytest.raises(ProtocolError):
        FlexibleWriter().int32(2**31)
    with pytest.raises(ProtocolError):
        unsigned_varint(-1)
