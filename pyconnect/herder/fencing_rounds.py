"""The leader's zombie-fencing rounds in progress (KIP-618; Java's ``DistributedHerder`` fencing
futures), one per connector, used from the herder's loop only.

Contract:
- :meth:`ZombieFencings.join`: requests that arrive while a connector's round runs share it; the
  round's future resolves once its record is written, or with its error (:class:`FencingStarted` is
  the loop's reply naming it).
- :meth:`ZombieFencings.conflict` fails a connector's round with 409 when new task configs are
  generated meanwhile (Java's message); :meth:`ZombieFencings.cancelled` then tells the round's
  follow-up not to write its record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pyconnect.errors import ConflictError, ConnectError

NEW_TASK_CONFIGS = "Failed to complete zombie fencing because a new set of task configs was generated"


@dataclass(frozen=True, slots=True)
class FencingStarted:
    """The reply to a fencing request in the herder's loop: the round to wait for (None: done)."""

    round: asyncio.Future[None] | None


class ZombieFencings:
    """The rounds in progress on this leader; used from the herder's loop only."""

    def __init__(self) -> None:
        self._rounds: dict[str, asyncio.Future[None]] = {}

    def active(self, connector: str) -> bool:
        return connector in self._rounds

    def join(
        self,
        connector: str,
        start: Callable[[], Awaitable[None]],
        spawn: Callable[[Awaitable[None], str], object],
    ) -> asyncio.Future[None]:
        """The connector's round in progress, or a new one running ``start()`` (spawned with ``spawn``,
        so it belongs to the herder's task group). The future resolves once the round's record is
        written, or with the round's error. A round already failed by :meth:`conflict` is not joined
        (its request was for an older generation; Java's requests may still join it while its
        producers are being fenced and fail with 409)."""
        existing = self._rounds.get(connector)
        if existing is not None and not existing.done():
            return existing
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_retrieved)
        self._rounds[connector] = future

        async def run() -> None:
            try:
                await start()
            except asyncio.CancelledError:
                if not future.done():
                    future.set_exception(ConnectError("The zombie fencing round was cancelled"))
                raise
            except Exception as exc:
                if not future.done():
                    future.set_exception(exc)
            else:
                if not future.done():
                    future.set_result(None)
            finally:
                if self._rounds.get(connector) is future:
                    del self._rounds[connector]

        coroutine = run()
        try:
            spawn(coroutine, f"zombie-fencing-{connector}")
        except BaseException:
            coroutine.close()
            del self._rounds[connector]
            raise
        return future

    def cancelled(self, connector: str) -> bool:
        """True once the connector's round was failed by :meth:`conflict` (its record is not written)."""
        future = self._rounds.get(connector)
        return future is not None and future.done()

    def conflict(self, connector: str) -> None:
        """New task configs of ``connector`` were generated: its round in progress fails with 409."""
        future = self._rounds.get(connector)
        if future is not None and not future.done():
            future.set_exception(ConflictError(NEW_TASK_CONFIGS))


def _retrieved(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()
