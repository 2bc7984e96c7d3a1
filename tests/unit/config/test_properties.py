"""java.util.Properties semantics of pyconnect.config.properties.

Expected values were produced by ``Properties.load``/``Properties.store`` on JDK 17.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyconnect.config import properties
from pyconnect.errors import ConfigError

JAVA_LOAD_CASES = [
    ("a=1\nb : 2\nc 3\nd\te\n", {"a": "1", "b": "2", "c": "3", "d": "e"}),
    ("  key   =   value  \n", {"key": "value  "}),
    ("k=\nk2\nk3 =\n", {"k": "", "k2": "", "k3": ""}),
    ("a==b\nc=:d\ne :=f\ng  h  i\n", {"a": "=b", "c": ":d", "e": "=f", "g": "h  i"}),
    ("# c\n! c\n  # indented\na=1 # not comment\n", {"a": "1 # not comment"}),
    ("a=one \\\n    two\\\n\tthree\n", {"a": "one twothree"}),
    ("a=x\\\\\nb=y\n", {"a": "x\\", "b": "y"}),
    ("# comment \\\na=1\n", {"a": "1"}),
    ("a=1\\\n# not comment\n", {"a": "1# not comment"}),
    ("a=1\\\n\nb=2\n", {"a": "1", "b": "2"}),
    ("a=1\\\n   \nb=2\n", {"a": "1", "b": "2"}),
    ("a=1\\", {"a": "1"}),
    ("a=1\\\n", {"a": "1"}),
    ("a=1\r\nb=2\rc=3\n", {"a": "1", "b": "2", "c": "3"}),
    ("a=1\\\r\n  2\r\n", {"a": "12"}),
    ("a=\\t\\n\\r\\f\\u0041\\z\\\\\\=\\:\\ \\#\n", {"a": "\t\n\r\fAz\\=: #"}),
    ("my\\ key=v\nk\\=x=y\nk\\:z:w\n", {"my key": "v", "k=x": "y", "k:z": "w"}),
    ("a=1\na=2\n", {"a": "2"}),
    ("a=1   \n", {"a": "1   "}),
    ("   \n\t\n", {}),
    ("\fa=1\n", {"a": "1"}),
    ("ke\\\n  y=v\n", {"key": "v"}),
    ("key\\\n  =v\n", {"key": "v"}),
    ("a\\\\:b\n", {"a\\": "b"}),
    ("a=b\\\\\\\nc\n", {"a": "b\\c"}),
    ("a=\\u00E9\\u00e9\n", {"a": "éé"}),
    ("a=1\\\n\\\n  2\n", {"a": "12"}),
    ("a=1\\\n   # c\n", {"a": "1# c"}),
    ("\\#notcomment=1\n\\!x=2\n", {"#notcomment": "1", "!x": "2"}),
    ("", {}),
    ("=v\n", {"": "v"}),
    ("a=\\uD83D\\uDE00\n", {"a": "\U0001f600"}),
]


@pytest.mark.parametrize(("text", "expected"), JAVA_LOAD_CASES)
def test_loads_matches_java(text: str, expected: dict[str, str]) -> None:
    assert properties.loads(text) == expected


@pytest.mark.parametrize("text", ["a=\\u12\n", "x=1\na=\\u12G4\n"])
def test_malformed_unicode_escape_is_one_line_error_with_file_and_line(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        properties.loads(text, source="worker.properties")
    message = str(info.value)
    assert "\n" not in message
    line = text.count("\n")
    assert message == f"worker.properties:{line}: Malformed \\uxxxx encoding."


def test_error_names_the_first_line_of_a_continued_entry(tmp_path) -> None:
    path = tmp_path / "w.properties"
    path.write_text("a=1\nb=x\\\n  \\u00ZZ\n")
    with pytest.raises(ConfigError, match=r"w\.properties:2: Malformed"):
        properties.load(path)


def test_load_reads_iso_8859_1_like_utils_load_props(tmp_path) -> None:
    path = tmp_path / "w.properties"
    path.write_bytes("a=café\n".encode())
    assert properties.load(path) == {"a": "cafÃ©"}
    assert properties.load(path, encoding="utf-8") == {"a": "café"}
    path.write_bytes(b"a=caf\xe9\nb=\\u20ac\n")
    assert properties.load(path) == {"a": "café", "b": "€"}


def test_load_missing_file_is_config_error(tmp_path) -> None:
    with pytest.raises(ConfigError, match="Could not read properties from file"):
        properties.load(tmp_path / "nope.properties")


def test_dumps_matches_java_store_output() -> None:
    props = {"": "", " lead key": " lead val=:#!\t\n\r\f\\é€\x01 end ", "a#b!c": "x"}
    assert properties.dumps(props) == (
        "=\n\\ lead\\ key=\\ lead val\\=\\:\\#\\!\\t\\n\\r\\f\\\\\\u00E9\\u20AC\\u0001 end \na\\#b\\!c=x\n"
    )
    assert properties.dumps({"k": "é€"}, ascii_only=False) == "k=é€\n"


def test_dumps_comments_are_prefixed() -> None:
    assert properties.dumps({"a": "1"}, comments="hdr\nline2") == "#hdr\n#line2\na=1\n"


def test_dump_writes_latin1_escaped_file(tmp_path) -> None:
    path = tmp_path / "out.properties"
    properties.dump({"k": "\U0001f600 x"}, path)
    assert path.read_bytes() == b"k=\\uD83D\\uDE00 x\n"
    assert properties.load(path) == {"k": "\U0001f600 x"}


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)


@given(st.dictionaries(_text, _text, max_size=8))
def test_dumps_loads_round_trip(props: dict[str, str]) -> None:
    assert properties.loads(properties.dumps(props)) == props
    assert properties.loads(properties.dumps(props, ascii_only=False)) == props


@given(st.dictionaries(_text, _text, max_size=5))
def test_dumps_ascii_output_is_printable_ascii(props: dict[str, str]) -> None:
    text = properties.dumps(props)
    assert all(0x20 <= ord(c) <= 0x7E or c == "\n" for c in text)
