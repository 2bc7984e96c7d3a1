"""Dedicated MirrorMaker: the composition root of ``pyconnect mirror-maker mm2.properties [--clusters X ...]``.

Java's ``MirrorMaker`` (spec §7), one process:

- **Which herders.** Every flow of :meth:`MirrorMakerConfig.cluster_pairs` (enabled, or heartbeats on,
  KAFKA-10710) whose *target* is one of ``clusters`` (all aliases when none are given). Aliases given
  that ``clusters`` does not declare are ignored with a warning; no flow left is an error
  (``No source->target replication flows.``).
- **Each herder** is a full distributed worker bound to the target cluster: worker config
  :meth:`MirrorMakerConfig.worker_config` (``group.id=<S>-mm2``, internal topics
  ``mm2-configs/offsets/status.<S>.internal``, ``ByteArrayConverter``), connector client overrides
  always allowed (Java passes ``AllConnectorClientConfigOverridePolicy`` whatever the file says), its own
  stores, worker and group member. A herder in dedicated mode (:func:`pyconnect.herder.modes.dedicated`) keeps the three connectors
  ``MirrorSourceConnector``, ``MirrorHeartbeatConnector``, ``MirrorCheckpointConnector`` configured with
  :meth:`MirrorMakerConfig.connector_base_config` whenever it becomes leader (KAFKA-15372).
- **Internal REST (KIP-710).** With ``dedicated.mode.enable.internal.rest=true`` one
  :class:`MirrorRestServer` serves all herders under ``/<source>/<target>/``; members advertise its URL and
  followers publish task configs to their leader through it. Without it members advertise ``NOTUSED``,
  nothing listens, and a follower whose connector regenerates task configs logs Java's advice and
  retries with backoff (KAFKA-9981: such reconfigurations need a leader-side connector or the REST).
- **Errors.** Everything in the file is checked before anything starts: an invalid worker config of
  any herder raises ``ConfigError`` naming the flow. A failed start (e.g. a cluster that cannot be
  reached) stops what was started and raises ``ConnectError`` naming the herder.
- **Metrics listener** (pyconnect's, off by default). ``metrics.listener = http://host:port`` gives every
  flow's herder a metric hub of its own and serves them, with the status view, on one plain-HTTP
  server bound there (pyconnect.rest.metrics_listener); a value that is not ``http://host:port`` is a
  ``ConfigError``. It starts before the herders (``/metrics`` answers during startup) and stops last.
- **Lifecycle.** ``start`` binds the REST server first (its URL is every member's identity), then starts
  all herders concurrently, then routes REST requests to them. ``stop`` (idempotent) stops every herder
  (tasks commit offsets, members leave their groups), the offset stores, then the REST server.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from connectors.mirror.mm2_properties import MirrorMakerConfig, SourceAndTarget, load
from pyconnect.concurrency import stop_in_order
from pyconnect.config.types import Type
from pyconnect.config.worker import WorkerConfig
from pyconnect.errors import ConfigError, ConnectError
from pyconnect.herder.herder import Herder
from pyconnect.herder.modes import dedicated
from pyconnect.metrics.registry import MetricsHub
from pyconnect.rest.metrics_listener import METRICS_LISTENER_CONFIG, MetricsListener, parse_metrics_listener
from pyconnect.rest.mirror_internal import MirrorRestServer
from pyconnect.runtime import DistributedMember
from pyconnect.worker.plugins import PluginRegistry
from pyconnect.worker.worker import metrics_hub

log = logging.getLogger(__name__)

CONNECTOR_ORDER = ("MirrorSourceConnector", "MirrorHeartbeatConnector", "MirrorCheckpointConnector")
"""Java's ``MirrorMaker.CONNECTOR_CLASSES``: the order in which a new leader writes the configs."""
NOT_USED_URL = "NOTUSED"
"""The REST URL a dedicated member advertises when the internal REST server is off (as Java)."""
NO_REST_TO_LEADER = (
    "This worker is not able to communicate with the leader of the cluster, which is required for "
    "dynamically-reconfiguring connectors. If running MirrorMaker 2 in dedicated mode, consider enabling "
    "inter-worker communication via the 'dedicated.mode.enable.internal.rest' property."
)


def herder_flows(config: MirrorMakerConfig, clusters: Sequence[str] | None = None) -> list[SourceAndTarget]:
    """The flows this node runs a herder for: ``cluster_pairs`` whose target is in ``clusters`` (all when
    empty or None), in ``clusters`` declaration order. Raises ``ConfigError`` when none is left."""
    targets = set(clusters) if clusters else set(config.clusters)
    flows = [flow for flow in config.cluster_pairs() if flow.target in targets]
    if not flows:
        raise ConfigError("No source->target replication flows.")
    return flows


