"""Mirroring between Kafka versions, and into topics a transformation routes to (beyond Java).

- A 3.9.1 source topic carrying configs the 4.3.1 target refuses (``message.format.version``, a name
  4.0 removed; ``segment.bytes`` below 4.x's minimum): the remote topic is created with the source's
  partition count and the configs the target accepts, ``CONFIG_DRIFT`` names the dropped configs in
  the connector's RUNNING trace and in ``GET /mirrors``' flow conditions, and every record is copied.
  (4.3.1 knows every topic config 3.9.1 does but those 4.0 removed, so 4.3.1 -> 3.9.1 has nothing to
  refuse; the long matrix runs 4.3.1 -> 2.8.2, which lacks ``message.timestamp.after.max.ms``.)
- A RegexRouter renaming ``A.<topic>`` to ``copied-<topic>``: the routed topic is created with the
  source's partition count before the first record, and every record lands in its partition; a
  replacement that can only make illegal topic names is a 400 naming ``transforms.<alias>.replacement``.
- Long: the version matrix, a 2.8.2 ZooKeeper source -> 4.3.1 and 4.3.1 -> a 2.8.2 target.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.kafka import KafkaCluster
from tests.integration.fleet import fleet, python_workers, running_tasks, status, wait_for
from tests.integration.test_mirror_source import (
    create_and_fill,
    mirror_config,
    source_rows,
    topic_state,
    wait_mirrored,
)

pytestmark = pytest.mark.kafka

COUNT = 300
REFUSED_BY_4 = {"message.format.version": "2.8", "segment.bytes": "500000"}
KEPT = {"retention.ms": "86400000", "cleanup.policy": "delete"}


def handle(cluster: KafkaCluster) -> ClusterHandle:
    return ClusterHandle(cluster.alias, cluster.bootstrap_servers, cluster)


def drift_in_status(worker: Any, connector: str, refused: set[str]) -> str | None:
    """The connector's RUNNING trace once it carries CONFIG_DRIFT naming every config of ``refused``."""
    body = status(worker, connector)
    trace = (body or {}).get("connector", {}).get("trace") or ""
    ok = body and body["connector"]["state"] == "RUNNING" and trace.startswith("CONFIG_DRIFT: ")
    return trace if ok and all(f"{name}=" in trace for name in refused) else None


def drift_in_mirrors(worker: Any, remote: str) -> dict[str, Any] | None:
    code, body = worker.rest("GET", "/mirrors")
    assert code == 200, body
    for found in body["flows"]:
        for condition in found["conditions"]:
            if condition["code"] == "CONFIG_DRIFT" and condition["subject"] == remote:
                return dict(condition)
    return None


@contextmanager
def mirrored(
    source: ClusterHandle,
    target: ClusterHandle,
    workers_on: str,
    tmp_path: Path,
    unique: Callable[[str], str],
    configs: dict[str, str],
    **extra: str,
) -> Iterator[tuple[Any, str, str]]:
    """A 3-partition topic with ``configs`` and COUNT records on ``source``, a MirrorSourceConnector to
    ``target`` on one worker of ``workers_on``; yields (worker, topic, remote topic) once every
    record is copied, with the remote topic's partition count and kept configs checked."""
    topic = unique("mig")
    remote = f"A.{topic}"
    asyncio.run(create_and_fill(source.bootstrap_servers, topic, 3, COUNT, configs))
    expected = source_rows(source.bootstrap_servers, topic, COUNT)
    config = mirror_config(source, target, topic, **{"tasks.max": "1", **extra})
    with fleet(python_workers(workers_on, tmp_path, unique("mig-group"), 1)) as (worker,):
        code, body = worker.rest("POST", "/connectors", {"name": "mirror", "config": config})
        assert code == 201, body
        wait_for("1 RUNNING task", lambda: running_tasks(worker, "mirror", 1), 60)
        wait_mirrored(target.bootstrap_servers, remote, expected, 60)
        for name, value in KEPT.items():
            assert asyncio.run(topic_state(target.bootstrap_servers, remote, name)) == (3, value), name
        yield worker, topic, remote


