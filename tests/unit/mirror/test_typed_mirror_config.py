"""The mirror configs' attributes come from their key tables, as the worker config's do."""

from __future__ import annotations

import pytest

from connectors.mirror.config import (
    MirrorCheckpointTaskConfig,
    MirrorHeartbeatConfig,
    MirrorSourceTaskConfig,
)

BASE = {
    "name": "mm2",
    "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
    "source.cluster.alias": "A",
}


@pytest.mark.parametrize(
    ("config_class", "extra"),
    [
        (MirrorSourceTaskConfig, {"task.assigned.partitions": "t-0", "task.index": "1"}),
        (MirrorCheckpointTaskConfig, {"task.assigned.groups": "g", "task.index": "1"}),
        (MirrorHeartbeatConfig, {}),
    ],
)
def test_every_key_of_the_table_is_an_attribute_holding_its_parsed_value(
    config_class: type[MirrorHeartbeatConfig], extra: dict[str, str]
) -> None:
    config = config_class({**BASE, **extra})
    for attribute, name in config_class.DEFINITION.attribute_names().items():
        assert getattr(config, attribute) == config.values[name]


def test_attributes_follow_the_key_names_and_unknown_ones_fail() -> None:
    config = MirrorSourceTaskConfig(
        {**BASE, "task.assigned.partitions": "t-0", "offset-syncs.topic.location": "target", "topics": "a,b"}
    )
    assert config.offset_syncs_topic_location == "target"
    assert config.emit_offset_syncs_enabled is True
    assert config.task_index is None
    config.topics.append("c")
    assert config.topics == ["a", "b"]
    with pytest.raises(AttributeError):
        _ = config.groups
    with pytest.raises(AttributeError):
        _ = MirrorHeartbeatConfig(BASE).topics
