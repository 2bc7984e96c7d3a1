"""A transformation that fails on demand with a retriable error (``RetriableError``), for the
retry-with-tolerance tests: each record whose value (as text) is one of ``values`` fails the first
``failures`` times this instance sees it, then passes unchanged; every other record passes at once.
The attempts per value are appended to ``<attempts.file>`` (one ``value`` line per call), so a test
sees how often the runtime called it. Registered as ``org.pyconnect.test.FlakyTransformation``, the
name of its Java twin (tests/compat/java/FlakyTransformation.java)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyconnect.api.source import SourceRecord
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.types import Importance, Type
from pyconnect.errors import RetriableError
from pyconnect.transforms.base import Transformation

VALUES_CONFIG = "values"
FAILURES_CONFIG = "failures"
ATTEMPTS_FILE_CONFIG = "attempts.file"
MESSAGE = "flaky on demand"


class FlakyTransformation(Transformation):
    CONFIG_DEF = ConfigDef(
        [
            ConfigKey(VALUES_CONFIG, Type.LIST, default="", importance=Importance.HIGH),
            ConfigKey(FAILURES_CONFIG, Type.INT, default=1, importance=Importance.HIGH),
            ConfigKey(ATTEMPTS_FILE_CONFIG, Type.STRING, default="", importance=Importance.LOW),
        ]
    )

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.values = set(parsed[VALUES_CONFIG] or [])
        self.failures = int(parsed[FAILURES_CONFIG])
        self.attempts_file = parsed[ATTEMPTS_FILE_CONFIG] or ""
        self.seen: dict[str, int] = {}

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        value = str(record.value)
        if value not in self.values:
            return record
        if self.attempts_file:
            with open(self.attempts_file, "a", encoding="utf-8") as out:
                out.write(value + "\n")
        count = self.seen[value] = self.seen.get(value, 0) + 1
        if count <= self.failures:
            raise RetriableError(f"{MESSAGE}: {value} (attempt {count})")
        return record
