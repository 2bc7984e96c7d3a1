"""The pure parts of the test-cluster support: ports, properties, the Maven pom, PID ownership,
backend selection and KRaft cluster ids. No Kafka and no JVM here."""

from __future__ import annotations

import base64
import json
import logging
import re
import signal
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyconnect.testing import backends, distribution
from pyconnect.testing.java_process import (
    TAG_PROPERTY,
    pid_alive,
    pid_has_tag,
    signal_tagged,
    stop_tagged,
    tagged,
)
from pyconnect.testing.kafka import (
    STATE_FILE,
    KafkaCluster,
    _kraft_cluster_id,
    _main,
    down,
    free_ports,
    render_properties,
)

ENV_VARS = ("PYCONNECT_TEST_BACKEND", "PYCONNECT_TEST_BOOTSTRAP_A", "PYCONNECT_TEST_BOOTSTRAP_B")


# ---------------------------------------------------------------- ports and properties


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = free_ports(8)
    assert len(set(ports)) == 8
    socks = []
    try:
        for port in ports:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(s)
            s.bind(("127.0.0.1", port))
    finally:
        for s in socks:
            s.close()


def test_render_properties_one_line_per_key_in_order() -> None:
    text = render_properties(
        {"node.id": 1, "log.dirs": Path("/data/x"), "process.roles": "broker,controller"}
    )
    assert text == "node.id=1\nlog.dirs=/data/x\nprocess.roles=broker,controller\n"
    assert render_properties({}) == ""


def test_three_node_properties_form_one_quorum(tmp_path: Path) -> None:
    cluster = KafkaCluster(
        "T", tmp_path, distribution.KafkaDistribution(tmp_path), brokers=3, overrides={"x.y": "z"}
    )
    ports = [p for n in cluster.nodes for p in (n.port, n.controller_port)]
    assert len(set(ports)) == 6
    assert cluster.bootstrap_servers == ",".join(f"127.0.0.1:{n.port}" for n in cluster.nodes)
    for node in cluster.nodes:
        props = dict(line.split("=", 1) for line in render_properties(node.properties()).splitlines())
        assert props["node.id"] == str(node.node_id)
        assert props["controller.quorum.voters"] == ",".join(
            f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in cluster.nodes
        )
        assert props["advertised.listeners"] == f"PLAINTEXT://127.0.0.1:{node.port}"
        assert all(host == "127.0.0.1" for host in re.findall(r"//([^:]+):", props["listeners"]))
        assert props["offsets.topic.replication.factor"] == "3"
        assert props["x.y"] == "z"
    assert len({n.tag for n in cluster.nodes}) == 3


# ---------------------------------------------------------------- distribution


def test_pom_lists_each_pinned_artifact_at_its_pinned_version() -> None:
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    root = ET.fromstring(distribution._pom())
    deps = {
        (d.findtext("m:groupId", namespaces=ns), d.findtext("m:artifactId", namespaces=ns)): d.findtext(
            "m:version", namespaces=ns
        )
        for d in root.findall("m:dependencies/m:dependency", ns)
    }
    kafka = distribution.KAFKA_VERSION
    expected = {
        ("org.apache.kafka", f"kafka_{distribution.SCALA_VERSION}"): kafka,
        ("org.apache.kafka", "kafka-tools"): kafka,
        ("org.apache.kafka", "connect-runtime"): kafka,
        ("org.apache.kafka", "connect-json"): kafka,
        ("org.apache.kafka", "connect-mirror"): kafka,
        ("org.apache.kafka", "connect-mirror-client"): kafka,
        ("org.apache.kafka", "connect-test-plugins"): kafka,
        ("org.apache.logging.log4j", "log4j-slf4j-impl"): distribution.LOG4J_VERSION,
    }
    assert deps == expected
    assert root.findtext("m:version", namespaces=ns) == kafka


def test_java_command_bounds_heap_and_runs_from_the_jars(tmp_path: Path) -> None:
    dist = distribution.KafkaDistribution(tmp_path)
    cmd = dist.java_command("kafka.Kafka", "server.properties", heap="256m")
    assert "-Xmx256m" in cmd
    assert cmd[cmd.index("-cp") + 1] == str(tmp_path / "libs" / "*")
    assert cmd[-2:] == ["kafka.Kafka", "server.properties"]


