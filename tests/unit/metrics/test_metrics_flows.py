"""The dedicated-mode metrics listener's pure parts: the key, and one exposition for several flows."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from connectors.mirror.metrics import MirrorSourceMetrics
from connectors.mirror.mm2_properties import MirrorMakerConfig
from pyconnect.cli import main
from pyconnect.errors import ConfigError
from pyconnect.metrics.connect import ConnectMetrics, SourceTaskMetrics, WorkerMetrics
from pyconnect.metrics.flows import FlowMetrics, FlowsExposition, with_flow
from pyconnect.metrics.prometheus import Sample
from pyconnect.metrics.registry import MetricsHub
from pyconnect.mirror_maker import MirrorMaker
from pyconnect.mirror_status.core import ConnectorView, Progress
from pyconnect.rest.metrics_listener import OTHER_NODE, dedicated_status, parse_metrics_listener


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("", None),
        ("  ", None),
        ("http://127.0.0.1:9404", ("127.0.0.1", 9404)),
        (" http://localhost:0/ ", ("localhost", 0)),
    ],
)
def test_metrics_listener_values(value: str | None, expected: tuple[str, int] | None) -> None:
    assert parse_metrics_listener(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "9404",
        "127.0.0.1:9404",
        "https://127.0.0.1:9404",
        "http://:9404",
        "http://h:99999",
        "http://h",
        "http://h:1/x",
    ],
)
def test_bad_metrics_listener_is_one_line_naming_the_key(value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_metrics_listener(value)
    message = str(caught.value)
    assert "\n" not in message
    assert message == f"Invalid value {value} for configuration metrics.listener: expected http://host:port"


def mm2(**extra: str) -> MirrorMakerConfig:
    return MirrorMakerConfig(
        {
            "clusters": "A, B",
            "A.bootstrap.servers": "a:9092",
            "B.bootstrap.servers": "b:9092",
            "A->B.enabled": "true",
            "B->A.enabled": "true",
            **extra,
        }
    )


def test_listener_is_off_by_default_and_gives_each_flow_a_hub() -> None:
    off = MirrorMaker(mm2())
    assert off.metrics_listener is None and off.hubs == {}
    on = MirrorMaker(mm2(**{"metrics.listener": "http://127.0.0.1:0"}))
    assert on.metrics_listener is not None
    assert [str(f) for f in on.hubs] == ["A->B", "B->A"]
    hubs = list(on.hubs.values())
    assert hubs[0] is not hubs[1]
    assert "metrics.listener" not in on.connector_configs[on.flows[0]]["MirrorSourceConnector"]


@pytest.fixture
def root_level() -> Iterator[None]:
    """``main`` sets the root log level; put it back for the tests that follow."""
    root = logging.getLogger()
    level = root.level
    yield
    root.setLevel(level)


@pytest.mark.usefixtures("root_level")
def test_cli_refuses_a_bad_listener_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mm2.properties"
    path.write_text(
        "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\n"
        "A->B.enabled = true\nmetrics.listener = 127.0.0.1:9404\n"
    )
    assert main(["mirror-maker", str(path), "--log-level", "ERROR"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "pyconnect: Invalid value 127.0.0.1:9404 for configuration metrics.listener: expected http://host:port"
    ]


def test_listener_that_cannot_bind_fails_start_naming_the_key() -> None:
    async def scenario() -> str:
        first = MirrorMaker(mm2(**{"metrics.listener": "http://127.0.0.1:0"}))
        assert first.metrics_listener is not None
        await first.metrics_listener.start()
        try:
            port = first.metrics_listener.bound[0][1]
            second = MirrorMaker(mm2(**{"metrics.listener": f"http://127.0.0.1:{port}"}))
            assert second.metrics_listener is not None
            with pytest.raises(Exception) as caught:
                await second.metrics_listener.start()
            return str(caught.value)
        finally:
            await first.metrics_listener.stop()

    message = asyncio.run(scenario())
    assert message.startswith("Cannot listen on metrics.listener http://127.0.0.1:")


def flow_hub(source: str, target: str, tasks: int) -> MetricsHub:
    """A hub as one flow's herder fills it: worker metrics, a source task, a MirrorSource partition."""
    hub = MetricsHub(clock=lambda: 1_700_000_000.0)
    connect = ConnectMetrics(f"{source}->{target}", hub)
    WorkerMetrics(connect, connectors=["MirrorSourceConnector"], tasks=list(range(tasks)))
    task = SourceTaskMetrics(connect, "MirrorSourceConnector", 0)
    task.record_poll(10 * tasks, 1.0)
    mirror = MirrorSourceMetrics(hub, source, target, [(f"{source}.orders", 0)])
    mirror.record_polled(f"{source}.orders", 0, [1_699_999_999_000] * (10 * tasks), 0, last_offset=9)
    mirror.record_acknowledged(f"{source}.orders", 0, 10 * tasks, last_offset=9)
    return hub


