"""Incremental fetch sessions (KIP-227): the client half, one session per leader, as Java's consumer keeps.

Pure (no IO, standard library only): the bookkeeping of Java's ``FetchSessionHandler`` and
``FetchMetadata``, ported. A broker that holds a session remembers, per partition, the fetch offset
and max bytes last sent, and the high watermark and log start offset last answered. An incremental
request then carries only the partitions added to the session or whose offset or max bytes changed,
and names the partitions to drop (``forgotten_topics_data``); the broker answers only the partitions
with records, a changed high watermark or log start offset, or an error. An idle fetch carries no
partition and is answered with none.

Contract of :class:`FetchSession` (one per leader node; a caller sends one request at a time per
session, and reports every request's outcome, its cancellation included):

- :meth:`FetchSession.build` takes the partitions wanted from that leader with their fetch offsets
  and returns the :class:`SessionRequest` to send. Its ``session_id``/``epoch`` are the fetch
  metadata: ``(0, 0)`` a full request opening a new session, ``(id, 0)`` a full request closing
  session ``id`` and opening a new one (Java's ``nextCloseExistingAttemptNew``), ``(0, -1)`` a
  sessionless full request (sessions turned off), ``(id, n > 0)`` an incremental request of
  session ``id``. A full request sends every wanted partition; an incremental one the added and
  altered ones (``send``) and the ones no longer wanted (``forget``). The session's partitions
  (:attr:`FetchSession.partitions`) are the wanted ones from then on.
- :meth:`FetchSession.handle_response` takes the response's top-level error code and session id
  and the partitions it answered. A clean response to a full request opens the session the broker
  named (epoch 1 next); session id 0 means the broker declined one (its cache is full, or the
  request was sessionless): the next request is full again, as Java's. A clean response to an
  incremental request advances the epoch (``Int32`` max wraps to 1, Java's ``nextEpoch``) and
  returns ``True``: every session partition absent from it was answered with no news (no records
  at the fetch offset sent last, high watermark and log start offset as last answered).
  ``FETCH_SESSION_ID_NOT_FOUND`` (the broker evicted the session, or restarted) makes the next
  request open a new session; ``INVALID_FETCH_SESSION_EPOCH``, any other top-level error, or a
  response naming partitions the session does not hold (or, to a full request, leaving some out)
  makes it close the session and open a new one. Those return ``False`` (nothing implied).
- :meth:`FetchSession.handle_failure`: the request failed or was cancelled (the broker may or may
  not have applied it, so the epochs may no longer agree): the next request is full, closing the
  session. :meth:`FetchSession.build` called while a request is unanswered counts it as failed.
- :meth:`FetchSession.closing`: the request that ends the session on the broker when the fetching
  stops (Java's consumer sends it on close, ``nextCloseExisting``): the session's id, epoch -1, no
  partition; the broker drops the session and answers as to a sessionless request. ``None`` when
  the broker holds no session of ours. The session is forgotten either way: a later
  :meth:`FetchSession.build` opens a new one.

Java's client sends the high watermark and log start offset of an answered partition to its
position once; here the caller must keep them from every clean answer (even one it discards as
stale), since the broker will not repeat them until they change. The last stable offset is not
among the broker's triggers, as in Java: a partition whose records become readable under
``read_committed`` is answered because records are then found at its fetch offset.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

FETCH_SESSION_ID_NOT_FOUND = 70
INVALID_FETCH_SESSION_EPOCH = 71

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_INT32_MAX = 2**31 - 1

K = TypeVar("K", bound=Hashable)


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch`` (Java's ``FetchMetadata.nextEpoch``): -1 stays -1, Int32 max wraps to 1."""
    if epoch < 0:
        return FINAL_EPOCH
    if epoch == _INT32_MAX:
        return 1
    return epoch + 1


@dataclass(frozen=True, slots=True)
class SessionRequest(Generic[K]):
    """What to send to the leader: fetch metadata, partitions (offset, max bytes) and partitions to forget."""

    session_id: int
    epoch: int
    send: dict[K, tuple[int, int]]
    forget: list[K]

    @property
    def full(self) -> bool:
        return self.epoch in (INITIAL_EPOCH, FINAL_EPOCH)


