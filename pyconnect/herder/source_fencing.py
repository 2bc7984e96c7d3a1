"""The herder's side of zombie fencing (KIP-618): the leader's rounds, the REST endpoint behind
``PUT /connectors/{c}/fence``, and the preflight and postflight checks of an exactly-once source task.

Contract (Java ``DistributedHerder``):
- :meth:`SourceFencing.fence` (leader, or :class:`~pyconnect.errors.NotLeaderError` with the leader's
  URL): queued into the herder's loop like any REST write; there, in Java's order, not the leader ->
  ``NotLeaderError``, unknown connector -> 404 ``Connector C not found``, not a source connector ->
  400 ``Connector C is not a source connector``; then the config topic is read to the end and
  :func:`~pyconnect.herder.zombie_fencing.decide` says what to do. A record-only decision writes
  ``tasks-fencing-C`` in the loop. A fencing round fences the producers outside the loop
  (:func:`~pyconnect.kafka.producer_fencing.fence_producers`, the connector's admin settings, 90 s),
  then queues its follow-up: read to the end, 409 if the task-config generation moved on, else write
  the record. ``fence`` returns once the record is written (or raises the round's error).
- :meth:`SourceFencing.preflight` (a task of this worker, before its producer initialises): the
  leader's round, asked locally or by a signed ``PUT <leader>/connectors/C/fence`` with an empty body.
  Errors other than those of the leader are wrapped as Java's ``Failed to perform zombie fencing``.
- :meth:`SourceFencing.postflight`: after the producer initialised, read the config topic to the end
  and refuse (Java's messages) if the connector's task-config generation changed since the task was
  created, or the task is no longer assigned to this worker.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Protocol

from pyconnect.config.client_configs import client_overrides
from pyconnect.errors import BadRequestError, ConflictError, ConnectError, NotLeaderError, RestError
from pyconnect.herder import requests as rq
from pyconnect.herder.core import HerderCore
from pyconnect.herder.entities import ConnectorType
from pyconnect.herder.fencing_rounds import FencingStarted, ZombieFencings
from pyconnect.herder.signing import sign
from pyconnect.herder.zombie_fencing import (
    GENERATION_MOVED,
    Fence,
    NothingToFence,
    RecordOnly,
    decide,
    transactional_ids,
)
from pyconnect.kafka.producer_fencing import fence_producers
from pyconnect.protocol.connect_metadata import ConnectProtocolCompatibility
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.config import ConfigStore
from pyconnect.worker.worker import Worker

log = logging.getLogger(__name__)

RequestFencing = Callable[[str, str, Mapping[str, str]], Awaitable[None]]
"""``(leader_url, connector, signature_headers)``: the signed internal ``PUT .../fence``."""

FENCING_TIMEOUT_S = 90.0
NO_LEADER_CHANNEL = (
    "This worker is not able to communicate with the leader of the cluster, which is required for "
    "exactly-once source tasks. If running MirrorMaker 2 in dedicated mode, consider enabling "
    "inter-worker communication via the 'dedicated.mode.enable.internal.rest' property."
)


class FencingHerder(Protocol):
    """What zombie fencing needs from its herder; :class:`~pyconnect.herder.herder.Herder` is the one (it
    creates its :class:`SourceFencing` with itself, so this module names only the contract)."""

    @property
    def core(self) -> HerderCore:
        """The state machine: session key, protocol, assignment, settings."""
        ...

    @property
    def config_store(self) -> ConfigStore: ...

    @property
    def worker(self) -> Worker: ...

    @property
    def kafka_cluster_id(self) -> str: ...

    async def submit(self, request: rq.Request) -> object:
        """Queue a request into the herder's loop; its reply."""
        ...

    async def write(self, write: Awaitable[None]) -> None:
        """Perform a config-topic write as the loop's writes are performed."""
        ...

    def spawn(self, coroutine: Awaitable[None], name: str) -> asyncio.Task[None]:
        """Run ``coroutine`` in the background, owned by the herder."""
        ...

    def connector_type(self, config: Mapping[str, str | None]) -> ConnectorType: ...