# ---------------------------------------------------------------- PID ownership


@pytest.fixture
def child() -> Iterator[subprocess.Popen[bytes]]:
    """A harmless process of our own that carries no tag."""
    proc = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _tagged_child(tag: str, *, ignore_sigterm: bool = False) -> subprocess.Popen[bytes]:
    """A Python child whose argv carries ``tag`` as the launcher's Java processes do; it prints once ready."""
    code = "import signal, sys, time\n"
    if ignore_sigterm:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "print('ready', flush=True)\ntime.sleep(60)\n"
    proc = subprocess.Popen([sys.executable, "-c", code, f"{TAG_PROPERTY}{tag}"], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    return proc


def test_tagged_puts_the_tag_right_after_the_executable() -> None:
    assert tagged(["java", "-Xmx1g", "Main"], "t1") == ["java", f"{TAG_PROPERTY}t1", "-Xmx1g", "Main"]


def test_untagged_process_is_never_signalled(child: subprocess.Popen[bytes]) -> None:
    assert pid_alive(child.pid)
    assert not pid_has_tag(child.pid, "kafka:/some/node-1")
    assert not signal_tagged(child.pid, "kafka:/some/node-1", signal.SIGKILL)
    stop_tagged(child.pid, "kafka:/some/node-1", timeout=0.1)
    assert child.poll() is None, "stop_tagged signalled a process without the tag"


def test_tag_must_match_exactly() -> None:
    proc = _tagged_child("kafka:/x/node-1")
    try:
        assert pid_has_tag(proc.pid, "kafka:/x/node-1")
        assert not pid_has_tag(proc.pid, "kafka:/x/node-")  # a prefix is not the tag
        assert not pid_has_tag(proc.pid, "kafka:/x/node-10")
    finally:
        proc.kill()
        proc.wait(timeout=10)
        proc.stdout.close()  # type: ignore[union-attr]


def test_stop_tagged_terminates_then_escalates() -> None:
    polite, stubborn = _tagged_child("polite"), _tagged_child("stubborn", ignore_sigterm=True)
    try:
        stop_tagged(polite.pid, "polite", timeout=10)
        assert polite.wait(timeout=10) == -signal.SIGTERM
        stop_tagged(stubborn.pid, "stubborn", timeout=0.2)
        assert stubborn.wait(timeout=10) == -signal.SIGKILL
        assert not pid_alive(polite.pid) and not pid_has_tag(polite.pid, "polite")
    finally:
        for proc in (polite, stubborn):
            proc.kill()
            proc.wait(timeout=10)
            proc.stdout.close()  # type: ignore[union-attr]


@pytest.fixture
def cli_logging() -> Iterator[None]:
    """``_main`` quiets the aiokafka logger for the CLI; give the level back to the rest of the session."""
    logger = logging.getLogger("aiokafka")
    level = logger.level
    try:
        yield
    finally:
        logger.setLevel(level)


def test_down_stops_every_recorded_process_carrying_its_tag(
    tmp_path: Path, child: subprocess.Popen[bytes]
) -> None:
    procs = [_tagged_child("kafka:a/node-1"), _tagged_child("kafka:a/node-2")]
    try:
        nodes = [
            {"node_id": i + 1, "pid": p.pid, "tag": f"kafka:a/node-{i + 1}"} for i, p in enumerate(procs)
        ]
        nodes.append({"node_id": 3, "pid": child.pid, "tag": "kafka:a/node-3"})
        (tmp_path / STATE_FILE).write_text(json.dumps({"A": {"bootstrap_servers": "x", "nodes": nodes}}))
        assert sorted(down(tmp_path, timeout=10)) == sorted(p.pid for p in procs)
        assert [p.wait(timeout=10) for p in procs] == [-signal.SIGTERM, -signal.SIGTERM]
        assert child.poll() is None
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=10)
            proc.stdout.close()  # type: ignore[union-attr]