class FetchSession(Generic[K]):
    """The fetch session with one leader; see the module docstring. ``enabled=False``: every request
    is sessionless and full (session 0, epoch -1), as before KIP-227."""

    __slots__ = ("_enabled", "_epoch", "_partitions", "_pending", "_session_id", "node")

    def __init__(self, node: int, *, enabled: bool = True) -> None:
        self.node = node
        self._enabled = enabled
        self._session_id = INVALID_SESSION_ID
        self._epoch = INITIAL_EPOCH if enabled else FINAL_EPOCH
        self._partitions: dict[K, tuple[int, int]] = {}
        self._pending: SessionRequest[K] | None = None

    @property
    def session_id(self) -> int:
        """The session id the next request carries (0: none)."""
        return self._session_id

    @property
    def epoch(self) -> int:
        """The epoch the next request carries (0 or -1: a full request)."""
        return self._epoch

    @property
    def partitions(self) -> Mapping[K, tuple[int, int]]:
        """The session's partitions with the fetch offset and max bytes last sent (read-only view)."""
        return self._partitions

    def build(self, wanted: Mapping[K, int], max_bytes: int) -> SessionRequest[K]:
        """The request fetching ``wanted`` (partition -> fetch offset), ``max_bytes`` per partition."""
        if self._pending is not None:
            self.handle_failure()
        request: SessionRequest[K]
        if self._epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            self._partitions = {tp: (offset, max_bytes) for tp, offset in wanted.items()}
            request = SessionRequest(self._session_id, self._epoch, dict(self._partitions), [])
        else:
            session = self._partitions
            send: dict[K, tuple[int, int]] = {}
            for tp, offset in wanted.items():
                held = session.get(tp)
                if held is None or held[0] != offset or held[1] != max_bytes:
                    session[tp] = send[tp] = (offset, max_bytes)
            forget: list[K] = []
            if len(session) > len(wanted):  # every wanted partition is in the session now
                forget = [tp for tp in session if tp not in wanted]
                for tp in forget:
                    del session[tp]
            request = SessionRequest(self._session_id, self._epoch, send, forget)
        self._pending = request
        return request

    def handle_response(self, error_code: int, session_id: int, answered: Collection[K]) -> bool:
        """Account for the response to the last built request; ``True`` when the session partitions
        absent from ``answered`` were answered with no news (a clean incremental response)."""
        request, self._pending = self._pending, None
        if request is None:
            return False  # not the answer to the request outstanding (counted as failed already)
        if not self._enabled:
            return False
        if error_code:
            if error_code == FETCH_SESSION_ID_NOT_FOUND:
                self._open_new()
            else:
                self._close_and_open_new()
            return False
        session = self._partitions
        if request.full:
            if len(answered) != len(session) or any(tp not in session for tp in answered):
                self._open_new()  # answered other partitions than asked (Java: an invalid full response)
                return False
            if session_id == INVALID_SESSION_ID:
                self._open_new()  # the broker declined a session: the next request is full again
                return False
            self._session_id = session_id
            self._epoch = next_epoch(INITIAL_EPOCH)
            return False
        if any(tp not in session for tp in answered):
            self._close_and_open_new()
            return False
        if session_id == INVALID_SESSION_ID:
            self._open_new()  # the broker closed the session: it answered only what was sent
            return False
        self._epoch = next_epoch(self._epoch)
        return True

    def handle_failure(self) -> None:
        """The last built request failed or was cancelled: the next request is full."""
        self._pending = None
        if self._enabled:
            self._close_and_open_new()

    def closing(self) -> SessionRequest[K] | None:
        """The request ending the session on the broker, or ``None`` (see the module docstring)."""
        session_id = self._session_id
        self._pending = None
        self._partitions = {}
        if not self._enabled or session_id == INVALID_SESSION_ID:
            return None
        self._open_new()
        return SessionRequest(session_id, FINAL_EPOCH, {}, [])

    def _open_new(self) -> None:
        self._session_id = INVALID_SESSION_ID
        self._epoch = INITIAL_EPOCH

    def _close_and_open_new(self) -> None:
        self._epoch = INITIAL_EPOCH


__all__ = [
    "FETCH_SESSION_ID_NOT_FOUND",
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "INVALID_FETCH_SESSION_EPOCH",
    "INVALID_SESSION_ID",
    "FetchSession",
    "SessionRequest",
    "next_epoch",
]
