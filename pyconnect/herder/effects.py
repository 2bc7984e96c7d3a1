"""What the herder core asks its loop to do (the core's output; see :mod:`pyconnect.herder.core`).

Each effect is a frozen value. The loop (:class:`pyconnect.herder.herder.Herder`) performs the
effects of one core call in the order given, and reports the outcome of those that have one back to
the core (the method named on each class). Configs are raw (``${...}`` unresolved): the loop resolves
them with the worker's config providers just before starting anything.

Pure data, stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pyconnect.protocol.internal_records import (
    ConnectorStatus,
    RestartRequest,
    State,
    TargetState,
    TaskStatus,
)
from pyconnect.protocol.task_id import ConnectorTaskId

RawConfig = Mapping[str, str | None]


# -- group membership --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DropAssignment:
    """Revoke and forget everything held (the group coordinator is unreachable)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Rebalance:
    """Run one join/sync round; report ``HerderCore.rebalanced`` (or ``rebalance_failed``)."""


@dataclass(frozen=True, slots=True)
class ReadConfigToEnd:
    """Read the config topic to its end within ``timeout_s``; report ``HerderCore.config_read``."""

    timeout_s: float


@dataclass(frozen=True, slots=True)
class ClaimWritePrivileges:
    """KIP-618: start the config store's fencable writer (fencing an earlier leader's); report
    ``HerderCore.write_privileges_claimed``."""


@dataclass(frozen=True, slots=True)
class Sleep:
    """Back off before the next step (Java's ``worker.unsync.backoff.ms``)."""

    seconds: float


# -- work on this worker -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartConnector:
    """Start ``connector`` in ``target``; report ``HerderCore.connector_started``."""

    connector: str
    config: RawConfig
    target: TargetState


@dataclass(frozen=True, slots=True)
class StopConnector:
    connector: str


@dataclass(frozen=True, slots=True)
class SetTargetState:
    """Move the connector and its tasks on this worker to ``target``."""

    connector: str
    target: TargetState


@dataclass(frozen=True, slots=True)
class StartTask:
    """Start ``task``; report ``HerderCore.task_started``."""

    task: ConnectorTaskId
    connector_config: RawConfig
    task_config: RawConfig
    target: TargetState


@dataclass(frozen=True, slots=True)
class StopTasks:
    """Stop these tasks (each commits its offsets), all at once."""

    tasks: tuple[ConnectorTaskId, ...]


@dataclass(frozen=True, slots=True)
class Report:
    """A status of this worker's own work (``UNASSIGNED`` is written only if nobody newer wrote)."""

    item: str | ConnectorTaskId
    state: State


@dataclass(frozen=True, slots=True)
class PutStatus:
    """The leader's cleanup writes of statuses that no longer exist (``DESTROYED`` = tombstone)."""

    status: ConnectorStatus | TaskStatus


@dataclass(frozen=True, slots=True)
class DeleteTopicStatus:
    connector: str
    topic: str


# -- task configs --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GenerateTaskConfigs:
    """Ask the running connector for up to ``max_tasks`` task configs; report
    ``HerderCore.task_configs_generated`` (or ``reconfiguration_failed``)."""

    connector: str
    max_tasks: int


@dataclass(frozen=True, slots=True)
class WriteTaskConfigs:
    """Leader: commit ``configs`` for ``connector`` to the config topic. After a reconfiguration a
    failure is reported to ``HerderCore.reconfiguration_failed``; in a request it is the reply."""

    connector: str
    configs: tuple[Mapping[str, str], ...]


@dataclass(frozen=True, slots=True)
class PublishTaskConfigs:
    """Follower: POST ``body`` (the task configs, signed in ``headers`` under ``sessioned``) to the
    leader's internal endpoint, off the loop's critical path (it may wait for the leader's own
    rebalance). Replaces a publication still in flight for the same connector. Report
    ``HerderCore.publish_failed`` on failure, ``publish_succeeded`` otherwise."""

    connector: str
    leader_url: str
    body: bytes
    headers: Mapping[str, str]


