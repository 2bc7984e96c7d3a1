"""A sink task's offset bookkeeping and the KIP-875 sink offsets parsing, without Kafka."""

from __future__ import annotations

import pytest

from pyconnect.api.sink import TopicPartition
from pyconnect.errors import BadRequestError
from pyconnect.herder.sink_offsets import offsets_body, parse_sink_offsets
from pyconnect.worker.sink_offsets import SinkOffsets

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)


def test_only_delivered_offsets_are_requested_and_committed() -> None:
    offsets = SinkOffsets()
    assert offsets.requested() == {}
    offsets.delivered({A0: 5, A1: 3})
    offsets.delivered({A0: 9})
    requested = offsets.requested()
    assert requested == {A0: 9, A1: 3}
    plan = offsets.to_commit(requested, requested, {A0, A1})
    assert plan is not None and plan.offsets == {A0: 9, A1: 3} and plan.warnings == []
    offsets.committed(plan.offsets)
    assert offsets.to_commit(requested, requested, {A0, A1}) is None  # nothing changed since


def test_pre_commit_may_hold_back_but_never_run_ahead() -> None:
    offsets = SinkOffsets()
    offsets.delivered({A0: 10, A1: 4})
    offsets.committed({A0: 2})
    requested = offsets.requested()
    plan = offsets.to_commit(requested, {A0: 6, A1: 7, B0: 1}, {A0, A1})
    assert plan is not None
    assert plan.offsets == {A0: 6}  # A1 beyond what was delivered, B0 not assigned: ignored
    assert any("not yet consumed" in w and "a-1/7" in w for w in plan.warnings)
    assert any("partition not assigned" in w and "b-0/1" in w for w in plan.warnings)


def test_an_empty_pre_commit_answer_skips_the_commit() -> None:
    offsets = SinkOffsets()
    offsets.delivered({A0: 10})
    assert offsets.to_commit(offsets.requested(), {}, {A0}) is None


def test_rewind_and_revocation() -> None:
    offsets = SinkOffsets()
    offsets.delivered({A0: 10, A1: 4})
    offsets.rewound({A0: 3})
    assert offsets.requested() == {A0: 3, A1: 4}
    assert offsets.last_committed[A0] == 3
    offsets.revoked([A1])
    assert offsets.requested() == {A0: 3}
    assert offsets.requested([A1]) == {}


def test_offsets_body_has_javas_shape() -> None:
    body = offsets_body({B0: 7, A1: 2, A0: 5})
    assert body == {
        "offsets": [
            {"partition": {"kafka_topic": "a", "kafka_partition": 0}, "offset": {"kafka_offset": 5}},
            {"partition": {"kafka_topic": "a", "kafka_partition": 1}, "offset": {"kafka_offset": 2}},
            {"partition": {"kafka_topic": "b", "kafka_partition": 0}, "offset": {"kafka_offset": 7}},
        ]
    }


def test_parse_accepts_numbers_and_numeric_strings() -> None:
    parsed = parse_sink_offsets(
        [
            ({"kafka_topic": "a", "kafka_partition": 0}, {"kafka_offset": 5}),
            ({"kafka_topic": "a", "kafka_partition": "1"}, {"kafka_offset": "12"}),
            ({"kafka_topic": "b", "kafka_partition": 0}, None),
        ]
    )
    assert parsed == {A0: 5, A1: 12, B0: None}


@pytest.mark.parametrize(
    ("partition", "offset", "message"),
    [
        (
            {"kafka_topic": "a"},
            {"kafka_offset": 1},
            "must contain the keys 'kafka_topic' and 'kafka_partition'",
        ),
        ({"kafka_topic": None, "kafka_partition": 0}, {"kafka_offset": 1}, "may not be null"),
        (
            {"kafka_topic": "a", "kafka_partition": None},
            {"kafka_offset": 1},
            "Kafka partitions must be valid",
        ),
        (
            {"kafka_topic": "a", "kafka_partition": "x"},
            {"kafka_offset": 1},
            "Failed to parse the following Kafka partition value in the provided offsets: 'x'.",
        ),
        (
            {"kafka_topic": "a", "kafka_partition": 0},
            {"offset": 1},
            "should either be null or contain the key",
        ),
        (
            {"kafka_topic": "a", "kafka_partition": 0},
            {"kafka_offset": 1.5},
            "Failed to parse the following Kafka offset value in the provided offsets: '1.5'.",
        ),
    ],
)
def test_parse_refuses_what_java_refuses(partition: dict, offset: dict, message: str) -> None:
    with pytest.raises(BadRequestError) as raised:
        parse_sink_offsets([(partition, offset)])
    assert message in str(raised.value)
