"""The transformation chain of one task (Java ``TransformationChain`` and ``TransformationStage``).

A stage is a transformation, optionally guarded by a predicate: it applies when there is no predicate,
or when ``predicate.test(record) != negate``. The chain applies the stages in the order of the
connector's ``transforms`` list; a stage returning ``None`` drops the record and later stages do not
see it. Exceptions propagate to the caller (the task loop decides, per ``errors.tolerance``, whether
that fails the task). One chain belongs to one task and is used from that task only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyconnect.api.source import SourceRecord
from pyconnect.transforms.base import Predicate, Transformation


@dataclass(frozen=True, slots=True)
class TransformationStage:
    """One alias of ``transforms``: its transformation and optional predicate."""

    alias: str
    transformation: Transformation
    predicate: Predicate | None = None
    negate: bool = False

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        if self.predicate is not None and self.predicate.test(record) == self.negate:
            return record
        return self.transformation.apply(record)

    def close(self) -> None:
        self.transformation.close()
        if self.predicate is not None:
            self.predicate.close()


class TransformationChain:
    """The ordered stages of a task; an empty chain returns every record unchanged."""

    def __init__(self, stages: Sequence[TransformationStage] = ()) -> None:
        self.stages = tuple(stages)

    def __bool__(self) -> bool:
        return bool(self.stages)

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        """The transformed record, or ``None`` when a stage dropped it."""
        for stage in self.stages:
            transformed = stage.apply(record)
            if transformed is None:
                return None
            record = transformed
        return record

    def close(self) -> None:
        """Close every stage; each close runs even when an earlier one raises (the first error wins)."""
        first: BaseException | None = None
        for stage in self.stages:
            try:
                stage.close()
            except Exception as exc:
                first = first or exc
        if first is not None:
            raise first
