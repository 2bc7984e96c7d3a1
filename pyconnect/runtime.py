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
from pyconnect.herder.herder import DistributedHerder
from pyconnect.herder.worker_coordinator import WorkerCoordinator
from pyconnect.kafka.clients import create_admin
from pyconnect.kafka.group_member import ConnectGroupMember
from pyconnect.kafka.topics import kafka_cluster_id
from pyconnect.rest.server import RestServer
from pyconnect.stores.config import ConfigStore
from pyconnect.stores.offsets import OffsetStore
from pyconnect.stores.status import StatusStore
from pyconnect.worker.plugins import PluginRegistry
from pyconnect.worker.worker import Worker

log = logging.getLogger(__name__)


class DistributedRuntime:
    def __init__(self, props: Mapping[str, str], *, plugins: PluginRegistry | None = None) -> None:
        self.config = WorkerConfig(props)
        self.plugins = plugins or PluginRegistry.from_entry_points()
        cfg = self.config
        self.rest = RestServer(
            None,
            [str(x) for x in cfg["listeners"]],
            advertised_host=cfg["rest.advertised.host.name"] or None,
            advertised_port=cfg["rest.advertised.port"] or None,
            advertised_scheme=cfg["rest.advertised.listener"] or None,
        )
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
