"""Connector-name trimming and validation against Kafka 4.3.1 (golden: tests/golden/connector_names/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pyconnect.config.connector_name import (
    create_request_name,
    is_representable,
    java_trim,
    unrepresentable_reason,
    validate_connector_name,
)
from pyconnect.config.validators import NonEmptyStringWithoutControlChars
from pyconnect.errors import ConfigError
from pyconnect.testing.distribution import KAFKA_VERSION

GOLDEN = json.loads(
    (Path(__file__).parents[2] / "golden" / "connector_names" / "vectors.json").read_text(encoding="ascii")
)
NAMES: list[dict[str, Any]] = GOLDEN["names"]
BODIES: dict[str, dict[str, Any]] = {b["id"]: b for b in GOLDEN["bodies"]}


def name_of(case: dict[str, Any]) -> str:
    if "parts" in case:
        return "".join(text * count for text, count in case["parts"])
    name: str = case["name"]
    return name


def validator_message(value: str) -> str | None:
    try:
        NonEmptyStringWithoutControlChars()("name", value)
    except ConfigError as exc:
        return str(exc)
    return None


def by_id(case_id: str) -> dict[str, Any]:
    return next(c for c in NAMES if c["id"] == case_id)


def test_golden_file_is_from_the_pinned_release() -> None:
    assert GOLDEN["kafka_version"] == KAFKA_VERSION
    assert GOLDEN["validator"] == str(NonEmptyStringWithoutControlChars())
    assert len(NAMES) > 100


@pytest.mark.parametrize("case", NAMES, ids=lambda c: c["id"])
def test_trim_is_java_string_trim(case: dict[str, Any]) -> None:
    name = name_of(case)
    assert java_trim(name) == case["trimmed"]
    assert create_request_name(name) == case["trimmed"]


@pytest.mark.parametrize("case", NAMES, ids=lambda c: c["id"])
def test_validation_matches_config_def(case: dict[str, Any]) -> None:
    name = name_of(case)
    errors = case["config_def_errors"]
    assert len(errors) <= 1
    expected = errors[0] if errors else None
    assert validate_connector_name(name) == expected  # PUT: the path name as given
    assert validate_connector_name(create_request_name(name)) == expected  # POST: trimmed first
    assert case["validator_on_trimmed"] == expected


@pytest.mark.parametrize("case", NAMES, ids=lambda c: c["id"])
def test_validator_alone_matches_java(case: dict[str, Any]) -> None:
    name = name_of(case)
    assert validator_message(name) == case["validator"]
    assert validator_message(case["trimmed"]) == case["validator_on_trimmed"]


@pytest.mark.parametrize("case", NAMES, ids=lambda c: c["id"])
def test_representable_exactly_when_java_reads_the_same_name_back(case: dict[str, Any]) -> None:
    name = name_of(case)
    java_bytes = bytes.fromhex(case["utf8_hex"])
    # StringSerializer replaces each unpaired surrogate with '?', as Python's "replace" handler does.
    assert name.encode("utf-8", "replace") == java_bytes
    assert is_representable(name) == (case["utf8_read_back"] == name)
    if is_representable(name):
        assert name.encode("utf-8") == java_bytes
        assert unrepresentable_reason(name) is None
    else:
        with pytest.raises(UnicodeEncodeError):
            name.encode("utf-8")


@pytest.mark.parametrize("case", NAMES, ids=lambda c: c["id"])
def test_java_json_and_lengths_read_back_to_the_same_name(case: dict[str, Any]) -> None:
    name = name_of(case)
    assert json.loads(bytes.fromhex(case["json_hex"])) == name
    assert len(name.encode("utf-16-le", "surrogatepass")) // 2 == case["utf16_length"]


def test_java_trim_is_not_str_strip() -> None:
    for case_id in ("leading-nul", "c0-both-ends"):  # Java trims, Python keeps
        case = by_id(case_id)
        assert case["trimmed"] == "conn" != case["name"].strip()
    for case_id in (
        "c1-nel-ends",
        "nbsp-ends",
        "line-separator-ends",
        "ideographic-space-ends",
        "ogham-space-ends",
    ):
        case = by_id(case_id)  # Python strips, Java keeps
        assert case["trimmed"] == case["name"] != case["name"].strip()


def test_messages() -> None:
    assert validate_connector_name("") == "Invalid value  for configuration name: String may not be empty"
    assert (
        validate_connector_name(" \t\x00 ")
        == "Invalid value  for configuration name: String may not be empty"
    )
    assert validate_connector_name(" a\x00\x7f\x85b\n") == (
        "Invalid value a\x00\x7f\x85b for configuration name: "
        "String may not contain control sequences but had the following ASCII chars: 0, 127, 133"
    )
    assert validate_connector_name("\u00a0a/b?#%2F..\u3000") is None
    assert create_request_name(None) == ""


def test_unrepresentable_reason_is_ascii_and_names_the_code_point() -> None:
    reason = unrepresentable_reason("a\ud800b\x01")
    assert reason is not None
    assert reason.isascii()
    assert '"a\\ud800b\\u0001"' in reason
    assert "U+D800 at index 1" in reason
    assert unrepresentable_reason("\ud83d\ude00") is not None  # two code points, not one char
    assert is_representable("\U0001f600")
    # The validator alone accepts lone surrogates, as Java's does: refusing them is pyconnect's choice.
    assert validate_connector_name("\udc00") is None


def test_request_bodies_jackson_vs_python_json() -> None:
    """What Jackson makes of a CreateConnectorRequest "name", and where Python's json module differs."""
    jackson = {case_id: (b["name"], b["error"]) for case_id, b in BODIES.items()}
    assert jackson["padded-string"] == ("  x\t", None)  # trimmed later, by createConnector
    assert jackson["escaped-lone-surrogate"] == ("\ud800", None)
    assert jackson["escaped-nul"] == ("\x00", None)
    assert jackson["null"] == jackson["missing"] == (None, None)  # both become "" in createConnector
    assert jackson["duplicate-key"] == ("b", None)
    # Jackson coerces JSON scalars to the text of the token; json.loads would give int/float/bool.
    assert jackson["integer"] == ("123", None)
    assert jackson["float"] == ("1.50", None)
    assert jackson["boolean"] == ("true", None)
    for case_id in ("object", "array"):
        assert jackson[case_id][0] is None
        assert "MismatchedInputException" in jackson[case_id][1]
    # Refused by both: raw control chars in a string, invalid UTF-8.
    for case_id in ("raw-control-char", "raw-tab", "raw-invalid-utf8"):
        assert jackson[case_id][0] is None and jackson[case_id][1]
        with pytest.raises(ValueError):
            json.loads(bytes.fromhex(BODIES[case_id]["body_hex"]))
    # Jackson refuses a CESU-8 encoded surrogate (ED A0 80); json.loads(bytes) decodes with
    # "surrogatepass" and returns a lone surrogate, which unrepresentable_reason then refuses.
    assert jackson["raw-cesu-surrogate"][0] is None
    assert "Illegal surrogate character 0xd800" in jackson["raw-cesu-surrogate"][1]
    lenient = json.loads(bytes.fromhex(BODIES["raw-cesu-surrogate"]["body_hex"]))["name"]
    assert lenient == "a\ud800b"
    assert not is_representable(lenient)
    # Jackson accepts the overlong encoding C0 AF as '/'; Python refuses the bytes.
    assert jackson["raw-overlong-slash"] == ("a/b", None)
    with pytest.raises(ValueError):
        json.loads(bytes.fromhex(BODIES["raw-overlong-slash"]["body_hex"]))
    # Where both read a JSON string, they agree.
    for case_id in (
        "string",
        "padded-string",
        "escaped-nul",
        "escaped-lone-surrogate",
        "escaped-pair",
        "raw-non-bmp",
    ):
        assert json.loads(bytes.fromhex(BODIES[case_id]["body_hex"]))["name"] == jackson[case_id][0]


def test_address_problem_refuses_slashes_and_names_no_url_can_carry() -> None:
    from pyconnect.config.connector_name import MAX_NAME_URL_BYTES, address_problem

    assert address_problem("a/b") == "Connector name 'a/b' contains characters that are not allowed ('/')"
    assert address_problem("x" * MAX_NAME_URL_BYTES) is None
    assert address_problem("\u00e9" * 1024) is None  # 6144 bytes encoded: exactly the limit
    message = address_problem("\u00e9" * 1025)
    assert message is not None and message.startswith("Connector name is too long: 6150 bytes")
    for name in (".", "..", "x#y", "%", "{brace}", "a;b"):
        assert address_problem(name) is None
