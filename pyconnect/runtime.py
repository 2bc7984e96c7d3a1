"""The composition root of a distributed worker: what is built, in which order it starts and stops.

Start order (Java's, with independent steps overlapped): REST server (so ``/health`` answers
"starting"), the Kafka cluster id together with the offset store, then the status and config stores
together, worker and herder, then the herder's tick joins the group.

Stop order, the same for every composition root (distributed and standalone here, the dedicated
MirrorMaker's flows in ``mirror_maker.py``), each step run by :func:`~pyconnect.concurrency.stop_in_order`
(every step runs even when an earlier one failed or the stop was cancelled):

1. the herder: it stops all work (tasks commit their offsets, every client is closed), leaves the
   group and stops the config and status stores;
2. the offset store (after the tasks' final commits);
3. the REST server, last, so that a follower publishing task configs during shutdown cannot reopen
   the forwarding client after the server closed it (just before it, the mirror status its
   ``/metrics`` gathers, for the same reason).

``start``/``stop`` are idempotent; a failed start stops whatever was started before re-raising.
:class:`DistributedMember` is the part between the REST server and the group (cluster id, stores,
worker, herder), built the same way for a distributed worker and for each dedicated MirrorMaker flow.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from pyconnect.concurrency import stop_in_order, together
from pyconnect.config.client_configs import worker_client_config
from pyconnect.config.standalone import StandaloneConfig
from pyconnect.config.worker import WorkerConfig
from pyconnect.errors import ConnectError
from pyconnect.herder.herder import Herder, PublishTaskConfigs
from pyconnect.herder.membership import GroupMembership
from pyconnect.herder.modes import DISTRIBUTED, HerderMode
from pyconnect.herder.source_fencing import RequestFencing
from pyconnect.herder.standalone import standalone_herder
from pyconnect.herder.worker_coordinator import WorkerCoordinator
from pyconnect.kafka.clients import create_admin
from pyconnect.kafka.group_member import ConnectGroupMember
from pyconnect.kafka.topics import kafka_cluster_id
from pyconnect.metrics.connect import ConnectMetrics
from pyconnect.metrics.process import (
    EventLoopLag,
    PluginThreads,
    event_loop_samples,
    plugin_call_samples,
    process_samples,
)
from pyconnect.metrics.prometheus import PrometheusExposition
from pyconnect.metrics.registry import MetricsHub
from pyconnect.mirror_status.core import Progress, hub_progress
from pyconnect.protocol.internal_records import TargetState
from pyconnect.rest.flow_metrics import serve_flow_status
from pyconnect.rest.security import SslSettings
from pyconnect.rest.server import RestServer
from pyconnect.rest.strimzi_metrics import metrics_listeners
from pyconnect.stores.config import ConfigStore
from pyconnect.stores.file_offsets import FileOffsetStore
from pyconnect.stores.offsets import OffsetStore
from pyconnect.stores.status import StatusStore
from pyconnect.worker.plugins import PluginRegistry
from pyconnect.worker.status import RecordingReporter
from pyconnect.worker.worker import Worker, default_metrics, metrics_hub

log = logging.getLogger(__name__)


def rest_server(cfg: WorkerConfig) -> RestServer:
    """The REST server a worker config describes (listeners, advertised address, TLS, CORS, extensions);
    its herder is attached once built."""
    return RestServer(
        None,
        [str(x) for x in cfg.listeners],
        advertised_host=cfg.rest_advertised_host_name or None,
        advertised_port=cfg.rest_advertised_port or None,
        advertised_scheme=cfg.rest_advertised_listener or None,
        ssl_settings=SslSettings.from_worker_config(cfg.originals),
        allowed_origins=cfg.access_control_allow_origin or "",
        allowed_methods=cfg.access_control_allow_methods or "",
        extension_classes=[str(x) for x in cfg.rest_extension_classes or []],
    )


class WorkerMetricsEndpoint:
    """The metrics of one worker process: the hub its registries live in, the event-loop lag sampler,
    and the Prometheus exposition ``GET /metrics`` serves (Strimzi's Connect rules plus its MirrorMaker 2
    rules for the mirror tasks' ``kafka.connect.mirror`` metrics, then process and event-loop series,
    ``python_eventloop_info`` naming the loop, then the mirror flows' ``pyconnect_mirror_*`` series of
    :attr:`flow_status`, which the runtime stops before the REST server). ``start``/``stop`` run the lag
    sampler (idempotent)."""

    def __init__(self, cfg: WorkerConfig, rest: RestServer) -> None:
        self.hub: MetricsHub = metrics_hub(cfg)
        self.event_loop_lag = EventLoopLag()
        self.exposition = PrometheusExposition(
            self.hub,
            "worker",
            collectors=(process_samples, event_loop_samples, self.event_loop_lag.samples),
        )
        rest.serve_metrics(self.exposition.render)
        rest.serve_mirror_progress(self.mirror_progress)
        self.flow_status = serve_flow_status(rest)
        self.exposition.add_collector(self.flow_status.samples)
        self.listeners = metrics_listeners(cfg.originals, self.hub, self.exposition.render)
        """The metrics-only ports Strimzi scrapes (pyconnect.rest.strimzi_metrics); started by ``start_listeners``."""

    def mirror_progress(self) -> Progress:
        """The mirror tasks' metrics of this worker (``GET /mirrors``, pyconnect.mirror_status)."""
        return hub_progress([self.hub])

    def watch_plugin_calls(self, calls: PluginThreads) -> None:
        """Serve the plugin-thread series of the worker's ``PluginCalls`` (beyond Java)."""
        self.exposition.add_collector(lambda: plugin_call_samples(calls))

    def start(self) -> None:
        self.event_loop_lag.start()

    async def start_listeners(self) -> None:
        for listener in self.listeners:
            await listener.start()

    async def stop(self) -> None:
        for listener in self.listeners:
            await listener.stop()
        await self.event_loop_lag.stop()


