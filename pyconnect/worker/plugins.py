"""Plugin discovery through Python entry points, with Java's class names and aliases.

Plugins are declared as entry points named by the class name Connect reports (the Java fully
qualified name for ports of Java plugins), in the groups ``pyconnect.connectors``,
``pyconnect.converters``, ``pyconnect.header_converters``, ``pyconnect.transformations`` and
``pyconnect.predicates``::

    [project.entry-points."pyconnect.connectors"]
    "org.apache.kafka.connect.tools.VerifiableSourceConnector" = "connectors.verifiable:VerifiableSourceConnector"

A plugin resolves by that class name, by its Python ``module.QualName``, or by an alias computed as
Java's ``PluginUtils.computeAliases``: the simple name (last dotted part) and the simple name with
the type's suffix removed (``Connector`` for connectors, ``Converter`` for converters,
``HeaderConverter`` for header converters; only when the suffix is not the whole name). An alias
claimed by two different classes is dropped. Connector lookup then falls back, like
``Plugins.connectorClass``, to a connector whose simple name is ``name`` or ``name + "Connector"``.

What a plugin is (:class:`~pyconnect.plugin_desc.PluginType`, :class:`~pyconnect.plugin_desc.PluginDesc`)
is defined in :mod:`pyconnect.plugin_desc`, below the transformations, which resolve their classes through
the :class:`~pyconnect.plugin_desc.PluginCatalog` contract this registry fulfils.

The built-in transformations and predicates (:mod:`pyconnect.transforms.registry`) are always present,
as Java's are on the worker's classpath. The simple name of a nested class is Java's ``getSimpleName``:
the part after ``$`` (``InsertField$Value`` -> ``Value``, an alias shared by many classes and dropped).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from importlib.metadata import entry_points
from typing import Any

from pyconnect.api.connector import Connector, SourceConnector
from pyconnect.config.connector_keys import SINK_CONNECTOR_CONFIG_DEF, SOURCE_CONNECTOR_CONFIG_DEF
from pyconnect.config.definition import ConfigDef
from pyconnect.config.info import config_key_info
from pyconnect.config.javastr import invalid_value
from pyconnect.errors import BadRequestError, ConfigError, ConnectError, NotFoundError
from pyconnect.plugin_desc import PluginDesc, PluginType
from pyconnect.protocol.javahash import java_string_key
from pyconnect.transforms.registry import BUILTIN_PREDICATES, BUILTIN_TRANSFORMATIONS

log = logging.getLogger(__name__)


ENTRY_POINT_GROUPS = {
    "pyconnect.connectors": None,
    "pyconnect.converters": PluginType.CONVERTER,
    "pyconnect.header_converters": PluginType.HEADER_CONVERTER,
    "pyconnect.transformations": PluginType.TRANSFORMATION,
    "pyconnect.predicates": PluginType.PREDICATE,
}
_LISTING_ORDER = (
    PluginType.SINK,
    PluginType.SOURCE,
    PluginType.TRANSFORMATION,
    PluginType.PREDICATE,
    PluginType.CONVERTER,
    PluginType.HEADER_CONVERTER,
)
UNDEFINED_VERSION = "undefined"
_CONVERTER_KEYS = {
    "key.converter": (PluginType.CONVERTER, "org.apache.kafka.connect.storage.Converter"),
    "value.converter": (PluginType.CONVERTER, "org.apache.kafka.connect.storage.Converter"),
    "header.converter": (PluginType.HEADER_CONVERTER, "org.apache.kafka.connect.storage.HeaderConverter"),
}


def _plugin_version(cls: type) -> str:
    try:
        version = cls().version()
    except Exception:
        log.debug("Could not read the version of plugin %s", cls, exc_info=True)
        return UNDEFINED_VERSION
    return "null" if version is None else str(version)


def _connector_type(cls: type) -> PluginType:
    return PluginType.SOURCE if issubclass(cls, SourceConnector) else PluginType.SINK


class PluginRegistry:
    """The plugins this worker can run (a :class:`~pyconnect.plugin_desc.PluginCatalog`). Immutable after
    construction; safe to share."""

    def __init__(self, plugins: Iterable[PluginDesc]) -> None:
        self._plugins = sorted(plugins, key=lambda p: (java_string_key(p.class_name), p.type.value))
        self._by_name: dict[str, list[PluginDesc]] = {}
        for plugin in self._plugins:
            self._by_name.setdefault(plugin.class_name, []).append(plugin)
            if plugin.python_name != plugin.class_name:
                self._by_name.setdefault(plugin.python_name, []).append(plugin)
        claims: dict[str, set[str]] = {}
        for plugin in self._plugins:
            claims.setdefault(plugin.simple_name, set()).add(plugin.class_name)
            claims.setdefault(plugin.pruned_name, set()).add(plugin.class_name)
        self.aliases: dict[str, str] = {a: next(iter(c)) for a, c in claims.items() if len(c) == 1}
        for alias, names in claims.items():
            if len(names) > 1:
                log.debug(
                    "Ignoring ambiguous alias '%s' since it refers to multiple distinct plugins %s",
                    alias,
                    names,
                )

    @classmethod
    def from_entry_points(cls) -> PluginRegistry:
        """Every plugin declared in the ``pyconnect.*`` entry-point groups of the installed distributions."""
        found: list[PluginDesc] = []
        for group, kind in ENTRY_POINT_GROUPS.items():
            for entry in entry_points(group=group):
                try:
                    plugin_class = entry.load()
                except Exception:
                    log.exception("Failed to load plugin %s from %s", entry.name, entry.value)
                    continue
                plugin_type = kind if kind is not None else _connector_type(plugin_class)
                found.append(PluginDesc(entry.name, plugin_type, _plugin_version(plugin_class), plugin_class))
        return cls(found + builtin_plugins())

    def plugins(self, *types: PluginType) -> list[PluginDesc]:
        """Plugins of the given types (all when none given), sorted by class name like Java's sets."""
        return [p for p in self._plugins if not types or p.type in types]

    def _lookup(self, name: str, types: tuple[PluginType, ...]) -> PluginDesc | None:
        candidates = self._by_name.get(name) or self._by_name.get(self.aliases.get(name, ""), [])
        for plugin in candidates:
            if plugin.type in types:
                return plugin
        return None

    def resolve(self, name: str) -> PluginDesc:
        """Any plugin by class name or alias (``Plugins.pluginClass``); unknown -> :class:`NotFoundError`."""
        plugin = self._lookup(name, tuple(PluginType))
        if plugin is None:
            raise NotFoundError(f"Unknown plugin {name}.")
        return plugin

    def resolve_connector(self, name: str) -> type[Connector]:
        """``Plugins.connectorClass``: the connector class for a class name or alias."""
        connector_types = (PluginType.SOURCE, PluginType.SINK)
        plugin = self._lookup(name, connector_types)
        if plugin is not None:
            return plugin.plugin_class
        connectors = self.plugins(*connector_types)
        matches = [p for p in connectors if p.simple_name in (name, name + "Connector")]
        listing = ", ".join(str(p) for p in connectors)
        if not matches:
            raise ConnectError(
                f"Failed to find any class that implements Connector and which name matches {name}, "
                f"available connectors are: {listing}"
            )
        if len(matches) > 1:
            raise ConnectError(
                f"More than one connector matches alias {name}. Please use full package and class name instead. "
                f"Classes found: {listing}"
            )
        return matches[0].plugin_class

    def connector_class_name(self, name: str) -> str:
        """The reported class name of the connector ``name`` resolves to."""
        cls = self.resolve_connector(name)
        return next(p.class_name for p in self._plugins if p.plugin_class is cls)

    def connector_type(self, name: str) -> str:
        """``source``/``sink`` for a resolvable connector, else ``unknown`` (ConnectorInfo ``type``)."""
        try:
            cls = self.resolve_connector(name)
        except ConnectError:
            return "unknown"
        return _connector_type(cls).value

    def resolve_converter(self, name: str) -> type:
        plugin = self._lookup(name, (PluginType.CONVERTER,))
        if plugin is None:
            raise ConnectError(
                f"Failed to find any class that implements Converter and which name matches {name}"
            )
        return plugin.plugin_class

    def resolve_header_converter(self, name: str) -> type:
        plugin = self._lookup(name, (PluginType.HEADER_CONVERTER,))
        if plugin is None:
            raise ConnectError(
                f"Failed to find any class that implements HeaderConverter and which name matches {name}"
            )
        return plugin.plugin_class

    def new_converter(self, name: str, configs: dict[str, Any], is_key: bool) -> Any:
        """A configured converter instance (``configure(configs, is_key)``)."""
        converter = self.resolve_converter(name)()
        converter.configure(configs, is_key)
        return converter

    def new_header_converter(self, name: str, configs: dict[str, Any]) -> Any:
        """A configured header converter; ``converter.type=header`` is added as Java does."""
        converter = self.resolve_header_converter(name)()
        converter.configure({**configs, "converter.type": "header"})
        return converter

    def connector_plugins(self, connectors_only: bool = True) -> list[dict[str, str]]:
        """``GET /connector-plugins``: ``[{"class", "type", "version"}]``, sinks then sources (then the rest).

        ``version`` is left out when it is ``undefined``, as Java's ``PluginInfo`` does.
        """
        order = _LISTING_ORDER[:2] if connectors_only else _LISTING_ORDER
        listing = []
        for plugin_type in order:
            for plugin in self.plugins(plugin_type):
                info = {"class": plugin.class_name, "type": plugin.type.value}
                if plugin.version != UNDEFINED_VERSION:
                    info["version"] = plugin.version
                listing.append(info)
        return listing

    def plugin_config_def(self, name: str) -> ConfigDef:
        """The plugin's own keys, then (for connectors) the framework keys it does not redefine."""
        plugin = self.resolve(name)
        instance = plugin.plugin_class()
        own: ConfigDef = instance.config()
        if plugin.type is PluginType.SOURCE:
            base = SOURCE_CONNECTOR_CONFIG_DEF
        elif plugin.type is PluginType.SINK:
            base = SINK_CONNECTOR_CONFIG_DEF
        elif plugin.type in (
            PluginType.CONVERTER,
            PluginType.HEADER_CONVERTER,
            PluginType.TRANSFORMATION,
            PluginType.PREDICATE,
        ):
            return own
        else:
            raise BadRequestError(
                f"Invalid plugin class {name}. Valid types are sink, source, converter, header_converter, "
                "transformation, predicate."
            )
        return ConfigDef(list(own) + [key for key in base if key.name not in own])

    def plugin_config(self, name: str) -> list[dict[str, Any]]:
        """``GET /connector-plugins/{name}/config``: a list of ``ConfigKeyInfo`` JSON objects."""
        return [config_key_info(key) for key in self.plugin_config_def(name)]

    def connector_config_def(self, connector_type: PluginType) -> ConfigDef:
        """The framework keys of a ``source``/``sink`` connector, with converter classes checked here.

        ``key.converter``, ``value.converter`` and ``header.converter`` get :class:`PluginClassValidator`.
        """
        base = (
            SOURCE_CONNECTOR_CONFIG_DEF if connector_type is PluginType.SOURCE else SINK_CONNECTOR_CONFIG_DEF
        )
        rows = []
        for key in base:
            spec = _CONVERTER_KEYS.get(key.name)
            if spec is not None:
                key = dataclasses.replace(key, validator=PluginClassValidator(self, *spec))
            rows.append(key)
        return ConfigDef(rows)


