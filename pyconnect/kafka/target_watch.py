"""Who hears about a source task's waits for its target, and how a review of them reaches them.

:class:`TargetWatch` names the task's condition board (a :class:`~pyconnect.conditions.ConditionBoard`,
or anything with its ``set``/``clear``), the target's name for messages, the task's name for log lines,
the wait bounds, and whether a refused batch waits (``errors.tolerance=all``: it fails, to be skipped
as Java skips it). :func:`show` applies one :class:`~pyconnect.kafka.target_waits.Review`: conditions
raised or changed are set on the board (with the cluster and the producer's client id), cleared ones
removed, warnings logged at WARN and notices at INFO, each line naming the task. The partitions past
their bound are the caller's to fail.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Protocol

from pyconnect.kafka.target_waits import Review, WaitBounds

log = logging.getLogger("pyconnect.kafka.target_lanes")


class ConditionSink(Protocol):
    """Where conditions go (a :class:`~pyconnect.conditions.ConditionBoard`)."""

    def set(
        self,
        code: str,
        message: str,
        *,
        subject: str = "",
        cluster: str | None = None,
        client: str | None = None,
    ) -> bool: ...

    def clear(self, code: str, subject: str | None = None) -> bool: ...


@dataclass(frozen=True)
class TargetWatch:
    """See the module docstring."""

    conditions: ConditionSink | None = None
    cluster: str = "the target cluster"
    owner: str = "?"
    bounds: WaitBounds = field(default_factory=WaitBounds)
    wait_refused: bool = True
    """False (``errors.tolerance=all``): a refused batch fails, to be skipped as Java skips it."""
    alias: str | None = None
    """The target cluster's alias (a mirror connector's ``target.cluster.alias``): the conditions'
    ``cluster``, as every other condition names its cluster; ``None``: :attr:`cluster` itself."""


def show(review: Review, watch: TargetWatch, client: str | None) -> None:
    """See the module docstring."""
    board = watch.conditions
    if board is not None:
        for code, subject, message in review.raised:
            board.set(code, message, subject=subject, cluster=watch.alias or watch.cluster, client=client)
        for code, subject in review.cleared:
            board.clear(code, subject)
    for line in review.warnings:
        log.warning("Task %s: %s", watch.owner, line)
    for line in review.notices:
        log.info("Task %s: %s", watch.owner, line)