def assert_drift(worker: Any, target: ClusterHandle, remote: str, refused: dict[str, str]) -> None:
    trace = wait_for(
        "CONFIG_DRIFT in the connector's trace", lambda: drift_in_status(worker, "mirror", set(refused)), 30
    )
    assert f"topic configs of {remote}" in trace.splitlines()[0]
    condition = wait_for("CONFIG_DRIFT in GET /mirrors", lambda: drift_in_mirrors(worker, remote), 30)
    assert (condition["severity"], condition["connector"], condition["task"]) == ("warning", "mirror", None)
    assert all(f"{name}={value}" in condition["message"] for name, value in refused.items())
    for name, value in refused.items():
        assert asyncio.run(topic_state(target.bootstrap_servers, remote, name))[1] != value, name


@pytest.fixture(scope="module")
def kafka_3_9(kafka_release: Callable[[str], KafkaCluster]) -> ClusterHandle:
    return handle(kafka_release("3.9.1"))


def test_a_3_9_topic_reaches_4_3_with_the_configs_it_accepts(
    kafka_3_9: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    with mirrored(
        kafka_3_9, cluster_b, cluster_b.bootstrap_servers, tmp_path, unique, {**REFUSED_BY_4, **KEPT}
    ) as (
        worker,
        _,
        remote,
    ):
        assert_drift(worker, cluster_b, remote, REFUSED_BY_4)


def test_a_routed_topic_is_created_like_the_remote_topic(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = unique("routed")
    routed = f"copied-{topic}"
    asyncio.run(create_and_fill(a, topic, 4, COUNT, {"retention.ms": "86400000"}))
    expected = source_rows(a, topic, COUNT)
    route = {
        "tasks.max": "2",
        "transforms": "copy",
        "transforms.copy.type": "RegexRouter",
        "transforms.copy.regex": "A\\.(.*)",
        "transforms.copy.replacement": "copied-$1",
    }
    config = mirror_config(cluster_a, cluster_b, topic, **route)
    with fleet(python_workers(b, tmp_path, unique("route-group"), 1)) as (worker,):
        code, body = worker.rest(
            "POST",
            "/connectors",
            {"name": "bad-route", "config": {**config, "transforms.copy.replacement": "copied $1"}},
        )
        assert code == 400 and "transforms.copy.replacement" in body["message"], body
        code, body = worker.rest("POST", "/connectors", {"name": "route", "config": config})
        assert code == 201, body
        wait_for("2 RUNNING tasks", lambda: running_tasks(worker, "route", 2), 60)
        wait_mirrored(b, routed, expected, 60)
        assert asyncio.run(topic_state(b, routed, "retention.ms")) == (4, "86400000")
        assert asyncio.run(topic_state(b, f"A.{topic}", None)) == (4, None)


@pytest.mark.long
@pytest.mark.parametrize("direction", ["2.8.2 -> 4.3.1", "4.3.1 -> 2.8.2"])
def test_version_matrix(
    direction: str,
    kafka_release: Callable[[str], KafkaCluster],
    cluster_a: ClusterHandle,
    cluster_b: ClusterHandle,
    unique: Callable[[str], str],
    tmp_path: Path,
) -> None:
    """2.8.2 (ZooKeeper) -> 4.3.1: a plain mirror of a 2.8 topic, ``message.format.version`` and
    ``message.downconversion.enable`` dropped. 4.3.1 -> 2.8.2 (the worker on 4.3.1, its producer
    writing to 2.8.2): ``message.timestamp.after.max.ms``, which 2.8 lacks, dropped."""
    old = handle(kafka_release("2.8.2"))
    if direction == "2.8.2 -> 4.3.1":
        refused = {"message.format.version": "2.8", "message.downconversion.enable": "false"}
        source, target, workers_on, extra = old, cluster_b, cluster_b.bootstrap_servers, {}
    else:
        refused = {"message.timestamp.after.max.ms": "3600000"}
        source, target, workers_on = cluster_a, old, cluster_a.bootstrap_servers
        extra = {"producer.override.bootstrap.servers": old.bootstrap_servers}
    with mirrored(source, target, workers_on, tmp_path, unique, {**refused, **KEPT}, **extra) as (
        worker,
        _,
        remote,
    ):
        assert_drift(worker, target, remote, refused)
