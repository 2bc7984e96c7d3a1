"""Port of Java's ``FileStreamSinkConnector`` / ``FileStreamSinkTask``: every record's value as one
line (Java's ``String.valueOf``: ``null`` for a missing value) appended to ``file``, or to standard
output when ``file`` is unset or empty. ``flush`` flushes the file; offsets are the framework's
(``alter_offsets`` accepts any change, as Java's does).

The task's methods are plain: the runtime runs them on a plugin thread, so file I/O never blocks the
worker's event loop. A file is opened unbuffered in append mode and each ``put`` writes its whole batch
in one call, so tasks of several workers appending to one file never cut each other's lines.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Collection, Mapping, Sequence
from typing import IO, Any

import pyconnect
from pyconnect.api.sink import SinkConnector, SinkRecord, SinkTask, TopicPartition
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.types import Importance, Type
from pyconnect.errors import ConnectError

log = logging.getLogger(__name__)

FILE_CONFIG = "file"
CONFIG_DEF = ConfigDef(
    [
        ConfigKey(
            FILE_CONFIG,
            Type.STRING,
            None,
            importance=Importance.HIGH,
            documentation="Destination filename. If not specified, the standard output will be used",
        )
    ]
)


def java_text(value: Any) -> str:
    """``String.valueOf`` for the values converters produce."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class FileStreamSinkConnector(SinkConnector):
    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    def start(self, props: Mapping[str, str]) -> None:
        self._props = dict(props)
        filename = CONFIG_DEF.parse(props).get(FILE_CONFIG) or "standard output"
        log.info("Starting file sink connector writing to %s", filename)

    def task_class(self) -> type:
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        return None

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def alter_offsets(self, config: Mapping[str, str], offsets: Mapping[TopicPartition, int | None]) -> bool:
        return True


class FileStreamSinkTask(SinkTask):
    def __init__(self) -> None:
        self.filename: str | None = None
        self._out: IO[bytes] | None = None
        self._stdout = False

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    def start(self, props: Mapping[str, str]) -> None:
        configured = CONFIG_DEF.parse(props).get(FILE_CONFIG)
        self.filename = str(configured) if configured else None
        if self.filename is None:
            self._stdout = True
            return
        try:
            self._out = open(self.filename, "ab", buffering=0)
        except OSError as exc:
            raise ConnectError(
                f"Couldn't find or create file '{self.filename}' for FileStreamSinkTask"
            ) from exc

    def put(self, records: Sequence[SinkRecord]) -> None:
        if not records:
            return
        text = "".join(java_text(r.value) + "\n" for r in records)
        if self._stdout:
            sys.stdout.write(text)
        elif self._out is not None:
            data = text.encode()
            written = self._out.write(data)
            if written != len(data):  # a regular file takes all of it; a full disk does not
                raise ConnectError(f"Wrote {written} of {len(data)} bytes to '{self.filename}'")

    def flush(self, current_offsets: Mapping[TopicPartition, int]) -> None:
        if self._stdout:
            sys.stdout.flush()

    def close(self, partitions: Collection[TopicPartition]) -> None:
        return None

    def stop(self) -> None:
        out, self._out = self._out, None
        if out is not None:
            out.close()
