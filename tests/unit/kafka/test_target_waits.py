"""What the target's refusals and silences mean (pyconnect.kafka.target_waits): which produce errors wait,
the conditions and log lines for waiting partitions, the wait bound, and TARGET_UNREACHABLE; on a manual
clock."""

from __future__ import annotations

import pytest

from pyconnect.conditions import CODES
from pyconnect.kafka.target_waits import (
    ACL_DENIED,
    RECORD_TOO_LARGE,
    TARGET_TOPIC_MISSING,
    TARGET_UNREACHABLE,
    Blocked,
    TargetWaits,
    WaitBounds,
    missing,
    refusal,
    unrecognized,
)

CLUSTER = "cluster B (127.0.0.1:9092)"


class KafkaLikeError(Exception):
    def __init__(self, errno: int) -> None:
        super().__init__(f"[Error {errno}]")
        self.errno = errno


def test_the_codes_are_documented_ones() -> None:
    for code in (ACL_DENIED, RECORD_TOO_LARGE, TARGET_TOPIC_MISSING, TARGET_UNREACHABLE):
        assert code in CODES


@pytest.mark.parametrize(
    ("errno", "code"),
    [(29, ACL_DENIED), (10, RECORD_TOO_LARGE), (18, RECORD_TOO_LARGE), (3, None), (87, None), (7, None)],
)
def test_only_what_an_operator_fixes_waits(errno: int, code: str | None) -> None:
    blocked = refusal(KafkaLikeError(errno), "t", 2, principal="User:alice", size=900, records=3)
    assert (blocked.code if blocked else None) == code
    assert refusal(RuntimeError("boom"), "t", 2) is None


def test_the_clients_refusal_of_a_partition_it_does_not_know_is_recognised() -> None:
    assert unrecognized(AssertionError("Unrecognized partition"))
    assert unrecognized(KafkaLikeError(3))
    assert not unrecognized(AssertionError("something else")) and not unrecognized(KafkaLikeError(29))


def test_a_condition_waits_for_its_grace_then_names_topic_counts_and_cluster() -> None:
    waits = TargetWaits(CLUSTER, "producer-1")
    for partition in (3, 1, 2):
        waits.block(missing("A.orders", partition, 1), 10.0)
    review = waits.review(10.5)
    assert review.raised == [] and review.warnings == []
    review = waits.review(11.0)
    ((code, subject, message),) = review.raised
    assert (code, subject) == (TARGET_TOPIC_MISSING, "A.orders")
    assert message == (
        f"topic A.orders on {CLUSTER} has 1 partition(s) (4 wanted, 1 present): records for partition(s) "
        "1, 2, 3 wait until it has them"
    )
    assert review.warnings == [f"TARGET_TOPIC_MISSING: {message}"]
    assert waits.review(12.0).raised == []  # unchanged: nothing to show again


def test_a_missing_topic_and_a_topic_as_a_whole_are_worded() -> None:
    waits = TargetWaits(CLUSTER, raise_after_s=0)
    waits.block(missing("gone", 0, None), 0)
    waits.block(missing("keyed", -1, None), 0)
    shown = {subject: message for _, subject, message in waits.review(0).raised}
    assert shown["gone"] == (
        f"topic gone does not exist on {CLUSTER} (1 wanted, 0 present): records for it wait until it is created"
    )
    assert shown["keyed"].startswith(f"topic keyed does not exist on {CLUSTER} (0 present)")


def test_refusals_are_worded_with_principal_size_and_limit() -> None:
    waits = TargetWaits(CLUSTER, raise_after_s=0)
    waits.block(Blocked(ACL_DENIED, "t", 0, principal="User:alice"), 0)
    waits.block(Blocked(RECORD_TOO_LARGE, "big", 4, size=2_000_000, records=1, limit=1_048_588), 0)
    waits.block(Blocked(RECORD_TOO_LARGE, "big", 5, size=700, records=2), 0)
    shown = {(code, subject): message for code, subject, message in waits.review(0).raised}
    assert shown[(ACL_DENIED, "t")] == (
        f"WRITE on topic t is refused by {CLUSTER} for principal User:alice: records for it wait until the ACL "
        "is granted"
    )
    assert shown[(RECORD_TOO_LARGE, "big-4")] == (
        f"{CLUSTER} refuses a batch of 1 record(s), 2000000 bytes, for big-4 as larger than the topic's "
        "max.message.bytes (1048588): the partition waits until the limit is raised"
    )
    assert "the broker's message.max.bytes" in shown[(RECORD_TOO_LARGE, "big-5")]


