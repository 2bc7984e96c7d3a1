"""JsonLinesSink: appends every record it reads to a file as one JSON line.

Config (:data:`CONFIG_DEF`): ``file`` (required; an absolute path whose directory exists) and
``fsync`` (default true: ``flush`` syncs the file to disk). Plus the framework's ``topics`` or
``topics.regex``.

Each line is ``{"topic", "partition", "offset", "timestamp", "key", "value"}``. A record whose key or
value JSON cannot hold (``bytes`` from the ByteArrayConverter, a ``Struct`` from a converter with
schemas, a NaN) goes to the connector's errant-record reporter (the dead-letter queue, when
``errors.deadletterqueue.topic.name`` is set) and the rest of its batch is written; without a
reporter it fails the task.

Delivery: the worker commits a partition's offset only after ``pre_commit`` returned it, and the
default ``pre_commit`` calls ``flush`` first; ``flush`` syncs the file, so every committed offset is
on disk. After a crash the records since the last commit are delivered (and appended) again: at least
once.

The task's methods are plain: the worker runs them on its plugin threads, where file I/O may block.
Each ``put`` appends its batch with one ``O_APPEND`` write, so tasks appending to one file do not cut
each other's lines.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from pyconnect.api.sink import SinkConnector, SinkRecord, SinkTask, TopicPartition
from pyconnect.config import ConfigDef, ConfigKey, ConfigValue, Importance, Type
from pyconnect.errors import ConfigError, ConnectError

from pyconnect_example import __version__

FILE_CONFIG = "file"
FSYNC_CONFIG = "fsync"


def absolute_path(name: str, value: object) -> None:
    """A config validator: ``value`` must be an absolute path (a worker's working directory is its own).
    ``None`` (a missing key, already reported as missing) passes."""
    if value is None:
        return
    if not isinstance(value, str) or not os.path.isabs(value):
        raise ConfigError(f"Invalid value {value} for configuration {name}: must be an absolute path")


CONFIG_DEF = ConfigDef(
    [
        ConfigKey(
            FILE_CONFIG,
            Type.STRING,
            importance=Importance.HIGH,
            documentation="The file every record is appended to, one JSON line each.",
            validator=absolute_path,
        ),
        ConfigKey(
            FSYNC_CONFIG,
            Type.BOOLEAN,
            True,
            importance=Importance.MEDIUM,
            documentation="Sync the file to disk before offsets are committed.",
        ),
    ]
)


def json_line(record: SinkRecord) -> str:
    """One record as a JSON line; ``TypeError``/``ValueError`` when JSON cannot hold its key or value."""
    fields = {
        "topic": record.topic,
        "partition": record.kafka_partition,
        "offset": record.kafka_offset,
        "timestamp": record.timestamp,
        "key": record.key,
        "value": record.value,
    }
    return json.dumps(fields, allow_nan=False, separators=(",", ":")) + "\n"


class JsonLinesSinkConnector(SinkConnector):
    """Gives every task the connector's config; checks at validation that the file's directory exists."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return __version__

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def validate(self, props: Mapping[str, str | None]) -> dict[str, ConfigValue]:
        """The keys' own checks, then one that needs the file system (a plain method: it runs on a
        plugin thread, where I/O is allowed)."""
        results = super().validate(props)
        file = results[FILE_CONFIG]
        if not file.errors:
            directory = Path(str(file.value)).parent
            if not directory.is_dir():
                file.errors.append(
                    f"Invalid value {file.value} for configuration {FILE_CONFIG}: "
                    f"the directory {directory} does not exist"
                )
        return results

    def start(self, props: Mapping[str, str]) -> None:
        CONFIG_DEF.parse(props)
        self._props = dict(props)

    def task_class(self) -> type:
        return JsonLinesSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        return None


class JsonLinesSinkTask(SinkTask):
    """Writes in ``put``, syncs in ``flush``, closes the file in ``stop``."""

    def __init__(self) -> None:
        self._fd: int | None = None

    def version(self) -> str:
        return __version__

    def start(self, props: Mapping[str, str]) -> None:
        config = CONFIG_DEF.parse(props)
        self.path = str(config[FILE_CONFIG])
        self.fsync = bool(config[FSYNC_CONFIG])
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            raise ConnectError(f"Cannot open {self.path} for appending: {exc}") from exc

    def put(self, records: Sequence[SinkRecord]) -> None:
        lines = []
        for record in records:
            try:
                lines.append(json_line(record))
            except (TypeError, ValueError) as exc:
                self._reject(record, exc)
        if lines:
            self._append("".join(lines).encode())

    def _reject(self, record: SinkRecord, error: Exception) -> None:
        reporter = self.context.errant_record_reporter()
        where = f"{record.topic}-{record.kafka_partition}@{record.kafka_offset}"
        if reporter is None:
            raise ConnectError(f"Record {where} cannot be written as JSON: {error}") from error
        # The worker writes the dead-letter copy before it commits this record's offset: no need to
        # wait for the returned future here.
        reporter.report(record, ConnectError(f"Record {where} cannot be written as JSON: {error}"))

    def _append(self, data: bytes) -> None:
        if self._fd is None:
            raise ConnectError(f"{self.path} is closed")
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def flush(self, current_offsets: Mapping[TopicPartition, int]) -> None:
        if self.fsync and self._fd is not None:
            os.fsync(self._fd)

    def stop(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
