"""FileOffsetStore: source offsets of a standalone worker in one local file (Java ``FileOffsetBackingStore``).

Same interface and key encoding as :class:`~pyconnect.stores.offsets.OffsetStore`: keys are the JSON
bytes ``[connector, partition]``, values the JSON offset maps, so connectors behave alike in both
modes. A key already in the file for a partition is reused even when its map entries are ordered
differently.

File format (ours; Java writes a serialized ``java.util.HashMap<byte[], byte[]>`` with Java object
serialization, which we neither read nor write): one UTF-8 JSON document ::

    {"format": "pyconnect-offsets", "version": 1,
     "offsets": [{"key": "<key bytes as text>", "value": "<value bytes as text>"}, ...]}

Key and value bytes are UTF-8 JSON text, stored as strings (a value that is not valid UTF-8 is
stored as ``{"base64": "..."}``). A tombstone removes the entry. A missing or empty file is an empty
store; an unreadable or malformed file fails ``start()``.

Contract: ``start()`` loads the file. ``set``/``set_raw`` update the in-memory map and rewrite the whole
file (temporary file, fsync, atomic rename) before returning, as Java saves on every ``set``; the
source tasks call them every ``offset.flush.interval.ms`` and once when they stop. Writes are
serialized by one lock and run off the event loop. ``stop()`` writes again when the last write
failed. ``read_to_end()`` is a no-op (this worker is the only writer).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pyconnect.errors import ConnectError
from pyconnect.protocol.internal_records import (
    InternalRecordError,
    decode_offset_key,
    freeze,
)
from pyconnect.stores.offset_index import OffsetIndex

log = logging.getLogger(__name__)

FORMAT = "pyconnect-offsets"
VERSION = 1


def _text(raw: bytes) -> Any:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(raw).decode("ascii")}


def _bytes(item: Any, path: Path) -> bytes:
    if isinstance(item, str):
        return item.encode("utf-8")
    if isinstance(item, dict) and isinstance(item.get("base64"), str):
        return base64.b64decode(item["base64"])
    raise ConnectError(f"Offsets file {path} is malformed: unexpected entry {item!r}")


def dumps(data: Mapping[bytes, bytes]) -> str:
    entries = [{"key": _text(k), "value": _text(v)} for k, v in data.items()]
    return json.dumps(
        {"format": FORMAT, "version": VERSION, "offsets": entries}, ensure_ascii=False, indent=1
    )


def loads(text: str, path: Path) -> dict[bytes, bytes]:
    if not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConnectError(f"Offsets file {path} is not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("offsets"), list):
        raise ConnectError(f"Offsets file {path} is not a {FORMAT} file")
    if doc.get("version") != VERSION:
        raise ConnectError(f"Offsets file {path} has unsupported version {doc.get('version')!r}")
    data: dict[bytes, bytes] = {}
    for entry in doc["offsets"]:
        if not isinstance(entry, dict) or "key" not in entry or "value" not in entry:
            raise ConnectError(f"Offsets file {path} is malformed: unexpected entry {entry!r}")
        data[_bytes(entry["key"], path)] = _bytes(entry["value"], path)
    return data


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


class FileOffsetStore(OffsetIndex):
    """Offsets of every source connector of a standalone worker, persisted to ``path``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._data: dict[bytes, bytes] = {}
        self._keys: dict[tuple[str, Any], bytes] = {}
        self._partitions: dict[str, dict[Any, dict[str, Any]]] = {}
        self._lock = asyncio.Lock()
        self._started = False
        self._dirty = False

    @classmethod
    def from_worker_config(cls, worker: Any) -> FileOffsetStore:
        return cls(worker.offset_storage_file_filename)

    async def start(self) -> None:
        if self._started:
            return
        try:
            text = await asyncio.to_thread(self.path.read_text, "utf-8")
        except FileNotFoundError:
            text = ""
        except (OSError, UnicodeDecodeError) as exc:
            raise ConnectError(f"Cannot read offsets file {self.path}: {exc}") from None
        self._data = {}
        self._keys.clear()
        self._partitions.clear()
        for key, value in loads(text, self.path).items():
            self._apply(key, value)
        self._started = True
        log.info("Loaded %d offset(s) from %s", len(self._data), self.path)

    async def stop(self) -> None:
        if not self._started:
            return
        if self._dirty:
            async with self._lock:
                await self._save()
        self._started = False

    async def read_to_end(self) -> None:
        """Nothing to catch up with: every write goes through this store."""

    def _apply(self, key: bytes, value: bytes | None) -> None:
        if value is None:
            self._data.pop(key, None)
        else:
            self._data[key] = value
        try:
            connector, partition = decode_offset_key(key)
        except InternalRecordError as exc:
            log.warning("Offsets file %s has a key that names no connector partition: %s", self.path, exc)
            return
        if partition is None:
            return
        frozen = freeze(partition)
        known = self._partitions.setdefault(connector, {})
        if value is None:
            known.pop(frozen, None)
            self._keys.pop((connector, frozen), None)
        else:
            known[frozen] = partition
            self._keys[(connector, frozen)] = key

    async def _save(self) -> None:
        text = dumps(self._data)
        try:
            await asyncio.to_thread(_write_atomically, self.path, text)
        except OSError as exc:
            self._dirty = True
            raise ConnectError(f"Cannot write offsets file {self.path}: {exc}") from exc
        self._dirty = False

    async def set_raw(self, values: Mapping[bytes, bytes | None]) -> None:
        """Apply raw entries (``None`` deletes) and rewrite the file; raises ``ConnectError`` on failure."""
        if not self._started:
            raise ConnectError(f"The offset store on {self.path} is not started")
        async with self._lock:
            for key, value in values.items():
                self._apply(key, value)
            await self._save()
