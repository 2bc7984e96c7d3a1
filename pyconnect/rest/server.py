"""The REST server of one worker: listeners, the aiohttp application, and its lifecycle.

Contract: the server may start before its herder exists (``attach`` it once built), so that
``/health`` answers "starting" during startup as Java's does. ``start()`` binds every listener (``http://host:port``; port 0 picks a free port) and
returns once they accept connections; ``advertised_url`` is what other workers use to reach this
one (``rest.advertised.*`` when set, else the first listener as bound). ``stop()`` is idempotent
and closes the forwarding client too. Bodies above ``max_body_bytes`` answer 413.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web

from pyconnect import __version__
from pyconnect.errors import ConfigError
from pyconnect.herder.interface import HerderApi
from pyconnect.rest.errors import error_middleware
from pyconnect.rest.forwarding import Forwarder
from pyconnect.rest.resources import COMMIT_ID, FORWARDER, HERDER, HerderSlot, routes


@dataclass(frozen=True)
class Listener:
    scheme: str
    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> Listener:
        """``http://host:port``; an empty host means every interface, as in Java (``http://:8083``)."""
        parts = urlsplit(text.strip())
        try:
            port = parts.port
        except ValueError:
            port = None
        if parts.scheme != "http" or port is None:
            raise ConfigError(f"Invalid value {text} for configuration listeners: expected http://host:port")
        return cls(parts.scheme, parts.hostname or "0.0.0.0", port)


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
    ) -> None:
        self._listeners = [Listener.parse(text) for text in listeners]
        if not self._listeners:
            raise ConfigError(
                "Invalid value [] for configuration listeners: at least one listener is required"
            )
        self._advertised = (advertised_scheme, advertised_host, advertised_port)
        self.forwarder = Forwarder()
        self.app = web.Application(middlewares=[error_middleware], client_max_size=max_body_bytes)
        self.slot = HerderSlot(herder)
        self.app[HERDER] = self.slot
        self.app[FORWARDER] = self.forwarder
        self.app[COMMIT_ID] = hashlib.sha256(__version__.encode()).hexdigest()[:16]
        self.app.add_routes(routes)
        self._runner: web.AppRunner | None = None
        self.bound: list[tuple[str, int]] = []

    def attach(self, herder: HerderApi) -> None:
        """Serve ``herder`` from now on (before this, resources answer 503 and health "starting")."""
        self.slot.herder = herder

    async def start(self) -> None:
        if self._runner is not None:
            return
        runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await runner.setup()
        self._runner = runner
        for listener in self._listeners:
            site = web.TCPSite(runner, listener.host, listener.port, reuse_address=True)
            await site.start()
            server = site._server
            sockets = getattr(server, "sockets", None) or []
            port = sockets[0].getsockname()[1] if sockets else listener.port
            self.bound.append((listener.host, port))

    @property
    def advertised_url(self) -> str:
        scheme, host, port = self._advertised
        bound_host, bound_port = (
            self.bound[0] if self.bound else (self._listeners[0].host, self._listeners[0].port)
        )
        return f"{scheme or self._listeners[0].scheme}://{host or bound_host}:{port or bound_port}/"

    async def stop(self) -> None:
        await self.forwarder.stop()
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
