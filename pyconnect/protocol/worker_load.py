"""Placement policy of the incremental cooperative assignor (KIP-415): who holds what, who sheds what.

Ports of Java's ``WorkerLoad`` and of ``IncrementalCooperativeAssignor``'s ``assignConnectors``/
``assignTasks`` (water-filling) and ``loadBalancingRevocations``. Connectors and tasks are balanced
independently. Holdings keep insertion order (Java ``LinkedHashSet``): surplus is revoked from the
*front* of a worker's holding, and the order of ``loads`` is the order the revocation walk visits
workers, so callers pass loads in Java's member iteration order.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Literal

from pyconnect.protocol.javahash import java_string_key
from pyconnect.protocol.task_id import ConnectorTaskId

Kind = Literal["connectors", "tasks"]


class WorkerLoad:
    """One worker's holding while a round is computed; mutated in place."""

    __slots__ = ("connectors", "tasks", "worker")

    def __init__(self, worker: str, connectors: Sequence[str], tasks: Sequence[ConnectorTaskId]) -> None:
        self.worker = worker
        self.connectors: dict[str, None] = dict.fromkeys(connectors)
        self.tasks: dict[ConnectorTaskId, None] = dict.fromkeys(tasks)

    def items(self, kind: Kind) -> dict[Any, None]:
        return self.connectors if kind == "connectors" else self.tasks

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks

    def remove(self, connectors: Sequence[str], tasks: Sequence[ConnectorTaskId]) -> None:
        for connector in connectors:
            self.connectors.pop(connector, None)
        for task in tasks:
            self.tasks.pop(task, None)


def water_fill(loads: list[WorkerLoad], items: Sequence[Hashable], kind: Kind) -> None:
    """Deal ``items`` in order, one per worker at the current lowest level (``assignConnectors``).

    Sorts ``loads`` in place by (count, worker id in Java string order), as Java does.
    """
    loads.sort(key=lambda w: (len(w.items(kind)), java_string_key(w.worker)))
    first = loads[0]
    index = 0
    while index < len(items):
        level = len(first.items(kind))
        up_to = next((i for i, w in enumerate(loads) if len(w.items(kind)) > level), len(loads))
        for worker in loads[:up_to]:
            worker.items(kind)[items[index]] = None
            index += 1
            if index == len(items):
                break


def _surplus(total: int, loads: Sequence[WorkerLoad], kind: Kind) -> dict[str, list[Any]]:
    minimum, extra = divmod(total, len(loads))
    sizes = [len(w.items(kind)) for w in loads]
    at_minimum = sizes.count(minimum)
    at_extra = sizes.count(minimum + 1)
    if at_extra == extra and at_minimum + at_extra == len(loads):
        return {}
    result: dict[str, list[Any]] = {}
    extras_given = 0
    for load, size in zip(loads, sizes, strict=True):
        if size <= minimum:
            continue
        if extras_given < extra:
            extras_given += 1
            if size == minimum + 1:
                continue
            limit = minimum + 1
        else:
            limit = minimum
        result[load.worker] = list(load.items(kind))[: size - limit]
    return result


def balancing_revocations(
    configured_connectors: int, configured_tasks: int, loads: Sequence[WorkerLoad]
) -> dict[str, tuple[list[str], list[ConnectorTaskId]]]:
    """Per worker, the connectors and tasks to revoke so nobody holds more than its fair share.

    Fair share: with ``total`` items over ``W`` workers, ``total % W`` workers may hold
    ``total // W + 1`` and the rest ``total // W``. Empty when already balanced, when every worker is
    empty, or when nothing is configured.
    """
    if all(w.is_empty() for w in loads) or configured_connectors + configured_tasks == 0:
        return {}
    by_connector = _surplus(configured_connectors, loads, "connectors")
    by_task = _surplus(configured_tasks, loads, "tasks")
    workers = dict.fromkeys([*by_connector, *by_task])
    return {w: (by_connector.get(w, []), by_task.get(w, [])) for w in workers}
