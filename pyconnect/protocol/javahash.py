"""Java collection semantics that leak into Connect's wire bytes and assignment decisions.

The Java runtime builds assignments from ``HashMap``/``HashSet`` iteration order (which connector
entry comes first in an assignment, which worker the load-balancing revocation walks first) and from
``String.compareTo`` (UTF-16 code-unit order). Reproducing Java's bytes and choices needs both:

* :func:`java_string_hash` / :func:`java_string_key` - ``String.hashCode`` and a sort key with the
  order of ``String.compareTo``;
* :func:`hash_order` - the iteration order of a ``java.util.HashMap``/``HashSet`` (JDK 17: bucket
  index of the spread hash, ties by insertion order, table doubling at load factor 0.75 and when a
  bin reaches the treeify threshold below capacity 64).

Limitation: a bin that becomes a red-black tree (>= 9 colliding keys in a table of >= 64 buckets)
is iterated here in insertion order, which Java does not guarantee; this needs deliberately
colliding names.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

_MASK32 = 0xFFFFFFFF
_TREEIFY_THRESHOLD = 8
_MIN_TREEIFY_CAPACITY = 64
_MAXIMUM_CAPACITY = 1 << 30


def _to_int32(value: int) -> int:
    value &= _MASK32
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_key(value: str) -> bytes:
    """Sort key ordering strings like Java's ``String.compareTo`` (UTF-16 code units)."""
    return value.encode("utf-16-be", "surrogatepass")


@functools.lru_cache(maxsize=1 << 16)
def java_string_hash(value: str) -> int:
    """Java's ``String.hashCode()`` (signed 32-bit); remembered for the most recent 65,536 strings
    (connector names are hashed in every assignment round)."""
    units = java_string_key(value)
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & _MASK32
    return _to_int32(h)


def table_size_for(capacity: int) -> int:
    """``HashMap.tableSizeFor``: the power of two >= ``capacity`` (at least 1)."""
    n = 1
    while n < capacity and n < _MAXIMUM_CAPACITY:
        n <<= 1
    return n


def hash_set_copy_capacity(size: int) -> int:
    """Initial capacity JDK 17's ``new HashSet<>(collection)`` requests for ``size`` elements."""
    quotient = struct.unpack(">f", struct.pack(">f", size / 0.75))[0]
    return max(int(quotient) + 1, 16)


def hash_order(
    keys: Iterable[K],
    hash_fn: Callable[[K], int],
    initial_capacity: int | None = None,
) -> list[K]:
    """Iteration order of a Java ``HashMap``/``HashSet`` after putting ``keys`` in order.

    ``initial_capacity`` is the constructor argument (``None`` = the no-argument constructor).
    Repeated keys keep their first position. Removing keys afterwards does not change the order of
    the rest (Java never shrinks the table), so callers filter the returned list.
    """
    capacity = 16 if initial_capacity is None else table_size_for(initial_capacity)
    entries: list[tuple[K, int]] = []
    seen: set[K] = set()
    bin_sizes: dict[int, int] = {}
    for key in keys:
        if key in seen:
            continue
        seen.add(key)
        h = hash_fn(key) & _MASK32
        spread = h ^ (h >> 16)
        entries.append((key, spread))
        index = spread & (capacity - 1)
        bin_sizes[index] = bin_sizes.get(index, 0) + 1
        if bin_sizes[index] > _TREEIFY_THRESHOLD and capacity < _MIN_TREEIFY_CAPACITY:
            capacity, bin_sizes = _resize(entries, capacity)
        if len(entries) > int(capacity * 0.75) and capacity < _MAXIMUM_CAPACITY:
            capacity, bin_sizes = _resize(entries, capacity)
    mask = capacity - 1
    return [key for _, key in sorted(((spread & mask, i), key) for i, (key, spread) in enumerate(entries))]


def _resize(entries: list[tuple[K, int]], capacity: int) -> tuple[int, dict[int, int]]:
    capacity <<= 1
    sizes: dict[int, int] = {}
    for _, spread in entries:
        index = spread & (capacity - 1)
        sizes[index] = sizes.get(index, 0) + 1
    return capacity, sizes


def hash_set_copy_order(items: Iterable[K], hash_fn: Callable[[K], int]) -> list[K]:
    """Iteration order of JDK 17's ``new HashSet<>(items)`` (presized copy of a collection)."""
    materialized = list(items)
    return hash_order(materialized, hash_fn, hash_set_copy_capacity(len(materialized)))


def default_hash_order(items: Iterable[K], hash_fn: Callable[[K], int]) -> list[K]:
    """Iteration order of a default-constructed ``HashMap``/``HashSet`` (``Collectors.toMap``/``toSet``)."""
    return hash_order(items, hash_fn)


def int32(value: int) -> int:
    """Wrap ``value`` to a signed 32-bit Java ``int``."""
    return _to_int32(value)
