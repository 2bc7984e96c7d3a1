"""KIP-821 field paths (``field.syntax.version``): ``V1`` names one top-level field; ``V2`` is a
dotted path where a step holding dots is wrapped in backticks (a backtick before a dot is escaped with
a backslash)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyconnect.api.data import Field, Schema, Struct
from pyconnect.config.definition import ConfigKey
from pyconnect.config.types import Importance, Type
from pyconnect.config.validators import CaseInsensitiveValidString
from pyconnect.errors import ConfigError
from pyconnect.transforms.base import require_map, require_struct

FIELD_SYNTAX_VERSION_CONFIG = "field.syntax.version"
FIELD_SYNTAX_VERSION_KEY = ConfigKey(
    FIELD_SYNTAX_VERSION_CONFIG,
    Type.STRING,
    default="V1",
    validator=CaseInsensitiveValidString("V1", "V2"),
    importance=Importance.HIGH,
    documentation='Defines the version of the syntax to access fields. If set to <code>V1</code>, then the field paths are limited to access the elements at the root level of the struct or map. If set to <code>V2</code>, the syntax will support accessing nested elements. To access nested elements, dotted notation is used. If dots are already included in the field name, then backtick pairs can be used to wrap field names containing dots. E.g. to access the subfield <code>baz</code> from a field named "foo.bar" in a struct/map the following format can be used to access its elements: "<code>foo.bar</code>.baz".',
)


def _incomplete(path: str, at: int) -> ConfigError:
    return ConfigError(
        f"Incomplete backtick pair in path: [{path}], consider adding a backslash before backtick at "
        f"position {at} to escape it"
    )


def _steps_v2(path: str) -> list[str]:
    steps: list[str] = []
    idx = 0
    while 0 <= idx < len(path):
        if path[idx] != "`":
            start = idx
            idx = path.find(".", idx)
            if idx >= 0:
                steps.append(path[start:idx])
                idx += 1
            else:
                steps.append(path[start:])
            continue
        backtick_at = idx
        idx += 1
        field: list[str] = []
        start = idx
        while True:
            idx = path.find("`", idx)
            if idx == -1:
                raise _incomplete(path, backtick_at)
            escaped = path[idx - 1] == "\\"
            if idx >= len(path) - 1:
                if escaped:
                    raise _incomplete(path, backtick_at)
                field.append(path[start:idx])
                steps.append("".join(field))
                idx += 1
                break
            if path[idx + 1] != ".":
                idx += 1
                continue
            if escaped:
                field.append(path[start : idx - 1] + "`")
                idx += 1
                start = idx
                continue
            field.append(path[start:idx])
            steps.append("".join(field))
            idx += 2
            break
    if path.endswith("."):
        steps.append("")
    return steps


class SingleFieldPath:
    """One parsed path; ``field_from`` walks a schema, ``value_from`` a Struct or a map."""

    def __init__(self, path: str, version: str) -> None:
        self.steps = [path] if version.upper() == "V1" else _steps_v2(path)

    def field_from(self, schema: Schema | None) -> Field | None:
        if schema is None:
            return None
        current = schema
        for step in self.steps[:-1]:
            found = current.field(step)
            if found is None:
                return None
            current = found.schema
        return current.field(self.steps[-1])

    def value_from_struct(self, struct: Struct | None, with_default: bool = True) -> Any:
        if struct is None:
            return None
        current = struct
        for step in self.steps[:-1]:
            if current.schema.field(step) is None:
                return None
            sub = current.get(step)
            if sub is None:
                return None
            current = require_struct(sub, "nested field access")
        last = self.steps[-1]
        if current.schema.field(last) is None:
            return None
        return current.get(last) if with_default else current.get_without_default(last)

    def value_from_map(self, value: Mapping[str, Any] | None) -> Any:
        if value is None:
            return None
        current: Mapping[str, Any] = value
        for step in self.steps[:-1]:
            sub = current.get(step)
            if sub is None:
                return None
            current = require_map(sub, "nested field access")
        return current.get(self.steps[-1])
