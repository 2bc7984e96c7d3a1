"""Topic, group and topic-config filters (``DefaultTopicFilter``, ``DefaultGroupFilter``,
``DefaultConfigPropertyFilter`` of Kafka 4.3.1) and the factories that pick them by class name.

Semantics, as in Java:

* a list key is parsed like every Connect ``LIST`` (trim, split on commas with surrounding whitespace, so a
  regex containing a comma such as ``a{1,3}`` is split);
* the items are joined with ``|`` into one Java regex and matched against the *whole* name
  (``Matcher.matches``); Java regex syntax is translated by :mod:`pyconnect.java_regex`;
* an empty include list matches nothing, an empty exclude list excludes nothing, exclude wins;
* filters are configured with the connector's originals; unknown keys are ignored. The pre-4.0
  ``topics.blacklist``/``groups.blacklist``/``config.properties.blacklist`` aliases are gone in 4.3.1 and
  are ignored here too.

A pattern Python cannot run faithfully raises :class:`~pyconnect.errors.ConfigError` naming the key and the
pattern.

One deliberate difference: an item that is exactly ``*`` (the glob many guides write, e.g. ``groups = *``)
is read as ``.*`` with a warning. Java compiles it as a regex and fails the connector with a
``PatternSyntaxException``, so no file that works in Java changes meaning. Filters are immutable and cheap to call; results are not cached.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable

from pyconnect.config.types import Type, parse_type
from pyconnect.config.validators import ValidList
from pyconnect.errors import ConfigError
from pyconnect.java_regex import JavaRegexError, compile_java_regex

log = logging.getLogger(__name__)

TOPICS = "topics"
TOPICS_DEFAULT = ".*"
TOPICS_EXCLUDE = "topics.exclude"
TOPICS_EXCLUDE_DEFAULT = "mm2.*\\.internal, .*\\.replica, __.*"
GROUPS = "groups"
GROUPS_DEFAULT = ".*"
GROUPS_EXCLUDE = "groups.exclude"
GROUPS_EXCLUDE_DEFAULT = "console-consumer-.*, connect-.*, __.*"
CONFIG_PROPERTIES_EXCLUDE = "config.properties.exclude"
CONFIG_PROPERTIES_EXCLUDE_DEFAULT = (
    "follower.replication.throttled.replicas, leader.replication.throttled.replicas, "
    "message.timestamp.difference.max.ms, log.message.timestamp.before.max.ms, "
    "log.message.timestamp.after.max.ms, message.timestamp.type, unclean.leader.election.enable, "
    "min.insync.replicas"
)
USE_DEFAULTS_FROM = "use.defaults.from"
USE_DEFAULTS_FROM_DEFAULT = "target"
_LIST_VALIDATOR = ValidList.any_non_duplicate_values(allow_empty=True, allow_null=False)

TOPIC_FILTER_CLASS = "topic.filter.class"
GROUP_FILTER_CLASS = "group.filter.class"
CONFIG_PROPERTY_FILTER_CLASS = "config.property.filter.class"
DEFAULT_TOPIC_FILTER_CLASS = "org.apache.kafka.connect.mirror.DefaultTopicFilter"
DEFAULT_GROUP_FILTER_CLASS = "org.apache.kafka.connect.mirror.DefaultGroupFilter"
DEFAULT_CONFIG_PROPERTY_FILTER_CLASS = "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter"


@runtime_checkable
class TopicFilter(Protocol):
    def should_replicate_topic(self, topic: str) -> bool: ...


@runtime_checkable
class GroupFilter(Protocol):
    def should_replicate_group(self, group: str) -> bool: ...


@runtime_checkable
class ConfigPropertyFilter(Protocol):
    def should_replicate_config_property(self, name: str) -> bool: ...

    def should_replicate_source_default(self, name: str) -> bool:
        """Whether a source-cluster *default* value is pushed explicitly (Java's interface default: no)."""
        ...


def pattern_list(config: Mapping[str, object], key: str, default: str) -> re.Pattern[str] | None:
    """``MirrorUtils.compilePatternList`` of the LIST value of ``key``: ``None`` for an empty list.

    Duplicates are dropped and empty items rejected, as the filters' own Java ``ConfigDef`` does.
    """
    items = parse_type(key, config.get(key, default), Type.LIST)
    assert isinstance(items, list)
    items = list(dict.fromkeys(items))
    _LIST_VALIDATOR(key, items)
    if "*" in items:
        log.warning(
            "%s contains '*', which is not a regex (Java's MirrorMaker fails on it); reading it as '.*'", key
        )
        items = list(dict.fromkeys(".*" if item == "*" else item for item in items))
    if not items:
        return None
    joined = "|".join(str(item) for item in items)
    try:
        return compile_java_regex(joined)
    except JavaRegexError as exc:
        raise ConfigError(f"Invalid value {joined} for configuration {key}: {exc}") from exc


def _matches(pattern: re.Pattern[str] | None, name: str) -> bool:
    return pattern is not None and pattern.fullmatch(name) is not None


class DefaultTopicFilter:
    """``topics`` (default ``.*``) minus ``topics.exclude`` (default ``mm2.*\\.internal, .*\\.replica, __.*``)."""

    def __init__(self, config: Mapping[str, object] | None = None) -> None:
        config = config or {}
        self.include = pattern_list(config, TOPICS, TOPICS_DEFAULT)
        self.exclude = pattern_list(config, TOPICS_EXCLUDE, TOPICS_EXCLUDE_DEFAULT)

    def should_replicate_topic(self, topic: str) -> bool:
        return _matches(self.include, topic) and not _matches(self.exclude, topic)


class DefaultGroupFilter:
    """``groups`` (default ``.*``) minus ``groups.exclude`` (default ``console-consumer-.*, connect-.*, __.*``)."""

    def __init__(self, config: Mapping[str, object] | None = None) -> None:
        config = config or {}
        self.include = pattern_list(config, GROUPS, GROUPS_DEFAULT)
        self.exclude = pattern_list(config, GROUPS_EXCLUDE, GROUPS_EXCLUDE_DEFAULT)

    def should_replicate_group(self, group: str) -> bool:
        return _matches(self.include, group) and not _matches(self.exclude, group)


class DefaultConfigPropertyFilter:
    """Topic config names not matching ``config.properties.exclude``; ``use.defaults.from`` (``target`` by
    default; exactly ``source`` - case-sensitive, trimmed - pushes source defaults)."""

    def __init__(self, config: Mapping[str, object] | None = None) -> None:
        config = config or {}
        self.exclude = pattern_list(config, CONFIG_PROPERTIES_EXCLUDE, CONFIG_PROPERTIES_EXCLUDE_DEFAULT)
        raw = config.get(USE_DEFAULTS_FROM, USE_DEFAULTS_FROM_DEFAULT)
        parsed = parse_type(USE_DEFAULTS_FROM, raw, Type.STRING)
        self.use_defaults_from = USE_DEFAULTS_FROM_DEFAULT if parsed is None else str(parsed)

    def should_replicate_config_property(self, name: str) -> bool:
        return not _matches(self.exclude, name)

    def should_replicate_source_default(self, name: str) -> bool:
        return self.use_defaults_from == "source"


_REGISTRY: dict[str, dict[str, type]] = {
    TOPIC_FILTER_CLASS: {
        DEFAULT_TOPIC_FILTER_CLASS: DefaultTopicFilter,
        "DefaultTopicFilter": DefaultTopicFilter,
    },
    GROUP_FILTER_CLASS: {
        DEFAULT_GROUP_FILTER_CLASS: DefaultGroupFilter,
        "DefaultGroupFilter": DefaultGroupFilter,
    },
    CONFIG_PROPERTY_FILTER_CLASS: {
        DEFAULT_CONFIG_PROPERTY_FILTER_CLASS: DefaultConfigPropertyFilter,
        "DefaultConfigPropertyFilter": DefaultConfigPropertyFilter,
    },
}


def register_filter(key: str, name: str, cls: type) -> None:
    """Make ``cls`` (constructed with the connector originals) selectable as ``key = name``."""
    if key not in _REGISTRY:
        raise ValueError(f"Unknown filter key {key}")
    _REGISTRY[key][name] = cls


def known_filter(key: str) -> Callable[[str], bool]:
    """Whether a class name resolves for the filter key ``key`` (registered names included)."""
    return lambda name: name in _REGISTRY[key]


def _build(key: str, default: str, config: Mapping[str, object]) -> object:
    raw = config.get(key)
    name = default if raw is None else str(raw).strip()
    cls = _REGISTRY[key].get(name)
    if cls is None:
        raise ConfigError(f"Invalid value {name} for configuration {key}: Class {name} could not be found.")
    return cls(config)


def topic_filter(config: Mapping[str, object]) -> TopicFilter:
    """The ``topic.filter.class`` filter configured with ``config`` (connector originals)."""
    found = _build(TOPIC_FILTER_CLASS, DEFAULT_TOPIC_FILTER_CLASS, config)
    assert isinstance(found, TopicFilter)
    return found


def group_filter(config: Mapping[str, object]) -> GroupFilter:
    """The ``group.filter.class`` filter configured with ``config``."""
    found = _build(GROUP_FILTER_CLASS, DEFAULT_GROUP_FILTER_CLASS, config)
    assert isinstance(found, GroupFilter)
    return found


def config_property_filter(config: Mapping[str, object]) -> ConfigPropertyFilter:
    """The ``config.property.filter.class`` filter configured with ``config``."""
    found = _build(CONFIG_PROPERTY_FILTER_CLASS, DEFAULT_CONFIG_PROPERTY_FILTER_CLASS, config)
    assert isinstance(found, ConfigPropertyFilter)
    return found
