"""Connector base classes (``org.apache.kafka.connect.connector`` / ``.source``).

Calling contract (what the runtime guarantees and expects):

* The runtime never calls two methods of one connector instance concurrently. Order: ``initialize``
  -> ``start`` -> ``task_configs``\\* -> ``stop``; ``config``, ``validate``, ``version``,
  ``exactly_once_support``, ``can_define_transaction_boundaries`` and ``alter_offsets`` may also be
  called on a fresh instance that is never started (REST validation and offset alteration, as in Java).
* ``start``, ``stop``, ``task_configs``, ``config``, ``validate`` and ``alter_offsets`` may be plain
  methods or coroutines (``async def``). A coroutine runs on the worker's event loop and must never
  block it. A plain method runs on one of the worker's plugin threads
  (:mod:`pyconnect.worker.plugin_calls`), so it may block (Java's contract) but must be thread-safe
  with respect to the connector's own coroutines: it reads state they replace, it does not iterate
  state they mutate. A connector that needs the loop (aiokafka clients) makes those methods ``async``.
  Long-running work belongs in tasks the connector owns, created in ``start`` and cancelled and
  awaited in ``stop``.
* Bounds: ``stop`` 5 s and ``task_configs`` 5 s (an overrun is abandoned: the thread runs on, a WARN
  names it; a ``task_configs`` overrun fails the connector); ``config`` + ``validate`` + ``alter_offsets``
  within the REST request timeout (90 s); ``start`` has none: the herder waits at most a second
  for it, then it goes on in the background.
* ``version`` runs on a plugin thread once per start, within 1 s (its answer is kept for the status
  reports; an overrun reports no version); plugin discovery also asks it once per class at worker
  start. ``initialize`` and ``task_class`` run on the loop: they must be quick and never block.
  A connector whose task set changes (e.g. after discovering partitions) calls
  ``context.request_task_reconfiguration()`` (from any thread); the runtime then calls ``task_configs``
  again.
* An exception from ``start`` fails the connector; from a background task, report it with
  ``context.raise_error(exc)``.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Awaitable, Mapping
from typing import Any, Protocol, TypeVar

from pyconnect.conditions import ConditionBoard
from pyconnect.config.definition import ConfigDef, ConfigValue
from pyconnect.errors import ConnectError

T = TypeVar("T")


async def maybe_await(result: T | Awaitable[T]) -> T:
    """``result``, awaited first if it is awaitable: for code that calls a plugin method that may be
    plain or a coroutine (the runtime itself calls plugin methods through
    :mod:`pyconnect.worker.plugin_calls`)."""
    if inspect.isawaitable(result):
        return await result
    return result


class ConnectorContext(Protocol):
    """What a connector may ask of the runtime. Both methods are non-blocking and may be called from
    any thread (a plain method runs on a plugin thread)."""

    def request_task_reconfiguration(self) -> None:
        """Ask the runtime to call ``task_configs`` again and publish the result if it changed."""

    def raise_error(self, exc: BaseException) -> None:
        """Fail the connector with ``exc`` (a background error the connector cannot recover from)."""

    @property
    def conditions(self) -> ConditionBoard | None:
        """The connector's conditions (pyconnect's, pyconnect.conditions; ``None`` outside a worker), as
        ``SourceTaskContext.conditions`` is a task's: raised with ``set(code, message, ...)`` and
        removed with ``clear`` on the worker's loop; while any is active the connector's status stays
        RUNNING with them as its ``trace``, and ``GET /mirrors`` lists them. They leave with the
        connector's stop."""


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
    """Base of every connector; subclass :class:`SourceConnector` or :class:`~pyconnect.api.sink.SinkConnector`."""

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
