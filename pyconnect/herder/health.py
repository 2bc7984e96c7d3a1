"""What ``GET /health`` answers (KIP-1017), as pure logic: the loop's stages and the verdicts.

Java's contract, kept: a health check is queued into the herder's loop like any REST request. Answered
within :data:`HEALTH_CHECK_TIMEOUT_S` -> 200 ``healthy``; not answered -> 503 ``starting`` while the
worker has not completed startup, else 500 ``unhealthy``. The message then adds what the loop is
doing, or what it last did (Java's tick-thread ``Stage.summarize`` text, word for word).

Beyond Java, because "the loop answered" is not "this fleet works":
- a loop whose latest step failed answers 500 ``unhealthy`` even if queued requests still run, and the
  message names the failure (a herder that fails every tick is not healthy);
- a leader whose latest write to the config topic failed (or, with exactly-once source support, that
  does not hold the config topic's write privileges) answers 500 ``unhealthy`` naming it: creates would
  fail there;
- a follower asks the leader's ``/health`` (:data:`WORKER_SCOPE`, so the leader checks only itself)
  while it checks itself, and answers 503 ``unhealthy`` naming the leader when the leader cannot take
  writes or cannot be reached: every worker tells an operator whether the fleet accepts writes. 503
  (not 500) says this worker itself is fine; a liveness probe should not restart it for that.

No I/O, no asyncio: :class:`TickRecorder` is fed by the herder's loop, the verdict functions are
called by the REST resource.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyconnect.herder import effects as fx

HEALTH_CHECK_TIMEOUT_S = 10.0
"""Java's ``RestServer.DEFAULT_HEALTH_CHECK_TIMEOUT_MS``."""

WORKER_SCOPE = ("scope", "worker")
"""The query parameter a follower adds when it asks the leader: check yourself, ask nobody else."""

HEALTHY_MESSAGE = "Worker has completed startup and is ready to handle requests."
STARTING_MESSAGE = "Worker is still starting up."
UNHEALTHY_MESSAGE = "Worker was unable to handle this request and may be unable to handle other requests."


def instant(ms: int) -> str:
    """``ms`` since the epoch as Java's ``Instant.toString`` writes it (ISO-8601, UTC, ``Z``;
    milliseconds only when non-zero)."""
    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if ms % 1000:
        text += f".{ms % 1000:03d}"
    return text + "Z"


@dataclass(frozen=True, slots=True)
class Stage:
    """One operation of the herder's loop (Java's ``Stage``)."""

    description: str
    started_ms: int
    completed_ms: int | None = None

    def summarize(self) -> str:
        if self.completed_ms is not None:
            return (
                f"The last operation the worker completed was {self.description}, which began at "
                f"{instant(self.started_ms)} and completed at {instant(self.completed_ms)}."
            )
        return f"The worker is currently {self.description}, which began at {instant(self.started_ms)}."


def stage_description(effect: fx.Effect) -> str | None:
    """What the loop is doing while it performs ``effect``, in Java's words where Java has a stage for
    it; None for effects that only record (they cannot hold the loop up)."""
    match effect:
        case fx.Rebalance():
            return "ensuring membership in the cluster"
        case fx.ReadConfigToEnd():
            return "reading to the end of the config topic"
        case fx.ClaimWritePrivileges():
            return "reclaiming write privileges for the config topic"
        case fx.Sleep(seconds=seconds):
            return f"sleeping for a backoff duration of {round(seconds * 1000)}ms"
        case fx.DropAssignment():
            return "revoking the assignment before rejoining the cluster"
        case fx.StartConnector(connector=name):
            return f"starting connector {name}"
        case fx.StopConnector(connector=name):
            return f"stopping connector {name}"
        case fx.StartTask(task=task):
            return f"starting task {task.connector}-{task.task}"
        case fx.StopTasks(tasks=tasks):
            return f"stopping {len(tasks)} tasks"
        case fx.GenerateTaskConfigs(connector=name):
            return f"generating task configs for connector {name}"
        case fx.WriteTaskConfigs(connector=name):
            return f"writing task configs for connector {name} to the config topic"
        case fx.WriteSessionKey():
            return "writing a new session key to the config topic"
        case fx.RunRequests():
            return "handling queued REST requests"
    return None


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed step or write: when, and the exception's one-line description."""

    at_ms: int
    error: str

    @classmethod
    def of(cls, exc: BaseException, at_ms: int) -> Failure:
        """``Name: message`` of ``exc`` and of each cause, so a wrapped Kafka error stays visible."""
        parts: list[str] = []
        seen: BaseException | None = exc
        while seen is not None and len(parts) < 5:
            text = str(seen)
            parts.append(f"{type(seen).__name__}: {text}" if text else type(seen).__name__)
            seen = seen.__cause__ or seen.__context__
        return cls(at_ms, "; caused by ".join(parts))


