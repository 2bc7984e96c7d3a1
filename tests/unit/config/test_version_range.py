"""KIP-891 plugin version requirements read as Maven ``VersionRange``s (pyconnect.config.version_range)."""

from __future__ import annotations

import itertools

import pytest

from pyconnect.config.version_range import VersionRangeError, compare_versions, parse_version_requirement


@pytest.mark.parametrize(
    ("spec", "text", "inside", "outside"),
    [
        ("4.3.1", "[4.3.1,4.3.1]", ["4.3.1", "4.3.1.0"], ["4.3.0", "4.3.2"]),
        ("[4.0,5.0)", "[4.0,5.0)", ["4.0", "4.3.1", "4.99"], ["3.9.1", "5.0", "5.0.0"]),
        ("(4.0,)", "(4.0,)", ["4.0.1", "10"], ["4.0", "3"]),
        ("[4.0,)", "[4.0,)", ["4.0", "10"], ["3.9"]),
        ("(,4.0]", "(,4.0]", ["4.0", "1"], ["4.0.1"]),
        ("[1.0]", "[1.0,1.0]", ["1.0", "1"], ["1.1"]),
        ("[1,2),[3,4)", "[1,2),[3,4)", ["1.5", "3.0"], ["2", "4", "2.5"]),
    ],
)
def test_ranges_parse_print_and_match(spec: str, text: str, inside: list[str], outside: list[str]) -> None:
    wanted = parse_version_requirement(spec)
    assert str(wanted) == text
    assert all(wanted.contains(v) for v in inside)
    assert not any(wanted.contains(v) for v in outside)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("[1.0", "Unbounded range: [1.0"),
        ("(1.0)", "Single version must be surrounded by []: (1.0)"),
        ("[2.0,1.0]", "Range defies version ordering: [2.0,1.0]"),
        ("[1.0,]", "Invalid version range [1.0,], bounds may not be inclusive when unbounded"),
        ("[1,2] x", "Only fully-qualified sets allowed in multiple set scenario: [1,2] x"),
    ],
)
def test_invalid_ranges_carry_mavens_message(spec: str, message: str) -> None:
    with pytest.raises(VersionRangeError) as raised:
        parse_version_requirement(spec)
    assert str(raised.value) == message


def test_version_order_follows_maven_for_common_shapes() -> None:
    ordered = ["1.0-alpha", "1.0-beta", "1.0-rc1", "1.0-SNAPSHOT", "1.0", "1.0-sp", "1.0.1", "1.2", "1.10"]
    for older, newer in itertools.pairwise(ordered):
        assert compare_versions(older, newer) < 0 < compare_versions(newer, older), (older, newer)
    assert compare_versions("4.3.1", "4.3.1.0") == 0
