"""Conditions: what an operator can act on, as a stable code with the cluster, client and subject it
concerns, since when, and one human line (pure, stdlib only).

A *condition* is raised by the part that meets it (a task's source consumer that gets no fetch
answered, the worker's producer that cannot write a partition, a checkpoint task whose group is active
on the target) or derived by the mirror status view from progress (records waiting and none copied,
heartbeats too old). It lasts until the part that raised it clears it (or the task stops), so an
operator sees it in every place they look, all carrying the same code:

- a task's REST status: RUNNING with the conditions as its ``trace`` (first line ``CODE: message``,
  as an exception line starts a Java trace; :meth:`ConditionBoard.trace`);
- ``GET /mirrors``, the status page and ``pyconnect status`` (a flow's ``conditions``; a flow with a
  ``critical`` condition is never IN_SYNC);
- ``/metrics``: ``pyconnect_mirror_condition{flow, source, target, code, cluster, severity}``;
- the alert rules in deploy/prometheus (one per code, and a catch-all).

The codes are the table :data:`CODES` (docs/conditions.md is written from it and a test keeps the two
equal). A code never changes meaning; new ones may be added.

Concurrency: one event loop owns a :class:`ConditionRegistry` and its boards; ``on_change`` runs on
that loop, synchronously, after every change that alters what is shown.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

CRITICAL = "critical"
"""The copy (or the flow's promise) is broken while it lasts: the flow is not IN_SYNC."""
WARNING = "warning"
"""Worth an operator's look; the flow's status does not change."""


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """One documented code: its severity, what it means, and what the operator does about it."""

    severity: str
    meaning: str
    action: str


CODES: dict[str, CodeInfo] = {
    "SOURCE_UNREACHABLE": CodeInfo(
        CRITICAL,
        "The source cluster has answered no fetch of an assigned partition for the reachability bound "
        "(pyconnect.mirror.unreachable.after.ms, by default half the flow's target latency). An idle "
        "source still answers its fetches, so this is never raised for a quiet topic.",
        "Check the source brokers and the network between the worker and them; the task keeps retrying "
        "and resumes by itself.",
    ),
    "TARGET_UNREACHABLE": CodeInfo(
        CRITICAL,
        "The target cluster has acknowledged none of the records handed to the producer for the "
        "reachability bound while records wait.",
        "Check the target brokers and the network; the task keeps retrying and resumes by itself.",
    ),
    "SOURCE_AUTH_FAILED": CodeInfo(
        CRITICAL,
        "The source cluster refuses the connector's credentials (SASL authentication or TLS).",
        "Correct the source.cluster.* (or consumer.*) security settings of the connector.",
    ),
    "TARGET_AUTH_FAILED": CodeInfo(
        CRITICAL,
        "The target cluster refuses the credentials of the worker's or connector's producer.",
        "Correct the target.cluster.* / producer.override.* security settings.",
    ),
    "ACL_DENIED": CodeInfo(
        CRITICAL,
        "An ACL refuses an operation the copy needs: READ on a source topic, WRITE on a target topic "
        "(the subject names the topic and the operation).",
        "Grant the ACL to the mirror's principal; the task retries and resumes by itself.",
    ),
    "TOPIC_DELETED": CodeInfo(
        CRITICAL,
        "A source topic of an assigned partition no longer exists.",
        "Recreate it, or change the topic filter; the connector drops it at its next topic refresh.",
    ),
    "TRUNCATED": CodeInfo(
        WARNING,
        "Records were lost before they were copied: the source log was truncated past the task's "
        "position, or the target was rebuilt behind the committed offsets (connectors.mirror.truncation).",
        "Find out why retention or a reset removed them; the lost range is in the task's log.",
    ),
    "RECORD_TOO_LARGE": CodeInfo(
        CRITICAL,
        "The target refuses a record or batch larger than its max.message.bytes; the partition cannot "
        "move past it.",
        "Raise max.message.bytes of the remote topic (or the broker's message.max.bytes).",
    ),
    "TARGET_TOPIC_MISSING": CodeInfo(
        CRITICAL,
        "The target has no such topic or partition yet (auto-creation off, creation refused, fewer "
        "partitions than the source); sends to it wait, other partitions keep flowing.",
        "Create the topic or add the partitions; the copy resumes within seconds.",
    ),
    "REPLICATION_STALLED": CodeInfo(
        CRITICAL,
        "Records wait on the source and none has been copied for the flow's target latency.",
        "Look at the other conditions and the task's log; the flow lags until the copy moves again.",
    ),
    "CHECKPOINTS_STALLED": CodeInfo(
        WARNING,
        "The checkpoint task has emitted no checkpoint for 30 s or more: it cannot read the "
        "offset-syncs topic, or its rounds of listing and translating group offsets fail (the subject "
        "names the topic in the way). Translated offsets on the target grow stale meanwhile.",
        "Check the checkpoint task's log and its access to the offset-syncs and checkpoints topics.",
    ),
    "GROUP_SYNC_BLOCKED": CodeInfo(
        WARNING,
        "sync.group.offsets.enabled is on, but the group is active on the target, so its offsets "
        "are not written there (Java's rule: an active group is never overwritten).",
        "Stop the group's consumers on the target, or leave them: the offsets sync once it is empty.",
    ),
    "HEARTBEATS_MISSING": CodeInfo(
        CRITICAL,
        "The newest heartbeat that crossed the flow is older than pyconnect.mirror.heartbeats.max.age.ms: "
        "the flow is not carrying data end to end, even if every topic is idle. Judged only while a "
        "heartbeat emitter is known (a MirrorHeartbeatConnector writing to the source, or heartbeats copied "
        "since the task started).",
        "Check the MirrorHeartbeatConnector that writes the source's heartbeats and the source task.",
    ),
    "REBALANCING": CodeInfo(
        WARNING,
        "A task of the flow has no worker right now (UNASSIGNED while the group rebalances).",
        "None if it clears within a rebalance; otherwise check the workers' group membership.",
    ),
    "CONFIG_DRIFT": CodeInfo(
        WARNING,
        "The target refuses a topic config the mirror syncs (an unknown name, a value out of range); "
        "the topic is created and kept in sync without it.",
        "Nothing, if the config does not matter on the target; otherwise upgrade the target.",
    ),
    "TASK_FAILED": CodeInfo(
        CRITICAL,
        "A connector or task of the flow is FAILED (its trace says why).",
        "Fix the cause and restart it: POST /connectors/{name}/restart?includeTasks=true&onlyFailed=true.",
    ),
    "WORKER_UNREACHABLE": CodeInfo(
        CRITICAL,
        "A worker that runs a task of the flow did not answer for its progress.",
        "Check that worker's process and REST listener.",
    ),
}


def markdown_table() -> str:
    """The codes as the Markdown table of docs/conditions.md (a test keeps the two equal)."""
    head = "| code | severity | meaning | what to do |\n| --- | --- | --- | --- |\n"
    return head + "\n".join(f"| `{c}` | {i.severity} | {i.meaning} | {i.action} |" for c, i in CODES.items())


def severity(code: str) -> str:
    """The severity of ``code`` (an unknown code is critical: better a false alarm than none)."""
    info = CODES.get(code)
    return CRITICAL if info is None else info.severity


@dataclass(frozen=True, slots=True)
class Condition:
    """One active condition. ``subject`` says what in the cluster it concerns (``topic-partition``,
    ``group``, a topic), ``""`` for the whole client; ``connector``/``task`` name the task that raised
    it (``task`` ``None`` for the connector, both ``None`` for a derived one)."""

    code: str
    message: str
    since_ms: int
    cluster: str | None = None
    client: str | None = None
    subject: str = ""
    connector: str | None = None
    task: int | None = None

    @property
    def severity(self) -> str:
        return severity(self.code)

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity,
            "cluster": self.cluster,
            "client": self.client,
            "subject": self.subject,
            "connector": self.connector,
            "task": self.task,
            "since_ms": self.since_ms,
            "message": self.message,
        }

    @classmethod
    def from_json(cls, item: object) -> Condition:
        """The inverse of :meth:`to_json` (``severity`` is derived); ``ValueError`` for anything else."""
        if not isinstance(item, dict):
            raise ValueError("a condition must be a JSON object")
        code, message, since = item.get("code"), item.get("message"), item.get("since_ms")
        if not isinstance(code, str) or not code or not isinstance(message, str):
            raise ValueError("a condition needs a code and a message (strings)")
        if not isinstance(since, int) or isinstance(since, bool):
            raise ValueError("a condition's since_ms must be an integer")
        texts = {}
        for key in ("cluster", "client", "connector"):
            value = item.get(key)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"a condition's {key} must be a string or null")
            texts[key] = value
        subject = item.get("subject", "")
        task = item.get("task")
        if not isinstance(subject, str):
            raise ValueError("a condition's subject must be a string")
        if task is not None and (not isinstance(task, int) or isinstance(task, bool)):
            raise ValueError("a condition's task must be an integer or null")
        return cls(code, message, since, texts["cluster"], texts["client"], subject, texts["connector"], task)


