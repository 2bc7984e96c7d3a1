"""ConfigDef semantics: Java's parseType coercions, validator messages, validate() and the REST JSON.

Expected messages and values were produced with the Kafka 4.3.1 jars (``ConfigDef.parseType``,
validators' ``ensureValid``/``toString``, ``ConfigDef.validate``, Jackson on ``ConfigInfos``).
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyconnect.config.connector_keys import (
    CONNECTOR_CONFIG_DEF,
    SINK_CONNECTOR_CONFIG_DEF,
    SOURCE_CONNECTOR_CONFIG_DEF,
)
from pyconnect.config.definition import NO_DEFAULT, ConfigDef, ConfigKey
from pyconnect.config.info import config_infos, config_key_info, error_messages, to_rst
from pyconnect.config.javastr import java_str
from pyconnect.config.types import Importance, Password, Type, Width, convert_to_string, parse_type
from pyconnect.config.validators import (
    CaseInsensitiveValidString,
    CompositeValidator,
    ListSize,
    NonEmptyString,
    NonEmptyStringWithoutControlChars,
    NonNullValidator,
    Range,
    ValidList,
    ValidString,
)
from pyconnect.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]

PARSE_OK = [
    (" a , b ", Type.LIST, ["a", "b"]),
    ("a,a,b", Type.LIST, ["a", "a", "b"]),
    ("a,,b", Type.LIST, ["a", "", "b"]),
    ("a,", Type.LIST, ["a", ""]),
    (",", Type.LIST, ["", ""]),
    ("a\t,\tb", Type.LIST, ["a", "b"]),
    ("", Type.LIST, []),
    ("   ", Type.LIST, []),
    (" 1.5 ", Type.DOUBLE, 1.5),
    ("1.5d", Type.DOUBLE, 1.5),
    ("1e-1", Type.DOUBLE, 0.1),
    ("0x1p3", Type.DOUBLE, 8.0),
    ("Infinity", Type.DOUBLE, math.inf),
    ("-0", Type.INT, 0),
    ("+5", Type.INT, 5),
    (" 42 ", Type.INT, 42),
    ("٣", Type.INT, 3),
    ("-32768", Type.SHORT, -32768),
    ("9223372036854775807", Type.LONG, 2**63 - 1),
    ("TrUe", Type.BOOLEAN, True),
    (" FALSE ", Type.BOOLEAN, False),
    ("  x  ", Type.STRING, "x"),
    ("\x01x\x1f", Type.STRING, "x"),
    (" java.lang.String ", Type.CLASS, "java.lang.String"),
    (5, Type.LONG, 5),
    (5, Type.DOUBLE, 5.0),
    (True, Type.BOOLEAN, True),
    (["x", "y"], Type.LIST, ["x", "y"]),
    (None, Type.INT, None),
]


@pytest.mark.parametrize(("value", "type_", "expected"), PARSE_OK)
def test_parse_type_accepts_like_java(value: object, type_: Type, expected: object) -> None:
    assert parse_type("k", value, type_) == expected


def test_parse_double_nan() -> None:
    assert math.isnan(parse_type("k", "NaN", Type.DOUBLE))  # type: ignore[arg-type]


PARSE_ERRORS = [
    ("1_000", Type.INT, "Invalid value 1_000 for configuration k: Not a number of type INT"),
    ("", Type.INT, "Invalid value  for configuration k: Not a number of type INT"),
    ("2147483648", Type.INT, "Invalid value 2147483648 for configuration k: Not a number of type INT"),
    ("1.5", Type.INT, "Invalid value 1.5 for configuration k: Not a number of type INT"),
    ("32768", Type.SHORT, "Invalid value 32768 for configuration k: Not a number of type SHORT"),
    (
        "9223372036854775808",
        Type.LONG,
        "Invalid value 9223372036854775808 for configuration k: Not a number of type LONG",
    ),
    ("1e3", Type.LONG, "Invalid value 1e3 for configuration k: Not a number of type LONG"),
    ("0x10", Type.DOUBLE, "Invalid value 0x10 for configuration k: Not a number of type DOUBLE"),
    ("inf", Type.DOUBLE, "Invalid value inf for configuration k: Not a number of type DOUBLE"),
    ("", Type.BOOLEAN, "Invalid value  for configuration k: Expected value to be either true or false"),
    ("yes", Type.BOOLEAN, "Invalid value yes for configuration k: Expected value to be either true or false"),
    (5, Type.BOOLEAN, "Invalid value 5 for configuration k: Expected value to be either true or false"),
    (
        5,
        Type.STRING,
        "Invalid value 5 for configuration k: Expected value to be a string, but it was a java.lang.Integer",
    ),
    (5, Type.LIST, "Invalid value 5 for configuration k: Expected a comma separated list."),
    (5, Type.CLASS, "Invalid value 5 for configuration k: Expected a Class instance or class name."),
    ("", Type.CLASS, "Invalid value  for configuration k: Class  could not be found."),
    (
        2**40,
        Type.INT,
        "Invalid value 1099511627776 for configuration k: Expected value to be a 32-bit integer, but it was a java.lang.Long",
    ),
]


@pytest.mark.parametrize(("value", "type_", "message"), PARSE_ERRORS)
def test_parse_type_errors_carry_java_messages(value: object, type_: Type, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_type("k", value, type_)
    assert str(info.value) == message


def test_password_is_hidden_but_keeps_its_value() -> None:
    password = parse_type("k", " secret ", Type.PASSWORD)
    assert isinstance(password, Password)
    assert password.value == "secret"
    assert str(password) == repr(password) == "[hidden]"
    assert f"{[password]}" == "[[hidden]]"
    assert password == Password("secret")
    assert convert_to_string(password, Type.PASSWORD) == "[hidden]"


@pytest.mark.parametrize(
    ("value", "type_", "text"),
    [
        (["a", "b"], Type.LIST, "a,b"),
        ([], Type.LIST, ""),
        (True, Type.BOOLEAN, "true"),
        (1.0, Type.DOUBLE, "1.0"),
        (0.8, Type.DOUBLE, "0.8"),
        (1e-7, Type.DOUBLE, "1.0E-7"),
        (3, Type.SHORT, "3"),
        (None, Type.STRING, None),
    ],
)
def test_convert_to_string(value: object, type_: Type, text: str | None) -> None:
    assert convert_to_string(value, type_) == text


VALIDATOR_ERRORS = [
    (Range.at_least(0), -1, "Invalid value -1 for configuration k: Value must be at least 0"),
    (Range.at_least(0), None, "Invalid value null for configuration k: Value must be non-null"),
    (Range.between(1, 10), 11, "Invalid value 11 for configuration k: Value must be no more than 10"),
    (Range.between(0.5, 1.0), 1.5, "Invalid value 1.5 for configuration k: Value must be no more than 1.0"),
    (ValidString("a", "b"), "c", "Invalid value c for configuration k: String must be one of: a, b"),
    (ValidString("a", "b"), None, "Invalid value null for configuration k: String must be one of: a, b"),
    (
        CaseInsensitiveValidString("a", "b"),
        "C",
        "Invalid value C for configuration k: String must be one of (case insensitive): A, B",
    ),
    (NonEmptyString(), "", "Invalid value  for configuration k: String must be non-empty"),
    (NonNullValidator(), None, "Invalid value null for configuration k: entry must be non null"),
    (
        NonEmptyStringWithoutControlChars(),
        "a\tb\x01",
        "Invalid value a\tb\x01 for configuration k: String may not contain control sequences but had the following ASCII chars: 9, 1",
    ),
    (NonEmptyStringWithoutControlChars(), "", "Invalid value  for configuration k: String may not be empty"),
    (ValidList.in_("a", "b"), ["a", "c"], "Invalid value c for configuration k: String must be one of: a, b"),
    (ValidList.in_("a", "b"), None, "Configuration 'k' values must not be null."),
    (
        ValidList.in_("a", "b", allow_empty=False),
        [],
        "Configuration 'k' must not be empty. Valid values include: [a, b]",
    ),
    (ValidList.in_("a", "b"), ["a", "a"], "Configuration 'k' values must not be duplicated."),
    (
        ValidList.any_non_duplicate_values(False, False),
        [],
        "Configuration 'k' must not be empty. Valid values include: any non-empty value",
    ),
    (
        ValidList.any_non_duplicate_values(True, True),
        ["a", ""],
        "Configuration 'k' values must not be empty.",
    ),
    (ListSize(1), ["a", "b"], "Invalid value [a, b] for configuration k: exceeds maximum list size of [1]."),
    (
        CompositeValidator(NonEmptyString(), ValidString("a")),
        "",
        "Invalid value  for configuration k: String must be non-empty",
    ),
]


@pytest.mark.parametrize(("validator", "value", "message"), VALIDATOR_ERRORS)
def test_validator_messages(validator, value: object, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        validator("k", value)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("validator", "value"),
    [
        (NonEmptyString(), None),
        (NonEmptyStringWithoutControlChars(), None),
        (ValidList.in_("a", "b"), []),
        (ValidList.any_non_duplicate_values(True, True), None),
        (CaseInsensitiveValidString("hybrid_warn"), "Hybrid_Warn"),
        (Range.between(0, 10), 10),
    ],
)
def test_validators_accept(validator, value: object) -> None:
    validator("k", value)


def test_validator_descriptions_match_java_to_string() -> None:
    assert [
        str(ValidList.in_("a", "b")),
        str(ValidList.any_non_duplicate_values(True, True)),
        str(Range.at_least(0)),
        str(Range.between(1, 10)),
        str(Range.between(0.5, 1.0)),
        str(Range()),
        str(ValidString("a", "b")),
        str(CaseInsensitiveValidString("a", "b")),
        str(NonEmptyString()),
        str(NonNullValidator()),
        str(CompositeValidator(NonEmptyString(), ValidString("a"))),
    ] == [
        "[a, b]",
        "",
        "[0,...]",
        "[1,...,10]",
        "[0.5,...,1.0]",
        "[...]",
        "[a, b]",
        "(case insensitive) [A, B]",
        "non-empty string",
        "non-null string",
        "non-empty string, [a]",
    ]


def _sample_def() -> ConfigDef:
    return ConfigDef(
        [
            ConfigKey("a", Type.INT, NO_DEFAULT, Importance.HIGH, "doc a", validator=Range.at_least(0)),
            ConfigKey("b", Type.PASSWORD, "x", Importance.LOW, "doc b"),
            ConfigKey("c", Type.LIST, "", Importance.LOW, "doc c"),
        ]
    )


def test_key_default_is_parsed_and_validated_at_declaration() -> None:
    key = ConfigKey("l", Type.LIST, "x, y", documentation="d")
    assert key.default == ["x", "y"]
    assert key.display_name == "l"
    with pytest.raises(ConfigError, match="Value must be at least 1"):
        ConfigKey("n", Type.INT, 0, validator=Range.at_least(1))


def test_duplicate_key_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"Configuration a is defined twice\."):
        ConfigDef([ConfigKey("a", Type.INT, 1), ConfigKey("a", Type.INT, 2)])


def test_parse_missing_required_key() -> None:
    with pytest.raises(ConfigError) as info:
        _sample_def().parse({})
    assert str(info.value) == 'Missing required configuration "a" which has no default value.'


def test_parse_fills_defaults_and_ignores_unknown_keys() -> None:
    parsed = _sample_def().parse({"a": "3", "zzz": "1"})
    assert parsed == {"a": 3, "b": Password("x"), "c": []}


def test_parse_removes_duplicates_only_for_valid_list_keys() -> None:
    definition = ConfigDef(
        [
            ConfigKey("l", Type.LIST, "", validator=ValidList.any_non_duplicate_values(True, False)),
            ConfigKey("m", Type.LIST, ""),
        ]
    )
    assert definition.parse({"l": "a,a,b", "m": "x,x"}) == {"l": ["a", "b"], "m": ["x", "x"]}
    values = definition.validate({"l": "a,a,b"})
    assert values["l"].value == ["a", "a", "b"]
    assert values["l"].errors == ["Configuration 'l' values must not be duplicated."]


def test_validate_collects_every_error_like_java() -> None:
    definition = _sample_def()
    missing = definition.validate({"b": "secret", "c": "x, y"})
    assert missing["a"].value is None
    assert missing["a"].errors == [
        'Missing required configuration "a" which has no default value.',
        "Invalid value null for configuration a: Value must be non-null",
    ]
    assert missing["b"].value == Password("secret")
    assert missing["c"].value == ["x", "y"]
    assert definition.validate({"a": "-3"})["a"].errors == [
        "Invalid value -3 for configuration a: Value must be at least 0"
    ]
    assert definition.validate({"a": "zz"})["a"].errors == [
        "Invalid value zz for configuration a: Not a number of type INT",
        "Invalid value null for configuration a: Value must be non-null",
    ]
    assert list(definition.validate({})) == ["a", "b", "c"]


class _Recommender:
    def valid_values(self, name, parsed):
        return ["x", "y"] if parsed.get("mode") == "on" else []

    def visible(self, name, parsed):
        return parsed.get("mode") == "on"


def test_validate_uses_recommenders_and_dependents() -> None:
    definition = ConfigDef(
        [
            ConfigKey("mode", Type.STRING, "off", dependents=("detail",)),
            ConfigKey("detail", Type.STRING, "x", recommender=_Recommender()),
            ConfigKey("orphan", Type.STRING, "", dependents=("ghost",)),
        ]
    )
    off = definition.validate({})
    assert (off["detail"].recommended_values, off["detail"].visible) == ([], False)
    on = definition.validate({"mode": "on"})
    assert (on["detail"].recommended_values, on["detail"].visible) == (["x", "y"], True)
    assert on["ghost"].errors == ["ghost is referred in the dependents, but not defined."]
    assert on["ghost"].visible is False
    with pytest.raises(ConfigError, match="referred in the dependents, but not defined: ghost"):
        definition.parse({})


def test_config_key_info_json_shape() -> None:
    key = ConfigKey(
        "n",
        Type.STRING,
        "d",
        Importance.HIGH,
        "doc",
        group="G",
        order_in_group=1,
        display_name="N",
        dependents=("x",),
    )
    assert config_key_info(key) == {
        "name": "n",
        "type": "STRING",
        "required": False,
        "default_value": "d",
        "importance": "HIGH",
        "documentation": "doc",
        "group": "G",
        "order_in_group": 1,
        "width": "NONE",
        "display_name": "N",
        "dependents": ["x"],
    }
    required = config_key_info(ConfigKey("r", Type.PASSWORD, width=Width.LONG), prefix="producer.override.")
    assert (required["name"], required["required"], required["default_value"], required["width"]) == (
        "producer.override.r",
        True,
        None,
        "LONG",
    )
    assert required["group"] is None and required["order_in_group"] == -1
    assert config_key_info(ConfigKey("p", Type.PASSWORD, "s3cret"))["default_value"] == "[hidden]"
    assert config_key_info(ConfigKey("z", Type.STRING, None))["default_value"] is None


def test_config_infos_json_shape_and_error_count() -> None:
    definition = ConfigDef(
        [
            ConfigKey(
                "a",
                Type.INT,
                NO_DEFAULT,
                Importance.HIGH,
                "doc a",
                group="Common",
                validator=Range.at_least(0),
            ),
            ConfigKey("pw", Type.PASSWORD, "x", group="Common", order_in_group=2),
            ConfigKey("l", Type.LIST, "", group="Other"),
            ConfigKey("unvalidated", Type.STRING, ""),
        ]
    )
    values = definition.validate({"pw": "secret", "l": "p, q"})
    del values["unvalidated"]
    extra = [v for v in values.values()]
    from pyconnect.config.definition import ConfigValue

    extra.append(ConfigValue("extra.key", "v", errors=["e1", "e2"]))
    infos = config_infos("org.example.MyConnector", definition, extra)
    assert list(infos) == ["name", "error_count", "groups", "configs"]
    assert infos["name"] == "org.example.MyConnector"
    assert infos["groups"] == ["Common", "Other"]
    assert infos["error_count"] == 4
    configs = infos["configs"]
    assert configs[0] == {
        "definition": None,
        "value": {
            "name": "extra.key",
            "value": "v",
            "recommended_values": [],
            "errors": ["e1", "e2"],
            "visible": True,
        },
    }
    assert [c["definition"]["name"] for c in configs[1:]] == ["a", "pw", "l", "unvalidated"]
    assert configs[1]["value"]["value"] is None
    assert len(configs[1]["value"]["errors"]) == 2
    assert configs[2]["value"]["value"] == "[hidden]"
    assert configs[3]["value"]["value"] == "p,q"
    assert configs[4]["value"] is None
    assert error_messages(values) == configs[1]["value"]["errors"]


def test_to_rst_format_and_order() -> None:
    definition = ConfigDef(
        [
            ConfigKey("z.low", Type.INT, 5, Importance.LOW, "Last."),
            ConfigKey("a.req", Type.STRING, NO_DEFAULT, Importance.LOW, "Required.\n\nSecond para."),
            ConfigKey("m.high.ms", Type.LONG, 60000, Importance.HIGH, "Time.", validator=Range.at_least(0)),
            ConfigKey("b.bytes", Type.INT, 1048576, Importance.HIGH, "Size."),
            ConfigKey("e", Type.STRING, "", Importance.HIGH, "Empty."),
            ConfigKey("hidden", Type.STRING, "", internal=True),
        ]
    )
    assert to_rst(definition) == (
        "``a.req``\n  Required.\n\n  Second para.\n\n  * Type: string\n  * Importance: low\n\n"
        "``b.bytes``\n  Size.\n\n  * Type: int\n  * Default: 1048576 (1 mebibyte)\n  * Importance: high\n\n"
        '``e``\n  Empty.\n\n  * Type: string\n  * Default: ""\n  * Importance: high\n\n'
        "``m.high.ms``\n  Time.\n\n  * Type: long\n  * Default: 60000 (1 minute)\n  * Valid Values: [0,...]\n"
        "  * Importance: high\n\n"
        "``z.low``\n  Last.\n\n  * Type: int\n  * Default: 5\n  * Importance: low\n\n"
    )


def _imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append(node.module)
    return found


def test_config_package_and_errors_import_only_stdlib_and_each_other() -> None:
    """No client library reaches the config package; the one exception is ``cryptography`` in the
    module that reads TLS stores (certificates, PKCS12 and PKCS8 keys)."""
    files = [*sorted((ROOT / "pyconnect" / "config").glob("*.py")), ROOT / "pyconnect" / "errors.py"]
    for path in files:
        for module in _imports(path):
            top = module.split(".")[0]
            allowed = (
                top in sys.stdlib_module_names
                or top == "__future__"
                or module == "pyconnect.errors"
                or module.startswith("pyconnect.config")
                or (top == "cryptography" and path.name == "tls.py")
            )
            assert allowed, f"{path.name} imports {module}"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e7, "1.0E7"),
        (12345678.9, "1.23456789E7"),
        (1e-4, "1.0E-4"),
        (0.001, "0.001"),
        (-3e20, "-3.0E20"),
        (-0.0, "-0.0"),
        (9999999.0, "9999999.0"),
        (None, "null"),
        (False, "false"),
        (["a", 1, None], "[a, 1, null]"),
    ],
)
def test_java_str_matches_java_to_string(value: object, text: str) -> None:
    assert java_str(value) == text


_element = st.text(st.characters(blacklist_characters=",", min_codepoint=0x21), min_size=1, max_size=10)


@given(st.lists(_element, max_size=6))
def test_list_text_round_trip(items: list[str]) -> None:
    assert parse_type("k", convert_to_string(items, Type.LIST), Type.LIST) == items


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_long_text_round_trip(number: int) -> None:
    assert parse_type("k", convert_to_string(number, Type.LONG), Type.LONG) == number


@given(st.floats(allow_nan=False))
def test_double_text_round_trip(number: float) -> None:
    assert parse_type("k", convert_to_string(number, Type.DOUBLE), Type.DOUBLE) == number


def test_error_tree_statuses_follow_connect_exception_mapper() -> None:
    from pyconnect import errors

    cases = {
        errors.ConnectError("x"): (500, False),
        errors.RetriableError("x"): (500, True),
        errors.ConfigError("x"): (400, False),
        errors.NotFoundError("x"): (404, False),
        errors.AlreadyExistsError("x"): (409, False),
        errors.RebalanceNeededError("x"): (500, True),
        errors.NotLeaderError("x", "http://leader:8083/"): (409, False),
        errors.BadRequestError("x"): (400, False),
        errors.ConflictError("x"): (409, False),
        errors.ForbiddenError("x"): (403, False),
        errors.ServiceUnavailableError("x"): (503, True),
        errors.RestError(418, "x"): (418, False),
    }
    for error, (status, retriable) in cases.items():
        assert isinstance(error, errors.ConnectError)
        assert (error.status, error.error_code, error.retriable) == (status, status, retriable), error
    assert errors.RestError(400, "m", error_code=40001).error_code == 40001
    assert errors.NotLeaderError("x", "http://leader:8083/").forward_url == "http://leader:8083/"
    assert errors.RebalanceInProgressError is errors.RebalanceNeededError


JAVA_SOURCE_KEYS_JSON_SHA256 = "196fb410bd707d6ea8ee5ae2239634b8785237d478e363040250b74fd916ecd1"
JAVA_SINK_KEYS_JSON_SHA256 = "15196d9dec07c62daa1c668c345e3357134887d7454a2e8440e9ee4bbf49a1bb"
JAVA_SOURCE_VALIDATE_JSON_SHA256 = "8481129fe5bf21985c50ca74142d66a288cef0432de615c8318e4c77e2adcf1a"


def _jackson(document: object) -> bytes:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()


def test_connector_definitions_json_is_byte_identical_to_java() -> None:
    """``AbstractHerder.convertConfigKey`` over Source/SinkConnectorConfig.configDef(), Jackson-encoded."""
    source = _jackson([config_key_info(k) for k in SOURCE_CONNECTOR_CONFIG_DEF])
    sink = _jackson([config_key_info(k) for k in SINK_CONNECTOR_CONFIG_DEF])
    assert hashlib.sha256(source).hexdigest() == JAVA_SOURCE_KEYS_JSON_SHA256
    assert hashlib.sha256(sink).hexdigest() == JAVA_SINK_KEYS_JSON_SHA256
    assert CONNECTOR_CONFIG_DEF.groups == ("Common", "Transforms", "Predicates", "Error Handling")


def test_connector_validate_json_matches_java() -> None:
    """``generateResult`` over ``validate`` of a bad source config; Java's plugin-version recommenders
    (absent here, supplied by the plugin layer) additionally mark the four ``*.plugin.version`` keys invisible."""
    props = {
        "name": "",
        "tasks.max": "0",
        "transforms": "a,a",
        "exactly.once.support": "Required",
        "transaction.boundary.interval.ms": "-5",
        "errors.tolerance": "ALL",
        "offsets.storage.topic": "",
    }
    infos = config_infos(
        "org.example.Src", SOURCE_CONNECTOR_CONFIG_DEF, SOURCE_CONNECTOR_CONFIG_DEF.validate(props).values()
    )
    assert infos["error_count"] == 7
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]["errors"]}
    assert errors == {
        "name": ["Invalid value  for configuration name: String may not be empty"],
        "connector.class": ['Missing required configuration "connector.class" which has no default value.'],
        "tasks.max": ["Invalid value 0 for configuration tasks.max: Value must be at least 1"],
        "transforms": ["Invalid value [a, a] for configuration transforms: Duplicate alias provided."],
        "errors.tolerance": [
            "Invalid value ALL for configuration errors.tolerance: String must be one of: none, all"
        ],
        "transaction.boundary.interval.ms": [
            "Invalid value -5 for configuration transaction.boundary.interval.ms: Value must be at least 0"
        ],
        "offsets.storage.topic": [
            "Invalid value  for configuration offsets.storage.topic: String must be non-empty"
        ],
    }
    for config in infos["configs"]:
        if config["value"]["name"].endswith("plugin.version"):
            config["value"]["visible"] = False
    assert hashlib.sha256(_jackson(infos)).hexdigest() == JAVA_SOURCE_VALIDATE_JSON_SHA256
