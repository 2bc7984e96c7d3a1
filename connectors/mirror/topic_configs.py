"""Which topic configs a remote topic goes without after the target refused them, and what an operator
is told about it (pure, stdlib and pyconnect.conditions only).

A target of another Kafka version refuses some configs a source topic carries: names it does not know
(``message.format.version`` from a 3.x source, which 4.x removed), values out of its range
(``segment.bytes`` below 4.x's minimum), names newer than it (``message.timestamp.after.max.ms`` on a 2.8
target). The broker answers CreateTopics and IncrementalAlterConfigs for one topic with one error, which
names the first config it refused. :func:`refused_names` reads which configs a refusal names;
the mirror then asks again without them (:mod:`connectors.mirror.remote_topics`), so the remote topic
is created with the source's partitions and every config the target accepts, and kept in sync the
same way. Java's MirrorSourceConnector fails the CreateTopics instead, and the broker auto-creates the
topic with its default partition count on the first record.

:class:`ConfigDrift` keeps what was dropped per remote topic: each dropped config is logged once at WARN
(by the caller, from what :meth:`ConfigDrift.created` and :meth:`ConfigDrift.synced` return), and each
remote topic with dropped configs carries one ``CONFIG_DRIFT`` condition on the connector's board,
subject the remote topic, listing them; a sync in which the target accepts all of a topic's configs
clears it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pyconnect.conditions import ConditionBoard

CONFIG_DRIFT = "CONFIG_DRIFT"

_NAMED = (
    re.compile(r"Unknown topic config name: (\S+)"),
    re.compile(r"Invalid value .*? for configuration ([^\s:]+)"),
)
"""The broker's wordings that name the one refused config (``LogConfig.validateNames``, ``ConfigException``)."""

_TOKEN = r"(?<![A-Za-z0-9._-]){}(?![A-Za-z0-9._-])"


def refused_names(message: str | None, sent: Iterable[str]) -> list[str]:
    """The configs among ``sent`` that the refusal ``message`` names, in ``sent``'s order.

    A wording that names one config (an unknown name, an invalid value) gives that one; otherwise every
    sent name the message holds as a whole word (``conflict topic config setting A (..) > B (..)``
    gives both). ``[]``: the message names no config that was sent, so it is no refusal of a config
    (a policy, a replication factor, an invalid topic name), and asking again without configs would
    not help."""
    if not message:
        return []
    names = list(dict.fromkeys(sent))
    for pattern in _NAMED:
        for found in pattern.finditer(message):
            if found.group(1) in names:
                return [found.group(1)]
    return [n for n in names if re.search(_TOKEN.format(re.escape(n)), message)]


@dataclass(frozen=True, slots=True)
class Refused:
    """One config the target refused for one remote topic: the value sent and the broker's reason."""

    topic: str
    name: str
    value: str | None
    reason: str


def drift_message(cluster: str, topic: str, refused: Iterable[Refused]) -> str:
    """The ``CONFIG_DRIFT`` line of one remote topic: which configs the target goes without, and why."""
    listed = "; ".join(f"{r.name}={r.value} ({r.reason})" for r in sorted(refused, key=lambda r: r.name))
    return f"target cluster {cluster} refuses topic configs of {topic}, kept in sync without them: {listed}"


class ConfigDrift:
    """The dropped configs of one connector's remote topics, mirrored on its condition board.

    ``board`` is the connector's (``None`` outside a worker: only the returned lines tell); ``cluster``
    and ``client`` name the target and its admin client in the conditions. Used on one event loop."""

    def __init__(
        self,
        cluster: str,
        client: str | None = None,
        board: ConditionBoard | None = None,
    ) -> None:
        self.cluster = cluster
        self.client = client
        self._board = board
        self._dropped: dict[str, dict[str, Refused]] = {}

    def dropped(self, topic: str) -> list[Refused]:
        return sorted(self._dropped.get(topic, {}).values(), key=lambda r: r.name)

    def created(self, refused: Iterable[Refused]) -> list[Refused]:
        """Topics were created without ``refused``: record them; return those not reported before."""
        by_topic: dict[str, list[Refused]] = {}
        for r in refused:
            by_topic.setdefault(r.topic, []).append(r)
        fresh: list[Refused] = []
        for topic, found in by_topic.items():
            fresh += self._replace(topic, [*self._dropped.get(topic, {}).values(), *found])
        return fresh

    def synced(self, topics: Iterable[str], refused: Iterable[Refused]) -> list[Refused]:
        """A config sync of ``topics`` went through, without ``refused``: that is now each one's drift
        (a topic with none refused has none); return the refused configs not reported before."""
        by_topic: dict[str, list[Refused]] = {t: [] for t in topics}
        for r in refused:
            by_topic.setdefault(r.topic, []).append(r)
        fresh: list[Refused] = []
        for topic, found in by_topic.items():
            fresh += self._replace(topic, found)
        return fresh

    def _replace(self, topic: str, found: list[Refused]) -> list[Refused]:
        before = self._dropped.get(topic, {})
        now = {r.name: r for r in found}
        fresh = [r for name, r in now.items() if name not in before or before[name].value != r.value]
        board = self._board
        if now:
            self._dropped[topic] = now
            if board is not None:
                board.set(
                    CONFIG_DRIFT,
                    drift_message(self.cluster, topic, now.values()),
                    subject=topic,
                    cluster=self.cluster,
                    client=self.client,
                )
        else:
            self._dropped.pop(topic, None)
            if board is not None:
                board.clear(CONFIG_DRIFT, topic)
        return sorted(fresh, key=lambda r: (r.topic, r.name))


def without(configs: Mapping[str, str], names: Iterable[str]) -> dict[str, str]:
    """``configs`` less ``names``."""
    gone = set(names)
    return {k: v for k, v in configs.items() if k not in gone}
