"""REST and documentation views of a config table (Java ``AbstractHerder.generateResult`` and ``toRst``).

JSON shapes (key order as Jackson writes them in Kafka 4.3.1):

* ``ConfigKeyInfo``: ``name, type, required, default_value, importance, documentation, group,
  order_in_group, width, display_name, dependents``; ``default_value`` is ``null`` for required keys
  and ``"[hidden]"`` for password defaults.
* ``ConfigValueInfo``: ``name, value, recommended_values, errors, visible``; ``value`` is the parsed
  value rendered with ``convertToString`` (passwords ``"[hidden]"``, lists comma-joined).
* ``ConfigInfos``: ``name, error_count, groups, configs``; ``configs`` first holds values for names the
  table does not declare (``definition: null``), then one entry per declared key in declaration order
  (``value: null`` if not validated); ``error_count`` is the total number of error messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pyconnect.config.definition import ConfigDef, ConfigKey, ConfigValue
from pyconnect.config.types import Importance, Type, convert_to_string


def config_key_info(key: ConfigKey, prefix: str = "") -> dict[str, Any]:
    """The ``definition`` JSON of one key; ``prefix`` renames it (e.g. ``producer.override.``)."""
    return {
        "name": prefix + key.name,
        "type": key.type.value,
        "required": key.required,
        "default_value": convert_to_string(key.default, key.type) if key.has_default else None,
        "importance": key.importance.value,
        "documentation": key.documentation,
        "group": key.group,
        "order_in_group": key.order_in_group,
        "width": key.width.value,
        "display_name": key.display_name,
        "dependents": list(key.dependents),
    }


def config_value_info(value: ConfigValue, type_: Type | None) -> dict[str, Any]:
    """The ``value`` JSON of one validation result; ``type_`` is ``None`` for undeclared names."""
    element_type = Type.STRING if type_ is Type.LIST else type_
    return {
        "name": value.name,
        "value": convert_to_string(value.value, type_),
        "recommended_values": [convert_to_string(v, element_type) for v in value.recommended_values],
        "errors": list(value.errors),
        "visible": value.visible,
    }


def config_infos(
    name: str,
    definition: ConfigDef,
    values: Iterable[ConfigValue],
    groups: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The ``ConfigInfos`` JSON of ``PUT /connector-plugins/{type}/config/validate``."""
    by_name: dict[str, ConfigValue] = {}
    configs: list[dict[str, Any]] = []
    error_count = 0
    for value in values:
        by_name[value.name] = value
        if value.name not in definition:
            configs.append({"definition": None, "value": config_value_info(value, None)})
            error_count += len(value.errors)
    for key in definition:
        found = by_name.get(key.name)
        if found is not None:
            error_count += len(found.errors)
        configs.append(
            {
                "definition": config_key_info(key),
                "value": None if found is None else config_value_info(found, key.type),
            }
        )
    return {
        "name": name,
        "error_count": error_count,
        "groups": list(definition.groups if groups is None else groups),
        "configs": configs,
    }


def error_messages(values: Mapping[str, ConfigValue] | Iterable[ConfigValue]) -> list[str]:
    """Every error message of a validation result, in key order."""
    items = values.values() if isinstance(values, Mapping) else values
    return [message for value in items for message in value.errors]


_IMPORTANCE_ORDER = {Importance.HIGH: 0, Importance.MEDIUM: 1, Importance.LOW: 2}


def sorted_keys(definition: ConfigDef) -> list[ConfigKey]:
    """Java's doc order: ungrouped first, then by group, order in group, required first, importance, name."""
    group_ord = {group: i for i, group in enumerate(definition.groups)}

    def sort_key(key: ConfigKey) -> tuple[int, int, int, int, int, str]:
        grouped = 0 if key.group is None else 1
        return (
            grouped,
            group_ord.get(key.group, -1) if key.group is not None else 0,
            key.order_in_group,
            0 if key.required else 1,
            _IMPORTANCE_ORDER[key.importance],
            key.name,
        )

    return sorted(definition, key=sort_key)


def _divide_out(value: int, divisors: Sequence[int]) -> tuple[int, int]:
    i = 0
    while value != 0 and i < len(divisors) and value % divisors[i] == 0:
        value //= divisors[i]
        i += 1
    return value, i


def _nice_memory(value: int) -> str:
    value, i = _divide_out(value, [1024] * 4)
    if i == 0:
        return ""
    unit = ["kibibyte", "mebibyte", "gibibyte", "tebibyte"][i - 1]
    return f" ({value} {unit}{'' if value == 1 else 's'})"


def _nice_time(value: int) -> str:
    value, i = _divide_out(value, [1000, 60, 60, 24])
    if i == 0:
        return ""
    unit = ["second", "minute", "hour", "day"][i - 1]
    return f" ({value} {unit}{'s' if value > 1 else ''})"


def _default_text(key: ConfigKey) -> str:
    if key.default is None:
        return "null"
    text = convert_to_string(key.default, key.type) or ""
    if not text:
        return '""'
    if isinstance(key.default, int) and not isinstance(key.default, bool):
        if key.name.endswith(".bytes"):
            text += _nice_memory(key.default)
        elif key.name.endswith(".ms"):
            text += _nice_time(key.default)
    return text


def to_rst(definition: ConfigDef) -> str:
    """``ConfigDef.toRst()``: the reStructuredText reference of every non-internal key."""
    out: list[str] = []
    for key in sorted_keys(definition):
        if key.internal:
            continue
        out.append(f"``{key.name}``\n")
        for line in key.documentation.split("\n"):
            if line:
                out.append(f"  {line}\n\n")
        out.append(f"  * Type: {key.type.value.lower()}\n")
        if key.has_default:
            out.append(f"  * Default: {_default_text(key)}\n")
        if key.validator is not None:
            out.append(f"  * Valid Values: {key.validator}\n")
        out.append(f"  * Importance: {key.importance.value.lower()}\n")
        out.append("\n")
    return "".join(out)
