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
- The decisions are the effects: the herder's :mod:`~pyconnect.herder.source_fencing` performs a
  ``RecordOnly`` (the record write) inside its loop, and a ``Fence`` as a round
  (:mod:`pyconnect.herder.fencing_rounds`: the producer fencing of :mod:`pyconnect.kafka.producer_fencing`
  outside the loop, then the record, refused with 409 when the generation moved on meanwhile).

No I/O, no asyncio.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyconnect.stores.config_state import ClusterConfigState

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
