"""Every failure of a REST request becomes ``{"error_code": N, "message": "..."}``, here and only here.

- ``ConnectError`` subclasses answer with their declared status (pyconnect.errors).
- Unknown paths and wrong methods answer 404 / 405 with the framework message Java's JAX-RS gives
  (``HTTP 404 Not Found``, ``HTTP 405 Method Not Allowed``).
- A body that is not JSON, or not the JSON shape a resource expects, is the client's error: 400;
  so is a body that cannot be decoded from its ``Content-Encoding``.
- Requests the HTTP layer refuses before any handler runs answer the same body (:func:`protocol_error`):
  an unknown method 405, an over-long request line 414, over-long headers 431, anything else
  malformed 400.
- Anything else is logged with its traceback and answers 500; the worker goes on serving.
- ``Server`` names the product without its version (:data:`SERVER`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMessage, BadHttpMethod, LineTooLong
from aiohttp.web_protocol import RequestPayloadError

from pyconnect.errors import ConnectError

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

SERVER = "pyconnect"


class MalformedRequest(ConnectError):
    """The request body or parameters cannot be understood; 400."""

    http_status = 400


def error_response(status: int, message: str, error_code: int | None = None) -> web.Response:
    body = json.dumps(
        {"error_code": status if error_code is None else error_code, "message": message},
        separators=(",", ":"),
    )
    return web.Response(status=status, text=body, content_type="application/json", headers={"Server": SERVER})


_REASONS = {
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    413: "Request Entity Too Large",
    414: "URI Too Long",
    415: "Unsupported Media Type",
    431: "Request Header Fields Too Large",
}


def framework_message(status: int) -> str:
    """Java's JAX-RS wording for a status it raises itself: ``HTTP 404 Not Found``."""
    return f"HTTP {status} {_REASONS.get(status, 'Error')}"


def protocol_error(status: int, exc: BaseException | None) -> web.Response:
    """The answer to a request the HTTP parser refused (or a handler that could not answer)."""
    if isinstance(exc, BadHttpMethod):
        return error_response(405, framework_message(405))
    if isinstance(exc, LineTooLong):
        line = exc.args[0] if exc.args else b""
        too_long = 414 if isinstance(line, (bytes, bytearray)) and line[:1] == b"/" else 431
        return error_response(too_long, framework_message(too_long))
    if isinstance(exc, BadHttpMessage):
        return error_response(400, f"{framework_message(400)}: {exc.message}")
    if status >= 500:
        return error_response(status, f"HTTP {status} {'Server Error' if status == 500 else 'Error'}")
    return error_response(status, framework_message(status))


async def set_server_header(_: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: no framework or version banner in ``Server``."""
    response.headers["Server"] = SERVER


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
    except RequestPayloadError as exc:
        return error_response(400, f"Request body could not be read: {_payload_reason(exc)}")
    except Exception as exc:
        log.exception("REST %s %s failed", request.method, request.path)
        return error_response(500, f"{type(exc).__name__}: {exc}")


def _payload_reason(exc: RequestPayloadError) -> str:
    """The parser's reason for a body it could not decode (e.g. a ``Content-Encoding`` that lies)."""
    cause = exc.__cause__ or (exc.args[0] if exc.args else None)
    if isinstance(cause, BadHttpMessage):
        return cause.message.strip()
    return " ".join(str(exc).split())
