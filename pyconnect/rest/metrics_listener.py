"""The metrics listener of dedicated MirrorMaker (``metrics.listener = http://host:port`` in mm2.properties).

Dedicated mode has no public REST API; with this key set one plain-HTTP server per process, bound
where the key says, serves for every flow of the process:

- ``GET /metrics``: the Prometheus text format, a worker's names and labels with ``source``/``target``
  labels telling the flows apart (pyconnect.metrics.flows), then the process and event-loop series,
  then the flows' ``pyconnect_mirror_*`` series of the ``/mirrors`` document (pyconnect.metrics.flow_status,
  cached for scrapes by pyconnect.rest.flow_metrics; none before the herders are attached).
- ``GET /mirrors``: the mirror status document (pyconnect.mirror_status.core) of every flow, from each
  flow herder's connector configs and statuses (cluster-wide, from its status topic) and this
  process's mirror task metrics. A node of a multi-node dedicated cluster serves only its own
  metrics (the group's other members advertise no metrics URL): a flow with a task on another node
  is ``UNKNOWN``, naming that node, unless its run state already decides it.
- ``GET /mirrors/ui``: the status page (pyconnect.mirror_status.page), which reads ``/mirrors``.

Anything else is 404 with the Connect error body; before the herders are attached ``/mirrors``
answers 503 and ``/metrics`` serves the process series. Off by default.

:func:`parse_metrics_listener` checks the key: one ``http://host:port`` (port 0 picks a free port), no
other scheme, no path, host required; anything else is a one-line ``ConfigError`` naming the key.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from pyconnect.errors import ConfigError, ConnectError, ServiceUnavailableError
from pyconnect.herder.interface import HerderApi
from pyconnect.metrics.flows import FlowMetrics, FlowsExposition
from pyconnect.metrics.process import (
    EventLoopLag,
    PluginThreads,
    event_loop_samples,
    plugin_call_samples,
    process_samples,
)
from pyconnect.metrics.prometheus import CONTENT_TYPE as PROMETHEUS_CONTENT_TYPE
from pyconnect.metrics.prometheus import Collector, Sample
from pyconnect.metrics.registry import MetricsHub
from pyconnect.mirror_status.core import (
    ConnectorView,
    Progress,
    hub_progress,
    mirror_status,
    task_worker_ids,
)
from pyconnect.mirror_status.page import PAGE
from pyconnect.rest.flow_metrics import StatusDocumentCache
from pyconnect.rest.media import any_content
from pyconnect.rest.mirror_status import connector_views
from pyconnect.rest.resources import json_response
from pyconnect.rest.server import RestServer

Flow = tuple[str, str]
METRICS_LISTENER_CONFIG = "metrics.listener"
"""The mm2.properties key of the listener (pyconnect's; no Java config of MirrorMaker, Connect or the
clients has a key of this name in 4.3.1)."""
OTHER_NODE = "it runs on another MirrorMaker node; a dedicated node serves only its own metrics"


def parse_metrics_listener(value: str | None) -> tuple[str, int] | None:
    """``(host, port)`` of ``metrics.listener``; ``None`` when unset or empty (the listener is off).
    Raises ``ConfigError`` (one line) for anything but ``http://host:port``."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    problem = f"Invalid value {text} for configuration {METRICS_LISTENER_CONFIG}: expected http://host:port"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise ConfigError(problem) from None
    if parts.scheme.lower() != "http" or port is None or not parts.hostname:
        raise ConfigError(problem)
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise ConfigError(problem)
    return parts.hostname, port