def flow_worker_props(config: MirrorMakerConfig, flow: SourceAndTarget) -> dict[str, str]:
    """The worker properties of ``flow``'s herder: ``worker_config`` with the ``All`` override policy."""
    props = config.worker_config(flow)
    props["connector.client.config.override.policy"] = "All"
    return props


def flow_connector_configs(config: MirrorMakerConfig, flow: SourceAndTarget) -> dict[str, dict[str, str]]:
    """The three connector configs of ``flow``, in the order a new leader writes them."""
    return {name: config.connector_base_config(flow, name) for name in CONNECTOR_ORDER}


def class_key_errors(
    connector_configs: Mapping[str, Mapping[str, str]], plugins: PluginRegistry
) -> list[str]:
    """Errors on the class-type keys of a flow's connector configs (``replication.policy.class``, the
    filters, ``forwarding.admin.class``): a class this runtime cannot load. Java's dedicated mode logs the
    failed connector and runs on without it; a typo there leaves the node replicating nothing, so the
    node refuses to start instead. Other validation errors keep Java's behaviour (the herder reports
    them when it writes the connector)."""
    errors: list[str] = []
    for name, config in connector_configs.items():
        connector = plugins.resolve_connector(config.get("connector.class", name))()
        definition = connector.config()
        for key, value in definition.validate(dict(config)).items():
            spec = definition.keys.get(key)
            if spec is not None and spec.type is Type.CLASS:
                errors += value.errors
    return list(dict.fromkeys(errors))


def dedicated_worker_id(flow: SourceAndTarget, rest_url: str | None) -> str:
    """Java 4.3.1's worker id of a dedicated herder: ``host:port/S->T`` when the internal REST server
    runs, else ``<canonical host name>/S->T/<random UUID>``."""
    if rest_url:
        authority = rest_url.split("://", 1)[-1].split("/", 1)[0]
        return f"{authority}/{flow}"
    return f"{socket.getfqdn()}/{flow}/{uuid.uuid4()}"


