"""The source side's conditions, without Kafka: the READ refusals' hold and probes
(pyconnect.kafka.source_faults) and the board a MirrorSourceTask keeps (connectors.mirror.source_watch).
Manual clocks, no sleeps; the same behaviour on real Kafka is tests/integration/test_source_conditions.py."""

from __future__ import annotations

import logging
import time

import pytest
from aiokafka.errors import KafkaConnectionError

from connectors.mirror import source_watch
from connectors.mirror.reachability import Reachability
from connectors.mirror.source_task import OPEN_BACKOFF_MAX_S, MirrorSourceTask, _open_failure
from connectors.mirror.source_watch import SourceWatch
from connectors.mirror.truncation import DELETED, Gap
from pyconnect.conditions import ConditionBoard
from pyconnect.errors import AuthenticationError, AuthorizationError, ConfigError
from pyconnect.kafka import source_faults
from pyconnect.kafka.source_faults import ReadRefusals, TopicCheck, principal_of

CLUSTER = "source cluster A (127.0.0.1:9092)"


class Clock:
    def __init__(self) -> None:
        self.s = 100.0
        self.ms = 1_000_000

    def seconds(self) -> float:
        return self.s

    def millis(self) -> int:
        return self.ms

    def advance(self, seconds: float) -> None:
        self.s += seconds
        self.ms += int(seconds * 1000)


def test_a_refused_topic_is_held_back_and_probed_with_backoff_until_answered() -> None:
    clock = Clock()
    refusals = ReadRefusals(clock.seconds, clock.millis)
    refused = [("t", 0), ("t", 1)]
    refusals.refuse(refused)
    assert refusals.held() == frozenset(refused)
    assert refusals.due() == []
    clock.advance(source_faults.PROBE_FIRST_S)
    assert refusals.held() == frozenset()
    assert sorted(refusals.due()) == refused and refusals.due() == [], "each probe once"
    gaps = []
    for _ in range(5):  # every probe refused: the wait doubles up to its bound
        refusals.refuse(refused)
        held_at = clock.s
        while refusals.held():
            clock.advance(0.5)
        gaps.append(clock.s - held_at)
    assert gaps == [2.0, 4.0, 5.0, 5.0, 5.0]
    answered = {("t", 0): clock.ms + 1}
    assert refusals.lift(lambda tp: answered.get(tp)) == {"t"}, "t-1 is still refused"
    answered[("t", 1)] = clock.ms + 1
    assert refusals.lift(lambda tp: answered.get(tp)) == set() and not refusals


def test_a_refusal_met_while_held_keeps_the_schedule() -> None:
    clock = Clock()
    refusals = ReadRefusals(clock.seconds, clock.millis)
    refusals.refuse([("t", 0)])
    clock.advance(0.5)
    refusals.refuse([("t", 0)])  # an answer that was already on its way
    clock.advance(0.5)
    assert not refusals.held(), "the first probe is still due after 1 s"
    assert refusals.lift(lambda tp: clock.ms - 600) == {"t"}, "answered before the last refusal"


@pytest.mark.parametrize(
    ("config", "principal"),
    [
        (
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.jaas.config": 'x.ScramLoginModule required username="alice" password="secret";',
            },
            "User:alice",
        ),
        (
            {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI"},
            "the GSSAPI principal of the client",
        ),
        ({"security.protocol": "SSL"}, "the principal of the client's certificate"),
        ({}, "User:ANONYMOUS"),
    ],
)
def test_the_principal_is_named_without_its_secret(config: dict[str, str], principal: str) -> None:
    assert principal_of(config) == principal
    assert "secret" not in principal_of(config)


def watch(clock: Clock, after_ms: int = 3000) -> tuple[SourceWatch, ConditionBoard]:
    board = ConditionBoard("m", 0, clock_ms=clock.millis)
    found = SourceWatch(
        "m-0",
        "A",
        "m|replication-consumer",
        board,
        Reachability(CLUSTER, "m|replication-consumer", after_ms),
        cluster=CLUSTER,
        principal="User:alice",
    )
    return found, board