async def fetch_kafka_cluster_id(client_config: Mapping[str, Any]) -> str:
    """The id of the Kafka cluster ``client_config`` reaches, through a short-lived admin client."""
    admin = create_admin(dict(client_config))
    await admin.start()
    try:
        return await kafka_cluster_id(admin)
    finally:
        await admin.close()


class DistributedMember:
    """One member of a distributed Connect group, built from a ``WorkerConfig``: the Kafka cluster id,
    the config, offset and status stores, the worker, the group member and the herder.

    Shared by :class:`DistributedRuntime` (one per process) and the dedicated MirrorMaker (one per
    flow). ``mode`` is the herder's mode (distributed, or a dedicated flow); ``worker_id`` names the worker
    (statuses, client ids), ``rest_url`` is what the member advertises to its group.

    ``start`` (once) looks up the Kafka cluster id, starts the offset store, builds the worker and the
    herder and starts the herder (its stores, then its group membership); it raises what the failing
    step raised. Each part is kept as soon as it exists, so ``stop`` after a failed ``start`` stops what
    was started. ``stop`` (idempotent) stops the herder (its work commits offsets, the member leaves the
    group, the config and status stores stop), then the offset store; it attempts both and raises the
    first failure.
    """

    def __init__(
        self,
        config: WorkerConfig,
        plugins: PluginRegistry,
        *,
        worker_id: str,
        rest_url: str,
        publish_task_configs: PublishTaskConfigs,
        request_fencing: RequestFencing | None = None,
        mode: HerderMode = DISTRIBUTED,
        metrics: MetricsHub | None = None,
    ) -> None:
        self.config = config
        self.metrics_hub = metrics
        self.worker_id = worker_id
        self.rest_url = rest_url
        self.kafka_cluster_id: str | None = None
        self.offset_store: OffsetStore | None = None
        self.herder: Herder | None = None
        self._metrics: ConnectMetrics | None = None
        self._plugins = plugins
        self._publish = publish_task_configs
        self._request_fencing = request_fencing
        self._mode = mode

    async def start(self) -> Herder:
        cfg = self.config
        client_config = worker_client_config(cfg)
        self.offset_store = offset_store = OffsetStore.from_worker_config(cfg)
        cluster_id, _ = await together(fetch_kafka_cluster_id(client_config), offset_store.start())
        self.kafka_cluster_id = cluster_id
        member = ConnectGroupMember(
            client_config,
            cfg.group_id,
            session_timeout_ms=cfg.session_timeout_ms,
            rebalance_timeout_ms=cfg.rebalance_timeout_ms,
            heartbeat_interval_ms=cfg.heartbeat_interval_ms,
            retry_backoff_ms=cfg.retry_backoff_ms,
            client_id=cfg.originals.get("client.id") or f"connect-{self.worker_id}",
        )
        self._metrics = default_metrics(
            self.worker_id, cfg, cluster_id, hub=self.metrics_hub, group_id=cfg.group_id
        )
        worker = Worker(
            self.worker_id,
            cfg,
            self._plugins,
            offset_store,
            RecordingReporter(),
            kafka_cluster_id=cluster_id,
            metrics=self._metrics,
        )

        def membership(herder: Herder) -> GroupMembership:
            coordinator = WorkerCoordinator(
                member,
                mode=cfg.connect_protocol,
                rest_url=self.rest_url,
                config_snapshot=herder.config_snapshot_for_assignor,
                max_delay_ms=cfg.scheduled_rebalance_max_delay_ms,
                on_revoked=herder.on_revoked,
            )
            return GroupMembership(member, coordinator)

        herder = Herder(
            cfg,
            worker=worker,
            config_store=ConfigStore.from_worker_config(cfg),
            status_store=StatusStore.from_worker_config(cfg),
            membership_factory=membership,
            rest_url=self.rest_url,
            worker_id=self.worker_id,
            kafka_cluster_id=cluster_id,
            publish_task_configs=self._publish,
            request_fencing=self._request_fencing,
            mode=self._mode,
        )
        self.herder = herder
        await herder.start()
        return herder

    async def stop(self) -> None:
        herder, self.herder = self.herder, None
        offsets, self.offset_store = self.offset_store, None
        failures = await stop_in_order(("herder", herder), ("offset store", offsets), log=None)
        metrics, self._metrics = self._metrics, None
        if metrics is not None:
            metrics.close()
        if failures:
            raise failures[0]


