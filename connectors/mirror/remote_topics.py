"""Remote topics created and configured with what the target accepts (beyond Java).

:func:`create_accepted` and :func:`alter_accepted` send CreateTopics / IncrementalAlterConfigs through
the connector's target admin; a topic refused for a config (:func:`connectors.mirror.topic_configs.refused_names`)
is asked for again without the configs the refusal names, in one request per round for all such
topics, until the target accepts it or refuses it for another reason. Every round drops at least one
config of every topic it asks again for, so there are at most one round more than the most configs
of one topic. Both return the final answer per topic (``None``: done) and the configs dropped.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from connectors.mirror.routed_topics import RoutedTopic, common_configs
from connectors.mirror.topic_configs import CONFIG_DRIFT, ConfigDrift, Refused, refused_names, without
from pyconnect.conditions import ConditionBoard
from pyconnect.kafka.mirror_admin import ConfigEntry, MirrorAdmin, NewTopicSpec

log = logging.getLogger(__name__)

NO_ANSWER = "no answer from the broker"

Operation = tuple[str, int, str | None]


class TopicAdmin(Protocol):
    async def create_topics(self, specs: Sequence[NewTopicSpec]) -> dict[str, str | None]: ...

    async def incremental_alter_configs(
        self, operations: Mapping[str, Sequence[Operation]]
    ) -> dict[str, str | None]: ...


async def create_accepted(
    admin: TopicAdmin, specs: Sequence[NewTopicSpec]
) -> tuple[dict[str, str | None], list[Refused]]:
    """Create ``specs``, each with the configs the target accepts (see the module docstring)."""
    results: dict[str, str | None] = {}
    dropped: list[Refused] = []
    pending = list(specs)
    for _ in range(2 + max((len(s.configs) for s in specs), default=0)):
        if not pending:
            break
        answers = await admin.create_topics(pending)
        again: list[NewTopicSpec] = []
        for spec in pending:
            error = answers.get(spec.name, NO_ANSWER)
            names = refused_names(error, spec.configs)
            if error is None or not names:
                results[spec.name] = error
                continue
            dropped += [Refused(spec.name, n, spec.configs[n], error) for n in names]
            again.append(dataclasses.replace(spec, configs=without(spec.configs, names)))
        pending = again
    return results, dropped


async def alter_accepted(
    admin: TopicAdmin, operations: Mapping[str, Sequence[Operation]]
) -> tuple[dict[str, str | None], list[Refused]]:
    """Apply ``operations`` (per topic ``[(name, OP_SET|OP_DELETE, value)]``), each topic's without
    the operations the target refuses (see the module docstring)."""
    results: dict[str, str | None] = {}
    dropped: list[Refused] = []
    pending = {topic: list(ops) for topic, ops in operations.items()}
    for _ in range(2 + max((len(ops) for ops in pending.values()), default=0)):
        if not pending:
            break
        answers = await admin.incremental_alter_configs(pending)
        again: dict[str, list[Operation]] = {}
        for topic, ops in pending.items():
            error = answers.get(topic, NO_ANSWER)
            names = refused_names(error, (name for name, _, _ in ops))
            if error is None or not names:
                results[topic] = error
                continue
            dropped += [Refused(topic, name, value, error) for name, _, value in ops if name in names]
            again[topic] = [op for op in ops if op[0] not in names]
        pending = again
    return results, dropped


class RemoteTopics:
    """A MirrorSourceConnector's creation and config sync of topics on the target, with what the
    target accepts: the dropped configs are logged once at WARN and kept as ``CONFIG_DRIFT`` conditions
    on ``board`` (:class:`~connectors.mirror.topic_configs.ConfigDrift`). ``routes`` maps a source topic
    to the routed topics only it is routed to (connectors.mirror.routed_topics), which the config sync
    keeps like its remote topic. Used on the connector's scheduler, one job at a time."""

    def __init__(
        self, connector: str, cluster: str, client: str | None, board: ConditionBoard | None
    ) -> None:
        self.connector = connector
        self.cluster = cluster
        self.drift = ConfigDrift(cluster, client, board)
        self.routes: dict[str, list[str]] = {}

    def _warn(self, dropped: list[Refused]) -> None:
        for r in dropped:
            log.warning(
                "%s: target cluster %s refuses topic config %s=%s of %s (%s); the topic goes on without it "
                "(condition %s)",
                self.connector,
                self.cluster,
                r.name,
                r.value,
                r.topic,
                r.reason,
                CONFIG_DRIFT,
            )

    async def create(
        self, admin: TopicAdmin, specs: Sequence[NewTopicSpec], what: str = "remote topic"
    ) -> dict[str, str | None]:
        """Create ``specs`` with the configs the target accepts; log each topic's outcome."""
        results, dropped = await create_accepted(admin, specs)
        self._warn(self.drift.created(dropped))
        for spec in specs:
            error = results.get(spec.name, NO_ANSWER)
            if error is None:
                log.info(
                    "%s: created %s %s with %d partitions.", self.connector, what, spec.name, spec.partitions
                )
            else:
                log.warning("%s: could not create topic %s: %s", self.connector, spec.name, error)
        return results

    async def sync(
        self, admin: TopicAdmin, operations: Mapping[str, Sequence[Operation]]
    ) -> dict[str, str | None]:
        """Apply ``operations`` (per topic on the target) without what the target refuses; the answer
        per topic, ``None`` for done. A topic done is in drift by exactly what was dropped now."""
        results, dropped = await alter_accepted(admin, operations)
        self._warn(self.drift.synced([t for t, e in results.items() if e is None], dropped))
        return results

    async def create_routed(
        self,
        source: MirrorAdmin,
        target: MirrorAdmin,
        routed: Sequence[RoutedTopic],
        counts: Mapping[str, int],
        replication_factor: int,
        accepted: Callable[[list[ConfigEntry]], dict[str, str]],
    ) -> None:
        """Create the routed topics the target lacks (the largest partition count of their source
        topics, the configs ``accepted`` keeps that they all carry alike) and grow those with fewer
        partitions than a source topic routed there; remember the one-to-one routes for the sync."""
        self.routes = {}
        for r in routed:
            if len(r.sources) == 1:
                self.routes[r.sources[0]] = [r.name]
        if not routed:
            return
        existing = await target.topic_partitions()
        wanted = {r.name: max(counts[s] for s in r.sources) for r in routed}
        missing = [r for r in routed if r.name not in existing]
        if missing:
            described = await source.describe_topic_configs(sorted({s for r in missing for s in r.sources}))
            specs = [
                NewTopicSpec(
                    r.name,
                    wanted[r.name],
                    replication_factor,
                    common_configs([accepted(described.get(s, [])) for s in r.sources]),
                )
                for r in missing
            ]
            await self.create(target, specs, "routed topic")
        grow = {n: c for n, c in wanted.items() if n in existing and len(existing[n]) < c}
        if grow:
            for topic, error in (await target.create_partitions(grow)).items():
                if error is None:
                    log.info(
                        "%s: increased size of routed topic %s to %d partitions.",
                        self.connector,
                        topic,
                        grow[topic],
                    )
                else:
                    log.warning(
                        "%s: could not create topic-partitions for %s: %s", self.connector, topic, error
                    )
