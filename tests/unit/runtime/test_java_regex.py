"""Java regex translation, checked against java.util.regex results captured from the JVM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pyconnect.java_regex import JavaRegexError, compile_java_regex, java_matches, translate

GOLDEN = json.loads((Path(__file__).parents[2] / "golden" / "mirror_policy" / "vectors.json").read_text())

#: Valid Java patterns we refuse on purpose (no faithful Python equivalent).
UNSUPPORTED = {
    "\\p{IsLatin}+",
    "(?x) a b # comment",
    "(?U)\\w+",
    "\\G",
    "\\X",
    "\\p{InGreek}",
    "(?<=a+)b",
    "x{2}{3}",
}


@pytest.mark.parametrize("case", GOLDEN["regex"], ids=lambda c: repr(c["pattern"]))
def test_matrix_matches_java(case: dict[str, Any]) -> None:
    pattern = case["pattern"]
    if "error" in case or pattern in UNSUPPORTED:
        with pytest.raises(JavaRegexError):
            compile_java_regex(pattern)
        return
    compiled = compile_java_regex(pattern)
    got = {subject: compiled.fullmatch(subject) is not None for subject in case["matches"]}
    assert got == case["matches"]


def test_matrix_is_large() -> None:
    assert len(GOLDEN["regex"]) >= 100
    assert sum("error" in c for c in GOLDEN["regex"]) >= 10


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("a*+a", "aaa", False),
        ("(?>a|ab)c", "abc", False),
        ("[a-z&&[^aeiou]]+", "bcd", True),
        ("[a-z&&[^aeiou]]+", "bad", False),
        ("\\QA.B\\E", "AxB", False),
        ("\\QA.B\\E", "A.B", True),
        ("(?i)orders", "ORDERS", True),
        ("a(?i)b|c", "C", True),
        ("(a(?i)b)c", "aBC", False),
        ("(?i)k", "\u212a", False),
        ("(?iu)k", "\u212a", True),
        ("\\w+", "\u00e9t\u00e9", False),
        ("\\p{L}+", "\u00e9t\u00e9", True),
        ("\\p{Lower}+", "\u00e9", False),
        (".", "\u2028", False),
        ("(?s).", "\u2028", True),
        ("orders\\z", "orders", True),
        ("orders\\Z", "orders", True),
        ("[]a]", "]", True),
        ("(a)\\8", "a8", False),
    ],
)
def test_dialect_differences(pattern: str, text: str, expected: bool) -> None:
    assert java_matches(pattern, text) is expected


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("*", "Dangling meta character"),
        ("a{,2}", "Illegal repetition"),
        ("x{1", "Unclosed counted closure"),
        ("(", "Unclosed group"),
        ("[", "Unclosed character class"),
        ("\\y", "Illegal/unsupported escape"),
        ("(?x)a b", "flag 'x' is not supported"),
        ("\\p{IsLatin}", "not supported"),
        ("\\p{Foo}", "Unknown character property"),
        ("x{2}{3}", "Stacked quantifiers"),
    ],
)
def test_refusals_explain_themselves(pattern: str, message: str) -> None:
    with pytest.raises(JavaRegexError, match=message):
        compile_java_regex(pattern)


def test_variable_width_lookbehind_is_refused_at_compile() -> None:
    with pytest.raises(JavaRegexError, match="Cannot run"):
        compile_java_regex("(?<=a+)b")


def test_translation_is_plain_for_plain_patterns() -> None:
    assert translate("orders\\..*") == "orders\\.(?:[^\\n\\r\\u0085\\u2028\\u2029])*"
    assert translate("__consumer_offsets") == "__consumer_offsets"
