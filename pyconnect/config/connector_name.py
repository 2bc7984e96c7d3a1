"""Connector names as Kafka Connect 4.3.1 trims and validates them, and the names pyconnect cannot store.

Java, checked against the 4.3.1 jars (golden cases: ``tests/golden/connector_names/``):

* ``POST /connectors`` (``ConnectorsResource.createConnector``) takes the body's ``name``, ``""`` when
  it is missing or ``null``, and applies ``String.trim()``. ``PUT /connectors/{name}/config`` keeps the
  decoded path name as it is. Either way the name is then put into the config as ``name`` (a config
  that already has a different ``name`` is refused: ``Connector name configuration (X) doesn't match
  connector name in the URL (Y)``), and that config goes through ``ConfigDef.validate``.
* ``ConfigDef`` parses a STRING by trimming it again, then runs the ``name`` key's validator
  ``NonEmptyStringWithoutControlChars`` on the trimmed value. So PUT validates the trimmed name while
  the connector keeps the untrimmed one: on a live 4.3.1 worker ``PUT /connectors/%20sp%20/config``
  creates the connector ``" sp "``, and ``PUT /connectors/%20/config`` gets the empty-string error.
  (Jetty answers a bare 400 before Connect sees a path with an encoded C0 control or DEL, ``/``,
  ``%``, ``\\``, a ``.`` or ``..`` segment, or invalid UTF-8, so through PUT only spaces are trimmed
  that way.)
* ``String.trim()`` removes every char <= U+0020 at both ends (C0 controls including NUL, and the
  space), and nothing else. Python's ``str.strip()`` differs both ways: it keeps NUL, U+0001..U+0008,
  U+000E..U+001B, and removes U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F
  and U+3000, which Java keeps.
* The validator refuses ``""`` (``Invalid value  for configuration name: String may not be empty``,
  two spaces: the value is empty) and any ISO control char, U+0000..U+001F and U+007F..U+009F:
  ``Invalid value <name> for configuration name: String may not contain control sequences but had the
  following ASCII chars: <code points in decimal, in order, repeats included, ", "-separated>``.
  The value is rendered raw. Everything else passes: '/', '.', '..', '?', '#', '%', '%2F', U+00A0,
  U+2028, U+3000, U+FEFF, non-BMP chars, names of any length.
* Unpaired surrogates: Jackson accepts an escaped one (``"\\ud800"``) in a request body (it refuses
  the raw CESU-8 bytes ``ED A0 80``, which Python's ``json.loads(bytes)`` accepts), and the validator
  lets it through, as it does every surrogate. But Java writes the config-topic key with
  ``StringSerializer`` (``String.getBytes(UTF_8)``), which replaces each unpaired surrogate with
  ``'?'``. On a live 4.3.1 worker, ``POST`` of ``"x\\ud800"`` answers 201 with that name and
  ``Location: .../connectors/x%3F``; the config topic then holds key ``connector-x?`` whose value
  keeps ``"name": "x\\ud800"``, and the connector is listed and addressed as ``x?`` (so it would
  collide with a connector of that name). Python cannot encode such a name as UTF-8 at all, so
  pyconnect refuses it with a 400 whose message says why (:func:`unrepresentable_reason`); a Python
  string with a high and a low surrogate as two code points (never produced by ``json.loads``, which
  joins escaped pairs) is refused the same way.
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

from pyconnect.config.connector_keys import CONNECTOR_CONFIG_DEF
from pyconnect.config.types import java_trim, parse_type
from pyconnect.errors import ConfigError

__all__ = [
    "MAX_NAME_URL_BYTES",
    "address_problem",
    "create_request_name",
    "is_representable",
    "java_trim",
    "unrepresentable_reason",
    "validate_connector_name",
]

_NAME_KEY = CONNECTOR_CONFIG_DEF["name"]
_SURROGATE = re.compile("[\ud800-\udfff]")


def create_request_name(name: str | None) -> str:
    """The connector name ``POST /connectors`` works with: ``""`` for a missing/null name, else trimmed."""
    return "" if name is None else java_trim(name)


def validate_connector_name(name: str) -> str | None:
    """Java's error for a connector config whose ``name`` is ``name``, or None when Java accepts it.

    This is what ``ConfigDef.validate`` reports for the ``name`` key: the value trimmed as a STRING
    config is, then checked by ``NonEmptyStringWithoutControlChars`` (the message shows the trimmed
    value). Pass the name as the herder gets it: trimmed for ``POST /connectors``, the decoded path
    name for ``PUT /connectors/{name}/config`` (Java validates its trimmed form but keeps it as is).
    It does not check that the name can be encoded; see :func:`unrepresentable_reason`.
    """
    try:
        value = parse_type(_NAME_KEY.name, name, _NAME_KEY.type)
        if _NAME_KEY.validator is not None:
            _NAME_KEY.validator(_NAME_KEY.name, value)
    except ConfigError as exc:
        return str(exc)
    return None


def unrepresentable_reason(name: str) -> str | None:
    """Why ``name`` cannot be a pyconnect connector name (it has no UTF-8 encoding), or None if it can.

    The message is pure ASCII (the name is shown JSON-escaped), so it can be sent back as it is.
    """
    found = _SURROGATE.search(name)
    if found is None:
        return None
    return (
        f"Connector name {json.dumps(name)} is not valid Unicode text: it contains the surrogate "
        f"code point U+{ord(found.group()):04X} at index {found.start()}, which cannot be encoded as "
        "UTF-8 (a Java worker would store it as '?')"
    )


def is_representable(name: str) -> bool:
    """Whether ``name`` can be encoded as UTF-8, i.e. stored in the internal topics unchanged."""
    return unrepresentable_reason(name) is None


MAX_NAME_URL_BYTES = 6144
"""The longest name, percent-encoded as UTF-8, that pyconnect creates. Every URL naming a connector
(a forwarded write, a follower's task-config POST, ``Location``) must fit the 8 KiB that Jetty and
aiohttp allow for a request line or header; Java creates longer names and then answers 500 (its
forwarding client cannot read the leader's ``Location``) and never gets their task configs across."""


def address_problem(name: str) -> str | None:
    """Why pyconnect refuses to create a connector of this name although Java's validation passes it
    (a name that no URL could address), or None. ``/``: Jetty refuses ``%2F`` in paths, so Java creates
    a connector that nobody can read or delete; too long: see :data:`MAX_NAME_URL_BYTES`."""
    if "/" in name:
        return f"Connector name {name!r} contains characters that are not allowed ('/')"
    size = len(quote(name, safe="", errors="surrogatepass"))
    if size > MAX_NAME_URL_BYTES:
        return (
            f"Connector name is too long: {size} bytes once URL-encoded, more than the {MAX_NAME_URL_BYTES} "
            "that fit in a request URL"
        )
    return None