class MirrorMaker:
    def __init__(
        self,
        config: MirrorMakerConfig,
        clusters: Sequence[str] | None = None,
        *,
        plugins: PluginRegistry | None = None,
    ) -> None:
        """Check the whole configuration; raises ``ConfigError`` (one line) when it cannot run."""
        self.config = config
        unknown = sorted(set(clusters or ()) - set(config.clusters))
        if unknown:
            log.warning(
                "Ignoring --clusters %s: not in clusters = %s", ", ".join(unknown), ", ".join(config.clusters)
            )
        self.targets = list(dict.fromkeys(clusters)) if clusters else config.clusters
        log.info("Targeting clusters [%s]", ", ".join(self.targets))
        self.flows = herder_flows(config, clusters)
        self.worker_configs: dict[SourceAndTarget, WorkerConfig] = {}
        for flow in self.flows:
            try:
                self.worker_configs[flow] = WorkerConfig(flow_worker_props(config, flow))
            except ConnectError as exc:
                raise ConfigError(f"Invalid worker configuration for {flow}: {exc}") from None
        self.connector_configs = {flow: flow_connector_configs(config, flow) for flow in self.flows}
        self.plugins = plugins or PluginRegistry.from_entry_points()
        for flow in self.flows:
            errors = class_key_errors(self.connector_configs[flow], self.plugins)
            if errors:
                raise ConfigError(f"Invalid connector configuration for {flow}: {'; '.join(errors)}")
        self.rest = MirrorRestServer(config.raw) if config.enable_internal_rest else None
        listener = parse_metrics_listener(config.raw.get(METRICS_LISTENER_CONFIG))
        self.hubs: dict[SourceAndTarget, MetricsHub] = {}
        self.metrics_listener: MetricsListener | None = None
        if listener is not None:
            self.hubs = {flow: metrics_hub(self.worker_configs[flow]) for flow in self.flows}
            self.metrics_listener = MetricsListener(
                *listener, {(f.source, f.target): hub for f, hub in self.hubs.items()}
            )
        self._members: dict[SourceAndTarget, DistributedMember] = {}
        self._started = False

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], clusters: Sequence[str] | None = None, **kwargs: Any
    ) -> MirrorMaker:
        """Read ``mm2.properties`` (Java ``Properties`` rules) and check it, as :meth:`__init__`."""
        return cls(load(path), clusters, **kwargs)

    @property
    def herders(self) -> dict[SourceAndTarget, Herder]:
        """The herders built so far, by flow."""
        return {flow: m.herder for flow, m in self._members.items() if m.herder is not None}

    @property
    def rest_url(self) -> str | None:
        """The internal REST server's advertised URL once started; None without it."""
        return self.rest.advertised_url if self.rest is not None and self.rest.bound else None

    def describe(self) -> list[str]:
        """One line per herder: what it runs and where (logged at start)."""
        lines = []
        for flow in self.flows:
            cfg = self.worker_configs[flow]
            enabled = self.config.flow_enabled(flow)
            heartbeats = self.config.heartbeats_enabled(flow)
            lines.append(
                f"herder {flow}: group {cfg['group.id']} on {flow.target} ({cfg.bootstrap_servers_string}), "
                f"topics {cfg['config.storage.topic']}, {cfg['offset.storage.topic']}, "
                f"{cfg['status.storage.topic']}; replication {'on' if enabled else 'off'}, "
                f"heartbeats {'on' if heartbeats else 'off'}; connectors {', '.join(CONNECTOR_ORDER)}"
            )
        return lines

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        log.info("Kafka MirrorMaker starting with %d herders.", len(self.flows))
        for line in self.describe():
            log.info("%s", line)
        try:
            if self.metrics_listener is not None:
                await self.metrics_listener.start()
                log.info(
                    "Metrics listener serving /metrics, /mirrors and /mirrors/ui at %s",
                    self.metrics_listener.url,
                )
            if self.rest is not None:
                await self.rest.start()
                log.info("Internal REST server listening; advertised as %s", self.rest_url)
            else:
                log.info("Internal REST server disabled (dedicated.mode.enable.internal.rest=false)")
            plugins = self.plugins
            results = await asyncio.gather(
                *(self._start_herder(flow, plugins) for flow in self.flows), return_exceptions=True
            )
            for flow, result in zip(self.flows, results, strict=True):
                if isinstance(result, asyncio.CancelledError):
                    raise result
                if isinstance(result, Exception):
                    raise ConnectError(f"Herder {flow} could not start: {result}") from result
                if isinstance(result, BaseException):
                    raise result
            if self.rest is not None:
                self.rest.attach_herders({(f.source, f.target): h for f, h in self.herders.items()})
            if self.metrics_listener is not None:
                herders = self.herders
                self.metrics_listener.attach_herders(
                    {(f.source, f.target): h for f, h in herders.items()},
                    {(f.source, f.target): h.worker.plugin_calls for f, h in herders.items()},
                )
            log.info("Configuring connectors will happen once the worker joins the group as a leader")
            log.info("Kafka MirrorMaker started")
        except BaseException:
            await self.stop()
            raise

    async def _start_herder(self, flow: SourceAndTarget, plugins: PluginRegistry) -> None:
        rest_url = self.rest_url
        worker_id = dedicated_worker_id(flow, rest_url)
        publish = (
            self.rest.task_config_publisher(flow.source, flow.target)
            if self.rest is not None
            else _no_rest_publisher
        )
        member = DistributedMember(
            self.worker_configs[flow],
            plugins,
            worker_id=worker_id,
            rest_url=rest_url or NOT_USED_URL,
            publish_task_configs=publish,
            request_fencing=(
                self.rest.fencing_requester(flow.source, flow.target) if self.rest is not None else None
            ),
            mode=dedicated(str(flow), self.connector_configs[flow]),
            metrics=self.hubs.get(flow),
        )
        self._members[flow] = member
        await member.start()
        log.info(
            "Herder %s started as worker %s (Kafka cluster %s)", flow, worker_id, member.kafka_cluster_id
        )

    async def stop(self) -> None:
        """Stop every herder and then its offset store (flows concurrently), then the REST server: the
        stop order of ``pyconnect.runtime``, with every flow's member as its first two steps; errors
        are logged, not raised.

        Java closes the REST server first; here it goes last so that no follower publishing task configs
        during shutdown reopens the forwarding client after the server closed it.
        """
        herders = self.herders
        members, self._members = self._members, {}
        if herders:
            log.info("Kafka MirrorMaker stopping")

        async def stop_members() -> None:
            await asyncio.gather(*(_quietly(f"herder {flow}", m.stop()) for flow, m in members.items()))

        await stop_in_order(
            ("the herders", stop_members),
            ("the internal REST server", self.rest),
            ("the metrics listener", self.metrics_listener),
            log=log,
        )
        if herders:
            log.info("Kafka MirrorMaker stopped.")


async def _no_rest_publisher(
    leader_url: str, connector: str, body: bytes, headers: Mapping[str, str]
) -> None:
    raise ConnectError(NO_REST_TO_LEADER)


async def _quietly(what: str, stopping: Any) -> None:
    try:
        await stopping
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.warning("Stopping %s failed: %s", what, exc)