class DistributedRuntime:
    def __init__(self, props: Mapping[str, str], *, plugins: PluginRegistry | None = None) -> None:
        self.config = WorkerConfig(props)
        self.plugins = plugins or PluginRegistry.from_entry_points()
        cfg = self.config
        self.rest = rest_server(cfg)
        self.metrics = WorkerMetricsEndpoint(cfg, self.rest)
        self._member: DistributedMember | None = None
        self._started = False

    @property
    def rest_url(self) -> str:
        return self.rest.advertised_url

    @property
    def herder(self) -> Herder | None:
        return self._member.herder if self._member is not None else None

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        try:
            self.metrics.start()
            await self.rest.start()
            await self.metrics.start_listeners()
            worker_id = self.rest_url.split("://", 1)[-1].rstrip("/")
            self._member = DistributedMember(
                self.config,
                self.plugins,
                worker_id=worker_id,
                rest_url=self.rest_url,
                publish_task_configs=self.rest.forwarder.post_task_configs,
                request_fencing=self.rest.forwarder.put_fence,
                metrics=self.metrics.hub,
            )
            herder = await self._member.start()
            self.metrics.watch_plugin_calls(herder.worker.plugin_calls)
            self.rest.attach(herder)
            log.info(
                "Worker %s started (Kafka cluster %s, group %s)",
                worker_id,
                self._member.kafka_cluster_id,
                self.config.group_id,
            )
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        member, self._member = self._member, None
        await stop_in_order(
            ("worker", member),
            ("mirror status of /metrics", self.metrics.flow_status),
            ("REST server", self.rest),
            ("metrics", self.metrics),
            log=log,
        )