class SourceFencing:
    """See the module docstring; one per herder."""

    def __init__(self, herder: FencingHerder, request_fencing: RequestFencing | None) -> None:
        self._herder = herder
        self._request_fencing = request_fencing
        self.rounds = ZombieFencings()

    # -- anywhere: ask for a round ------------------------------------------------------------------

    async def fence(self, connector: str) -> None:
        """The leader's fencing for ``connector`` (raises ``NotLeaderError`` on a follower)."""
        await self.wait(await self._herder.submit(rq.FenceZombies(connector)))

    @staticmethod
    async def wait(outcome: object) -> None:
        """Wait for the round a ``FencingStarted`` reply names, if any (at most 90 s)."""
        if isinstance(outcome, FencingStarted) and outcome.round is not None:
            await asyncio.wait_for(asyncio.shield(outcome.round), FENCING_TIMEOUT_S)

    async def modify_offsets(self, request: rq.ModifyOffsets) -> str:
        """KIP-875 with exactly-once support: the checks, a fencing round, the checks again and the
        modification (Java ``modifyConnectorOffsets``)."""
        herder = self._herder
        fencing = await herder.submit(replace(request, fence_first=True))
        try:
            await self.wait(fencing)
        except Exception as exc:
            log.error(
                "Failed to perform zombie fencing for source connector prior to modifying offsets: %s", exc
            )
            raise ConnectError(
                f"Failed to perform zombie fencing for source connector prior to modifying offsets: {exc}"
            ) from exc
        return str(await herder.submit(request))

    async def preflight(self, task: ConnectorTaskId) -> None:
        try:
            await self.fence(task.connector)
        except NotLeaderError as exc:
            if self._request_fencing is None:
                raise ConnectError(NO_LEADER_CHANNEL) from None
            if not exc.forward_url:
                raise ConnectError(
                    f"Failed to perform zombie fencing: no leader known to fence zombies of {task.connector}"
                ) from None
            herder = self._herder
            headers: dict[str, str] = {}
            key = herder.core.session_key
            if herder.core.protocol == ConnectProtocolCompatibility.SESSIONED and key is not None:
                headers = sign(key.key_bytes, b"", key.algorithm)
            log.debug(
                "Forwarding zombie fencing request for connector %s to leader at %s",
                task.connector,
                exc.forward_url,
            )
            await self._request_fencing(exc.forward_url, task.connector, headers)
        except RestError:
            raise
        except ConnectError as exc:
            raise ConnectError(f"Failed to perform zombie fencing: {exc}") from exc

    async def postflight(self, task: ConnectorTaskId, generation: int | None) -> None:
        herder = self._herder
        try:
            await herder.config_store.refresh(FENCING_TIMEOUT_S)
        except TimeoutError:
            raise ConnectError("Failed to read to end of config topic") from None
        if herder.config_store.snapshot().task_config_generation(task.connector) != generation:
            raise ConnectError(
                f"Cannot start source task {task} with exactly-once support as the connector has already "
                "generated a new set of task configs"
            )
        assignment = herder.core.assignment
        if assignment is None or task not in assignment.tasks:
            raise ConnectError(
                f"Cannot start source task {task} as it has already been revoked from this worker"
            )

    # -- in the herder's loop (leader) ----------------------------------------------------------------

    async def begin(self, connector: str, *, sources_only: bool = True) -> FencingStarted:
        """The ``FenceZombies`` effect, in the loop."""
        herder = self._herder
        config = rq.known_config(herder.config_store.snapshot(), connector)
        if herder.connector_type(config) != ConnectorType.SOURCE:
            if not sources_only:
                return FencingStarted(None)
            raise BadRequestError(f"Connector {connector} is not a source connector")
        try:
            await herder.config_store.refresh(herder.core.settings.sync_timeout_s)
        except TimeoutError:
            raise ConnectError(
                "Failed to read to end of config topic before performing zombie fencing"
            ) from None
        decision = decide(herder.config_store.snapshot(), connector)
        match decision:
            case NothingToFence():
                log.debug(
                    "Skipping zombie fencing round for connector %s as all old task generations have already "
                    "been fenced out",
                    connector,
                )
                return FencingStarted(None)
            case RecordOnly(task_count=count, reason=reason):
                log.debug(
                    "Skipping zombie fencing round but writing task count record for connector %s as %s",
                    connector,
                    reason,
                )
                await herder.write(herder.config_store.put_task_count_record(connector, count))
                return FencingStarted(None)
            case Fence():
                return FencingStarted(
                    self.rounds.join(
                        connector, lambda: self._round(connector, decision, config), herder.spawn
                    )
                )
        return FencingStarted(None)

    async def record(self, connector: str, task_count: int, generation: int | None) -> None:
        """The ``WriteTaskCountRecord`` effect: a round's follow-up, in the loop."""
        herder = self._herder
        try:
            await herder.config_store.refresh(herder.core.settings.sync_timeout_s)
        except TimeoutError:
            raise ConnectError("Failed to read to end of config topic") from None
        if herder.config_store.snapshot().task_config_generation(connector) != generation:
            raise ConflictError(GENERATION_MOVED)
        if self.rounds.cancelled(connector):
            return
        await herder.write(herder.config_store.put_task_count_record(connector, task_count))

    async def _round(self, connector: str, decision: Fence, config: Mapping[str, str]) -> None:
        herder = self._herder
        worker = herder.worker
        overrides = client_overrides(config, worker.config.connector_client_config_override_policy, "admin")
        admin_config = worker.config.admin_configs(
            f"connector-worker-adminclient-{connector}", herder.kafka_cluster_id, overrides
        )
        ids = transactional_ids(str(worker.config.group_id), connector, decision.to_fence)
        log.info("Fencing out %d task producers for source connector %s", len(ids), connector)
        await fence_producers(admin_config, ids, timeout_s=FENCING_TIMEOUT_S)
        log.debug("Finished fencing out %d task producers for source connector %s", len(ids), connector)
        await herder.submit(rq.RecordFencing(connector, decision.to_record, decision.generation))
