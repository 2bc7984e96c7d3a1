"""The aiokafka request/response classes of pyconnect.kafka.group_describe, on bytes from real sources.

DESCRIBE_GROUPS_V3 is what a 4.3.1 broker answered to DescribeGroups v3 for two groups (an unknown one
and a consumer-protocol one, both ``Dead`` without error): each entry ends with
``authorized_operations`` (0x80000000), which aiokafka 0.14's v3 request reads with the v2 layout.
"""

from __future__ import annotations

from pathlib import Path

from aiokafka.protocol.admin import DescribeGroupsRequest_v3

from pyconnect.kafka.group_describe import (
    _ConsumerGroupDescribe,
    _ConsumerGroupDescribeRequestV0,
    _ConsumerGroupDescribeRequestV1,
    _DescribeGroups,
)

# throttle 0, two groups of (error 0, id, "Dead", "", "", no members, authorized_operations)
DESCRIBE_GROUPS_V3 = bytes.fromhex(
    "0000000000000002000000066e6f737563680004446561640000000000000000"
    "800000000000000467383438000444656164000000000000000080000000"
)
GOLDEN = dict(
    line.split(" ", 1)
    for line in (Path(__file__).parents[2] / "golden" / "consumer_group_describe" / "golden.txt")
    .read_text()
    .splitlines()
    if line.strip()
)


def test_describe_groups_v3_reads_every_group_of_a_broker_answer() -> None:
    struct = _DescribeGroups(["nosuch", "g848"]).prepare({15: (0, 5)})
    assert struct.API_VERSION == 3
    groups = struct.RESPONSE_TYPE.decode(DESCRIBE_GROUPS_V3).groups
    assert [(g[0], g[1], g[2]) for g in groups] == [(0, "nosuch", "Dead"), (0, "g848", "Dead")]
    # aiokafka's own v3 request reads the same bytes as v2: the second group comes out garbled
    garbled = DescribeGroupsRequest_v3.RESPONSE_TYPE.decode(DESCRIBE_GROUPS_V3).groups
    assert garbled[1][0] == -32768


def test_describe_groups_falls_back_to_v1() -> None:
    struct = _DescribeGroups(["g"]).prepare({15: (0, 2)})
    assert struct.API_VERSION == 1 and struct.encode() == bytes.fromhex("00000001000167")


def test_consumer_group_describe_picks_the_newest_version_and_encodes_like_java() -> None:
    for broker_max, version, cls in (
        (0, 0, _ConsumerGroupDescribeRequestV0),
        (1, 1, _ConsumerGroupDescribeRequestV1),
    ):
        struct = _ConsumerGroupDescribe(["g1", "grp-\u00e9"]).prepare({69: (0, broker_max)})
        assert type(struct) is cls and struct.API_VERSION == version and struct.FLEXIBLE_VERSION
        assert struct.encode().hex() == GOLDEN["REQ0"]
        response = struct.RESPONSE_TYPE.decode(bytes.fromhex(GOLDEN[f"RESP{version}"]))
        assert [(g.group_id, g.state, g.member_ids) for g in response.groups] == [
            ("g1", "Stable", ("m-1",)),
            ("grp-\u00e9", "Dead", ()),
        ]