def line(condition: Condition) -> str:
    """``CODE: message`` (the first line of a trace, and the page's and CLI's line)."""
    return f"{condition.code}: {condition.message}"


def trace(conditions: Iterable[Condition]) -> str | None:
    """A task's status trace for its active conditions: critical first, then oldest first; the first
    line is the first condition's :func:`line`, each further line one more, with cluster and client."""
    ordered = sorted(conditions, key=lambda c: (c.severity != CRITICAL, c.since_ms, c.code, c.subject))
    if not ordered:
        return None
    lines = [line(ordered[0])]
    for c in ordered:
        where = ", ".join(
            part
            for part in (
                f"cluster {c.cluster}" if c.cluster else "",
                f"client {c.client}" if c.client else "",
                f"subject {c.subject}" if c.subject else "",
                f"since {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(c.since_ms / 1000))}",
            )
            if part
        )
        lines.append(f"  condition {c.code} ({c.severity}; {where}): {c.message}")
    return "\n".join(lines)


ClockMs = Callable[[], int]


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class ConditionBoard:
    """The active conditions of one task (or connector): raised with :meth:`set`, removed with
    :meth:`clear`. ``on_change`` is called after each change of what is shown (a new condition, a
    cleared one, another message); setting the same condition again keeps its ``since_ms``."""

    def __init__(
        self,
        connector: str | None = None,
        task: int | None = None,
        *,
        clock_ms: ClockMs = wall_clock_ms,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.connector = connector
        self.task = task
        self._clock_ms = clock_ms
        self.on_change = on_change
        self._active: dict[tuple[str, str], Condition] = {}

    def set(
        self,
        code: str,
        message: str,
        *,
        subject: str = "",
        cluster: str | None = None,
        client: str | None = None,
    ) -> bool:
        """Raise (or keep) ``code`` for ``subject``; True when what is shown changed."""
        key = (code, subject)
        found = self._active.get(key)
        if found is not None and (found.message, found.cluster, found.client) == (message, cluster, client):
            return False
        since = found.since_ms if found is not None else self._clock_ms()
        self._active[key] = Condition(
            code, message, since, cluster, client, subject, self.connector, self.task
        )
        self._changed()
        return True

    def clear(self, code: str, subject: str | None = None) -> bool:
        """Remove ``code`` for ``subject`` (``None``: for every subject); True when one was active."""
        keys = [k for k in self._active if k[0] == code and (subject is None or k[1] == subject)]
        for key in keys:
            del self._active[key]
        if keys:
            self._changed()
        return bool(keys)

    def clear_all(self) -> None:
        if self._active:
            self._active.clear()
            self._changed()

    def active(self, code: str | None = None) -> list[Condition]:
        return [c for c in self._active.values() if code is None or c.code == code]

    def trace(self) -> str | None:
        return trace(self._active.values())

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()


class ConditionRegistry:
    """Every board of one worker (or of one flow's worker in dedicated mode): what ``GET
    /mirrors/progress`` and the mirror status view read. Boards are added by the worker when a task
    starts and removed when it stops."""

    def __init__(self, clock_ms: ClockMs = wall_clock_ms) -> None:
        self.clock_ms = clock_ms
        self._boards: list[ConditionBoard] = []

    def board(
        self, connector: str, task: int | None, on_change: Callable[[], None] | None = None
    ) -> ConditionBoard:
        found = ConditionBoard(connector, task, clock_ms=self.clock_ms, on_change=on_change)
        self._boards.append(found)
        return found

    def remove(self, board: ConditionBoard) -> None:
        self._boards = [b for b in self._boards if b is not board]

    def snapshot(self) -> list[Condition]:
        return [c for board in self._boards for c in board.active()]


def with_owner(condition: Condition, connector: str | None, task: int | None) -> Condition:
    return replace(condition, connector=connector, task=task)