# -- cluster-wide records ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WriteSessionKey:
    """Leader: generate a ``length``-byte key and write it with ``algorithm`` and ``created_ms``;
    report ``HerderCore.session_key_written``."""

    algorithm: str
    length: int
    created_ms: int


@dataclass(frozen=True, slots=True)
class ApplyLoggerLevel:
    """KIP-976: set this worker's level for ``namespace`` (read from the config topic)."""

    namespace: str
    level: str


@dataclass(frozen=True, slots=True)
class ConfigureManagedConnectors:
    """Dedicated mode: this worker just became leader; write the managed connectors' configs that
    differ from the config topic (in the background: the writes queue like REST writes)."""


# -- REST writes (see :mod:`pyconnect.herder.requests`) ------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunRequests:
    """The group is settled: run the queued REST writes now."""


@dataclass(frozen=True, slots=True)
class ValidateConnectorConfig:
    """Validate ``config`` as Java's ``validateConnectorConfig`` does (plugins); invalid -> the
    request's reply is the error."""

    connector: str
    config: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class WriteConnectorConfig:
    """Write ``config`` for ``connector`` (with ``initial_state`` for a new one, KIP-980)."""

    connector: str
    config: Mapping[str, str]
    initial_state: TargetState | None


@dataclass(frozen=True, slots=True)
class RemoveConnectorConfig:
    connector: str


@dataclass(frozen=True, slots=True)
class WriteTargetState:
    """Write ``target`` (acknowledged by the broker); ``read_back``: then read the config topic to its
    end, so the next request sees it (Java's ``stopConnector``; a warning when that times out)."""

    connector: str
    target: TargetState
    read_back: bool = False


@dataclass(frozen=True, slots=True)
class WriteRestartRequest:
    """KIP-745: every worker performs the request when it reads the record back."""

    request: RestartRequest


@dataclass(frozen=True, slots=True)
class ModifyConnectorOffsets:
    """KIP-875: let the connector see the change (``alter_offsets``), then write ``offsets`` (``None``:
    a tombstone for every partition the connector has); the result message is the reply."""

    connector: str
    config: Mapping[str, str]
    offsets: tuple[tuple[Mapping[str, object], Mapping[str, object] | None], ...] | None


@dataclass(frozen=True, slots=True)
class RequireTaskRunning:
    """After a local restart: the reply is ``Failed to start task: c-n`` unless ``task`` runs."""

    task: ConnectorTaskId


@dataclass(frozen=True, slots=True)
class FenceZombies:
    """KIP-618 on the leader: read the config topic to the end and carry out the fencing decision for
    ``connector`` (:mod:`pyconnect.herder.zombie_fencing`); the reply is a :class:`~pyconnect.herder.fencing_rounds.FencingStarted`. A connector
    that is not a source answers 400, or with ``sources_only=False`` needs no fencing."""

    connector: str
    sources_only: bool = True


@dataclass(frozen=True, slots=True)
class WriteTaskCountRecord:
    """A fencing round's follow-up on the leader: read to the end, refuse (409) if the connector's
    task-config generation is no longer ``generation``, else write ``tasks-fencing-C``."""

    connector: str
    task_count: int
    generation: int | None


@dataclass(frozen=True, slots=True)
class Reply:
    """The request's result (the last effect of a request)."""

    value: object


Effect = (
    DropAssignment
    | Rebalance
    | ReadConfigToEnd
    | ClaimWritePrivileges
    | Sleep
    | StartConnector
    | StopConnector
    | SetTargetState
    | StartTask
    | StopTasks
    | Report
    | PutStatus
    | DeleteTopicStatus
    | GenerateTaskConfigs
    | WriteTaskConfigs
    | PublishTaskConfigs
    | WriteSessionKey
    | ApplyLoggerLevel
    | ConfigureManagedConnectors
    | RunRequests
    | ValidateConnectorConfig
    | WriteConnectorConfig
    | RemoveConnectorConfig
    | WriteTargetState
    | WriteRestartRequest
    | ModifyConnectorOffsets
    | RequireTaskRunning
    | FenceZombies
    | WriteTaskCountRecord
    | Reply
)