def shown(board: ConditionBoard) -> dict[tuple[str, str], str]:
    return {(c.code, c.subject): c.message for c in board.active()}


def test_read_refusals_are_one_condition_per_topic_and_clear_when_lifted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    w, board = watch(clock)
    with caplog.at_level(logging.INFO, logger=source_watch.__name__):
        w.read_refused({"orders"})
        w.read_refused({"orders"})
        w.read_refused({"orders", "payments"})
        w.read_refused({"payments"})
    assert shown(board) == {
        ("ACL_DENIED", "payments"): f"READ on topic payments refused for principal User:alice on {CLUSTER}; "
        "its partitions are retried, the task's other topics keep flowing"
    }
    (condition,) = board.active()
    assert (condition.cluster, condition.client) == ("A", "m|replication-consumer")
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage().split(": ")[1] for r in warned] == ["ACL_DENIED", "ACL_DENIED"], "once per topic"
    assert all(r.getMessage().startswith("m-0: ") for r in caplog.records), "every line names the task"
    w.read_refused(set())
    assert board.active() == []


def test_the_topic_check_finds_deleted_and_hidden_topics_and_sees_them_back() -> None:
    clock = Clock()
    w, board = watch(clock)
    assert w.check_due(clock.s, set()) is None, "nothing late: no check"
    asked = w.check_due(clock.s, {"gone", "hidden", "fine"})
    assert asked == {"gone", "hidden", "fine"}
    w.checked(
        TopicCheck(
            True,
            present=frozenset({"fine"}),
            missing=frozenset({"gone"}),
            undescribable=frozenset({"hidden"}),
        ),
        asked,
    )
    found = shown(board)
    assert found[("TOPIC_DELETED", "gone")].startswith(f"topic gone no longer exists on {CLUSTER}")
    assert found[("ACL_DENIED", "hidden")].startswith(
        "DESCRIBE on topic hidden refused for principal User:alice"
    )
    assert w.explained() == {"gone", "hidden"}
    assert w.check_due(clock.s + 1, set()) is None, "at most every CHECK_EVERY_S"
    clock.advance(source_watch.CHECK_EVERY_S)
    asked = w.check_due(clock.s, set())
    assert asked == {"gone", "hidden"}, "what it found is checked again"
    w.checked(TopicCheck(False), asked)  # no answer: nothing changes
    assert set(shown(board)) == {("TOPIC_DELETED", "gone"), ("ACL_DENIED", "hidden")}
    w.checked(TopicCheck(True, present=frozenset({"gone", "hidden"})), asked)
    assert board.active() == []


def test_unreachable_counts_only_partitions_no_other_condition_explains() -> None:
    clock = Clock()
    w, board = watch(clock)
    w.read_refused({"denied"})
    w.late(clock.s, [("denied", 0)])
    assert [c.code for c in board.active()] == ["ACL_DENIED"]
    w.late(clock.s, [("denied", 0), ("t", 0)])
    assert {c.code for c in board.active()} == {"ACL_DENIED", "SOURCE_UNREACHABLE"}
    assert "partitions t-0)" in shown(board)[("SOURCE_UNREACHABLE", "")]
    w.late(clock.s + 1, [])
    assert [c.code for c in board.active()] == ["ACL_DENIED"]


def test_a_refused_login_replaces_unreachable_and_clears_once_answered() -> None:
    clock = Clock()
    w, board = watch(clock)
    w.late(clock.s, [("t", 0)])
    assert [c.code for c in board.active()] == ["SOURCE_UNREACHABLE"]
    refused = f"Authentication to {CLUSTER} failed: invalid credentials"
    w.checked(TopicCheck(False, refusal=refused), {"t"})
    w.late(clock.s + 1, [("t", 0)])
    assert shown(board) == {("SOURCE_AUTH_FAILED", ""): f"{refused}; the consumer keeps retrying"}
    w.answered()
    assert board.active() == []


