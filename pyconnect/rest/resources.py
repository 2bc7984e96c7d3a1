"""The Connect REST resources: Java's paths, query parameters, status codes and JSON (spec §4.3).

Handlers translate between HTTP and the ``HerderApi``; they hold no state of their own. Writes go
through ``Forwarder.run`` so a worker that is not the target forwards them. Each handler declares
what it consumes (pyconnect.rest.media: ``reads_json_body``, ``any_content``); names come from the
route as one decoded segment and go back into URLs only through pyconnect.rest.paths.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from pyconnect import COMPATIBLE_KAFKA_VERSION
from pyconnect.concurrency import together
from pyconnect.config.connector_name import create_request_name
from pyconnect.errors import BadRequestError, NotFoundError, ServiceUnavailableError
from pyconnect.herder.entities import initial_target_state
from pyconnect.herder.health import WORKER_SCOPE, fleet_verdict, starting
from pyconnect.herder.interface import HerderApi
from pyconnect.metrics.prometheus import CONTENT_TYPE as PROMETHEUS_CONTENT_TYPE
from pyconnect.mirror_status.page import PAGE
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.rest.bind import NO_OFFSETS as NO_OFFSETS  # the message, for callers of this module
from pyconnect.rest.bind import logger_level_body, nullable_string_map, offsets_body, string_map
from pyconnect.rest.errors import MalformedRequest
from pyconnect.rest.forwarding import Forwarder
from pyconnect.rest.media import any_content, reads_json_body
from pyconnect.rest.mirror_status import MirrorProgressSlot, status_document
from pyconnect.rest.openapi import openapi
from pyconnect.rest.paths import join_segments, request_base
from pyconnect.rest.query import flag, version_requirement
from pyconnect.rest.request_body import number_text, parse_json


class HerderSlot:
    """The herder the resources talk to; empty while the worker is still starting (503)."""

    def __init__(self, herder: HerderApi | None = None) -> None:
        self.herder = herder

    def get(self) -> HerderApi:
        if self.herder is None:
            raise ServiceUnavailableError("Worker is still starting up.")
        return self.herder


class MetricsSlot:
    """What ``GET /metrics`` serves: the worker's exposition, set by the composition root, and what a
    scrape awaits before it is rendered (``refresh``, given the request; pyconnect.rest.flow_metrics)."""

    def __init__(self) -> None:
        self.render: Callable[[], str] | None = None
        self.refresh: Callable[[web.Request], Awaitable[None]] | None = None


HERDER = web.AppKey("herder", HerderSlot)
MIRROR_PROGRESS = web.AppKey("mirror_progress", MirrorProgressSlot)
METRICS = web.AppKey("metrics", MetricsSlot)
FORWARDER = web.AppKey("forwarder", Forwarder)
COMMIT_ID = web.AppKey("commit_id", str)


def json_response(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.Response(
        status=status,
        text=json.dumps(body, separators=(",", ":")),
        content_type="application/json",
        headers=headers,
    )


async def json_body(request: web.Request) -> Any:
    """The request's JSON value (pyconnect.rest.request_body limits; 400 otherwise)."""
    return parse_json(await request.read())


def with_location(request: web.Request, name: str, response: web.StreamResponse) -> web.StreamResponse:
    """A 201 gets the absolute, percent-encoded ``Location`` of the created connector, as Java's Jersey
    gives it, built by the worker the client asked (also when the leader answered the write)."""
    if response.status == 201:
        response.headers["Location"] = request_base(request) + join_segments("connectors", name)
    return response


JAVA_INT = re.compile(r"[+-]?[0-9]+")


def task_number(request: web.Request) -> int:
    """The ``{task}`` segment as Java's ``Integer`` path parameter: an optionally signed run of ASCII
    digits within 32 bits, else the resource does not exist (404 ``HTTP 404 Not Found``)."""
    text = request.match_info["task"]
    if JAVA_INT.fullmatch(text) and -(2**31) <= (number := int(text)) < 2**31:
        return number
    raise web.HTTPNotFound()


routes = web.RouteTableDef()


@routes.get("/")
@any_content
async def server_info(request: web.Request) -> web.Response:
    herder = request.app[HERDER].get()
    return json_response(
        {
            "version": COMPATIBLE_KAFKA_VERSION,
            "commit": request.app[COMMIT_ID],
            "kafka_cluster_id": herder.kafka_cluster_id,
        }
    )


@routes.get("/health")
@any_content
async def health(request: web.Request) -> web.Response:
    """KIP-1017, with a follower also asking its leader (pyconnect.herder.health)."""
    herder = request.app[HERDER].herder
    if herder is None:
        verdict = starting()
    else:
        asks_leader, leader_url = herder.health_leader_url()
        if not asks_leader or request.query.get(WORKER_SCOPE[0]) == WORKER_SCOPE[1]:
            verdict = await herder.health_check()
        elif leader_url is None:
            verdict = fleet_verdict(await herder.health_check(), None, None)
        else:
            own, leader = await together(
                herder.health_check(), request.app[FORWARDER].leader_health(leader_url)
            )
            verdict = fleet_verdict(own, leader_url, leader)
    return json_response(verdict.to_json(), status=verdict.http_status)


