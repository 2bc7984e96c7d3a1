"""The ``transforms``/``predicates`` config syntax: Java's ``ConnectorConfig.enrich`` and
``transformationStages``.

A connector config names transformation aliases in ``transforms`` and predicate aliases in
``predicates``. For each alias, ``transforms.<alias>.type`` (``predicates.<alias>.type``) names the
class (full Java name, ``$Key``/``$Value`` included, or a plugin alias), ``transforms.<alias>.`` keys
configure it, and a transformation may add ``predicate`` (a predicate alias) and ``negate``.

:func:`enrich` adds, per alias and in Java's order: ``type`` (order 0), ``plugin.version`` (order 1),
then, when the class resolves, the plugin's own keys embedded under the prefix (for transformations
together with ``predicate``/``negate``), sorted as ``ConfigDef.embed`` sorts them, in the group
``Transforms: <alias>`` (``Predicates: <alias>``). Embedded validators see the unprefixed name, so
their messages name ``regex``, not ``transforms.r.regex``, as Java's do. :func:`validate_enriched` runs
``validateAll`` and words an unresolvable class as Java's CLASS parser does.

Kafka 4.3.1 (not the spec's 4.0 text) also declares ``<prefix>plugin.version`` (KIP-891): a bare
version or a Maven range the plugin's version must satisfy (pyconnect.config.version_range); a
mismatch is reported on both the ``type`` and the ``plugin.version`` key. An unknown predicate
alias in ``transforms.<a>.predicate`` is not a validation error in Java: the task fails when it starts,
and so does ours (:func:`transformation_chain` raises).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from pyconnect.config.definition import ConfigDef, ConfigKey, ConfigValue
from pyconnect.config.javastr import invalid_value
from pyconnect.config.types import Importance, Type, Width, parse_type
from pyconnect.config.version_range import VersionRangeError, parse_version_requirement
from pyconnect.errors import ConfigError, ConnectError
from pyconnect.plugin_desc import PluginCatalog, PluginDesc, PluginType
from pyconnect.transforms.base import Predicate, Transformation
from pyconnect.transforms.chain import TransformationChain, TransformationStage

TRANSFORMS = "transforms"
PREDICATES = "predicates"
PREDICATE = "predicate"
NEGATE = "negate"

_IMPLICIT_TRANSFORM_KEYS = (
    ConfigKey(
        PREDICATE,
        Type.STRING,
        default=None,
        importance=Importance.MEDIUM,
        documentation="The alias of a predicate used to determine whether to apply this transformation.",
    ),
    ConfigKey(
        NEGATE,
        Type.BOOLEAN,
        default=False,
        importance=Importance.MEDIUM,
        documentation="Whether the configured predicate should be negated.",
    ),
)


@dataclasses.dataclass(frozen=True)
class _Kind:
    """What differs between the two enrichable plugin kinds."""

    alias_config: str
    group: str
    noun: str
    interface: str
    plugin_type: PluginType


_TRANSFORMATION = _Kind(
    TRANSFORMS, "Transforms", "transformation", "Transformation", PluginType.TRANSFORMATION
)
_PREDICATE = _Kind(PREDICATES, "Predicates", "predicate", "Predicate", PluginType.PREDICATE)


def aliases(props: Mapping[str, Any], alias_config: str) -> list[str]:
    """The unique aliases of ``transforms``/``predicates`` in order (``[]`` when unset)."""
    raw = props.get(alias_config)
    if raw is None:
        return []
    try:
        parsed = parse_type(alias_config, raw, Type.LIST)
    except ConfigError:
        return []
    if not isinstance(parsed, list):
        return []
    return list(dict.fromkeys(str(a) for a in parsed))


def _resolve(plugins: PluginCatalog, name: object) -> PluginDesc | None:
    if name is None:
        return None
    try:
        return plugins.resolve(str(name).strip())
    except ConnectError:
        return None


class _TypeValidator:
    """The ``<prefix>type`` validator: the negate/predicate check (transformations), then the kind."""

    def __init__(
        self, plugins: PluginCatalog, kind: _Kind, alias: str, prefix: str, props: Mapping[str, Any]
    ):
        self.plugins, self.kind, self.alias, self.prefix, self.props = plugins, kind, alias, prefix, props

    def __call__(self, name: str, value: object) -> None:
        if (
            self.kind is _TRANSFORMATION
            and self.prefix + NEGATE in self.props
            and self.prefix + PREDICATE not in self.props
        ):
            raise ConfigError(
                f"Config '{self.prefix}{NEGATE}' was provided but there is no config '{self.prefix}{PREDICATE}' "
                "defining a predicate to be negated."
            )
        plugin = _resolve(self.plugins, value)
        if plugin is not None and plugin.type is not self.kind.plugin_type:
            raise ConfigError(
                f"Class class {plugin.class_name} does not implement the {self.kind.interface} interface"
            )
        if plugin is not None:
            problem = version_problem(plugin, self.props.get(self.prefix + "plugin.version"))
            if problem is not None:
                raise ConfigError(problem)

    def __str__(self) -> str:
        return f"valid configs for {self.alias} {self.kind.noun}"


def version_problem(plugin: PluginDesc, requirement: object) -> str | None:
    """Why ``plugin`` does not satisfy a ``*.plugin.version`` requirement (``None`` when it does)."""
    if requirement is None:
        return None
    try:
        wanted = parse_version_requirement(str(requirement))
    except VersionRangeError as exc:
        return str(exc)
    if wanted.contains(plugin.version):
        return None
    return (
        f"Plugin {plugin.class_name} not found that matches the version range {wanted}, available versions: "
        f"[{plugin.version}]"
    )


class _VersionValidator:
    """The ``<prefix>plugin.version`` validator: the requirement must parse and match the plugin."""

    def __init__(self, plugins: PluginCatalog, kind: _Kind, type_name: str, props: Mapping[str, Any]):
        self.plugins, self.kind, self.type_name, self.props = plugins, kind, type_name, props

    def __call__(self, name: str, value: object) -> None:
        plugin = _resolve(self.plugins, self.props.get(self.type_name))
        if plugin is None or plugin.type is not self.kind.plugin_type or name not in self.props:
            return
        problem = version_problem(plugin, value)
        if problem is not None:
            raise ConfigError(problem)

    def __str__(self) -> str:
        return "a version range the plugin satisfies"


class _ClassRecommender:
    """Recommends every plugin of the kind (Java's ``ClassRecommender``)."""

    def __init__(self, plugins: PluginCatalog, plugin_type: PluginType) -> None:
        self.names = [p.class_name for p in plugins.plugins(plugin_type)]

    def valid_values(self, name: str, parsed: Mapping[str, object]) -> list[object]:
        return list(self.names)

    def visible(self, name: str, parsed: Mapping[str, object]) -> bool:
        return True


class _VersionRecommender:
    def __init__(self, version: str | None) -> None:
        self.versions = [] if version is None else [version]

    def valid_values(self, name: str, parsed: Mapping[str, object]) -> list[object]:
        return list(self.versions)

    def visible(self, name: str, parsed: Mapping[str, object]) -> bool:
        return True


class _Unprefixed:
    """``ConfigDef.embeddedValidator``: the plugin's validator, called with the unprefixed name."""

    def __init__(self, prefix: str, base: Any) -> None:
        self.prefix, self.base = prefix, base

    def __call__(self, name: str, value: object) -> None:
        self.base(name[len(self.prefix) :], value)

    def __str__(self) -> str:
        return str(self.base)


_IMPORTANCE_ORDER = {Importance.HIGH: 0, Importance.MEDIUM: 1, Importance.LOW: 2}


def _sorted_for_embed(definition: list[ConfigKey]) -> list[ConfigKey]:
    """``ConfigDef.sortedConfigs``: by group, order in group, keys without default first, importance, name."""
    groups: list[str] = []
    for key in definition:
        if key.group is not None and key.group not in groups:
            groups.append(key.group)

    def rank(key: ConfigKey) -> tuple[Any, ...]:
        group = -1 if key.group is None else groups.index(key.group)
        return (group, key.order_in_group, key.has_default, _IMPORTANCE_ORDER[key.importance], key.name)

    return sorted(definition, key=rank)


def _embedded(prefix: str, group: str, start: int, definition: list[ConfigKey]) -> list[ConfigKey]:
    rows = []
    for order, key in enumerate(_sorted_for_embed(definition), start):
        rows.append(
            dataclasses.replace(
                key,
                name=prefix + key.name,
                validator=None if key.validator is None else _Unprefixed(prefix, key.validator),
                group=group if key.group is None else f"{group}: {key.group}",
                order_in_group=order,
                dependents=tuple(prefix + d for d in key.dependents),
            )
        )
    return rows


def _enrich_kind(plugins: PluginCatalog, kind: _Kind, props: Mapping[str, Any]) -> list[ConfigKey]:
    rows: list[ConfigKey] = []
    for alias in aliases(props, kind.alias_config):
        prefix = f"{kind.alias_config}.{alias}."
        group = f"{kind.group}: {alias}"
        type_name = prefix + "type"
        rows.append(
            ConfigKey(
                type_name,
                Type.CLASS,
                validator=_TypeValidator(plugins, kind, alias, prefix, props),
                importance=Importance.HIGH,
                documentation=f"Class for the '{alias}' {kind.noun}.",
                group=group,
                order_in_group=0,
                width=Width.LONG,
                display_name=f"{kind.interface} type for {alias}",
                recommender=_ClassRecommender(plugins, kind.plugin_type),
            )
        )
        plugin = _resolve(plugins, props.get(type_name))
        right_kind = plugin is not None and plugin.type is kind.plugin_type
        version = plugin.version if right_kind and plugin is not None else None
        rows.append(
            ConfigKey(
                prefix + "plugin.version",
                Type.STRING,
                default=version,
                importance=Importance.HIGH,
                documentation=f"Version of the '{alias}' {kind.noun}.",
                group=group,
                order_in_group=1,
                width=Width.LONG,
                display_name=f"{kind.interface} version for {alias}",
                validator=_VersionValidator(plugins, kind, type_name, props),
                recommender=_VersionRecommender(version),
            )
        )
        if plugin is None or not right_kind or version_problem(plugin, props.get(prefix + "plugin.version")):
            continue
        own: list[ConfigKey] = list(_IMPLICIT_TRANSFORM_KEYS) if kind is _TRANSFORMATION else []
        implicit = {k.name for k in own}
        own.extend(k for k in plugin.plugin_class().config() if k.name not in implicit)
        rows.extend(_embedded(prefix, group, 2, own))
    return rows


def enrich(plugins: PluginCatalog, base: ConfigDef, props: Mapping[str, Any]) -> ConfigDef:
    """``ConnectorConfig.enrich(plugins, base, props, false)``: ``base`` plus the per-alias keys."""
    rows = list(base)
    names = {k.name for k in rows}
    for key in _enrich_kind(plugins, _TRANSFORMATION, props) + _enrich_kind(plugins, _PREDICATE, props):
        if key.name not in names:
            names.add(key.name)
            rows.append(key)
    return ConfigDef(rows)


def validate_enriched(
    plugins: PluginCatalog, definition: ConfigDef, props: Mapping[str, str]
) -> dict[str, ConfigValue]:
    """``validateAll`` over an enriched table. A ``*.type`` that names no plugin gets Java's CLASS parse
    error first (``Class X could not be found.``) and no value; one that resolves shows the class name."""
    values = definition.validate(props)
    for kind in (_TRANSFORMATION, _PREDICATE):
        for alias in aliases(props, kind.alias_config):
            name = f"{kind.alias_config}.{alias}.type"
            result = values.get(name)
            if result is None or name not in props:
                continue
            plugin = _resolve(plugins, props[name])
            if plugin is None:
                result.errors.insert(
                    0, str(invalid_value(name, props[name], f"Class {props[name]} could not be found."))
                )
                result.value = None
            else:
                result.value = plugin.class_name
    return values


def _with_prefix(props: Mapping[str, str], prefix: str) -> dict[str, str]:
    return {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}


def _class_for(plugins: PluginCatalog, props: Mapping[str, str], key: str, plugin_type: PluginType) -> type:
    name = props.get(key)
    if name is None:
        raise ConnectError(f"org.apache.kafka.common.config.ConfigException: Unknown configuration '{key}'")
    plugin = _resolve(plugins, name)
    if plugin is None or plugin.type is not plugin_type:
        raise ConnectError(
            f"org.apache.kafka.common.config.ConfigException: Invalid value {name} for configuration {key}"
        )
    problem = version_problem(plugin, props.get(key[: -len("type")] + "plugin.version"))
    if problem is not None:
        raise ConnectError(problem)
    return plugin.plugin_class


def transformation_chain(plugins: PluginCatalog, props: Mapping[str, str]) -> TransformationChain:
    """``ConnectorConfig.transformationStages``: configured stages in ``transforms`` order.

    Raises :class:`ConnectError` (the task fails) when a class or predicate alias cannot be resolved or a
    plugin's ``configure`` rejects its config; stages built before the failure are closed.
    """
    stages: list[TransformationStage] = []
    try:
        for alias in aliases(props, TRANSFORMS):
            prefix = f"{TRANSFORMS}.{alias}."
            transformation: Transformation = _class_for(
                plugins, props, prefix + "type", PluginType.TRANSFORMATION
            )()
            configs = _with_prefix(props, prefix)
            predicate_alias = configs.pop(PREDICATE, None)
            negate = configs.pop(NEGATE, None)
            transformation.configure(configs)
            predicate: Predicate | None = None
            if predicate_alias is not None:
                predicate_prefix = f"{PREDICATES}.{predicate_alias}."
                if predicate_alias not in aliases(props, PREDICATES):
                    # Java reads the class through the enriched config, which only defines listed aliases.
                    raise ConnectError(
                        "org.apache.kafka.common.config.ConfigException: Unknown configuration "
                        f"'{predicate_prefix}type'"
                    )
                predicate = _class_for(plugins, props, predicate_prefix + "type", PluginType.PREDICATE)()
                predicate.configure(_with_prefix(props, predicate_prefix))
            stages.append(
                TransformationStage(alias, transformation, predicate, str(negate).strip().lower() == "true")
            )
    except ConnectError as exc:
        TransformationChain(stages).close()
        if isinstance(exc, ConfigError):
            raise ConnectError(f"org.apache.kafka.common.config.ConfigException: {exc}") from exc
        raise
    return TransformationChain(stages)