@pytest.mark.usefixtures("cli_logging")
def test_down_and_status_skip_a_recycled_pid(
    tmp_path: Path, child: subprocess.Popen[bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    state = {
        "X": {
            "bootstrap_servers": "127.0.0.1:1",
            "nodes": [{"node_id": 1, "pid": child.pid, "tag": "kafka:gone"}],
        }
    }
    (tmp_path / STATE_FILE).write_text(json.dumps(state))
    assert down(tmp_path, timeout=0.1) == []
    assert child.poll() is None
    assert _main(["status", "--dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "X: 127.0.0.1:1 running nodes []\n"


@pytest.mark.usefixtures("cli_logging")
def test_down_without_state_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["down", "--dir", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and STATE_FILE in err


# ---------------------------------------------------------------- backends


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "local"),
        ({"PYCONNECT_TEST_BOOTSTRAP_A": "h:1"}, "external"),
        ({"PYCONNECT_TEST_BOOTSTRAP_B": "h:2"}, "external"),
        ({"PYCONNECT_TEST_BOOTSTRAP_A": "h:1", "PYCONNECT_TEST_BOOTSTRAP_B": ""}, "external"),
        ({"PYCONNECT_TEST_BOOTSTRAP_A": " ", "PYCONNECT_TEST_BOOTSTRAP_B": ""}, "local"),
        ({"PYCONNECT_TEST_BOOTSTRAP_A": "h:1", "PYCONNECT_TEST_BOOTSTRAP_B": "h:2"}, "external"),
        ({"PYCONNECT_TEST_BACKEND": "testcontainers"}, "testcontainers"),
        ({"PYCONNECT_TEST_BACKEND": " External "}, "external"),
        (
            {
                "PYCONNECT_TEST_BACKEND": "local",
                "PYCONNECT_TEST_BOOTSTRAP_A": "h:1",
                "PYCONNECT_TEST_BOOTSTRAP_B": "h:2",
            },
            "local",
        ),
        (
            {
                "PYCONNECT_TEST_BACKEND": "",
                "PYCONNECT_TEST_BOOTSTRAP_A": "h:1",
                "PYCONNECT_TEST_BOOTSTRAP_B": "h:2",
            },
            "external",
        ),
    ],
)
def test_chosen_backend(clean_env: pytest.MonkeyPatch, env: dict[str, str], expected: str) -> None:
    for name, value in env.items():
        clean_env.setenv(name, value)
    assert backends.chosen_backend() == expected


@pytest.mark.parametrize("missing", ["A", "B"])
def test_external_backend_names_the_missing_variable(
    clean_env: pytest.MonkeyPatch, tmp_path: Path, missing: str
) -> None:
    clean_env.setenv("PYCONNECT_TEST_BACKEND", "external")
    present = "B" if missing == "A" else "A"
    clean_env.setenv(f"PYCONNECT_TEST_BOOTSTRAP_{present}", "127.0.0.1:9092")
    with pytest.raises(backends.BackendUnavailable, match=f"needs PYCONNECT_TEST_BOOTSTRAP_{missing}$"):
        with backends.provide_clusters(tmp_path):
            pass


def test_external_backend_hands_out_the_given_servers(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("PYCONNECT_TEST_BOOTSTRAP_A", "10.0.0.1:9092")
    clean_env.setenv("PYCONNECT_TEST_BOOTSTRAP_B", " 10.0.0.2:9092,10.0.0.3:9092 ")
    with backends.provide_clusters(tmp_path) as handles:
        assert {a: h.bootstrap_servers for a, h in handles.items()} == {
            "A": "10.0.0.1:9092",
            "B": "10.0.0.2:9092,10.0.0.3:9092",
        }
        with pytest.raises(backends.BackendUnavailable, match="external"):
            handles["A"].require_local()


def test_unknown_backend_is_refused(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("PYCONNECT_TEST_BACKEND", "docker-compose")
    with pytest.raises(backends.BackendUnavailable, match="expected local, external or testcontainers"):
        with backends.provide_clusters(tmp_path):
            pass


# ---------------------------------------------------------------- KRaft cluster id


def test_kraft_cluster_id_is_22_url_safe_base64_chars_of_16_bytes() -> None:
    ids = [_kraft_cluster_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for cluster_id in ids:
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", cluster_id), cluster_id
        assert len(base64.urlsafe_b64decode(cluster_id + "==")) == 16
        # kafka-storage format -t would parse a leading '-' as an option (Kafka's Uuid never starts so)
        assert not cluster_id.startswith("-"), cluster_id
