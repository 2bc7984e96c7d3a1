"""The REST server of one worker: listeners, the aiohttp application, and its lifecycle.

Contract: the server may start before its herder exists (``attach`` it once built), so that
``/health`` answers "starting" during startup as Java's does. ``start()`` binds every listener (``http://host:port`` or ``https://host:port``; port 0 picks a
free port) and returns once they accept connections; ``advertised_url`` is what other workers use to
reach this one: scheme ``rest.advertised.listener``, else ``http`` if any http listener exists, else
``https``; host and port ``rest.advertised.*`` when set, else the first listener of that scheme as
bound. TLS, basic auth and CORS are described in pyconnect.rest.security. ``stop()`` is idempotent
and closes the forwarding client too. Bodies above ``max_body_bytes`` answer 413.
"""

from __future__ import annotations

import hashlib
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Middleware

from pyconnect import __version__
from pyconnect.errors import ConfigError
from pyconnect.herder.interface import HerderApi
from pyconnect.rest.errors import error_middleware
from pyconnect.rest.forwarding import Forwarder
from pyconnect.rest.resources import COMMIT_ID, FORWARDER, HERDER, HerderSlot, routes
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
        middlewares: list[Middleware] = []
        if allowed_origins.strip():
            middlewares.append(CrossOrigin(allowed_origins, allowed_methods).middleware())
        middlewares += rest_extension_middlewares(
            [c for c in extension_classes or [] if c.strip()],
            os.environ if environ is None else environ,
        )
        middlewares += [options_middleware, error_middleware]
        self.app = web.Application(middlewares=middlewares, client_max_size=max_body_bytes)
        self.slot = HerderSlot(herder)
        self.app[HERDER] = self.slot
        self.app[FORWARDER] = self.forwarder
        self.app[COMMIT_ID] = hashlib.sha256(__version__.encode()).hexdigest()[:16]
        self.app.add_routes(routes)
        self._runner: web.AppRunner | None = None
        self.bound: list[tuple[str, int]] = []
        self.bound_listeners: list[Listener] = []

    def attach(self, herder: HerderApi) -> None:
        """Serve ``herder`` from now on (before this, resources answer 503 and health "starting")."""
        self.slot.herder = herder

    async def start(self) -> None:
        if self._runner is not None:
            return
        runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
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
