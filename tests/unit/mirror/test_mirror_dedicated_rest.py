"""The internal REST server of dedicated mode (KIP-710) over fake herders: Java's per-flow paths, the
404s, forwarding to the leader under the same namespace, and the follower's publisher."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import aiohttp
import pytest

from pyconnect.errors import NotLeaderError
from pyconnect.rest.mirror_internal import MirrorRestServer, flow_path


class FlowHerder:
    """Records task-config writes; raises NotLeaderError (with the leader's URL) when not the leader."""

    def __init__(self, leader_url: str | None = None) -> None:
        self.leader_url = leader_url
        self.writes: list[tuple[str, list[dict[str, str]], bytes, dict[str, str]]] = []
        self.fences: list[tuple[str, bytes, dict[str, str]]] = []

    async def put_task_configs(
        self, name: str, configs: Sequence[Mapping[str, str]], body: bytes, headers: Mapping[str, str]
    ) -> None:
        if self.leader_url is not None:
            raise NotLeaderError(
                "Cannot complete request because this worker is not the leader", self.leader_url
            )
        self.writes.append((name, [dict(c) for c in configs], body, dict(headers)))

    async def fence_zombie_source_tasks(self, name: str, body: bytes, headers: Mapping[str, str]) -> None:
        if self.leader_url is not None:
            raise NotLeaderError(
                "Cannot complete request because this worker is not the leader", self.leader_url
            )
        self.fences.append((name, body, dict(headers)))


async def server(props: Mapping[str, str] | None = None) -> MirrorRestServer:
    rest = MirrorRestServer({"listeners": "http://127.0.0.1:0", **(props or {})})
    await rest.start()
    return rest


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def call(
    http: aiohttp.ClientSession, rest: MirrorRestServer, method: str, path: str, body: object = None
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "X-Connect-Authorization": "sig"}
    async with http.request(
        method, rest.advertised_url.rstrip("/") + path, data=data, headers=headers
    ) as resp:
        text = await resp.text()
        return resp.status, json.loads(text) if text else None


def test_flow_paths_encode_aliases_as_java() -> None:
    assert flow_path("A", "B") == "/A/B"
    assert flow_path("us west", "us-east.1") == "/us%20west/us-east.1"
    assert flow_path("a+b", "x_y*") == "/a%2Bb/x_y*"
    assert flow_path("zürich", "a/b") == "/z%C3%BCrich/a%2Fb"


async def test_task_configs_reach_the_flow_herder(http: aiohttp.ClientSession) -> None:
    rest = await server()
    ab, ba, spaced = FlowHerder(), FlowHerder(), FlowHerder()
    try:
        assert (await call(http, rest, "POST", "/A/B/connectors/MirrorSourceConnector/tasks", []))[0] == 503
        rest.attach_herders({("A", "B"): ab, ("B", "A"): ba, ("us west", "B"): spaced})  # type: ignore[dict-item]
        configs = [{"task.index": "0", "task.assigned.partitions": "t-0"}]
        status, _ = await call(http, rest, "POST", "/A/B/connectors/MirrorSourceConnector/tasks", configs)
        assert status == 204
        assert [(w[0], w[1]) for w in ab.writes] == [("MirrorSourceConnector", configs)] and not ba.writes
        assert ab.writes[0][3]["X-Connect-Authorization"] == "sig"
        status, _ = await call(http, rest, "POST", "/us%20west/B/connectors/MirrorSourceConnector/tasks", [])
        assert status == 204 and spaced.writes[0][1] == []

        status, body = await call(http, rest, "POST", "/A/C/connectors/MirrorSourceConnector/tasks", [])
        assert (status, body) == (
            404,
            {"error_code": 404, "message": "No replication flow found for source 'A' and target 'C'"},
        )
        status, body = await call(http, rest, "POST", "/A/B/connectors/x/tasks", {"not": "a list"})
        assert status == 400
        for method, path in (("GET", "/"), ("GET", "/connectors"), ("GET", "/A/B/connectors/x/tasks")):
            status, body = await call(http, rest, method, path)
            assert status in (404, 405), (method, path, status)
        status, body = await call(http, rest, "PUT", "/A/B/connectors/MirrorSourceConnector/fence")
        assert (status, body) == (204, None)
        assert ab.fences == [("MirrorSourceConnector", b"", ab.fences[0][2])] and not ba.fences
        assert ab.fences[0][2]["X-Connect-Authorization"] == "sig"
        status, _ = await call(http, rest, "PUT", "/Z/B/connectors/MirrorSourceConnector/fence")
        assert status == 404
    finally:
        await rest.stop()


async def test_a_follower_forwards_to_its_leader_under_the_flow_path(http: aiohttp.ClientSession) -> None:
    leader, follower = await server(), await server()
    leading, following = FlowHerder(), FlowHerder(leader.advertised_url)
    try:
        leader.attach_herders({("A", "B"): leading})  # type: ignore[dict-item]
        follower.attach_herders({("A", "B"): following})  # type: ignore[dict-item]
        configs = [{"k": "v"}]
        status, _ = await call(
            http, follower, "POST", "/A/B/connectors/MirrorCheckpointConnector/tasks", configs
        )
        assert status == 204
        assert [(w[0], w[1]) for w in leading.writes] == [("MirrorCheckpointConnector", configs)]

        # What a follower herder calls to publish the task configs it generated.
        publish = follower.task_config_publisher("A", "B")
        await publish(
            leader.advertised_url, "MirrorSourceConnector", b'[{"a":"b"}]', {"X-Connect-Authorization": "s"}
        )
        assert leading.writes[-1][:3] == ("MirrorSourceConnector", [{"a": "b"}], b'[{"a":"b"}]')
        with pytest.raises(Exception, match="404"):
            await follower.task_config_publisher("A", "C")(leader.advertised_url, "x", b"[]", {})

        # A zombie fencing request forwarded by the follower, and the one a follower herder sends.
        status, _ = await call(http, follower, "PUT", "/A/B/connectors/MirrorSourceConnector/fence")
        assert status == 204 and [f[0] for f in leading.fences] == ["MirrorSourceConnector"]
        await follower.fencing_requester("A", "B")(
            leader.advertised_url, "MirrorSourceConnector", {"X-Connect-Authorization": "f"}
        )
        assert leading.fences[-1] == ("MirrorSourceConnector", b"", leading.fences[-1][2])
        assert leading.fences[-1][2]["X-Connect-Authorization"] == "f"
        with pytest.raises(Exception, match="404"):
            await follower.fencing_requester("A", "C")(leader.advertised_url, "x", {})
    finally:
        await follower.stop()
        await leader.stop()
