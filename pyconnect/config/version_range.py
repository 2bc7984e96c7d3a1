"""Plugin version requirements (KIP-891 ``*.plugin.version``) as Connect reads them with Maven's
``VersionRange``: ``[1.0,2.0)``, ``[1.0,)``, ``(,2.0]``, ``[1.0]`` and comma-joined sets of those;
a bare version ``1.0`` is an exact requirement (``[1.0,1.0]``), as ``PluginUtils.connectorVersionRequirement``
makes it. Versions compare as Maven's ``ComparableVersion`` does for the common cases: numeric parts
numerically (missing parts are zero), then qualifiers ``alpha < beta < milestone < rc < snapshot <
(release) < sp``, other qualifiers after those, alphabetically. Errors carry Maven's messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pyconnect.errors import ConfigError

_QUALIFIERS = {"alpha": 0, "a": 0, "beta": 1, "b": 1, "milestone": 2, "m": 2, "rc": 3, "cr": 3, "snapshot": 4, "": 5, "ga": 5, "final": 5, "release": 5, "sp": 6}  # fmt: skip


class VersionRangeError(ConfigError, ValueError):
    """An invalid version specification (Maven's ``InvalidVersionSpecificationException``)."""


def _items(version: str) -> list[tuple[int, int | str]]:
    items: list[tuple[int, int | str]] = []
    for token in re.findall(r"\d+|[A-Za-z]+", version.lower()):
        if token.isdigit():
            items.append((1, int(token)))
        else:
            rank = _QUALIFIERS.get(token)
            items.append((0, rank) if rank is not None else (0, 7))
            if rank is None:
                items.append((0, token))
    while items and items[-1] in ((1, 0), (0, 5)):
        items.pop()
    return items


def compare_versions(a: str, b: str) -> int:
    """Negative, zero or positive as ``a`` is older than, equal to or newer than ``b``."""
    left, right = _items(a), _items(b)
    for index in range(max(len(left), len(right))):
        x = left[index] if index < len(left) else None
        y = right[index] if index < len(right) else None
        # a missing item is 0 next to a number and a release next to a qualifier
        if x is None:
            x = (1, 0) if y is not None and y[0] == 1 else (0, 5)
        if y is None:
            y = (1, 0) if x[0] == 1 else (0, 5)
        if x == y:
            continue
        if x[0] != y[0]:
            # a number is newer than a qualifier (1.0.1 > 1.0-rc)
            return 1 if x[0] > y[0] else -1
        if type(x[1]) is not type(y[1]):
            return 1 if isinstance(x[1], str) else -1
        return 1 if x[1] > y[1] else -1  # type: ignore[operator]
    return 0


@dataclass(frozen=True)
class Restriction:
    lower: str | None
    lower_inclusive: bool
    upper: str | None
    upper_inclusive: bool

    def contains(self, version: str) -> bool:
        if self.lower is not None:
            cmp = compare_versions(version, self.lower)
            if cmp < 0 or (cmp == 0 and not self.lower_inclusive):
                return False
        if self.upper is not None:
            cmp = compare_versions(version, self.upper)
            if cmp > 0 or (cmp == 0 and not self.upper_inclusive):
                return False
        return True

    def __str__(self) -> str:
        return (
            ("[" if self.lower_inclusive else "(")
            + (self.lower or "")
            + ","
            + (self.upper or "")
            + ("]" if self.upper_inclusive else ")")
        )


@dataclass(frozen=True)
class VersionRange:
    restrictions: tuple[Restriction, ...]

    def contains(self, version: str) -> bool:
        return any(r.contains(version) for r in self.restrictions)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.restrictions)


def _restriction(spec: str) -> Restriction:
    lower_inclusive, upper_inclusive = spec.startswith("["), spec.endswith("]")
    body = spec[1:-1].strip()
    if "," not in body:
        if not (lower_inclusive and upper_inclusive):
            raise VersionRangeError(f"Single version must be surrounded by []: {spec}")
        return Restriction(body, True, body, True)
    low, high = (part.strip() for part in body.split(",", 1))
    if "," in high:
        raise VersionRangeError(f"Invalid version range {spec}")
    if (not low and lower_inclusive) or (not high and upper_inclusive):
        raise VersionRangeError(f"Invalid version range {spec}, bounds may not be inclusive when unbounded")
    if low and high and compare_versions(high, low) < 0:
        raise VersionRangeError(f"Range defies version ordering: {spec}")
    return Restriction(low or None, lower_inclusive, high or None, upper_inclusive)


def parse_version_requirement(spec: str) -> VersionRange:
    """The requirement ``spec`` names; raises :class:`VersionRangeError` with Maven's message."""
    text = spec.strip()
    if not text.startswith(("[", "(")):
        if not text or "," in text or text.endswith(("]", ")")):
            raise VersionRangeError(f"Invalid version range {spec}")
        return VersionRange((Restriction(text, True, text, True),))
    restrictions: list[Restriction] = []
    rest = text
    while rest.startswith(("[", "(")):
        ends = [i for i in (rest.find("]"), rest.find(")")) if i >= 0]
        if not ends:
            raise VersionRangeError(f"Unbounded range: {spec}")
        end = min(ends)
        restrictions.append(_restriction(rest[: end + 1]))
        rest = rest[end + 1 :].strip()
        if rest.startswith(","):
            rest = rest[1:].strip()
    if rest:
        raise VersionRangeError(f"Only fully-qualified sets allowed in multiple set scenario: {spec}")
    return VersionRange(tuple(restrictions))
