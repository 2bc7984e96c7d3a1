"""MirrorHerder: the herder of one dedicated-mode flow ``S->T`` (Java's ``MirrorHerder``, KAFKA-15372).

A :class:`DistributedHerder` that also owns the configs of a fixed set of connectors (the three MM2
connectors of its flow, in Java's order Source, Heartbeat, Checkpoint). Nobody submits them over REST:

- After each *successful* rebalance (work started, nothing revoked, config topic in sync) a member that
  has just become leader compares, connector by connector, the desired config with the one in the config
  topic and writes it when it is missing or different (``allow_replace``; validated as a REST write
  would be). A member that stays leader does nothing more; losing leadership re-arms the check, so a
  config changed in ``mm2.properties`` is re-applied after any leader change, not only at first start.
- The writes run in a background task of this herder (they queue into the tick, which is where the
  rebalance is handled). A write refused because leadership moved on is logged and dropped (the new
  leader configures), any other failure is logged with its cause; neither stops the herder.

The worker id is the one Java 4.3.1 gives dedicated herders (``host:port/S->T`` with the internal REST
server, ``hostname/S->T/<uuid>`` without); statuses in ``mm2-status.<S>.internal`` carry it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from pyconnect.errors import NotLeaderError
from pyconnect.herder.herder import DistributedHerder
from pyconnect.herder.worker_coordinator import RebalanceOutcome

log = logging.getLogger(__name__)


class MirrorHerder(DistributedHerder):
    def __init__(
        self,
        config: Any,
        *,
        flow: str,
        worker_id: str,
        connector_configs: Mapping[str, Mapping[str, str]],
        **herder_args: Any,
    ) -> None:
        """``flow`` names the herder in logs (``S->T``); ``connector_configs`` maps connector name to the
        config the leader keeps in the config topic, in the order they are written. Everything else is
        :class:`DistributedHerder`'s."""
        super().__init__(config, **herder_args)
        self.flow = flow
        self._worker_id = worker_id
        self._desired = {name: dict(cfg) for name, cfg in connector_configs.items()}
        self._was_leader = False
        self._configuring: asyncio.Task[None] | None = None

    @property
    def desired_connector_configs(self) -> dict[str, dict[str, str]]:
        return {name: dict(cfg) for name, cfg in self._desired.items()}

    async def _handle_rebalance(self, outcome: RebalanceOutcome) -> None:
        await super()._handle_rebalance(outcome)
        if self._rejoin_requested:
            return
        if self.is_leader:
            if not self._was_leader:
                log.info(
                    "This node %s is now a leader for %s. Configuring connectors...",
                    self.worker_id,
                    self.flow,
                )
                self._start_configuring()
            self._was_leader = True
        else:
            self._was_leader = False

    def _start_configuring(self) -> None:
        previous = self._configuring
        if previous is not None and not previous.done():
            previous.cancel()
        self._configuring = asyncio.create_task(self._configure_connectors(), name=f"configure-{self.flow}")

    async def _configure_connectors(self) -> None:
        for name, desired in self._desired.items():
            stored = self.config_store.snapshot().connector_config(name)
            actual = None if stored is None else {k: v for k, v in stored.items() if v is not None}
            if actual == desired:
                log.info(
                    "This node is a leader for %s and configuration for %s is already up to date.",
                    self.flow,
                    name,
                )
                continue
            try:
                await self.put_connector_config(name, desired, allow_replace=True)
            except asyncio.CancelledError:
                raise
            except NotLeaderError:
                log.info(
                    "This node lost leadership for %s while trying to update the connector configuration for "
                    "%s. Using existing connector configuration.",
                    name,
                    self.flow,
                )
            except Exception as exc:
                log.error("Failed to configure %s connector for %s: %s", name, self.flow, exc)
            else:
                log.info("%s connector configured for %s.", name, self.flow)

    async def stop(self) -> None:
        configuring, self._configuring = self._configuring, None
        if configuring is not None and not configuring.done():
            configuring.cancel()
            await asyncio.wait([configuring])
        await super().stop()
