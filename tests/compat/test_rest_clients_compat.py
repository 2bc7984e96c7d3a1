"""REST parity as clients meet it: what Kafka's own Connect OpenAPI document, published Connect
clients and Strimzi's operator send, answered by a live Java 4.3.1 worker and by pyconnect, through
our leader and through our follower (forwarding), compared as status and JSON.

Where Java answers 500 for a body Jackson cannot bind, we answer 400 with Jackson's message (its
first line: the source location after it is Jackson's own); those cases are checked on both sides.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.connect_worker import ConnectWorkerProcess, group_leader_url
from pyconnect.testing.java_reference import JavaConnectWorker
from tests.compat.rest_pair import RestPair, connect_file_jar, kafka_connect_openapi
from tests.integration.fleet import (
    FAST_GROUP,
    python_workers,
    status,
    verifiable,
    wait_for,
)

pytestmark = [pytest.mark.kafka, pytest.mark.java]

VIAS = ("leader", "follower")
READY_S = 240


@contextmanager
def started(workers: list[ConnectWorkerProcess]) -> Iterator[None]:
    """``fleet`` with a longer readiness bound: a JVM starting beside other suites on 2 cores may
    take more than the default 90 s."""
    try:
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.wait_ready(timeout=READY_S)
        yield
    finally:
        for worker in workers:
            worker.stop(timeout=20)


def stopped_without_tasks(pair: RestPair, name: str) -> bool:
    for worker in (pair.java, pair.leader):
        state = status(worker, name)
        if not state or state["connector"]["state"] != "STOPPED" or state["tasks"]:
            return False
    return True


@pytest.fixture(scope="module")
def pair(
    kafka_clusters: dict[str, ClusterHandle], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RestPair]:
    bootstrap = kafka_clusters["A"].bootstrap_servers
    base = tmp_path_factory.mktemp("rest-clients")
    suffix = uuid.uuid4().hex[:8]
    java = JavaConnectWorker(
        bootstrap,
        base / "java",
        group_id=f"clients-java-{suffix}",
        extra={**FAST_GROUP, "plugin.path": str(connect_file_jar())},
        die_with_parent=True,
    )
    ours = python_workers(bootstrap, base, f"clients-py-{suffix}", 2)
    with started([java, *ours]):
        leader_url = wait_for(
            "our group's leader", lambda: group_leader_url(bootstrap, f"clients-py-{suffix}"), 60
        )
        leader = next(w for w in ours if w.rest_url == leader_url)
        follower = next(w for w in ours if w is not leader)
        names = {
            "java": {f"clients-java-{suffix}": "<group>", str(base / "java"): "<dir>"},
            "ours": {f"clients-py-{suffix}": "<group>", str(base): "<dir>"},
        }
        pair = RestPair(java, leader, follower, names)
        for side, worker in (("java", java), ("ours", leader)):
            code, answer = worker.rest(
                "POST",
                "/connectors",
                {
                    "name": "vs",
                    "config": verifiable(f"clients-{side}-{suffix}", 2),
                    "initial_state": "STOPPED",
                },
            )
            assert code == 201, answer
            pair.names[side][f"clients-{side}-{suffix}"] = "<topic>"
        wait_for("vs STOPPED on both sides", lambda: stopped_without_tasks(pair, "vs"), 60)
        yield pair


def test_boolean_query_parameters_read_as_java_reads_them(pair: RestPair) -> None:
    """``Boolean.valueOf``: only ``true`` (any case) is true; ``1``, ``yes`` or empty are false."""
    for query in (
        "includeTasks=1",
        "includeTasks=yes&onlyFailed=maybe",
        "includeTasks=",
        "onlyFailed=TRUE&includeTasks=0",
    ):
        for via in VIAS:
            wait_for("vs settled", lambda: stopped_without_tasks(pair, "vs"), 30)
            java = pair.java_answer("POST", f"/connectors/vs/restart?{query}")
            ours = pair.ours("POST", f"/connectors/vs/restart?{query}", via=via)
            assert ours == java, (query, via, java, ours)
    for via in VIAS:
        wait_for("vs settled", lambda: stopped_without_tasks(pair, "vs"), 30)
        java = pair.java_answer("POST", "/connectors/vs/restart?includeTasks=TRUE")
        ours = pair.ours("POST", "/connectors/vs/restart?includeTasks=TRUE", via=via)
        assert java[0] == 202 and ours == java, (via, java, ours)
    for query in (
        "connectorsOnly=1",
        "connectorsOnly=False",
        "connectorsOnly=TRUE",
        "",
        "connectorsOnly=",
        "connectorsOnly",
        "connectorsOnly=false&connectorsOnly=true",
    ):
        java_types = {p["type"] for p in pair.java_answer("GET", f"/connector-plugins?{query}")[1]}
        for via in VIAS:
            assert {
                p["type"] for p in pair.ours("GET", f"/connector-plugins?{query}", via=via)[1]
            } == java_types


VERSION_CASES = [
    "",
    "latest",
    "4.3.1",
    "[4.0,5.0)",
    "[1.0,2.0)",
    "1.0",
    "(,1.0]",
    "[bad",
    " latest",
    "[1.0,2.0),[3.0,4.0)",
]


@pytest.mark.parametrize("plugin", ["VerifiableSourceConnector", "RegexRouter", "FileStreamSource", "Nope"])
def test_plugin_config_version_kip_891(pair: RestPair, plugin: str) -> None:
    for version in VERSION_CASES:
        path = f"/connector-plugins/{plugin}/config?version={urllib_quote(version)}"
        java = pair.java_answer("GET", path)
        for via in VIAS:
            ours = pair.ours("GET", path, via=via)
            if java[0] == 200:
                assert ours[0] == 200, (path, via, ours)
            else:
                assert ours == java, (path, via, java, ours)


def urllib_quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


LOOKUP_FIRST: list[tuple[str, str, object]] = [
    ("PATCH", "/connectors/nope/config", {"name": "other"}),
    ("PATCH", "/connectors/nope/config", b""),
    ("PATCH", "/connectors/nope/config", b"null"),
    ("PATCH", "/connectors/nope/config", {"a": 1, "b": True, "c": None}),
    ("PATCH", "/connectors/nope/offsets", {"offsets": [{"offset": {"b": 1}}]}),
    ("PATCH", "/connectors/nope/offsets", {"offsets": [{}]}),
    ("PATCH", "/connectors/nope/offsets", {"offsets": [{"partition": None, "offset": None}]}),
    (
        "PATCH",
        "/connectors/nope/offsets",
        {"offsets": [{"partition": {"a": [1]}, "offset": {"b": {"c": 1}}}]},
    ),
    ("PATCH", "/connectors/nope/offsets", {}),
    ("PATCH", "/connectors/nope/offsets", {"offsets": None}),
    ("PUT", "/admin/loggers/compat.levels", {"level": 5}),
    ("PUT", "/admin/loggers/compat.levels", {"level": True}),
    ("PUT", "/admin/loggers/compat.levels", {"level": None}),
    ("PUT", "/admin/loggers/compat.levels", {"level": "bogus"}),
    ("POST", "/connectors/vs/tasks/5/restart", None),
    ("GET", "/connectors/vs/tasks/5/status", None),
    ("POST", "/connectors/nope/tasks/0/restart", None),
]


@pytest.mark.parametrize(("method", "path", "raw"), LOOKUP_FIRST)
def test_answers_that_clients_see_match(pair: RestPair, method: str, path: str, raw: object) -> None:
    code, answer = pair.same(method, path, raw)
    assert 400 <= code < 500 and answer["error_code"] == code


JAVA_500S: list[tuple[str, str, object]] = [
    (
        "PATCH",
        "/connectors/vs/offsets",
        {"offsets": [{"partition": {"id": 0}, "offset": {"seqno": 1}, "x": 1}]},
    ),
    (
        "PATCH",
        "/connectors/vs/offsets",
        {"offsets": [{"partition": {"id": 0}, "offset": {"seqno": 1}}], "extra": 1},
    ),
    ("PATCH", "/connectors/nope/offsets", {"foo": 1}),
    ("PATCH", "/connectors/nope/offsets", {"offsets": [{"partition": {"a": 1}, "offset": {"b": 1}, "x": 1}]}),
]


@pytest.mark.parametrize(("method", "path", "raw"), JAVA_500S)
def test_java_500s_are_our_400s_with_jacksons_message(
    pair: RestPair, method: str, path: str, raw: object
) -> None:
    java = pair.java_answer(method, path, raw)
    assert java[0] == 500
    for via in VIAS:
        ours = pair.ours(method, path, raw, via=via)
        assert ours[0] == 400 and ours[1]["message"] == java[1]["message"].split("\n")[0], (via, java, ours)


@pytest.mark.parametrize("via", VIAS)
def test_worker_scope_logger_put_lists_only_changed_loggers(pair: RestPair, via: str) -> None:
    """Each worker has its own levels: the same sequence on Java and on one of ours."""
    namespace = f"compat.loggers.{via}"
    worker = pair.leader if via == "leader" else pair.follower
    for child, level in (
        (namespace, "DEBUG"),
        (namespace, "debug"),
        (f"{namespace}.child", "WARN"),
        (namespace, "DEBUG"),
        (namespace, "INFO"),
    ):
        java = pair.java_answer("PUT", f"/admin/loggers/{child}", {"level": level})
        ours = pair.ask(worker, "ours", "PUT", f"/admin/loggers/{child}", {"level": level})
        assert ours == java, (child, level, java, ours)


@pytest.mark.parametrize("via", VIAS)
def test_unknown_connector_class_gains_the_exception_prefix_on_repeats(pair: RestPair, via: str) -> None:
    """Java's ``CachedConnectors`` remembers a class that failed on this worker: the second attempt
    wraps the first failure, so its message starts with the exception's class name."""
    klass = f"com.example.Missing{via.title()}"
    create = {"name": f"missing-{via}", "config": {"connector.class": klass, "tasks.max": "1"}}
    validate_path = f"/connector-plugins/{klass}/config/validate"
    for attempt in range(3):
        java = pair.java_answer("POST", "/connectors", create)
        ours = pair.ours("POST", "/connectors", create, via=via)
        assert java[0] == ours[0] == 400
        cut = ", available connectors are:"
        assert ours[1]["message"].split(cut)[0] == java[1]["message"].split(cut)[0], (attempt, java, ours)
        java = pair.java_answer("PUT", validate_path, {"connector.class": klass})
        ours = pair.ours("PUT", validate_path, {"connector.class": klass}, via=via)
        assert (java[0], ours[0]) == (500, 400)
        assert ours[1]["message"].split(cut)[0] == java[1]["message"].split(cut)[0], (attempt, java, ours)


