"""Port of Java's ``FileStreamSourceConnector`` / ``FileStreamSourceTask``, the connector of Kafka's
quick start: every line of ``file`` becomes one record (a STRING value, no key) on ``topic``, at
most ``batch.size`` records per poll; standard input is read when ``file`` is unset or empty.

Config keys (Java's table, in Java's order): ``file`` (STRING, default none: standard input),
``topic`` (STRING, required, non-empty), ``batch.size`` (INT, default 2000). One task, whatever
``tasks.max`` says: only one reader of a stream makes sense.

Offsets are Java's: source partition ``{"filename": <file>}``, source offset ``{"position": <n>}``,
``n`` the position just past the record's line. A restarted task resumes where the committed
position says; for standard input both are ``null``, as Java writes them, and nothing is resumed.
Positions count bytes of the file (Java counts decoded characters but skips that many bytes on
resume, which is the same for ASCII and wrong otherwise; we stay right for any UTF-8 file).

Lines end at ``\\n``, ``\\r\\n`` or ``\\r``; a ``\\r`` that ends what has been read so far waits for
the next byte, and a last line without its end waits for it, as in Java. Bytes that are not UTF-8 are
replaced (Java's ``InputStreamReader``). A file that does not exist yet is waited for (a warning, then
a poll per second), as Java waits. ``alter_offsets`` checks what Java checks (KIP-875).

``start`` is a coroutine (it reads the committed position); ``poll`` and ``stop`` are plain methods
run on plugin threads (file I/O never blocks the worker's loop). ``poll`` returns within about a
second when there is nothing to read, and at once after ``stop``.
"""

from __future__ import annotations

import logging
import os
import select
import sys
import threading
import time
from collections.abc import Mapping
from typing import IO, Any

import pyconnect
from pyconnect.api.connector import ExactlyOnceSupport, SourceConnector
from pyconnect.api.data import STRING_SCHEMA
from pyconnect.api.source import SourceRecord, SourceTask
from pyconnect.config.definition import NO_DEFAULT, ConfigDef, ConfigKey
from pyconnect.config.types import Importance, Type
from pyconnect.config.validators import NonEmptyString
from pyconnect.errors import ConnectError

log = logging.getLogger(__name__)

FILE_CONFIG = "file"
TOPIC_CONFIG = "topic"
TASK_BATCH_SIZE_CONFIG = "batch.size"
DEFAULT_TASK_BATCH_SIZE = 2000
FILENAME_FIELD = "filename"
POSITION_FIELD = "position"
READ_CHUNK = 64 * 1024
IDLE_WAIT_S = 1.0

CONFIG_DEF = ConfigDef(
    [
        ConfigKey(
            FILE_CONFIG,
            Type.STRING,
            None,
            importance=Importance.HIGH,
            documentation="Source filename. If not specified, the standard input will be used",
        ),
        ConfigKey(
            TOPIC_CONFIG,
            Type.STRING,
            NO_DEFAULT,
            importance=Importance.HIGH,
            documentation="The topic to publish data to",
            validator=NonEmptyString(),
        ),
        ConfigKey(
            TASK_BATCH_SIZE_CONFIG,
            Type.INT,
            DEFAULT_TASK_BATCH_SIZE,
            importance=Importance.LOW,
            documentation="The maximum number of records the source task can read from the file each time it is polled",
        ),
    ]
)


def configured_file(props: Mapping[str, str]) -> str | None:
    """The ``file`` to read, or None for standard input (unset or empty)."""
    filename = CONFIG_DEF.parse(props).get(FILE_CONFIG)
    return str(filename) if filename else None


