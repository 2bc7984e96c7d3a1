"""A task's converters as one value, and where their calls run: on the loop for the runtime's own
converters (``pyconnect.*`` classes: quick, never blocking), on a plugin thread for any other (a
plugin that may block, e.g. on a schema registry). Shared by the source and sink task loops."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TaskConverters:
    """A task's key, value and header converters (``None``: absent)."""

    key: Any
    value: Any
    header: Any

    def all(self) -> tuple[Any, Any, Any]:
        return (self.key, self.value, self.header)

    @property
    def runtime_only(self) -> bool:
        """Whether all three are the runtime's own (or absent): converted on the loop."""
        return all(runtime_converter(c) for c in self.all())


def runtime_converter(converter: Any) -> bool:
    """Whether ``converter`` is one of the runtime's own (or absent): converted on the loop."""
    return converter is None or type(converter).__module__.startswith("pyconnect.")


async def call_on_loop(operation: Callable[[], Any]) -> Any:
    """Run one retried operation on the loop (the runtime's own converters and transformations)."""
    return operation()


def call_operation(operation: Callable[[], Any]) -> Any:
    """Run one retried operation (on a plugin thread when the task's converters may block)."""
    return operation()
