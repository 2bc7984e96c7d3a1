"""Connector base classes (``org.apache.kafka.connect.connector`` / ``.source``).

Calling contract (what the runtime guarantees and expects):

* All methods run on the worker's event loop thread; the runtime never calls two methods of one
  connector instance concurrently. Order: ``initialize`` -> ``start`` -> ``task_configs``\\* ->
  ``stop``; ``config``, ``validate``, ``version``, ``exactly_once_support``,
  ``can_define_transaction_boundaries`` and ``alter_offsets`` may also be called on a fresh instance
  that is never started (REST validation and offset alteration, as in Java).
* ``start`` and ``stop`` may be plain methods or coroutines (``async def``); the runtime awaits the
  result when it is awaitable (:func:`maybe_await`). A plain ``start``/``stop`` must not block: a
  connector that needs I/O makes them ``async``. Long-running work belongs in tasks the connector
  owns, created in ``start`` and cancelled and awaited in ``stop``.
* ``task_configs``, ``config``, ``validate`` and the KIP-618/KIP-875 hooks are plain, quick and
  side-effect free. A connector whose task set changes (e.g. after discovering partitions) calls
  ``context.request_task_reconfiguration()``; the runtime then calls ``task_configs`` again.
* An exception from ``start`` fails the connector; from a background task, report it with
  ``context.raise_error(exc)``.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Awaitable, Mapping
from typing import Any, Protocol, TypeVar

from pyconnect.config.definition import ConfigDef, ConfigValue
from pyconnect.errors import ConnectError

T = TypeVar("T")


async def maybe_await(result: T | Awaitable[T]) -> T:
    """``result``, awaited first if it is awaitable: how the runtime calls ``start``/``stop``."""
    if inspect.isawaitable(result):
        return await result
    return result


class ConnectorContext(Protocol):
    """What a connector may ask of the runtime. Both methods are non-blocking and thread-safe."""

    def request_task_reconfiguration(self) -> None:
        """Ask the runtime to call ``task_configs`` again and publish the result if it changed."""

    def raise_error(self, exc: BaseException) -> None:
        """Fail the connector with ``exc`` (a background error the connector cannot recover from)."""


class SourceConnectorContext(ConnectorContext, Protocol):
    """Adds read access to the connector's source offsets (``SourceConnectorContext``)."""

    @property
    def offset_storage_reader(self) -> Any: ...


class ExactlyOnceSupport(enum.Enum):
    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorTransactionBoundaries(enum.Enum):
    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class Connector:
    """Base of every connector; subclass :class:`SourceConnector` (sink connectors are not hosted yet)."""

    context: ConnectorContext | None = None

    def initialize(self, context: ConnectorContext) -> None:
        self.context = context

    def version(self) -> str:
        raise NotImplementedError

    def start(self, props: Mapping[str, str]) -> Awaitable[None] | None:
        raise NotImplementedError

    def task_class(self) -> type:
        raise NotImplementedError

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """At most ``max_tasks`` task configs (the runtime fails the connector on more, unless told not to)."""
        raise NotImplementedError

    def stop(self) -> Awaitable[None] | None:
        raise NotImplementedError

    def config(self) -> ConfigDef:
        """The connector's own keys; REST adds the framework's keys after them."""
        raise NotImplementedError

    def validate(self, props: Mapping[str, str | None]) -> dict[str, ConfigValue]:
        """``Connector.validate``: :meth:`config` validated against ``props`` (override to add checks)."""
        definition = self.config()
        if definition is None:
            raise ConnectError(
                f"{type(self).__qualname__}.config() must return a ConfigDef that is not null."
            )
        return definition.validate(props)


class SourceConnector(Connector):
    """A connector whose tasks are :class:`~pyconnect.api.source.SourceTask` subclasses."""

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport | None:
        """KIP-618 preflight: ``None`` (Java's default) means the connector cannot tell."""
        return None

    def can_define_transaction_boundaries(self, props: Mapping[str, str]) -> ConnectorTransactionBoundaries:
        return ConnectorTransactionBoundaries.UNSUPPORTED

    def alter_offsets(
        self, config: Mapping[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        """KIP-875 hook before offsets are altered or reset (``offset`` ``None`` = reset).

        Return True if the connector handled externally managed offsets; raise to refuse the request.
        """
        return False
