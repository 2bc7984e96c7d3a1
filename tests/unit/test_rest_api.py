"""The REST layer against an in-memory herder: paths, statuses, JSON shapes, errors, forwarding."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence

import aiohttp
import pytest

from pyconnect.errors import AlreadyExistsError, NotFoundError, NotLeaderError, RebalanceNeededError
from pyconnect.herder.entities import (
    ConnectorInfo,
    ConnectorState,
    ConnectorStateInfo,
    ConnectorType,
    TaskInfo,
    TaskState,
)
from pyconnect.protocol.internal_records import TargetState
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.rest.server import RestServer


class MemoryHerder:
    """Keeps connectors in a dict; ``leader_url`` set means writes belong elsewhere."""

    def __init__(self, leader_url: str | None = None, *, is_leader: bool = True) -> None:
        self.configs: dict[str, dict[str, str]] = {}
        self.targets: dict[str, TargetState] = {}
        self.is_leader = is_leader
        self.leader_url = leader_url
        self.rebalancing = False
        self.restarts: list[tuple[str, bool, bool]] = []
        self.task_config_posts: list[tuple[str, list[dict[str, str]], bytes]] = []

    worker_id = "127.0.0.1:1"
    kafka_cluster_id = "test-cluster"

    def ready(self) -> bool:
        return True

    def _leader_only(self) -> None:
        if self.rebalancing:
            raise RebalanceNeededError("Request cannot be completed because a rebalance is expected")
        if not self.is_leader:
            raise NotLeaderError("not the leader", self.leader_url)

    def _known(self, name: str) -> dict[str, str]:
        if name not in self.configs:
            raise NotFoundError(f"Connector {name} not found")
        return self.configs[name]

    def connectors(self) -> list[str]:
        return sorted(self.configs)

    async def connector_info(self, name: str) -> ConnectorInfo:
        config = self._known(name)
        return ConnectorInfo(name, config, [ConnectorTaskId(name, 0)], ConnectorType.SOURCE)

    async def connector_config(self, name: str) -> dict[str, str]:
        return self._known(name)

    async def task_configs(self, name: str) -> list[TaskInfo]:
        return [TaskInfo(ConnectorTaskId(name, 0), {"task.class": "X"})] if self._known(name) else []

    def connector_status(self, name: str) -> ConnectorStateInfo:
        self._known(name)
        return ConnectorStateInfo(
            name,
            ConnectorState("RUNNING", "127.0.0.1:1"),
            [TaskState("FAILED", "127.0.0.1:1", "boom", id=1), TaskState("RUNNING", "127.0.0.1:1", id=0)],
            ConnectorType.SOURCE,
        )

    def task_status(self, task: ConnectorTaskId) -> TaskState:
        self._known(task.connector)
        if task.task != 0:
            raise NotFoundError(f"No status found for task {task.connector}-{task.task}")
        return TaskState("RUNNING", "127.0.0.1:1", id=0)

    async def put_connector_config(
        self,
        name: str,
        config: Mapping[str, str],
        *,
        allow_replace: bool,
        initial_state: TargetState | None = None,
    ) -> tuple[bool, ConnectorInfo]:
        self._leader_only()
        created = name not in self.configs
        if not created and not allow_replace:
            raise AlreadyExistsError(f"Connector {name} already exists")
        self.configs[name] = dict(config)
        self.targets[name] = initial_state or TargetState.STARTED
        return created, await self.connector_info(name)

    async def delete_connector(self, name: str) -> None:
        self._leader_only()
        self._known(name)
        del self.configs[name]

    async def pause_connector(self, name: str) -> None:
        self._known(name)
        self.targets[name] = TargetState.PAUSED

    async def resume_connector(self, name: str) -> None:
        self._known(name)
        self.targets[name] = TargetState.STARTED

    async def stop_connector(self, name: str) -> None:
        self._leader_only()
        self._known(name)
        self.targets[name] = TargetState.STOPPED

    async def restart_connector(
        self, name: str, *, include_tasks: bool, only_failed: bool
    ) -> ConnectorStateInfo | None:
        self._leader_only()
        self._known(name)
        self.restarts.append((name, include_tasks, only_failed))
        if not include_tasks and not only_failed:
            return None
        return ConnectorStateInfo(name, ConnectorState("RESTARTING", "127.0.0.1:1"), [], ConnectorType.SOURCE)

    async def restart_task(self, task: ConnectorTaskId) -> None:
        self._leader_only()
        self._known(task.connector)

    async def put_task_configs(
        self, name: str, configs: Sequence[Mapping[str, str]], body: bytes, headers: Mapping[str, str]
    ) -> None:
        self._leader_only()
        self.task_config_posts.append((name, [dict(c) for c in configs], body))


@pytest.fixture
async def leader() -> AsyncIterator[tuple[MemoryHerder, RestServer]]:
    herder = MemoryHerder()
    server = RestServer(herder, ["http://127.0.0.1:0"])
    await server.start()
    yield herder, server
    await server.stop()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def url(server: RestServer, path: str) -> str:
    return server.advertised_url.rstrip("/") + path


async def test_root_and_health(leader: tuple[MemoryHerder, RestServer], http: aiohttp.ClientSession) -> None:
    _, server = leader
    async with http.get(url(server, "/")) as resp:
        body = await resp.json()
        assert (
            resp.status == 200 and body["version"] == "4.3.1" and body["kafka_cluster_id"] == "test-cluster"
        )
        assert len(body["commit"]) == 16
    async with http.get(url(server, "/health")) as resp:
        assert resp.status == 200 and (await resp.json())["status"] == "healthy"


async def test_create_read_pause_stop_delete(
    leader: tuple[MemoryHerder, RestServer], http: aiohttp.ClientSession
) -> None:
    herder, server = leader
    create = {
        "name": "c1",
        "config": {"connector.class": "VerifiableSource", "tasks.max": 2, "x": True},
        "initial_state": "paused",
    }
    async with http.post(url(server, "/connectors"), json=create) as resp:
        assert resp.status == 201 and resp.headers["Location"] == "/connectors/c1"
        assert await resp.text() == (
            '{"name":"c1","config":{"connector.class":"VerifiableSource","tasks.max":"2","x":"true","name":"c1"},'
            '"tasks":[{"connector":"c1","task":0}],"type":"source"}'
        )
    assert herder.targets["c1"] is TargetState.PAUSED
    async with http.post(url(server, "/connectors"), json=create) as resp:
        assert resp.status == 409 and await resp.json() == {
            "error_code": 409,
            "message": "Connector c1 already exists",
        }
    async with http.get(url(server, "/connectors")) as resp:
        assert await resp.json() == ["c1"]
    async with http.get(url(server, "/connectors?expand=status&expand=info")) as resp:
        body = await resp.json()
        assert body["c1"]["info"]["name"] == "c1" and body["c1"]["status"]["connector"]["state"] == "RUNNING"
    async with http.get(url(server, "/connectors/c1/status")) as resp:
        status = await resp.json()
        assert [t["id"] for t in status["tasks"]] == [0, 1], "tasks sorted by id"
        assert "trace" not in status["tasks"][0] and status["tasks"][1]["trace"] == "boom"
    async with http.put(
        url(server, "/connectors/c1/config"), json={"connector.class": "VerifiableSource"}
    ) as resp:
        assert resp.status == 200
    async with http.put(
        url(server, "/connectors/c2/config"), json={"connector.class": "VerifiableSource"}
    ) as resp:
        assert resp.status == 201
    async with http.put(url(server, "/connectors/c1/resume")) as resp:
        assert resp.status == 202 and herder.targets["c1"] is TargetState.STARTED
    async with http.put(url(server, "/connectors/c1/stop")) as resp:
        assert resp.status == 204 and herder.targets["c1"] is TargetState.STOPPED
    async with http.post(url(server, "/connectors/c1/restart")) as resp:
        assert resp.status == 204
    async with http.post(url(server, "/connectors/c1/restart?includeTasks=true&onlyFailed=true")) as resp:
        assert resp.status == 202 and (await resp.json())["connector"]["state"] == "RESTARTING"
    assert herder.restarts == [("c1", False, False), ("c1", True, True)]
    async with http.get(url(server, "/connectors/c1/tasks/0/status")) as resp:
        assert await resp.json() == {"id": 0, "state": "RUNNING", "worker_id": "127.0.0.1:1"}
    async with http.delete(url(server, "/connectors/c1")) as resp:
        assert resp.status == 204 and "c1" not in herder.configs


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "message"),
    [
        ("GET", "/connectors/nope", None, 404, "Connector nope not found"),
        ("GET", "/connectors/nope/tasks/x/status", None, 404, "Task nope-x not found"),
        ("GET", "/no/such/path", None, 404, "HTTP 404 Not Found"),
        ("PATCH", "/connectors", None, 405, "HTTP 405 Method Not Allowed"),
        ("POST", "/connectors", b"{not json", 400, "Request body is not valid JSON"),
        ("POST", "/connectors", b"[1,2]", 400, "Request body must be a JSON object"),
        ("POST", "/connectors", b'{"config":{}}', 400, "Connector name configuration must be provided"),
        (
            "POST",
            "/connectors",
            b'{"name":"a","config":{"k":[1]}}',
            400,
            "config: the value of k must be a string",
        ),
        (
            "POST",
            "/connectors",
            b'{"name":"a","config":{"name":"b"}}',
            400,
            "Connector name configuration (b) doesn't match",
        ),
        (
            "POST",
            "/connectors",
            b'{"name":"a","config":{},"initial_state":"RUN"}',
            400,
            "Invalid initial state RUN",
        ),
        ("PUT", "/connectors/a/config", b"", 400, "Request body is empty"),
        (
            "POST",
            "/connectors/a/restart?includeTasks=maybe",
            None,
            400,
            "query parameter includeTasks must be true or false",
        ),
    ],
)
async def test_bad_requests_get_the_error_body(
    leader: tuple[MemoryHerder, RestServer],
    http: aiohttp.ClientSession,
    method: str,
    path: str,
    body: bytes | None,
    status: int,
    message: str,
) -> None:
    _, server = leader
    async with http.request(
        method, url(server, path), data=body, headers={"Content-Type": "application/json"}
    ) as resp:
        assert resp.status == status
        payload = await resp.json()
        assert payload["error_code"] == status and payload["message"].startswith(message), payload


async def test_oversized_body_is_refused_with_413(http: aiohttp.ClientSession) -> None:
    server = RestServer(MemoryHerder(), ["http://127.0.0.1:0"], max_body_bytes=1024)
    await server.start()
    try:
        async with http.post(url(server, "/connectors"), data=b"{" + b" " * 4096 + b"}") as resp:
            assert resp.status == 413 and (await resp.json())["error_code"] == 413
    finally:
        await server.stop()


async def test_follower_forwards_writes_to_the_leader(
    leader: tuple[MemoryHerder, RestServer], http: aiohttp.ClientSession
) -> None:
    leader_herder, leader_server = leader
    follower_herder = MemoryHerder(leader_server.advertised_url, is_leader=False)
    follower = RestServer(follower_herder, ["http://127.0.0.1:0"])
    await follower.start()
    try:
        async with http.post(url(follower, "/connectors"), json={"name": "f", "config": {"a": "b"}}) as resp:
            assert resp.status == 201 and resp.headers["Location"] == "/connectors/f"
            assert (await resp.json())["name"] == "f"
        assert "f" in leader_herder.configs and "f" not in follower_herder.configs
        async with http.post(url(follower, "/connectors"), json={"name": "f", "config": {}}) as resp:
            assert resp.status == 409, "the leader's error travels back unchanged"
        async with http.post(url(follower, "/connectors/f/restart?includeTasks=true")) as resp:
            assert resp.status == 202
        assert leader_herder.restarts == [("f", True, False)], "query parameters travel with the hop"
        async with http.post(url(follower, "/connectors/f/tasks"), data=b'[{"k":"v"}]') as resp:
            assert resp.status == 204
        assert leader_herder.task_config_posts == [("f", [{"k": "v"}], b'[{"k":"v"}]')]
        async with http.put(url(follower, "/connectors/f/config?forward=false"), json={}) as resp:
            assert resp.status == 409
            assert (await resp.json())["message"].startswith(
                "Cannot complete request because of a conflicting operation"
            )
        follower_herder.leader_url = None
        async with http.delete(url(follower, "/connectors/f")) as resp:
            assert resp.status == 409 and "no known leader URL" in (await resp.json())["message"]
        follower_herder.rebalancing = True
        async with http.delete(url(follower, "/connectors/f")) as resp:
            assert resp.status == 409 and "stale configuration" in (await resp.json())["message"]
    finally:
        await follower.stop()
