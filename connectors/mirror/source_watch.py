"""The conditions of a MirrorSourceTask's source side (pyconnect.conditions), raised and cleared in one
place with the task's log lines: WARN when one is raised, INFO when it clears, each naming the task.

Every condition has ``cluster`` the source alias and ``client`` the replication consumer's client id
(the offset-syncs producer's for a refused login of that producer). The task stays RUNNING and keeps
retrying under each of them:

- ``SOURCE_AUTH_FAILED`` (the whole client): the source refuses the login, when the task opens its
  clients (it then opens them again with backoff, connectors.mirror.source) or later, when partitions
  go unanswered and the topic check's probe connection is refused. Cleared once the clients open, or
  the source answers again. ``TARGET_AUTH_FAILED`` the same for an offset-syncs producer on the target.
  A client that finds no broker when it opens is ``SOURCE_UNREACHABLE`` (``TARGET_UNREACHABLE``)
  the same way.
- ``ACL_DENIED`` (subject: the topic): READ refused in a fetch (the topic's partitions are held back and
  probed, pyconnect.kafka.source_faults; the other topics keep flowing), or DESCRIBE refused in the
  topic check. Cleared once a probe fetch is answered, or the check describes the topic again.
- ``TOPIC_DELETED`` (subject: the topic): the topic check finds no such topic. Cleared when it is there
  again; otherwise the connector's topic refresh drops it and the task is reconfigured without it.
- ``SOURCE_UNREACHABLE`` (the whole client): connectors.mirror.reachability, over the late partitions
  of the topics no other condition explains; never while the login is refused, nor while the topic
  check (a Metadata request) gets answers from the source: a task whose slow target holds its fetches
  back has unanswered partitions too, and that is no unreachable source.
- ``TRUNCATED`` (subject: ``topic-partition``; a warning): a gap (connectors.mirror.truncation). It is
  history, not a state, so it is not kept for the task's life: it is cleared :data:`TRUNCATED_HOLD_S`
  after the partition's last gap (long enough for every scrape and alert rule to see it); the WARN
  line and the ``truncated-record-count`` and ``truncation-count`` metrics keep the record.

The topic check (:meth:`SourceWatch.check_due`) runs when a partition has gone unanswered for
:data:`CHECK_AFTER_MS` (at most the reachability bound), or while a condition it found lasts, at most
every :data:`CHECK_EVERY_S`.

Pure: the caller passes the time and what the consumer met; without a board (no worker) only the log
and the reachability state change.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from connectors.mirror.reachability import Reachability
from connectors.mirror.truncation import Gap
from pyconnect.conditions import ConditionBoard
from pyconnect.kafka.source_faults import TopicCheck

log = logging.getLogger(__name__)

SOURCE_UNREACHABLE = "SOURCE_UNREACHABLE"
SOURCE_AUTH_FAILED = "SOURCE_AUTH_FAILED"
TARGET_AUTH_FAILED = "TARGET_AUTH_FAILED"
ACL_DENIED = "ACL_DENIED"
TOPIC_DELETED = "TOPIC_DELETED"
TRUNCATED = "TRUNCATED"

CHECK_AFTER_MS = 2_000
"""A partition unanswered this long has the topic check look at its topic (a live broker answers a
fetch within ``fetch.max.wait.ms``, 500 ms by default)."""
CHECK_EVERY_S = 5.0
TRUNCATED_HOLD_S = 3600.0
"""How long a TRUNCATED condition stays after the partition's last gap."""

Partition = tuple[str, int]


@dataclass(slots=True)
class _Truncations:
    last_s: float
    gaps: int
    lost: int


