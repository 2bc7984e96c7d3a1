"""Declarative config tables: the Python twin of Java's ``ConfigDef``.

A table is a :class:`ConfigDef` of :class:`ConfigKey` rows, each declared exactly once. From it come
the parsed, typed values (:meth:`ConfigDef.parse`, used by typed configs such as ``WorkerConfig``),
the ``/config/validate`` results (:meth:`ConfigDef.validate`), the ``/connector-plugins/{type}/config``
definitions and the docs (:mod:`pyconnect.config.info`).

Key order is declaration order and is what REST shows. Tables are immutable once built; combine them
with :meth:`ConfigDef.merge`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pyconnect.config.javastr import invalid_value
from pyconnect.config.types import Importance, Type, Width, parse_type
from pyconnect.config.validators import Validator, ValidList
from pyconnect.errors import ConfigError

log = logging.getLogger(__name__)


class _NoDefault:
    """Sentinel default: the key is required."""

    _instance: _NoDefault | None = None

    def __new__(cls) -> _NoDefault:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT = _NoDefault()


class Recommender(Protocol):
    """``ConfigDef.Recommender``: valid values and visibility given the other parsed values."""

    def valid_values(self, name: str, parsed: Mapping[str, object]) -> list[object]: ...

    def visible(self, name: str, parsed: Mapping[str, object]) -> bool: ...


@dataclass(frozen=True)
class ConfigKey:
    """One row of a config table. ``default`` is parsed (and validated) at construction, like Java.

    ``display_name`` defaults to ``name``; ``group`` ``None`` and ``order_in_group`` ``-1`` mean ungrouped.
    """

    name: str
    type: Type
    default: object = NO_DEFAULT
    importance: Importance = Importance.LOW
    documentation: str = ""
    validator: Validator | None = None
    group: str | None = None
    order_in_group: int = -1
    width: Width = Width.NONE
    display_name: str = ""
    dependents: tuple[str, ...] = ()
    recommender: Recommender | None = field(default=None, compare=False)
    internal: bool = False
    loadable: Callable[[str], bool] | None = field(default=None, compare=False)
    """CLASS keys: whether this runtime has the named class. Java finds out while parsing
    (``Class.forName``), so it is part of parsing here too, not a validator (Java's table shows none)."""

    def parse(self, value: object) -> object:
        """``ConfigDef.parseType`` for this key, class lookup included."""
        parsed = parse_type(self.name, value, self.type)
        if self.loadable is not None and isinstance(parsed, str) and not self.loadable(parsed):
            raise invalid_value(self.name, value, f"Class {parsed} could not be found.")
        return parsed

    def __post_init__(self) -> None:
        if not self.display_name:
            object.__setattr__(self, "display_name", self.name)
        object.__setattr__(self, "dependents", tuple(self.dependents))
        if self.has_default:
            parsed = self.parse(self.default)
            object.__setattr__(self, "default", parsed)
            if self.validator is not None:
                self.validator(self.name, parsed)

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def required(self) -> bool:
        return not self.has_default


@dataclass
class ConfigValue:
    """``org.apache.kafka.common.config.ConfigValue``: one key's validation result."""

    name: str
    value: object = None
    recommended_values: list[object] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True


def _missing(name: str) -> ConfigError:
    return ConfigError(f'Missing required configuration "{name}" which has no default value.')


class ConfigDef:
    """An ordered, immutable set of :class:`ConfigKey` with Java's parse and validate semantics."""

    def __init__(self, keys: Iterable[ConfigKey] = ()) -> None:
        self._keys: dict[str, ConfigKey] = {}
        self._groups: list[str] = []
        for key in keys:
            if key.name in self._keys:
                raise ValueError(f"Configuration {key.name} is defined twice.")
            self._keys[key.name] = key
            if key.group is not None and key.group not in self._groups:
                self._groups.append(key.group)

    @property
    def keys(self) -> Mapping[str, ConfigKey]:
        return self._keys

    @property
    def groups(self) -> Sequence[str]:
        """Group names in order of first declaration (REST ``groups``)."""
        return tuple(self._groups)

    def names(self) -> list[str]:
        return list(self._keys)

    def attribute_names(self) -> dict[str, str]:
        """``{attribute: key name}`` for a typed config's generated attributes: ``.`` and ``-`` become ``_``
        (``offset-syncs.topic.location`` -> ``offset_syncs_topic_location``)."""
        return {name.replace(".", "_").replace("-", "_"): name for name in self._keys}

    def __contains__(self, name: object) -> bool:
        return name in self._keys

    def __getitem__(self, name: str) -> ConfigKey:
        return self._keys[name]

    def __iter__(self) -> Iterator[ConfigKey]:
        return iter(self._keys.values())

    def __len__(self) -> int:
        return len(self._keys)

    def merge(self, *others: ConfigDef | Iterable[ConfigKey]) -> ConfigDef:
        """A new table: these keys, then the others' (a name declared twice is an error)."""
        rows = list(self._keys.values())
        for other in others:
            rows.extend(other)
        return ConfigDef(rows)

    def default_values(self) -> dict[str, object]:
        return {k.name: k.default for k in self._keys.values() if k.has_default}

    def parse(self, props: Mapping[str, object]) -> dict[str, object]:
        """Parse and validate every declared key (``ConfigDef.parse``); the first problem raises.

        Unknown keys in ``props`` are ignored. A list key with a :class:`ValidList` validator has its
        duplicates removed (first occurrence kept, with a warning) before validation, as Kafka 4 does.
        """
        undefined = self._undefined_dependents()
        if undefined:
            raise ConfigError(
                "Some configurations in are referred in the dependents, but not defined: "
                + ",".join(undefined)
            )
        return {key.name: self._parse_value(key, props) for key in self._keys.values()}

    def _parse_value(self, key: ConfigKey, props: Mapping[str, object]) -> object:
        if key.name in props:
            value = key.parse(props[key.name])
        elif not key.has_default:
            raise _missing(key.name)
        else:
            value = key.default
        if isinstance(key.validator, ValidList) and isinstance(value, list):
            unique = list(dict.fromkeys(value))
            if len(unique) != len(value):
                log.warning(
                    'Configuration key "%s" contains duplicate values. Duplicates will be removed. '
                    "The original value is: %s, the updated value is: %s",
                    key.name,
                    value,
                    unique,
                )
                value = unique
        if key.validator is not None:
            key.validator(key.name, value)
        return value

    def validate(self, props: Mapping[str, str | None]) -> dict[str, ConfigValue]:
        """``ConfigDef.validateAll``: every error collected, one :class:`ConfigValue` per key in order.

        Each key gets its parse error or missing-key error, then its validator's error (run even on a
        failed parse, with value ``None``, as Java does), then recommender values and visibility
        computed from all parsed values. Dependents are visited after their parent.
        """
        results = {name: ConfigValue(name) for name in self._keys}
        for name in self._undefined_dependents():
            results[name] = ConfigValue(
                name, errors=[f"{name} is referred in the dependents, but not defined."], visible=False
            )
        parsed: dict[str, object] = {}
        roots = self._roots()
        for name in roots:
            self._parse_for_validate(name, props, parsed, results, set())
        for name in roots:
            self._recommend(name, parsed, results, set())
        return results

    def _parse_for_validate(
        self,
        name: str,
        props: Mapping[str, str | None],
        parsed: dict[str, object],
        results: dict[str, ConfigValue],
        seen: set[str],
    ) -> None:
        if name not in self._keys or name in seen:
            return
        seen.add(name)
        key = self._keys[name]
        result = results[name]
        value: object = None
        if name in props:
            try:
                value = key.parse(props[name])
            except ConfigError as exc:
                result.errors.append(str(exc))
        elif not key.has_default:
            result.errors.append(str(_missing(name)))
        else:
            value = key.default
        if key.validator is not None:
            try:
                key.validator(name, value)
            except ConfigError as exc:
                result.errors.append(str(exc))
        result.value = value
        parsed[name] = value
        for dependent in key.dependents:
            self._parse_for_validate(dependent, props, parsed, results, seen)

    def _recommend(
        self, name: str, parsed: Mapping[str, object], results: dict[str, ConfigValue], seen: set[str]
    ) -> None:
        if name not in self._keys or name in seen:
            return
        seen.add(name)
        key = self._keys[name]
        result = results[name]
        if key.recommender is not None:
            try:
                recommended = list(key.recommender.valid_values(name, parsed))
                if result.recommended_values:
                    allowed = set(result.recommended_values)
                    recommended = [v for v in recommended if v in allowed]
                result.recommended_values = recommended
                result.visible = key.recommender.visible(name, parsed)
            except ConfigError as exc:
                result.errors.append(str(exc))
        for dependent in key.dependents:
            self._recommend(dependent, parsed, results, seen)

    def _undefined_dependents(self) -> list[str]:
        missing: list[str] = []
        for key in self._keys.values():
            for dependent in key.dependents:
                if dependent not in self._keys and dependent not in missing:
                    missing.append(dependent)
        return missing

    def _roots(self) -> list[str]:
        children = {d for key in self._keys.values() for d in key.dependents}
        return [name for name in self._keys if name not in children]
