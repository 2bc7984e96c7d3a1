"""Zombie fencing before a new generation of exactly-once source tasks starts (KIP-618; Java's
``DistributedHerder.fenceZombieSourceTasks`` and its ``ZombieFencing`` rounds).

A source connector's tasks write through transactional producers ``<group.id>-<connector>-<task>``.
When the connector publishes a new generation of task configs, tasks of the previous generation may
still be alive somewhere (a frozen worker, a worker that lost its membership): before a task of the
new generation starts, the leader fences the transactional ids of every task of the last recorded
generation and then records the new task count in the config topic (``tasks-fencing-C``). Only then
do the new tasks initialise their producers.

Contract:
- :func:`decide` is the pure decision (Java's exact conditions) from a config snapshot read to the end:
  nothing to do (the last task-config commit is already followed by a task-count record), record
  only (no record yet: no transactional producer ever ran; or one task before and one now: the new
  task's own initialisation fences the old one), or fence ``to_fence`` ids then record ``to_record``.
- :class:`ZombieFencings` holds the leader's rounds in progress, one per connector: requests that
  arrive while a round runs share it (:meth:`ZombieFencings.join`). :meth:`ZombieFencings.conflict`
  fails a connector's round with 409 when new task configs are generated meanwhile (Java's message);
  a round's own follow-up also refuses (409) when the generation moved on before it could write.
- The caller (the herder) performs the decision and the record write inside its loop, and the
  producer fencing (:mod:`pyconnect.kafka.producer_fencing`) outside it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pyconnect.errors import ConflictError, ConnectError
from pyconnect.stores.config_state import ClusterConfigState

NEW_TASK_CONFIGS = "Failed to complete zombie fencing because a new set of task configs was generated"
GENERATION_MOVED = "Fencing failed because new task configurations were generated for the connector"


@dataclass(frozen=True, slots=True)
class NothingToFence:
    """The latest task generation was already recorded as fenced."""


@dataclass(frozen=True, slots=True)
class RecordOnly:
    """Write ``tasks-fencing-C {"task-count": task_count}`` without fencing anyone."""

    task_count: int
    reason: str


@dataclass(frozen=True, slots=True)
class Fence:
    """Fence the ids of tasks ``0..to_fence-1``, then record ``to_record`` if the connector is still
    at task-config generation ``generation``."""

    to_fence: int
    to_record: int
    generation: int | None


Decision = NothingToFence | RecordOnly | Fence


@dataclass(frozen=True, slots=True)
class FencingStarted:
    """The reply to a fencing request in the herder's loop: the round to wait for (None: done)."""

    round: asyncio.Future[None] | None


def decide(snapshot: ClusterConfigState, connector: str) -> Decision:
    """What a fencing request for ``connector`` must do now (see the module docstring)."""
    if not snapshot.pending_fencing(connector):
        return NothingToFence()
    task_count = snapshot.task_count(connector)
    recorded = snapshot.task_count_record(connector)
    if recorded is None:
        return RecordOnly(
            task_count, "it is being brought up for the first time with exactly-once source support"
        )
    if recorded == 1 and task_count == 1:
        return RecordOnly(
            task_count,
            "both the most recent and the current generation of task configs only contain one task",
        )
    return Fence(recorded, task_count, snapshot.task_config_generation(connector))


def transactional_ids(group_id: str, connector: str, tasks: int) -> list[str]:
    """The transactional ids of tasks ``0..tasks-1`` of ``connector`` (Java ``taskTransactionalId``)."""
    return [f"{group_id}-{connector}-{task}" for task in range(tasks)]


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
