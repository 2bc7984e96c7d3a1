"""The REST server of one worker: listeners, the aiohttp application, and its lifecycle.

Contract: the server may start before its herder exists (``attach`` it once built), so that
``/health`` answers "starting" during startup as Java's does. ``start()`` binds every listener (``http://host:port`` or ``https://host:port``; port 0 picks a
free port) and returns once they accept connections; ``advertised_url`` is what other workers use to
reach this one: scheme ``rest.advertised.listener``, else ``http`` if any http listener exists, else
``https``; host and port ``rest.advertised.*`` when set, else the first listener of that scheme as
bound. TLS, basic auth and CORS are described in pyconnect.rest.security. ``stop()`` is idempotent
and closes the forwarding client too. Bodies above ``max_body_bytes`` answer 413.

Every answer, including the HTTP layer's own refusals (unknown method, over-long URL or headers,
malformed requests), carries the Connect error body (pyconnect.rest.errors); ``Server`` carries no
version. The request line and each header are limited to 8190 bytes, as Jetty's 8 KiB.
"""

from __future__ import annotations

import hashlib
import os
import re
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Middleware
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest
from aiohttp.web_server import Server

from pyconnect import __version__
from pyconnect.errors import ConfigError
from pyconnect.herder.interface import HerderApi
from pyconnect.mirror_status.core import Progress
from pyconnect.rest.errors import error_middleware, protocol_error, set_server_header
from pyconnect.rest.forwarding import Forwarder
from pyconnect.rest.mirror_status import MirrorProgressSlot
from pyconnect.rest.resources import (
    COMMIT_ID,
    FORWARDER,
    HERDER,
    METRICS,
    MIRROR_PROGRESS,
    HerderSlot,
    MetricsSlot,
    routes,
)
from pyconnect.rest.routing import routing_middleware
from pyconnect.rest.security import (
    CrossOrigin,
    SslSettings,
    options_middleware,
    rest_extension_middlewares,
)


@dataclass(frozen=True)
class Listener:
    scheme: str
    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> Listener:
        """``http[s]://host:port``; an empty host means every interface, as in Java (``http://:8083``)."""
        parts = urlsplit(text.strip())
        try:
            port = parts.port
        except ValueError:
            port = None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or port is None:
            raise ConfigError(
                f"Invalid value {text} for configuration listeners: expected http://host:port or https://host:port"
            )
        return cls(scheme, parts.hostname or "0.0.0.0", port)


class _ConnectRequestHandler(RequestHandler):
    """aiohttp's connection handler, answering what it refuses with the Connect error body; a client's
    malformed request is logged at DEBUG, a server failure at ERROR."""

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if request.writer.output_size > 0:
            raise ConnectionError(
                "Response is sent already, cannot send another response with the error message"
            )
        if status >= 500:
            self.log_exception("Error handling request from %s", request.remote, exc_info=exc)
        else:  # the client's error: no traceback at ERROR for every malformed request a client sends
            self.logger.debug("Refused a request from %s: %s", request.remote, exc or status)
        response = protocol_error(status, exc)
        response.force_close()
        return response


class _ConnectServer(Server):
    def __call__(self) -> RequestHandler:
        return _ConnectRequestHandler(self, loop=self._loop, **self._kwargs)


class _ConnectAppRunner(web.AppRunner):
    async def _make_server(self) -> Server:
        server = await super()._make_server()
        server.__class__ = _ConnectServer
        return server


def build_app(
    route_table: web.RouteTableDef,
    *,
    max_body_bytes: int,
    allowed_origins: str = "",
    allowed_methods: str = "",
    extension_middlewares: list[Middleware] | None = None,
) -> web.Application:
    """The application every pyconnect REST server runs: CORS (when configured), REST extensions,
    automatic OPTIONS, the one error mapping, then the route checks (pyconnect.rest.routing)."""
    middlewares: list[Middleware] = []
    if allowed_origins.strip():
        middlewares.append(CrossOrigin(allowed_origins, allowed_methods).middleware())
    middlewares += extension_middlewares or []
    middlewares += [options_middleware, error_middleware, routing_middleware]
    app = web.Application(middlewares=middlewares, client_max_size=max_body_bytes)
    app.on_response_prepare.append(set_server_header)
    for route in route_table:
        assert isinstance(route, web.RouteDef)
        app.router.add_route(route.method, any_segment(route.path), route.handler, **route.kwargs)
    return app


def any_segment(path: str) -> str:
    """``/connectors/{connector}`` -> ``/connectors/{connector:[^/]+}``: a name is any one segment
    (aiohttp's default pattern refuses ``{`` and ``}``, which connector names may hold)."""
    return re.sub(r"\{(\w+)\}", r"{\1:[^/]+}", path)