class MetricsListener(RestServer):
    """The listener (see the module docstring). ``hubs`` are the flows' metric hubs, in flow order;
    ``attach_herders`` serves the herders once built. ``start``/``stop`` (idempotent) also run the
    event-loop lag sampler."""

    def __init__(self, host: str, port: int, hubs: Mapping[Flow, MetricsHub]) -> None:
        self.configured = f"http://{host}:{port}"
        super().__init__(None, [self.configured], route_table=_routes)
        self.hubs = dict(hubs)
        self.flows = [FlowMetrics.of(source, target, hub) for (source, target), hub in self.hubs.items()]
        self.event_loop_lag = EventLoopLag()
        self.flow_status = StatusDocumentCache()
        self.exposition = FlowsExposition(
            self.flows,
            (process_samples, event_loop_samples, self.event_loop_lag.samples, self.flow_status.samples),
        )
        self.herders: dict[Flow, HerderApi] | None = None
        self.serve_metrics(self.exposition.render)
        self.app[_LISTENER] = self

    @property
    def url(self) -> str:
        """The bound URL (``http://host:port/``)."""
        return self.url_of("http")

    def attach_herders(self, herders: Mapping[Flow, HerderApi], calls: Mapping[Flow, PluginThreads]) -> None:
        """Serve ``/mirrors`` for these herders and each flow's plugin-thread series from now on."""
        self.herders = dict(herders)
        for flow in self.flows:
            plugin_calls = calls.get((flow.source, flow.target))
            if plugin_calls is not None:
                flow.exposition.add_collector(_plugin_samples(plugin_calls))

    def progress(self) -> Progress:
        """The mirror task metrics of every flow of this process."""
        return hub_progress(self.hubs.values())

    async def status_document(self) -> dict[str, Any]:
        if self.herders is None:
            raise ServiceUnavailableError("MirrorMaker is still starting up.")
        views: list[ConnectorView] = []
        password_keys: set[str] = set()
        for herder in self.herders.values():
            found, keys = await connector_views(herder)
            views += found
            password_keys |= keys
        return dedicated_status(
            views,
            self.progress(),
            own_workers=[h.worker_id for h in self.herders.values()],
            now_ms=int(time.time() * 1000),
            password_keys=password_keys,
        )

    async def flow_document(self) -> dict[str, Any] | None:
        """The status document for ``/metrics`` (``None`` before the herders are attached)."""
        return None if self.herders is None else await self.status_document()

    async def start(self) -> None:
        """Bind the listener; a failure to bind raises ``ConnectError`` naming the key."""
        try:
            await super().start()
        except OSError as exc:
            await super().stop()
            raise ConnectError(
                f"Cannot listen on {METRICS_LISTENER_CONFIG} {self.configured}: {exc}"
            ) from None
        self.event_loop_lag.start()

    async def stop(self) -> None:
        await self.flow_status.stop()
        await super().stop()
        await self.event_loop_lag.stop()


def dedicated_status(
    views: Sequence[ConnectorView],
    progress: Progress,
    *,
    own_workers: Sequence[str],
    now_ms: int,
    password_keys: set[str] | None = None,
) -> dict[str, Any]:
    """The status document of a dedicated node: tasks on workers other than ``own_workers`` (the
    process's flow herders) are ones whose metrics this node cannot read."""
    others = task_worker_ids(views) - set(own_workers)
    return mirror_status(
        views,
        progress,
        now_ms=now_ms,
        unreachable=dict.fromkeys(sorted(others), OTHER_NODE),
        password_keys=password_keys or (),
    )


def _plugin_samples(calls: PluginThreads) -> Collector:
    def collect() -> list[Sample]:
        return plugin_call_samples(calls)

    return collect


_LISTENER = web.AppKey("metrics_listener", MetricsListener)
_routes = web.RouteTableDef()


@_routes.get("/metrics")
@any_content
async def metrics(request: web.Request) -> web.Response:
    listener = request.app[_LISTENER]
    await listener.flow_status.refresh(listener.flow_document)
    body = listener.exposition.render().encode()
    return web.Response(body=body, headers={"Content-Type": PROMETHEUS_CONTENT_TYPE})


@_routes.get("/mirrors")
@any_content
async def mirrors(request: web.Request) -> web.Response:
    document = await request.app[_LISTENER].status_document()
    return json_response(document)


@_routes.get("/mirrors/ui")
@any_content
async def mirrors_page(request: web.Request) -> web.Response:
    return web.Response(text=PAGE, content_type="text/html", charset="utf-8")
