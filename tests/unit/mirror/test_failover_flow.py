"""The flow of ``pyconnect failover`` read from a connector config, a JSON file, REST and mm2.properties,
the resumable state, and the command line's one-line errors (no Kafka)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from connectors.mirror.offsets.failover_flow import (
    FlowConfigError,
    fetch_connector_config,
    flow_from_connector_config,
    flow_from_mm2,
    load_connector_file,
)
from connectors.mirror.offsets.failover_state import FailoverState, StateError
from pyconnect.cli import main

IDENTITY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
CHECKPOINT = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2" password="secret";'


def guide_checkpoint(**extra: str) -> dict[str, str]:
    """The Red Hat guide's MirrorCheckpointConnector with SASL_SSL on both sides."""
    return {
        "connector.class": CHECKPOINT,
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": "a:9093",
        "target.cluster.bootstrap.servers": "b:9093",
        "source.cluster.security.protocol": "SASL_SSL",
        "source.cluster.sasl.mechanism": "SCRAM-SHA-512",
        "source.cluster.sasl.jaas.config": JAAS,
        "source.cluster.ssl.truststore.location": "/etc/a-trust.p12",
        "target.cluster.security.protocol": "SASL_SSL",
        "target.cluster.sasl.mechanism": "SCRAM-SHA-512",
        "target.cluster.sasl.jaas.config": "${file:/etc/secrets/b.properties:jaas}",
        "target.cluster.ssl.truststore.location": "/etc/b-trust.p12",
        "target.consumer.isolation.level": "read_committed",
        "replication.policy.class": IDENTITY,
        "offset-syncs.topic.location": "target",
        "offset.lag.max": "50",
        "groups": ".*",
        **extra,
    }


def test_the_guides_flow_names_its_topics_by_its_policy_and_keeps_client_security(tmp_path: Path) -> None:
    secrets = tmp_path / "b.properties"
    secrets.write_text(f"jaas={JAAS}\n")
    config = guide_checkpoint(**{"target.cluster.sasl.jaas.config": f"${{file:{secrets}:jaas}}"})
    worker = {"config.providers": "file", "config.providers.file.class": "FileConfigProvider"}
    flow = flow_from_connector_config(config, origin="connector c", worker_config=worker)
    assert (flow.source, flow.target, flow.offset_syncs_location, flow.offset_lag_max) == (
        "A",
        "B",
        "target",
        50,
    )
    assert flow.checkpoints_topic == "A.checkpoints.internal"
    assert flow.offset_syncs_topic == "mm2-offset-syncs.A.internal"
    assert flow.policy().format_remote_topic("A", "orders") == "orders"
    assert flow.target_config["sasl.jaas.config"] == JAAS
    assert flow.target_config["security.protocol"] == "SASL_SSL"
    assert flow.source_config["sasl.mechanism"] == "SCRAM-SHA-512"
    assert "isolation.level" not in flow.target_config  # not a connectivity key


def test_custom_separators_and_the_default_policy() -> None:
    config = guide_checkpoint(
        **{
            "replication.policy.class": "DefaultReplicationPolicy",
            "replication.policy.separator": "_",
            "offset-syncs.topic.location": "source",
        }
    )
    config["target.cluster.sasl.jaas.config"] = JAAS
    flow = flow_from_connector_config(config, origin="c")
    assert flow.policy().format_remote_topic("A", "orders") == "A_orders"
    assert flow.checkpoints_topic == "A_checkpoints_internal"
    assert flow.offset_syncs_topic == "mm2-offset-syncs_B_internal"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector"},
            "not a MirrorCheckpointConnector",
        ),
        ({"source.cluster.alias": ""}, "has no source.cluster.alias"),
        ({"target.cluster.bootstrap.servers": ""}, "has no target.cluster.bootstrap.servers"),
        ({"offset-syncs.topic.location": "elsewhere"}, "invalid offset-syncs.topic.location"),
        ({"replication.policy.class": "com.example.Nope"}, "Invalid value com.example.Nope"),
        (
            {"target.cluster.sasl.jaas.config": "${file:/etc/secrets/b.properties:jaas}"},
            "target.cluster.sasl.jaas.config holds the config-provider variable ${file:/etc/secrets",
        ),
    ],
)
def test_unusable_configs_are_one_line_errors(change: dict[str, str], message: str) -> None:
    with pytest.raises(FlowConfigError) as caught:
        flow_from_connector_config(
            guide_checkpoint(**{"target.cluster.sasl.jaas.config": JAAS, **change}), origin="connector c"
        )
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_connector_files_and_mm2_properties(tmp_path: Path) -> None:
    body = tmp_path / "checkpoint.json"
    body.write_text(json.dumps({"name": "mm2-checkpoint", "config": {**guide_checkpoint(), "tasks.max": 1}}))
    name, config = load_connector_file(str(body))
    assert name == "mm2-checkpoint" and config["tasks.max"] == "1"
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(guide_checkpoint()))
    assert load_connector_file(str(bare))[1]["source.cluster.alias"] == "A"
    for bad, message in (
        ("[1]", "holds no JSON object"),
        ("{", "is not JSON"),
        ('{"config": 3}', "is not an object"),
    ):
        bare.write_text(bad)
        with pytest.raises(FlowConfigError, match=message):
            load_connector_file(str(bare))

    mm2 = tmp_path / "mm2.properties"
    mm2.write_text(
        "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true\n"
        "replication.policy.class = IdentityReplicationPolicy\nA->B.offset-syncs.topic.location = target\n"
        "B.security.protocol = SASL_SSL\n"
    )
    flow = flow_from_mm2(str(mm2), "A->B")
    assert (flow.source_config["bootstrap.servers"], flow.target_config["security.protocol"]) == (
        "a:9092",
        "SASL_SSL",
    )
    assert flow.offset_syncs_topic == "mm2-offset-syncs.A.internal"
    with pytest.raises(FlowConfigError, match="unknown cluster alias C in --flow A->C"):
        flow_from_mm2(str(mm2), "A->C")
    with pytest.raises(FlowConfigError, match="--flow expects SOURCE->TARGET"):
        flow_from_mm2(str(mm2), "A")


