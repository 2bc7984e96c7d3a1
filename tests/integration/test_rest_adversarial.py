"""Hostile and careless REST input against a pyconnect fleet and a Java 4.3.1 fleet, side by side.

Each side is two workers (leader and follower) in its own group on cluster A. Every name-taking
endpoint is driven through both, alternating leader and follower, for names from every dangerous
class (tests/rest_inputs.py), and the answers are compared with Java's:

- names both can address: the same status on every endpoint, and only the named connector changes
  (decoy connectors whose names a decoded-path rebuild would hit stay as they were);
- names Java creates but its Jetty cannot address afterwards (``.``, ``..``, ``%``, ``%2F``, ``;``,
  ``{``): ours work end to end, incl. tasks of a follower-owned ``.``; Java's refusal is checked too,
  so a change on either side shows (``JAVA_CANNOT_ADDRESS``);
- names Java refuses: the same 400 and message;
- Content-Type, protocol-level refusals, trailing slashes, task ids and number text: same statuses
  as Java, and ours always with the Connect error body.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pyconnect.rest.paths import join_segments
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.connect_worker import ConnectWorkerProcess, group_leader_url
from pyconnect.testing.java_reference import JavaConnectWorker
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import FAST_GROUP, fleet, verifiable, wait_for
from tests.rest_inputs import REFUSED_NAMES, RawResponse, decoys, path_of, raw_http

pytestmark = [pytest.mark.kafka, pytest.mark.java]

JSON = {"Content-Type": "application/json"}
REBALANCE_RETRY_S = 30.0
REBALANCE_MESSAGES = (b"rebalance", b"stale configuration")

BOTH_ADDRESS = (
    "x#y",
    "x?forward=false",
    "a b",
    "a+b",
    "a=b&c",
    "a:b@c",
    "(x)!*'$,",
    "caf\u00e9",
    "emoji\U0001f600",
    "\u2028line",
    "\u00a0nbsp\u00a0",
    "x" * 300,
)
"""Names a Java worker creates and addresses: every answer must equal Java's."""

JAVA_CANNOT_ADDRESS = (".", "..", "100%", "x%2Fy", "a;b", "{brace}")
"""Names Java creates (or half-creates) but cannot address through its REST API afterwards."""


@dataclass
class Side:
    label: str
    leader: ConnectWorkerProcess
    follower: ConnectWorkerProcess
    topic: str

    def send(self, via: str, method: str, target: str, body: object = None, **headers: str) -> RawResponse:
        """One request; an answer that only says a rebalance is under way (Java: 500 "a rebalance is
        expected", 409 stale configuration; ours likewise) is retried, as a client does, for 30 s."""
        worker = self.leader if via == "leader" else self.follower
        raw = b"" if body is None else json.dumps(body).encode()
        deadline = time.monotonic() + REBALANCE_RETRY_S
        while True:
            resp = raw_http(worker.port, method, target, raw, {**JSON, **headers})
            transient = resp.status in (409, 500) and any(m in resp.body for m in REBALANCE_MESSAGES)
            if not transient or time.monotonic() > deadline:
                return resp
            time.sleep(0.25)

    def connectors(self) -> set[str]:
        return set(json.loads(self.send("leader", "GET", "/connectors").body))

    def create(self, name: str, via: str = "follower") -> RawResponse:
        return self.send(via, "POST", "/connectors", {"name": name, "config": verifiable(self.topic, 1, 1)})

    def running(self, name: str) -> bool:
        resp = self.send("leader", "GET", path_of(name, "status"))
        if resp.status != 200:
            return False
        state = json.loads(resp.body)
        return state["connector"]["state"] == "RUNNING" and [t["state"] for t in state["tasks"]] == [
            "RUNNING"
        ]


def ordered(workers: list[ConnectWorkerProcess], bootstrap: str, group: str) -> tuple[Any, Any]:
    leader_url = wait_for("a group leader", lambda: group_leader_url(bootstrap, group), 30)
    leader = next(w for w in workers if w.rest_url == leader_url)
    return leader, next(w for w in workers if w is not leader)


@pytest.fixture(scope="module")
def sides(
    kafka_clusters: dict[str, ClusterHandle], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Side]]:
    bootstrap = kafka_clusters["A"].bootstrap_servers
    base: Path = tmp_path_factory.mktemp("rest-adversarial")
    suffix = uuid.uuid4().hex[:8]
    groups = {"java": f"adv-java-{suffix}", "ours": f"adv-py-{suffix}"}
    java = [
        JavaConnectWorker(
            bootstrap, base / f"java-{i}", group_id=groups["java"], extra=FAST_GROUP, die_with_parent=True
        )
        for i in range(2)
    ]
    ours = [
        PyconnectWorker(
            bootstrap, base / f"py-{i}", group_id=groups["ours"], extra=FAST_GROUP, die_with_parent=True
        )
        for i in range(2)
    ]
    with fleet([*java, *ours]):
        out = {}
        for label, workers in (("java", java), ("ours", ours)):
            leader, follower = ordered(list(workers), bootstrap, groups[label])
            out[label] = Side(label, leader, follower, f"adv-{label}-{suffix}")
        yield out


