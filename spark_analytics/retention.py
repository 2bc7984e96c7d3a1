"""Which records of a partition retention made impossible to check: the pure rule of the replication audit.

A mirror is compared with its source as both are *now*. Retention (or ``deleteRecords``, or the cleaner)
removes records from the head of a partition on each cluster independently, so two heads can differ on a
correct mirror:

- **source retention**: the source deleted records the mirror had already copied; the target still holds
  their copies, which copy no record the audit can read. They are *unverifiable*, not altered or foreign.
- **target retention**: the target deleted copies (its retention is shorter); the source still holds the
  records, which look missing at the head. They are *unverifiable* too, not lost.

What the audit knows of one partition, :class:`HeadFacts`: the offset of the first record read on each
side (the log start offset, or a little after it when the head starts with compacted-away records or
transaction markers) and, on the target, the first offset that holds the content of the first source
record. The rule:

1. :func:`source_retention_cut`: when the source's first record is not at offset 0 (something before it
   is gone) and its content is on the target at offset ``c``, the target records at offsets below ``c``
   are copies of records the source no longer has: the audit leaves them out of the matching and counts
   them as ``unverifiable_source_retention``. When the source starts at 0, or its first record has no
   copy, nothing is cut (foreign records written before the first copy stay mismatches).
2. :func:`target_retention_allowance`: when the target's first record is at offset ``t > 0`` (its head
   is gone), at most ``t`` records were copied there, so at most ``t`` of the source records missing
   before the first copied one (``missing_head``), those just before it, are
   ``unverifiable_target_retention``; earlier missing ones stay missing. A target whose head is intact
   (``t == 0``) allows none: a head the mirror never copied is a finding.

Records inside the range both clusters still hold are matched as before: a record lost or altered there
is a finding. Limits: the cut is the *first* target occurrence of the first source record's content, so
when a deleted source record is byte-identical to it (same key, value, headers and timestamp) the cut
comes too early and the copies after it show as mismatches (a false finding, never a hidden one); the
allowance trusts the target's offsets, one offset per copied record.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HeadFacts:
    """The head of one partition as read: ``source_first`` / ``target_first`` the first offset read on
    each side (``None``: no record); ``first_copy`` the first target offset whose content is that of the
    source record at ``source_first`` (``None``: no such record)."""

    source_first: int | None
    target_first: int | None
    first_copy: int | None


def source_retention_cut(facts: HeadFacts) -> int:
    """The target offset below which the target's records copy source records retention deleted (0: none)."""
    if not facts.source_first or facts.first_copy is None or facts.target_first is None:
        return 0
    return facts.first_copy if facts.first_copy > facts.target_first else 0


def target_retention_allowance(facts: HeadFacts) -> int:
    """How many of the last missing-head source records the target's retention may have deleted."""
    return facts.target_first if facts.target_first else 0


def unverifiable_head(missing_head: int, allowance: int) -> tuple[int, int]:
    """``(still missing, unverifiable)`` of ``missing_head`` records under ``allowance``."""
    unverifiable = min(missing_head, max(allowance, 0))
    return missing_head - unverifiable, unverifiable
