"""``ConnectorTaskId``: the identity of one task of one connector, ordered like Java's.

Java orders task ids by connector name (``String.compareTo``, UTF-16 code units) then task number,
and hashes them as ``31 * connector.hashCode() + task``; both shape assignment bytes and decisions.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from pyconnect.protocol.javahash import int32, java_string_hash, java_string_key

CONNECTOR_TASK = -1
"""Sentinel task number meaning "the connector instance itself" in assignment entries."""


@functools.total_ordering
@dataclass(frozen=True, slots=True)
class ConnectorTaskId:
    """Task ``task`` (>= 0) of connector ``connector``; ``str()`` is ``connector-task`` as in Java."""

    connector: str
    task: int

    def sort_key(self) -> tuple[bytes, int]:
        return java_string_key(self.connector), self.task

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, ConnectorTaskId):
            return NotImplemented
        return self.sort_key() < other.sort_key()

    def java_hash(self) -> int:
        """Java's ``ConnectorTaskId.hashCode()``."""
        return int32(31 * java_string_hash(self.connector) + self.task)

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"