@routes.get("/metrics")
@any_content
async def metrics(request: web.Request) -> web.Response:
    """This worker's metrics in the Prometheus text format (pyconnect.metrics.prometheus); answered by
    every worker for itself, leader or follower, never forwarded."""
    slot = request.app[METRICS]
    if slot.render is None:
        raise ServiceUnavailableError("Worker is still starting up.")
    if slot.refresh is not None:
        await slot.refresh(request)
    return web.Response(body=slot.render().encode(), headers={"Content-Type": PROMETHEUS_CONTENT_TYPE})


@routes.get("/mirrors")
@any_content
async def mirrors(request: web.Request) -> web.Response:
    """The MirrorMaker 2 flows and their status (pyconnect.rest.mirror_status), from any worker."""
    herder = request.app[HERDER].get()
    return json_response(
        await status_document(herder, request.app[FORWARDER], request.app[MIRROR_PROGRESS], request)
    )


@routes.get("/mirrors/progress")
@any_content
async def mirror_progress(request: web.Request) -> web.Response:
    """This worker's own mirror task metrics (what ``/mirrors`` gathers from each worker)."""
    request.app[HERDER].get()
    return json_response(request.app[MIRROR_PROGRESS].local().to_json())


@routes.get("/mirrors/ui")
@any_content
async def mirrors_page(request: web.Request) -> web.Response:
    """The status page: static HTML that polls ``/mirrors`` (pyconnect.mirror_status.page)."""
    return web.Response(text=PAGE, content_type="text/html", charset="utf-8")


@routes.get("/connectors")
async def list_connectors(request: web.Request) -> web.Response:
    herder = request.app[HERDER].get()
    names = herder.connectors()
    if "expand" not in request.query:
        return json_response(names)
    expand = set(request.query.getall("expand"))
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        entry: dict[str, Any] = {}
        if "status" in expand:
            try:
                entry["status"] = herder.connector_status(name).to_json()
            except NotFoundError:
                continue
        if "info" in expand:
            try:
                entry["info"] = (await herder.connector_info(name)).to_json()
            except NotFoundError:
                entry["info"] = None
        out[name] = entry
    return json_response(out)


@routes.post("/connectors")
@reads_json_body
async def create_connector(request: web.Request) -> web.StreamResponse:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise MalformedRequest("Request body must be a JSON object with 'name' and 'config'")
    unknown = sorted(set(body) - {"name", "config", "initial_state"})
    if unknown:
        raise MalformedRequest(
            f'Unrecognized field "{unknown[0]}" (class org.apache.kafka.connect.runtime.rest.entities.'
            'CreateConnectorRequest), not marked as ignorable (3 known properties: "config", "name", '
            '"initial_state")'
        )
    given = body.get("name")
    if isinstance(given, (int, float)) and not isinstance(given, bool):
        given = number_text(given)
    elif given is not None and not isinstance(given, str):
        raise MalformedRequest("name must be a string")
    name = create_request_name(given)
    config = string_map(body.get("config", {}), "config")
    if "name" in config and config["name"] != name:
        raise BadRequestError(
            f"Connector name configuration ({config['name']}) doesn't match connector name in the URL ({name})"
        )
    config["name"] = name
    initial = body.get("initial_state")
    target = None
    if initial is not None:
        try:
            target = initial_target_state(str(initial))
        except ValueError:
            raise BadRequestError(
                f"Invalid initial state {initial}; must be one of RUNNING, PAUSED, STOPPED"
            ) from None
    herder = request.app[HERDER].get()

    async def create() -> web.StreamResponse:
        _, info = await herder.put_connector_config(name, config, allow_replace=False, initial_state=target)
        return json_response(info.to_json(), status=201)

    return with_location(request, name, await request.app[FORWARDER].run(request, create))


@routes.get("/connectors/{connector}")
async def get_connector(request: web.Request) -> web.Response:
    info = await request.app[HERDER].get().connector_info(request.match_info["connector"])
    return json_response(info.to_json())


@routes.get("/connectors/{connector}/config")
async def get_connector_config(request: web.Request) -> web.Response:
    return json_response(await request.app[HERDER].get().connector_config(request.match_info["connector"]))


