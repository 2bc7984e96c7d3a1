"""Java ``java.util.regex`` patterns run on Python's ``re`` (Python 3.11+).

Size: over 600 lines because it is one translator of Java's regex grammar (classes, quantifiers, flags,
quoting) to Python's.

Java regexes appear in MirrorMaker filter keys (``topics``, ``groups``, ``config.properties.exclude``, ...),
a sink connector's ``topics.regex`` and the ``RegexRouter``/``TopicNameMatches`` transformations. This
module translates one Java pattern into an equivalent Python pattern, or refuses it with
:class:`JavaRegexError` when no faithful translation exists. Matching is always whole-string
(``Pattern.matcher(s).matches()`` == ``re.fullmatch``).

Translated where the dialects differ:

* ``\\Q...\\E`` quoting (outside and inside classes); ``\\x{h..h}``, ``\\0ooo``, ``\\cX``, ``\\e``, ``\\N{name}``;
* ``\\d \\w \\s`` and POSIX ``\\p{Lower}`` etc. are ASCII-only in Java (Python's are Unicode); ``\\h \\H \\v \\V \\R``;
* ``.`` excludes every Java line terminator (``\\n \\r \\u0085 \\u2028 \\u2029``) unless ``(?s)``/``(?d)``;
* ``^``, ``$``, ``\\Z`` with Java's terminator set; ``\\z`` becomes Python's ``\\Z``;
* embedded flags ``(?imsdu-imsdu)`` anywhere (Java scopes them to the end of the enclosing group, and they
  cross ``|``); case-insensitivity is ASCII-only unless ``u`` is on, as in Java;
* character classes with nested unions ``[a-c[x-z]]``, intersections ``[a-z&&[^aeiou]]`` and whole-class
  negation, a leading literal ``]``;
* ``\\p{..}``/``\\P{..}``: POSIX classes, ``java*`` classes (``javaLowerCase`` ...), general categories
  (``L``, ``Lu``, ``IsL``, ``gc=Lu`` ...) and ``IsLetter``/``IsDigit``/``IsLowercase``/``IsUppercase``/
  ``IsWhite_Space``/... computed from :mod:`unicodedata` (Python's Unicode version, not the JVM's);
* named groups ``(?<n>..)``/``\\k<n>``; a back reference to a group that does not exist never matches.

Possessive quantifiers and atomic groups ``(?>..)`` are native in Python 3.11. Refused (``JavaRegexError``):
comments mode ``(?x)``, ``(?U)``, ``\\G``, ``\\X``, ``\\b{g}``, Unicode scripts/blocks and other properties,
stacked quantifiers, and anything Java itself rejects (dangling ``*``, ``{,n}``, unclosed groups/classes...).
Lookbehind that Python cannot do (variable width) is refused when compiling.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from dataclasses import dataclass, field

from pyconnect.errors import ConfigError

LINE_TERMINATORS = "\n\r\u0085\u2028\u2029"


class JavaRegexError(ConfigError, ValueError):
    """The pattern is invalid in Java or has no faithful Python translation."""


# ---------------------------------------------------------------- character sets


def _esc_cp(cp: int) -> str:
    ch = chr(cp)
    if ch.isascii() and ch.isalnum():
        return ch
    return f"\\U{cp:08x}" if cp > 0xFFFF else f"\\u{cp:04x}"


def _ranges_body(ranges: list[tuple[int, int]]) -> str:
    parts = []
    for lo, hi in ranges:
        if lo == hi:
            parts.append(_esc_cp(lo))
        elif hi == lo + 1:
            parts.append(_esc_cp(lo) + _esc_cp(hi))
        else:
            parts.append(f"{_esc_cp(lo)}-{_esc_cp(hi)}")
    return "".join(parts)


@dataclass
class _Set:
    """A set of code points: ``body`` (Python class body) possibly negated, or a compound regex atom."""

    body: str = ""
    negated: bool = False
    compound: str | None = None

    def atom(self) -> str:
        if self.compound is not None:
            return self.compound
        if not self.body:
            return "(?s:.)" if self.negated else "(?!)"
        return f"[{'^' if self.negated else ''}{self.body}]"


def _union(sets: list[_Set]) -> _Set:
    if len(sets) == 1:
        return sets[0]
    if all(s.compound is None and not s.negated for s in sets):
        return _Set("".join(s.body for s in sets))
    return _Set(compound="(?:" + "|".join(s.atom() for s in sets) + ")")


def _intersect(sets: list[_Set]) -> _Set:
    if len(sets) == 1:
        return sets[0]
    return _Set(compound="(?:" + "".join(f"(?={s.atom()})" for s in sets[:-1]) + sets[-1].atom() + ")")


def _negate(s: _Set) -> _Set:
    if s.compound is None:
        return _Set(s.body, not s.negated)
    return _Set(compound=f"(?:(?!{s.compound})(?s:.))")


def _chars(text: str) -> _Set:
    return _Set("".join(_esc_cp(ord(c)) for c in text))


_ASCII_DIGIT = _Set("0-9")
_ASCII_WORD = _Set("a-zA-Z_0-9")
_ASCII_SPACE = _Set(" \\t\\n\\x0b\\f\\r")
_HSPACE = _Set(" \\t\\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000")
_VSPACE = _Set("\\n\\x0b\\f\\r\\x85\\u2028\\u2029")
_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

_POSIX: dict[str, _Set] = {
    "Lower": _Set("a-z"),
    "Upper": _Set("A-Z"),
    "ASCII": _Set("\\x00-\\x7f"),
    "Alpha": _Set("a-zA-Z"),
    "Digit": _Set("0-9"),
    "Alnum": _Set("a-zA-Z0-9"),
    "Punct": _chars(_PUNCT),
    "Graph": _Set("a-zA-Z0-9" + _chars(_PUNCT).body),
    "Print": _Set("a-zA-Z0-9 " + _chars(_PUNCT).body),
    "Blank": _Set(" \\t"),
    "Cntrl": _Set("\\x00-\\x1f\\x7f"),
    "XDigit": _Set("0-9a-fA-F"),
    "Space": _ASCII_SPACE,
}


@functools.lru_cache(maxsize=1)
def _category_ranges() -> dict[str, list[tuple[int, int]]]:
    ranges: dict[str, list[tuple[int, int]]] = {}
    start = 0
    current = unicodedata.category(chr(0))
    for cp in range(1, sys.maxunicode + 2):
        cat = unicodedata.category(chr(cp)) if cp <= sys.maxunicode else ""
        if cat != current:
            ranges.setdefault(current, []).append((start, cp - 1))
            start, current = cp, cat
    return ranges


def _categories(*cats: str) -> _Set:
    table = _category_ranges()
    merged: list[tuple[int, int]] = []
    for cat in cats:
        merged.extend(table.get(cat, []))
    merged.sort()
    return _Set(_ranges_body(merged))


@functools.cache
def _predicate_set(name: str) -> _Set:
    tests = {
        "lower": str.islower,
        "upper": str.isupper,
        "java_ws": lambda c: (
            (unicodedata.category(c) in ("Zs", "Zl", "Zp") and c not in "\u00a0\u2007\u202f")
            or c in "\t\n\u000b\f\r\u001c\u001d\u001e\u001f"
        ),
        "white_space": lambda c: (
            c in "\t\n\u000b\f\r \u0085\u00a0\u1680\u2028\u2029\u202f\u205f\u3000"
            or "\u2000" <= c <= "\u200a"
        ),
    }
    test = tests[name]
    ranges: list[tuple[int, int]] = []
    for cp in range(sys.maxunicode + 1):
        if test(chr(cp)):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    return _Set(_ranges_body(ranges))


_GENERAL_CATEGORIES = {
    "L": ("Lu", "Ll", "Lt", "Lm", "Lo"),
    "LC": ("Lu", "Ll", "Lt"),
    "L&": ("Lu", "Ll", "Lt"),
    "M": ("Mn", "Mc", "Me"),
    "N": ("Nd", "Nl", "No"),
    "P": ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"),
    "S": ("Sm", "Sc", "Sk", "So"),
    "Z": ("Zs", "Zl", "Zp"),
    "C": ("Cc", "Cf", "Co", "Cs", "Cn"),
}
_SINGLE_CATEGORIES = {c for group in _GENERAL_CATEGORIES.values() for c in group}

_BINARY = {
    "letter": lambda: _categories(*_GENERAL_CATEGORIES["L"]),
    "digit": lambda: _categories("Nd"),
    "lowercase": lambda: _predicate_set("lower"),
    "uppercase": lambda: _predicate_set("upper"),
    "whitespace": lambda: _predicate_set("white_space"),
    "white_space": lambda: _predicate_set("white_space"),
    "titlecase": lambda: _categories("Lt"),
    "control": lambda: _categories("Cc"),
    "punctuation": lambda: _categories(*_GENERAL_CATEGORIES["P"]),
    "hex_digit": lambda: _Set("0-9a-fA-F\\uff10-\\uff19\\uff21-\\uff26\\uff41-\\uff46"),
    "hexdigit": lambda: _Set("0-9a-fA-F\\uff10-\\uff19\\uff21-\\uff26\\uff41-\\uff46"),
}

_JAVA_CLASSES = {
    "javaLowerCase": lambda: _predicate_set("lower"),
    "javaUpperCase": lambda: _predicate_set("upper"),
    "javaWhitespace": lambda: _predicate_set("java_ws"),
    "javaSpaceChar": lambda: _categories("Zs", "Zl", "Zp"),
    "javaDigit": lambda: _categories("Nd"),
    "javaLetter": lambda: _categories(*_GENERAL_CATEGORIES["L"]),
    "javaLetterOrDigit": lambda: _categories(*_GENERAL_CATEGORIES["L"], "Nd"),
    "javaTitleCase": lambda: _categories("Lt"),
    "javaISOControl": lambda: _Set("\\x00-\\x1f\\x7f-\\x9f"),
}


def _general_category(name: str) -> _Set | None:
    if name in _GENERAL_CATEGORIES:
        return _categories(*_GENERAL_CATEGORIES[name])
    if name in _SINGLE_CATEGORIES:
        return _categories(name)
    return None


def _property(name: str) -> _Set:
    """The set of ``\\p{name}``; raises :class:`JavaRegexError` for unsupported or unknown names."""
    if name in _POSIX:
        return _POSIX[name]
    if name in _JAVA_CLASSES:
        return _JAVA_CLASSES[name]()
    for prefix in ("gc=", "general_category=", "Is"):
        if name.startswith(prefix) and _general_category(name[len(prefix) :]) is not None:
            found = _general_category(name[len(prefix) :])
            assert found is not None
            return found
    found = _general_category(name)
    if found is not None:
        return found
    if name.startswith("Is") and name[2:].lower() in _BINARY:
        return _BINARY[name[2:].lower()]()
    if name.startswith(("In", "Is", "sc=", "script=", "blk=", "block=")):
        raise JavaRegexError(f"Unicode script/block/property \\p{{{name}}} is not supported")
    raise JavaRegexError(f"Unknown character property name {{{name}}}")


# ---------------------------------------------------------------- parser


@dataclass
class _Flags:
    i: bool = False
    m: bool = False
    s: bool = False
    d: bool = False
    u: bool = False

    def copy(self) -> _Flags:
        return _Flags(self.i, self.m, self.s, self.d, self.u)


@dataclass
class _Translator:
    src: str
    pos: int = 0
    groups: int = 0
    names: set[str] = field(default_factory=set)
    flags: _Flags = field(default_factory=_Flags)

    def error(self, message: str) -> JavaRegexError:
        return JavaRegexError(f"{message} near index {self.pos}")

    def peek(self, offset: int = 0) -> str:
        i = self.pos + offset
        return self.src[i] if i < len(self.src) else ""

    def take(self) -> str:
        ch = self.peek()
        if not ch:
            raise self.error("Unexpected end of pattern")
        self.pos += 1
        return ch

    def at_end(self) -> bool:
        return self.pos >= len(self.src)

    # -- emission helpers

    def case(self, atom: str, foldable: bool = True) -> str:
        if not self.flags.i or not foldable:
            return atom
        return f"(?i:{atom})" if self.flags.u else f"(?ai:{atom})"

    def literal(self, cp: int) -> str:
        ch = chr(cp)
        atom = re.escape(ch) if cp < 0x80 else _esc_cp(cp)
        return self.case(atom, ch.lower() != ch.upper())

    # -- grammar

    def translate(self) -> str:
        out = self.alternation()
        if not self.at_end():
            if self.peek() == ")":
                raise self.error("Unmatched closing ')'")
            raise self.error("Unexpected character")
        return out

    def alternation(self) -> str:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence())
        return "|".join(branches)

    def sequence(self) -> str:
        parts: list[str] = []
        while not self.at_end() and self.peek() not in "|)":
            atoms = self.atom()
            if atoms is None:
                continue
            if self.peek() in ("*", "+", "?", "{") and atoms:
                quant = self.quantifier()
                if quant:
                    last = atoms[-1]
                    atoms[-1] = f"(?:{last}){quant}"
                    if self.peek() in ("*", "+", "?") or (self.peek() == "{" and self._is_counted()):
                        raise self.error("Stacked quantifiers are not supported")
            parts.extend(atoms)
        return "".join(parts)

    def _is_counted(self) -> bool:
        return bool(re.match(r"\{\d", self.src[self.pos :]))

    def quantifier(self) -> str:
        ch = self.peek()
        if ch == "{":
            m = re.match(r"\{(\d+)(,(\d*))?\}", self.src[self.pos :])
            if not m:
                if re.match(r"\{\d", self.src[self.pos :]):
                    raise self.error("Unclosed counted closure")
                raise self.error("Illegal repetition")
            lo = int(m.group(1))
            hi = m.group(3)
            if hi and int(hi) < lo:
                raise self.error("Illegal repetition range")
            self.pos += m.end()
            base = f"{{{lo}}}" if m.group(2) is None else f"{{{lo},{hi or ''}}}"
        else:
            self.pos += 1
            base = ch
        if self.peek() in ("?", "+"):
            base += self.take()
        return base

    def atom(self) -> list[str] | None:
        """Zero or more atoms (``\\Q..\\E`` yields one per character); ``None`` for a pure flag group."""
        ch = self.take()
        if ch in "*+?":
            raise JavaRegexError(f"Dangling meta character '{ch}' near index {self.pos - 1}")
        if ch == "{":
            self.pos -= 1
            raise self.error("Illegal repetition")
        if ch == "(":
            return self.group()
        if ch == "[":
            return [self.case(self.char_class().atom())]
        if ch == ".":
            if self.flags.s:
                return ["(?s:.)"]
            return ["[^\\n]" if self.flags.d else "[^\\n\\r\\u0085\\u2028\\u2029]"]
        if ch == "^":
            return [self.caret()]
        if ch == "$":
            return [self.dollar()]
        if ch == "\\":
            return self.escape()
        return [self.literal(ord(ch))]

    def terminators(self) -> str:
        return "\\n" if self.flags.d else "\\n\\r\\u0085\\u2028\\u2029"

    def caret(self) -> str:
        if not self.flags.m:
            return "\\A"
        if self.flags.d:
            return "(?:\\A|(?<=\\n)(?!\\Z))"
        return "(?:\\A|(?<=[\\n\\u0085\\u2028\\u2029])(?!\\Z)|(?<=\\r)(?![\\n]|\\Z))"

    def dollar(self) -> str:
        if self.flags.d:
            return "(?=\\n)" if self.flags.m else "(?=\\n?\\Z)"
        if self.flags.m:
            return "(?:(?=[\\r\\u0085\\u2028\\u2029])|(?<!\\r)(?=\\n)|\\Z)"
        return "(?=(?:\\r\\n|[\\n\\r\\u0085\\u2028\\u2029])?\\Z)"

    def group(self) -> list[str] | None:
        saved = self.flags.copy()
        if self.peek() != "?":
            self.groups += 1
            prefix = "("
        else:
            self.pos += 1
            kind = self.peek()
            if kind == ":":
                self.pos += 1
                prefix = "(?:"
            elif kind in ("=", "!", ">"):
                self.pos += 1
                prefix = "(?" + kind
            elif kind == "<" and self.peek(1) in ("=", "!"):
                self.pos += 2
                prefix = "(?<" + self.src[self.pos - 1]
            elif kind == "<":
                self.pos += 1
                m = re.match(r"([a-zA-Z][a-zA-Z0-9]*)>", self.src[self.pos :])
                if not m:
                    raise self.error("named capturing group is missing trailing '>'")
                name = m.group(1)
                if name in self.names:
                    raise self.error(f"Named capturing group <{name}> is already defined")
                self.names.add(name)
                self.groups += 1
                self.pos += m.end()
                prefix = f"(?P<{name}>"
            else:
                return self.flag_group(saved)
        inner = self.alternation()
        if self.peek() != ")":
            raise self.error("Unclosed group")
        self.pos += 1
        self.flags = saved
        return [prefix + inner + ")"]

    def flag_group(self, saved: _Flags) -> list[str] | None:
        on = True
        while True:
            ch = self.take()
            if ch == "-":
                on = False
            elif ch in "imsdu":
                setattr(self.flags, ch, on)
            elif ch in "xUc":
                raise self.error(f"Embedded flag '{ch}' is not supported")
            elif ch == ")":
                return None
            elif ch == ":":
                inner = self.alternation()
                if self.peek() != ")":
                    raise self.error("Unclosed group")
                self.pos += 1
                self.flags = saved
                return ["(?:" + inner + ")"]
            else:
                raise self.error("Unknown inline modifier")

    # -- escapes

    def escape(self) -> list[str]:
        ch = self.take()
        if ch == "Q":
            end = self.src.find("\\E", self.pos)
            text = self.src[self.pos :] if end < 0 else self.src[self.pos : end]
            self.pos = len(self.src) if end < 0 else end + 2
            return [self.literal(ord(c)) for c in text]
        simple = {
            "A": "\\A",
            "z": "\\Z",
            "Z": "(?=(?:\\r\\n|[\\n\\r\\u0085\\u2028\\u2029])?\\Z)",
            "b": "\\b",
            "B": "\\B",
            "R": "(?>\\r\\n|[\\n\\x0b\\f\\r\\x85\\u2028\\u2029])",
        }
        if ch in ("b", "B") and self.peek() == "{":
            raise self.error("\\b{...} boundaries are not supported")
        if ch in simple:
            return [simple[ch]]
        if ch in ("G", "X"):
            raise self.error(f"\\{ch} is not supported")
        if ch == "k":
            m = re.match(r"<([a-zA-Z][a-zA-Z0-9]*)>", self.src[self.pos :])
            if not m:
                raise self.error("\\k is not followed by '<' for named capturing group")
            if m.group(1) not in self.names:
                raise self.error(f"named capturing group <{m.group(1)}> does not exist")
            self.pos += m.end()
            return [self.case(f"(?P={m.group(1)})")]
        if ch.isdigit() and ch != "0":
            number = int(ch)
            while self.peek().isdigit() and number * 10 + int(self.peek()) <= self.groups:
                number = number * 10 + int(self.take())
            if number > self.groups:
                return ["(?!)"]
            return [self.case(f"(?:\\{number})")]
        found = self.class_escape(ch)
        if isinstance(found, _Set):
            return [self.case(found.atom())]
        return [self.literal(found)]

    def class_escape(self, ch: str) -> _Set | int:
        """A ``\\``-escape valid inside and outside classes: a set, or one code point."""
        sets = {
            "d": _ASCII_DIGIT,
            "w": _ASCII_WORD,
            "s": _ASCII_SPACE,
            "h": _HSPACE,
            "v": _VSPACE,
        }
        if ch in sets:
            return sets[ch]
        if ch.lower() in sets and ch.isupper():
            return _negate(sets[ch.lower()])
        if ch in ("p", "P"):
            if self.peek() == "{":
                end = self.src.find("}", self.pos)
                if end < 0:
                    raise self.error("Unclosed character family")
                name = self.src[self.pos + 1 : end]
                self.pos = end + 1
            else:
                name = self.take()
            found = _property(name)
            return _negate(found) if ch == "P" else found
        codes = {"t": 0x09, "n": 0x0A, "r": 0x0D, "f": 0x0C, "a": 0x07, "e": 0x1B}
        if ch in codes:
            return codes[ch]
        if ch == "0":
            m = re.match(r"[0-3][0-7]{2}|[0-7]{1,2}", self.src[self.pos :])
            if not m:
                raise self.error("Illegal octal escape sequence")
            self.pos += m.end()
            return int(m.group(0), 8)
        if ch == "x":
            m = re.match(r"\{([0-9a-fA-F]+)\}|([0-9a-fA-F]{2})", self.src[self.pos :])
            if not m:
                raise self.error("Illegal hexadecimal escape sequence")
            self.pos += m.end()
            cp = int(m.group(1) or m.group(2), 16)
            if cp > sys.maxunicode:
                raise self.error("Hexadecimal codepoint is too big")
            return cp
        if ch == "u":
            m = re.match(r"[0-9a-fA-F]{4}", self.src[self.pos :])
            if not m:
                raise self.error("Illegal Unicode escape sequence")
            self.pos += 4
            cp = int(m.group(0), 16)
            low = re.match(r"\\u(d[c-f][0-9a-f]{2})", self.src[self.pos :], re.IGNORECASE)
            if 0xD800 <= cp <= 0xDBFF and low:
                self.pos += 6
                cp = 0x10000 + ((cp - 0xD800) << 10) + (int(low.group(1), 16) - 0xDC00)
            return cp
        if ch == "c":
            return ord(self.take()) ^ 64
        if ch == "N":
            m = re.match(r"\{([^}]*)\}", self.src[self.pos :])
            if not m:
                raise self.error("Illegal character name escape sequence")
            self.pos += m.end()
            try:
                return ord(unicodedata.lookup(m.group(1)))
            except KeyError:
                raise self.error(f"Unknown character name [{m.group(1)}]") from None
        if ch.isalnum():
            raise self.error("Illegal/unsupported escape sequence")
        return ord(ch)

    # -- classes

    def char_class(self) -> _Set:
        """After ``[``: parse up to the matching ``]``. Negation applies to the whole class (JDK 9+)."""
        negated = False
        if self.peek() == "^":
            self.pos += 1
            negated = True
        operands: list[list[_Set]] = [[]]
        first = True
        while True:
            if self.at_end():
                raise self.error("Unclosed character class")
            ch = self.take()
            if ch == "]" and not first:
                break
            first = False
            if ch == "[":
                operands[-1].append(self.char_class())
                continue
            if ch == "&" and self.peek() == "&":
                self.pos += 1
                operands.append([])
                continue
            if ch == "\\" and self.peek() == "Q":
                self.pos += 1
                end = self.src.find("\\E", self.pos)
                text = self.src[self.pos :] if end < 0 else self.src[self.pos : end]
                self.pos = len(self.src) if end < 0 else end + 2
                if text:
                    operands[-1].append(_chars(text))
                continue
            start: _Set | int = self.class_escape(self.take()) if ch == "\\" else ord(ch)
            if isinstance(start, _Set):
                operands[-1].append(start)
                continue
            if self.peek() == "-" and self.peek(1) not in ("]", "[", ""):
                self.pos += 1
                nxt = self.take()
                end_cp = self.class_escape(self.take()) if nxt == "\\" else ord(nxt)
                if isinstance(end_cp, _Set):
                    raise self.error("Illegal character range")
                if end_cp < start:
                    raise self.error("Illegal character range")
                operands[-1].append(_Set(_ranges_body([(start, end_cp)])))
                continue
            operands[-1].append(_Set(_esc_cp(start)))
        unions = [_union(items) for items in operands if items]
        if not unions:
            raise self.error("Empty character class")
        result = _intersect(unions)
        return _negate(result) if negated else result


@functools.lru_cache(maxsize=512)
def translate(pattern: str) -> str:
    """The Python pattern equivalent to Java ``pattern`` (use with :func:`re.fullmatch` for ``matches()``)."""
    return _Translator(pattern).translate()


@functools.lru_cache(maxsize=512)
def compile_java_regex(pattern: str) -> re.Pattern[str]:
    """Translate and compile; both Java-invalid and untranslatable patterns raise :class:`JavaRegexError`."""
    translated = translate(pattern)
    try:
        return re.compile(translated)
    except re.error as exc:
        raise JavaRegexError(f"Cannot run this Java regex on Python's re: {exc}") from exc


def java_matches(pattern: str, text: str) -> bool:
    """``Pattern.compile(pattern).matcher(text).matches()``."""
    return compile_java_regex(pattern).fullmatch(text) is not None