def failing_verifiable(topic: str) -> dict[str, str]:
    """A VerifiableSource whose task fails at start (its throughput is no number), on both sides."""
    return {**verifiable(topic, 1), "throughput": "not-a-number"}


def task_failed(worker: Any, name: str) -> bool:
    state = status(worker, name)
    return bool(state and state["tasks"] and state["tasks"][0]["state"] == "FAILED")


def test_restart_plan_keeps_trace_and_version_of_what_it_restarts(pair: RestPair) -> None:
    """Strimzi stores the 202 body of an auto-restart as the KafkaConnector's status. One connector
    per path (a second restart could read the RESTARTING record the first one wrote)."""
    for via in VIAS:
        name = f"failing-{via}"
        for side, worker in (("java", pair.java), ("ours", pair.leader)):
            topic = f"{name}-{side}"
            code, answer = worker.rest(
                "POST", "/connectors", {"name": name, "config": failing_verifiable(topic)}
            )
            assert code == 201, answer
            pair.names[side][topic] = "<topic>"
        for worker in (pair.java, pair.leader):
            wait_for("the task FAILED", lambda w=worker, n=name: task_failed(w, n), 60)  # type: ignore[misc]
        path = f"/connectors/{name}/restart?includeTasks=true&onlyFailed=true"
        java = pair.java_answer("POST", path)
        ours = pair.ours("POST", path, via=via)
        assert java[0] == 202 and java[1]["tasks"][0]["state"] == "RESTARTING", java
        assert java[1]["tasks"][0].get("trace") and java[1]["tasks"][0].get("version"), java
        assert ours == java, (via, java, ours)
        for worker in (pair.java, pair.leader):
            assert worker.rest("DELETE", f"/connectors/{name}")[0] == 204


