"""The converter contracts (``org.apache.kafka.connect.storage.Converter`` / ``HeaderConverter``).

Who calls: the worker's source task loop, once per record batch. A converter instance belongs to one
task and is used by one caller at a time; methods are synchronous. The runtime's own converters
(``pyconnect.*``) run on the event loop and never block; when a task uses a converter from elsewhere,
its batches are converted on a plugin thread (:mod:`pyconnect.worker.plugin_calls`), so such a
converter may block (a schema registry call) without holding up the worker.

The data path is batch-first: the runtime calls :meth:`Converter.from_connect_batch` with the key (or
value) schema shared by a run of records and the list of their values. The default implementation
loops over :meth:`Converter.from_connect_data`; converters override it where a batch can skip per-record
Python work. ``headers`` arguments are reserved for Java's header-aware overloads and may be ``None``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import pyconnect
from pyconnect.api.data import Schema, SchemaAndValue
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.types import Importance, Type
from pyconnect.config.validators import ValidString


class ConverterType(enum.Enum):
    """``ConverterType``: the ``converter.type`` a converter is configured with."""

    KEY = "key"
    VALUE = "value"
    HEADER = "header"


CONVERTER_TYPE_KEY = ConfigKey(
    "converter.type",
    Type.STRING,
    importance=Importance.LOW,
    documentation="How this converter will be used.",
    validator=ValidString("key", "value", "header"),
)
"""``ConverterConfig.TYPE_CONFIG``, the first key of every converter config table."""


def converter_config_def(*keys: ConfigKey) -> ConfigDef:
    """``ConverterConfig.newConfigDef()`` followed by ``keys``."""
    return ConfigDef((CONVERTER_TYPE_KEY, *keys))


def with_type(configs: Mapping[str, Any], is_key: bool | None) -> dict[str, Any]:
    """``configs`` plus ``converter.type`` = ``key``/``value``, as Java's ``configure(configs, isKey)``.

    ``is_key`` ``None`` is the one-argument ``configure(configs)`` of a header converter: ``configs``
    must then name the type itself (the worker passes ``converter.type=header``).
    """
    merged = dict(configs)
    if is_key is not None:
        merged["converter.type"] = ConverterType.KEY.value if is_key else ConverterType.VALUE.value
    return merged


@runtime_checkable
class Converter(Protocol):
    """Converts between Connect data and the bytes of a record key or value."""

    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None: ...

    def from_connect_data(
        self, topic: str, headers: Any, schema: Schema | None, value: Any
    ) -> bytes | None: ...

    def from_connect_batch(
        self, topic: str, schema: Schema | None, values: Sequence[Any]
    ) -> list[bytes | None]:
        """``from_connect_data`` for each value, in order; same errors, raised for the first bad value."""
        ...

    def to_connect_data(self, topic: str, headers: Any, value: bytes | None) -> SchemaAndValue: ...

    def config(self) -> ConfigDef: ...

    def version(self) -> str: ...

    def close(self) -> None: ...


@runtime_checkable
class HeaderConverter(Protocol):
    """Converts between Connect header values and header bytes."""

    def configure(self, configs: Mapping[str, Any]) -> None: ...

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None: ...

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue: ...

    def config(self) -> ConfigDef: ...

    def version(self) -> str: ...

    def close(self) -> None: ...


class BaseConverter:
    """Shared plumbing: version, close, the per-record batch loop and header methods via data methods."""

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    def close(self) -> None:
        return None

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        raise NotImplementedError

    def from_connect_data(self, topic: str, headers: Any, schema: Schema | None, value: Any) -> bytes | None:
        raise NotImplementedError

    def to_connect_data(self, topic: str, headers: Any, value: bytes | None) -> SchemaAndValue:
        raise NotImplementedError

    def from_connect_batch(
        self, topic: str, schema: Schema | None, values: Iterable[Any]
    ) -> list[bytes | None]:
        convert = self.from_connect_data
        return [convert(topic, None, schema, value) for value in values]

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, None, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, None, value)
