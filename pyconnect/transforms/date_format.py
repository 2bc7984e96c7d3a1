"""Java ``SimpleDateFormat`` patterns in UTC (what TimestampRouter and TimestampConverter use).

Supported letters: ``G y Y M L w W D d F E u a H k K h m s S z Z X`` and ``'quoted'`` text (``''`` is
a quote), with Java's count rules (``MMM`` short month name, ``MMMM`` full, ``yy`` two-digit year,
``S`` a plain zero-padded millisecond number). Formatting and parsing are always in UTC with the
English locale; an unknown letter raises :class:`ValueError` with Java's message
(``Illegal pattern character 'x'``).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

_LETTERS = set("GyYMLwWDdFEuaHkKhmsSzZX")
_MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


@dataclass(frozen=True, slots=True)
class _Field:
    letter: str
    count: int


def _tokens(pattern: str) -> list[_Field | str]:
    out: list[_Field | str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            end = i + 1
            text = []
            while end < len(pattern):
                if pattern[end] == "'":
                    if end + 1 < len(pattern) and pattern[end + 1] == "'":
                        text.append("'")
                        end += 2
                        continue
                    break
                text.append(pattern[end])
                end += 1
            else:
                raise ValueError("Unterminated quote")
            out.append("'" if end == i + 1 else "".join(text))
            i = end + 1
        elif c.isascii() and c.isalpha():
            if c not in _LETTERS:
                raise ValueError(f"Illegal pattern character '{c}'")
            j = i
            while j < len(pattern) and pattern[j] == c:
                j += 1
            out.append(_Field(c, j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return out


class JavaDateFormat:
    """One compiled pattern: :meth:`format` epoch millis, :meth:`parse` text back to epoch millis."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._tokens = _tokens(pattern)

    def format(self, millis: int) -> str:
        moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(milliseconds=millis)
        return "".join(t if isinstance(t, str) else _format_field(t, moment, millis) for t in self._tokens)

    def parse(self, text: str) -> int:
        """Epoch millis of ``text``; raises :class:`ValueError` (``Unparseable date: "..."``)."""
        regex = []
        fields: list[_Field] = []
        for token in self._tokens:
            if isinstance(token, str):
                regex.append(re.escape(token))
            else:
                regex.append(_parse_regex(token))
                fields.append(token)
        match = re.match("".join(regex), text)
        if match is None:
            raise ValueError(f'Unparseable date: "{text}"')
        parts: dict[str, int] = {"y": 1970, "M": 1, "d": 1, "H": 0, "m": 0, "s": 0, "S": 0, "offset": 0}
        for field, raw in zip(fields, match.groups(), strict=True):
            _parse_field(field, raw, parts)
        hour = parts["H"]
        if "h" in parts:
            hour = parts["h"] % 12 + (12 if parts.get("pm") else 0)
        try:
            moment = datetime.datetime(parts["y"], parts["M"], parts["d"], tzinfo=datetime.UTC)
        except ValueError as exc:
            raise ValueError(f'Unparseable date: "{text}"') from exc
        moment += datetime.timedelta(
            hours=hour, minutes=parts["m"], seconds=parts["s"], milliseconds=parts["S"]
        )
        delta = moment - datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000 - parts["offset"]


def _number(value: int, count: int) -> str:
    return str(value).zfill(count) if value >= 0 else "-" + str(-value).zfill(count)


def _format_field(field: _Field, moment: datetime.datetime, millis: int) -> str:
    letter, count = field.letter, field.count
    if letter in "yY":
        return _number(moment.year % 100, 2) if count == 2 else _number(moment.year, count)
    if letter in "ML":
        if count >= 4:
            return _MONTHS[moment.month - 1]
        if count == 3:
            return _MONTHS[moment.month - 1][:3]
        return _number(moment.month, count)
    if letter == "d":
        return _number(moment.day, count)
    if letter == "D":
        return _number(moment.timetuple().tm_yday, count)
    if letter == "E":
        name = _DAYS[moment.weekday()]
        return name if count >= 4 else name[:3]
    if letter == "u":
        return _number(moment.isoweekday(), count)
    if letter == "a":
        return "AM" if moment.hour < 12 else "PM"
    if letter == "H":
        return _number(moment.hour, count)
    if letter == "k":
        return _number(moment.hour or 24, count)
    if letter == "K":
        return _number(moment.hour % 12, count)
    if letter == "h":
        return _number(moment.hour % 12 or 12, count)
    if letter == "m":
        return _number(moment.minute, count)
    if letter == "s":
        return _number(moment.second, count)
    if letter == "S":
        return _number(moment.microsecond // 1000, count)
    if letter == "z":
        return "Coordinated Universal Time" if count >= 4 else "UTC"
    if letter == "Z":
        return "+0000"
    if letter == "X":
        return "Z"
    if letter == "G":
        return "AD"
    if letter == "w":
        return _number(_us_week_of_year(moment.date()), count)
    if letter == "W":
        first = moment.date().replace(day=1)
        return _number((moment.day - 1 + _sunday_based(first)) // 7 + 1, count)
    return _number((moment.day - 1) // 7 + 1, count)


def _sunday_based(day: datetime.date) -> int:
    return (day.weekday() + 1) % 7


def _us_week_of_year(day: datetime.date) -> int:
    """The English locale's week of year: weeks start on Sunday and week 1 holds January 1."""
    next_new_year = datetime.date(day.year + 1, 1, 1)
    if (next_new_year - day).days <= _sunday_based(next_new_year):
        return 1
    jan1 = datetime.date(day.year, 1, 1)
    return (day.timetuple().tm_yday - 1 + _sunday_based(jan1)) // 7 + 1


def _parse_regex(field: _Field) -> str:
    letter, count = field.letter, field.count
    if letter in "ML" and count >= 3:
        return "([A-Za-z]+)"
    if letter == "E":
        return "([A-Za-z]+)"
    if letter == "a":
        return "(AM|PM|am|pm)"
    if letter in "zZX":
        return "(Z|UTC|GMT|[+-]\\d{2}:?\\d{2})"
    if letter == "G":
        return "(AD|BC)"
    return f"([+-]?\\d{{{count},}})" if count > 1 else "([+-]?\\d+)"


def _parse_field(field: _Field, raw: str, parts: dict[str, int]) -> None:
    letter = field.letter
    if letter in "ML" and field.count >= 3:
        names = [m[:3].lower() for m in _MONTHS]
        parts["M"] = names.index(raw[:3].lower()) + 1
    elif letter == "a":
        parts["pm"] = int(raw.upper() == "PM")
    elif letter in "zZX":
        if raw not in ("Z", "UTC", "GMT"):
            sign = -1 if raw[0] == "-" else 1
            digits = raw[1:].replace(":", "")
            parts["offset"] = sign * (int(digits[:2]) * 60 + int(digits[2:])) * 60_000
    elif letter in "yY":
        value = int(raw)
        parts["y"] = value + 2000 if field.count <= 2 and len(raw) <= 2 else value
    elif letter in "ML":
        parts["M"] = int(raw)
    elif letter == "d":
        parts["d"] = int(raw)
    elif letter in "Hk":
        parts["H"] = int(raw) % 24
    elif letter in "hK":
        parts["h"] = int(raw)
    elif letter == "m":
        parts["m"] = int(raw)
    elif letter == "s":
        parts["s"] = int(raw)
    elif letter == "S":
        parts["S"] = int(raw)