def write_lines(path: Path, lines: list[str]) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write("".join(f"{line}\n" for line in lines))


def test_quick_start_file_source_to_topic_to_file_sink(pair: RestPair, tmp_path: Path) -> None:
    """Kafka's quick start: lines of a file -> a topic (FileStreamSource) -> a file (FileStreamSink),
    on both sides; then the source's offsets, its config definition and its offset checks compare."""
    pair.same("GET", "/connector-plugins/FileStreamSource/config")
    outputs = {}
    for side, worker in (("java", pair.java), ("ours", pair.leader)):
        source, sink = tmp_path / f"{side}-test.txt", tmp_path / f"{side}-test.sink.txt"
        topic = f"connect-test-{side}-{uuid.uuid4().hex[:6]}"
        pair.names[side].update({str(source): "<source-file>", topic: "<topic>"})
        write_lines(source, ["foo", "bar"])
        for name, config in (
            (
                "local-file-source",
                {
                    "connector.class": "FileStreamSource",
                    "tasks.max": "1",
                    "file": str(source),
                    "topic": topic,
                },
            ),
            (
                f"local-file-sink-{side}",  # its own consumer group: both sides share the cluster
                {"connector.class": "FileStreamSink", "tasks.max": "1", "file": str(sink), "topics": topic},
            ),
        ):
            config = {
                **config,
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            }
            code, answer = worker.rest("POST", "/connectors", {"name": name, "config": config})
            assert code == 201, answer
        outputs[side] = (source, sink)
    for side, (source, sink) in outputs.items():
        wait_for(f"{side}: 2 lines through", lambda s=sink: s.exists() and s.read_text().count("\n") >= 2, 90)  # type: ignore[misc]
        write_lines(source, ["a third line", "ünïcode ✓"])
    for side, (_, sink) in outputs.items():
        wait_for(f"{side}: 4 lines through", lambda s=sink: s.exists() and s.read_text().count("\n") >= 4, 90)  # type: ignore[misc]
    texts = {side: sink.read_text(encoding="utf-8") for side, (_, sink) in outputs.items()}
    assert texts["ours"] == texts["java"] == "foo\nbar\na third line\nünïcode ✓\n"

    for worker in (pair.java, pair.leader):
        assert worker.rest("PUT", "/connectors/local-file-source/stop")[0] == 204
    wait_for("local-file-source STOPPED", lambda: stopped_without_tasks(pair, "local-file-source"), 60)
    time.sleep(1)
    java = pair.java_answer("GET", "/connectors/local-file-source/offsets")
    assert java[0] == 200 and java[1]["offsets"][0]["partition"] == {"filename": "<source-file>"}
    for via in VIAS:
        assert pair.ours("GET", "/connectors/local-file-source/offsets", via=via)[0] == 200
    for bad in (
        {"offsets": [{"partition": {"filename": "x"}, "offset": {"position": -1}}]},
        {"offsets": [{"partition": {"filename": "x"}, "offset": {"pos": 1}}]},
        {"offsets": [{"partition": {"file": "x"}, "offset": {"position": 1}}]},
        {"offsets": [{"partition": {"filename": "x"}, "offset": {"position": "1"}}]},
    ):
        pair.same("PATCH", "/connectors/local-file-source/offsets", bad)
    pair.same(
        "PATCH",
        "/connectors/local-file-source/offsets",
        {"offsets": [{"partition": {"filename": "x"}, "offset": None}]},
    )


