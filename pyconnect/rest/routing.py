"""The innermost middleware: what a request must satisfy once its route is known.

- **One trailing slash is ignored**, as Java's Jersey ignores it (``GET /connectors/c/status/``
  answers like ``GET /connectors/c/status``); the request is re-resolved without it and served by
  that route. Anything else that matches no route keeps its 404/405.
- **Content-Type** is checked against what the matched handler declares (pyconnect.rest.media)
  before any body is read: 415 or 400 with the Connect error body.
"""

from __future__ import annotations

from aiohttp import web
from yarl import URL

from pyconnect.rest.errors import Handler, error_response
from pyconnect.rest.media import content_type_error, handler_policy


async def _without_trailing_slash(request: web.Request) -> web.Request | None:
    path, _, query = request.raw_path.partition("?")
    if len(path) < 2 or not path.endswith("/") or path.endswith("//"):
        return None
    alternative = request.clone(rel_url=URL(path[:-1] + ("?" + query if query else ""), encoded=True))
    match_info = await request.app.router.resolve(alternative)
    if match_info.http_exception is not None:
        return None
    match_info.add_app(request.app)
    alternative._match_info = match_info
    return alternative


@web.middleware
async def routing_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.match_info.http_exception is not None:
        alternative = await _without_trailing_slash(request)
        if alternative is None:
            return await handler(request)
        request, handler = alternative, alternative.match_info.handler
    consumes_json, reads_body = handler_policy(request.match_info.handler)
    refusal = content_type_error(
        request.headers.get("Content-Type"),
        has_body=request.body_exists,
        consumes_json=consumes_json,
        reads_body=reads_body,
    )
    if refusal is not None:
        return error_response(*refusal)
    return await handler(request)
