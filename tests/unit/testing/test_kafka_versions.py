"""Which Apache Kafka releases the launcher can start, and how (pyconnect.testing.kafka_versions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyconnect.testing.distribution import KAFKA_VERSION
from pyconnect.testing.kafka_versions import ReleaseDistribution, _pom, release


def test_the_pinned_release_is_kraft_from_the_pinned_distribution() -> None:
    pinned = release(KAFKA_VERSION)
    assert pinned.pinned and not pinned.zookeeper and pinned.artifacts == ()


@pytest.mark.parametrize(
    ("version", "zookeeper"), [("3.9.1", False), ("3.3.2", False), ("3.2.3", True), ("2.8.2", True)]
)
def test_releases_before_3_3_keep_their_metadata_in_zookeeper(version: str, zookeeper: bool) -> None:
    found = release(version)
    assert found.zookeeper is zookeeper
    assert ("org.apache.kafka", "kafka_2.13", version) in found.artifacts
    assert f"<version>{version}</version>" in _pom(found)


@pytest.mark.parametrize("version", ["4.0.0", "1.1.1", "3.9", "latest"])
def test_other_versions_are_refused_with_what_runs(version: str) -> None:
    with pytest.raises(ValueError, match="Kafka"):
        release(version)


def test_a_release_logs_through_its_log4j_properties(tmp_path: Path) -> None:
    command = ReleaseDistribution(tmp_path).java_command("kafka.Kafka", "server.properties")
    assert f"-Dlog4j.configuration=file:{tmp_path / 'log4j.properties'}" in command
    assert command[-2:] == ["kafka.Kafka", "server.properties"]
