"""Gaps the mirror cannot copy: source truncation, source recreation, a target rebuilt empty (pure).

Java's MirrorSourceTask resumes each partition at its committed Connect offset + 1 and leaves
everything else to the consumer's ``auto.offset.reset``: records deleted by retention (or
``kafka-delete-records``) before they were copied are skipped in silence, a source topic recreated
under the same name is read from wherever the reset puts it, and a target rebuilt empty behind the
worker's offsets is never refilled. This module decides, from offsets alone, which of these happened;
the task (connectors.mirror.source) asks the clusters, reports the :class:`Gap` (a WARN line, the
``truncated-record-count`` and ``truncation-count`` metrics, the mirror status page, and the warning
condition ``TRUNCATED`` per partition, held for an hour after its last gap:
connectors.mirror.source_watch) and follows the connector's :data:`TRUNCATION_POLICY_CONFIG`.

Contract of :func:`source_gap` (called when a fetch at ``position`` was refused as out of range, or
at start; ``log_start``/``log_end`` are the partition's offsets asked right after):

* ``log_start <= position <= log_end``: no gap (``None``): the partition is readable at ``position``.
* ``position < log_start``: :data:`DELETED`: records ``position .. log_start - 1`` were deleted before
  they were copied; ``lost = log_start - position``; resume at ``log_start``.
* ``position > log_end``: :data:`RECREATED`: the partition now ends before what was already copied,
  so the topic was deleted and created again (or its log truncated by an unclean leader election);
  its records ``log_start .. log_end - 1`` are new and not copied; ``lost = 0`` as far as offsets can
  tell (what the old topic held after ``position`` is gone with it, and cannot be counted); resume at
  ``log_start``.

Contract of :func:`target_gap` (called at task start for a partition with a committed offset
``committed``): the remote partition is missing or empty (``target_end`` is ``None`` or 0) while
source records up to ``committed`` are recorded as copied: :data:`TARGET_REBUILT`. The records still
in the source that the target should hold are ``max(committed_from, source_start) .. committed``;
``lost`` counts them. Resume at ``committed + 1`` (the committed offsets are kept: re-copying is the
operator's choice, through the KIP-875 offsets API).

Limits: Kafka topic IDs would tell a recreated topic apart even when it has grown past the committed
position; the client library speaks Metadata only up to v5 (no topic IDs), so such a recreation is
seen only while its end offset is below the committed position. A partition count that shrinks is
found by the connector's topic refresh (tasks are reconfigured), not here. A target rebuilt while a
task runs is seen at the task's next start (a restart, a rebalance, a config change).
"""

from __future__ import annotations

from dataclasses import dataclass

TRUNCATION_POLICY_CONFIG = "pyconnect.mirror.truncation.policy"
"""Connector config key of MirrorSourceConnector: what a task does after it reported a :class:`Gap`."""
CONTINUE = "continue"
"""Report the gap and go on as Java does (resume at the gap's ``resume`` offset). The default."""
FAIL = "fail"
"""Report the gap and fail the task (FAILED, the gap in its trace) without moving past it: a
restart after the operator's decision (e.g. reset offsets with the KIP-875 API) meets it again."""
POLICIES = (CONTINUE, FAIL)
DEFAULT_POLICY = CONTINUE

DELETED = "DELETED"
RECREATED = "RECREATED"
TARGET_REBUILT = "TARGET_REBUILT"


@dataclass(frozen=True, slots=True)
class Gap:
    """What the mirror could not copy on one source partition (see the module docstring)."""

    kind: str
    topic: str
    partition: int
    position: int
    """The next offset the mirror was to copy (committed + 1)."""
    log_start: int
    log_end: int
    lost: int
    """Records deleted before they were copied (DELETED) or missing on the target (TARGET_REBUILT)."""
    resume: int
    """The source offset the mirror copies next under the ``continue`` policy."""

    def message(self) -> str:
        """One line naming the topic-partition and the offsets."""
        where = f"{self.topic}-{self.partition}"
        if self.kind == DELETED:
            return (
                f"records {self.position}..{self.log_start - 1} of {where} were deleted before they were "
                f"copied ({self.lost} records lost; the log now starts at {self.log_start})"
            )
        if self.kind == RECREATED:
            return (
                f"{where} ends at {self.log_end}, before the next offset to copy {self.position}: the topic "
                f"was recreated (or its log truncated); its records {self.log_start}..{self.log_end - 1} "
                "are copied from the log start, and what the old topic held from "
                f"{self.position} on was never copied"
            )
        first = self.resume - self.lost
        return (
            f"the target partition of {where} is empty while source offsets up to {self.position - 1} are "
            f"committed as copied: the target was rebuilt; source records {first}..{self.position - 1} "
            f"({self.lost} records) are not on the target"
        )


def source_gap(topic: str, partition: int, position: int, log_start: int, log_end: int) -> Gap | None:
    """The gap at ``position`` of a source partition whose log is ``[log_start, log_end)``, if any."""
    if position < 0 or log_start <= position <= log_end:
        return None
    if position < log_start:
        return Gap(DELETED, topic, partition, position, log_start, log_end, log_start - position, log_start)
    return Gap(RECREATED, topic, partition, position, log_start, log_end, 0, log_start)


def target_gap(
    topic: str, partition: int, committed: int, target_end: int | None, source_start: int, source_end: int
) -> Gap | None:
    """The gap of a target rebuilt empty behind ``committed`` (the last source offset recorded as
    copied), if any; ``target_end`` is the remote partition's end offset, ``None`` if it is missing."""
    if committed < 0 or (target_end is not None and target_end > 0):
        return None
    position = committed + 1
    first = min(max(source_start, 0), position)
    return Gap(
        TARGET_REBUILT, topic, partition, position, source_start, source_end, position - first, position
    )


def policy_error(value: str | None) -> str | None:
    """Why ``value`` is not a valid :data:`TRUNCATION_POLICY_CONFIG` (``None``: valid or absent)."""
    if value is None or value.strip().lower() in POLICIES:
        return None
    return (
        f"Invalid value {value} for configuration {TRUNCATION_POLICY_CONFIG}: "
        f"String must be one of: {', '.join(POLICIES)}"
    )


def policy(value: str | None) -> str:
    """The policy a config value names (the default when absent); raises ``ValueError`` if invalid."""
    error = policy_error(value)
    if error is not None:
        raise ValueError(error)
    return DEFAULT_POLICY if value is None else value.strip().lower()
