"""The live pieces a source task runs with, assembled from its plan by
:mod:`pyconnect.worker.task_assembly` (or by a test), as two values."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pyconnect.kafka.target_waits import WaitBounds
from pyconnect.metrics.client_metrics import ProducerMetrics
from pyconnect.metrics.connect import SourceTaskMetrics, TaskMetrics
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.transforms.chain import TransformationChain
from pyconnect.worker.plugin_calls import PluginCalls
from pyconnect.worker.retry_with_tolerance import RetryWithTolerance
from pyconnect.worker.status import StatusReporter
from pyconnect.worker.task_converters import TaskConverters


@dataclass(frozen=True)
class SourceTaskMeters:
    """Where a source task records what it does (``None``: not recorded)."""

    source: SourceTaskMetrics | None = None
    task: TaskMetrics | None = None
    producer: ProducerMetrics | None = None


@dataclass(frozen=True)
class SourceTaskParts:
    """The live pieces a source task runs with (assembled from its plan by
    :mod:`pyconnect.worker.task_assembly`)."""

    producer: Any
    converters: TaskConverters
    reporter: StatusReporter
    transformations: TransformationChain | None = None
    errors: RetryWithTolerance = field(default_factory=RetryWithTolerance)
    calls: PluginCalls = field(default_factory=PluginCalls)
    close_producer: Callable[[], Awaitable[None]] | None = None
    open_offsets: Callable[[], Awaitable[None]] | None = None
    may_commit: Callable[[], bool] | None = None
    """The worker's stale-membership fence: records are held back while it refuses."""
    on_topic: Callable[[ConnectorTaskId, str], None] | None = None
    meters: SourceTaskMeters = SourceTaskMeters()
    cluster: str = "the worker's Kafka cluster"
    """Names the target cluster in an access error."""
    stop_timeout_s: float = 5.0
    target_bounds: WaitBounds = field(default_factory=WaitBounds)
