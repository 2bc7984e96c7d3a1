"""Time spent in each connector/task state (Java's ``StateTracker``), for ``running-ratio`` and
``pause-ratio``.

``change_state(state, now_ms)`` closes the current state's period; the first call only starts one.
``duration_ratio(state, now_ms)`` is the time in ``state`` (including the current period) over the
time tracked, 0.0 before the first state. As in Java, time spent STOPPED counts towards the STOPPED
total but not towards the denominator.
"""

from __future__ import annotations

from pyconnect.protocol.internal_records import State


class StateTracker:
    __slots__ = ("_since_ms", "_state", "_totals")

    def __init__(self) -> None:
        self._state: State | None = None
        self._since_ms = 0
        self._totals: dict[State, int] = dict.fromkeys(State, 0)

    @property
    def current_state(self) -> State | None:
        return self._state

    def change_state(self, state: State, now_ms: int) -> None:
        if self._state is None:
            self._state, self._since_ms = state, now_ms
            return
        if state == self._state:
            return
        self._totals[self._state] += now_ms - self._since_ms
        self._state, self._since_ms = state, now_ms

    def duration_ratio(self, state: State, now_ms: int) -> float:
        if self._state is None:
            return 0.0
        current = now_ms - self._since_ms
        desired = self._totals[state] + (current if state == self._state else 0)
        total = current + sum(t for s, t in self._totals.items() if s != State.STOPPED)
        return 0.0 if total == 0 else desired / total
