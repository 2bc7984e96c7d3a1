"""Plugin discovery: entry points, Java's alias rules, the unknown-plugin message, REST listings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from connectors.verifiable import VerifiableSourceConnector
from pyconnect.api.connector import SourceConnector
from pyconnect.api.converters import JsonConverter, SimpleHeaderConverter, StringConverter
from pyconnect.config.connector_keys import SOURCE_CONNECTOR_CONFIG_DEF
from pyconnect.config.definition import ConfigDef
from pyconnect.errors import ConnectError, NotFoundError
from pyconnect.worker.plugins import PluginDesc, PluginRegistry, PluginType

VERIFIABLE = "org.apache.kafka.connect.tools.VerifiableSourceConnector"
FACTS = json.loads((Path(__file__).parents[2] / "golden" / "converters" / "vectors.json").read_text())[
    "facts"
]


@pytest.fixture(scope="module")
def registry() -> PluginRegistry:
    return PluginRegistry.from_entry_points()


@pytest.mark.parametrize(
    "name",
    [
        VERIFIABLE,
        "VerifiableSourceConnector",
        "VerifiableSource",
        "connectors.verifiable.source.VerifiableSourceConnector",
    ],
)
def test_connector_class_accepts_java_names_and_aliases(registry: PluginRegistry, name: str) -> None:
    assert registry.resolve_connector(name) is VerifiableSourceConnector
    assert registry.connector_type(name) == "source"
    assert registry.connector_class_name(name) == VERIFIABLE


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("org.apache.kafka.connect.json.JsonConverter", JsonConverter),
        ("JsonConverter", JsonConverter),
        ("Json", JsonConverter),
        ("String", StringConverter),
        ("org.apache.kafka.connect.storage.StringConverter", StringConverter),
    ],
)
def test_converter_aliases(registry: PluginRegistry, name: str, cls: type) -> None:
    assert registry.resolve_converter(name) is cls


def test_header_converter_alias_prunes_header_converter_suffix(registry: PluginRegistry) -> None:
    assert registry.resolve_header_converter("Simple") is SimpleHeaderConverter
    assert registry.resolve_header_converter("SimpleHeaderConverter") is SimpleHeaderConverter
    converter = registry.new_header_converter("org.apache.kafka.connect.storage.StringConverter", {})
    assert converter.from_connect_header("t", "h", None, "x") == b"x"


def test_unknown_connector_lists_available_plugins(registry: PluginRegistry) -> None:
    with pytest.raises(ConnectError) as info:
        registry.resolve_connector("Nope")
    message = str(info.value)
    assert message.startswith(
        "Failed to find any class that implements Connector and which name matches Nope, available connectors are: "
    )
    assert f"PluginDesc{{klass=class {VERIFIABLE}, name='{VERIFIABLE}'" in message
    assert registry.connector_type("Nope") == "unknown"


class Dummy:
    def version(self) -> str:
        return "undefined"

    def config(self) -> ConfigDef:
        return ConfigDef()


class OneSource(SourceConnector):
    def version(self) -> str:
        return "1.0"


def desc(name: str, plugin_type: PluginType, cls: type = Dummy, version: str = "1.0") -> PluginDesc:
    return PluginDesc(name, plugin_type, version, cls)


def test_ambiguous_aliases_are_dropped_like_java() -> None:
    registry = PluginRegistry(
        [
            desc("a.FooConverter", PluginType.CONVERTER),
            desc("b.FooConverter", PluginType.CONVERTER),
            desc("c.Bar", PluginType.CONVERTER),
        ]
    )
    assert "FooConverter" not in registry.aliases and "Foo" not in registry.aliases
    assert registry.aliases["Bar"] == "c.Bar"
    with pytest.raises(ConnectError):
        registry.resolve_converter("Foo")
    assert registry.resolve_converter("a.FooConverter") is Dummy


def test_suffix_alone_is_not_pruned() -> None:
    registry = PluginRegistry([desc("x.Connector", PluginType.SOURCE, OneSource)])
    assert registry.aliases == {"Connector": "x.Connector"}


def test_connector_fallback_reports_ambiguity() -> None:
    registry = PluginRegistry(
        [
            desc("a.DupConnector", PluginType.SOURCE, OneSource),
            desc("b.DupConnector", PluginType.SOURCE, OneSource),
        ]
    )
    with pytest.raises(ConnectError, match="More than one connector matches alias Dup"):
        registry.resolve_connector("Dup")


def test_connector_plugins_listing_shape_and_order() -> None:
    registry = PluginRegistry(
        [
            desc("z.ZSourceConnector", PluginType.SOURCE, OneSource),
            desc("a.ASinkConnector", PluginType.SINK, OneSource, "2.0"),
            desc("b.BConverter", PluginType.CONVERTER, version="undefined"),
            desc("a.AHeaderConverter", PluginType.HEADER_CONVERTER),
        ]
    )
    assert registry.connector_plugins() == [
        {"class": "a.ASinkConnector", "type": "sink", "version": "2.0"},
        {"class": "z.ZSourceConnector", "type": "source", "version": "1.0"},
    ]
    assert [p["class"] for p in registry.connector_plugins(connectors_only=False)] == [
        "a.ASinkConnector",
        "z.ZSourceConnector",
        "b.BConverter",
        "a.AHeaderConverter",
    ]
    assert "version" not in registry.connector_plugins(connectors_only=False)[2]


def test_installed_connector_plugins(registry: PluginRegistry) -> None:
    listing = registry.connector_plugins()
    assert {
        "class": VERIFIABLE,
        "type": "source",
        "version": VerifiableSourceConnector().version(),
    } in listing
    assert all(set(p) == {"class", "type", "version"} for p in listing)


def test_plugin_config_for_connector_appends_framework_keys(registry: PluginRegistry) -> None:
    keys: list[dict[str, Any]] = registry.plugin_config("VerifiableSource")
    assert [k["name"] for k in keys] == SOURCE_CONNECTOR_CONFIG_DEF.names()
    assert keys[0]["name"] == "name" and keys[0]["required"] is True


def test_plugin_config_for_converter_and_unknown(registry: PluginRegistry) -> None:
    names = [k["name"] for k in registry.plugin_config("JsonConverter")]
    assert names == [
        "converter.type",
        "schemas.enable",
        "schemas.cache.size",
        "schema.content",
        "decimal.format",
        "replace.null.with.default",
    ]
    with pytest.raises(NotFoundError, match=r"^Unknown plugin Nope\.$"):
        registry.plugin_config("Nope")


def test_unknown_connector_message_is_javas_text() -> None:
    mirror = "org.apache.kafka.connect.mirror."
    names = ["MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"]
    registry = PluginRegistry([desc(mirror + n, PluginType.SOURCE, OneSource, "4.3.1") for n in names])
    with pytest.raises(ConnectError) as info:
        registry.resolve_connector("Nope")
    assert str(info.value) == FACTS["plugins.unknown_connector"]
    assert registry.resolve_connector("MirrorSource") is OneSource


def test_plugin_info_json_matches_java() -> None:
    registry = PluginRegistry(
        [
            desc("a.B", PluginType.SOURCE, OneSource, "4.3.1"),
            desc("a.B", PluginType.HEADER_CONVERTER, version="undefined"),
        ]
    )
    listing = registry.connector_plugins(connectors_only=False)
    assert json.dumps(listing[0], separators=(",", ":")) == FACTS["plugin_info.source"]
    assert json.dumps(listing[1], separators=(",", ":")) == FACTS["plugin_info.undefined_version"]


def test_connector_config_def_checks_converter_classes(registry: PluginRegistry) -> None:
    header = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
    definition = registry.connector_config_def(PluginType.SOURCE)
    assert definition.names() == SOURCE_CONNECTOR_CONFIG_DEF.names()
    results = definition.validate(
        {"name": "c", "key.converter": "Nope", "value.converter": header, "header.converter": header}
    )
    for key, value in (("key.converter", "Nope"), ("value.converter", header), ("header.converter", header)):
        assert results[key].errors == FACTS[f"connector_config.errors.{key}={value}"]
    assert definition.validate({"header.converter": "Simple"})["header.converter"].errors == []
    validator = definition["header.converter"].validator
    assert str(validator) == FACTS["connector_config.header_converter_validator"]
