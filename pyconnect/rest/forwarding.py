"""Two-hop forwarding of write requests to the leader or the owning worker (spec §4.2).

- A request without ``forward`` is re-issued to the target with ``forward=true``; one with
  ``forward=true`` may hop once more with ``forward=false``; ``forward=false`` (any value but
  ``true``, as Java's ``Boolean`` parameter reads it; an empty one is absent) that still misses the
  target answers 409. The original query parameters travel along.
- The target URL is rebuilt from the matched route and the parsed names, each re-encoded as one
  path segment (pyconnect.rest.paths), never from the decoded path: a name holding ``/``, ``..``,
  ``#`` or ``?`` reaches exactly the resource it names on the target.
- Only ``Authorization`` is copied from the incoming headers. The target's status, body and
  ``Content-Type`` are passed back unchanged (so 201 vs 200 and remote errors survive the hop); a
  ``Location`` is this worker's to set, as Java's follower builds its own.
- ``RebalanceNeededError`` on a forwarding endpoint answers 409 (stale configuration).
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Awaitable, Callable, Mapping

import aiohttp
from aiohttp import web

from pyconnect.errors import ConflictError, ConnectError, RebalanceNeededError, RequestTargetError
from pyconnect.herder.health import HEALTH_CHECK_TIMEOUT_S, WORKER_SCOPE, LeaderAnswer
from pyconnect.rest.paths import canonical_path, join_segments, url_at
from pyconnect.rest.query import java_boolean

FORWARD = "forward"
CONFLICT = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
NO_LEADER = (
    "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
)
LEADER_HEALTH_MARGIN_S = 2.0
STALE = "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"


class Forwarder:
    """Owns the HTTP client used for hops between workers."""

    def __init__(
        self, timeout_s: float = 90.0, *, ssl_factory: Callable[[], ssl.SSLContext] | None = None
    ) -> None:
        """``ssl_factory`` builds, on first use, the context that verifies ``https://`` targets (the
        worker's ``listeners.https.`` settings, as Java's RestClient uses them); None uses the defaults."""
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._ssl_factory = ssl_factory
        self._ssl: ssl.SSLContext | None = None
        self._session: aiohttp.ClientSession | None = None

    async def stop(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self._timeout)
        return self._session

    def _ssl_for(self, url: str) -> ssl.SSLContext | bool:
        """TLS settings only matter for ``https://`` targets (so a JKS store on an http cluster is fine)."""
        if not url.lower().startswith("https://") or self._ssl_factory is None:
            return True
        if self._ssl is None:
            self._ssl = self._ssl_factory()
        return self._ssl

    async def run(
        self, request: web.Request, operation: Callable[[], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Run ``operation`` here, or forward the request where the herder says it belongs."""
        try:
            return await operation()
        except RebalanceNeededError:
            raise ConflictError(STALE) from None
        except RequestTargetError as exc:
            return await self.forward(request, exc.forward_url)

    async def forward(self, request: web.Request, target_url: str | None) -> web.StreamResponse:
        incoming = request.query.get(FORWARD) or None  # empty reads as absent, as Jersey reads it
        if incoming is not None and not java_boolean(incoming):
            raise ConflictError(CONFLICT)
        if not target_url:
            raise ConflictError(NO_LEADER)
        params = [(k, v) for k, v in request.query.items() if k != FORWARD]
        params.append((FORWARD, "true" if incoming is None else "false"))
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if "Authorization" in request.headers:
            headers["Authorization"] = request.headers["Authorization"]
        body = await request.read()
        url = url_at(target_url, canonical_path(request), params)
        async with self._client().request(
            request.method, url, data=body or None, headers=headers, ssl=self._ssl_for(str(url))
        ) as resp:
            payload = await resp.read()
            out = web.Response(status=resp.status, body=payload)
            if "Content-Type" in resp.headers:
                out.headers["Content-Type"] = resp.headers["Content-Type"]
            return out

    async def leader_health(self, leader_url: str) -> LeaderAnswer:
        """The leader's own ``/health`` (:data:`WORKER_SCOPE`: it asks nobody else), or why it could
        not be asked. Bounded by the leader's own check plus a margin."""
        url = url_at(leader_url, "/health", [WORKER_SCOPE])
        try:
            async with self._client().get(
                url,
                headers={"Accept": "application/json"},
                ssl=self._ssl_for(str(url)),
                timeout=aiohttp.ClientTimeout(total=HEALTH_CHECK_TIMEOUT_S + LEADER_HEALTH_MARGIN_S),
            ) as resp:
                payload = await resp.read()
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            return LeaderAnswer(None, error=str(exc) or type(exc).__name__)
        try:
            body = json.loads(payload)
        except ValueError:
            body = None
        return LeaderAnswer(resp.status, body if isinstance(body, dict) else None)

    async def fetch(self, url: str, headers: Mapping[str, str], timeout_s: float) -> tuple[int, bytes]:
        """``GET url`` from another worker: its status and body. Client and network errors raise
        (``aiohttp.ClientError``, ``OSError``, ``TimeoutError``)."""
        async with self._client().get(
            url,
            headers=dict(headers),
            ssl=self._ssl_for(url),
            timeout=aiohttp.ClientTimeout(total=timeout_s),
        ) as resp:
            return resp.status, await resp.read()

    async def put_fence(self, leader_url: str, connector: str, headers: Mapping[str, str]) -> None:
        """A worker asks the leader for a zombie fencing round (KIP-618): ``PUT .../fence``, empty body."""
        url = url_at(leader_url, join_segments("connectors", connector, "fence"))
        async with self._client().put(
            url, data=b"", headers=dict(headers), ssl=self._ssl_for(str(url))
        ) as resp:
            if resp.status >= 300:
                text = await resp.text()
                raise ConnectError(
                    f"Forwarding zombie fencing request to the leader at {leader_url} failed with {resp.status}: {text}"
                )

    async def post_task_configs(
        self, leader_url: str, connector: str, body: bytes, headers: Mapping[str, str]
    ) -> None:
        """A follower publishes generated task configs to the leader's internal endpoint."""
        url = url_at(leader_url, join_segments("connectors", connector, "tasks"))
        async with self._client().post(
            url,
            data=body,
            headers={"Content-Type": "application/json", **headers},
            ssl=self._ssl_for(str(url)),
        ) as resp:
            if resp.status >= 300:
                text = await resp.text()
                raise ConnectError(
                    f"Publishing task configs of {connector} to the leader failed with {resp.status}: {text}"
                )