@routes.put("/connectors/{connector}/config")
@reads_json_body
async def put_connector_config(request: web.Request) -> web.StreamResponse:
    name = request.match_info["connector"]
    config = string_map(await json_body(request), "connector config")
    if "name" in config and config["name"] != name:
        raise BadRequestError(
            f"Connector name configuration ({config['name']}) doesn't match connector name in the URL ({name})"
        )
    config["name"] = name
    herder = request.app[HERDER].get()

    async def put() -> web.StreamResponse:
        created, info = await herder.put_connector_config(name, config, allow_replace=True)
        return json_response(info.to_json(), status=201 if created else 200)

    return with_location(request, name, await request.app[FORWARDER].run(request, put))


@routes.get("/connectors/{connector}/status")
async def connector_status(request: web.Request) -> web.Response:
    return json_response(
        request.app[HERDER].get().connector_status(request.match_info["connector"]).to_json()
    )


@routes.get("/connectors/{connector}/tasks")
async def task_configs(request: web.Request) -> web.Response:
    tasks = await request.app[HERDER].get().task_configs(request.match_info["connector"])
    return json_response([t.to_json() for t in tasks])


@routes.post("/connectors/{connector}/tasks")
@reads_json_body
async def put_task_configs(request: web.Request) -> web.StreamResponse:
    return await accept_task_configs(request, request.app[HERDER].get, request.app[FORWARDER])


async def accept_task_configs(
    request: web.Request, herder: Callable[[], HerderApi], forwarder: Forwarder
) -> web.StreamResponse:
    """The internal ``POST .../connectors/{connector}/tasks`` by which a follower hands task configs to
    its leader. The body must be a JSON array of string maps (400 otherwise); only then is ``herder()``
    asked for the herder. It verifies the request signature and writes the configs when it leads
    (204); otherwise ``forwarder`` takes the request to the leader."""
    name = request.match_info["connector"]
    raw = await request.read()
    body = await json_body(request)
    if not isinstance(body, list):
        raise MalformedRequest("task configs must be a JSON array of objects")
    configs = [string_map(item, "task config") for item in body]
    target = herder()

    async def put() -> web.StreamResponse:
        await target.put_task_configs(name, configs, raw, dict(request.headers))
        return web.Response(status=204)

    return await forwarder.run(request, put)


@routes.put("/connectors/{connector}/fence")
@any_content
async def fence_zombies(request: web.Request) -> web.StreamResponse:
    return await accept_fencing(request, request.app[HERDER].get, request.app[FORWARDER])


async def accept_fencing(
    request: web.Request, herder: Callable[[], HerderApi], forwarder: Forwarder
) -> web.StreamResponse:
    """The internal ``PUT .../connectors/{connector}/fence`` (KIP-618) by which a worker asks its leader
    to fence the zombies of a source connector before starting its tasks: signed over the exact body
    (empty), answered 204 once fenced and recorded, else forwarded to the leader as Java forwards it."""
    name = request.match_info["connector"]
    raw = await request.read()
    target = herder()

    async def fence() -> web.StreamResponse:
        await target.fence_zombie_source_tasks(name, raw, dict(request.headers))
        return web.Response(status=204)

    return await forwarder.run(request, fence)


@routes.get("/connectors/{connector}/tasks/{task}/status")
async def task_status(request: web.Request) -> web.Response:
    task = ConnectorTaskId(request.match_info["connector"], task_number(request))
    return json_response(request.app[HERDER].get().task_status(task).to_json())


@routes.post("/connectors/{connector}/restart")
async def restart_connector(request: web.Request) -> web.StreamResponse:
    name = request.match_info["connector"]
    include_tasks, only_failed = flag(request.query, "includeTasks"), flag(request.query, "onlyFailed")
    herder = request.app[HERDER].get()

    async def restart() -> web.StreamResponse:
        plan = await herder.restart_connector(name, include_tasks=include_tasks, only_failed=only_failed)
        if plan is None:
            return web.Response(status=204)
        return json_response(plan.to_json(), status=202)

    return await request.app[FORWARDER].run(request, restart)


@routes.post("/connectors/{connector}/tasks/{task}/restart")
async def restart_task(request: web.Request) -> web.StreamResponse:
    task = ConnectorTaskId(request.match_info["connector"], task_number(request))
    herder = request.app[HERDER].get()

    async def restart() -> web.StreamResponse:
        await herder.restart_task(task)
        return web.Response(status=204)

    return await request.app[FORWARDER].run(request, restart)


@routes.put("/connectors/{connector}/pause")
async def pause_connector(request: web.Request) -> web.Response:
    await request.app[HERDER].get().pause_connector(request.match_info["connector"])
    return web.Response(status=202)


@routes.put("/connectors/{connector}/resume")
async def resume_connector(request: web.Request) -> web.Response:
    await request.app[HERDER].get().resume_connector(request.match_info["connector"])
    return web.Response(status=202)


