"""The live pieces a sink task runs with, assembled from its plan by
:mod:`pyconnect.worker.task_assembly` (or by a test), as one value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyconnect.kafka.sink_consumer import SinkConsumer
from pyconnect.metrics.connect import TaskMetrics
from pyconnect.metrics.sink_task import SinkTaskMetrics
from pyconnect.transforms.chain import TransformationChain
from pyconnect.worker.errant_records import ErrantRecords
from pyconnect.worker.plugin_calls import PluginCalls
from pyconnect.worker.retry_with_tolerance import RetryWithTolerance
from pyconnect.worker.status import StatusReporter
from pyconnect.worker.task_converters import TaskConverters


@dataclass(frozen=True)
class SinkTaskParts:
    """What a sink task runs with (see :class:`~pyconnect.worker.sink_task.WorkerSinkTask`)."""

    consumer: SinkConsumer
    converters: TaskConverters
    reporter: StatusReporter
    transformations: TransformationChain | None = None
    errors: RetryWithTolerance = field(default_factory=RetryWithTolerance)
    errant: ErrantRecords | None = None
    """The dead letter queue and error log of ``errors.*`` (``None``: neither)."""
    calls: PluginCalls = field(default_factory=PluginCalls)
    task_metrics: TaskMetrics | None = None
    sink_metrics: SinkTaskMetrics | None = None
    class_name: Callable[[Any], str] | None = None
    """The Java class name a plugin is reported under (default: from its Python class)."""
    offset_flush_interval_s: float = 60.0
    offset_flush_timeout_s: float = 5.0
    stop_timeout_s: float = 5.0