def builtin_plugins() -> list[PluginDesc]:
    """The built-in transformations and predicates under their Java class names."""
    found = [
        PluginDesc(name, PluginType.TRANSFORMATION, _plugin_version(cls), cls)
        for name, cls in BUILTIN_TRANSFORMATIONS.items()
    ]
    found += [
        PluginDesc(name, PluginType.PREDICATE, _plugin_version(cls), cls)
        for name, cls in BUILTIN_PREDICATES.items()
    ]
    return found


class PluginClassValidator:
    """Java's ``ConcreteSubClassValidator`` + ``InstantiableClassValidator`` for a CLASS key: the name
    must resolve in the registry (``Class X could not be found.``) to a plugin of ``plugin_type``."""

    def __init__(self, registry: PluginRegistry, plugin_type: PluginType, java_interface: str) -> None:
        self.registry = registry
        self.plugin_type = plugin_type
        self.java_interface = java_interface

    def __call__(self, name: str, value: object) -> None:
        if value is None:
            return
        try:
            plugin = self.registry.resolve(str(value))
        except NotFoundError as exc:
            raise invalid_value(name, value, f"Class {value} could not be found.") from exc
        if self.registry._lookup(str(value), (self.plugin_type,)) is None:
            simple = self.java_interface.rsplit(".", 1)[-1]
            raise ConfigError(f"Class class {plugin.class_name} does not implement the {simple} interface")

    def __str__(self) -> str:
        return f"A concrete subclass of {self.java_interface}, A class with a public, no-argument constructor"
