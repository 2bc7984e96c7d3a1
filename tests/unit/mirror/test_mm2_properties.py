"""Dedicated-mode model against Java's MirrorMakerConfig (golden) and from a real mm2.properties file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from connectors.mirror.config import MirrorCheckpointConfig, MirrorHeartbeatConfig, MirrorSourceConfig
from connectors.mirror.mm2_properties import MirrorMakerConfig, SourceAndTarget, load
from pyconnect.errors import ConfigError

GOLDEN = json.loads((Path(__file__).parents[2] / "golden" / "mirror_policy" / "vectors.json").read_text())
CONNECTORS = ("MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector")


def _flow(name: str) -> SourceAndTarget:
    source, target = name.split("->")
    return SourceAndTarget(source, target)


@pytest.mark.parametrize("case", GOLDEN["mm2"], ids=lambda c: c["id"])
def test_matches_java(case: dict[str, Any]) -> None:
    config = MirrorMakerConfig(case["props"])
    assert sorted(config.clusters) == case["clusters"]
    assert sorted(str(p) for p in config.cluster_pairs()) == case["pairs"]
    for name, expected in case["flows"].items():
        flow = _flow(name)
        assert config.worker_config(flow) == expected["worker"]
        for connector in CONNECTORS:
            assert config.connector_base_config(flow, connector) == expected[connector]
    for alias, expected in case["client_configs"].items():
        assert config.client_config(alias)["bootstrap.servers"] == ",".join(
            expected["admin"]["bootstrap.servers"]
        )


ADS = """\
# the ADS guide example
clusters = A, B
A.bootstrap.servers = a1:9092,a2:9092
B.bootstrap.servers = b1:9092
A->B.enabled = true
A->B.topics = .*
groups = *
replication.policy.separator = _
emit.heartbeats.interval.seconds = 5
"""


def test_ads_guide_file(tmp_path: Path) -> None:
    path = tmp_path / "mm2.properties"
    path.write_text(ADS, encoding="iso-8859-1")
    config = load(path)
    assert config.cluster_pairs() == [SourceAndTarget("A", "B"), SourceAndTarget("B", "A")]
    assert config.enabled_flows() == [SourceAndTarget("A", "B")]
    worker = config.worker_config(SourceAndTarget("A", "B"))
    assert worker["group.id"] == "A-mm2"
    assert worker["bootstrap.servers"] == "b1:9092"
    assert (
        worker["config.storage.topic"],
        worker["offset.storage.topic"],
        worker["status.storage.topic"],
    ) == (
        "mm2-configs.A.internal",
        "mm2-offsets.A.internal",
        "mm2-status.A.internal",
    )
    assert (
        worker["key.converter"]
        == worker["value.converter"]
        == worker["header.converter"]
        == ("org.apache.kafka.connect.converters.ByteArrayConverter")
    )
    assert GOLDEN["mm2"][0]["flows"]["A->B"]["worker"] == worker

    source = MirrorSourceConfig(
        config.connector_base_config(SourceAndTarget("A", "B"), "MirrorSourceConnector")
    )
    assert source.enabled and source.source_cluster_alias == "A" and source.target_cluster_alias == "B"
    assert source.replication_policy.format_remote_topic("A", "orders") == "A_orders"
    assert source.offset_syncs_topic == "mm2-offset-syncs_B_internal"
    assert source.source_consumer_config()["bootstrap.servers"] == "a1:9092,a2:9092"
    assert source.target_admin_config()["bootstrap.servers"] == "b1:9092"

    reverse = config.connector_base_config(SourceAndTarget("B", "A"), "MirrorSourceConnector")
    assert reverse["enabled"] == "false"
    heartbeat = MirrorHeartbeatConfig(
        config.connector_base_config(SourceAndTarget("B", "A"), "MirrorHeartbeatConnector")
    )
    assert heartbeat.emit_heartbeats_interval_s == 5.0

    # `groups = *` is copied verbatim (Java's checkpoint connector then fails on the dangling `*`); our
    # group filter reads a lone `*` as `.*`, so the guide's file works as written.
    checkpoint = MirrorCheckpointConfig(
        config.connector_base_config(SourceAndTarget("A", "B"), "MirrorCheckpointConnector")
    )
    assert checkpoint.group_filter.should_replicate_group("orders-app")


def test_clusters_is_required() -> None:
    with pytest.raises(ConfigError, match='Missing required configuration "clusters"'):
        MirrorMakerConfig({"A.bootstrap.servers": "a:9092"})


def test_heartbeat_only_herders_follow_kafka_10710() -> None:
    config = MirrorMakerConfig(
        {"clusters": "A, B, C", "A->B.enabled": "true", "emit.heartbeats.enabled": "false"}
    )
    assert config.cluster_pairs() == [SourceAndTarget("A", "B")]
    config = MirrorMakerConfig({"clusters": "A, B", "B->A.emit.heartbeats.enabled": "false"})
    assert config.cluster_pairs() == [SourceAndTarget("A", "B")]


def test_flow_keys_override_cluster_and_top_level() -> None:
    config = MirrorMakerConfig(
        {
            "clusters": "A,B",
            "A.bootstrap.servers": "a:1",
            "B.bootstrap.servers": "b:1",
            "topics": "x",
            "A->B.topics": "y",
            "A->B.source.cluster.bootstrap.servers": "override:1",
            "A->B.name": "custom",
        }
    )
    props = config.connector_base_config(
        SourceAndTarget("A", "B"), "org.apache.kafka.connect.mirror.MirrorSourceConnector"
    )
    assert props["topics"] == "y"
    assert props["source.cluster.bootstrap.servers"] == "override:1"
    assert props["name"] == "custom"
    assert props["connector.class"] == "org.apache.kafka.connect.mirror.MirrorSourceConnector"


def test_worker_config_resolves_providers(tmp_path: Path) -> None:
    secret = tmp_path / "secret.properties"
    secret.write_text("password=s3cret\n")
    config = MirrorMakerConfig(
        {
            "clusters": "A,B",
            "B.bootstrap.servers": "b:1",
            "B.sasl.jaas.config": f"${{file:{secret}:password}}",
            "config.providers": "file",
            "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
        }
    )
    worker = config.worker_config(SourceAndTarget("A", "B"))
    assert worker["sasl.jaas.config"] == "s3cret"
    assert worker["config.providers"] == "file"
    connector = config.connector_base_config(SourceAndTarget("A", "B"), "MirrorSourceConnector")
    assert connector["target.cluster.sasl.jaas.config"].startswith("${file:")


def test_transforms_reach_the_connector_from_flow_keys_only() -> None:
    """As Kafka 4.3.1's ``connectorBaseConfig``: a top-level ``transforms`` is carried (it is a connector
    key) but its ``transforms.<alias>.*`` keys are not; ``A->B.``-prefixed ones all are."""
    props = {
        "clusters": "A,B",
        "A.bootstrap.servers": "a:1",
        "B.bootstrap.servers": "b:1",
        "transforms": "f",
        "transforms.f.type": "Filter",
        "A->B.predicates": "p",
        "A->B.predicates.p.type": "HasHeaderKey",
    }
    source = "org.apache.kafka.connect.mirror.MirrorSourceConnector"

    def smt_keys(config: MirrorMakerConfig) -> dict[str, str]:
        base = config.connector_base_config(SourceAndTarget("A", "B"), source)
        return {k: v for k, v in base.items() if k.startswith(("transforms", "predicates"))}

    assert smt_keys(MirrorMakerConfig(props)) == {
        "transforms": "f",
        "predicates": "p",
        "predicates.p.type": "HasHeaderKey",
    }
    flow = {**props, "A->B.transforms": "g", "A->B.transforms.g.type": "RegexRouter"}
    assert smt_keys(MirrorMakerConfig(flow)) == {
        "transforms": "g",
        "transforms.g.type": "RegexRouter",
        "predicates": "p",
        "predicates.p.type": "HasHeaderKey",
    }
