"""A task's or connector's view of its committed offsets (Java's ``OffsetStorageReader``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class ConnectorOffsetReader:
    """The committed offsets of one connector's source partitions, read from ``offset_store``
    (anything with ``get(connector, partitions)``: the worker's store or a connector's own view)."""

    def __init__(self, offset_store: Any, connector: str) -> None:
        self._store = offset_store
        self._connector = connector

    async def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        return (await self._store.get(self._connector, [partition]))[0]

    async def offsets(self, partitions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any] | None]:
        return list(await self._store.get(self._connector, partitions))