class _Worker(BaseHTTPRequestHandler):
    connectors: ClassVar[dict[str, dict[str, str]]] = {}

    def do_GET(self) -> None:
        if self.path == "/connectors?expand=info":
            body: Any = {n: {"info": {"name": n, "config": c}} for n, c in self.connectors.items()}
        elif self.path.startswith("/connectors/") and self.path.endswith("/config"):
            name = self.path.split("/")[2]
            if name not in self.connectors:
                self._send(404, {"error_code": 404, "message": f"Connector {name} not found"})
                return
            body = self.connectors[name]
        else:
            body = {}
        self._send(200, body)

    def _send(self, code: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def worker_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Worker)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_the_checkpoint_connector_is_found_at_the_rest_url(worker_url: str) -> None:
    _Worker.connectors = {
        "mm2-checkpoint": guide_checkpoint(),
        "mm2-source": {"connector.class": "MirrorSourceConnector"},
    }
    assert fetch_connector_config(worker_url, None, 5)[0] == "mm2-checkpoint"
    assert fetch_connector_config(worker_url + "/", "mm2-checkpoint", 5)[1]["groups"] == ".*"
    with pytest.raises(FlowConfigError, match="answered 404: Connector nope not found"):
        fetch_connector_config(worker_url, "nope", 5)
    _Worker.connectors = {"one": guide_checkpoint(), "two": guide_checkpoint()}
    with pytest.raises(FlowConfigError, match=r"runs several \(one, two\) MirrorCheckpointConnector"):
        fetch_connector_config(worker_url, None, 5)
    with pytest.raises(FlowConfigError, match="is not an http"):
        fetch_connector_config("ftp://x", None, 5)


def test_the_state_resumes_only_its_own_flow(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    flow = {"source": "A", "target": "B", "checkpoints_topic": "A.checkpoints.internal"}
    state = FailoverState.load(path, flow)
    state.plan("g", {("orders", 0): 10}, {("orders", 0): "m"})
    state.plan("g", {("orders", 0): 99}, {})
    state.advance("g", "verified")
    state.advance("g", "committed")
    state.save(path)
    again = FailoverState.load(path, flow)
    assert again.groups["g"].status == "verified" and again.groups["g"].offsets() == {("orders", 0): 10}
    assert again.pending() == []
    with pytest.raises(StateError, match="is of flow A->B"):
        FailoverState.load(path, {**flow, "source": "C"})
    path.write_text("{}")
    with pytest.raises(StateError, match="not a failover state file"):
        FailoverState.load(path, flow)


def test_failover_command_line_errors_are_one_line_with_their_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "source.json"
    source.write_text(json.dumps({"name": "s", "config": {"connector.class": "MirrorSourceConnector"}}))
    cases = [
        (["plan", "--connector-config", str(source), "--group", "g"], 2, "pyconnect: connector s in"),
        (
            ["plan", "--connector-config", str(tmp_path / "none.json"), "--group", "g"],
            2,
            "pyconnect: cannot read",
        ),
        (
            ["plan", "--config", str(tmp_path / "mm2.properties"), "--group", "g"],
            2,
            "pyconnect: --config needs --flow",
        ),
        (["plan", "--connector-config", str(source)], 2, "pyconnect: name the groups with --group"),
    ]
    for args, code, message in cases:
        assert main(["failover", *args]) == code, args
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith(message), err
    with pytest.raises(SystemExit) as usage:
        main(["failover", "execute", "--group", "g"])
    assert usage.value.code == 2