@routes.put("/connectors/{connector}/stop")
async def stop_connector(request: web.Request) -> web.StreamResponse:
    name = request.match_info["connector"]
    herder = request.app[HERDER].get()

    async def stop() -> web.StreamResponse:
        await herder.stop_connector(name)
        return web.Response(status=204)

    return await request.app[FORWARDER].run(request, stop)


@routes.delete("/connectors/{connector}")
async def delete_connector(request: web.Request) -> web.StreamResponse:
    name = request.match_info["connector"]
    herder = request.app[HERDER].get()

    async def delete() -> web.StreamResponse:
        await herder.delete_connector(name)
        return web.Response(status=204)

    return await request.app[FORWARDER].run(request, delete)


@routes.get("/connector-plugins")
async def connector_plugins(request: web.Request) -> web.Response:
    only = flag(request.query, "connectorsOnly", default=True)
    return json_response(request.app[HERDER].get().connector_plugins(only))


@routes.get("/connector-plugins/{plugin}/config")
async def connector_plugin_config(request: web.Request) -> web.Response:
    """KIP-891 ``?version=``: 400 when no installed version of the plugin satisfies it (query.py)."""
    version = version_requirement(request.query)
    herder = request.app[HERDER].get()
    return json_response(herder.connector_plugin_config(request.match_info["plugin"], version))


@routes.put("/connector-plugins/{plugin}/config/validate")
@reads_json_body
async def validate_connector_config(request: web.Request) -> web.Response:
    config = nullable_string_map(await json_body(request), "connector config")
    herder = request.app[HERDER].get()
    return json_response(await herder.validate_connector_config(request.match_info["plugin"], config))


@routes.patch("/connectors/{connector}/config")
@reads_json_body
async def patch_connector_config(request: web.Request) -> web.StreamResponse:
    name = request.match_info["connector"]
    herder = request.app[HERDER].get()
    raw = await request.read()
    value = parse_json(raw) if raw.strip() else None
    if value is None:  # no patch at all (empty or null): Java looks the connector up first, 404
        await herder.connector_config(name)
        parse_json(raw)  # 400: the body is empty
    patch = nullable_string_map(value, "connector config")

    async def apply() -> web.StreamResponse:
        return json_response((await herder.patch_connector_config(name, patch)).to_json())

    return await request.app[FORWARDER].run(request, apply)


@routes.get("/connectors/{connector}/offsets")
async def connector_offsets(request: web.Request) -> web.Response:
    return json_response(await request.app[HERDER].get().connector_offsets(request.match_info["connector"]))


@routes.patch("/connectors/{connector}/offsets")
@reads_json_body
async def alter_connector_offsets(request: web.Request) -> web.StreamResponse:
    name = request.match_info["connector"]
    pairs = offsets_body(await json_body(request))
    herder = request.app[HERDER].get()

    async def alter() -> web.StreamResponse:
        return json_response({"message": await herder.alter_connector_offsets(name, pairs)})

    return await request.app[FORWARDER].run(request, alter)


@routes.delete("/connectors/{connector}/offsets")
async def reset_connector_offsets(request: web.Request) -> web.StreamResponse:
    name = request.match_info["connector"]
    herder = request.app[HERDER].get()

    async def reset() -> web.StreamResponse:
        return json_response({"message": await herder.reset_connector_offsets(name)})

    return await request.app[FORWARDER].run(request, reset)


@routes.get("/connectors/{connector}/topics")
async def connector_topics(request: web.Request) -> web.Response:
    return json_response(request.app[HERDER].get().connector_active_topics(request.match_info["connector"]))


@routes.put("/connectors/{connector}/topics/reset")
async def reset_connector_topics(request: web.Request) -> web.Response:
    request.app[HERDER].get().reset_connector_active_topics(request.match_info["connector"])
    return web.Response(status=202)


@routes.get("/admin/loggers")
async def logger_levels(request: web.Request) -> web.Response:
    return json_response(request.app[HERDER].get().logger_levels())


@routes.get("/admin/loggers/{logger}")
async def logger_level(request: web.Request) -> web.Response:
    return json_response(request.app[HERDER].get().logger_level(request.match_info["logger"]))


@routes.put("/admin/loggers/{logger}")
@reads_json_body
async def set_logger_level(request: web.Request) -> web.Response:
    """Worker scope answers the affected loggers (200); ``scope=cluster`` writes the record (204).

    Any other ``scope`` is treated as ``worker``, as Java does (with a warning)."""
    level = logger_level_body(await json_body(request))
    namespace = request.match_info["logger"]
    herder = request.app[HERDER].get()
    if request.query.get("scope", "worker").lower() == "cluster":
        await herder.set_cluster_logger_level(namespace, level)
        return web.Response(status=204)
    return json_response(herder.set_worker_logger_level(namespace, level))


@routes.get("/openapi.json")
@any_content
async def openapi_document(request: web.Request) -> web.Response:
    return json_response(openapi())
