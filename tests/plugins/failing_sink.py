"""A sink connector whose tasks fail on demand: ``put`` raises once ``<fail.dir>/fail`` exists
(``ConnectError``), or, while ``<fail.dir>/retry`` exists, a ``RetriableError``. Every record it
accepted is appended (its value, one line) to ``<fail.dir>/records``, so a test sees what was
delivered before the failure. A record whose value is ``"errant"`` is not written but handed to the
task's errant-record reporter (KIP-610), whose write the task waits for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pyconnect.api.sink import SinkConnector, SinkRecord, SinkTask
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.types import Importance, Type
from pyconnect.errors import ConnectError, RetriableError

FAIL_DIR_CONFIG = "fail.dir"
FAIL_FILE = "fail"
RETRY_FILE = "retry"
RECORDS_FILE = "records"
FAILURE_MESSAGE = "put() failed on demand"
ERRANT_VALUE = "errant"
ERRANT_MESSAGE = "errant on demand"


class FailingSinkConnector(SinkConnector):
    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self._props = dict(props)

    def task_class(self) -> type:
        return FailingSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        return None

    def config(self) -> ConfigDef:
        return ConfigDef([ConfigKey(FAIL_DIR_CONFIG, Type.STRING, importance=Importance.HIGH)])


class FailingSinkTask(SinkTask):
    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self.directory = Path(props[FAIL_DIR_CONFIG])
        self.retries = 0

    def put(self, records: Sequence[SinkRecord]) -> None:
        if (self.directory / FAIL_FILE).exists():
            raise ConnectError(FAILURE_MESSAGE)
        if records and (self.directory / RETRY_FILE).exists():
            self.retries += 1
            self.context.timeout(100)
            raise RetriableError(f"retry {self.retries}")
        kept = []
        for record in records:
            reporter = self.context.errant_record_reporter()
            if record.value == ERRANT_VALUE and reporter is not None:
                written = reporter.report(record, ValueError(ERRANT_MESSAGE))
                written.result(timeout=30)  # type: ignore[union-attr]  # a plain put gets a concurrent future
            else:
                kept.append(record)
        if kept:
            with open(self.directory / RECORDS_FILE, "a", encoding="utf-8") as out:
                out.write("".join(f"{r.value}\n" for r in kept))

    def stop(self) -> None:
        return None
