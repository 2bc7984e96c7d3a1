"""The internal REST server of dedicated MirrorMaker (KIP-710; Java's ``MirrorRestServer``).

With ``dedicated.mode.enable.internal.rest=true`` one server per process serves every herder of that
process, each under its flow's namespace (the URL-encoded source and target aliases), and nothing else:

- ``POST /{source}/{target}/connectors/{connector}/tasks``: a follower publishes the task configs it
  generated; the herder of that flow verifies the signature (``sessioned``) and writes them if it
  leads, else the request is forwarded once to its leader under the same path (Java's
  ``InternalMirrorResource``).
- ``PUT /{source}/{target}/connectors/{connector}/fence``: zombie fencing for exactly-once source
  support (KIP-618): the flow's herder runs the round if it leads (signed, empty body), else the
  request is forwarded once to its leader under the same path, as task configs are.
- An unknown flow answers 404 ``No replication flow found for source 'S' and target 'T'``; any other
  path 404, as Java's (no public Connect API, no ``/``, no admin endpoints, no REST extensions).

Its settings are the top-level ``listeners`` (default ``http://:8083``), ``rest.advertised.*``, CORS and
TLS keys of ``mm2.properties`` (``listeners.https.ssl.*``, else ``ssl.*``), as Java's
``RestServerConfig.forInternal``. Followers reach a leader at ``<leader url>/<source>/<target>/connectors/
<connector>/tasks`` (:meth:`MirrorRestServer.task_config_publisher`), so Java and pyconnect nodes of one
dedicated cluster can forward to each other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import quote

from aiohttp import web

from pyconnect.config.definition import ConfigDef
from pyconnect.config.worker import WORKER_CONFIG_DEF
from pyconnect.errors import NotFoundError, ServiceUnavailableError
from pyconnect.herder.interface import HerderApi
from pyconnect.herder.source_fencing import RequestFencing
from pyconnect.rest.forwarding import Forwarder
from pyconnect.rest.media import any_content, reads_json_body
from pyconnect.rest.resources import accept_fencing, accept_task_configs
from pyconnect.rest.security import SslSettings
from pyconnect.rest.server import RestServer

INTERNAL_REST_CONFIG_DEF = ConfigDef(
    tuple(
        WORKER_CONFIG_DEF[name]
        for name in (
            "listeners",
            "rest.advertised.host.name",
            "rest.advertised.port",
            "rest.advertised.listener",
            "access.control.allow.origin",
            "access.control.allow.methods",
        )
    )
)
"""The keys of Java's internal-only ``RestServerConfig`` (TLS keys are read by :class:`SslSettings`)."""

Flow = tuple[str, str]
PublishTaskConfigs = Callable[[str, str, bytes, Mapping[str, str]], Awaitable[None]]


def flow_path(source: str, target: str) -> str:
    """``/<source>/<target>``, each alias percent-encoded as Java's ``MirrorMaker.encodePath`` does
    (``URLEncoder`` with ``+`` replaced by ``%20``: ``*``, ``-``, ``.``, ``_`` stay as they are)."""
    return "/" + "/".join(quote(alias, safe="*-._") for alias in (source, target))


class MirrorRestServer(RestServer):
    """One process's internal server; herders are attached once built (503 until then)."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        """``props`` are the ``mm2.properties`` originals; raises ``ConfigError`` for invalid REST keys."""
        cfg = INTERNAL_REST_CONFIG_DEF.parse(dict(props))
        port = cfg["rest.advertised.port"]
        listeners = cfg["listeners"]
        assert isinstance(listeners, list)
        super().__init__(
            None,
            [str(x) for x in listeners],
            advertised_host=str(cfg["rest.advertised.host.name"] or "") or None,
            advertised_port=int(str(port)) if port else None,
            advertised_scheme=str(cfg["rest.advertised.listener"] or "") or None,
            ssl_settings=SslSettings.from_worker_config(props),
            allowed_origins=str(cfg["access.control.allow.origin"] or ""),
            allowed_methods=str(cfg["access.control.allow.methods"] or ""),
            route_table=_routes,
        )
        self.herders: dict[Flow, HerderApi] | None = None
        self.app[_SERVER] = self
        self.app[_FORWARDER] = self.forwarder
        self.app.add_routes(_routes)

    def attach_herders(self, herders: Mapping[Flow, HerderApi]) -> None:
        """Serve these herders, keyed by ``(source, target)``, from now on."""
        self.herders = dict(herders)

    def herder_for(self, source: str, target: str) -> HerderApi:
        if self.herders is None:
            raise ServiceUnavailableError("MirrorMaker is still starting up.")
        herder = self.herders.get((source, target))
        if herder is None:
            raise NotFoundError(f"No replication flow found for source '{source}' and target '{target}'")
        return herder

    def task_config_publisher(self, source: str, target: str) -> PublishTaskConfigs:
        """What a follower herder of ``source->target`` calls to hand task configs to its leader."""
        namespace = flow_path(source, target)

        async def publish(leader_url: str, connector: str, body: bytes, headers: Mapping[str, str]) -> None:
            await self.forwarder.post_task_configs(
                leader_url.rstrip("/") + namespace, connector, body, headers
            )

        return publish

    def fencing_requester(self, source: str, target: str) -> RequestFencing:
        """What a herder of ``source->target`` calls to ask its leader for a zombie fencing round."""
        namespace = flow_path(source, target)

        async def request(leader_url: str, connector: str, headers: Mapping[str, str]) -> None:
            await self.forwarder.put_fence(leader_url.rstrip("/") + namespace, connector, headers)

        return request


_SERVER = web.AppKey("mirror_rest_server", MirrorRestServer)
_FORWARDER = web.AppKey("mirror_forwarder", Forwarder)
_routes = web.RouteTableDef()


def _herder(request: web.Request) -> HerderApi:
    return request.app[_SERVER].herder_for(request.match_info["source"], request.match_info["target"])


@_routes.post("/{source}/{target}/connectors/{connector}/tasks")
@reads_json_body
async def put_task_configs(request: web.Request) -> web.StreamResponse:
    herder = _herder(request)
    return await accept_task_configs(request, lambda: herder, request.app[_FORWARDER])


@_routes.put("/{source}/{target}/connectors/{connector}/fence")
@any_content
async def fence_zombies(request: web.Request) -> web.StreamResponse:
    herder = _herder(request)
    return await accept_fencing(request, lambda: herder, request.app[_FORWARDER])
