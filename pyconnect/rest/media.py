"""Which request Content-Types a resource accepts: Java's ``@Consumes(application/json)``, as Jersey
applies it (checked against a live Java 4.3.1 worker).

The public Connect resources (``/connectors...``, ``/connector-plugins...``, ``/admin/loggers...``)
consume JSON on every method, reads included; ``/``, ``/health``, ``/openapi.json`` and the internal
fence endpoint (empty body, authenticated by its signature) accept anything. One deliberate
difference: Java's internal task-config POST accepts any Content-Type, and it is unsigned unless the
group runs ``sessioned``; ours consumes JSON like the public resources, so a web page cannot write
task configs with a ``text/plain`` POST (Java's and our senders always send ``application/json``).
For a resource that consumes JSON:

- a ``Content-Type`` whose media type is compatible with ``application/json`` (``application/json``,
  ``application/*``, ``*/json``, ``*/*``; case and parameters ignored) is accepted;
- any other media type answers 415 ``HTTP 415 Unsupported Media Type``; a header that is no media
  type at all (``json``, ``;``, a list) answers 400;
- no ``Content-Type`` is accepted, unless the resource reads a JSON body and the request carries one:
  then 415 (Jersey reads such a body as ``application/octet-stream``).

This is what refuses the "simple" cross-site requests a web page can send without a CORS preflight
(``text/plain``, ``application/x-www-form-urlencoded``, ``multipart/form-data``): they can no longer
create, change or delete anything.

Handlers declare themselves with :func:`reads_json_body` or :func:`any_content`; the check itself,
:func:`content_type_error`, is a pure function.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., object])

READS_JSON_BODY = "_pyconnect_reads_json_body"
ANY_CONTENT = "_pyconnect_any_content"

UNSUPPORTED = "HTTP 415 Unsupported Media Type"
MALFORMED = "HTTP 400 Bad Request: malformed Content-Type header"


def reads_json_body(handler: F) -> F:
    """Marks a handler whose request carries a JSON entity."""
    setattr(handler, READS_JSON_BODY, True)
    return handler


def any_content(handler: F) -> F:
    """Marks a handler that does not consume JSON (accepts any Content-Type)."""
    setattr(handler, ANY_CONTENT, True)
    return handler


_TOKEN = r"[!#$%&'*+.^_`|~0-9a-z-]+"
_MEDIA_TYPE = re.compile(rf"({_TOKEN})/({_TOKEN})")


def media_type(header: str) -> tuple[str, str] | None:
    """``(type, subtype)`` lower-cased from a Content-Type value; None if it is no media type."""
    match = _MEDIA_TYPE.fullmatch(header.split(";", 1)[0].strip().lower())
    return (match.group(1), match.group(2)) if match else None


def content_type_error(
    header: str | None, *, has_body: bool, consumes_json: bool, reads_body: bool
) -> tuple[int, str] | None:
    """``(status, message)`` to refuse the request with, or None to serve it."""
    if not consumes_json:
        return None
    if header is None:
        return (415, UNSUPPORTED) if reads_body and has_body else None
    parsed = media_type(header)
    if parsed is None:
        return 400, MALFORMED
    kind, subtype = parsed
    if kind in ("application", "*") and subtype in ("json", "*"):
        return None
    return 415, UNSUPPORTED


def handler_policy(handler: object) -> tuple[bool, bool]:
    """``(consumes_json, reads_body)`` declared by a route handler (undeclared: consumes, no body)."""
    return not getattr(handler, ANY_CONTENT, False), bool(getattr(handler, READS_JSON_BODY, False))
