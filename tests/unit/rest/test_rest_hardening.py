"""REST hardening against a leader and a follower in this process (in-memory herders, real HTTP).

Forwarded writes reach exactly the connector named, cross-site "simple" requests are refused,
every refusal (including the HTTP layer's own) is the Connect error body, ``Location`` is absolute
and encoded, trailing slashes are ignored, task numbers parse as Java's ``Integer``. The live
comparison with a Java worker is tests/integration/test_rest_adversarial.py.
"""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import aiohttp
import pytest
from hypothesis import HealthCheck, given, settings
from yarl import URL

from pyconnect.protocol.internal_records import TargetState
from pyconnect.rest.media import content_type_error, media_type
from pyconnect.rest.paths import encode_segment
from pyconnect.rest.server import RestServer
from tests.rest_inputs import DANGEROUS_NAMES, dangerous_names, decoys, path_of, raw_http_async
from tests.unit.rest.test_rest_api import MemoryHerder

Pair = tuple[MemoryHerder, RestServer, MemoryHerder, RestServer]


@pytest.fixture
async def pair() -> AsyncIterator[Pair]:
    leader_herder = MemoryHerder()
    leader = RestServer(leader_herder, ["http://127.0.0.1:0"])
    await leader.start()
    follower_herder = MemoryHerder(leader.advertised_url, is_leader=False)
    follower = RestServer(follower_herder, ["http://127.0.0.1:0"])
    await follower.start()
    yield leader_herder, leader, follower_herder, follower
    await follower.stop()
    await leader.stop()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def port(server: RestServer) -> int:
    return server.bound[0][1]


def at(server: RestServer, path: str) -> URL:
    return URL(server.advertised_url.rstrip("/") + path, encoded=True)


JSON = {"Content-Type": "application/json"}


def test_encode_segment_decodes_back_to_one_segment() -> None:
    for name in DANGEROUS_NAMES:
        segment = encode_segment(name)
        assert "/" not in segment and "?" not in segment and "#" not in segment
        assert segment not in (".", "..")
        assert URL("/connectors/" + segment, encoded=True).parts[-1] == name


@pytest.mark.parametrize(
    ("header", "parsed"),
    [
        ("application/json", ("application", "json")),
        ("Application/JSON; charset=ISO-8859-1", ("application", "json")),
        ("*/*", ("*", "*")),
        ("json", None),
        ("application/json, text/plain", None),
        (";", None),
    ],
)
def test_media_type(header: str, parsed: tuple[str, str] | None) -> None:
    assert media_type(header) == parsed


def test_content_type_rules_as_jersey_applies_consumes_json() -> None:
    def check(header: str | None, body: bool = True, reads: bool = True) -> int | None:
        refusal = content_type_error(header, has_body=body, consumes_json=True, reads_body=reads)
        return refusal[0] if refusal else None

    for accepted in ("application/json", "application/json; charset=utf-8", "application/*", "*/json", "*/*"):
        assert check(accepted) is None
    for refused in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "text/*"):
        assert check(refused) == 415 and check(refused, body=False, reads=False) == 415
    assert check("application/json-patch+json") == 415
    assert check("json") == 400
    assert check(None) == 415, "a JSON entity without a Content-Type is read as octet-stream"
    assert check(None, body=False) is None and check(None, reads=False) is None
    assert content_type_error("text/plain", has_body=True, consumes_json=False, reads_body=True) is None


async def test_every_dangerous_name_through_the_follower_changes_only_that_connector(
    pair: Pair, http: aiohttp.ClientSession
) -> None:
    leader_herder, _, _, follower = pair
    for name in DANGEROUS_NAMES:
        bystanders = decoys(name) | {"victim", "b"}
        leader_herder.configs = {n: {"name": n} for n in bystanders | {name}}
        leader_herder.targets = {n: TargetState.STARTED for n in leader_herder.configs}

        async with http.put(at(follower, path_of(name, "stop")), headers=JSON) as resp:
            assert resp.status == 204, (name, await resp.text())
        assert {n for n, t in leader_herder.targets.items() if t is TargetState.STOPPED} == {name}

        async with http.put(at(follower, path_of(name, "config")), json={"k": "v"}) as resp:
            assert resp.status == 200, (name, await resp.text())
            assert (await resp.json())["name"] == name
        assert all(leader_herder.configs[n] == {"name": n} for n in bystanders)

        async with http.post(at(follower, path_of(name, "tasks")), data=b'[{"t":"1"}]', headers=JSON) as resp:
            assert resp.status == 204, (name, await resp.text())
        assert leader_herder.task_config_posts[-1][0] == name

        async with http.delete(at(follower, path_of(name)), headers=JSON) as resp:
            assert resp.status == 204, (name, await resp.text())
        assert set(leader_herder.configs) == bystanders, name


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=dangerous_names())
async def test_generated_names_are_deleted_exactly_through_the_follower(
    pair: Pair, http: aiohttp.ClientSession, name: str
) -> None:
    leader_herder, _, _, follower = pair
    bystanders = decoys(name)
    leader_herder.configs = {n: {"name": n} for n in bystanders | {name}}
    async with http.delete(at(follower, path_of(name)), headers=JSON) as resp:
        assert resp.status == 204, (name, await resp.text())
    assert set(leader_herder.configs) == bystanders


