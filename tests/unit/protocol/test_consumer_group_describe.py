"""ConsumerGroupDescribe (API 69) codec against bytes the Kafka 4.3.1 client jars produce.

tests/golden/consumer_group_describe/capture.jsh wrote golden.txt with the jars' own message classes:
a request for two groups (one with a non-ASCII id) and a response with a Stable group holding one member
(rack, assignment, no instance id) and a GROUP_ID_NOT_FOUND entry with an error message, in v0 and v1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pyconnect.protocol.consumer_group_describe import (
    GROUP_ID_NOT_FOUND,
    DescribedGroup,
    decode_response,
    encode_request,
)
from pyconnect.protocol.primitives import ProtocolError

GOLDEN = dict(
    line.split(" ", 1)
    for line in (Path(__file__).parents[2] / "golden" / "consumer_group_describe" / "golden.txt")
    .read_text()
    .splitlines()
    if line.strip()
)

EXPECTED = [
    DescribedGroup(0, None, "g1", "Stable", 5, "uniform", ("m-1",)),
    DescribedGroup(
        GROUP_ID_NOT_FOUND, "Group grp-\u00e9 is not a consumer group.", "grp-\u00e9", "Dead", -1, "", ()
    ),
]


def test_request_bytes_match_the_java_client() -> None:
    assert encode_request(["g1", "grp-\u00e9"]).hex() == GOLDEN["REQ0"]


@pytest.mark.parametrize("version", [0, 1])
def test_response_decodes_as_the_java_client_wrote_it(version: int) -> None:
    throttle, groups = decode_response(bytes.fromhex(GOLDEN[f"RESP{version}"]), version)
    assert throttle == 7
    assert groups == EXPECTED


def test_v1_bytes_read_as_v0_are_refused() -> None:
    # v1 carries one more byte per member (MemberType): read as v0 the layout breaks
    with pytest.raises(ProtocolError):
        decode_response(bytes.fromhex(GOLDEN["RESP1"]), 0)


@pytest.mark.parametrize("cut", [1, 5, 20, 60, 140])
def test_truncated_response_raises_protocol_error(cut: int) -> None:
    data = bytes.fromhex(GOLDEN["RESP0"])
    with pytest.raises(ProtocolError):
        decode_response(data[: len(data) - cut], 0)


def test_unsupported_version_and_huge_array_are_refused() -> None:
    with pytest.raises(ProtocolError, match="v2"):
        decode_response(bytes.fromhex(GOLDEN["RESP0"]), 2)
    with pytest.raises(ProtocolError, match="exceeds"):
        decode_response(bytes.fromhex("00000000" + "ffffffff0f"), 0)


def test_empty_request_and_long_group_id() -> None:
    assert encode_request([]).hex() == "010000"
    long_id = "g" * 200  # length prefix 201 needs a two-byte varint
    assert encode_request([long_id]).hex().startswith("02c901" + "67")