JAVA_RESTART_RACE = b"Failed to start connector"
"""Java's answer to a restart that meets its own connector still (re)starting on a loaded machine: the
restart is asked again (up to ``JAVA_RESTART_RETRIES`` times, 1 s apart); ours never answers it."""
JAVA_RESTART_RETRIES = 3

SERVER_ERRORS: dict[tuple[str, str, str], bytes] = {}
"""(side, connector, step) -> body of every 5xx answer, shown when a comparison fails."""


def walk(side: Side, name: str) -> list[tuple[str, int]]:
    """Every name-taking endpoint for one connector, alternating follower and leader; the statuses."""
    steps: list[tuple[str, str, str, object]] = [
        ("follower", "GET", path_of(name), None),
        ("leader", "GET", path_of(name, "config"), None),
        ("follower", "GET", path_of(name, "tasks"), None),
        ("leader", "GET", path_of(name, "tasks", "0", "status"), None),
        ("follower", "GET", path_of(name, "topics"), None),
        ("follower", "PUT", path_of(name, "pause"), None),
        ("leader", "PUT", path_of(name, "resume"), None),
        ("follower", "POST", path_of(name, "restart"), None),
        ("leader", "POST", path_of(name, "restart") + "?includeTasks=true", None),
        ("follower", "POST", path_of(name, "tasks", "0", "restart"), None),
        ("follower", "PATCH", path_of(name, "config"), {"throughput": "2"}),
        ("leader", "PUT", path_of(name, "config"), verifiable(side.topic, 1, 1)),
        ("follower", "PUT", path_of(name, "stop"), None),
        ("leader", "GET", path_of(name, "offsets"), None),
    ]
    out = []
    for via, method, target, body in steps:
        resp = side.send(via, method, target, body)
        for _ in range(JAVA_RESTART_RETRIES):
            if not (side.label == "java" and resp.status == 500 and JAVA_RESTART_RACE in resp.body):
                break
            time.sleep(1.0)
            resp = side.send(via, method, target, body)
        step = f"{via} {method} {target.replace(path_of(name), '{c}')}"
        if resp.status >= 500:
            SERVER_ERRORS[(side.label, name, step)] = resp.body
        out.append((step, resp.status))
        if target.endswith(
            "/resume"
        ):  # Java fails a restart racing its resume (500 "Failed to start connector")
            wait_for(f"{name!r} RUNNING again on {side.label}", lambda: side.running(name), 60)
    return out


def delete_offsets_then_connector(side: Side, name: str) -> tuple[int, int, int]:
    def stopped() -> bool:
        resp = side.send("leader", "GET", path_of(name, "status"))
        state = json.loads(resp.body) if resp.status == 200 else {}
        return state.get("connector", {}).get("state") == "STOPPED" and not state.get("tasks")

    wait_for(f"{name!r} STOPPED on {side.label}", stopped, 60)
    reset = side.send("follower", "DELETE", path_of(name, "offsets"))
    gone = side.send("follower", "DELETE", path_of(name))
    after = side.send("leader", "GET", path_of(name))
    return reset.status, gone.status, after.status


@pytest.mark.long  # every endpoint for every name on both runtimes (~80 s); the other tests here stay short
def test_names_both_address_answer_as_java_on_every_endpoint(sides: dict[str, Side]) -> None:
    results: dict[str, dict[str, Any]] = {"java": {}, "ours": {}}
    bystanders = set().union(*(decoys(n) for n in BOTH_ADDRESS)) - set(BOTH_ADDRESS)
    for side in sides.values():
        for decoy in bystanders:
            assert side.create(decoy, via="leader").status == 201, (side.label, decoy)
        for name in BOTH_ADDRESS:
            created = side.create(name)
            assert created.status == 201, (side.label, name, created)
        for name in BOTH_ADDRESS:
            wait_for(f"{name!r} RUNNING on {side.label}", lambda s=side, n=name: s.running(n), 90)
            results[side.label][name] = walk(side, name)
            results[side.label][name].append(("delete", delete_offsets_then_connector(side, name)))
        assert side.connectors() == bystanders, f"{side.label}: only the named connectors went away"
    for name in BOTH_ADDRESS:
        assert results["ours"][name] == results["java"][name], (name, SERVER_ERRORS)