class FileStreamSourceConnector(SourceConnector):
    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    def start(self, props: Mapping[str, str]) -> None:
        self._props = dict(props)
        log.info("Starting file source connector reading from %s", configured_file(props) or "standard input")

    def task_class(self) -> type:
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]

    def stop(self) -> None:
        return None

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport:
        """Exactly-once from a real file (appended to only); never from standard input (no offsets)."""
        return ExactlyOnceSupport.SUPPORTED if configured_file(props) else ExactlyOnceSupport.UNSUPPORTED

    def alter_offsets(
        self, config: Mapping[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        """Java's checks: a file must be configured; every offset is null or a non-negative integer
        ``position``, and its partition names a ``filename``. The task checks the position against the
        file when it starts."""
        if configured_file(config) is None:
            raise ConnectError(
                f"Offsets cannot be modified if the '{FILE_CONFIG}' configuration is unspecified. "
                "This is because stdin is used for input and offsets are not tracked."
            )
        for partition, offset in offsets:
            if offset is None:
                continue
            if POSITION_FIELD not in offset:
                raise ConnectError(
                    f"Offset objects should either be null or contain the key '{POSITION_FIELD}'"
                )
            position = offset[POSITION_FIELD]
            if not isinstance(position, int) or isinstance(position, bool):
                raise ConnectError(
                    f"The value for the '{POSITION_FIELD}' key in the offset is expected to be a Long value"
                )
            if position < 0:
                raise ConnectError(
                    f"The value for the '{POSITION_FIELD}' key in the offset should be a non-negative value"
                )
            if partition is None:
                raise ConnectError("Partition objects cannot be null")
            if FILENAME_FIELD not in partition:
                raise ConnectError(f"Partition objects should contain the key '{FILENAME_FIELD}'")
        return True


def _next_line(buffer: bytearray) -> tuple[bytes, int] | None:
    """The first complete line of ``buffer`` and how many bytes it takes with its end, or None."""
    newline, carriage = buffer.find(b"\n"), buffer.find(b"\r")
    if carriage < 0 or (0 <= newline < carriage):
        return None if newline < 0 else (bytes(buffer[:newline]), newline + 1)
    if carriage + 1 >= len(buffer):
        return None  # a lone \r so far: it may be the first half of \r\n
    return bytes(buffer[:carriage]), carriage + (2 if buffer[carriage + 1] == ord("\n") else 1)


class FileStreamSourceTask(SourceTask):
    """Reads lines of one file (or standard input); see the module docstring."""

    java_class = "org.apache.kafka.connect.file.FileStreamSourceTask"

    def __init__(self) -> None:
        self.filename: str | None = None
        self.topic = ""
        self.batch_size = DEFAULT_TASK_BATCH_SIZE
        self.position: int | None = None
        self._stream: IO[bytes] | None = None
        self._buffer = bytearray()
        self._stopping = threading.Event()
        self._warned_missing = False

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    async def start(self, props: Mapping[str, str]) -> None:
        parsed = CONFIG_DEF.parse(props)
        self.filename = configured_file(props)
        self.topic = str(parsed[TOPIC_CONFIG])
        self.batch_size = int(parsed[TASK_BATCH_SIZE_CONFIG])  # type: ignore[call-overload]
        if self.filename is None:
            return
        committed = await self.context.offset_storage_reader.offset({FILENAME_FIELD: self.filename})
        recorded = None if committed is None else committed.get(POSITION_FIELD)
        if recorded is not None and (not isinstance(recorded, int) or isinstance(recorded, bool)):
            raise ConnectError("Offset position is the incorrect type")
        self.position = recorded or 0

    def _open(self) -> bool:
        """Open the file at the committed position; False (after a warning) while it does not exist."""
        assert self.filename is not None
        try:
            stream = open(self.filename, "rb")
        except FileNotFoundError:
            if not self._warned_missing:
                log.warning(
                    "Couldn't find file %s for FileStreamSourceTask, sleeping to wait for it to be created",
                    self.filename,
                )
                self._warned_missing = True
            return False
        except OSError as exc:
            raise ConnectError(f"Error while trying to open file {self.filename}: {exc}") from exc
        if self.position:
            log.debug("Found previous offset, trying to skip to file offset %s", self.position)
            stream.seek(self.position)
        self._stream = stream
        log.debug("Opened %s for reading", self.filename)
        return True

    def _read_available(self, stream: IO[bytes] | None) -> bytes:
        """What can be read now without waiting (empty at the end of the file or of the input)."""
        if stream is not None:
            return stream.read(READ_CHUNK)
        fd = sys.stdin.fileno()
        readable, _, _ = select.select([fd], [], [], 0)
        return os.read(fd, READ_CHUNK) if readable else b""

    def _records(self, limit: int) -> list[SourceRecord]:
        out: list[SourceRecord] = []
        partition = {FILENAME_FIELD: self.filename}
        while len(out) < limit and (found := _next_line(self._buffer)) is not None:
            line, taken = found
            del self._buffer[:taken]
            if self.position is not None:
                self.position += taken
            out.append(
                SourceRecord(
                    partition,
                    {POSITION_FIELD: self.position},
                    self.topic,
                    None,
                    None,
                    None,
                    STRING_SCHEMA,
                    line.decode("utf-8", "replace"),
                    int(time.time() * 1000),
                )
            )
        return out

    def poll(self) -> list[SourceRecord] | None:  # type: ignore[override]  # plain: a plugin thread
        if self._stopping.is_set():
            return None
        if self.filename is not None and self._stream is None and not self._open():
            self._stopping.wait(IDLE_WAIT_S)
            return None
        stream = self._stream
        if self.filename is not None and stream is None:  # stopped meanwhile
            return None
        records = self._records(self.batch_size)
        read_any = False
        try:
            while len(records) < self.batch_size:
                chunk = self._read_available(stream)
                if not chunk:
                    break
                read_any = True
                self._buffer += chunk
                records += self._records(self.batch_size - len(records))
        except (OSError, ValueError):
            if self._stopping.is_set():  # the stream was closed by stop
                return None
            raise
        if not records and not read_any:
            self._stopping.wait(IDLE_WAIT_S)
        return records or None

    def stop(self) -> None:  # type: ignore[override]  # plain: a plugin thread
        self._stopping.set()
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.close()
