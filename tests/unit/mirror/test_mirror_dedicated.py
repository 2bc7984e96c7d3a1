"""Dedicated MirrorMaker without Kafka: which herders a file gives, their worker ids and configs, the CLI's
one-line errors, and the dedicated herder's leader-side configuration (KAFKA-15372) over in-memory stores."""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pytest

from connectors.mirror.mm2_properties import MirrorMakerConfig, SourceAndTarget
from pyconnect.cli import main
from pyconnect.errors import ConfigError
from pyconnect.herder.herder import Herder
from pyconnect.herder.modes import dedicated
from pyconnect.mirror_maker import (
    CONNECTOR_ORDER,
    MirrorMaker,
    dedicated_worker_id,
    flow_connector_configs,
    flow_worker_props,
    herder_flows,
)
from pyconnect.stores import MemoryConfigStore
from tests.herder_fakes import play_round, scripted_herder, stop_herder, worker_config

T = TypeVar("T")
AB, BA = SourceAndTarget("A", "B"), SourceAndTarget("B", "A")


def mm2(**extra: str) -> MirrorMakerConfig:
    return MirrorMakerConfig(
        {
            "clusters": "A, B",
            "A.bootstrap.servers": "a:9092",
            "B.bootstrap.servers": "b:9092",
            "A->B.enabled": "true",
            **extra,
        }
    )


# ---- which herders, with what --------------------------------------------------------------------


def test_flows_follow_clusters_and_heartbeat_only_pairs() -> None:
    config = mm2()
    assert herder_flows(config) == [AB, BA]
    assert herder_flows(config, ["B"]) == [AB]
    assert herder_flows(config, ["A", "Z"]) == [BA]
    with pytest.raises(ConfigError, match=r"^No source->target replication flows\.$"):
        herder_flows(config, ["Z"])
    with pytest.raises(ConfigError, match="No source->target"):
        herder_flows(mm2(**{"emit.heartbeats.enabled": "false", "A->B.enabled": "false"}))


def test_worker_props_force_the_all_override_policy() -> None:
    props = flow_worker_props(mm2(**{"B.connector.client.config.override.policy": "None"}), AB)
    assert props["connector.client.config.override.policy"] == "All"
    assert (props["group.id"], props["config.storage.topic"], props["client.id"]) == (
        "A-mm2",
        "mm2-configs.A.internal",
        "A->B",
    )
    assert props["bootstrap.servers"] == "b:9092"


def test_connector_configs_in_java_order() -> None:
    config = mm2()
    configs = flow_connector_configs(config, AB)
    assert list(configs) == ["MirrorSourceConnector", "MirrorHeartbeatConnector", "MirrorCheckpointConnector"]
    assert configs == {name: config.connector_base_config(AB, name) for name in CONNECTOR_ORDER}
    assert flow_connector_configs(config, BA)["MirrorSourceConnector"]["enabled"] == "false"


def test_worker_ids_as_java_4_3_1() -> None:
    assert dedicated_worker_id(AB, "http://127.0.0.1:8083/") == "127.0.0.1:8083/A->B"
    assert dedicated_worker_id(AB, "https://mm2.example:9443/") == "mm2.example:9443/A->B"
    without = dedicated_worker_id(BA, None)
    host, flow, random = without.split("/")
    assert (host, flow) == (socket.getfqdn(), "B->A")
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", random)
    assert dedicated_worker_id(BA, None) != without


def test_mirror_maker_checks_every_herder_before_starting() -> None:
    maker = MirrorMaker(mm2(), ["B"])
    assert maker.flows == [AB] and maker.rest is None and maker.rest_url is None
    assert maker.describe() == [
        "herder A->B: group A-mm2 on B (b:9092), topics mm2-configs.A.internal, mm2-offsets.A.internal, "
        "mm2-status.A.internal; replication on, heartbeats on; connectors MirrorSourceConnector, "
        "MirrorHeartbeatConnector, MirrorCheckpointConnector"
    ]
    with pytest.raises(ConfigError, match=r"^Invalid worker configuration for B->A: .*session.timeout.ms"):
        MirrorMaker(mm2(**{"A.session.timeout.ms": "soon"}))
    with pytest.raises(
        ConfigError,
        match=re.escape(
            'Invalid worker configuration for A->B: Missing required configuration "bootstrap.servers"'
        ),
    ):
        MirrorMaker(MirrorMakerConfig({"clusters": "A, B", "A.bootstrap.servers": "a:9092"}), ["B"])