class StandaloneRuntime:
    """The composition root of a standalone worker (Java's ``ConnectStandalone``).

    Start order: REST server, the Kafka cluster id, the file offset store (offsets reloaded, so a
    restarted worker resumes), worker and herder; ``add_connector`` then creates the connectors named
    on the command line and ``mark_ready`` makes ``/health`` healthy. Stop order: herder (tasks commit
    their offsets to the file), offset store, REST server. Idempotent; a failed start stops what was
    started before re-raising.
    """

    def __init__(self, props: Mapping[str, str], *, plugins: PluginRegistry | None = None) -> None:
        self.config = StandaloneConfig(props)
        self.plugins = plugins or PluginRegistry.from_entry_points()
        cfg = self.config
        self.rest = rest_server(cfg)
        self.metrics = WorkerMetricsEndpoint(cfg, self.rest)
        self.herder: Herder | None = None
        self.offset_store: FileOffsetStore | None = None
        self._worker_metrics: ConnectMetrics | None = None
        self._started = False

    @property
    def rest_url(self) -> str:
        return self.rest.advertised_url

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        try:
            self.metrics.start()
            await self.rest.start()
            cluster_id = await fetch_kafka_cluster_id(
                {**self.config.originals, "bootstrap.servers": self.config.bootstrap_servers_string}
            )
            self.offset_store = FileOffsetStore.from_worker_config(self.config)
            await self.offset_store.start()
            worker_id = self.rest_url.split("://", 1)[-1].rstrip("/")
            self._worker_metrics = default_metrics(worker_id, self.config, cluster_id, hub=self.metrics.hub)
            worker = Worker(
                worker_id,
                self.config,
                self.plugins,
                self.offset_store,
                RecordingReporter(),
                kafka_cluster_id=cluster_id,
                metrics=self._worker_metrics,
            )
            self.herder = standalone_herder(self.config, worker=worker, kafka_cluster_id=cluster_id)
            await self.herder.start()
            self.metrics.watch_plugin_calls(worker.plugin_calls)
            self.rest.attach(self.herder)
            log.info("Standalone worker %s started (Kafka cluster %s)", worker_id, cluster_id)
        except BaseException:
            await self.stop()
            raise

    async def add_connector(
        self, name: str, config: Mapping[str, str], initial_state: TargetState | None = None
    ) -> None:
        """Create a connector from a command-line file (``allow_replace=False``, as Java); a connector
        that is refused or fails to start raises ``ConnectError`` (Java's CLI then exits with 3)."""
        if self.herder is None:
            raise RuntimeError("the standalone runtime is not started")
        await self.herder.put_connector_config(
            name, dict(config), allow_replace=False, initial_state=initial_state
        )
        state = self.herder.connector_status(name).connector
        if state.state == "FAILED":
            reason = (state.trace or "").strip().splitlines()[-1:] or ["unknown error"]
            raise ConnectError(f"Connector {name} failed to start: {reason[0]}")
        log.info("Created connector %s", name)

    def mark_ready(self) -> None:
        if self.herder is not None:
            self.herder.mark_ready()

    async def stop(self) -> None:
        herder, self.herder = self.herder, None
        offsets, self.offset_store = self.offset_store, None
        await stop_in_order(
            ("herder", herder),
            ("offset store", offsets),
            ("mirror status of /metrics", self.metrics.flow_status),
            ("REST server", self.rest),
            ("metrics", self.metrics),
            log=log,
        )
        worker_metrics, self._worker_metrics = self._worker_metrics, None
        if worker_metrics is not None:
            worker_metrics.close()