def series(text: str, name: str) -> dict[str, str]:
    return {
        line.split(" ")[0]: line.split(" ")[1] for line in text.splitlines() if line.startswith(name + "{")
    }


def test_flows_keep_their_own_series_under_source_and_target_labels() -> None:
    exposition = FlowsExposition(
        [FlowMetrics.of("A", "B", flow_hub("A", "B", 1)), FlowMetrics.of("B", "A", flow_hub("B", "A", 3))]
    )
    text = exposition.render()
    assert text.count("# TYPE kafka_connect_worker_task_count ") == 1
    assert series(text, "kafka_connect_worker_task_count") == {
        'kafka_connect_worker_task_count{source="A",target="B"}': "1.0",
        'kafka_connect_worker_task_count{source="B",target="A"}': "3.0",
    }
    assert series(text, "kafka_connect_source_task_source_record_poll_total") == {
        'kafka_connect_source_task_source_record_poll_total{connector="MirrorSourceConnector",task="0",'
        'source="A",target="B"}': "10.0",
        'kafka_connect_source_task_source_record_poll_total{connector="MirrorSourceConnector",task="0",'
        'source="B",target="A"}': "30.0",
    }
    # the mirror series carry their own source/target tags: kept, not repeated
    assert series(text, "kafka_connect_mirror_mirrorsourceconnector_record_count") == {
        'kafka_connect_mirror_mirrorsourceconnector_record_count{source="A",target="B",topic="A.orders",'
        'partition="0"}': "10.0",
        'kafka_connect_mirror_mirrorsourceconnector_record_count{source="B",target="A",topic="B.orders",'
        'partition="0"}': "30.0",
    }


def test_flow_labels_are_written_as_jmx_writes_tag_values() -> None:
    sample = Sample("x", (("connector", '"a->b"'),), 1.0)
    (labelled,) = with_flow([sample], "us-east", "eu:west")
    assert labelled.labels == (("connector", '"a->b"'), ("source", "us-east"), ("target", '"eu:west"'))


def test_tasks_on_other_nodes_make_their_flow_unknown() -> None:
    def view(name: str, source: str, worker: str) -> ConnectorView:
        config = {
            "connector.class": f"org.apache.kafka.connect.mirror.{name}",
            "source.cluster.alias": source,
            "target.cluster.alias": "B" if source == "A" else "A",
        }
        status = {
            "name": name,
            "connector": {"state": "RUNNING", "worker_id": worker},
            "tasks": [{"id": 0, "state": "RUNNING", "worker_id": worker}],
        }
        return ConnectorView(name, config, status)

    views = [
        view("MirrorSourceConnector", "A", "here/A->B"),
        view("MirrorSourceConnector", "B", "there/B->A"),
    ]
    document = dedicated_status(views, Progress(), own_workers=["here/A->B", "here/B->A"], now_ms=0)
    statuses = {f["flow"]: (f["status"], f["reasons"]) for f in document["flows"]}
    assert statuses["A->B"] == ("IN_SYNC", [])
    assert statuses["B->A"] == (
        "UNKNOWN",
        [f"worker there/B->A did not answer for its metrics: {OTHER_NODE}"],
    )
