"""Positions between two runs of offset syncs, settled as the failback's shell settles them
(:func:`connectors.mirror.failback.positions.settle`), from the records of both logs given as offsets."""

from __future__ import annotations

from connectors.mirror.failback.positions import Between, SourcePosition, settle


def resolved(found: SourcePosition | Between, on_b: list[int], on_a: list[int]) -> SourcePosition:
    """``found`` itself, or the :class:`Between` settled: the records of B in ``(b_after, committed)``
    counted in ``on_b``, the records of A in ``(a_after, a_before)`` listed from ``on_a``."""
    if isinstance(found, SourcePosition):
        return found
    b_records = sum(1 for b in on_b if found.b_after < b < found.committed)
    return settle(found, b_records, [a for a in on_a if found.a_after < a < found.a_before])
