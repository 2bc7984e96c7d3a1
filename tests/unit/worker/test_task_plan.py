"""The task plan (pyconnect.worker.task_plan) without Kafka and without plugins: what a source or sink
task will be, from the worker, connector and task configs."""

from __future__ import annotations

import dataclasses

import pytest

from pyconnect.config.worker import WorkerConfig
from pyconnect.errors import ConfigError
from pyconnect.kafka.target_waits import WaitBounds
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.task_plan import ErrorPolicy, plan_sink_task, plan_source_task

WORKER = {
    "bootstrap.servers": "127.0.0.1:9092",
    "group.id": "connect",
    "config.storage.topic": "c-configs",
    "offset.storage.topic": "c-offsets",
    "status.storage.topic": "c-status",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
    "producer.linger.ms": "7",
    "consumer.max.poll.records": "99",
}
TASK = ConnectorTaskId("orders", 2)
SOURCE = {"connector.class": "FileStreamSource", "tasks.max": "3", "topic": "t"}
SINK = {"connector.class": "FileStreamSink", "topics": "a, b,,", "file": "/dev/null"}


def worker(**extra: str) -> WorkerConfig:
    return WorkerConfig({**WORKER, **{k.replace("_", "."): v for k, v in extra.items()}}, environ={})


def test_an_at_least_once_source_task_gets_the_worker_producer_with_the_connector_overrides() -> None:
    config = {**SOURCE, "producer.override.compression.type": "zstd", "producer.override.unknown.key": "x"}
    plan = plan_source_task(worker(), "cluster-1", TASK, config, {"task.class": "T", "gone": None})  # type: ignore[dict-item]
    assert plan.delivery == "at-least-once" and not plan.transactional and plan.transactional_id is None
    assert plan.producer_config["client.id"] == "connector-producer-orders-2" == plan.client_id
    assert plan.producer_config["linger.ms"] == "7" and plan.producer_config["compression.type"] == "zstd"
    assert plan.producer_config["acks"] == "all"  # Java's source defaults under the worker's keys
    assert "unknown.key" in plan.dropped_producer_keys
    assert plan.cluster == "cluster 127.0.0.1:9092"
    assert dict(plan.task_config) == {"task.class": "T"}  # null values dropped
    assert plan.boundary == "poll" and plan.transaction_interval_s is None
    assert plan.metric_tags == {"connector": "orders", "task": "2"}
    assert plan.offset_flush_interval_s == 60.0 and plan.offset_flush_timeout_s == 5.0
    assert plan.stop_timeout_s == 5.0 and plan.target_bounds == WaitBounds()


def test_with_exactly_once_support_the_producer_is_transactional_at_the_connector_boundary() -> None:
    config = worker(exactly_once_source_support="enabled", offset_flush_interval_ms="3000")
    plan = plan_source_task(config, "cluster-1", TASK, {**SOURCE, "transaction.boundary": " Interval "}, {})
    assert plan.transactional and plan.delivery == "transactional"
    assert plan.transactional_id == "connect-orders-2" == plan.producer_config["transactional.id"]
    assert plan.producer_config["enable.idempotence"] == "true"
    assert (plan.boundary, plan.transaction_interval_s) == ("interval", 3.0)
    given = {**SOURCE, "transaction.boundary": "interval", "transaction.boundary.interval.ms": "250"}
    assert plan_source_task(config, "c", TASK, given, {}).transaction_interval_s == 0.25
    connector = plan_source_task(config, "c", TASK, {**SOURCE, "transaction.boundary": "connector"}, {})
    assert connector.boundary == "connector" and connector.transaction_interval_s is None
    # the boundary is a source connector's key: without exactly-once support it changes nothing
    plain = plan_source_task(worker(), "c", TASK, {**SOURCE, "transaction.boundary": "interval"}, {})
    assert plain.transaction_interval_s is None and plain.delivery == "at-least-once"


def test_an_override_the_policy_forbids_fails_the_plan() -> None:
    config = worker(connector_client_config_override_policy="None")
    with pytest.raises(
        ValueError, match=r"'None' policy does not allow any client overrides: \[.linger.ms.\]"
    ):
        plan_source_task(config, "c", TASK, {**SOURCE, "producer.override.linger.ms": "1"}, {})


def test_converters_come_from_the_connector_else_the_worker_with_their_own_settings() -> None:
    config = {
        **SOURCE,
        "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "value.converter.some.setting": "1",
    }
    key, value, header = plan_source_task(worker(), "c", TASK, config, {}).converters
    assert (key.class_name, dict(key.configs), key.is_key) == (
        "org.apache.kafka.connect.json.JsonConverter",
        {},
        True,
    )
    assert (value.class_name, dict(value.configs), value.is_key) == (
        "org.apache.kafka.connect.converters.ByteArrayConverter",
        {"some.setting": "1"},
        False,
    )
    assert header.key == "header.converter" and header.class_name.endswith("SimpleHeaderConverter")
    worker_value = plan_source_task(worker(), "c", TASK, SOURCE, {}).converters[1]
    assert dict(worker_value.configs) == {"schemas.enable": "false"}


