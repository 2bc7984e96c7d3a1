"""Topic routers and the unconditional drop: ``RegexRouter``, ``TimestampRouter`` and ``Filter``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pyconnect.api.source import SourceRecord
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.javastr import invalid_value
from pyconnect.config.types import Importance, Type
from pyconnect.config.validators import LambdaValidator
from pyconnect.errors import ConfigError, DataError
from pyconnect.java_regex import JavaRegexError, compile_java_regex
from pyconnect.transforms.base import Transformation
from pyconnect.transforms.date_format import JavaDateFormat


def java_pattern_message(pattern: str, exc: JavaRegexError) -> str:
    """``PatternSyntaxException.getMessage``: the reason, the pattern, and a caret under the index."""
    text = f"{exc}\n{pattern}"
    index = str(exc).rsplit(" near index ", 1)
    if len(index) == 2 and index[1].isdigit() and int(index[1]) < len(pattern):
        text += "\n" + " " * int(index[1]) + "^"
    return text


def _valid_regex(name: str, value: object) -> None:
    """The transforms' ``RegexValidator``; a pattern we cannot run on Python's ``re`` is refused too."""
    if value is None:
        # Java's validator hands null to Pattern.compile and reports the NullPointerException.
        raise invalid_value(
            name, value, 'Invalid regex: Cannot invoke "String.isEmpty()" because "this.pattern" is null'
        )
    try:
        compile_java_regex(str(value))
    except JavaRegexError as exc:
        raise invalid_value(name, value, f"Invalid regex: {java_pattern_message(str(value), exc)}") from exc


VALID_REGEX = LambdaValidator(_valid_regex, "valid regex")


def java_replacement(pattern: re.Pattern[str], replacement: str) -> Any:
    """A ``re.sub`` replacement function for a ``java.util.regex.Matcher`` replacement string:
    ``$n`` (the longest group number that exists), ``${name}``, and ``\\`` escaping the next char.
    Invalid references raise :class:`DataError` with Java's wording when the replacement is used."""

    def expand(match: re.Match[str]) -> str:
        out: list[str] = []
        i = 0
        while i < len(replacement):
            c = replacement[i]
            if c == "\\":
                i += 1
                if i >= len(replacement):
                    raise DataError("character to be escaped is missing")
                out.append(replacement[i])
                i += 1
            elif c == "$":
                i += 1
                if i >= len(replacement):
                    raise DataError("Illegal group reference: group index is missing")
                if replacement[i] == "{":
                    end = replacement.find("}", i)
                    if end < 0:
                        raise DataError("named capturing group is missing trailing '}'")
                    name = replacement[i + 1 : end]
                    if name not in pattern.groupindex:
                        raise DataError(f"No group with name {{{name}}}")
                    out.append(match.group(name) or "")
                    i = end + 1
                else:
                    if not replacement[i].isdigit():
                        raise DataError("Illegal group reference")
                    number = int(replacement[i])
                    if number > pattern.groups:
                        raise DataError(f"No group {number}")
                    i += 1
                    while i < len(replacement) and replacement[i].isdigit():
                        longer = number * 10 + int(replacement[i])
                        if longer > pattern.groups:
                            break
                        number = longer
                        i += 1
                    out.append(match.group(number) or "")
            else:
                out.append(c)
                i += 1
        return "".join(out)

    return expand


class RegexRouter(Transformation):
    """Renames the topic when the whole topic matches ``regex``: ``Matcher.replaceFirst(replacement)``."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey(
                "regex",
                Type.STRING,
                validator=VALID_REGEX,
                importance=Importance.HIGH,
                documentation="Regular expression to use for matching.",
            ),
            ConfigKey(
                "replacement", Type.STRING, importance=Importance.HIGH, documentation="Replacement string."
            ),
        ]
    )

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self._regex = compile_java_regex(str(parsed["regex"]))
        self._replace = java_replacement(self._regex, str(parsed["replacement"]))

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        if self._regex.fullmatch(record.topic) is None:
            return record
        return record.new_record(topic=self._regex.sub(self._replace, record.topic, count=1))


class TimestampRouter(Transformation):
    """Topic from ``topic.format`` with ``${topic}`` and ``${timestamp}`` (the record timestamp in UTC,
    formatted with ``timestamp.format``, a ``SimpleDateFormat`` pattern). A pattern that is not valid
    fails ``configure`` here; Java builds the formatter lazily and fails the first ``apply``."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey(
                "topic.format",
                Type.STRING,
                default="${topic}-${timestamp}",
                importance=Importance.HIGH,
                documentation="Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively.",
            ),
            ConfigKey(
                "timestamp.format",
                Type.STRING,
                default="yyyyMMdd",
                importance=Importance.HIGH,
                documentation="Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>.",
            ),
        ]
    )

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self._topic_format = str(parsed["topic.format"])
        try:
            self._timestamp_format = JavaDateFormat(str(parsed["timestamp.format"]))
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        if record.timestamp is None:
            raise DataError(f"Timestamp missing on record: {record}")
        formatted = self._timestamp_format.format(record.timestamp)
        topic = self._topic_format.replace("${topic}", record.topic).replace("${timestamp}", formatted)
        return record.new_record(topic=topic)


class Filter(Transformation):
    """Drops every record; meant to be guarded by a predicate."""

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        return None
