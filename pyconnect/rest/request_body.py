"""A request body as one JSON value, within limits, or a 400 that says what is wrong with it.

Java's Jackson answers most of these with 500; we answer 400, the client's error, with the same
limits Jackson enforces by default (``StreamReadConstraints``): nesting depth 1000 and numbers of at
most 1000 characters. Beyond those:

- the body must be UTF-8 (RFC 8259) and must not be empty;
- ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON and are refused, as Jackson does by default;
- a string or key holding an unpaired UTF-16 surrogate (``"\\ud800"``) is refused: it cannot be
  written to Kafka as UTF-8, and Java silently replaces it with ``?`` (a name that then differs
  between the REST answer and the config topic);
- a duplicate key keeps its last value, as Jackson does.

:func:`parse_json` is pure; the REST layer reads the (size-limited, decoded) bytes and calls it.
"""

from __future__ import annotations

import json
from typing import Any

from pyconnect.rest.errors import MalformedRequest

MAX_NESTING_DEPTH = 1000
MAX_NUMBER_LENGTH = 1000


class JsonInt(int):
    """An integer that remembers its text (Jackson binds a number to a String field as written)."""

    text: str


class JsonFloat(float):
    """A float that remembers its text (``1.50`` stays ``1.50``, ``1e400`` stays ``1e400``)."""

    text: str


def _check_length(text: str) -> None:
    if len(text) > MAX_NUMBER_LENGTH:
        raise MalformedRequest(
            f"Request body is not valid JSON: a number of {len(text)} characters exceeds the maximum "
            f"allowed ({MAX_NUMBER_LENGTH})"
        )


def _int(text: str) -> int:
    _check_length(text)
    value = JsonInt(text)
    value.text = text
    return value


def _float(text: str) -> float:
    _check_length(text)
    value = JsonFloat(text)
    value.text = text
    return value


def number_text(value: int | float) -> str:
    """A JSON number as the client wrote it (as Java binds it to a String)."""
    return getattr(value, "text", None) or str(value)


def _constant(text: str) -> Any:
    raise MalformedRequest(f"Request body is not valid JSON: non-standard token '{text}'")


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check_structure(value: Any) -> None:
    """Depth and surrogates, walked iteratively (no recursion on hostile input)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if depth > MAX_NESTING_DEPTH:
                raise MalformedRequest(_too_deep())
            for key, child in item.items():
                if _has_lone_surrogate(key):
                    raise MalformedRequest(_surrogate(key))
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            if depth > MAX_NESTING_DEPTH:
                raise MalformedRequest(_too_deep())
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, str) and _has_lone_surrogate(item):
            raise MalformedRequest(_surrogate(item))


def _too_deep() -> str:
    return f"Request body is not valid JSON: nesting depth exceeds the maximum allowed ({MAX_NESTING_DEPTH})"


def _surrogate(text: str) -> str:
    shown = text.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")[:80]
    return (
        f"Request body contains a string with an unpaired UTF-16 surrogate, which cannot be stored as "
        f"UTF-8: {shown!r}"
    )


def parse_json(raw: bytes) -> Any:
    """The JSON value of ``raw``; ``MalformedRequest`` (400) for anything else."""
    if not raw.strip():
        raise MalformedRequest("Request body is empty; a JSON document was expected")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedRequest(
            f"Request body is not valid JSON: it is not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None
    try:
        value = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise MalformedRequest(f"Request body is not valid JSON: {exc}") from None
    except RecursionError:
        raise MalformedRequest(_too_deep()) from None
    _check_structure(value)
    return value
