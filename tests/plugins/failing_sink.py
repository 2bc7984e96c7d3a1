"""A sink connector whose tasks fail on demand: ``put`` raises once ``<fail.dir>/fail`` exists
(``ConnectError``), or, while ``<fail.dir>/retry`` exists, a ``RetriableError``. Every record it
accepted is appended (its value, one line) to ``<fail.dir>/records``, so a test sees what was
delivered before the failure."""

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
        if records:
            with open(self.directory / RECORDS_FILE, "a", encoding="utf-8") as out:
                out.write("".join(f"{r.value}\n" for r in records))

    def stop(self) -> None:
        return None
