"""What the target's refusals and silences mean for a source task's sends, and what to show for them
(pure: the standard library and pyconnect's error tree only; time is passed in).

A task's batches for one target partition wait, instead of failing the task, while the target is not
ready for them in a way an operator can fix (pyconnect.conditions has the codes):

- ``TARGET_TOPIC_MISSING``: the topic does not exist there (auto-creation off, creation refused) or has
  fewer partitions than the record names (a topic the broker auto-created with one partition, a router
  that renames to a smaller topic): :func:`missing`;
- ``ACL_DENIED``: the broker refuses WRITE on the topic (TOPIC_AUTHORIZATION_FAILED on produce), or
  hides it from the metadata (no DESCRIBE);
- ``RECORD_TOO_LARGE``: the broker refuses a batch as larger than the topic's ``max.message.bytes``
  (MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE).

:func:`refusal` says which of the last two a produce error is (``None``: anything else, which fails the
task as before); the broker's answer is matched on its error code (``errno``). :func:`unrecognized`
tells the client's own refusal of a partition its metadata lacks.

:class:`TargetWaits` is the state of one task's waits. The running part
(:mod:`pyconnect.kafka.target_lanes`) reports what happens (:meth:`~TargetWaits.block` and
:meth:`~TargetWaits.unblock` per partition; :meth:`~TargetWaits.handed` and :meth:`~TargetWaits.settled`
per batch handed to the producer) and asks :meth:`~TargetWaits.review` what to show now:

- one condition per (code, subject) for the partitions that have waited ``raise_after_s`` or longer (a
  topic created a moment ago, whose metadata is on its way, raises nothing). The subject is the topic
  for TARGET_TOPIC_MISSING and ACL_DENIED (one message for all its waiting partitions, with the partition
  count wanted and present), ``topic-partition`` for RECORD_TOO_LARGE (naming the batch's size and the
  topic's limit when known);
- ``TARGET_UNREACHABLE`` (subject ``""``) while batches handed to the producer wait and the target has
  acknowledged none for ``unreachable_after_s``, counted from the later of the last acknowledgement and
  the moment batches began to wait; cleared by the next acknowledgement, or once none waits;
- a WARN line when a condition is raised, again every ``repeat_s`` while it lasts, and an INFO line
  when it clears, with how long it lasted;
- the partitions that have waited ``wait_max_s`` or longer (``None``: no bound, as Java's producer
  blocks in ``send`` for ever under Connect's ``max.block.ms``): the running part fails their batches
  with :class:`TargetWaitExceeded`, whose message names the topic, the partition and what the target
  has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pyconnect.errors import ConnectError

TARGET_TOPIC_MISSING = "TARGET_TOPIC_MISSING"
ACL_DENIED = "ACL_DENIED"
RECORD_TOO_LARGE = "RECORD_TOO_LARGE"
TARGET_UNREACHABLE = "TARGET_UNREACHABLE"

WAIT_MAX_CONFIG = "pyconnect.target.wait.max.ms"
"""Connector key (pyconnect's, every source connector): how long a batch may wait for its target
partition (missing, refused) before the task fails; absent: for ever."""
DEFAULT_UNREACHABLE_AFTER_S = 15.0
RAISE_AFTER_S = 1.0
REPEAT_S = 300.0

_UNKNOWN_TOPIC_OR_PARTITION = 3
_MESSAGE_TOO_LARGE = 10
_RECORD_LIST_TOO_LARGE = 18
_TOPIC_AUTHORIZATION_FAILED = 29
_UNRECOGNIZED_PARTITION = "Unrecognized partition"
_SHOWN_PARTITIONS = 8


class TargetWaitExceeded(ConnectError):
    """A batch waited for its target partition longer than ``pyconnect.target.wait.max.ms``."""


@dataclass(frozen=True, slots=True)
class WaitBounds:
    """The time bounds of one task's waits (see the module docstring)."""

    wait_max_s: float | None = None
    unreachable_after_s: float = DEFAULT_UNREACHABLE_AFTER_S


@dataclass(frozen=True, slots=True)
class Blocked:
    """Why the batches of one target partition wait. ``partition`` -1: the topic as a whole (records
    without a partition, whose partition needs the topic's partition count)."""

    code: str
    topic: str
    partition: int
    present: int | None = None
    """TARGET_TOPIC_MISSING: the partitions the topic has (``None``: no such topic)."""
    operation: str = "WRITE"
    principal: str | None = None
    size: int | None = None
    records: int | None = None
    limit: int | None = None
    """RECORD_TOO_LARGE: the topic's ``max.message.bytes`` when known."""

    @property
    def subject(self) -> str:
        return f"{self.topic}-{self.partition}" if self.code == RECORD_TOO_LARGE else self.topic


def missing(topic: str, partition: int, present: int | None) -> Blocked:
    """TARGET_TOPIC_MISSING: ``topic`` has ``present`` partitions (``None``: it does not exist)."""
    return Blocked(TARGET_TOPIC_MISSING, topic, partition, present=present)


def refusal(
    exc: BaseException,
    topic: str,
    partition: int,
    *,
    principal: str | None = None,
    size: int | None = None,
    records: int | None = None,
) -> Blocked | None:
    """What a produce error the target heals from once an operator acts means, else ``None``."""
    code = getattr(exc, "errno", None)
    if code == _TOPIC_AUTHORIZATION_FAILED:
        return Blocked(ACL_DENIED, topic, partition, principal=principal)
    if code in (_MESSAGE_TOO_LARGE, _RECORD_LIST_TOO_LARGE):
        return Blocked(RECORD_TOO_LARGE, topic, partition, size=size, records=records)
    return None


def unrecognized(exc: BaseException) -> bool:
    """Whether the client refused a send because its metadata lacks the topic or the partition."""
    if isinstance(exc, AssertionError):
        return _UNRECOGNIZED_PARTITION in str(exc)
    return getattr(exc, "errno", None) == _UNKNOWN_TOPIC_OR_PARTITION


def _partitions_text(partitions: Sequence[int]) -> str:
    shown = ", ".join(str(p) for p in partitions[:_SHOWN_PARTITIONS])
    more = len(partitions) - _SHOWN_PARTITIONS
    return shown + (f" and {more} more" if more > 0 else "")


def _limit_text(limit: int | None) -> str:
    if limit is not None:
        return f"the topic's max.message.bytes ({limit})"
    return "what the target accepts (the topic's max.message.bytes or the broker's message.max.bytes)"


def condition_message(waiting: Sequence[Blocked], cluster: str) -> str:
    """The message of the condition of ``waiting`` (one code and subject, partitions ascending)."""
    sample = waiting[-1]
    topic = sample.topic
    if sample.code == TARGET_TOPIC_MISSING:
        partitions = sorted({b.partition for b in waiting if b.partition >= 0})
        wanted = f"{partitions[-1] + 1} wanted, " if partitions else ""
        if sample.present is None:
            return (
                f"topic {topic} does not exist on {cluster} ({wanted}0 present): records for it wait "
                "until it is created"
            )
        waits = f"partition(s) {_partitions_text(partitions)}" if partitions else "it"
        return (
            f"topic {topic} on {cluster} has {sample.present} partition(s) ({wanted}{sample.present} "
            f"present): records for {waits} wait until it has them"
        )
    if sample.code == ACL_DENIED:
        who = f" for principal {sample.principal}" if sample.principal else ""
        return (
            f"{sample.operation} on topic {topic} is refused by {cluster}{who}: records for it wait until "
            "the ACL is granted"
        )
    return (
        f"{cluster} refuses a batch of {sample.records} record(s), {sample.size} bytes, for "
        f"{topic}-{sample.partition} as larger than {_limit_text(sample.limit)}: the partition waits until "
        "the limit is raised"
    )


def exceeded_message(blocked: Blocked, cluster: str, waited_s: float, max_s: float) -> str:
    """The message of :class:`TargetWaitExceeded` for ``blocked``."""
    where = (
        f"partition {blocked.partition} of topic {blocked.topic}"
        if blocked.partition >= 0
        else f"topic {blocked.topic}"
    )
    if blocked.code == TARGET_TOPIC_MISSING:
        why = (
            "the topic does not exist"
            if blocked.present is None
            else f"the topic has {blocked.present} partition(s)"
        )
    elif blocked.code == ACL_DENIED:
        who = f" for principal {blocked.principal}" if blocked.principal else ""
        why = f"{blocked.operation} on the topic is refused{who}"
    else:
        why = f"a batch of {blocked.size} bytes is larger than {_limit_text(blocked.limit)}"
    return (
        f"Gave up waiting for {where} on {cluster} after {round(waited_s * 1000)} ms "
        f"({WAIT_MAX_CONFIG}={round(max_s * 1000)}): {why}"
    )


@dataclass(frozen=True)
class Review:
    """What :meth:`TargetWaits.review` asks the running part to do now."""

    raised: list[tuple[str, str, str]] = field(default_factory=list)
    """``(code, subject, message)`` to set on the board: new, or with a new message."""
    cleared: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    overdue: list[tuple[str, int, str]] = field(default_factory=list)
    """``(topic, partition, message)``: fail these partitions' batches with the message."""


@dataclass
class _Waiting:
    blocked: Blocked
    since: float


@dataclass
class _Shown:
    message: str
    since: float
    warned_at: float


class TargetWaits:
    """One task's waits for its target; see the module docstring. ``cluster`` names the target in
    messages, ``client`` is the producer's client id."""

    def __init__(
        self,
        cluster: str,
        client: str = "",
        *,
        bounds: WaitBounds = WaitBounds(),
        raise_after_s: float = RAISE_AFTER_S,
        repeat_s: float = REPEAT_S,
    ) -> None:
        self.cluster = cluster
        self.client = client
        self.bounds = bounds
        self._raise_after_s = raise_after_s
        self._repeat_s = repeat_s
        self._waiting: dict[tuple[str, int], _Waiting] = {}
        self._shown: dict[tuple[str, str], _Shown] = {}
        self._outstanding = 0
        self._quiet_since = 0.0

    def block(self, blocked: Blocked, now: float) -> None:
        """``blocked.partition`` of ``blocked.topic`` waits (again, or still: its wait keeps its start)."""
        key = (blocked.topic, blocked.partition)
        found = self._waiting.get(key)
        if found is None:
            self._waiting[key] = _Waiting(blocked, now)
        else:
            found.blocked = blocked

    def unblock(self, topic: str, partition: int) -> None:
        """The partition's batches go to the target again (idempotent)."""
        self._waiting.pop((topic, partition), None)

    def waiting(self, topic: str, partition: int) -> Blocked | None:
        found = self._waiting.get((topic, partition))
        return None if found is None else found.blocked

    def handed(self, now: float) -> None:
        """One batch was handed to the producer."""
        if self._outstanding == 0:
            self._quiet_since = now
        self._outstanding += 1

    def settled(self, now: float, acknowledged: bool) -> None:
        """One batch handed to the producer was acknowledged (``acknowledged``) or failed."""
        self._outstanding = max(0, self._outstanding - 1)
        if acknowledged:
            self._quiet_since = now

    def review(self, now: float) -> Review:
        """What to show and do at ``now`` (see the module docstring). Partitions past the wait bound
        are given up here: they no longer wait, so their conditions clear in this same review."""
        review = Review()
        limit = self.bounds.wait_max_s
        if limit is not None:
            for (topic, partition), waiting in list(self._waiting.items()):
                waited = now - waiting.since
                if waited >= limit:
                    del self._waiting[(topic, partition)]
                    review.overdue.append(
                        (topic, partition, exceeded_message(waiting.blocked, self.cluster, waited, limit))
                    )
        desired = self._desired(now)
        for key, message in desired.items():
            shown = self._shown.get(key)
            if shown is None:
                self._shown[key] = _Shown(message, now, now)
                review.raised.append((key[0], key[1], message))
                review.warnings.append(f"{key[0]}: {message}")
                continue
            if shown.message != message:
                shown.message = message
                review.raised.append((key[0], key[1], message))
            if now - shown.warned_at >= self._repeat_s:
                shown.warned_at = now
                review.warnings.append(f"{key[0]} for {now - shown.since:.0f} s: {message}")
        for key in [k for k in self._shown if k not in desired]:
            shown = self._shown.pop(key)
            review.cleared.append(key)
            what = f"{key[1]} on {self.cluster}" if key[1] else self.cluster
            review.notices.append(f"{key[0]} cleared after {now - shown.since:.1f} s: {what}")
        return review

    def _desired(self, now: float) -> dict[tuple[str, str], str]:
        groups: dict[tuple[str, str], list[Blocked]] = {}
        for waiting in self._waiting.values():
            if now - waiting.since >= self._raise_after_s:
                blocked = waiting.blocked
                groups.setdefault((blocked.code, blocked.subject), []).append(blocked)
        desired = {
            key: condition_message(sorted(group, key=lambda b: b.partition), self.cluster)
            for key, group in groups.items()
        }
        bound = self.bounds.unreachable_after_s
        if self._outstanding and now - self._quiet_since >= bound:
            client = f" of client '{self.client}'" if self.client else ""
            desired[(TARGET_UNREACHABLE, "")] = (
                f"{self.cluster} has acknowledged none of the records{client} handed to the producer for "
                f"{bound:g} s or more; the task keeps retrying"
            )
        return desired
