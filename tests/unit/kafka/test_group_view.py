"""How a consumer group's two describe answers (DescribeGroups, ConsumerGroupDescribe) become one view.

The answers below are the ones a 4.3.1 broker gives (seen on real brokers, DescribeGroups v3): a
consumer-protocol group is ``Dead`` without error in DescribeGroups and described by ConsumerGroupDescribe;
a classic group is GROUP_ID_NOT_FOUND in ConsumerGroupDescribe; an unknown group is both.
"""

from __future__ import annotations

import pytest

from pyconnect.kafka.group_view import ClassicEntry, GroupView, resolve_group
from pyconnect.protocol.consumer_group_describe import GROUP_ID_NOT_FOUND, DescribedGroup

NOT_CONSUMER = DescribedGroup(GROUP_ID_NOT_FOUND, "Group g is not a consumer group.", "g", "Dead", -1, "", ())
DEAD_CLASSIC = ClassicEntry(0, "Dead", 0)


def consumer(state: str, members: int = 0) -> DescribedGroup:
    return DescribedGroup(0, None, "g", state, 3, "uniform", tuple(f"m{i}" for i in range(members)))


@pytest.mark.parametrize(
    ("classic", "described", "expected", "idle"),
    [
        (DEAD_CLASSIC, consumer("Stable", 1), GroupView("g", "consumer", "Stable", 1), False),
        (DEAD_CLASSIC, consumer("Reconciling", 2), GroupView("g", "consumer", "Reconciling", 2), False),
        (DEAD_CLASSIC, consumer("Empty"), GroupView("g", "consumer", "Empty", 0), True),
        (ClassicEntry(0, "Stable", 2), NOT_CONSUMER, GroupView("g", "classic", "Stable", 2), False),
        (ClassicEntry(0, "Empty", 0), NOT_CONSUMER, GroupView("g", "classic", "Empty", 0), True),
        (
            ClassicEntry(0, "PreparingRebalance", 1),
            None,
            GroupView("g", "classic", "PreparingRebalance", 1),
            False,
        ),
        (DEAD_CLASSIC, NOT_CONSUMER, GroupView("g", "unknown", "Dead"), True),
        (DEAD_CLASSIC, None, GroupView("g", "unknown", "Dead"), True),  # a broker without KIP-848
        (ClassicEntry(GROUP_ID_NOT_FOUND, "Dead", 0), NOT_CONSUMER, GroupView("g", "unknown", "Dead"), True),
    ],
)
def test_each_kind_is_described_by_its_own_api(
    classic: ClassicEntry, described: DescribedGroup | None, expected: GroupView, idle: bool
) -> None:
    view = resolve_group("g", classic, described)
    assert view == expected
    assert view.idle is idle


@pytest.mark.parametrize(
    ("classic", "described", "error"),
    [
        (ClassicEntry(15, "", 0), NOT_CONSUMER, "DescribeGroups error code 15"),
        (DEAD_CLASSIC, DescribedGroup(14, None, "g", "", -1, "", ()), "ConsumerGroupDescribe error code 14"),
        (None, NOT_CONSUMER, "DescribeGroups not answered"),
    ],
)
def test_an_unanswered_describe_never_permits_a_write(
    classic: ClassicEntry | None, described: DescribedGroup, error: str
) -> None:
    view = resolve_group("g", classic, described)
    assert (view.protocol, view.state, view.idle, view.error) == ("unknown", "Unknown", False, error)


def test_one_line_descriptions() -> None:
    assert GroupView("g", "consumer", "Stable", 1).describe() == "Stable (consumer protocol, 1 member)"
    assert GroupView("g", "classic", "Empty", 0).describe() == "Empty (classic protocol, 0 members)"
    assert GroupView("g", "unknown", "Dead").describe() == "unknown"
    assert GroupView("g", "unknown", "Unknown", 0, "DescribeGroups error code 15").describe() == (
        "Unknown (DescribeGroups error code 15)"
    )
