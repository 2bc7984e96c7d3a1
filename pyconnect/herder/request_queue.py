"""REST writes waiting for the herder's loop, and their replies.

Contract:
- :meth:`RequestQueue.submit` queues a request and waits up to ``timeout_s`` (90 s, Java's) for its reply,
  then raises :class:`~pyconnect.errors.ConnectError` with Java's "Request timed out" message. A request
  whose waiter timed out still runs (as in Java); its reply goes nowhere, and a failure nobody waits for
  is never reported as an unretrieved exception.
- :meth:`RequestQueue.run` takes every queued request in arrival order and answers each with what
  ``perform`` returns or raises; requests whose waiter is gone are skipped.
- :meth:`RequestQueue.close` fails what is still queued ("Worker is shutting down") and refuses new ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from pyconnect.errors import ConnectError
from pyconnect.herder import requests as rq

REQUEST_TIMEOUT_S = 90.0
SHUTTING_DOWN = "Worker is shutting down"


class RequestQueue:
    """See the module docstring; one per herder."""

    def __init__(self, timeout_s: float = REQUEST_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self._queued: list[tuple[rq.Request, asyncio.Future[object]]] = []
        self._closed = False

    @property
    def waiting(self) -> bool:
        return bool(self._queued)

    async def submit(self, request: rq.Request, wake: Callable[[], None]) -> object:
        """Queue ``request``, ``wake`` the loop, and wait for the reply."""
        if self._closed:
            raise ConnectError(SHUTTING_DOWN)
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_reply_retrieved)
        self._queued.append((request, future))
        wake()
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.timeout_s)
        except TimeoutError:
            raise ConnectError(
                "Request timed out. The worker is currently busy with a rebalance or another operation."
            ) from None

    async def run(self, perform: Callable[[rq.Request], Awaitable[object]]) -> None:
        """Answer every queued request with ``perform(request)``."""
        queued, self._queued = self._queued, []
        for request, future in queued:
            if future.done():
                continue
            try:
                reply = await perform(request)
            except Exception as exc:
                future.set_exception(exc)
            else:
                future.set_result(reply)

    def close(self) -> None:
        self._closed = True
        for _, future in self._queued:
            if not future.done():
                future.set_exception(ConnectError(SHUTTING_DOWN))
        self._queued.clear()


def _reply_retrieved(future: asyncio.Future[object]) -> None:
    """A reply nobody waits for any more (the waiter timed out, the worker stopped) is not an
    unretrieved exception."""
    if not future.cancelled():
        future.exception()