def test_names_java_cannot_address_work_end_to_end_on_ours(sides: dict[str, Side]) -> None:
    ours, java = sides["ours"], sides["java"]
    for name in JAVA_CANNOT_ADDRESS:
        created = ours.create(name)
        assert created.status == 201, (name, created)
        assert created.headers["location"] == ours.follower.rest_url.rstrip("/") + join_segments(
            "connectors", name
        )
    for name in JAVA_CANNOT_ADDRESS:
        wait_for(f"{name!r} RUNNING", lambda n=name: ours.running(n), 90)
        statuses = [status for _, status in walk(ours, name)]
        assert statuses == [200, 200, 200, 200, 200, 202, 202, 204, 202, 204, 200, 200, 204, 200], name
        assert delete_offsets_then_connector(ours, name) == (200, 204, 404), name
    assert ours.connectors().isdisjoint(JAVA_CANNOT_ADDRESS)

    for name in JAVA_CANNOT_ADDRESS:
        created = java.create(name)
        if created.status == 201:
            deleted = java.send("follower", "DELETE", path_of(name))
            assert deleted.status in (400, 404), (name, deleted)  # Jetty refuses the path, or ";b" is dropped
        else:
            assert created.status == 500, (name, created)  # "{brace}": created, then Location fails


def test_refused_names_get_javas_400(sides: dict[str, Side]) -> None:
    for name in REFUSED_NAMES:
        java, ours = (sides[label].create(name) for label in ("java", "ours"))
        assert java.status == ours.status == 400, (name, java, ours)
        assert json.loads(ours.body) == json.loads(java.body), name


@pytest.mark.parametrize(
    ("method", "target", "body", "headers"),
    [
        ("POST", "/connectors", b'{"name":"csrf","config":{}}', {"Content-Type": "text/plain"}),
        ("POST", "/connectors", b"name=csrf", {"Content-Type": "application/x-www-form-urlencoded"}),
        ("POST", "/connectors", b'{"name":"csrf","config":{}}', {"Content-Type": None}),
        ("PUT", "/connectors/csrf/config", b"{}", {"Content-Type": "multipart/form-data; boundary=x"}),
        ("DELETE", "/connectors/csrf", b"", {"Content-Type": "text/plain"}),
        ("GET", "/connectors", b"", {"Content-Type": "text/plain"}),
        ("GET", "/", b"", {"Content-Type": "text/plain"}),
        ("PUT", "/connectors/csrf/pause", b"", {"Content-Type": "application/octet-stream"}),
        ("PUT", "/connectors/csrf/pause", b"", {"Content-Type": "json"}),
        ("FOO", "/connectors", b"", {}),
        ("GET", "/connectors/" + "a" * 10000, b"", {}),
        ("GET", "/connectors", b"", {"X-Big": "x" * 20000}),
        ("GET", "/connectors/", b"", {}),
        ("GET", "/connectors/nope/tasks/abc/status", b"", {}),
        ("GET", "/connectors/nope/tasks/99999999999/status", b"", {}),
        ("GET", "/connector-plugins/", b"", {}),
    ],
)
def test_transport_level_input_answers_as_java(
    sides: dict[str, Side], method: str, target: str, body: bytes, headers: dict[str, str | None]
) -> None:
    answers = {}
    for label, side in sides.items():
        for worker in (side.leader, side.follower):
            answers[(label, worker is side.leader)] = raw_http(worker.port, method, target, body, headers)
    statuses = {key: resp.status for key, resp in answers.items()}
    assert len(set(statuses.values())) == 1, statuses
    for (label, _), resp in answers.items():
        if label == "ours" and resp.status >= 400:
            assert set(json.loads(resp.body)) == {"error_code", "message"}, resp
            assert resp.headers["server"] == "pyconnect"


def test_numbers_keep_their_text_as_java_binds_them(sides: dict[str, Side]) -> None:
    configs = {}
    for label, side in sides.items():
        config = json.dumps({**verifiable(side.topic, 1, 1), "throughput": "<n>"})
        body = '{"name":"numbers","config":' + config.replace('"<n>"', '1.50,"x.big":1e400,"x.neg":-0') + "}"
        created = raw_http(side.follower.port, "POST", "/connectors", body.encode(), JSON)
        assert created.status == 201, created
        configs[label] = {k: v for k, v in json.loads(created.body)["config"].items() if k != "topic"}
        side.send("follower", "DELETE", "/connectors/numbers")
    assert configs["ours"] == configs["java"]


def test_names_too_long_for_a_url_are_refused_where_java_half_creates_them(sides: dict[str, Side]) -> None:
    """Java creates the connector, then its follower answers 500 (the leader's ``Location`` is too long
    to read) and the task configs never cross; ours refuses the name with a 400 and creates nothing."""
    name = "\u00e9" * 3000
    ours = sides["ours"].create(name)
    assert ours.status == 400, ours
    assert json.loads(ours.body)["message"].startswith(
        "Connector name is too long: 18000 bytes once URL-encoded"
    )
    assert name not in sides["ours"].connectors()
    java = sides["java"].create(name)
    assert java.status == 500 and name in sides["java"].connectors(), java
    fits = "\u00e9" * 1000  # 6000 bytes once encoded: created and addressed by both
    for side in sides.values():
        assert side.create(fits).status == 201, side.label
        wait_for(f"long name RUNNING on {side.label}", lambda s=side: s.running(fits), 90)
        assert side.send("follower", "DELETE", path_of(fits)).status == 204, side.label
