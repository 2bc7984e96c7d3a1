"""The topics a MirrorSourceConnector's transformations route its records to (beyond Java).

A transformation that changes the topic (``RegexRouter`` renaming ``A.orders`` to ``copied-orders``, or
any other) makes the task write to a topic the connector never created: the broker auto-creates it
with its default partition count, and records of higher partitions fail. The connector learns where
each remote topic's records go by running its transformation chain over one *probe* record per
source topic (:func:`routed_topics`): what the task would write for a record of partition 0 of that
topic (the remote topic, empty bytes key and value, no headers, the current time), and creates the
routed topic like the remote topic: the source's partition count (the largest of the topics routed
there) and configs (those all of them carry alike).

Limits, for arbitrary chains: a stage that fails on the probe (one that needs a Struct value) or drops
it is taken as leaving the topic as it is, and the probe carries no content, so a router that decides
by a record's key, value or headers is seen as it routes an empty record, and one that decides by the
time (``TimestampRouter``) as it routes now: its topics of later days are left to the target's
auto-creation. The routed topics are looked at whenever the connector creates remote topics (at
start and when it finds new source partitions).

Validation (:func:`routing_errors`): a ``RegexRouter`` replacement whose literal characters cannot
make a legal topic name (ASCII letters, digits, ``.``, ``_``, ``-``; at most 249 characters; not ``.``
or ``..``) is a config error on ``transforms.<alias>.replacement``: every name it routes to would be
refused by the target. Group references (``$1``, ``${name}``) expand to parts of a topic name, which
are legal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from connectors.mirror.records import OFFSET_KEY, wrap_partition
from pyconnect.api.data import BYTES_SCHEMA, OPTIONAL_BYTES_SCHEMA
from pyconnect.api.source import SourceRecord
from pyconnect.config.javastr import invalid_value
from pyconnect.errors import ConnectError
from pyconnect.transforms.chain import TransformationChain
from pyconnect.transforms.config import TRANSFORMS, aliases, transformation_chain
from pyconnect.transforms.routers import RegexRouter
from pyconnect.worker.plugins import PluginRegistry, builtin_plugins

MAX_TOPIC_NAME = 249
_LEGAL = re.compile(r"[A-Za-z0-9._-]*")


def topic_name_problem(name: str) -> str | None:
    """Why ``name`` is no legal Kafka topic name (Java's ``Topic.validate``), or ``None``."""
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return 'Topic name cannot be "." or ".."'
    if len(name) > MAX_TOPIC_NAME:
        return (
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME} characters, topic name: {name}"
        )
    if not _LEGAL.fullmatch(name):
        return (
            f'Topic name "{name}" is illegal, it contains a character other than ASCII alphanumerics, '
            "'.', '_' and '-'"
        )
    return None


def replacement_literal(replacement: str) -> tuple[str, bool]:
    """The literal text of a Java ``Matcher`` replacement string (``\\x`` is ``x``; ``$n`` and
    ``${name}`` left out) and whether it refers to a group."""
    literal: list[str] = []
    refers = False
    i = 0
    while i < len(replacement):
        c = replacement[i]
        if c == "\\" and i + 1 < len(replacement):
            literal.append(replacement[i + 1])
            i += 2
        elif c == "$" and i + 1 < len(replacement) and replacement[i + 1] == "{":
            end = replacement.find("}", i)
            refers, i = True, (len(replacement) if end < 0 else end + 1)
        elif c == "$" and i + 1 < len(replacement) and replacement[i + 1].isdigit():
            refers = True
            i += 2
            while i < len(replacement) and replacement[i].isdigit():
                i += 1
        else:
            literal.append(c)
            i += 1
    return "".join(literal), refers


