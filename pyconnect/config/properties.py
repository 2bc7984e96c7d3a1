"""Java ``.properties`` files, read and written with ``java.util.Properties`` semantics.

Reading (``Properties.load``):

* natural lines end at ``\\n``, ``\\r`` or ``\\r\\n``; a line ending in an odd number of backslashes
  continues on the next one, whose leading whitespace (space, tab, form feed) is dropped; a blank
  continuation line ends the logical line; a trailing backslash at end of input is dropped;
* blank lines and lines whose first non-whitespace character is ``#`` or ``!`` are comments (a
  comment never continues; a continued line that starts with ``#`` is data);
* the key ends at the first unescaped ``=``, ``:`` or whitespace; whitespace, then at most one ``=``
  or ``:``, then whitespace separate it from the value; the value keeps its trailing whitespace;
* escapes: ``\\t \\n \\r \\f \\uXXXX``; a backslash before any other character yields that character;
  a malformed ``\\uXXXX`` is an error;
* a repeated key: the last one wins.

Encoding: Connect reads worker and MirrorMaker property files with ``Utils.loadProps``, which calls
``Properties.load(InputStream)``; that decodes **ISO-8859-1**, so non-Latin-1 text must be written as
``\\uXXXX``. :func:`load` therefore defaults to ``iso-8859-1``. ``FileConfigProvider`` instead reads
through a UTF-8 ``Reader``; :mod:`pyconnect.config.providers` passes ``encoding="utf-8"``.

Writing (:func:`dumps`) follows ``Properties.store``: ``#`` comment lines, then ``key=value`` lines with
``\\``, ``=``, ``:``, ``#``, ``!``, tab/newline/CR/form-feed escaped, every space of a key and the leading
space of a value escaped, and (``ascii_only=True``, the ``OutputStream`` flavour) every character outside
``0x20..0x7E`` as ``\\uXXXX`` (UTF-16 code units, upper-case hex). The date comment Java adds is omitted.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from pyconnect.errors import ConfigError

_WHITESPACE = " \t\f"
_SEPARATORS = "=:"
_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_HEX = frozenset("0123456789abcdefABCDEF")


def load(path: str | os.PathLike[str], encoding: str = "iso-8859-1") -> dict[str, str]:
    """Parse the file at ``path``; errors are a one-line :class:`ConfigError` naming file and line."""
    try:
        with open(path, encoding=encoding, newline="") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Could not read properties from file {os.fspath(path)}: {exc}") from exc
    return loads(text, source=os.fspath(path))


def loads(text: str, source: str = "<string>") -> dict[str, str]:
    """Parse properties text; ``source`` names the origin in error messages."""
    result: dict[str, str] = {}
    for line_no, logical in _logical_lines(text):
        key, value = _split(logical, source, line_no)
        result[key] = value
    return result


def _natural_lines(text: str) -> list[str]:
    lines: list[str] = []
    start = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\n" or c == "\r":
            lines.append(text[start:i])
            if c == "\r" and i + 1 < n and text[i + 1] == "\n":
                i += 1
            start = i + 1
        i += 1
    if start < n:
        lines.append(text[start:])
    return lines


def _ends_with_odd_backslashes(line: str) -> bool:
    count = len(line) - len(line.rstrip("\\"))
    return count % 2 == 1


def _logical_lines(text: str) -> Iterable[tuple[int, str]]:
    lines = _natural_lines(text)
    i = 0
    while i < len(lines):
        first_no = i + 1
        line = lines[i].lstrip(_WHITESPACE)
        i += 1
        if not line or line[0] in "#!":
            continue
        parts = []
        while _ends_with_odd_backslashes(line):
            parts.append(line[:-1])
            if i >= len(lines):
                line = ""
                break
            line = lines[i].lstrip(_WHITESPACE)
            i += 1
        parts.append(line)
        yield first_no, "".join(parts)


def _split(line: str, source: str, line_no: int) -> tuple[str, str]:
    n = len(line)
    key_end = n
    value_start = n
    has_sep = False
    backslash = False
    i = 0
    while i < n:
        c = line[i]
        if (c in _SEPARATORS or c in _WHITESPACE) and not backslash:
            key_end = i
            value_start = i + 1
            has_sep = c in _SEPARATORS
            break
        backslash = (not backslash) if c == "\\" else False
        i += 1
    while value_start < n:
        c = line[value_start]
        if c in _WHITESPACE:
            value_start += 1
        elif not has_sep and c in _SEPARATORS:
            has_sep = True
            value_start += 1
        else:
            break
    return (
        _unescape(line[:key_end], source, line_no),
        _unescape(line[value_start:], source, line_no),
    )


def _unescape(text: str, source: str, line_no: int) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        i += 1
        if c != "\\" or i >= n:
            if c != "\\":
                out.append(c)
            continue
        c = text[i]
        i += 1
        if c == "u":
            digits = text[i : i + 4]
            if len(digits) < 4 or not set(digits) <= _HEX:
                raise ConfigError(f"{source}:{line_no}: Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_SIMPLE_ESCAPES.get(c, c))
    return "".join(_join_surrogates(out))


def _join_surrogates(chars: list[str]) -> list[str]:
    """``\\uD83D\\uDE00`` pairs decode to one code point, as a Java String would hold them."""
    joined: list[str] = []
    for ch in chars:
        if joined and 0xDC00 <= ord(ch) <= 0xDFFF and 0xD800 <= ord(joined[-1]) <= 0xDBFF:
            high = ord(joined.pop())
            joined.append(chr(0x10000 + ((high - 0xD800) << 10) + (ord(ch) - 0xDC00)))
        else:
            joined.append(ch)
    return joined


def _escape(text: str, is_key: bool, ascii_only: bool) -> str:
    out: list[str] = []
    for index, ch in enumerate(text):
        if ch == " ":
            out.append("\\ " if is_key or index == 0 else " ")
        elif ch in "\\=:#!":
            out.append("\\" + ch)
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\f":
            out.append("\\f")
        elif ascii_only and not (0x20 <= ord(ch) <= 0x7E):
            encoded = ch.encode("utf-16-be", "surrogatepass")
            for j in range(0, len(encoded), 2):
                out.append(f"\\u{int.from_bytes(encoded[j : j + 2], 'big'):04X}")
        else:
            out.append(ch)
    return "".join(out)


def dumps(props: Mapping[str, str], comments: str | None = None, ascii_only: bool = True) -> str:
    """Serialize ``props`` (in iteration order) so that :func:`loads` returns an equal mapping."""
    lines: list[str] = []
    if comments is not None:
        for comment in comments.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            lines.append("#" + (_escape(comment, False, True) if ascii_only else comment))
    for key, value in props.items():
        lines.append(_escape(key, True, ascii_only) + "=" + _escape(value, False, ascii_only))
    return "".join(line + "\n" for line in lines)


def dump(
    props: Mapping[str, str],
    path: str | os.PathLike[str],
    comments: str | None = None,
) -> None:
    """Write ``props`` to ``path`` as ISO-8859-1 with ``\\uXXXX`` escapes (``Properties.store(OutputStream)``)."""
    with open(path, "w", encoding="iso-8859-1", newline="\n") as handle:
        handle.write(dumps(props, comments, ascii_only=True))
