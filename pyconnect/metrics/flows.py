"""One exposition for the flows of a dedicated MirrorMaker process (``metrics.listener``).

Java's dedicated mode gives every flow (source -> target) a ``Worker`` of its own, each with its own
``Metrics`` and ``JmxReporter``, all registering into the one platform MBean server. The per-flow
MBeans without a flow in their name (``kafka.connect:type=connect-worker-metrics``,
``connect-worker-rebalance-metrics``, ``connector-task-metrics,connector=MirrorSourceConnector,task=0``,
``kafka.producer:type=producer-metrics,client-id=connector-producer-MirrorSourceConnector-0``, ...)
then share one ``ObjectName``: ``JmxReporter.reregister`` unregisters whatever holds the name and
registers its own, so a JMX exporter shows the flow that last changed a metric of the group and the
other flows' values are gone (checked against ``JmxReporter`` in the 4.3.1 jars). Only the
``kafka.connect.mirror`` metrics (tagged ``source``, ``target``) and the coordinator metrics (tagged
with the herder's ``client.id``, ``A->B`` by default) stay apart.

pyconnect keeps every flow's series instead: each flow has its own hub (as each Java flow has its own
``Metrics``), read through the same rules as a worker's ``GET /metrics``, and every series gets the
labels ``source`` and ``target`` (the flow's aliases, as ``Sanitizer.jmxSanitize`` writes JMX tag
values, so they equal the labels of the ``kafka_connect_mirror_*`` series). A series that already
carries a label keeps its own value. Names and the other labels are a worker's; a query that does not
name a flow (``sum(kafka_connect_worker_task_count)``) aggregates over the flows, one that does selects
one. Process and event-loop series are the process's, once, without flow labels.

Pure: the metrics listener (pyconnect.rest.metrics_listener) serves :meth:`FlowsExposition.render`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pyconnect.metrics.jmx import jmx_sanitize
from pyconnect.metrics.prometheus import Collector, PrometheusExposition, Sample, render
from pyconnect.metrics.registry import MetricsHub

FLOW_LABELS = ("source", "target")


def with_flow(samples: Iterable[Sample], source: str, target: str) -> list[Sample]:
    """``samples`` with the ``source`` and ``target`` labels added where absent."""
    flow = tuple(zip(FLOW_LABELS, (jmx_sanitize(source), jmx_sanitize(target)), strict=True))
    out = []
    for sample in samples:
        present = {name for name, _ in sample.labels}
        extra = tuple(label for label in flow if label[0] not in present)
        out.append(
            Sample(sample.name, sample.labels + extra, sample.value, sample.type, sample.help)
            if extra
            else sample
        )
    return out


@dataclass
class FlowMetrics:
    """One flow's hub and the exposition reading it (a worker's rules), plus the flow's own collectors
    (its worker's plugin threads)."""

    source: str
    target: str
    hub: MetricsHub
    exposition: PrometheusExposition

    @classmethod
    def of(cls, source: str, target: str, hub: MetricsHub) -> FlowMetrics:
        return cls(source, target, hub, PrometheusExposition(hub, "worker"))


class FlowsExposition:
    """What the metrics listener's ``GET /metrics`` serves: every flow's series labelled with the
    flow, in flow order, then the process ``collectors``. One event loop calls :meth:`render`."""

    def __init__(self, flows: Sequence[FlowMetrics], collectors: Sequence[Collector] = ()) -> None:
        self.flows = list(flows)
        self._collectors = list(collectors)

    def samples(self) -> list[Sample]:
        samples: list[Sample] = []
        for flow in self.flows:
            samples += with_flow(flow.exposition.samples(), flow.source, flow.target)
        for collect in self._collectors:
            samples.extend(collect())
        return samples

    def render(self) -> str:
        return render(self.samples())
