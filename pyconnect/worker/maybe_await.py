"""Plugin methods may be plain or coroutine functions; the runtime awaits what needs awaiting."""

from __future__ import annotations

import inspect
from typing import Any


async def maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value
