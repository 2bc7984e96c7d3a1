"""Hostile and careless REST input, shared by the unit tests and the live comparison with Java.

- ``DANGEROUS_NAMES``: connector names from every class that has broken a Connect REST layer:
  encoded separators and dot segments, ``#``, ``?``, ``%``, sub-delimiters, control, non-BMP and
  non-ASCII characters, Java-trim edge cases, very long names. ``dangerous_names()`` is the
  Hypothesis strategy over the same classes.
- ``decoys(name)``: the names a request for ``name`` reaches when a URL is rebuilt from the decoded
  path (the bug this catalogue guards against), so a test can create them and check they survive.
- ``raw_http``: one request over a plain socket with the request line and headers exactly as given
  (clients normalise URLs and refuse bad methods; attackers do not).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from hypothesis import strategies as st

DANGEROUS_NAMES: tuple[str, ...] = (
    ".",
    "..",
    "...",
    "a/b",
    "a/../b",
    "../b",
    "victim/..",
    "a/./b",
    "x#y",
    "x?y",
    "x?forward=false",
    "x%2Fy",
    "100%",
    "%",
    "%zz",
    "a b",
    "a+b",
    "a;b",
    "a=b&c",
    "a:b@c",
    "(x)!*'$,",
    "~tilde",
    "caf\u00e9",
    "\u65e5\u672c",
    "emoji\U0001f600",
    "\u00a0nbsp\u00a0",
    "\u2028line",
    "x" * 300,
    "\u00e9" * 900,
)
"""Names a client can create (valid for Java once trimmed)."""

REFUSED_NAMES: tuple[str, ...] = ("", "   ", "x\u0000y", "x\u0007y", "a\u0085b", "line\nbreak", "tab\there")
"""Names Java refuses (empty, or with ISO control characters left after trimming)."""


def decoys(name: str) -> set[str]:
    """Connectors a decoded-path rebuild would hit instead of ``name`` (empty names dropped)."""
    out = {name.split("#", 1)[0], name.split("?", 1)[0], name.split("/", 1)[0]}
    parts: list[str] = []
    for piece in name.split("/"):
        if piece == "..":
            if parts:
                parts.pop()
        elif piece != ".":
            parts.append(piece)
    out.add("/".join(parts))
    out.update(name.split("/"))
    return {d for d in out if d and d not in (name, ".", "..")}


def path_of(name: str, *rest: str) -> str:
    """``/connectors/<name>/...`` with ``name`` as one encoded segment, as a careful client writes it."""
    segment = "%2E" * len(name) if name in (".", "..") else quote(name, safe="")
    return "/connectors/" + segment + "".join("/" + part for part in rest)


def dangerous_names() -> st.SearchStrategy[str]:
    """Names mixing path syntax, escapes and non-ASCII text, as an attacker would generate them."""
    pieces = st.sampled_from(["/", ".", "..", "#", "?", "%", "%2F", "%2E", "&", "=", ";", "+", " ", "a", "b"])
    text = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=4)
    return (
        st.lists(st.one_of(pieces, text), min_size=1, max_size=6)
        .map(lambda parts: "".join(parts).strip(" "))
        .filter(bool)
    )


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def request_bytes(
    port: int, method: str, target: str, body: bytes = b"", headers: Mapping[str, str | None] | None = None
) -> bytes:
    """Exactly this request line, these headers (None drops a default) and body."""
    chosen: dict[str, str | None] = {"Host": f"127.0.0.1:{port}", "Connection": "close"}
    if body or method in ("POST", "PUT", "PATCH"):
        chosen["Content-Length"] = str(len(body))
    chosen.update(headers or {})
    lines = [f"{method} {target} HTTP/1.1"] + [f"{k}: {v}" for k, v in chosen.items() if v is not None]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def parse_response(received: bytes) -> RawResponse:
    head, _, payload = received.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parsed = {}
    for line in header_lines:
        key, _, value = line.partition(":")
        parsed[key.strip().lower()] = value.strip()
    if parsed.get("transfer-encoding", "").lower() == "chunked":
        payload = _unchunk(payload)
    return RawResponse(int(status_line.split()[1]), parsed, payload)


def raw_http(
    port: int,
    method: str,
    target: str,
    body: bytes = b"",
    headers: Mapping[str, str | None] | None = None,
    *,
    timeout: float = 30.0,
) -> RawResponse:
    """One request over a blocking socket (for servers in other processes); reads to EOF."""
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request_bytes(port, method, target, body, headers))
        while chunk := sock.recv(65536):
            received += chunk
    return parse_response(received)


async def raw_http_async(
    port: int,
    method: str,
    target: str,
    body: bytes = b"",
    headers: Mapping[str, str | None] | None = None,
    *,
    timeout: float = 30.0,
) -> RawResponse:
    """``raw_http`` for a server on this event loop."""
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(request_bytes(port, method, target, body, headers))
            await writer.drain()
            received = await reader.read()
        finally:
            writer.close()
    return parse_response(received)


def _unchunk(payload: bytes) -> bytes:
    out = b""
    while payload:
        size_line, _, rest = payload.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out, payload = out + rest[:size], rest[size + 2 :]
    return out
