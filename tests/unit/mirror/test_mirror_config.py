"""MirrorMaker 2 connector config tables and typed configs against the Kafka 4.3.1 jars."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from connectors.mirror.config import (
    CHECKPOINT_CONNECTOR_CONFIG_DEF,
    MIRROR_CHECKPOINT_CONFIG_DEF,
    MIRROR_HEARTBEAT_CONFIG_DEF,
    MIRROR_SOURCE_CONFIG_DEF,
    SOURCE_TASK_CONFIG_DEF,
    MirrorCheckpointConfig,
    MirrorCheckpointTaskConfig,
    MirrorHeartbeatConfig,
    MirrorSourceConfig,
    MirrorSourceTaskConfig,
    source_connector_validation_errors,
)
from connectors.mirror.filters import DefaultConfigPropertyFilter, DefaultTopicFilter
from connectors.mirror.policy import IdentityReplicationPolicy
from pyconnect.config.client_configs import CLIENT_CONFIG_NAMES
from pyconnect.config.definition import ConfigDef
from pyconnect.config.types import convert_to_string
from pyconnect.errors import ConfigError

GOLDEN = json.loads((Path(__file__).parents[2] / "golden" / "mirror_policy" / "vectors.json").read_text())
CLIENT_CASE: dict[str, Any] = GOLDEN["client_configs"][0]
BASE = {
    "name": "mm2",
    "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
    "source.cluster.alias": "A",
    "target.cluster.alias": "B",
}


def _row(definition: ConfigDef, name: str) -> dict[str, Any]:
    key = definition[name]
    return {
        "name": name,
        "type": key.type.value,
        "has_default": key.has_default,
        "default": convert_to_string(key.default, key.type) if key.has_default else None,
        "importance": key.importance.value,
        "documentation": key.documentation,
        "validator": None if key.validator is None else str(key.validator),
        "group": key.group,
        "order_in_group": key.order_in_group,
        "width": key.width.value,
        "display_name": key.display_name,
    }


@pytest.mark.parametrize(
    ("section", "definition"),
    [
        ("source", MIRROR_SOURCE_CONFIG_DEF),
        ("checkpoint", MIRROR_CHECKPOINT_CONFIG_DEF),
        ("heartbeat", MIRROR_HEARTBEAT_CONFIG_DEF),
    ],
)
def test_tables_match_java(section: str, definition: ConfigDef) -> None:
    rows = GOLDEN["config_defs"][section]
    assert definition.names() == [row["name"] for row in rows]
    for row in rows:
        assert _row(definition, row["name"]) == row


@pytest.mark.parametrize(
    ("section", "definition"), [("source_task", SOURCE_TASK_CONFIG_DEF), ("checkpoint_task", None)]
)
def test_task_keys_match_java(section: str, definition: ConfigDef | None) -> None:
    from connectors.mirror.config import CHECKPOINT_TASK_CONFIG_DEF

    table = definition or CHECKPOINT_TASK_CONFIG_DEF
    rows = GOLDEN["config_defs"][section]
    framework = [n for n in table.names() if n not in {r["name"] for r in rows}]
    assert [n for n in table.names() if n not in framework] == [r["name"] for r in rows]
    for row in rows[-2:]:
        assert _row(table, row["name"]) == row


def test_verified_defaults() -> None:
    defaults = MIRROR_SOURCE_CONFIG_DEF.default_values()
    assert defaults["topics"] == [".*"]
    assert defaults["topics.exclude"] == ["mm2.*\\.internal", ".*\\.replica", "__.*"]
    assert defaults["config.properties.exclude"] == [
        "follower.replication.throttled.replicas",
        "leader.replication.throttled.replicas",
        "message.timestamp.difference.max.ms",
        "log.message.timestamp.before.max.ms",
        "log.message.timestamp.after.max.ms",
        "message.timestamp.type",
        "unclean.leader.election.enable",
        "min.insync.replicas",
    ]
    assert defaults["replication.factor"] == 2
    assert defaults["offset-syncs.topic.replication.factor"] == 3
    assert defaults["offset.lag.max"] == 100
    assert defaults["refresh.topics.interval.seconds"] == 600
    assert defaults["metric.names.formats"] == ["legacy"]
    assert defaults["metric.reporters"] == ["org.apache.kafka.common.metrics.JmxReporter"]
    cp = MIRROR_CHECKPOINT_CONFIG_DEF.default_values()
    assert cp["groups.exclude"] == ["console-consumer-.*", "connect-.*", "__.*"]
    assert (cp["emit.checkpoints.interval.seconds"], cp["sync.group.offsets.enabled"]) == (60, False)
    hb = MIRROR_HEARTBEAT_CONFIG_DEF.default_values()
    assert (hb["emit.heartbeats.interval.seconds"], hb["heartbeats.topic.replication.factor"]) == (1, 3)
    assert "source.cluster.alias" not in hb
    assert sorted(CLIENT_CONFIG_NAMES) == sorted(GOLDEN["config_defs"]["client_config_names"])


def test_client_configs_match_java() -> None:
    config = MirrorSourceConfig(CLIENT_CASE["props"])
    assert config.source_consumer_config() == CLIENT_CASE["sourceConsumerConfig"]
    assert config.source_admin_config() == CLIENT_CASE["sourceAdminConfig"]
    assert config.source_admin_config(None) == CLIENT_CASE["sourceAdminConfig_null_role"]
    assert config.target_admin_config() == CLIENT_CASE["targetAdminConfig"]
    assert config.source_producer_config() == CLIENT_CASE["sourceProducerConfig"]
    assert config.target_producer_config() == CLIENT_CASE["targetProducerConfig"]
    assert config.target_consumer_config() == CLIENT_CASE["targetConsumerConfig"]
    assert config.offset_syncs_topic == CLIENT_CASE["offsetSyncsTopic"]
    target = MirrorSourceConfig(
        {**CLIENT_CASE["props"], "offset-syncs.topic.location": "target", "replication.policy.separator": "_"}
    )
    assert target.offset_syncs_topic == CLIENT_CASE["offsetSyncsTopic_target_underscore"]
    assert target.checkpoints_topic == CLIENT_CASE["checkpointsTopic_underscore"]
    assert target.offset_syncs_topic_producer_config() == CLIENT_CASE["offsetSyncsTopicProducerConfig_target"]
    checkpoint = MirrorCheckpointConfig({**CLIENT_CASE["props"], "name": "mm2-cp"})
    assert (
        checkpoint.offset_syncs_topic_consumer_config()
        == CLIENT_CASE["checkpoint_offsetSyncsTopicConsumerConfig"]
    )


def test_task_configs_label_client_ids() -> None:
    task = MirrorSourceTaskConfig(
        {**CLIENT_CASE["props"], "task.index": "3", "task.assigned.partitions": "orders-0,orders-1"}
    )
    assert task.source_consumer_config() == CLIENT_CASE["task_sourceConsumerConfig"]
    assert task.task_assigned_partitions == ["orders-0", "orders-1"]
    no_index = MirrorSourceTaskConfig({**CLIENT_CASE["props"], "task.assigned.partitions": "orders-0"})
    assert no_index.source_admin_config("x") == CLIENT_CASE["task_no_index_sourceAdminConfig"]
    with pytest.raises(ConfigError, match=r"task\.assigned\.partitions"):
        MirrorSourceTaskConfig({**CLIENT_CASE["props"], "task.assigned.partitions": ""})
    groups = MirrorCheckpointTaskConfig({**BASE, "task.assigned.groups": "g1,g2", "task.index": "0"})
    assert groups.task_assigned_groups == ["g1", "g2"]
    assert groups.entity_label() == "A->B|mm2-0"


def test_source_accessors() -> None:
    config = MirrorSourceConfig(
        {
            **BASE,
            "replication.factor": "-1",
            "refresh.topics.enabled": "false",
            "sync.topic.acls.interval.seconds": "30",
            "replication.policy.class": "IdentityReplicationPolicy",
            "topics": "orders",
            "config.properties.exclude": "",
            "offset.lag.max": "0",
        }
    )
    assert config.replication_factor == -1
    assert config.replication_factor_or_none is None
    assert config.refresh_topics_interval_s is None
    assert config.sync_topic_configs_interval_s == 600.0
    assert config.sync_topic_acls_interval_s == 30.0
    assert config.offset_lag_max == 0
    assert config.consumer_poll_timeout_s == 1.0
    assert config.admin_timeout_s == 60.0
    assert config.emit_offset_syncs_enabled and config.heartbeats_replication_enabled
    assert config.offset_syncs_topic_location == "source"
    assert isinstance(config.replication_policy, IdentityReplicationPolicy)
    assert isinstance(config.topic_filter, DefaultTopicFilter)
    assert config.topic_filter.should_replicate_topic("orders")
    assert not config.topic_filter.should_replicate_topic("payments")
    assert isinstance(config.config_property_filter, DefaultConfigPropertyFilter)
    assert config.config_property_filter.should_replicate_config_property("min.insync.replicas")
    task = config.task_config(["orders-0"], 2)
    assert task["task.assigned.partitions"] == "orders-0" and task["task.index"] == "2"
    assert task["topics"] == "orders"


def test_checkpoint_and_heartbeat_accessors() -> None:
    checkpoint = MirrorCheckpointConfig(
        {**BASE, "sync.group.offsets.enabled": "true", "emit.checkpoints.interval.seconds": "5"}
    )
    assert checkpoint.sync_group_offsets_interval_s == 60.0
    assert checkpoint.emit_checkpoints_interval_s == 5.0
    assert checkpoint.refresh_groups_interval_s == 600.0
    assert checkpoint.checkpoints_topic == "A.checkpoints.internal"
    assert checkpoint.offset_syncs_topic == "mm2-offset-syncs.B.internal"
    assert checkpoint.source_admin_config()["client.id"] == "A->B|mm2|checkpoint-source-admin"
    assert checkpoint.group_filter.should_replicate_group("app")
    heartbeat = MirrorHeartbeatConfig({**BASE, "emit.heartbeats.enabled": "false"})
    assert heartbeat.emit_heartbeats_interval_s is None
    assert heartbeat.heartbeats_topic == "heartbeats"
    assert heartbeat.target_admin_config()["client.id"] == "A->B|mm2|heartbeats-target-admin"


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {k: v for k, v in BASE.items() if k != "source.cluster.alias"},
            'Missing required configuration "source.cluster.alias"',
        ),
        (
            {k: v for k, v in BASE.items() if k != "connector.class"},
            'Missing required configuration "connector.class"',
        ),
        ({**BASE, "offset-syncs.topic.location": "Source"}, "offset-syncs.topic.location"),
        ({**BASE, "metric.names.formats": ""}, "metric.names.formats"),
        ({**BASE, "offset-syncs.topic.replication.factor": "40000"}, "SHORT"),
    ],
)
def test_parse_errors(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        MirrorSourceConfig(props)


def test_target_alias_defaults_to_target() -> None:
    config = MirrorHeartbeatConfig({k: v for k, v in BASE.items() if k != "target.cluster.alias"})
    assert config.target_cluster_alias == "target"


def test_validation_rules() -> None:
    assert (
        MirrorCheckpointConfig.validate(
            {"emit.checkpoints.enabled": "false", "emit.offset-syncs.enabled": "false"}
        )
        == (CLIENT_CASE["checkpoint_validate"])
    )
    assert MirrorCheckpointConfig.validate({"enabled": "false", "emit.checkpoints.enabled": "false"}) == {}
    assert MirrorCheckpointConfig.validate({"emit.checkpoints.enabled": "FALSE"}) == {}
    assert source_connector_validation_errors(
        {"emit.offset-syncs.enabled": "false", "offset-syncs.topic.location": "target"}
    )
    assert not source_connector_validation_errors({"emit.offset-syncs.enabled": "false"})
    assert "groups" in CHECKPOINT_CONNECTOR_CONFIG_DEF and "name" in CHECKPOINT_CONNECTOR_CONFIG_DEF
