"""Golden REST JSON: the same requests to a Java worker and a pyconnect worker give the same shapes.

Each worker is its own one-worker cluster on cluster A (own group and internal topics) and runs
Java's VerifiableSourceConnector (ours is the port). What legitimately differs is normalized: ports
and worker ids, topic names, commit ids, cluster ids, timestamps, stack traces and the plugin list
(ours is ours). Where Java answers 500 for bad input we answer 400 with the same message; those
cases are listed in ``JAVA_500_CASES`` and checked on both sides, so a change on either side shows.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.java_reference import JavaConnectWorker
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import FAST_GROUP, fleet, running_tasks, status, verifiable, wait_for

pytestmark = [pytest.mark.kafka, pytest.mark.java]

VERIFIABLE = "org.apache.kafka.connect.tools.VerifiableSourceConnector"
WORKER_ID = re.compile(r"127\.0\.0\.1:\d+")


class Pair:
    """One Java and one pyconnect worker; ``call`` sends the same request to both."""

    def __init__(self, java: JavaConnectWorker, ours: PyconnectWorker, topics: dict[str, str]) -> None:
        self.java, self.ours, self.topics = java, ours, topics

    def normalize(self, side: str, value: Any) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if key == "trace":
                    out[key] = "<trace>" if item else item
                elif key == "last_modified":
                    out[key] = "<time>" if item is not None else None
                else:
                    out[key] = self.normalize(side, item)
            return out
        if isinstance(value, list):
            return [self.normalize(side, item) for item in value]
        if isinstance(value, str):
            return WORKER_ID.sub("<worker>", value.replace(self.topics[side], "<topic>"))
        return value

    def call(self, method: str, path: str, body: object = None) -> tuple[tuple[int, Any], tuple[int, Any]]:
        java = self.java.rest(method, path, body)
        ours = self.ours.rest(method, path, body)
        return (java[0], self.normalize("java", java[1])), (ours[0], self.normalize("ours", ours[1]))

    def same(self, method: str, path: str, body: object = None) -> tuple[int, Any]:
        java, ours = self.call(method, path, body)
        assert ours == java, f"{method} {path}\n java: {java}\n ours: {ours}"
        return ours


@pytest.fixture(scope="module")
def pair(
    kafka_clusters: dict[str, ClusterHandle], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Pair]:
    bootstrap = kafka_clusters["A"].bootstrap_servers
    base = tmp_path_factory.mktemp("rest-compat")
    suffix = uuid.uuid4().hex[:8]
    java = JavaConnectWorker(
        bootstrap, base / "java", group_id=f"rest-java-{suffix}", extra=FAST_GROUP, die_with_parent=True
    )
    ours = PyconnectWorker(
        bootstrap, base / "py", group_id=f"rest-py-{suffix}", extra=FAST_GROUP, die_with_parent=True
    )
    topics = {"java": f"rest-java-out-{suffix}", "ours": f"rest-py-out-{suffix}"}
    with fleet([java, ours]):
        for side, worker in (("java", java), ("ours", ours)):
            code, body = worker.rest(
                "POST", "/connectors", {"name": "vs", "config": verifiable(topics[side], 2)}
            )
            assert code == 201, body
        for worker in (java, ours):
            wait_for("2 RUNNING tasks", lambda w=worker: running_tasks(w, "vs", 2), 90)  # type: ignore[misc]
        yield Pair(java, ours, topics)


def keys_in_order(value: Any) -> Any:
    """The JSON shape: key order of every entity object, types of the leaves. Config maps are
    compared as sets: Java renders them in ``HashMap`` order, which the spec leaves open (§2.1)."""
    if isinstance(value, dict):
        if "connector.class" in value:
            return sorted((k, keys_in_order(v)) for k, v in value.items())
        return [(k, keys_in_order(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [keys_in_order(v) for v in value[:1]]
    return type(value).__name__


def test_root_and_connector_entities(pair: Pair) -> None:
    (jc, java_root), (oc, our_root) = pair.call("GET", "/")
    assert jc == oc == 200 and list(java_root) == list(our_root) == ["version", "commit", "kafka_cluster_id"]
    assert java_root["version"] == our_root["version"] and len(our_root["commit"]) == 16

    code, info = pair.same("GET", "/connectors/vs")
    assert code == 200 and [t["task"] for t in info["tasks"]] == [0, 1]
    java_info, our_info = (
        pair.java.rest("GET", "/connectors/vs")[1],
        pair.ours.rest("GET", "/connectors/vs")[1],
    )
    assert keys_in_order(java_info) == keys_in_order(our_info)
    pair.same("GET", "/connectors/vs/config")
    code, tasks = pair.same("GET", "/connectors/vs/tasks")
    assert code == 200 and len(tasks) == 2 and tasks[0]["config"]["task.class"]
    code, state = pair.same("GET", "/connectors/vs/status")
    assert code == 200 and state["connector"] == {
        "state": "RUNNING",
        "worker_id": "<worker>",
        "version": "4.3.1",
    }
    pair.same("GET", "/connectors/vs/tasks/1/status")
    code, expanded = pair.same("GET", "/connectors?expand=status&expand=info")
    assert code == 200 and set(expanded["vs"]) == {"status", "info"}
    assert pair.same("GET", "/connectors?expand=bogus") == (200, {"vs": {}})


def test_plugins_and_their_config(pair: Pair) -> None:
    (jc, java_plugins), (oc, our_plugins) = pair.call("GET", "/connector-plugins")
    assert jc == oc == 200
    java_entry = next(p for p in java_plugins if p["class"] == VERIFIABLE)
    our_entry = next(p for p in our_plugins if p["class"] == VERIFIABLE)
    assert our_entry == java_entry and list(our_entry) == list(java_entry)
    assert {p["type"] for p in our_plugins} <= {"source", "sink"}
    (_, java_all), (_, our_all) = pair.call("GET", "/connector-plugins?connectorsOnly=false")
    assert all(set(p) <= {"class", "type", "version"} for p in our_all + java_all)

    (jc, java_keys), (oc, our_keys) = pair.call("GET", "/connector-plugins/VerifiableSourceConnector/config")
    assert jc == oc == 200
    java_by_name = {k["name"]: k for k in java_keys}
    ours_by_name = {k["name"]: k for k in our_keys}
    common = [name for name in java_by_name if name in ours_by_name]
    assert len(common) >= 20, common
    for name in common:
        java_key, our_key = java_by_name[name], ours_by_name[name]
        assert list(our_key) == list(java_key)
        for field in ("type", "required", "default_value", "importance", "group", "order_in_group", "width"):
            assert our_key[field] == java_key[field], (name, field, java_key[field], our_key[field])


def test_validate_with_errors(pair: Pair) -> None:
    config = {**verifiable("t", 0), "name": "x", "errors.tolerance": "sometimes"}
    (jc, java), (oc, ours) = pair.call(
        "PUT", "/connector-plugins/VerifiableSourceConnector/config/validate", config
    )
    assert jc == oc == 200
    assert ours["name"] == java["name"] == VERIFIABLE
    assert ours["error_count"] == java["error_count"] == 2
    assert ours["groups"] == java["groups"]
    java_errors = {c["value"]["name"]: c["value"]["errors"] for c in java["configs"] if c["value"]}
    our_errors = {c["value"]["name"]: c["value"]["errors"] for c in ours["configs"] if c["value"]}
    assert {k: v for k, v in our_errors.items() if v} == {k: v for k, v in java_errors.items() if v}
    assert [c["definition"]["name"] for c in ours["configs"] if c["definition"]] == [
        c["definition"]["name"] for c in java["configs"] if c["definition"]
    ]


MIRROR_SOURCE = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
MIRROR = {
    "connector.class": MIRROR_SOURCE,
    "source.cluster.alias": "A",
    "target.cluster.alias": "B",
    "source.cluster.bootstrap.servers": "127.0.0.1:1",
    "target.cluster.bootstrap.servers": "127.0.0.1:1",
}
MIRROR_CLASS_TYPOS = {
    "replication.policy.class": "org.apache.kafka.connect.mirror.DefaultReplicatonPolicy",
    "topic.filter.class": "org.apache.kafka.connect.mirror.DefaultTopicFiltr",
    "config.property.filter.class": "DefaultConfigPropertyFiltr",
    "forwarding.admin.class": "com.example.NoSuchAdmin",
    "key.converter": "org.apache.kafka.connect.converters.ByteArrayConvertr",
}


def test_mirror_class_key_typos_are_errors_on_the_key_as_in_java(pair: Pair) -> None:
    """A typo in a class-type key is a validation error naming the key (not a 201 and a FAILED task)."""
    config = {**MIRROR, "name": "m", **MIRROR_CLASS_TYPOS}
    (jc, java), (oc, ours) = pair.call(
        "PUT", "/connector-plugins/MirrorSourceConnector/config/validate", config
    )
    assert jc == oc == 200
    java_errors = {c["value"]["name"]: c["value"]["errors"] for c in java["configs"] if c["value"]["errors"]}
    our_errors = {c["value"]["name"]: c["value"]["errors"] for c in ours["configs"] if c["value"]["errors"]}
    assert set(java_errors) == set(MIRROR_CLASS_TYPOS), java_errors
    assert our_errors == java_errors
    assert ours["error_count"] == java["error_count"] == len(MIRROR_CLASS_TYPOS)


TRANSFORMS_CONFIG = {
    "transforms": "drop,route,mask,bad",
    "transforms.drop.type": "Filter",
    "transforms.drop.predicate": "other",
    "transforms.drop.negate": "true",
    "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
    "transforms.route.regex": "(",
    "transforms.mask.type": "org.apache.kafka.connect.transforms.MaskField$Value",
    "transforms.mask.plugin.version": "[1.0,2.0)",
    "transforms.bad.type": "com.example.Nope",
    "predicates": "other,tomb",
    "predicates.other.type": "TopicNameMatches",
    "predicates.tomb.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
    "predicates.tomb.name": "",
}


def test_transformations_and_predicates_in_plugins_and_validation(pair: Pair) -> None:
    (_, java_all), (_, our_all) = pair.call("GET", "/connector-plugins?connectorsOnly=false")
    kinds = ("transformation", "predicate")
    assert [p for p in our_all if p["type"] in kinds] == [p for p in java_all if p["type"] in kinds]
    for plugin in ("RegexRouter", "org.apache.kafka.connect.transforms.Cast$Value", "TopicNameMatches"):
        code, keys = pair.same("GET", f"/connector-plugins/{plugin}/config")
        assert code == 200 and keys

    config = {**verifiable("t", 1), "name": "x", **TRANSFORMS_CONFIG}
    (jc, java), (oc, ours) = pair.call(
        "PUT", "/connector-plugins/VerifiableSourceConnector/config/validate", config
    )
    assert jc == oc == 200
    assert ours["groups"] == java["groups"]
    assert ours["error_count"] == java["error_count"]

    def smt_entries(infos: dict[str, Any]) -> list[Any]:
        return [
            c
            for c in infos["configs"]
            if (c["definition"] or c["value"])
            and (c["definition"] or c["value"])["name"].startswith(("transforms", "predicates"))
        ]

    java_entries = smt_entries(java)
    assert len(java_entries) == 22 and java["error_count"] == 8, "every case above is exercised"
    assert smt_entries(ours) == java_entries

    bad = {**verifiable("t", 1), "transforms": "t", "transforms.t.type": "com.example.Nope"}
    pair.same("POST", "/connectors", {"name": "bad-transform", "config": bad})


ERROR_CASES: list[tuple[str, str, object]] = [
    ("GET", "/connectors/nope", None),
    ("GET", "/connectors/nope/config", None),
    ("GET", "/connectors/nope/status", None),
    ("GET", "/connectors/nope/tasks/0/status", None),
    ("DELETE", "/connectors/nope", None),
    ("PUT", "/connectors/nope/pause", None),
    ("PUT", "/connectors/nope/resume", None),
    ("PUT", "/connectors/nope/stop", None),
    ("POST", "/connectors/nope/restart", None),
    ("POST", "/connectors/nope/restart?includeTasks=true", None),
    ("POST", "/connectors/nope/tasks/0/restart", None),
    ("GET", "/connectors/nope/tasks", None),
    ("PATCH", "/connectors/nope/config", {"a": "b"}),
    ("GET", "/connectors/nope/offsets", None),
    ("DELETE", "/connectors/nope/offsets", None),
    ("PATCH", "/connectors/nope/offsets", {"offsets": []}),
    ("GET", "/connectors/vs/tasks-config", None),
    ("GET", "/no/such/path", None),
    ("DELETE", "/connector-plugins", None),
    ("POST", "/connectors", {"name": "vs", "config": verifiable("t", 1)}),
    ("POST", "/connectors", {"name": "bad", "config": verifiable("t", 0)}),
    ("POST", "/connectors", {"name": "bad", "config": {"tasks.max": "1"}}),
    ("POST", "/connectors", {"name": "", "config": verifiable("t", 1)}),
    (
        "POST",
        "/connectors",
        {"name": "m", "config": {**MIRROR, "replication.policy.class": "DefaultReplicatonPolicy"}},
    ),
    ("PUT", "/connectors/m/config", {**MIRROR, "topic.filter.class": "org.example.Topics"}),
    ("POST", "/connectors", {"name": "a\u0001b", "config": verifiable("t", 1)}),
    ("PUT", "/connectors/vs/config", {**verifiable("t", 1), "name": "other"}),
    ("PATCH", "/connectors/vs/offsets", {"offsets": [{"partition": {"id": 0}, "offset": {"seqno": 1}}]}),
    ("DELETE", "/connectors/vs/offsets", None),
    ("GET", "/connector-plugins/Nope/config", None),
    ("PUT", "/connector-plugins/MockSink/config/validate", {"connector.class": VERIFIABLE}),
    ("GET", "/admin/loggers/no.such.logger", None),
    ("PUT", "/admin/loggers/x.y", {}),
    ("PUT", "/admin/loggers/x.y", {"level": "BOGUS"}),
]

JAVA_500_CASES: list[tuple[str, str, object]] = [
    ("PUT", "/connector-plugins/VerifiableSourceConnector/config/validate", {"tasks.max": "1"}),
    ("PUT", "/connector-plugins/Nope/config/validate", {"connector.class": "Nope"}),
]


@pytest.mark.parametrize(("method", "path", "body"), ERROR_CASES)
def test_error_bodies_match(pair: Pair, method: str, path: str, body: object) -> None:
    code, payload = pair.same(method, path, body)
    assert 400 <= code < 500 and payload["error_code"] == code


@pytest.mark.parametrize(("method", "path", "body"), JAVA_500_CASES)
def test_java_500s_are_our_400s_with_the_same_message(
    pair: Pair, method: str, path: str, body: object
) -> None:
    (jc, java), (oc, ours) = pair.call(method, path, body)
    assert (jc, oc) == (500, 400)
    assert (
        ours["message"].split(", available connectors are:")[0]
        == java["message"].split(", available connectors are:")[0]
    )


def test_offsets_after_stop(pair: Pair) -> None:
    for worker in (pair.java, pair.ours):
        assert worker.rest("PUT", "/connectors/vs/stop")[0] == 204
    for worker in (pair.java, pair.ours):
        wait_for(
            "STOPPED without tasks (their statuses removed by the leader)",
            lambda w=worker: (
                (s := status(w, "vs")) and s["connector"]["state"] == "STOPPED" and not s["tasks"]
            ),  # type: ignore[misc]
            60,
        )
    (jc, java), (oc, ours) = pair.call("GET", "/connectors/vs/offsets")
    assert jc == oc == 200 and list(ours) == list(java) == ["offsets"]
    assert sorted(o["partition"]["id"] for o in ours["offsets"]) == [0, 1]
    assert sorted(o["partition"]["id"] for o in java["offsets"]) == [0, 1]
    assert all(list(o) == ["partition", "offset"] and list(o["offset"]) == ["seqno"] for o in ours["offsets"])

    alter = {
        "offsets": [
            {"partition": {"id": 0}, "offset": {"seqno": 3}},
            {"partition": {"id": 1}, "offset": None},
        ]
    }
    pair.same("PATCH", "/connectors/vs/offsets", alter)
    assert pair.same("GET", "/connectors/vs/offsets") == (
        200,
        {"offsets": [{"partition": {"id": 0}, "offset": {"seqno": 3}}]},
    )
    pair.same("PATCH", "/connectors/vs/offsets", {"offsets": []})
    pair.same("DELETE", "/connectors/vs/offsets")
    assert pair.same("GET", "/connectors/vs/offsets") == (200, {"offsets": []})
    pair.same("GET", "/connectors/vs/topics")
    code, stopped = pair.same("GET", "/connectors/vs/status")
    assert code == 200 and stopped["connector"]["state"] == "STOPPED" and stopped["tasks"] == []


def test_loggers(pair: Pair) -> None:
    (jc, java), (oc, ours) = pair.call("GET", "/admin/loggers")
    assert jc == oc == 200 and ours["root"] == java["root"] == {"level": "INFO", "last_modified": None}
    worker_scope = "org.apache.kafka.connect.runtime.WorkerSourceTask"
    assert pair.same("PUT", f"/admin/loggers/{worker_scope}", {"level": "DEBUG"}) == (200, [worker_scope])
    assert pair.same("GET", f"/admin/loggers/{worker_scope}") == (
        200,
        {"level": "DEBUG", "last_modified": "<time>"},
    )
    cluster_scope = "org.apache.kafka.connect.runtime.WorkerSinkTask"
    assert pair.same("PUT", f"/admin/loggers/{cluster_scope}?scope=cluster", {"level": "WARN"}) == (204, None)
    for worker in (pair.java, pair.ours):
        wait_for(
            "the cluster-scope level applied",
            lambda w=worker: w.rest("GET", f"/admin/loggers/{cluster_scope}")[1].get("level") == "WARN",  # type: ignore[misc]
            30,
        )


def test_the_normalizer_keeps_real_differences(tmp_path: Path) -> None:
    java = JavaConnectWorker("127.0.0.1:1", tmp_path / "j", port=1)
    ours = PyconnectWorker("127.0.0.1:1", tmp_path / "p", port=1)
    helper = Pair(java, ours, {"java": "tj", "ours": "tp"})
    assert helper.normalize("java", {"topic": "tj", "w": "127.0.0.1:9"}) == helper.normalize(
        "ours", {"topic": "tp", "w": "127.0.0.1:8"}
    )
    assert helper.normalize("java", {"topic": "other"}) != helper.normalize("ours", {"topic": "tp"})