async def test_location_is_absolute_encoded_and_names_the_worker_asked(
    pair: Pair, http: aiohttp.ClientSession
) -> None:
    leader_herder, leader, follower_herder, follower = pair
    follower_herder.configs = leader_herder.configs  # reads are answered locally: share what was created
    for server, name in ((leader, "a/b c#d"), (follower, "..")):
        async with http.post(at(server, "/connectors"), json={"name": name, "config": {}}) as resp:
            assert resp.status == 201
            location = resp.headers["Location"]
        assert location == server.advertised_url.rstrip("/") + "/connectors/" + encode_segment(name)
        assert urlsplit(location).netloc == urlsplit(server.advertised_url).netloc
        async with http.get(URL(location, encoded=True)) as resp:
            assert resp.status == 200 and (await resp.json())["name"] == name


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/connectors", b'{"name":"csrf","config":{}}'),
        ("PUT", "/connectors/csrf/config", b"{}"),
        ("PATCH", "/connectors/victim/config", b"{}"),
        ("DELETE", "/connectors/victim", b""),
        ("PUT", "/connectors/victim/stop", b""),
        ("PUT", "/connectors/victim/pause", b""),
        ("POST", "/connectors/victim/restart", b""),
        ("PUT", "/admin/loggers/root", b'{"level":"DEBUG"}'),
        ("GET", "/connectors", b""),
        ("POST", "/connectors/victim/tasks", b'[{"task.class":"x"}]'),
    ],
)
@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]
)
async def test_cross_site_simple_requests_are_refused(
    pair: Pair, method: str, path: str, body: bytes, content_type: str
) -> None:
    leader_herder, leader, _, follower = pair
    leader_herder.configs = {"victim": {"name": "victim"}}
    leader_herder.targets = {"victim": TargetState.STARTED}
    for server in (leader, follower):
        headers = {"Content-Type": content_type, "Origin": "http://evil.example"}
        resp = await raw_http_async(port(server), method, path, body, headers)
        assert resp.status == 415, resp
        assert json.loads(resp.body) == {"error_code": 415, "message": "HTTP 415 Unsupported Media Type"}
    assert leader_herder.configs == {"victim": {"name": "victim"}}
    assert leader_herder.targets == {"victim": TargetState.STARTED}
    assert leader_herder.task_config_posts == []


async def test_content_type_absent_or_json(pair: Pair) -> None:
    leader_herder, leader, _, _ = pair
    leader_herder.configs = {"c": {"name": "c"}}
    p = port(leader)
    assert (await raw_http_async(p, "PUT", "/connectors/c/pause")).status == 202, (
        "no body, no Content-Type: fine"
    )
    assert (await raw_http_async(p, "POST", "/connectors", b'{"name":"n","config":{}}')).status == 415
    resp = await raw_http_async(
        p,
        "POST",
        "/connectors",
        b'{"name":"n","config":{}}',
        {"Content-Type": "APPLICATION/json; charset=utf-8"},
    )
    assert resp.status == 201
    assert (await raw_http_async(p, "GET", "/", headers={"Content-Type": "text/plain"})).status == 200
    assert (await raw_http_async(p, "GET", "/health", headers={"Content-Type": "text/plain"})).status == 200
    bad = await raw_http_async(p, "PUT", "/connectors/c/pause", headers={"Content-Type": "json"})
    assert bad.status == 400 and json.loads(bad.body)["error_code"] == 400


