"""Query parameters read as Java's JAX-RS resources read them.

- A boolean parameter (``includeTasks``, ``onlyFailed``, ``connectorsOnly``, ``forward``) is Java's
  ``Boolean.valueOf`` of its first value: ``true`` in any case is true, anything else (``1``,
  ``yes``) is false; absent or empty (``?connectorsOnly=``, ``?connectorsOnly``), it takes the
  resource's default, as Jersey's ``@DefaultValue`` does. Never a 400: clients were written against
  this (``?includeTasks=1`` restarts the connector alone in Java, and here).
- ``version`` on ``GET /connector-plugins/{plugin}/config`` (KIP-891) is
  ``PluginUtils.connectorVersionRequirement``: ``latest`` (the default) asks for none; a Maven range
  (``[1.0,2.0)``) is itself; any other text is an exact version (``1.0`` -> ``[1.0,1.0]``, the empty
  text -> ``[,]``, which nothing satisfies). A spec Maven cannot parse answers 400
  ``Invalid version specification: <as given>``.

Pure functions of the request's parsed query.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyconnect.config.version_range import VersionRange, VersionRangeError, parse_version_requirement
from pyconnect.errors import BadRequestError

LATEST = "latest"


def java_boolean(text: str) -> bool:
    """``Boolean.valueOf(text)``."""
    return text.lower() == "true"


def flag(query: Mapping[str, str], name: str, default: bool = False) -> bool:
    """The boolean query parameter ``name`` (its first value), or ``default`` when absent or empty."""
    value = query.get(name)
    return default if not value else java_boolean(value)


def version_requirement(query: Mapping[str, str]) -> VersionRange | None:
    """The ``version`` parameter as a requirement; None for ``latest`` or when absent."""
    given = query.get("version", LATEST)
    if given == LATEST:
        return None
    spec = given.strip()
    try:
        return parse_version_requirement(spec if spec.startswith(("[", "(")) else f"[{spec}]")
    except VersionRangeError:
        raise BadRequestError(f"Invalid version specification: {given}") from None