EXAMPLES_PER_OPERATION = 6
JAVA_LEVELS = {"OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL"}
FIXTURE_CONNECTORS = {
    "vs",
    "failing-leader",
    "failing-follower",
    "local-file-source",
    "local-file-sink-java",
    "local-file-sink-ours",
}
WRAPPERS = (
    "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: ",
    "org.apache.kafka.connect.errors.ConnectException: ",
)


def comparable(answer: tuple[int, Any]) -> tuple[int, Any]:
    """An error answer with what legitimately differs removed: Jackson's source location, the
    wrapper prefixes that depend on what this worker saw before (compared on their own above), the
    plugin listing."""
    code, payload = answer
    if isinstance(payload, dict) and isinstance(payload.get("message"), str):
        message = payload["message"].split("\n at [Source")[0].split(", available connectors are:")[0]
        for prefix in WRAPPERS:
            message = message.replace(prefix, "")
        payload = {**payload, "message": message}
    return code, payload


def test_property_based_run_from_kafkas_openapi_document(pair: RestPair) -> None:
    """Schemathesis generates requests for every operation of Apache Kafka's own Connect OpenAPI
    document; each goes to Java and to ours (leader and follower in turn). Ours must answer what Java
    answers (status, and the error body), except that where Java answers 500 we answer 4xx, and
    where Jetty refuses a path before Connect sees it (a non-JSON 400: control characters, ``%25``,
    ``%2F``) ours only must not fail."""
    import schemathesis
    from hypothesis import HealthCheck, Phase, assume, given, settings
    from schemathesis.core import NotSet

    schema = schemathesis.openapi.from_dict(kafka_connect_openapi())
    tally: dict[str, int] = {"cases": 0, "same": 0, "java 5xx, ours 4xx": 0, "refused by Jetty": 0}
    mismatches: list[str] = []

    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]  # Kafka's document is valid

        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def check(case: Any) -> None:
            params = case.path_parameters or {}
            assume(params.get("connector") not in FIXTURE_CONNECTORS)
            level = case.body.get("level") if isinstance(case.body, dict) else None
            assume(not (isinstance(level, str) and level.strip().upper() in JAVA_LEVELS))
            tally["cases"] += 1
            via = VIAS[tally["cases"] % 2]
            target = pair.leader if via == "leader" else pair.follower
            raw = None if isinstance(case.body, NotSet) else case.body
            path = case.formatted_path + ("?" + urlencode(case.query) if case.query else "")
            java = comparable(pair.java_answer(case.method, path, raw))
            ours = comparable(pair.ask(target, "ours", case.method, path, raw))
            if java[0] == 400 and not isinstance(java[1], dict) and ours[0] < 500:
                tally["refused by Jetty"] += 1
            elif java[0] >= 500 and 400 <= ours[0] < 500 and ours[1]["error_code"] == ours[0]:
                tally["java 5xx, ours 4xx"] += 1
            elif java[0] == ours[0] and (java[0] < 400 or java == ours):
                tally["same"] += 1
            else:
                mismatches.append(f"{case.method} {path} {raw!r} via {via}: java {java} ours {ours}")

        check()
    print(f"Kafka's OpenAPI document, {len(schema)} operations: {tally}")
    assert tally["cases"] >= 100, tally
    assert not mismatches, f"{len(mismatches)} of {tally}:\n" + "\n".join(mismatches[:20])