@pytest.mark.parametrize(
    ("method", "target", "body", "headers", "status"),
    [
        ("FOO", "/connectors", b"", {}, 405),
        ("GET", "/connectors/" + "a" * 10000, b"", {}, 414),
        ("GET", "/connectors", b"", {"X-Big": "x" * 20000}, 431),
        ("PUT", "/connectors/c/config", b"{}", {"Content-Length": "abc", **JSON}, 400),
        (
            "PUT",
            "/connectors/c/config",
            b"zz\r\n{}\r\n0\r\n\r\n",
            {"Transfer-Encoding": "chunked", "Content-Length": None, **JSON},
            400,
        ),
        ("PUT", "/connectors/c/config", b"not gzip", {"Content-Encoding": "gzip", **JSON}, 400),
        ("PUT", "/connectors/c/config", b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}", JSON, 400),
        ("PUT", "/connectors/c/config", b'{"a":' + b"9" * 100000 + b"}", JSON, 400),
        ("PUT", "/connectors/c/config", b'{"a":NaN}', JSON, 400),
        ("PUT", "/connectors/c/config", b'{"a":"\\ud800"}', JSON, 400),
        ("POST", "/connectors", b'{"name":"\\udc00x","config":{}}', JSON, 400),
        ("GET", "/connectors/c/tasks/abc/status", b"", {}, 404),
        ("GET", "/connectors/c/tasks/99999999999/status", b"", {}, 404),
        ("GET", "/connectors/c/tasks/%D9%A3/status", b"", {}, 404),
        ("GET", "//connectors", b"", {}, 404),
    ],
)
async def test_no_input_gets_a_5xx_or_a_body_that_is_not_the_error_json(
    pair: Pair, method: str, target: str, body: bytes, headers: dict[str, str | None], status: int
) -> None:
    leader_herder, leader, _, follower = pair
    leader_herder.configs = {"c": {"name": "c"}}
    for server in (leader, follower):
        resp = await raw_http_async(port(server), method, target, body, headers)
        assert resp.status == status, (server, resp)
        assert resp.headers["content-type"].startswith("application/json"), resp
        payload = json.loads(resp.body)
        assert set(payload) == {"error_code", "message"} and payload["error_code"] == status
        assert resp.headers.get("server") == "pyconnect"
    assert (await raw_http_async(port(leader), "GET", "/connectors")).status == 200, (
        "the worker goes on serving"
    )


async def test_gzip_bodies_are_read_and_numbers_keep_their_text(pair: Pair) -> None:
    leader_herder, leader, _, _ = pair
    body = gzip.compress(b'{"name":"z","config":{"a":1.50,"b":1e400,"c":-0,"d":true}}')
    resp = await raw_http_async(
        port(leader), "POST", "/connectors", body, {"Content-Encoding": "gzip", **JSON}
    )
    assert resp.status == 201, resp
    assert leader_herder.configs["z"] == {"a": "1.50", "b": "1e400", "c": "-0", "d": "true", "name": "z"}


async def test_trailing_slashes_are_ignored_as_java_does(pair: Pair) -> None:
    leader_herder, leader, follower_herder, follower = pair
    leader_herder.configs = follower_herder.configs = {"c": {"name": "c"}}
    for server in (leader, follower):
        p = port(server)
        assert json.loads((await raw_http_async(p, "GET", "/connectors/")).body) == ["c"]
        assert (await raw_http_async(p, "GET", "/connectors/c/status/")).status == 200
        assert (await raw_http_async(p, "GET", "/connectors/c/tasks/+0/status/")).status == 200
        assert (await raw_http_async(p, "PUT", "/connectors/c/resume/")).status == 202
        assert (await raw_http_async(p, "GET", "/connectors/c//")).status == 404
    resp = await raw_http_async(port(follower), "DELETE", "/connectors/c/")
    assert resp.status == 204 and leader_herder.configs == {}


async def test_malformed_requests_are_not_logged_as_server_errors(
    pair: Pair, caplog: pytest.LogCaptureFixture
) -> None:
    _, leader, _, _ = pair
    with caplog.at_level(logging.DEBUG, logger="aiohttp.server"):
        for target, headers in (("/connectors/" + "a" * 10000, {}), ("/connectors", {"X-Big": "x" * 20000})):
            assert (await raw_http_async(port(leader), "GET", target, headers=headers)).status in (414, 431)
    refused = [r for r in caplog.records if r.name == "aiohttp.server"]
    assert refused and all(r.levelno == logging.DEBUG for r in refused), refused


async def test_a_numeric_name_keeps_its_text_as_java_binds_it(pair: Pair) -> None:
    leader_herder, leader, _, _ = pair
    resp = await raw_http_async(port(leader), "POST", "/connectors", b'{"name":1.50,"config":{}}', JSON)
    assert resp.status == 201 and json.loads(resp.body)["name"] == "1.50"
    assert resp.headers["location"].endswith("/connectors/1.50") and "1.50" in leader_herder.configs