def test_a_client_that_cannot_open_is_shown_until_the_clients_open() -> None:
    clock = Clock()
    w, board = watch(clock)
    w.open_failed(
        "TARGET_AUTH_FAILED", "Authentication to target cluster B failed: x", cluster="B", client="p"
    )
    w.open_failed(
        "SOURCE_AUTH_FAILED", "Authentication to source cluster A failed: y", cluster="A", client="c"
    )
    (condition,) = board.active()
    assert (condition.code, condition.cluster, condition.client) == ("SOURCE_AUTH_FAILED", "A", "c")
    assert (
        condition.message == "Authentication to source cluster A failed: y; the task tries again with backoff"
    )
    w.late(clock.s, [("t", 0)])
    assert [c.code for c in board.active()] == ["SOURCE_AUTH_FAILED"], "no unreachable on top"
    w.opened()
    assert board.active() == []


def test_gaps_are_a_warning_per_partition_held_for_the_hold_time() -> None:
    clock = Clock()
    w, board = watch(clock)
    first = Gap(DELETED, "t", 0, 10, 40, 90, 30, 40)
    w.gaps(clock.s, [first])
    (condition,) = board.active()
    assert (condition.code, condition.subject, condition.severity) == ("TRUNCATED", "t-0", "warning")
    assert condition.message == first.message()
    clock.advance(source_watch.TRUNCATED_HOLD_S - 10)
    w.gaps(clock.s, [Gap(DELETED, "t", 0, 90, 100, 120, 10, 100)])
    assert "(2 gaps on this partition since the task started, 40 records lost)" in board.active()[0].message
    clock.advance(source_watch.TRUNCATED_HOLD_S - 1)
    w.expire(clock.s)
    assert len(board.active()) == 1, "held from the last gap"
    clock.advance(1)
    w.expire(clock.s)
    assert board.active() == []


def test_a_task_whose_clients_cannot_open_tries_again_with_doubling_waits() -> None:
    task = MirrorSourceTask()
    waits = []
    for _ in range(5):
        before = time.monotonic()
        task._open_failed("SOURCE_AUTH_FAILED", "refused", "A", "c")
        assert task._open_retry_at is not None
        waits.append(round(task._open_retry_at - before))
    assert waits == [1, 2, 4, 5, 5] and OPEN_BACKOFF_MAX_S == 5


@pytest.mark.parametrize(
    ("error", "on_source", "code"),
    [
        (AuthenticationError("Authentication to source cluster A failed: x"), True, "SOURCE_AUTH_FAILED"),
        (AuthenticationError("Authentication to target cluster B failed: x"), False, "TARGET_AUTH_FAILED"),
        (KafkaConnectionError("Unable to bootstrap from [...]"), True, "SOURCE_UNREACHABLE"),
        (ConnectionRefusedError(111, "refused"), False, "TARGET_UNREACHABLE"),
        (AuthorizationError("Cluster authorization failed for InitProducerId"), False, None),
        (ConfigError("Invalid value"), True, None),
    ],
)
def test_which_failed_client_start_is_a_condition(
    error: Exception, on_source: bool, code: str | None
) -> None:
    assert _open_failure(error, on_source) == code


def test_partitions_unanswered_while_the_source_answers_the_topic_check_are_no_unreachable_source() -> None:
    """A slow target holds the task's fetches back, so its partitions go unanswered while the source
    is fine: the topic check's answer says so, and only its silence lets SOURCE_UNREACHABLE through."""
    clock = Clock()
    w, board = watch(clock)
    asked = w.check_due(clock.s, {"t"})
    assert asked == {"t"}
    w.checked(TopicCheck(True, present=frozenset({"t"})), asked)
    w.late(clock.s + 3, [("t", 0)])
    assert board.active() == []
    w.late(clock.s + 10, [("t", 0)])  # still within two check periods of the answer
    assert board.active() == []
    w.late(clock.s + 11, [("t", 0)])  # the check got no answer since: the source is silent
    assert [c.code for c in board.active()] == ["SOURCE_UNREACHABLE"]