def test_internal_rest_settings_are_checked() -> None:
    maker = MirrorMaker(
        mm2(**{"dedicated.mode.enable.internal.rest": "true", "listeners": "http://127.0.0.1:0"})
    )
    assert maker.rest is not None and maker.rest_url is None  # not bound yet
    with pytest.raises(ConfigError, match="listeners"):
        MirrorMaker(mm2(**{"dedicated.mode.enable.internal.rest": "true", "listeners": "ftp://x:1"}))
    with pytest.raises(ConfigError, match=r"rest\.advertised\.port"):
        MirrorMaker(mm2(**{"dedicated.mode.enable.internal.rest": "true", "rest.advertised.port": "x"}))
    # Without the internal REST server its keys are not read at all, as in Java.
    assert MirrorMaker(mm2(**{"listeners": "ftp://x:1"})).rest is None


@pytest.fixture
def root_level() -> Iterator[None]:
    """``main`` sets the root log level; put it back for the tests that follow."""
    root = logging.getLogger()
    level = root.level
    yield
    root.setLevel(level)


@pytest.mark.usefixtures("root_level")
@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        ("A.bootstrap.servers = a:9092\n", [], 'Missing required configuration "clusters"'),
        (
            "clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\n",
            ["--clusters", "Z"],
            "No source->target replication flows.",
        ),
        ("clusters = A\n", [], "No source->target replication flows."),
        ("clusters = A, B\nA.bootstrap.servers = a:1\n", [], "Invalid worker configuration for A->B"),
        (
            "clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\n"
            "dedicated.mode.enable.internal.rest = true\nlisteners = http://127.0.0.1:notaport\n",
            [],
            "Invalid value http://127.0.0.1:notaport for configuration listeners",
        ),
        (
            "clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\n"
            "replication.policy.class = org.apache.kafka.connect.mirror.DefaultReplicatonPolicy\n",
            [],
            "Invalid connector configuration for A->B: Invalid value "
            "org.apache.kafka.connect.mirror.DefaultReplicatonPolicy for configuration replication.policy.class: "
            "Class org.apache.kafka.connect.mirror.DefaultReplicatonPolicy could not be found.",
        ),
        (
            "clusters = A, B\nA.bootstrap.servers = a:1\nB.bootstrap.servers = b:1\n"
            "B->A.group.filter.class = com.example.Groups\n",
            [],
            "Invalid connector configuration for B->A: Invalid value com.example.Groups for configuration "
            "group.filter.class: Class com.example.Groups could not be found.",
        ),
    ],
)
def test_cli_rejects_bad_files_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, args: list[str], message: str
) -> None:
    path = tmp_path / "mm2.properties"
    path.write_text(text)
    assert main(["mirror-maker", str(path), *args, "--log-level", "ERROR"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pyconnect: ") and message in err[0], err


@pytest.mark.usefixtures("root_level")
def test_cli_rejects_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mirror-maker", str(tmp_path / "absent.properties"), "--log-level", "ERROR"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "absent.properties" in err[0]


@pytest.mark.usefixtures("root_level")
def test_cli_start_failure_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A valid file whose clusters cannot be reached (nothing listens on port 1): Java's exit code 3."""
    path = tmp_path / "mm2.properties"
    path.write_text("clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\n")
    assert main(["mirror-maker", str(path), "--clusters", "B", "--log-level", "CRITICAL"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pyconnect: Failed to start MirrorMaker: Herder A->B"), err


# ---- MirrorHerder: the leader keeps the connector configs ----------------------------------------


class CountingHerder(Herder):
    """The real herder of a dedicated flow, counting the connector config writes it attempts."""

    writes: list[str]

    async def put_connector_config(self, name: str, config: Mapping[str, str], **kwargs: Any) -> Any:
        self.writes.append(name)
        return await super().put_connector_config(name, config, **kwargs)


async def mirror_herder(
    configs: MemoryConfigStore, desired: Mapping[str, Mapping[str, str]]
) -> CountingHerder:
    herder = await scripted_herder(
        worker_config(**{"worker.unsync.backoff.ms": "10"}),
        configs=configs,
        mode=dedicated("A->B", desired),
        worker_id="127.0.0.1:1/A->B",
        herder_type=CountingHerder,
    )
    herder.writes = []
    return herder


async def test_a_new_leader_writes_missing_configs_in_java_order(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "pyconnect.herder")
    desired = flow_connector_configs(mm2(), AB)
    herder = await mirror_herder(MemoryConfigStore(), desired)
    try:
        await play_round(herder, leader=True)
        assert herder.writes == list(CONNECTOR_ORDER)
        snapshot = herder.config_store.snapshot()
        for name, config in desired.items():
            assert dict(snapshot.connector_config(name) or {}) == config
        assert "This node 127.0.0.1:1/A->B is now a leader for A->B. Configuring connectors..." in caplog.text
        assert "MirrorCheckpointConnector connector configured for A->B." in caplog.text

        # Staying leader: nothing more. Losing and regaining leadership: checked again, all up to date.
        await play_round(herder, leader=True)
        await play_round(herder, leader=False)
        offset = herder.config_store.offset
        await play_round(herder, leader=True)
        assert herder.writes == list(CONNECTOR_ORDER)
        assert herder.config_store.offset == offset
        assert "configuration for MirrorSourceConnector is already up to date." in caplog.text
    finally:
        await stop_herder(herder)


async def test_a_changed_file_is_applied_by_the_next_leader_only() -> None:
    """KAFKA-15372: after a restart with a changed mm2.properties, the leader rewrites what differs."""
    store = MemoryConfigStore()
    first = await mirror_herder(store, flow_connector_configs(mm2(), AB))
    try:
        await play_round(first, leader=True)
        # Someone else's write to one connector (e.g. an older file's leader): only that one differs.
        stale = {**flow_connector_configs(mm2(), AB)["MirrorCheckpointConnector"], "groups": "old-.*"}
        await store.put_connector_config("MirrorCheckpointConnector", stale, None)
    finally:
        await stop_herder(first)
    follower = await mirror_herder(MemoryConfigStore(store.topic), flow_connector_configs(mm2(), AB))
    try:
        await play_round(follower, leader=False)
        await play_round(follower, leader=True, revoked=True)  # not a successful round: rejoin first
        assert follower.writes == []
        await play_round(follower, leader=True)
        assert follower.writes == ["MirrorCheckpointConnector"]
        checkpoint = follower.config_store.snapshot().connector_config("MirrorCheckpointConnector") or {}
        assert "groups" not in checkpoint
    finally:
        await stop_herder(follower)

    # A changed file: flow keys (``A->B.*``) and top-level connector keys belong to all three configs.
    changed = flow_connector_configs(mm2(**{"A->B.emit.checkpoints.interval.seconds": "5"}), AB)
    restarted = await mirror_herder(MemoryConfigStore(store.topic), changed)
    try:
        await play_round(restarted, leader=True)
        assert restarted.writes == list(CONNECTOR_ORDER)
        for name in CONNECTOR_ORDER:
            config = restarted.config_store.snapshot().connector_config(name) or {}
            assert config["emit.checkpoints.interval.seconds"] == "5"
    finally:
        await stop_herder(restarted)


async def test_an_invalid_config_is_logged_and_the_others_still_written(
    caplog: pytest.LogCaptureFixture,
) -> None:
    desired = flow_connector_configs(mm2(**{"A->B.tasks.max": "many"}), AB)
    herder = await mirror_herder(MemoryConfigStore(), desired)
    try:
        await play_round(herder, leader=True)
        assert herder.writes == list(CONNECTOR_ORDER)
        assert herder.config_store.snapshot().connectors() == []
        assert "Failed to configure MirrorSourceConnector connector for A->B" in caplog.text
        assert "tasks.max" in caplog.text
    finally:
        await stop_herder(herder)


# ---- the launcher --------------------------------------------------------------------------------


def test_launcher_renders_the_file_and_the_command(tmp_path: Path) -> None:
    from pyconnect.testing.mirror_maker_process import PyconnectMirrorMaker

    node = PyconnectMirrorMaker({"clusters": "A, B", "A->B.enabled": "true"}, tmp_path / "n", clusters=["B"])
    assert node.config_file == (tmp_path / "n" / "mm2.properties").resolve()
    command = node.command()
    assert command[1:5] == ["-m", "pyconnect.cli", "mirror-maker", str(node.config_file)]
    assert command[-2:] == ["--clusters", "B"] and node.tag in command
    shared = PyconnectMirrorMaker(tmp_path / "shared.properties", tmp_path / "m")
    assert (
        shared.config_file == (tmp_path / "shared.properties").resolve()
        and "--clusters" not in shared.command()
    )
    assert shared.internal_rest_url is None and not shared.running
