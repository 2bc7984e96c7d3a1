"""``GET /mirrors``, ``/mirrors/progress`` and ``/mirrors/ui`` on real REST servers with fake herders:
any worker gathers the task metrics of every worker that runs a mirror task, and a worker that does
not answer turns the flow UNKNOWN instead of letting it pass as in sync."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from pyconnect.errors import NotFoundError
from pyconnect.herder.entities import ConnectorState, ConnectorStateInfo, ConnectorType, TaskState
from pyconnect.mirror_status.core import PartitionProgress, Progress
from pyconnect.rest.server import RestServer
from tests.unit.rest.test_rest_api import MemoryHerder

NOW_MS = 10**12
SOURCE = {
    "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
    "source.cluster.alias": "A",
    "target.cluster.alias": "B",
    "source.cluster.sasl.jaas.config": "secret-login",
    "source.cluster.auth.info": "declared-password",
}


class MirrorHerder(MemoryHerder):
    """One MirrorSourceConnector whose tasks run on the workers named in ``task_workers``."""

    def __init__(self) -> None:
        super().__init__()
        self.configs["mirror"] = dict(SOURCE)
        self.task_workers: list[str] = []
        self.worker_id = "unset"

    def connector_plugin_config(self, plugin: str) -> list[dict[str, str]]:
        """The plugin's config table declares ``auth.info`` a password (its name does not say so)."""
        if plugin != SOURCE["connector.class"]:
            raise NotFoundError(f"Unknown plugin {plugin}.")
        return [{"name": "auth.info", "type": "PASSWORD"}, {"name": "topics", "type": "LIST"}]

    def connector_status(self, name: str) -> ConnectorStateInfo:
        self._known(name)
        return ConnectorStateInfo(
            name,
            ConnectorState("RUNNING", self.worker_id),
            [TaskState("RUNNING", w, id=i) for i, w in enumerate(self.task_workers)],
            ConnectorType.SOURCE,
        )


def progress(topic: str) -> Progress:
    return Progress(
        [
            PartitionProgress(
                "A",
                "B",
                topic,
                0,
                records=5.0,
                latency_avg_ms=20.0,
                task_start_ms=0,
                newest_timestamp_ms=NOW_MS,
            )
        ]
    )


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def get(http: aiohttp.ClientSession, server: RestServer, path: str) -> tuple[int, str, object]:
    async with http.get(server.advertised_url.rstrip("/") + path) as resp:
        body = await resp.json() if resp.content_type == "application/json" else await resp.text()
        return resp.status, resp.content_type, body


def worker_id(server: RestServer) -> str:
    return server.advertised_url.split("://", 1)[1].rstrip("/")


async def test_any_worker_gathers_every_workers_metrics_and_an_absent_one_makes_the_flow_unknown(
    http: aiohttp.ClientSession,
) -> None:
    herders = [MirrorHerder(), MirrorHerder()]
    servers = [RestServer(h, ["http://127.0.0.1:0"]) for h in herders]
    for server, topic in zip(servers, ("A.one", "A.two"), strict=True):
        server.serve_mirror_progress(lambda topic=topic: progress(topic))
        await server.start()
    try:
        ids = [worker_id(s) for s in servers]
        for herder, own in zip(herders, ids, strict=True):
            herder.worker_id = own
            herder.task_workers = ids
        code, kind, body = await get(http, servers[0], "/mirrors")
        assert code == 200 and kind == "application/json"
        assert isinstance(body, dict)
        (flow,) = body["flows"]
        assert flow["status"] == "IN_SYNC", flow
        assert [t["topic"] for t in flow["topics"]] == ["A.one", "A.two"]
        shown = flow["connectors"][0]["config"]
        assert shown["source.cluster.sasl.jaas.config"] == shown["source.cluster.auth.info"] == "[hidden]"
        assert shown["source.cluster.alias"] == "A"

        code, _, own = await get(http, servers[1], "/mirrors/progress")
        assert code == 200 and Progress.from_json(own) == progress("A.two")

        code, kind, page = await get(http, servers[1], "/mirrors/ui")
        assert code == 200 and kind == "text/html"
        assert isinstance(page, str) and "<script>" in page and "http" not in page.split("<script>")[1]

        await servers[1].stop()
        code, _, body = await get(http, servers[0], "/mirrors")
        assert code == 200 and isinstance(body, dict)
        (flow,) = body["flows"]
        assert flow["status"] == "UNKNOWN" and not flow["in_sync"]
        assert [t["topic"] for t in flow["topics"]] == ["A.one"]
        assert flow["reasons"][0].startswith(f"worker {ids[1]} did not answer for its metrics: ")
    finally:
        for server in servers:
            await server.stop()


@pytest.mark.parametrize(
    ("status", "body", "why"),
    [
        (200, "<html>not json</html>", "unreadable answer"),
        (500, "{}", "HTTP 500"),
        (200, "[1]", "unreadable"),
    ],
)
async def test_a_peer_answering_garbage_is_unreachable_not_a_crash(
    http: aiohttp.ClientSession, status: int, body: str, why: str
) -> None:
    async def answer(request: web.Request) -> web.Response:
        return web.Response(status=status, text=body)

    app = web.Application()
    app.router.add_get("/mirrors/progress", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    peer = f"127.0.0.1:{runner.addresses[0][1]}"
    herder = MirrorHerder()
    server = RestServer(herder, ["http://127.0.0.1:0"])
    await server.start()
    try:
        herder.worker_id = worker_id(server)
        herder.task_workers = [peer]
        code, _, doc = await get(http, server, "/mirrors")
        assert code == 200 and isinstance(doc, dict)
        (flow,) = doc["flows"]
        assert flow["status"] == "UNKNOWN" and flow["topics"] == []
        assert flow["reasons"][0].startswith(f"worker {peer} did not answer for its metrics: ")
        assert why in flow["reasons"][0], flow["reasons"]
    finally:
        await server.stop()
        await runner.cleanup()


async def test_before_the_herder_is_attached_mirrors_answer_503(http: aiohttp.ClientSession) -> None:
    server = RestServer(None, ["http://127.0.0.1:0"])
    await server.start()
    try:
        for path in ("/mirrors", "/mirrors/progress"):
            code, _, body = await get(http, server, path)
            assert code == 503 and isinstance(body, dict) and body["error_code"] == 503
        assert (await get(http, server, "/mirrors/ui"))[0] == 200
    finally:
        await server.stop()