def test_a_condition_clears_once_nothing_of_it_waits_and_says_how_long_it_lasted() -> None:
    waits = TargetWaits(CLUSTER, raise_after_s=0)
    waits.block(missing("t", 1, 1), 0)
    waits.block(missing("t", 2, 1), 0)
    waits.review(0)
    waits.unblock("t", 1)
    review = waits.review(1)
    ((_, _, message),) = review.raised
    assert review.cleared == [] and message.endswith("partition(s) 2 wait until it has them")
    waits.unblock("t", 2)
    review = waits.review(3.5)
    assert review.cleared == [(TARGET_TOPIC_MISSING, "t")]
    assert review.notices == [f"TARGET_TOPIC_MISSING cleared after 3.5 s: t on {CLUSTER}"]
    assert waits.review(4).cleared == []


def test_a_lasting_condition_is_warned_again_at_the_repeat_rate_only() -> None:
    waits = TargetWaits(CLUSTER, raise_after_s=0, repeat_s=300)
    waits.block(Blocked(ACL_DENIED, "t", 0), 0)
    assert len(waits.review(0).warnings) == 1
    assert all(not waits.review(now).warnings for now in (1, 100, 299))
    (again,) = waits.review(300).warnings
    assert again.startswith("ACL_DENIED for 300 s: WRITE on topic t")


def test_a_wait_keeps_its_start_when_its_reason_changes() -> None:
    waits = TargetWaits(CLUSTER, bounds=WaitBounds(wait_max_s=10), raise_after_s=0)
    waits.block(missing("t", 1, None), 0)
    waits.block(missing("t", 1, 1), 6)
    assert waits.review(9.9).overdue == []
    ((topic, partition, message),) = waits.review(10).overdue
    assert (topic, partition) == ("t", 1)
    assert message == (
        f"Gave up waiting for partition 1 of topic t on {CLUSTER} after 10000 ms "
        "(pyconnect.target.wait.max.ms=10000): the topic has 1 partition(s)"
    )


def test_without_a_bound_nothing_is_ever_overdue() -> None:
    waits = TargetWaits(CLUSTER)
    waits.block(missing("t", 1, None), 0)
    assert waits.review(10**9).overdue == []


def test_the_target_is_unreachable_when_nothing_handed_over_is_acknowledged_for_the_bound() -> None:
    waits = TargetWaits(CLUSTER, "producer-1", bounds=WaitBounds(unreachable_after_s=15))
    waits.handed(100)
    waits.handed(101)
    assert waits.review(114.9).raised == []
    ((code, subject, message),) = waits.review(115).raised
    assert (code, subject) == (TARGET_UNREACHABLE, "")
    assert message == (
        f"{CLUSTER} has acknowledged none of the records of client 'producer-1' handed to the producer for "
        "15 s or more; the task keeps retrying"
    )
    waits.settled(130, acknowledged=True)  # one answer clears it, though one batch still waits
    assert waits.review(130).cleared == [(TARGET_UNREACHABLE, "")]
    assert waits.review(144).raised == []
    assert waits.review(145).raised[0][0] == TARGET_UNREACHABLE
    waits.settled(146, acknowledged=False)  # nothing waits any more
    assert waits.review(146).cleared == [(TARGET_UNREACHABLE, "")]


def test_a_quiet_target_with_nothing_to_send_is_not_unreachable() -> None:
    waits = TargetWaits(CLUSTER, bounds=WaitBounds(unreachable_after_s=1))
    waits.handed(0)
    waits.settled(0.1, acknowledged=True)
    assert waits.review(1000).raised == []
    waits.handed(1000)  # the quiet time counts from when batches began to wait again
    assert waits.review(1000.9).raised == [] and waits.review(1001).raised