def replacement_problem(replacement: str) -> str | None:
    """Why every topic a ``RegexRouter`` with this replacement routes to is refused, or ``None``."""
    literal, refers = replacement_literal(replacement)
    if refers:
        illegal = sorted({c for c in literal if not _LEGAL.fullmatch(c)})
        if illegal:
            return (
                f"the topic names it makes contain {', '.join(repr(c) for c in illegal)}: a topic name "
                "may contain only ASCII alphanumerics, '.', '_' and '-'"
            )
        return None
    problem = topic_name_problem(literal)
    return None if problem is None else f"it routes to an illegal topic name: {problem}"


def routing_errors(props: Mapping[str, str], resolve: Callable[[str], type | None]) -> dict[str, str]:
    """Config errors of the ``RegexRouter`` stages of ``transforms`` (see the module docstring), keyed
    by ``transforms.<alias>.replacement``. ``resolve`` gives a ``transforms.<alias>.type``'s class
    (``None``: unknown, which the framework's validation reports)."""
    errors: dict[str, str] = {}
    for alias in aliases(props, TRANSFORMS):
        kind = resolve(str(props.get(f"{TRANSFORMS}.{alias}.type", "")).strip())
        replacement = props.get(f"{TRANSFORMS}.{alias}.replacement")
        if kind is None or not issubclass(kind, RegexRouter) or replacement is None:
            continue
        problem = replacement_problem(replacement)
        if problem is not None:
            key = f"{TRANSFORMS}.{alias}.replacement"
            errors[key] = str(invalid_value(key, replacement, problem))
    return errors


def builtin_transformation(name: str) -> type | None:
    """The class of a built-in transformation named ``name`` (class name or alias), else ``None``."""
    try:
        return PluginRegistry(builtin_plugins()).resolve(name).plugin_class
    except ConnectError:
        return None


def connector_transformations(props: Mapping[str, str]) -> TransformationChain:
    """The connector's ``transforms`` as its tasks build them (every installed plugin and the built-ins);
    raises :class:`~pyconnect.errors.ConnectError` as a task's start would. The caller closes it."""
    return transformation_chain(PluginRegistry.from_entry_points(), props)


def probe(source_topic: str, remote_topic: str, source_alias: str, now_ms: int) -> SourceRecord:
    """The record the mirror task would write for an empty record of partition 0 of ``source_topic``."""
    return SourceRecord(
        wrap_partition(source_topic, 0, source_alias),
        {OFFSET_KEY: 0},
        remote_topic,
        0,
        OPTIONAL_BYTES_SCHEMA,
        b"",
        BYTES_SCHEMA,
        b"",
        now_ms,
    )


def routed_topic(chain: TransformationChain, record: SourceRecord) -> str:
    """The topic ``chain`` routes ``record`` to; a stage that raises or drops it leaves it as it is."""
    for stage in chain.stages:
        try:
            transformed: Any = stage.apply(record)
        except Exception:
            continue
        if isinstance(transformed, SourceRecord):
            record = transformed
    return record.topic


@dataclass(frozen=True)
class RoutedTopic:
    """A topic the transformations route records of ``sources`` (source topics) to."""

    name: str
    sources: tuple[str, ...]


def routed_topics(
    chain: TransformationChain, remotes: Mapping[str, str], source_alias: str, now_ms: int
) -> list[RoutedTopic]:
    """The topics other than their remote topic that ``chain`` routes the source topics ``remotes``
    (source topic -> remote topic) to, each with the source topics routed there, in ``remotes`` order."""
    routed: dict[str, list[str]] = {}
    remote_names = set(remotes.values())
    for source, remote in remotes.items():
        name = routed_topic(chain, probe(source, remote, source_alias, now_ms))
        if name != remote and name not in remote_names:
            routed.setdefault(name, []).append(source)
    return [RoutedTopic(name, tuple(sources)) for name, sources in routed.items()]


def common_configs(configs: list[Mapping[str, str]]) -> dict[str, str]:
    """The configs every one of ``configs`` carries with the same value (the routed topic's configs)."""
    if not configs:
        return {}
    first, *rest = configs
    return {k: v for k, v in first.items() if all(c.get(k) == v for c in rest)}
