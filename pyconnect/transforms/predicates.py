"""The built-in predicates: ``TopicNameMatches``, ``HasHeaderKey`` and ``RecordIsTombstone``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyconnect.api.source import SourceRecord
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.javastr import invalid_value
from pyconnect.config.types import Importance, Type
from pyconnect.config.validators import CompositeValidator, NonEmptyString
from pyconnect.java_regex import JavaRegexError, compile_java_regex
from pyconnect.transforms.base import Predicate
from pyconnect.transforms.routers import VALID_REGEX, java_pattern_message


class TopicNameMatches(Predicate):
    """True when the whole topic name matches ``pattern`` (a Java regex)."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey("pattern", Type.STRING, validator=CompositeValidator(NonEmptyString(), VALID_REGEX),
                      importance=Importance.MEDIUM,
                      documentation="A Java regular expression for matching against the name of a record's topic."),
        ]
    )  # fmt: skip

    def configure(self, configs: Mapping[str, Any]) -> None:
        value = str(self.CONFIG_DEF.parse(configs)["pattern"])
        try:
            self._pattern = compile_java_regex(value)
        except JavaRegexError as exc:
            raise invalid_value(
                "pattern",
                value,
                f"entry must be a Java-compatible regular expression: {java_pattern_message(value, exc)}",
            ) from exc

    def test(self, record: SourceRecord) -> bool:
        return record.topic is not None and self._pattern.fullmatch(record.topic) is not None


class HasHeaderKey(Predicate):
    """True when the record has at least one header called ``name``."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey("name", Type.STRING, validator=NonEmptyString(), importance=Importance.MEDIUM,
                      documentation="The header name."),
        ]
    )  # fmt: skip

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._name = str(self.CONFIG_DEF.parse(configs)["name"])

    def test(self, record: SourceRecord) -> bool:
        return any(header.key == self._name for header in record.headers)


class RecordIsTombstone(Predicate):
    """True when the record's value is null."""

    def test(self, record: SourceRecord) -> bool:
        return record.value is None
