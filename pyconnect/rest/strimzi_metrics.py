"""The metrics ports Strimzi scrapes beside the REST API: one plain-HTTP server per port, ``GET /metrics`` only.

:func:`metrics_listeners` says which a worker runs, from its properties and environment:

- the Strimzi Metrics Reporter (``metric.reporters`` names it, its listener enabled;
  pyconnect.metrics.strimzi_reporter): its series on ``prometheus.metrics.reporter.listener``
  (``http://:8080`` unless set; Strimzi writes ``http://:9404``);
- ``KAFKA_CONNECT_JMX_EXPORTER_ENABLED=true`` (what Strimzi sets for ``metricsConfig: {type:
  jmxPrometheusExporter}``, whose agent listens on 9404): the worker's JMX-exporter series, the ones
  the REST API's ``GET /metrics`` serves, on 0.0.0.0:9404.

The REST API is not served on these ports (Strimzi's network policy opens 9404 to every pod, 8083 only
to Connect's pods and the operator). Anything but ``GET /metrics`` answers 404. ``start`` binds (an
address in use is a ``ConnectError`` naming the port) and ``stop`` is idempotent.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from aiohttp import web

from pyconnect.errors import ConnectError
from pyconnect.metrics import strimzi_reporter
from pyconnect.metrics.prometheus import CONTENT_TYPE
from pyconnect.metrics.registry import MetricsHub

JMX_EXPORTER_VARIABLE = "KAFKA_CONNECT_JMX_EXPORTER_ENABLED"
JMX_EXPORTER_PORT = 9404


class MetricsOnlyListener:
    """``GET /metrics`` answering ``render()`` on ``host:port``."""

    def __init__(self, what: str, host: str, port: int, render: Callable[[], str]) -> None:
        self.what = what
        self.host = host
        self.port = port
        self._render = render
        self._runner: web.AppRunner | None = None

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=self._render().encode(), headers={"Content-Type": CONTENT_TYPE})

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port, reuse_address=True).start()
        except OSError as exc:
            await runner.cleanup()
            raise ConnectError(f"Cannot listen on {self.host}:{self.port} for {self.what}: {exc}") from None
        self._runner = runner

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()


def metrics_listeners(
    props: Mapping[str, object],
    hub: MetricsHub,
    jmx_exporter_render: Callable[[], str],
    environ: Mapping[str, str] | None = None,
) -> list[MetricsOnlyListener]:
    """The listeners this worker runs (see the module docstring); none by default."""
    env = os.environ if environ is None else environ
    listeners = []
    config = strimzi_reporter.reporter_config(props)
    if config is not None and config.enabled:

        def render_reporter() -> str:
            return strimzi_reporter.render(strimzi_reporter.samples(hub.read(), config.allowlist))

        listeners.append(
            MetricsOnlyListener("the Strimzi Metrics Reporter", config.host, config.port, render_reporter)
        )
    if env.get(JMX_EXPORTER_VARIABLE, "").strip().lower() == "true" and not any(
        listener.port == JMX_EXPORTER_PORT for listener in listeners
    ):
        listeners.append(
            MetricsOnlyListener(
                "the JMX exporter's series", "0.0.0.0", JMX_EXPORTER_PORT, jmx_exporter_render
            )
        )
    return listeners
