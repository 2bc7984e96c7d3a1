"""Every failure of a REST request becomes ``{"error_code": N, "message": "..."}``, here and only here.

- ``ConnectError`` subclasses answer with their declared status (pyconnect.errors).
- Unknown paths and wrong methods answer 404 / 405 with the framework message Java's JAX-RS gives
  (``HTTP 404 Not Found``, ``HTTP 405 Method Not Allowed``).
- A body that is not JSON, or not the JSON shape a resource expects, is the client's error: 400.
- Anything else is logged with its traceback and answers 500; the worker goes on serving.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from pyconnect.errors import ConnectError

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class MalformedRequest(ConnectError):
    """The request body or parameters cannot be understood; 400."""

    http_status = 400


def error_response(status: int, message: str, error_code: int | None = None) -> web.Response:
    body = json.dumps(
        {"error_code": status if error_code is None else error_code, "message": message},
        separators=(",", ":"),
    )
    return web.Response(status=status, text=body, content_type="application/json")


_REASONS = {
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    413: "Request Entity Too Large",
    415: "Unsupported Media Type",
}


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except asyncio.CancelledError:
        raise
    except ConnectError as exc:
        return error_response(exc.status, exc.message, exc.error_code)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        reason = _REASONS.get(exc.status, exc.reason)
        return error_response(exc.status, f"HTTP {exc.status} {reason}")
    except Exception as exc:
        log.exception("REST %s %s failed", request.method, request.path)
        return error_response(500, f"{type(exc).__name__}: {exc}")
