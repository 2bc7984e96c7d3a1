"""The REST layer against an in-memory herder: paths, statuses, JSON shapes, errors, forwarding."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, TypeVar

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
from pyconnect.herder.health import HEALTHY, WorkerHealth
from pyconnect.herder.herder import Herder
from pyconnect.protocol.internal_records import ConnectorStatus, State, TargetState, TaskStatus, TopicStatus
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.rest.resources import NO_OFFSETS
from pyconnect.rest.server import RestServer
from tests.herder_fakes import play_round, scripted_herder, stop_herder, worker_config

T = TypeVar("T")


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

    health = HEALTHY

    async def health_check(self) -> WorkerHealth:
        return self.health

    def health_leader_url(self) -> tuple[bool, str | None]:
        return not self.is_leader, self.leader_url

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
    """Sends ``Content-Type: application/json`` (Java, and we, refuse other types with 415)."""
    async with aiohttp.ClientSession(headers={"Content-Type": "application/json"}) as session:
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
        assert resp.status == 201 and resp.headers["Location"] == url(server, "/connectors/c1")
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
        ("GET", "/connectors/nope/tasks/x/status", None, 404, "HTTP 404 Not Found"),
        ("GET", "/no/such/path", None, 404, "HTTP 404 Not Found"),
        ("PATCH", "/connectors", None, 405, "HTTP 405 Method Not Allowed"),
        ("POST", "/connectors", b"{not json", 400, "Request body is not valid JSON"),
        ("POST", "/connectors", b"[1,2]", 400, "Request body must be a JSON object"),
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
        ("POST", "/connectors/a/restart?includeTasks=maybe", None, 404, "Connector a not found"),
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
        async with http.post(
            url(server, "/connectors"),
            data=b"{" + b" " * 4096 + b"}",
            headers={"Content-Type": "application/json"},
        ) as resp:
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
            assert resp.status == 201 and resp.headers["Location"] == url(follower, "/connectors/f")
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


# ---- the REST API over a real DistributedHerder with in-memory stores ---------------------------

VERIFIABLE = "org.apache.kafka.connect.tools.VerifiableSourceConnector"
NOT_STOPPED = (
    "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for "
    "the specified connector by issuing a 'PUT' request to the '/connectors/src/stop' endpoint"
)
VALIDATE_HINT = "You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"


async def leading_herder(**settings: str) -> Herder:
    """The real herder, leader of a one-worker group whose rounds assign it nothing (no Kafka)."""
    config = worker_config(**{"topic.tracking.allow.reset": "true", **settings})
    herder = await scripted_herder(config, serving=True)
    await herder.settled()
    return herder


@pytest.fixture
async def real() -> AsyncIterator[tuple[Herder, RestServer]]:
    herder = await leading_herder()
    server = RestServer(herder, ["http://127.0.0.1:0"], max_body_bytes=64 * 1024)
    await server.start()
    yield herder, server
    await server.stop()
    await stop_herder(herder)


async def call(
    http: aiohttp.ClientSession, server: RestServer, method: str, path: str, body: object = None
) -> tuple[int, Any]:
    data = body if isinstance(body, bytes) else None if body is None else json.dumps(body).encode()
    async with http.request(
        method, url(server, path), data=data, headers={"Content-Type": "application/json"}
    ) as resp:
        text = await resp.text()
        return resp.status, json.loads(text) if text else None


def source(**extra: str) -> dict[str, str]:
    return {"connector.class": VERIFIABLE, "topic": "out", "tasks.max": "1", **extra}


async def test_plugins_config_and_validation(
    real: tuple[Herder, RestServer], http: aiohttp.ClientSession
) -> None:
    _, server = real
    code, plugins = await call(http, server, "GET", "/connector-plugins")
    assert code == 200 and {"class": VERIFIABLE, "type": "source", "version": "4.3.1"} in plugins
    assert all(p["type"] in ("source", "sink") for p in plugins)
    code, everything = await call(http, server, "GET", "/connector-plugins?connectorsOnly=false")
    assert code == 200 and {p["type"] for p in everything} >= {"source", "converter", "header_converter"}
    code, keys = await call(http, server, "GET", "/connector-plugins/VerifiableSourceConnector/config")
    assert code == 200 and [k["name"] for k in keys][:4] == [
        "name",
        "connector.class",
        "connector.plugin.version",
        "tasks.max",
    ]
    assert keys[3]["default_value"] == "1" and keys[3]["type"] == "INT"

    code, infos = await call(
        http,
        server,
        "PUT",
        "/connector-plugins/VerifiableSourceConnector/config/validate",
        {**source(**{"tasks.max": "0", "errors.tolerance": "some"}), "name": "x", "k": None},
    )
    assert code == 200 and infos["name"] == VERIFIABLE and infos["error_count"] == 3
    assert infos["groups"][0] == "Common"
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]}
    assert errors["tasks.max"] == ["Invalid value 0 for configuration tasks.max: Value must be at least 1"]
    assert errors["errors.tolerance"] and errors["name"] == []
    assert errors["k"] == ["Null value can not be supplied as the configuration value."]
    code, infos = await call(
        http, server, "PUT", "/connector-plugins/VerifiableSource/config/validate", {**source(), "name": "x"}
    )
    assert code == 200 and infos["error_count"] == 0, "an alias of the class matches the request type"


async def test_patch_config_and_validation_on_create(
    real: tuple[Herder, RestServer], http: aiohttp.ClientSession
) -> None:
    herder, server = real
    code, info = await call(http, server, "POST", "/connectors", {"name": "src", "config": source(x="1")})
    assert code == 201 and info["config"]["x"] == "1"
    code, info = await call(http, server, "PATCH", "/connectors/src/config", {"x": None, "throughput": "7"})
    assert code == 200 and "x" not in info["config"] and info["config"]["throughput"] == "7"
    assert herder.config_store.snapshot().connector_config("src") == {
        **source(),
        "name": "src",
        "throughput": "7",
    }
    code, body = await call(http, server, "PATCH", "/connectors/src/config", {"tasks.max": "0"})
    assert code == 400 and body["message"] == (
        "Connector configuration is invalid and contains the following 1 error(s):\n"
        f"Invalid value 0 for configuration tasks.max: Value must be at least 1\n{VALIDATE_HINT}"
    )
    code, body = await call(http, server, "PUT", "/connectors/src/config", source(**{"tasks.max": "x"}))
    assert code == 400 and "Invalid value x for configuration tasks.max" in body["message"]


async def test_offsets_only_for_stopped_connectors(
    real: tuple[Herder, RestServer], http: aiohttp.ClientSession
) -> None:
    herder, server = real
    store = herder.worker.offset_store
    await store.set("src", [({"id": 0}, {"seqno": 41}), ({"id": 1}, {"seqno": 9})])
    assert (await call(http, server, "POST", "/connectors", {"name": "src", "config": source()}))[0] == 201
    code, body = await call(http, server, "GET", "/connectors/src/offsets")
    assert code == 200 and sorted(body["offsets"], key=lambda o: o["partition"]["id"]) == [
        {"partition": {"id": 0}, "offset": {"seqno": 41}},
        {"partition": {"id": 1}, "offset": {"seqno": 9}},
    ]
    alter = {
        "offsets": [
            {"partition": {"id": 0}, "offset": {"seqno": 5}},
            {"partition": {"id": 1}, "offset": None},
        ]
    }
    assert await call(http, server, "PATCH", "/connectors/src/offsets", alter) == (
        400,
        {"error_code": 400, "message": NOT_STOPPED},
    )
    assert (await call(http, server, "DELETE", "/connectors/src/offsets"))[0] == 400
    assert (await call(http, server, "PUT", "/connectors/src/stop"))[0] == 204
    code, body = await call(http, server, "PATCH", "/connectors/src/offsets", alter)
    assert code == 200, body
    assert body["message"].startswith(
        "The Connect framework-managed offsets for this connector have been altered successfully. However,"
    )
    assert await store.get("src", [{"id": 0}, {"id": 1}]) == [{"seqno": 5}, None]
    code, body = await call(http, server, "DELETE", "/connectors/src/offsets")
    assert code == 200 and "have been reset successfully" in body["message"]
    assert await call(http, server, "GET", "/connectors/src/offsets") == (200, {"offsets": []})


async def test_active_topics_are_recorded_and_reset(
    real: tuple[Herder, RestServer], http: aiohttp.ClientSession
) -> None:
    herder, server = real
    task = ConnectorTaskId("src", 0)
    assert herder.worker.topic_tracker is not None
    herder.worker.topic_tracker(task, "t1")
    herder.worker.topic_tracker(task, "t1")
    herder.worker.topic_tracker(ConnectorTaskId("src", 1), "t2")
    await herder.status_store.flush()
    await herder.status_store.read_to_end()
    code, body = await call(http, server, "GET", "/connectors/src/topics")
    assert code == 200 and sorted(body["src"]["topics"]) == ["t1", "t2"]
    assert await call(http, server, "GET", "/connectors/other/topics") == (200, {"other": {"topics": []}})
    assert (await call(http, server, "PUT", "/connectors/src/topics/reset"))[0] == 202
    await herder.status_store.flush()
    await herder.status_store.read_to_end()
    assert await call(http, server, "GET", "/connectors/src/topics") == (200, {"src": {"topics": []}})


@pytest.mark.parametrize(
    ("settings", "method", "path", "message"),
    [
        ({"topic.tracking.enable": "false"}, "GET", "/connectors/c/topics", "Topic tracking is disabled."),
        (
            {"topic.tracking.enable": "false"},
            "PUT",
            "/connectors/c/topics/reset",
            "Topic tracking is disabled.",
        ),
        (
            {"topic.tracking.allow.reset": "false"},
            "PUT",
            "/connectors/c/topics/reset",
            "Topic tracking reset is disabled.",
        ),
    ],
)
async def test_topic_tracking_switches_answer_403(
    http: aiohttp.ClientSession, settings: dict[str, str], method: str, path: str, message: str
) -> None:
    herder = await leading_herder(**settings)
    server = RestServer(herder, ["http://127.0.0.1:0"])
    await server.start()
    try:
        assert await call(http, server, method, path) == (403, {"error_code": 403, "message": message})
    finally:
        await server.stop()
        await stop_herder(herder)


async def test_loggers_worker_and_cluster_scope(
    real: tuple[Herder, RestServer], http: aiohttp.ClientSession
) -> None:
    _, server = real
    logging.getLogger("pyconnect.testlog.child")
    try:
        code, names = await call(http, server, "PUT", "/admin/loggers/pyconnect.testlog", {"level": "debug"})
        assert code == 200 and names == ["pyconnect.testlog", "pyconnect.testlog.child"]
        assert logging.getLogger("pyconnect.testlog.child").level == logging.DEBUG
        code, level = await call(http, server, "GET", "/admin/loggers/pyconnect.testlog")
        assert code == 200 and level["level"] == "DEBUG" and isinstance(level["last_modified"], int)
        code, levels = await call(http, server, "GET", "/admin/loggers")
        assert code == 200 and "root" in levels and levels["pyconnect.testlog.child"]["level"] == "DEBUG"
        code, _ = await call(
            http, server, "PUT", "/admin/loggers/pyconnect.testlog?scope=cluster", {"level": "WARN"}
        )
        assert code == 204
        assert logging.getLogger("pyconnect.testlog.child").level == logging.WARNING, (
            "the logger-cluster record was read back and applied"
        )
    finally:
        for name in ("pyconnect.testlog", "pyconnect.testlog.child"):
            logging.getLogger(name).setLevel(logging.NOTSET)


UNKNOWN_CLASS = (
    "Failed to find any class that implements Connector "
    "and which name matches Nope, available connectors are: PluginDesc{klass=class "
)


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "message"),
    [
        ("POST", "/connectors", b'{"name":"a","config":', 400, "Request body is not valid JSON"),
        ("PUT", "/connectors/a/config", b"\xff\xfe", 400, "Request body is not valid JSON"),
        ("PATCH", "/connectors/a/config", b"nul", 400, "Request body is not valid JSON"),
        ("PUT", "/connector-plugins/X/config/validate", b"{", 400, "Request body is not valid JSON"),
        ("PATCH", "/connectors/a/offsets", b"{]", 400, "Request body is not valid JSON"),
        ("PUT", "/admin/loggers/x", b"[", 400, "Request body is not valid JSON"),
        ("POST", "/connectors", b'{"name":{"a":1},"config":{}}', 400, "name must be a string"),
        ("POST", "/connectors", b'{"name":"a","config":[]}', 400, "config must be a JSON object"),
        ("POST", "/connectors", b'{"name":"a","config":{"k":{"x":1}}}', 400, "config: the value of k"),
        ("POST", "/connectors", b'{"name":"a","config":{},"bogus":1}', 400, 'Unrecognized field "bogus"'),
        ("PUT", "/connectors/a/config", b'"text"', 400, "connector config must be a JSON object"),
        ("PATCH", "/connectors/a/config", b"[]", 400, "connector config must be a JSON object"),
        ("PATCH", "/connectors/src/offsets", b'{"offsets":{}}', 400, "offsets must be a JSON array"),
        ("PATCH", "/connectors/src/offsets", b'{"offsets":[1]}', 400, "every element of offsets"),
        ("PATCH", "/connectors/src/offsets", b'{"offsets":[{"partition":1}]}', 400, "partition must be"),
        ("PATCH", "/connectors/src/offsets", b'{"offsets":[]}', 400, NO_OFFSETS),
        ("PATCH", "/connectors/src/offsets", b"{}", 400, NO_OFFSETS),
        ("PUT", "/admin/loggers/x", b'{"level":5}', 404, "invalid log level '5'."),
        ("PUT", "/admin/loggers/x", b'{"level":{"a":1}}', 400, "logger level request: the value of level"),
        ("PUT", "/admin/loggers/x", b"{}", 400, "Desired 'level' parameter was not specified in request."),
        ("PUT", "/admin/loggers/x", b'{"level":"BOGUS"}', 404, "invalid log level 'BOGUS'."),
        ("PUT", "/admin/loggers/x?scope=cluster", b'{"level":"nah"}', 404, "invalid log level 'nah'."),
        ("GET", "/admin/loggers/no.such.logger.here", None, 404, "Logger no.such.logger.here not found."),
        (
            "GET",
            "/connector-plugins/VerifiableSource/config?version=[1.0,2.0",
            None,
            400,
            "Invalid version spec",
        ),
        ("POST", "/connectors", b'{"name":"a","config":{"connector.class":"Nope"}}', 400, UNKNOWN_CLASS),
        (
            "POST",
            "/connectors",
            b'{"name":"a","config":{}}',
            400,
            "Connector config {name=a} contains no connector type",
        ),
        (
            "POST",
            "/connectors",
            b'{"name":"","config":{"connector.class":"VerifiableSource","topic":"t"}}',
            400,
            "Connector configuration is invalid and contains the following 1 error(s):\n"
            "Invalid value  for configuration name: String may not be empty\n" + VALIDATE_HINT,
        ),
        (
            "POST",
            "/connectors",
            b'{"name":"a\\u0001b","config":{"connector.class":"VerifiableSource","topic":"t"}}',
            400,
            "Connector configuration is invalid and contains the following 1 error(s):\nInvalid value a\x01b "
            "for configuration name: String may not contain control sequences but had the following ASCII chars: 1",
        ),
        (
            "POST",
            "/connectors",
            b'{"name":"a/b","config":{"connector.class":"VerifiableSource","topic":"t"}}',
            400,
            "Connector name 'a/b' contains characters that are not allowed",
        ),
        (
            "PUT",
            "/connectors/a/config",
            b'{"name":"b"}',
            400,
            "Connector name configuration (b) doesn't match",
        ),
        (
            "PATCH",
            "/connectors/src/config",
            b'{"name":"b"}',
            400,
            "Connector name configuration (b) doesn't match",
        ),
        ("PATCH", "/connectors/nope/config", b'{"a":"b"}', 404, "Connector nope not found"),
        ("GET", "/connectors/nope/config", None, 404, "Connector nope not found"),
        ("GET", "/connectors/nope/tasks", None, 404, "Connector nope not found"),
        ("GET", "/connectors/nope/status", None, 404, "No status found for connector nope"),
        ("GET", "/connectors/nope/tasks/0/status", None, 404, "No status found for task nope-0"),
        ("GET", "/connectors/nope/tasks/-1/status", None, 404, "No status found for task nope--1"),
        ("POST", "/connectors/src/tasks/7/restart", None, 404, "Unknown task: src-7"),
        ("POST", "/connectors/nope/restart", None, 404, "Unknown connector: nope"),
        ("PUT", "/connectors/nope/pause", None, 404, "Unknown connector nope"),
        ("PUT", "/connectors/nope/stop", None, 404, "Unknown connector nope"),
        ("DELETE", "/connectors/nope", None, 404, "Connector nope not found"),
        ("GET", "/connectors/nope/offsets", None, 404, "Connector nope not found"),
        ("DELETE", "/connectors/nope/offsets", None, 404, "Connector nope not found"),
        ("GET", "/connectors/src/tasks-config", None, 404, "HTTP 404 Not Found"),
        ("GET", "/connector-plugins/Nope/config", None, 404, "Unknown plugin Nope."),
        (
            "PUT",
            "/connector-plugins/FileStreamSink/config/validate",
            f'{{"connector.class":"{VERIFIABLE}"}}'.encode(),
            400,
            f"Included connector type {VERIFIABLE} does not match request type FileStreamSink",
        ),
        (
            "PUT",
            "/connector-plugins/VerifiableSourceConnector/config/validate",
            b'{"tasks.max":"1"}',
            400,
            "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: Connector config {tasks.max=1} "
            "contains no connector type",
        ),
        ("DELETE", "/connector-plugins", None, 405, "HTTP 405 Method Not Allowed"),
    ],
)
async def test_bad_input_catalogue(
    real: tuple[Herder, RestServer],
    http: aiohttp.ClientSession,
    method: str,
    path: str,
    body: bytes | None,
    status: int,
    message: str,
) -> None:
    """Every bad request gets a 4xx with the error body, and the worker goes on answering."""
    _, server = real
    assert (await call(http, server, "POST", "/connectors", {"name": "src", "config": source()}))[0] == 201
    code, payload = await call(http, server, method, path, body)
    assert code == status, payload
    assert payload["error_code"] == status and payload["message"].startswith(message), payload
    assert (await call(http, server, "GET", "/connectors"))[0] == 200


async def test_oversized_bodies_on_every_write_path(
    real: tuple[Herder, RestServer], http: aiohttp.ClientSession
) -> None:
    _, server = real
    huge = json.dumps({"name": "big", "config": {"k": "v" * (128 * 1024)}}).encode()
    for method, path in (
        ("POST", "/connectors"),
        ("PUT", "/connectors/big/config"),
        ("PATCH", "/connectors/big/config"),
        ("PUT", "/connector-plugins/VerifiableSource/config/validate"),
        ("PATCH", "/connectors/big/offsets"),
    ):
        code, payload = await call(http, server, method, path, huge)
        assert code == 413 and payload == {"error_code": 413, "message": "HTTP 413 Request Entity Too Large"}
    assert (await call(http, server, "GET", "/"))[0] == 200


async def test_openapi_document_names_every_route(
    real: tuple[Herder, RestServer], http: aiohttp.ClientSession
) -> None:
    _, server = real
    code, doc = await call(http, server, "GET", "/openapi.json")
    assert code == 200 and doc["openapi"].startswith("3.")
    served = {
        (route.method.lower(), route.resource.canonical)
        for route in server.app.router.routes()
        if route.method != "HEAD" and route.resource is not None
    }
    described = {(method, path) for path, ops in doc["paths"].items() for method in ops}
    assert served == described
    schemas = doc["components"]["schemas"]
    for name in ("Error", "ConnectorInfo", "ConnectorStateInfo", "ConfigInfos", "ConnectorOffsets"):
        assert name in schemas


async def test_the_leader_removes_statuses_of_stopped_tasks_and_deleted_connectors(
    real: tuple[Herder, RestServer], http: aiohttp.ClientSession
) -> None:
    herder, server = real
    assert (await call(http, server, "POST", "/connectors", {"name": "src", "config": source()}))[0] == 201
    statuses = herder.status_store
    statuses.put(ConnectorStatus("src", State.STOPPED, "127.0.0.1:1", 1))
    statuses.put(TaskStatus(ConnectorTaskId("src", 0), State.PAUSED, "127.0.0.1:1", 1))
    statuses.put(ConnectorStatus("gone", State.RUNNING, "127.0.0.1:1", 1))
    statuses.put(TaskStatus(ConnectorTaskId("gone", 0), State.RUNNING, "127.0.0.1:1", 1))
    statuses.put_topic(TopicStatus("t", "gone", 0, 1))
    await statuses.flush()
    await statuses.read_to_end()
    await play_round(herder, leader=True)  # the leader cleans up after each round
    await statuses.flush()
    await statuses.read_to_end()
    assert statuses.get_all("src") == [], "a connector without task configs keeps no task statuses"
    assert statuses.get_connector("src") is not None
    assert statuses.get_connector("gone") is None and statuses.get_all("gone") == []
    assert statuses.get_topics("gone") == []


async def test_transforms_in_plugins_validation_and_create(
    real: tuple[Herder, RestServer], http: aiohttp.ClientSession
) -> None:
    _, server = real
    code, everything = await call(http, server, "GET", "/connector-plugins?connectorsOnly=false")
    assert code == 200
    assert {
        "class": "org.apache.kafka.connect.transforms.Filter",
        "type": "transformation",
        "version": "4.3.1",
    } in (everything)
    assert {
        "class": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
        "type": "predicate",
        "version": "4.3.1",
    } in everything
    code, keys = await call(http, server, "GET", "/connector-plugins/RegexRouter/config")
    assert code == 200 and [k["name"] for k in keys] == ["regex", "replacement"]

    config = source(
        **{
            "transforms": "drop,route",
            "transforms.drop.type": "Filter",
            "transforms.drop.predicate": "other",
            "transforms.drop.negate": "true",
            "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.route.regex": "(",
            "predicates": "other",
            "predicates.other.type": "Nope",
        }
    )
    code, infos = await call(
        http,
        server,
        "PUT",
        "/connector-plugins/VerifiableSourceConnector/config/validate",
        {**config, "name": "x"},
    )
    assert code == 200 and infos["error_count"] == 3
    assert infos["groups"][-3:] == ["Transforms: drop", "Transforms: route", "Predicates: other"]
    by_name = {c["definition"]["name"]: c for c in infos["configs"] if c["definition"]}
    assert by_name["transforms.route.regex"]["definition"]["group"] == "Transforms: route"
    assert by_name["transforms.route.regex"]["value"]["errors"][0].startswith(
        "Invalid value ( for configuration regex: Invalid regex: Unclosed group"
    )
    assert by_name["transforms.route.replacement"]["value"]["errors"] == [
        'Missing required configuration "transforms.route.replacement" which has no default value.'
    ]
    assert by_name["transforms.drop.type"]["value"]["value"] == "org.apache.kafka.connect.transforms.Filter"
    assert by_name["predicates.other.type"]["value"]["errors"] == [
        "Invalid value Nope for configuration predicates.other.type: Class Nope could not be found."
    ]

    code, body = await call(
        http,
        server,
        "POST",
        "/connectors",
        {
            "name": "bad-transform",
            "config": source(transforms="t", **{"transforms.t.type": "com.example.Nope"}),
        },
    )
    assert code == 400 and body["error_code"] == 400
    assert body["message"] == (
        "Connector configuration is invalid and contains the following 1 error(s):\n"
        "Invalid value com.example.Nope for configuration transforms.t.type: Class com.example.Nope could not "
        f"be found.\n{VALIDATE_HINT}"
    )
