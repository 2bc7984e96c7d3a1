"""The composition root of a distributed worker: what is built, in which order it starts and stops.

Start order (Java's): REST server (so ``/health`` answers "starting"), the Kafka cluster id, the
stores, worker and herder, then the herder's tick joins the group. Stop order is the reverse:
herder (stops all work, committing offsets, leaves the group, stops stores), REST server.
``start``/``stop`` are idempotent; a failed start stops whatever was started before re-raising.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from pyconnect.config.worker import WorkerConfig
from pyconnect.errors import ConnectError
from pyconnect.herder.herder import DistributedHerder
from pyconnect.herder.standalone import StandaloneConfig, StandaloneHerder, StandaloneStatus
from pyconnect.herder.worker_coordinator import WorkerCoordinator
from pyconnect.kafka.clients import create_admin
from pyconnect.kafka.group_member import ConnectGroupMember
from pyconnect.kafka.topics import kafka_cluster_id
from pyconnect.protocol.internal_records import TargetState
from pyconnect.rest.security import SslSettings
from pyconnect.rest.server import RestServer
from pyconnect.stores.config import ConfigStore
from pyconnect.stores.file_offsets import FileOffsetStore
from pyconnect.stores.offsets import OffsetStore
from pyconnect.stores.status import StatusStore
from pyconnect.worker.plugins import PluginRegistry
from pyconnect.worker.worker import Worker

log = logging.getLogger(__name__)


def rest_server(cfg: Any) -> RestServer:
    """The REST server a worker config describes (listeners, advertised address, TLS, CORS, extensions);
    its herder is attached once built."""
    return RestServer(
        None,
        [str(x) for x in cfg["listeners"]],
        advertised_host=cfg["rest.advertised.host.name"] or None,
        advertised_port=cfg["rest.advertised.port"] or None,
        advertised_scheme=cfg["rest.advertised.listener"] or None,
        ssl_settings=SslSettings.from_worker_config(cfg.originals),
        allowed_origins=str(cfg["access.control.allow.origin"] or ""),
        allowed_methods=str(cfg["access.control.allow.methods"] or ""),
        extension_classes=[str(x) for x in cfg["rest.extension.classes"] or []],
    )


class DistributedRuntime:
    def __init__(self, props: Mapping[str, str], *, plugins: PluginRegistry | None = None) -> None:
        self.config = WorkerConfig(props)
        self.plugins = plugins or PluginRegistry.from_entry_points()
        cfg = self.config
        self.rest = rest_server(cfg)
        self.herder: DistributedHerder | None = None
        self.offset_store: OffsetStore | None = None
        self._started = False

    @property
    def rest_url(self) -> str:
        return self.rest.advertised_url

    def _client_config(self) -> dict[str, Any]:
        base = {
            k: v
            for k, v in self.config.originals.items()
            if not k.startswith(("producer.", "consumer.", "admin."))
        }
        return {**base, "bootstrap.servers": self.config.bootstrap_servers_string}

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        try:
            await self.rest.start()
            admin = create_admin(self._client_config())
            await admin.start()
            try:
                cluster_id = await kafka_cluster_id(admin)
            finally:
                await admin.close()
            cfg = self.config
            config_store = ConfigStore.from_worker_config(cfg)
            status_store = StatusStore.from_worker_config(cfg)
            self.offset_store = OffsetStore.from_worker_config(cfg)
            await self.offset_store.start()
            worker_id = self.rest_url.split("://", 1)[-1].rstrip("/")
            member = ConnectGroupMember(
                self._client_config(),
                str(cfg["group.id"]),
                session_timeout_ms=int(cfg["session.timeout.ms"]),
                rebalance_timeout_ms=int(cfg["rebalance.timeout.ms"]),
                heartbeat_interval_ms=int(cfg["heartbeat.interval.ms"]),
                retry_backoff_ms=int(cfg["retry.backoff.ms"]),
                client_id=cfg.originals.get("client.id") or f"connect-{worker_id}",
            )
            herder_ref: list[DistributedHerder] = []
            worker = Worker(
                worker_id,
                cfg,
                self.plugins,
                self.offset_store,
                _LateReporter(herder_ref),
                kafka_cluster_id=cluster_id,
            )

            def coordinator(herder: DistributedHerder) -> WorkerCoordinator:
                return WorkerCoordinator(
                    member,
                    mode=str(cfg["connect.protocol"]),
                    rest_url=self.rest_url,
                    config_snapshot=herder.config_snapshot_for_assignor,
                    max_delay_ms=int(cfg["scheduled.rebalance.max.delay.ms"]),
                    on_revoked=herder.on_revoked,
                )

            self.herder = DistributedHerder(
                cfg,
                worker=worker,
                config_store=config_store,
                status_store=status_store,
                coordinator_factory=coordinator,
                member=member,
                rest_url=self.rest_url,
                kafka_cluster_id=cluster_id,
                publish_task_configs=self.rest.forwarder.post_task_configs,
            )
            herder_ref.append(self.herder)
            await self.herder.start()
            self.rest.attach(self.herder)
            log.info("Worker %s started (Kafka cluster %s, group %s)", worker_id, cluster_id, cfg["group.id"])
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        herder, self.herder = self.herder, None
        if herder is not None:
            with contextlib.suppress(Exception):
                await herder.stop()
        offsets, self.offset_store = self.offset_store, None
        if offsets is not None:
            with contextlib.suppress(Exception):
                await offsets.stop()
        await self.rest.stop()


class _LateReporter:
    """The worker reports through the herder, which is built after the worker."""

    def __init__(self, ref: list[DistributedHerder]) -> None:
        self._ref = ref

    def report(self, item: Any, state: Any, trace: str | None = None, version: str | None = None) -> None:
        if self._ref:
            self._ref[0].report(item, state, trace, version)


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
        self.herder: StandaloneHerder | None = None
        self.offset_store: FileOffsetStore | None = None
        self._started = False

    @property
    def rest_url(self) -> str:
        return self.rest.advertised_url

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        try:
            await self.rest.start()
            admin = create_admin(
                {**self.config.originals, "bootstrap.servers": self.config.bootstrap_servers_string}
            )
            await admin.start()
            try:
                cluster_id = await kafka_cluster_id(admin)
            finally:
                await admin.close()
            self.offset_store = FileOffsetStore.from_worker_config(self.config)
            await self.offset_store.start()
            worker_id = self.rest_url.split("://", 1)[-1].rstrip("/")
            status = StandaloneStatus(worker_id)
            worker = Worker(
                worker_id, self.config, self.plugins, self.offset_store, status, kafka_cluster_id=cluster_id
            )
            self.herder = StandaloneHerder(
                self.config, worker=worker, status=status, kafka_cluster_id=cluster_id
            )
            await self.herder.start()
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
        if herder is not None:
            with contextlib.suppress(Exception):
                await herder.stop()
        offsets, self.offset_store = self.offset_store, None
        if offsets is not None:
            with contextlib.suppress(Exception):
                await offsets.stop()
        await self.rest.stop()
