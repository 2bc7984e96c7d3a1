"""What a sink connector's config says about its tasks: the consumer group, the subscription, the
dead-letter queue keys (Java's ``SinkConnectorConfig`` and ``SinkUtils``).

Contract (pure): :func:`consumer_group_id` is ``connect-<connector>`` (Java ``SinkUtils.consumerGroupId``),
:func:`sink_group_id` the same unless ``consumer.override.group.id`` names another; ``topics`` is a
comma list and ``topics.regex`` a Java regex matched against whole topic names, exactly one of them
(:func:`subscription`, else :class:`~pyconnect.errors.ConfigError`); :func:`flag` reads a BOOLEAN key.
The task built from them is planned in :mod:`pyconnect.worker.task_plan` and assembled in
:mod:`pyconnect.worker.task_assembly`.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyconnect.api.sink import TOPICS_CONFIG, TOPICS_REGEX_CONFIG, SinkConnector
from pyconnect.errors import ConfigError
from pyconnect.java_regex import compile_java_regex
from pyconnect.worker.plugins import PluginRegistry
from pyconnect.worker.worker_connector import java_class_name

DLQ_TOPIC = "errors.deadletterqueue.topic.name"
DLQ_REPLICATION_FACTOR = "errors.deadletterqueue.topic.replication.factor"
DLQ_REPLICATION_FACTOR_DEFAULT = 3
DLQ_CONTEXT_HEADERS = "errors.deadletterqueue.context.headers.enable"


def consumer_group_id(connector: str) -> str:
    """Java's ``SinkUtils.consumerGroupId``."""
    return f"connect-{connector}"


def sink_group_id(connector: str, connector_config: Mapping[str, str]) -> str:
    """The group a sink connector's tasks join and its offsets live in."""
    return connector_config.get("consumer.override.group.id") or consumer_group_id(connector)


def topics_list(value: str | None) -> list[str]:
    """``topics`` as Java parses a LIST: comma separated, trimmed, empty entries dropped."""
    return [t.strip() for t in (value or "").split(",") if t.strip()]


def subscription(connector_config: Mapping[str, str]) -> tuple[list[str], str | None]:
    """``(topics, None)`` or ``([], python pattern)`` from the config (validated at creation)."""
    topics = topics_list(connector_config.get(TOPICS_CONFIG))
    regex = (connector_config.get(TOPICS_REGEX_CONFIG) or "").strip()
    if topics and regex:
        raise ConfigError(
            f"{TOPICS_CONFIG} and {TOPICS_REGEX_CONFIG} are mutually exclusive options, but both are set."
        )
    if not topics and not regex:
        raise ConfigError(f"Must configure one of {TOPICS_CONFIG} or {TOPICS_REGEX_CONFIG}")
    if regex:
        return [], f"(?:{compile_java_regex(regex).pattern})\\Z"
    return topics, None


def flag(config: Mapping[str, str], key: str) -> bool:
    """A BOOLEAN connector key (``true`` in any case), false when absent."""
    return str(config.get(key, "false")).strip().lower() == "true"


def plugin_class_name(plugins: PluginRegistry, plugin: object) -> str:
    """The class name a plugin instance is registered under (its Java name for ports)."""
    for desc in plugins.plugins():
        if desc.plugin_class is type(plugin):
            return desc.class_name
    return java_class_name(type(plugin))


def is_sink(plugins: PluginRegistry, connector_config: Mapping[str, str]) -> bool:
    """Whether the connector class the config names is a sink connector (False when it cannot be resolved)."""
    try:
        connector_class = plugins.resolve_connector(connector_config["connector.class"])
    except Exception:
        return False
    return issubclass(connector_class, SinkConnector)
