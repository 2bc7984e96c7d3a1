"""Sink-only connector checks at validation and creation (Java ``SinkConnectorConfig.validate`` and
``DistributedHerder.validateSinkConnectorGroupId``), with Java's messages. Pure.

``check_sink_config(props, validated, worker_group_id)`` adds error messages to ``validated``
(``{key: ConfigValue}``, entries created when missing): exactly one of ``topics`` / ``topics.regex``
(blank counts as unset), the dead-letter-queue topic not among the consumed topics, and (distributed
mode: ``worker_group_id`` given) the connector's consumer group not the worker group.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyconnect.config.definition import ConfigValue
from pyconnect.java_regex import JavaRegexError, compile_java_regex

TOPICS = "topics"
TOPICS_REGEX = "topics.regex"
DLQ_TOPIC = "errors.deadletterqueue.topic.name"
GROUP_OVERRIDE = "consumer.override.group.id"


def _add(validated: dict[str, ConfigValue], name: str, value: object, message: str) -> None:
    validated.setdefault(name, ConfigValue(name, value)).errors.append(message)


def parse_topics(value: str | None) -> list[str]:
    """A LIST value as Java parses it: comma separated, each trimmed, empty ones dropped."""
    return [t.strip() for t in (value or "").split(",") if t.strip()]


def check_sink_config(
    props: Mapping[str, str], validated: dict[str, ConfigValue], worker_group_id: str | None
) -> None:
    topics, regex = props.get(TOPICS), props.get(TOPICS_REGEX)
    dlq = (props.get(DLQ_TOPIC) or "").strip()
    has_topics, has_regex = bool((topics or "").strip()), bool((regex or "").strip())
    if has_topics and has_regex:
        message = f"{TOPICS} and {TOPICS_REGEX} are mutually exclusive options, but both are set."
        _add(validated, TOPICS, topics, message)
        _add(validated, TOPICS_REGEX, regex, message)
    if not has_topics and not has_regex:
        message = f"Must configure one of {TOPICS} or {TOPICS_REGEX}"
        _add(validated, TOPICS, topics, message)
        _add(validated, TOPICS_REGEX, regex, message)
    if dlq:
        listed = parse_topics(topics)
        if has_topics and dlq in listed:
            _add(
                validated,
                TOPICS,
                topics,
                f"The DLQ topic '{dlq}' may not be included in the list of topics ('{TOPICS}=[{', '.join(listed)}]') "
                "consumed by the connector",
            )
        if has_regex:
            try:
                matches = compile_java_regex(str(regex)).fullmatch(dlq) is not None
            except JavaRegexError:
                matches = False
            if matches:
                _add(
                    validated,
                    TOPICS_REGEX,
                    regex,
                    f"The DLQ topic '{dlq}' may not be matched by the regex for the topics ('{TOPICS_REGEX}={regex}') "
                    "consumed by the connector",
                )
    if worker_group_id is None:
        return
    if GROUP_OVERRIDE in props:
        group = props[GROUP_OVERRIDE]
        entry = validated.setdefault(GROUP_OVERRIDE, ConfigValue(GROUP_OVERRIDE, group))
        if group == worker_group_id:
            entry.errors.append(
                f"Consumer group {group} conflicts with Connect worker group {worker_group_id}"
            )
    else:
        name = props.get("name")
        if name is not None and worker_group_id == f"connect-{name}":
            _add(
                validated,
                "name",
                name,
                f"Consumer group for sink connector named {name} conflicts with Connect worker group {worker_group_id}",
            )
