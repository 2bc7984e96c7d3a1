"""REST writes as typed requests, and what the herder core decides for each (sans-IO).

A write arrives at any worker's REST API; the loop queues it and runs it once the group is settled
(:class:`~pyconnect.herder.effects.RunRequests`, step 5 of :mod:`pyconnect.herder.core`).
:func:`request_effects` turns one request into the effects that carry it out, ending with a
:class:`Reply` (or with the offset modification, whose result is the reply), or raises the :mod:`pyconnect.errors` error that is the reply (a follower's
``NotLeaderError``, a missing connector's ``NotFoundError``, ...). The loop performs the effects in
order; an effect that fails makes its error the reply and the rest are not performed.

Contracts (Java's DistributedHerder):
- config writes (create, replace, patch, delete, stop, task configs from a follower) and restart
  requests that name tasks are leader-only; pause and resume are not queued at all (any worker writes
  the target state);
- a plain connector restart runs where the connector runs; elsewhere the leader answers
  ``NotAssignedError`` naming the owner (the REST layer forwards there), a follower ``NotLeaderError``;
- a KIP-745 restart writes the request record and replies with what the plan will restart
  (:class:`RestartAccepted`); it is performed by every worker when the record is read back.

No I/O, no asyncio.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pyconnect.errors import (
    AlreadyExistsError,
    BadRequestError,
    ConnectError,
    NotAssignedError,
    NotFoundError,
)
from pyconnect.herder.core import HerderCore, RunningWork, StatusView, restart_plan
from pyconnect.herder.effects import (
    Effect,
    ModifyConnectorOffsets,
    RemoveConnectorConfig,
    Reply,
    RequireTaskRunning,
    ValidateConnectorConfig,
    WriteConnectorConfig,
    WriteRestartRequest,
    WriteTargetState,
    WriteTaskConfigs,
    WriteTaskCountRecord,
)
from pyconnect.herder.effects import FenceZombies as FenceZombiesEffect
from pyconnect.protocol.internal_records import ConnectorStatus, RestartRequest, TargetState, TaskStatus
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.config_state import ClusterConfigState

# -- the requests ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PutConnectorConfig:
    """Create (``allow_replace=False``) or create-or-replace a connector; replies ``True`` when it was
    created. ``initial_state`` (KIP-980) applies to a new connector only. The config was validated
    before queueing."""

    name: str
    config: Mapping[str, str]
    allow_replace: bool
    initial_state: TargetState | None = None


@dataclass(frozen=True, slots=True)
class PatchConnectorConfig:
    """KIP-477: merge ``patch`` into the stored config (``None`` removes a key), validate, write.

    ``validated``: the merge the caller already validated (off the herder's loop); when the stored
    config has not moved since, the merge equals it and is not validated a second time."""

    name: str
    patch: Mapping[str, str | None]
    validated: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class DeleteConnector:
    name: str


@dataclass(frozen=True, slots=True)
class StopConnector:
    """KIP-875: empty task configs, then the STOPPED target state, read back before the next request."""

    name: str


@dataclass(frozen=True, slots=True)
class RestartConnector:
    """``POST /connectors/{name}/restart`` (KIP-745 when ``include_tasks`` or ``only_failed``)."""

    name: str
    include_tasks: bool
    only_failed: bool


@dataclass(frozen=True, slots=True)
class RestartTask:
    task: ConnectorTaskId


OffsetPairs = tuple[tuple[Mapping[str, object], Mapping[str, object] | None], ...]


@dataclass(frozen=True, slots=True)
class ModifyOffsets:
    """KIP-875 ``PATCH`` (``offsets``; a ``None`` offset is a tombstone) or ``DELETE`` (``None``) of a
    STOPPED connector's offsets."""

    name: str
    offsets: OffsetPairs | None
    fence_first: bool = False
    """KIP-618 (``exactly.once.source.support=enabled``): after the checks, fence the connector's
    zombies instead (the reply is the fencing); the caller then asks again without this flag."""


@dataclass(frozen=True, slots=True)
class PutTaskConfigs:
    """A follower's task configs, posted to the leader (the signature was checked before queueing)."""

    name: str
    configs: tuple[Mapping[str, str], ...]


@dataclass(frozen=True, slots=True)
class FenceZombies:
    """KIP-618: fence the previous task generation of a source connector (leader only)."""

    name: str


@dataclass(frozen=True, slots=True)
class RecordFencing:
    """The follow-up of a fencing round whose producers were fenced: record ``task_count``."""

    name: str
    task_count: int
    generation: int | None


@dataclass(frozen=True, slots=True)
class HealthCheck:
    """KIP-1017: answered as soon as the loop runs requests (pyconnect.herder.health)."""


Request = (
    HealthCheck
    | PutConnectorConfig
    | PatchConnectorConfig
    | DeleteConnector
    | StopConnector
    | RestartConnector
    | RestartTask
    | PutTaskConfigs
    | ModifyOffsets
    | FenceZombies
    | RecordFencing
)


@dataclass(frozen=True, slots=True)
class RestartAccepted:
    """The reply to a KIP-745 restart: whether its plan restarts the connector, which tasks, and the
    statuses the plan was made from (Java's ``buildRestartPlan`` answers with those: by the time the
    reply is written the restart may already have replaced them with UNASSIGNED or RUNNING)."""

    connector: bool
    tasks: frozenset[ConnectorTaskId]
    connector_status: ConnectorStatus | None = None
    task_statuses: tuple[TaskStatus, ...] = ()


# -- the decisions -----------------------------------------------------------------------------------


OwnerUrl = Callable[[str | ConnectorTaskId], str | None]


def request_effects(
    core: HerderCore,
    request: Request,
    snapshot: ClusterConfigState,
    statuses: StatusView,
    running: RunningWork,
    owner_url: OwnerUrl,
) -> list[Effect]:
    """The effects that carry out ``request`` now, the last a :class:`Reply`; raises the error that is
    the reply. ``owner_url``: the leader's view of which worker runs a connector or task."""
    match request:
        case HealthCheck():
            return [Reply(None)]
        case PutConnectorConfig(name=name, config=config, allow_replace=replace, initial_state=state):
            core.require_leader()
            exists = snapshot.contains(name)
            if exists and not replace:
                raise AlreadyExistsError(f"Connector {name} already exists")
            return [WriteConnectorConfig(name, dict(config), None if exists else state), Reply(not exists)]
        case PatchConnectorConfig(name=name, patch=patch, validated=validated):
            core.require_leader()
            merged = patched(known_config(snapshot, name), patch)
            validation: list[Effect] = [] if merged == validated else [ValidateConnectorConfig(name, merged)]
            return [*validation, WriteConnectorConfig(name, merged, None), Reply(None)]
        case DeleteConnector(name=name):
            core.require_leader()
            known_config(snapshot, name)
            return [RemoveConnectorConfig(name), Reply(None)]
        case StopConnector(name=name):
            core.require_leader()
            known_config(snapshot, name, "Unknown connector {}")
            stopped = WriteTargetState(name, TargetState.STOPPED, read_back=True)
            return [WriteTaskConfigs(name, ()), stopped, Reply(None)]
        case RestartConnector(name=name, include_tasks=include_tasks, only_failed=only_failed):
            known_config(snapshot, name, "Unknown connector: {}")
            if not include_tasks and not only_failed:
                if name in running.connectors:
                    return [*core.restart_connector_locally(name, snapshot, announce=False), Reply(None)]
                core.require_leader()
                raise NotAssignedError(f"Connector {name} is not assigned to this worker", owner_url(name))
            core.require_leader()
            if statuses.get_connector(name) is None:
                raise NotFoundError(f"Status for connector {name} not found")
            restart = RestartRequest(name, only_failed=only_failed, include_tasks=include_tasks)
            plan = _restart_plan(restart, statuses)
            return [WriteRestartRequest(restart), Reply(plan)]
        case RestartTask(task=task):
            known_config(snapshot, task.connector, "Unknown connector: {}")
            if snapshot.task_config(task) is None:
                raise NotFoundError(f"Unknown task: {task.connector}-{task.task}")
            if task in running.tasks:
                return [
                    *core.restart_tasks_locally([task], snapshot, announce=False),
                    RequireTaskRunning(task),
                    Reply(None),
                ]
            core.require_leader()
            raise NotAssignedError(
                f"Task {task.connector}-{task.task} is not assigned to this worker", owner_url(task)
            )
        case PutTaskConfigs(name=name, configs=configs):
            core.require_leader()
            known_config(snapshot, name)
            if configs and snapshot.target_state(name) == TargetState.STOPPED:
                # Java's writeTaskConfigs: a follower's configs generated before it read the stop.
                raise BadRequestError(
                    f"Cannot submit non-empty set of task configs for stopped connector {name}"
                )
            return [WriteTaskConfigs(name, tuple(dict(c) for c in configs)), Reply(None)]
        case FenceZombies(name=name):
            core.require_leader()
            known_config(snapshot, name)
            return [FenceZombiesEffect(name)]
        case RecordFencing(name=name, task_count=count, generation=generation):
            core.require_leader()
            return [WriteTaskCountRecord(name, count, generation), Reply(None)]
        case ModifyOffsets(name=name, offsets=offsets):
            core.require_leader()
            config = known_config(snapshot, name)
            if snapshot.target_state(name) != TargetState.STOPPED or snapshot.task_count(name) != 0:
                raise BadRequestError(
                    "Connectors must be in the STOPPED state before their offsets can be modified. This can "
                    "be done for the specified connector by issuing a 'PUT' request to the "
                    f"'/connectors/{name}/stop' endpoint"
                )
            if request.fence_first:
                return [FenceZombiesEffect(name, sources_only=False)]
            return [ModifyConnectorOffsets(name, config, offsets)]
    raise ConnectError(f"Unknown request {request!r}")


def patched(config: Mapping[str, str], patch: Mapping[str, str | None]) -> dict[str, str]:
    """KIP-477: ``config`` with ``patch`` merged in (a ``None`` value removes the key)."""
    merged = dict(config)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def patched_config(
    name: str, current: Mapping[str, str | None] | None, patch: Mapping[str, str | None]
) -> dict[str, str] | None:
    """KIP-477 on the worker that took the request: the stored config of ``name`` with ``patch`` merged
    in, or ``None`` for an unknown connector (the leader answers 404 first, whatever the patch holds, as
    Java); a ``name`` in the patch that is not the connector's is a BadRequestError."""
    if current is None:
        return None
    if "name" in patch and patch["name"] != name:
        raise BadRequestError(
            f"Connector name configuration ({patch['name']}) doesn't match connector name in the URL ({name})"
        )
    return patched({k: v for k, v in current.items() if v is not None}, patch)


def known_config(
    snapshot: ClusterConfigState, name: str, message: str = "Connector {} not found"
) -> dict[str, str]:
    """The stored config of ``name`` without removed keys; ``NotFoundError(message)`` when unknown
    (the wording is the calling Java resource's)."""
    config = snapshot.connector_configs.get(name)
    if config is None:
        raise NotFoundError(message.format(name))
    return {k: v for k, v in config.items() if v is not None}


def _restart_plan(request: RestartRequest, statuses: StatusView) -> RestartAccepted:
    plan = restart_plan(request, statuses)
    if plan is None:  # checked by the caller: the connector has a status
        raise NotFoundError(f"Status for connector {request.connector} not found")
    restart_connector, tasks = plan
    return RestartAccepted(
        restart_connector,
        frozenset(tasks),
        statuses.get_connector(request.connector),
        tuple(statuses.get_all(request.connector)),
    )