class RestServer:
    def __init__(
        self,
        herder: HerderApi | None,
        listeners: list[str],
        *,
        advertised_host: str | None = None,
        advertised_port: int | None = None,
        advertised_scheme: str | None = None,
        max_body_bytes: int = 10 * 1024 * 1024,
        ssl_settings: SslSettings | None = None,
        allowed_origins: str = "",
        allowed_methods: str = "",
        extension_classes: list[str] | None = None,
        environ: Mapping[str, str] | None = None,
        route_table: web.RouteTableDef = routes,
    ) -> None:
        self._listeners = [Listener.parse(text) for text in listeners]
        if not self._listeners:
            raise ConfigError(
                "Invalid value [] for configuration listeners: at least one listener is required"
            )
        schemes = {listener.scheme for listener in self._listeners}
        if advertised_scheme:
            advertised_scheme = advertised_scheme.lower()
            if advertised_scheme not in schemes:
                raise ConfigError(
                    f"Invalid value {advertised_scheme} for configuration rest.advertised.listener: "
                    "no listener uses that protocol"
                )
        else:
            advertised_scheme = "http" if "http" in schemes else "https"
        self._advertised = (advertised_scheme, advertised_host, advertised_port)
        self.ssl_settings = ssl_settings or SslSettings({})
        self._server_ssl = self.ssl_settings.server_context() if "https" in schemes else None
        client_ssl = self.ssl_settings.client_context() if "https" in schemes else None
        self.forwarder = Forwarder(
            ssl_factory=(lambda: client_ssl) if client_ssl else self.ssl_settings.client_context
        )
        self.app = build_app(
            route_table,
            max_body_bytes=max_body_bytes,
            allowed_origins=allowed_origins,
            allowed_methods=allowed_methods,
            extension_middlewares=rest_extension_middlewares(
                [c for c in extension_classes or [] if c.strip()],
                os.environ if environ is None else environ,
            ),
        )
        self.slot = HerderSlot(herder)
        self.app[HERDER] = self.slot
        self.app[FORWARDER] = self.forwarder
        self.app[COMMIT_ID] = hashlib.sha256(__version__.encode()).hexdigest()[:16]
        self.metrics_slot = MetricsSlot()
        self.app[METRICS] = self.metrics_slot
        self.mirror_progress = MirrorProgressSlot()
        self.app[MIRROR_PROGRESS] = self.mirror_progress
        self._runner: web.AppRunner | None = None
        self.bound: list[tuple[str, int]] = []
        self.bound_listeners: list[Listener] = []

    def attach(self, herder: HerderApi) -> None:
        """Serve ``herder`` from now on (before this, resources answer 503 and health "starting")."""
        self.slot.herder = herder

    def serve_metrics(self, render: Callable[[], str]) -> None:
        """``GET /metrics`` answers ``render()`` (503 until this is called)."""
        self.metrics_slot.render = render

    def serve_mirror_progress(self, read: Callable[[], Progress]) -> None:
        """``GET /mirrors`` reads this worker's mirror task metrics with ``read()`` (none until then)."""
        self.mirror_progress.read = read

    async def start(self) -> None:
        if self._runner is not None:
            return
        runner = _ConnectAppRunner(
            self.app, access_log=None, handle_signals=False, max_line_size=8190, max_field_size=8190
        )
        await runner.setup()
        self._runner = runner
        self.bound, self.bound_listeners = [], []
        for listener in self._listeners:
            context: ssl.SSLContext | None = self._server_ssl if listener.scheme == "https" else None
            site = web.TCPSite(runner, listener.host, listener.port, reuse_address=True, ssl_context=context)
            await site.start()
            server = site._server
            sockets = getattr(server, "sockets", None) or []
            port = sockets[0].getsockname()[1] if sockets else listener.port
            self.bound.append((listener.host, port))
            self.bound_listeners.append(Listener(listener.scheme, listener.host, port))

    def url_of(self, scheme: str) -> str:
        """The bound URL of the first listener with ``scheme`` (tests, and mixed-listener clients)."""
        listener = next(x for x in self.bound_listeners or self._listeners if x.scheme == scheme)
        return f"{scheme}://{listener.host}:{listener.port}/"

    @property
    def advertised_url(self) -> str:
        scheme, host, port = self._advertised
        assert scheme is not None
        listener = next(x for x in self.bound_listeners or self._listeners if x.scheme == scheme)
        return f"{scheme}://{host or listener.host}:{port or listener.port}/"

    async def stop(self) -> None:
        await self.forwarder.stop()
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
