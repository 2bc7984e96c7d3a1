"""Quiet logs under faults (pyconnect.log_guard): retriable conditions are WARN, repeats are held back
per window and counted, different subjects never hide each other, ERROR stays for what needs a human."""

from __future__ import annotations

import logging

from aiokafka.errors import KafkaConnectionError, NotLeaderForPartitionError, TopicAuthorizationFailedError

from pyconnect.errors import AuthenticationError, ConnectError
from pyconnect.log_guard import RepeatGuard, configure_logging, is_retriable


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def record(
    msg: str,
    *args: object,
    level: int = logging.ERROR,
    name: str = "pyconnect.herder",
    exc: BaseException | None = None,
) -> logging.LogRecord:
    exc_info = (type(exc), exc, None) if exc is not None else None
    return logging.LogRecord(name, level, __file__, 1, msg, args, exc_info)


def wrapped(outer: BaseException, inner: BaseException) -> BaseException:
    try:
        try:
            raise inner
        except BaseException as exc:
            raise outer from exc
    except BaseException as exc:
        return exc


def test_what_is_retriable() -> None:
    assert is_retriable(KafkaConnectionError("Unable to bootstrap"))
    assert is_retriable(NotLeaderForPartitionError())
    assert is_retriable(ConnectionRefusedError(111, "refused"))
    assert is_retriable(TimeoutError())
    assert not is_retriable(TopicAuthorizationFailedError())
    assert not is_retriable(ValueError("bad record"))
    assert is_retriable(wrapped(RuntimeError("step"), KafkaConnectionError("down"))), (
        "undeclared: the cause decides"
    )
    login = wrapped(AuthenticationError("SASL authentication failed"), KafkaConnectionError("closed"))
    assert not is_retriable(login), "a declared non-retriable error stays an error whatever it wraps"
    assert not is_retriable(
        wrapped(ConnectError("Error writing connector configuration"), KafkaConnectionError())
    )


def test_retriable_errors_are_demoted_to_warn_and_others_stay_error() -> None:
    guard = RepeatGuard(clock=Clock())
    down = record("Worker %s: herder tick failed", "w1", exc=KafkaConnectionError("Unable to bootstrap"))
    assert guard.filter(down) and (down.levelno, down.levelname) == (logging.WARNING, "WARNING")
    client = record('Unable connect to "%s": %s', "127.0.0.1:9092", OSError(111), name="aiokafka")
    assert guard.filter(client) and client.levelno == logging.WARNING
    missing = record("Topic %s not found in cluster metadata", "connect-status", name="aiokafka.cluster")
    assert guard.filter(missing) and missing.levelno == logging.WARNING
    arg = record("Failed to write status update %s: %s", "status-task-c-0", NotLeaderForPartitionError())
    assert guard.filter(arg) and arg.levelno == logging.WARNING
    human = record("Connector %s failed: %s", "c", AuthenticationError("SASL authentication failed"))
    assert guard.filter(human) and (human.levelno, human.levelname) == (logging.ERROR, "ERROR")
    info = record("started %s", "c", level=logging.INFO)
    assert guard.filter(info) and guard.filter(record("started %s", "c", level=logging.INFO)), (
        "INFO untouched"
    )


def test_a_repeating_line_is_shown_once_per_window_then_with_its_count() -> None:
    clock = Clock()
    guard = RepeatGuard(window_s=60.0, clock=clock)

    def tick(worker: str) -> logging.LogRecord:
        return record("Worker %s: herder tick failed; retrying in %.2f s", worker, 5.0, exc=RuntimeError("x"))

    assert guard.filter(tick("w1"))
    shown = 0
    for _ in range(500):
        clock.now += 0.1
        shown += guard.filter(tick("w1"))
    assert shown == 0, "500 repeats within 50 s: none shown"
    assert guard.filter(tick("w2")), "another subject is never hidden"
    other_words = record("Task %s: %s the offsets", "w1", "dropping")
    assert guard.filter(record("Task %s: %s the offsets", "w1", "not committing"))
    assert guard.filter(other_words), "the same template saying something else is another line"
    clock.now += 11
    again = tick("w1")
    assert guard.filter(again)
    assert again.getMessage() == (
        "Worker w1: herder tick failed; retrying in 5.00 s (500 similar lines held back in the last 60 s)"
    )
    clock.now += 61
    quiet = tick("w1")
    assert guard.filter(quiet) and quiet.getMessage() == "Worker w1: herder tick failed; retrying in 5.00 s"


def test_configure_logging_guards_the_handler_it_sets_up_and_no_other() -> None:
    """A process's own handler gets the guard; a handler installed before (here pytest's capture
    handlers, set aside, and one of the test's own) is left alone."""
    root = logging.getLogger()
    saved_handlers, level = root.handlers[:], root.level
    client_level = logging.getLogger("aiokafka").level
    root.handlers = []
    try:
        configure_logging("INFO")
        (own,) = root.handlers
        assert sum(isinstance(f, RepeatGuard) for f in own.filters) == 1
        assert root.level == logging.INFO
        assert logging.getLogger("aiokafka").level == logging.WARNING
        foreign = logging.StreamHandler()
        root.handlers = [foreign]
        configure_logging("WARNING")
        assert root.handlers == [foreign] and not foreign.filters
        assert root.level == logging.WARNING
    finally:
        root.handlers = saved_handlers
        root.setLevel(level)
        logging.getLogger("aiokafka").setLevel(client_level)
