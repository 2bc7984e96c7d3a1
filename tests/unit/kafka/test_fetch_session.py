"""The client half of incremental fetch sessions (KIP-227), as Java's FetchSessionHandler keeps it.

No broker here: the responses are what a broker's FetchSession answers (see the module docstring of
pyconnect.kafka.fetch_session); tests/integration/test_raw_fetch_sessions.py checks them on real Kafka.
"""

from __future__ import annotations

import pytest
from aiokafka.protocol.fetch import FetchRequest_v4, FetchRequest_v7, FetchRequest_v11

from pyconnect.kafka.fetch_session import (
    FETCH_SESSION_ID_NOT_FOUND,
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_FETCH_SESSION_EPOCH,
    FetchSession,
    next_epoch,
)
from pyconnect.kafka.raw_batches_io import SessionFetchRequest

MAX = 1_048_576
A0, A1, B0 = ("a", 0), ("a", 1), ("b", 0)


def opened(session_id: int = 77) -> FetchSession[tuple[str, int]]:
    """A session the broker opened on a full request for A0 at 10, A1 at 20 and B0 at 30."""
    session: FetchSession[tuple[str, int]] = FetchSession(1)
    request = session.build({A0: 10, A1: 20, B0: 30}, MAX)
    assert request.full and (request.session_id, request.epoch) == (0, INITIAL_EPOCH)
    assert request.send == {A0: (10, MAX), A1: (20, MAX), B0: (30, MAX)} and request.forget == []
    assert session.handle_response(0, session_id, [A0, A1, B0]) is False  # a full answer lists all
    assert (session.session_id, session.epoch) == (session_id, 1 if session_id else INITIAL_EPOCH)
    return session


def test_a_full_request_opens_the_session_then_an_idle_request_carries_nothing() -> None:
    session = opened()
    idle = session.build({A0: 10, A1: 20, B0: 30}, MAX)
    assert not idle.full and (idle.session_id, idle.epoch) == (77, 1)
    assert idle.send == {} and idle.forget == []
    assert session.handle_response(0, 77, []) is True  # every session partition answered: no news
    assert session.epoch == 2
    again = session.build({A0: 10, A1: 20, B0: 30}, MAX)
    assert (again.epoch, again.send, again.forget) == (2, {}, [])


def test_an_advanced_position_sends_only_that_partition() -> None:
    session = opened()
    request = session.build({A0: 10, A1: 25, B0: 30}, MAX)
    assert request.send == {A1: (25, MAX)} and request.forget == []
    assert session.partitions == {A0: (10, MAX), A1: (25, MAX), B0: (30, MAX)}
    assert session.handle_response(0, 77, [A1]) is True


def test_changed_max_bytes_and_added_partitions_are_sent() -> None:
    session = opened()
    request = session.build({A0: 10, A1: 20, B0: 30, ("c", 4): 0}, 500)
    assert request.send == {A0: (10, 500), A1: (20, 500), B0: (30, 500), ("c", 4): (0, 500)}


def test_a_partition_no_longer_wanted_is_forgotten() -> None:
    session = opened()
    request = session.build({A0: 10, B0: 31}, MAX)
    assert request.send == {B0: (31, MAX)} and request.forget == [A1]
    assert dict(session.partitions) == {A0: (10, MAX), B0: (31, MAX)}
    assert session.handle_response(0, 77, []) is True
    assert session.build({A0: 10, B0: 31}, MAX).forget == []


@pytest.mark.parametrize(
    ("error", "session_id"),
    [(FETCH_SESSION_ID_NOT_FOUND, 0), (INVALID_FETCH_SESSION_EPOCH, 77), (58, 77)],
)
def test_session_errors_make_the_next_request_full(error: int, session_id: int) -> None:
    """FETCH_SESSION_ID_NOT_FOUND opens a new session; any other top-level error closes the session
    and opens a new one (Java's nextCloseExistingAttemptNew)."""
    session = opened()
    session.build({A0: 11, A1: 20, B0: 30}, MAX)
    assert session.handle_response(error, 77, []) is False
    request = session.build({A0: 11, A1: 20, B0: 30}, MAX)
    assert request.full and (request.session_id, request.epoch) == (session_id, INITIAL_EPOCH)
    assert request.send == {A0: (11, MAX), A1: (20, MAX), B0: (30, MAX)}
    assert session.handle_response(0, 78, [A0, A1, B0]) is False
    assert (session.session_id, session.epoch) == (78, 1)


@pytest.mark.parametrize("how", ["failed", "unanswered"])
def test_a_failed_or_cancelled_request_makes_the_next_request_full(how: str) -> None:
    session = opened()
    session.build({A0: 12, A1: 20, B0: 30}, MAX)
    if how == "failed":
        session.handle_failure()  # a connection error, or the request task cancelled
    # else: the next build while one is unanswered counts it as failed
    request = session.build({A0: 12, A1: 20, B0: 30}, MAX)
    assert request.full and (request.session_id, request.epoch) == (77, INITIAL_EPOCH)
    assert len(request.send) == 3
    assert session.handle_response(0, 79, [A0, A1, B0]) is False
    assert (session.session_id, session.epoch) == (79, 1)
    assert session.handle_response(0, 79, []) is False  # no request outstanding: ignored
    assert (session.session_id, session.epoch) == (79, 1)


def test_a_failure_before_the_session_opened_keeps_asking_for_one() -> None:
    session: FetchSession[tuple[str, int]] = FetchSession(1)
    session.build({A0: 0}, MAX)
    session.handle_failure()
    assert (session.session_id, session.epoch) == (0, INITIAL_EPOCH)