class TickRecorder:
    """What the herder's loop is doing and how its latest step and config write went.

    Contract: written only by the loop (``begin``/``complete`` around each effect, ``step_*`` after
    each step, ``write_*`` after each config-topic write); read by the health check at any time.
    """

    def __init__(self) -> None:
        self.stage: Stage | None = None
        self.step_failure: Failure | None = None
        self.write_failure: Failure | None = None

    def begin(self, description: str, now_ms: int) -> None:
        self.stage = Stage(description, now_ms)

    def complete(self, now_ms: int) -> None:
        stage = self.stage
        if stage is not None and stage.completed_ms is None:
            self.stage = Stage(stage.description, stage.started_ms, max(now_ms, stage.started_ms))

    def step_failed(self, exc: BaseException, now_ms: int) -> None:
        self.step_failure = Failure.of(exc, now_ms)

    def step_succeeded(self) -> None:
        self.step_failure = None

    def write_failed(self, exc: BaseException, now_ms: int) -> None:
        self.write_failure = Failure.of(exc, now_ms)

    def write_succeeded(self) -> None:
        self.write_failure = None


@dataclass(frozen=True, slots=True)
class WorkerHealth:
    """The ``/health`` answer: Java's ``WorkerStatus`` body and the HTTP status."""

    status: str
    message: str
    http_status: int

    @property
    def healthy(self) -> bool:
        return self.http_status == 200

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "message": self.message}


HEALTHY = WorkerHealth("healthy", HEALTHY_MESSAGE, 200)


def _with(message: str, details: str | None) -> str:
    return f"{message} {details}" if details else message


def starting(details: str | None = None) -> WorkerHealth:
    return WorkerHealth("starting", _with(STARTING_MESSAGE, details), 503)


def unhealthy(details: str | None = None) -> WorkerHealth:
    return WorkerHealth("unhealthy", _with(UNHEALTHY_MESSAGE, details), 500)


def worker_verdict(
    *,
    answered: bool,
    ready: bool,
    recorder: TickRecorder,
    leader: bool,
    lacks_write_privileges: bool,
    claim_failure: str | None = None,
) -> WorkerHealth:
    """This worker's own health. ``answered``: the queued check ran within the timeout; ``leader``:
    this worker leads the group; ``lacks_write_privileges``: exactly-once source support is on and this
    leader does not hold the config topic's write privileges, ``claim_failure`` saying why when its
    latest claim failed."""
    stage = recorder.stage.summarize() if recorder.stage is not None else None
    if not answered:
        details = " ".join(part for part in (stage, _step_failure(recorder)) if part) or None
        return unhealthy(details) if ready else starting(details)
    if recorder.step_failure is not None:
        return unhealthy(_step_failure(recorder))
    if leader and recorder.write_failure is not None:
        failure = recorder.write_failure
        return unhealthy(
            f"This worker leads the cluster and its last write to the config topic failed at "
            f"{instant(failure.at_ms)}: {failure.error}"
        )
    if leader and lacks_write_privileges:
        return unhealthy(
            "This worker leads the cluster and does not hold the write privileges for the config topic "
            "that exactly-once source support requires."
            + (f" Its latest claim failed: {claim_failure}" if claim_failure else "")
        )
    return HEALTHY


def _step_failure(recorder: TickRecorder) -> str | None:
    failure = recorder.step_failure
    if failure is None:
        return None
    return f"The last herder step failed at {instant(failure.at_ms)}: {failure.error}"


def fleet_verdict(
    own: WorkerHealth, leader_url: str | None, leader_answer: LeaderAnswer | None
) -> WorkerHealth:
    """A follower's answer: its own verdict when that is not healthy; else 503 naming the leader when no
    leader is known or the leader (``leader_answer``: what ``leader_url`` said) did not answer healthy."""
    if not own.healthy:
        return own
    if leader_url is None or leader_answer is None:
        return _no_leader()
    if leader_answer.healthy:
        return own
    return WorkerHealth(
        "unhealthy",
        f"This worker is healthy but the cluster cannot accept writes: its leader at {leader_url} "
        f"{leader_answer.describe()}",
        503,
    )


def _no_leader() -> WorkerHealth:
    return WorkerHealth(
        "unhealthy",
        "This worker is healthy but the cluster cannot accept writes: no leader is known (a rebalance may be underway).",
        503,
    )


@dataclass(frozen=True, slots=True)
class LeaderAnswer:
    """What the leader's ``/health`` said: the HTTP status and body, or why it could not be asked."""

    http_status: int | None
    body: Mapping[str, Any] | None = None
    error: str | None = None

    @property
    def healthy(self) -> bool:
        return self.http_status == 200

    def describe(self) -> str:
        if self.http_status is None:
            return f"could not be reached: {self.error}"
        message = self.body.get("message") if isinstance(self.body, Mapping) else None
        if isinstance(message, str) and message:
            return f"answered {self.http_status}: {message}"
        return f"answered {self.http_status}."
