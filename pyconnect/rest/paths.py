"""Request paths as encoded segments: how a name from a URL is put back into a URL.

A connector name is untrusted input and arbitrary text: it may hold ``/``, ``?``, ``#``, ``%``, be
``.`` or ``..``, or carry characters that a URL must escape. Routes match a name as exactly one
*encoded* path segment (``%2F`` never splits a segment), and every URL this worker builds from a
name, for a forwarded request, the internal task-config POST or a ``Location`` header, encodes it
again with :func:`encode_segment`. No URL is ever built from a decoded path string.

- :func:`encode_segment`: one path segment that decodes back to exactly ``name``. Unreserved
  characters and the sub-delimiters a segment allows stay as they are, everything else is
  percent-encoded as UTF-8, and the dot segments ``.`` and ``..`` are encoded whole (``%2E``), so
  that no client, proxy or server normalises them away.
- :func:`canonical_path`: the path of a matched request rebuilt from its route and its parsed
  names, each re-encoded.
- URLs built here must be sent with ``yarl.URL(..., encoded=True)`` so they travel as written.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import quote

from aiohttp import web
from yarl import URL

SEGMENT_SAFE = "-._~!$&'()*+,;=:@"
"""RFC 3986 ``pchar`` minus percent-encoded octets: what a segment may hold unescaped."""


def encode_segment(name: str) -> str:
    """``name`` as one RFC 3986 path segment; ``UnicodeEncodeError`` for a lone surrogate."""
    if name in (".", ".."):
        return "%2E" * len(name)
    return quote(name, safe=SEGMENT_SAFE, encoding="utf-8", errors="strict")


def join_segments(*segments: str) -> str:
    """``/a/b/c`` from names, each encoded as one segment."""
    return "".join("/" + encode_segment(segment) for segment in segments)


def canonical_path(request: web.Request) -> str:
    """The request's path rebuilt from its route pattern and its parsed names, each re-encoded.

    A request that matched no route keeps its raw path (it is answered 404/405, never forwarded).
    """
    info = request.match_info
    resource = info.route.resource if info.http_exception is None else None
    pattern = resource.canonical if resource is not None else None
    if pattern is None:
        return request.raw_path.split("?", 1)[0]
    parts: list[str] = []
    for piece in pattern.split("/")[1:]:
        if piece.startswith("{") and piece.endswith("}"):
            parts.append(encode_segment(info[piece[1:-1].split(":", 1)[0]]))
        else:
            parts.append(piece)
    return "/" + "/".join(parts)


def url_at(base: str, path: str, query: Iterable[tuple[str, str]] = ()) -> URL:
    """``base`` (``scheme://host:port[/prefix]``) joined with an already encoded ``path``, as sent."""
    url = URL(base.rstrip("/") + path, encoded=True)
    items = list(query)
    return url.with_query(items) if items else url


def request_base(request: web.Request) -> str:
    """``scheme://host[:port]`` as the client addressed this worker (for absolute ``Location``s)."""
    return f"{request.scheme}://{request.host}"