def test_the_epoch_wraps_from_int32_max_to_1() -> None:
    assert [next_epoch(e) for e in (0, 1, 2**31 - 2, 2**31 - 1, FINAL_EPOCH)] == [1, 2, 2**31 - 1, 1, -1]
    session = opened()
    session._epoch = 2**31 - 1
    request = session.build({A0: 10, A1: 20, B0: 30}, MAX)
    assert request.epoch == 2**31 - 1 and not request.full
    assert session.handle_response(0, 77, []) is True
    assert session.epoch == 1


def test_a_broker_declining_a_session_keeps_requests_full() -> None:
    """Session id 0 on a full answer: the broker's session cache is full (or it is sessionless)."""
    session = opened(session_id=0)
    assert (session.session_id, session.epoch) == (0, INITIAL_EPOCH)
    request = session.build({A0: 10, A1: 20, B0: 30}, MAX)
    assert request.full and len(request.send) == 3


def test_a_broker_closing_the_session_answered_only_what_was_sent() -> None:
    session = opened()
    session.build({A0: 13, A1: 20, B0: 30}, MAX)
    assert session.handle_response(0, 0, [A0]) is False
    assert session.build({A0: 13, A1: 20, B0: 30}, MAX).full


def test_invalid_answers_reset_the_session() -> None:
    """Java's verifyFullFetchResponsePartitions / verifyIncrementalFetchResponsePartitions."""
    session: FetchSession[tuple[str, int]] = FetchSession(1)
    session.build({A0: 10, A1: 20}, MAX)
    assert session.handle_response(0, 77, [A0]) is False  # a full answer leaving A1 out
    assert (session.session_id, session.epoch) == (0, INITIAL_EPOCH)
    session = opened()
    session.build({A0: 10, A1: 20, B0: 30}, MAX)
    assert session.handle_response(0, 77, [("z", 9)]) is False  # a partition not in the session
    assert (session.session_id, session.epoch) == (77, INITIAL_EPOCH)


def test_sessions_turned_off_are_sessionless_and_full() -> None:
    session: FetchSession[tuple[str, int]] = FetchSession(1, enabled=False)
    for _ in range(2):
        request = session.build({A0: 10, A1: 20}, MAX)
        assert request.full and (request.session_id, request.epoch) == (0, FINAL_EPOCH)
        assert len(request.send) == 2
        assert session.handle_response(0, 0, [A0, A1]) is False
    session.build({A0: 10}, MAX)
    session.handle_failure()
    assert (session.session_id, session.epoch) == (0, FINAL_EPOCH)


def _request(**session: object) -> SessionFetchRequest:
    return SessionFetchRequest(500, 1, 1000, 0, [("a", [(0, 10, MAX)])], **session)  # type: ignore[arg-type]


def test_the_request_carries_session_fields_from_v7() -> None:
    request = _request(session_id=77, session_epoch=3, forgotten=[("b", [0, 2])])
    v11 = request.build(FetchRequest_v11)
    assert (v11.session_id, v11.session_epoch) == (77, 3)
    assert v11.forgotten_topics_data == [("b", [0, 2])]
    assert v11.topics == [("a", [(0, -1, 10, -1, MAX)])]
    assert FetchRequest_v11.decode(v11.encode()).to_object() == v11.to_object()
    v7 = request.build(FetchRequest_v7)
    assert (v7.session_id, v7.session_epoch, v7.forgotten_topics_data) == (77, 3, [("b", [0, 2])])
    assert v7.topics == [("a", [(0, 10, -1, MAX)])]
    v4 = request.build(FetchRequest_v4)  # no session before v7
    assert "session_id" not in v4.SCHEMA.names and v4.topics == [("a", [(0, 10, MAX)])]


def test_the_request_defaults_to_sessionless() -> None:
    v11 = _request().build(FetchRequest_v11)
    assert (v11.session_id, v11.session_epoch, v11.forgotten_topics_data) == (0, -1, [])


def test_closing_ends_an_open_session_with_the_final_epoch_and_forgets_it() -> None:
    session = opened()
    session.build({A0: 11, A1: 20, B0: 30}, MAX)  # in flight when the fetching stops
    request = session.closing()
    assert request is not None and request.full
    assert (request.session_id, request.epoch, request.send, request.forget) == (77, FINAL_EPOCH, {}, [])
    assert session.partitions == {} and session.closing() is None  # nothing left to close
    reopened = session.build({A0: 11}, MAX)
    assert (reopened.session_id, reopened.epoch, reopened.send) == (0, INITIAL_EPOCH, {A0: (11, MAX)})


def test_closing_after_a_failure_still_names_the_session_the_broker_holds() -> None:
    session = opened()
    session.build({A0: 10, A1: 20, B0: 30}, MAX)
    session.handle_failure()  # the broker still holds session 77
    request = session.closing()
    assert request is not None and (request.session_id, request.epoch) == (77, FINAL_EPOCH)


def test_there_is_nothing_to_close_without_a_session() -> None:
    declined = opened(session_id=0)  # the broker declined one
    assert declined.closing() is None
    sessionless: FetchSession[tuple[str, int]] = FetchSession(1, enabled=False)
    sessionless.build({A0: 10}, MAX)
    sessionless.handle_response(0, 0, [A0])
    assert sessionless.closing() is None
    after = sessionless.build({A0: 10}, MAX)
    assert (after.session_id, after.epoch) == (0, FINAL_EPOCH)  # still sessionless
