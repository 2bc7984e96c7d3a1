"""The mirror flows on ``GET /metrics``: the status document of ``GET /mirrors``, cached for scrapes.

A scrape awaits :meth:`StatusDocumentCache.refresh` before the exposition renders, and the exposition's
collector :meth:`StatusDocumentCache.samples` turns the cached document into the
``pyconnect_mirror_*`` series (pyconnect.metrics.flow_status). The document is gathered by the same
code as ``GET /mirrors``: on a distributed worker over the whole fleet (pyconnect.rest.mirror_status:
each peer asked under the scrape's scheme with its ``Authorization``, bounded by ``PEER_TIMEOUT_S``; a
peer that does not answer makes its flows UNKNOWN), on dedicated MirrorMaker's metrics listener from
the process's own flows.

Contract of the cache (one event loop):

- a document younger than ``max_age_s`` is served as it is; otherwise one gathering starts (scrapes
  that arrive meanwhile share it) and the scrape waits for it at most ``wait_s`` — past that it is
  served the previous document and the gathering goes on for the next scrape;
- a gathering is cancelled after ``limit_s``; one that fails or answers ``None`` (the worker is still
  starting) leaves no document, so the flow series are absent rather than stale; a failure is logged
  at WARNING, once per distinct message;
- the gathering is a task the cache owns: :meth:`StatusDocumentCache.stop` (idempotent) cancels it,
  waits, and closes the cache: from then on scrapes get no flow series and nothing is gathered (stop it
  before the REST server, whose forwarder a gathering uses).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from pyconnect.concurrency import cancel_and_wait
from pyconnect.metrics.flow_status import flow_status_samples
from pyconnect.metrics.prometheus import Sample
from pyconnect.rest.mirror_status import PEER_TIMEOUT_S, gather_status
from pyconnect.rest.resources import FORWARDER, HERDER, MIRROR_PROGRESS
from pyconnect.rest.server import RestServer

log = logging.getLogger(__name__)

Document = dict[str, Any]
Gather = Callable[[], Awaitable[Document | None]]

MAX_AGE_S = 2.0
WAIT_S = PEER_TIMEOUT_S + 0.5
LIMIT_S = 3 * PEER_TIMEOUT_S


class StatusDocumentCache:
    """The status document scrapes render (see the module docstring)."""

    def __init__(
        self,
        *,
        max_age_s: float = MAX_AGE_S,
        wait_s: float = WAIT_S,
        limit_s: float = LIMIT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_age_s = max_age_s
        self.wait_s = wait_s
        self.limit_s = limit_s
        self._clock = clock
        self.document: Document | None = None
        self._gathered_at: float | None = None
        self._gathering: asyncio.Task[None] | None = None
        self._last_failure: str | None = None
        self._closed = False

    async def refresh(self, gather: Gather) -> None:
        """Make :attr:`document` at most ``max_age_s`` old, waiting at most ``wait_s``; ``gather`` is
        used only when no gathering is under way."""
        if self._closed:
            return
        if self._gathered_at is not None and self._clock() - self._gathered_at < self.max_age_s:
            return
        task = self._gathering
        if task is None or task.done():
            task = self._gathering = asyncio.create_task(
                self._gather(gather), name="mirror status for /metrics"
            )
        await asyncio.wait({task}, timeout=self.wait_s)

    async def _gather(self, gather: Gather) -> None:
        try:
            async with asyncio.timeout(self.limit_s):
                document = await gather()
        except Exception as exc:
            document = None
            problem = f"{type(exc).__name__}: {exc}"
            if problem != self._last_failure:
                log.warning("The mirror status for /metrics could not be gathered: %s", problem)
            self._last_failure = problem
        else:
            self._last_failure = None
        if not self._closed:
            self.document = document
            self._gathered_at = self._clock()

    def samples(self) -> list[Sample]:
        """The collector: the flow series of the cached document."""
        return flow_status_samples(self.document)

    async def stop(self) -> None:
        self._closed = True
        self.document = None
        task, self._gathering = self._gathering, None
        await cancel_and_wait(task, log=log)


def serve_flow_status(rest: RestServer) -> StatusDocumentCache:
    """Make every ``GET /metrics`` of ``rest`` (a distributed or standalone worker) refresh the
    returned cache first, gathering as ``GET /mirrors`` does; the caller adds
    :meth:`StatusDocumentCache.samples` to its exposition and stops the cache before the server."""
    cache = StatusDocumentCache()

    async def refresh(request: web.Request) -> None:
        herder = request.app[HERDER].herder
        if herder is None:
            cache.document = None
            return
        scheme = request.url.scheme if request.url.scheme in ("http", "https") else "http"
        authorization = request.headers.get("Authorization")
        progress = request.app[MIRROR_PROGRESS]
        forwarder = request.app[FORWARDER]
        await cache.refresh(lambda: gather_status(herder, forwarder, progress, scheme, authorization))

    rest.metrics_slot.refresh = refresh
    return cache