class SourceWatch:
    """One task's source conditions (see the module docstring). ``name`` is the task's name in log
    lines, ``alias`` the source cluster alias, ``client`` the consumer's client id, ``cluster`` how
    messages name the source (:func:`pyconnect.kafka.access.cluster_label`), ``principal`` who the
    consumer logs in as."""

    def __init__(
        self,
        name: str,
        alias: str,
        client: str,
        board: ConditionBoard | None,
        reachability: Reachability,
        *,
        cluster: str,
        principal: str,
    ) -> None:
        self.name = name
        self.alias = alias
        self.client = client
        self.cluster = cluster
        self.principal = principal
        self.reachability = reachability
        self._board = board
        self._shown: set[tuple[str, str]] = set()
        self._read_denied: set[str] = set()
        self._describe_denied: set[str] = set()
        self._deleted: set[str] = set()
        self._acl_shown: set[str] = set()
        self._open_refused: str | None = None
        self._login_refused = False
        self._checked_s: float | None = None
        self._check_answered_s: float | None = None
        self._truncations: dict[str, _Truncations] = {}

    @property
    def check_after_ms(self) -> int:
        return min(CHECK_AFTER_MS, self.reachability.after_ms)

    # -- the board and the log ----------------------------------------------------------------

    def _show(
        self,
        code: str,
        message: str,
        subject: str = "",
        *,
        cluster: str | None = None,
        client: str | None = None,
        logged: bool = True,
    ) -> None:
        key = (code, subject)
        if self._board is not None:
            self._board.set(
                code, message, subject=subject, cluster=cluster or self.alias, client=client or self.client
            )
        if key not in self._shown:
            self._shown.add(key)
            if logged:
                log.warning("%s: %s: %s", self.name, code, message)

    def _drop(self, code: str, subject: str = "", why: str = "", *, logged: bool = True) -> None:
        key = (code, subject)
        if self._board is not None:
            self._board.clear(code, subject)
        if key in self._shown:
            self._shown.discard(key)
            if logged:
                about = f" ({subject})" if subject else ""
                log.info("%s: %s%s cleared%s", self.name, code, about, f": {why}" if why else "")

    # -- logins ----------------------------------------------------------------------------------

    def open_failed(self, code: str, message: str, *, cluster: str, client: str) -> None:
        """Opening a client failed for ``code`` (SOURCE_/TARGET_AUTH_FAILED: its login was refused;
        SOURCE_/TARGET_UNREACHABLE: no broker answered); ``cluster`` is the alias of its cluster."""
        if self._open_refused is not None and self._open_refused != code:
            self._drop(self._open_refused)
        self._open_refused = code
        self._show(code, f"{message}; the task tries again with backoff", cluster=cluster, client=client)

    def opened(self) -> None:
        """The clients are open: what kept them from opening is over."""
        if self._open_refused is not None:
            self._drop(self._open_refused, why="the clients are open")
            self._open_refused = None

    # -- refusals and the topic check -------------------------------------------------------------

    def read_refused(self, topics: Collection[str]) -> None:
        """The topics whose fetches are refused READ now (all of them: the others are cleared)."""
        if set(topics) != self._read_denied:
            self._read_denied = set(topics)
            self._show_acls()

    def _show_acls(self) -> None:
        wanted = self._read_denied | self._describe_denied
        for topic in sorted(wanted):
            operation = "DESCRIBE" if topic in self._describe_denied else "READ"
            self._show(
                ACL_DENIED,
                f"{operation} on topic {topic} refused for principal {self.principal} on {self.cluster}; "
                "its partitions are retried, the task's other topics keep flowing",
                topic,
            )
        for topic in sorted(self._acl_shown - wanted):
            self._drop(ACL_DENIED, topic, "the ACL allows it again")
        self._acl_shown = wanted

    def check_due(self, now_s: float, late_topics: Collection[str]) -> set[str] | None:
        """The topics to check now (``late_topics``: those with a partition unanswered for
        :attr:`check_after_ms`), or ``None`` when no check is due."""
        wanted = set(late_topics) | self._deleted | self._describe_denied
        if not wanted and not self._login_refused:
            return None
        if self._checked_s is not None and now_s - self._checked_s < CHECK_EVERY_S:
            return None
        self._checked_s = now_s
        return wanted

    def checked(self, check: TopicCheck, asked: Collection[str]) -> None:
        """What the topic check found about ``asked``."""
        if check.answered:
            self._check_answered_s = self._checked_s
        if not check.answered:
            if check.refusal is not None:
                self._login_refused = True
                self._show(SOURCE_AUTH_FAILED, f"{check.refusal}; the consumer keeps retrying")
            return
        if self._login_refused:
            self._login_refused = False
            self._drop(SOURCE_AUTH_FAILED, why=f"{self.cluster} answers again")
        asked = set(asked)
        deleted = (self._deleted - asked) | set(check.missing)
        for topic in sorted(deleted - self._deleted):
            self._show(
                TOPIC_DELETED,
                f"topic {topic} no longer exists on {self.cluster}; its partitions are not copied until "
                "it is created again or the connector's topic refresh drops it",
                topic,
            )
        for topic in sorted(self._deleted - deleted):
            self._drop(TOPIC_DELETED, topic, "the topic exists again")
        self._deleted = deleted
        describe = (self._describe_denied - asked) | set(check.undescribable)
        if describe != self._describe_denied:
            self._describe_denied = describe
            self._show_acls()

    # -- reachability ----------------------------------------------------------------------------

    def explained(self) -> set[str]:
        """The topics a condition other than SOURCE_UNREACHABLE explains the silence of."""
        return self._read_denied | self._describe_denied | self._deleted

    def late(self, now_s: float, late: Sequence[Partition]) -> None:
        """``late``: the partitions unanswered for the reachability bound (connectors.mirror.reachability);
        those of explained topics, and all of them while the login is refused, do not count."""
        explained = self.explained()
        if self._login_refused or self._open_refused is not None or self._source_answered(now_s):
            late = []
        elif explained:
            late = [tp for tp in late if tp[0] not in explained]
        report = self.reachability.observe(now_s, late)
        if report is None:
            return
        if report.log is not None:  # its own lines: repeated at a bounded rate while it lasts
            log.log(logging.WARNING if report.warn else logging.INFO, "%s: %s", self.name, report.log)
        if report.problem is None:
            self._drop(SOURCE_UNREACHABLE, logged=False)
        else:
            self._show(SOURCE_UNREACHABLE, report.problem, logged=False)

    def _source_answered(self, now_s: float) -> bool:
        """Whether the topic check, which runs while partitions go unanswered, got an answer from the
        source recently (within the reachability bound, or two check periods when that is longer):
        then the source is reachable, and unanswered partitions are the task's own silence (a slow
        target holds its fetches back), not SOURCE_UNREACHABLE."""
        answered = self._check_answered_s
        window = max(self.reachability.after_ms / 1000, 2 * CHECK_EVERY_S)
        return answered is not None and now_s - answered <= window

    def answered(self) -> None:
        """No partition is late: a login refusal found by the check is over."""
        if self._login_refused:
            self._login_refused = False
            self._drop(SOURCE_AUTH_FAILED, why=f"{self.cluster} answers again")

    # -- gaps --------------------------------------------------------------------------------------

    def gaps(self, now_s: float, gaps: Iterable[Gap]) -> None:
        """Gaps just reported (connectors.mirror.truncation): TRUNCATED for each partition."""
        for gap in gaps:
            subject = f"{gap.topic}-{gap.partition}"
            seen = self._truncations.get(subject)
            seen = self._truncations[subject] = (
                _Truncations(now_s, 1, gap.lost)
                if seen is None
                else _Truncations(now_s, seen.gaps + 1, seen.lost + gap.lost)
            )
            message = gap.message()
            if seen.gaps > 1:
                message += (
                    f" ({seen.gaps} gaps on this partition since the task started, {seen.lost} records lost)"
                )
            self._show(TRUNCATED, message, subject)

    def expire(self, now_s: float) -> None:
        """Clear the TRUNCATED conditions whose last gap is older than :data:`TRUNCATED_HOLD_S`."""
        for subject, seen in self._truncations.items():
            if now_s - seen.last_s >= TRUNCATED_HOLD_S and (TRUNCATED, subject) in self._shown:
                self._drop(TRUNCATED, subject, f"no new gap for {TRUNCATED_HOLD_S:.0f} s")