def test_transformations_errors_and_target_bounds_come_from_the_connector() -> None:
    config = {
        **SOURCE,
        "transforms": "route",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "predicates": "p",
        "predicates.p.type": "TopicNameMatches",
        "errors.tolerance": "ALL",
        "errors.retry.timeout": "1000",
        "errors.log.enable": "true",
        "pyconnect.target.wait.max.ms": "20000",
    }
    plan = plan_source_task(worker(), "c", TASK, config, {})
    assert set(plan.transforms_config) == {
        "transforms",
        "transforms.route.type",
        "predicates",
        "predicates.p.type",
    }
    assert plan.errors == ErrorPolicy(1000, 60000, True, True, False)
    assert plan.target_bounds.wait_max_s == 20.0


def test_a_sink_task_reads_its_topics_in_its_group_with_the_allowed_consumer_overrides() -> None:
    config = {**SINK, "consumer.override.max.poll.records": "5", "consumer.override.group.id": "mine"}
    plan = plan_sink_task(worker(), "cluster-1", TASK, config, {})
    assert plan.topics == ("a", "b") and plan.pattern is None
    assert plan.consumer_config["client.id"] == "connector-consumer-orders-2"
    assert plan.consumer_config["max.poll.records"] == "5"
    assert plan.group_id == "mine" == plan.consumer_config["group.id"]
    assert plan.dead_letter is None
    regex = plan_sink_task(worker(), "c", TASK, {**SINK, "topics": "", "topics.regex": "a.*"}, {})
    assert regex.topics == () and regex.pattern is not None
    default_group = plan_sink_task(worker(), "c", TASK, SINK, {})
    assert default_group.group_id == "connect-orders"


@pytest.mark.parametrize(
    ("topics", "regex", "message"),
    [("a", "b.*", "mutually exclusive"), ("", "", "Must configure one of topics or topics.regex")],
)
def test_a_sink_subscription_needs_exactly_one_of_topics_and_regex(
    topics: str, regex: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        plan_sink_task(worker(), "c", TASK, {**SINK, "topics": topics, "topics.regex": regex}, {})


def test_a_dead_letter_queue_gets_its_own_producer_and_admin_client() -> None:
    config = {
        **SINK,
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": " dlq ",
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true",
        "producer.override.linger.ms": "2",
        "admin.override.request.timeout.ms": "999",
    }
    dead_letter = plan_sink_task(worker(), "c", TASK, config, {}).dead_letter
    assert dead_letter is not None
    assert (dead_letter.topic, dead_letter.replication_factor, dead_letter.context_headers) == (
        "dlq",
        1,
        True,
    )
    assert dead_letter.producer_config["client.id"] == "connector-dlq-producer-orders-2"
    assert dead_letter.producer_config["linger.ms"] == "2"
    assert dead_letter.admin_config["client.id"] == "connector-dlq-adminclient-orders-2"
    assert dead_letter.admin_config["request.timeout.ms"] == "999"


def test_a_plan_is_frozen_and_the_same_inputs_give_the_same_plan() -> None:
    first = plan_source_task(worker(), "c", TASK, SOURCE, {"a": "1"})
    assert first == plan_source_task(worker(), "c", TASK, SOURCE, {"a": "1"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.delivery = "transactional"  # type: ignore[misc]
    with pytest.raises(TypeError):
        first.producer_config["acks"] = "0"  # type: ignore[index]


def test_the_offsets_topic_is_the_connectors_own_or_the_workers() -> None:
    plain = plan_source_task(worker(), "c", TASK, SOURCE, {})
    assert (plain.offsets.topic, plain.offsets.own_store) == ("c-offsets", False)
    own = plan_source_task(worker(), "c", TASK, {**SOURCE, "offsets.storage.topic": " mine "}, {})
    assert (own.offsets.topic, own.offsets.own_store) == ("mine", True)
    elsewhere = {**SOURCE, "producer.override.bootstrap.servers": "10.0.0.9:9092"}
    eos = plan_source_task(worker(exactly_once_source_support="enabled"), "c", TASK, elsewhere, {})
    assert (eos.offsets.topic, eos.offsets.bootstrap_servers, eos.offsets.own_store) == (
        "c-offsets",
        "10.0.0.9:9092",
        True,
    )


BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
