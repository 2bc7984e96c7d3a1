"""Prometheus text exposition with the series a JMX-exporter setup for Java Connect workers produces.

The contract is Strimzi's JMX Prometheus Exporter configuration for Kafka Connect and for MirrorMaker 2
(strimzi-kafka-operator, ``packaging/examples/metrics/kafka-connect-metrics.yaml`` and
``kafka-mirror-maker-2-metrics.yaml`` as of its Kafka 4.3.1 support, both ``lowercaseOutputName: true``
and ``lowercaseOutputLabelNames: true``), which its Grafana dashboards and alert rules query. Their rules
are ported below, in order, as :data:`CONNECT_RULES` and :data:`MIRROR_MAKER_2_RULES`, and applied
the way the JMX exporter applies them:

1. Each metric becomes the match string ``<domain><type=<group>, k1=v1, ...><><attribute>: <value>``:
   the MBean Java's ``JmxReporter`` registers (pyconnect.metrics.jmx: tag values quoted by
   ``Sanitizer.jmxSanitize`` when they hold other characters than letters, digits, ``_-%.``, space and
   tab), and the value as Java prints it.
2. The first rule whose pattern matches (``^.*(?:pattern).*$``) decides; a metric no rule matches is
   not exported. The name is the rule's template with ``$n`` groups substituted, every run of
   characters other than ``[a-zA-Z0-9:_]`` turned into one ``_``, lowercased; label names likewise;
   label values are the captured text unchanged, so a quoted JMX value keeps its quotes
   (``connector="\\"A->B.MirrorSourceConnector\\""``; ``A-to-B`` needs no quotes, so has none), and a
   label with an empty name or value is dropped. A rule's ``value`` replaces the metric's value (how
   string metrics such as ``status`` become ``...{status="running"} 1``); a string value left without
   one is not exported.

What the Connect rules give for the runtime's metrics (pyconnect.metrics.connect):

============================================================  ==================================================
JMX (``kafka.connect:type=...``)                              series
============================================================  ==================================================
``connect-worker-metrics`` ``*-total``                         ``kafka_connect_worker_<attr>`` counter
``connect-worker-metrics`` other                              ``kafka_connect_worker_<attr>`` gauge
``connect-worker-metrics,connector=C``                        ``kafka_connect_worker_<attr>{connector}``
``connect-worker-rebalance-metrics`` ``leader-name``,          ``kafka_connect_worker_rebalance_leader_name{leader_name}`` 1
``connect-protocol``                                          (and ``..._connect_protocol{connect_protocol}``)
``connect-worker-rebalance-metrics`` other                    ``kafka_connect_worker_rebalance_<attr>``
``connect-coordinator-metrics,client-id=I``                   ``kafka_connect_coordinator_assigned_connectors{clientid}``, ``..._tasks``
``connector-metrics,connector=C`` status/class/type/version    ``kafka_connect_connector_<attr>{connector,<attr>}`` 1
``connector-task-metrics,connector=C,task=T`` ``status``      ``kafka_connect_connector_task_status{connector,task,status}`` 1
``<kind>-metrics,connector=C,task=T`` ``*-total``              ``kafka_connect_<kind>_<attr>{connector,task}`` counter
``<kind>-metrics,connector=C,task=T`` ``-count|-ms|-ratio|-rate|-max|-avg|...``  gauge (same name form)
``app-info,client-id=I`` ``start-time-ms``                    ``kafka_connect_start_time_seconds{clientid}`` (seconds)
``app-info,client-id=I`` ``version``, ``commit-id``            ``kafka_connect_version_info{clientid,version}`` 1, ``..._commit_id_info``
============================================================  ==================================================

The MirrorMaker 2 rules differ: task ``status`` is ``kafka_connect_connector_status{connector,task,
status}``, ``connector-metrics`` and the rebalance strings are not exported, task rates and
``-max`` values are not exported, and ``kafka.connect.mirror`` metrics become
``kafka_connect_mirror_mirrorsourceconnector_<attr>{source,target,topic,partition}`` and
``kafka_connect_mirror_mirrorcheckpointconnector_<attr>{source,target,group,topic,partition}``.

One consequence kept on purpose: the task rules' first alternative ``.+-count`` also matches
``source-record-active-count-max`` and ``-avg`` (the regex takes the last ``-count`` and the rest of the
match string swallows the suffix), so all three are exported as ``..._source_record_active_count``;
Prometheus keeps the first sample of a duplicated series, and here the first is always the current
count (the order the metrics were registered in), which is what the dashboards mean to sum.

A worker serves :data:`WORKER_RULES`: the Connect rules followed by the MirrorMaker 2 rules for
``kafka.connect.mirror`` (connectors.mirror.metrics), so MirrorMaker 2 connectors run on any worker
give the ``kafka_connect_mirror_*`` series Strimzi's MirrorMaker 2 dashboard queries.

Process metrics (pyconnect.metrics.process) are appended under their client-library names. Output is
the text format 0.0.4 (:data:`CONTENT_TYPE`): families in first-seen order, ``# HELP`` and ``# TYPE``
once per family, a series seen twice kept once (the first).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pyconnect.metrics.jmx import bean_properties
from pyconnect.metrics.registry import MetricName, MetricReading, MetricsHub

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

GAUGE, COUNTER, UNTYPED = "gauge", "counter", "untyped"


@dataclass(frozen=True, slots=True)
class Sample:
    """One exported series: name, labels in order, value, and its family's type and help."""

    name: str
    labels: tuple[tuple[str, str], ...]
    value: float
    type: str = GAUGE
    help: str = ""


@dataclass(frozen=True)
class Rule:
    """One JMX-exporter rule: ``pattern`` (Java regex syntax, also valid Python here), ``name`` and
    ``labels`` templates with ``$n`` groups, ``type``, ``help``, an optional fixed ``value`` and a
    ``value_factor``."""

    pattern: str
    name: str
    type: str
    help: str
    labels: tuple[tuple[str, str], ...] = ()
    value: str | None = None
    value_factor: float = 1.0

    def compiled(self) -> re.Pattern[str]:
        return re.compile("^.*(?:" + self.pattern + ").*$")


_KAFKA_INFO = (
    Rule(
        r"kafka.(.+)<type=app-info, client-id=(.+)><>start-time-ms",
        "kafka_$1_start_time_seconds",
        GAUGE,
        "Kafka $1 JMX metric start time seconds",
        (("clientId", "$2"),),
        value_factor=0.001,
    ),
    Rule(
        r"kafka.(.+)<type=app-info, client-id=(.+)><>(commit-id|version): (.+)",
        "kafka_$1_$3_info",
        UNTYPED,
        "Kafka $1 JMX metric info version and commit-id",
        (("clientId", "$2"), ("$3", "$4")),
        value="1",
    ),
)

_TASK_KINDS = r"kafka.connect<type=(.+)-metrics, connector=(.+), task=(.+)><>"
_CLIENT = r"kafka.(.+)<type=(.+)-metrics, client-id="
_CLIENT_GAUGES = (
    r"(.+-avg|.+-bytes|.+-count|.+-ratio|.+-age|.+-flight|.+-threads|.+-connectors|.+-tasks|.+-ago)"
)


def _client_rules(node_gauges: str) -> tuple[Rule, ...]:
    """The per-client (per-node and client-wide) rules both Strimzi files end their client part with;
    they differ only in which node-level metrics are gauges."""
    return (
        Rule(
            _CLIENT + r"(.+), node-id=(.+)><>(.+-total)",
            "kafka_$2_$5",
            COUNTER,
            "Kafka $1 JMX metric type $2",
            (("clientId", "$3"), ("nodeId", "$4")),
        ),
        Rule(
            _CLIENT + r"(.+), node-id=(.+)><>" + node_gauges,
            "kafka_$2_$5",
            GAUGE,
            "Kafka $1 JMX metric type $2",
            (("clientId", "$3"), ("nodeId", "$4")),
        ),
        Rule(
            _CLIENT + r"(.*)><>(.+-total)",
            "kafka_$2_$4",
            COUNTER,
            "Kafka $1 JMX metric type $2",
            (("clientId", "$3"),),
        ),
        Rule(
            _CLIENT + r"(.*)><>" + _CLIENT_GAUGES,
            "kafka_$2_$4",
            GAUGE,
            "Kafka $1 JMX metric type $2",
            (("clientId", "$3"),),
        ),
    )


def _worker_rules(help_connector: str) -> tuple[Rule, ...]:
    return (
        Rule(
            r"kafka.connect<type=connect-worker-metrics, connector=(.+)><>([a-z-]+)",
            "kafka_connect_worker_$2",
            GAUGE,
            help_connector,
            (("connector", "$1"),),
        ),
        Rule(
            r"kafka.connect<type=connect-worker-metrics><>([a-z-]+-total)",
            "kafka_connect_worker_$1",
            COUNTER,
            "Kafka Connect JMX metric worker",
        ),
        Rule(
            r"kafka.connect<type=connect-worker-metrics><>([a-z-]+)",
            "kafka_connect_worker_$1",
            GAUGE,
            "Kafka Connect JMX metric worker",
        ),
    )


_REBALANCE = (
    Rule(
        r"kafka.connect<type=connect-worker-rebalance-metrics><>([a-z-]+-total)",
        "kafka_connect_worker_rebalance_$1",
        COUNTER,
        "Kafka Connect JMX metric rebalance information",
    ),
    Rule(
        r"kafka.connect<type=connect-worker-rebalance-metrics><>([a-z-]+)",
        "kafka_connect_worker_rebalance_$1",
        GAUGE,
        "Kafka Connect JMX metric rebalance information",
    ),
)

CONNECT_RULES: tuple[Rule, ...] = (
    *_KAFKA_INFO,
    Rule(
        r"kafka.consumer<type=consumer-fetch-manager-metrics, client-id=(.+), topic=(.+), partition=(.+)><>(.+-total)",
        "kafka_consumer_fetch_manager_$4",
        COUNTER,
        "Kafka Consumer JMX metric type consumer-fetch-manager-metrics",
        (("clientId", "$1"), ("topic", "$2"), ("partition", "$3")),
    ),
    Rule(
        r"kafka.consumer<type=consumer-fetch-manager-metrics, client-id=(.+), topic=(.+), partition=(.+)><>(compression-rate|.+-avg|.+-replica|.+-lag|.+-lead)",
        "kafka_consumer_fetch_manager_$4",
        GAUGE,
        "Kafka Consumer JMX metric type consumer-fetch-manager-metrics",
        (("clientId", "$1"), ("topic", "$2"), ("partition", "$3")),
    ),
    Rule(
        r"kafka.producer<type=producer-topic-metrics, client-id=(.+), topic=(.+)><>(.+-total)",
        "kafka_producer_topic_$3",
        COUNTER,
        "Kafka Producer JMX metric type producer-topic-metrics",
        (("clientId", "$1"), ("topic", "$2")),
    ),
    Rule(
        r"kafka.producer<type=producer-topic-metrics, client-id=(.+), topic=(.+)><>(compression-rate|.+-avg|.+rate)",
        "kafka_producer_topic_$3",
        GAUGE,
        "Kafka Producer JMX metric type producer-topic-metrics",
        (("clientId", "$1"), ("topic", "$2")),
    ),
    *_client_rules(r"(.+-avg|.+-rate)"),
    Rule(
        r"kafka.connect<type=connector-metrics, connector=(.+)><>(connector-class|connector-type|connector-version|status): (.+)",
        "kafka_connect_connector_$2",
        GAUGE,
        "Kafka Connect $2 JMX metric type connector",
        (("connector", "$1"), ("$2", "$3")),
        value="1",
    ),
    Rule(
        r"kafka.connect<type=connector-task-metrics, connector=(.+), task=(.+)><>status: ([a-z-]+)",
        "kafka_connect_connector_task_status",
        GAUGE,
        "Kafka Connect JMX Connector task status",
        (("connector", "$1"), ("task", "$2"), ("status", "$3")),
        value="1",
    ),
    Rule(
        _TASK_KINDS + r"(.+-total)",
        "kafka_connect_$1_$4",
        COUNTER,
        "Kafka Connect JMX metric type $1",
        (("connector", "$2"), ("task", "$3")),
    ),
    Rule(
        _TASK_KINDS
        + r"(.+-count|.+-ms|.+-ratio|.+-seq-no|.+-rate|.+-max|.+-avg|.+-failures|.+-requests|.+-timestamp|.+-logged|.+-errors|.+-retries|.+-skipped)",
        "kafka_connect_$1_$4",
        GAUGE,
        "Kafka Connect JMX metric type $1",
        (("connector", "$2"), ("task", "$3")),
    ),
    *_worker_rules("Kafka Connect JMX metric $1"),
    Rule(
        r"kafka.connect<type=connect-worker-rebalance-metrics><>(leader-name|connect-protocol): (.+)",
        "kafka_connect_worker_rebalance_$1",
        UNTYPED,
        "Kafka Connect $2 JMX metric type worker rebalance",
        (("$1", "$2"),),
        value="1",
    ),
    *_REBALANCE,
    Rule(
        r"kafka.connect<type=connect-coordinator-metrics><>(assigned-connectors|assigned-tasks)",
        "kafka_connect_coordinator_$1",
        GAUGE,
        "Kafka Connect JMX metric assignment information",
    ),
)
"""Strimzi's ``kafka-connect-metrics.yaml`` rules, in order."""

MIRROR_MAKER_2_RULES: tuple[Rule, ...] = (
    *_KAFKA_INFO,
    Rule(
        r"kafka.(.+)<type=(.+)-metrics, client-id=(.+), topic=(.+), partition=(.+)><>(.+-total)",
        "kafka_$2_$6",
        COUNTER,
        "Kafka $1 JMX metric type $2",
        (("clientId", "$3"), ("topic", "$4"), ("partition", "$5")),
    ),
    Rule(
        r"kafka.(.+)<type=(.+)-metrics, client-id=(.+), topic=(.+), partition=(.+)><>(compression-rate|.+-avg|.+-replica|.+-lag|.+-lead)",
        "kafka_$2_$6",
        GAUGE,
        "Kafka $1 JMX metric type $2",
        (("clientId", "$3"), ("topic", "$4"), ("partition", "$5")),
    ),
    Rule(
        _CLIENT + r"(.+), topic=(.+)><>(.+-total)",
        "kafka_$2_$5",
        COUNTER,
        "Kafka $1 JMX metric type $2",
        (("clientId", "$3"), ("topic", "$4")),
    ),
    Rule(
        _CLIENT + r"(.+), topic=(.+)><>(compression-rate|.+-avg)",
        "kafka_$2_$5",
        GAUGE,
        "Kafka $1 JMX metric type $2",
        (("clientId", "$3"), ("topic", "$4")),
    ),
    *_client_rules(r"(.+-avg)"),
    Rule(
        r"kafka.connect<type=connector-task-metrics, connector=(.+), task=(.+)><>status: ([a-z-]+)",
        "kafka_connect_connector_status",
        GAUGE,
        "Kafka Connect JMX Connector status",
        (("connector", "$1"), ("task", "$2"), ("status", "$3")),
        value="1",
    ),
    Rule(
        _TASK_KINDS + r"(.+-total)",
        "kafka_connect_$1_$4",
        COUNTER,
        "Kafka Connect JMX metric type $1",
        (("connector", "$2"), ("task", "$3")),
    ),
    Rule(
        _TASK_KINDS
        + r"(.+-count|.+-ms|.+-ratio|.+-avg|.+-failures|.+-requests|.+-timestamp|.+-logged|.+-errors|.+-retries|.+-skipped)",
        "kafka_connect_$1_$4",
        GAUGE,
        "Kafka Connect JMX metric type $1",
        (("connector", "$2"), ("task", "$3")),
    ),
    *_worker_rules("Kafka Connect JMX metric $1"),
    *_REBALANCE,
    Rule(
        r"kafka.connect.mirror<type=MirrorSourceConnector, source=(.+), target=(.+), topic=(.+), partition=(.+)><>([a-z-_]+)",
        "kafka_connect_mirror_mirrorsourceconnector_$5",
        GAUGE,
        "Kafka Mirror Maker 2 Source Connector metrics",
        (("source", "$1"), ("target", "$2"), ("topic", "$3"), ("partition", "$4")),
    ),
    Rule(
        r"kafka.connect.mirror<type=MirrorCheckpointConnector, source=(.+), target=(.+), group=(.+), topic=(.+), partition=(.+)><>([a-z-_]+)",
        "kafka_connect_mirror_mirrorcheckpointconnector_$6",
        GAUGE,
        "Kafka Mirror Maker 2 Checkpoint Connector metrics",
        (("source", "$1"), ("target", "$2"), ("group", "$3"), ("topic", "$4"), ("partition", "$5")),
    ),
)
"""Strimzi's ``kafka-mirror-maker-2-metrics.yaml`` rules, in order."""

MIRROR_CONNECTOR_RULES: tuple[Rule, ...] = MIRROR_MAKER_2_RULES[-2:]
"""The MirrorMaker 2 rules for the ``kafka.connect.mirror`` domain (the mirror tasks' metrics)."""

WORKER_RULES: tuple[Rule, ...] = (*CONNECT_RULES, *MIRROR_CONNECTOR_RULES)
"""What a worker's ``GET /metrics`` applies: the Connect rules, then the MirrorMaker 2 rules of the
``kafka.connect.mirror`` domain, which no Connect rule matches; so the runtime's series are the
Connect rules' and the mirror connectors' series are the MirrorMaker 2 dashboard's."""

RULE_SETS = {"connect": CONNECT_RULES, "mirror-maker-2": MIRROR_MAKER_2_RULES, "worker": WORKER_RULES}

_GROUP_REF = re.compile(r"\$(\d+)")
_UNSAFE = re.compile(r"[^a-zA-Z0-9:_]+")


def safe_name(text: str) -> str:
    """The JMX exporter's ``safeName``: runs of characters outside ``[a-zA-Z0-9:_]`` (and of ``_``)
    become one ``_``; a leading digit gets a ``_`` before it."""
    name = re.sub(r"_+", "_", _UNSAFE.sub("_", text))
    return "_" + name if name[:1].isdigit() else name


def java_text(value: float | str) -> str:
    """A value as Java's ``String.valueOf`` prints the boxed metric value."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(float(value))


@dataclass(frozen=True, slots=True)
class _Match:
    name: str
    labels: tuple[tuple[str, str], ...]
    type: str
    help: str
    value: float | None
    value_factor: float


class JmxExporter:
    """Applies one rule set to registry readings (see the module docstring).

    Which rule a numeric metric matches is remembered per metric and forgotten when the metric is
    gone at a scrape; string metrics are matched with their value every time (it is in the match)."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self._rules = [(rule, rule.compiled()) for rule in rules]
        self._cache: dict[tuple[str, MetricName], _Match | None] = {}

    def samples(self, readings: Iterable[MetricReading]) -> list[Sample]:
        cache = self._cache
        fresh: dict[tuple[str, MetricName], _Match | None] = {}
        out: list[Sample] = []
        for reading in readings:
            value = reading.value
            if value is None:
                continue
            key = (reading.domain, reading.name) if not isinstance(value, str) else None
            if key is not None and key in cache:
                match = cache[key]
            else:
                match = self._match(reading)
            if key is not None:
                fresh[key] = match
            if match is None:
                continue
            if match.value is not None:
                number = match.value
            elif isinstance(value, str):
                continue
            else:
                number = float(value) * match.value_factor
            out.append(Sample(match.name, match.labels, number, match.type, match.help))
        self._cache = fresh
        return out

    def _match(self, reading: MetricReading) -> _Match | None:
        properties = ", ".join(f"{k}={v}" for k, v in bean_properties(reading.name))
        assert reading.value is not None
        text = f"{reading.domain}<{properties}><>{reading.name.name}: {java_text(reading.value)}"
        for rule, pattern in self._rules:
            found = pattern.match(text)
            if found is None:
                continue

            def expand(template: str, found: re.Match[str] = found) -> str:
                return _GROUP_REF.sub(lambda m: found.group(int(m.group(1))) or "", template)

            fixed: float | None = None
            if rule.value:
                try:
                    fixed = float(expand(rule.value))
                except ValueError:
                    return None
            name = safe_name(expand(rule.name)).lower()
            if not name:
                return None
            labels = []
            for label_template, value_template in rule.labels:
                label, label_value = safe_name(expand(label_template)).lower(), expand(value_template)
                if label and label_value:
                    labels.append((label, label_value))
            return _Match(name, tuple(labels), rule.type, expand(rule.help), fixed, rule.value_factor)
        return None


def render(samples: Iterable[Sample]) -> str:
    """The text format 0.0.4 (see the module docstring)."""
    families: dict[str, list[Sample]] = {}
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    for sample in samples:
        key = (sample.name, sample.labels)
        if key in seen:
            continue
        seen.add(key)
        families.setdefault(sample.name, []).append(sample)
    lines: list[str] = []
    for name, members in families.items():
        first = members[0]
        lines.append(f"# HELP {name} {_escape_help(first.help)}")
        lines.append(f"# TYPE {name} {first.type}")
        for sample in members:
            if sample.labels:
                labels = ",".join(f'{k}="{_escape_label(v)}"' for k, v in sample.labels)
                lines.append(f"{name}{{{labels}}} {format_value(sample.value)}")
            else:
                lines.append(f"{name} {format_value(sample.value)}")
    return "\n".join(lines) + "\n" if lines else ""


def format_value(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


Collector = Callable[[], Iterable[Sample]]


class PrometheusExposition:
    """What ``GET /metrics`` serves: every registry of ``hub`` through one rule set, then the
    samples of each extra collector (process metrics). ``rules`` names a rule set of
    :data:`RULE_SETS` or gives the rules. One event loop calls :meth:`render`."""

    def __init__(
        self, hub: MetricsHub, rules: str | Sequence[Rule] = "connect", collectors: Sequence[Collector] = ()
    ) -> None:
        self.hub = hub
        self._exporter = JmxExporter(RULE_SETS[rules] if isinstance(rules, str) else rules)
        self._collectors = list(collectors)

    def add_collector(self, collect: Collector) -> None:
        """Serve ``collect``'s samples too, after the collectors given so far."""
        self._collectors.append(collect)

    def samples(self) -> list[Sample]:
        samples = self._exporter.samples(self.hub.read())
        for collect in self._collectors:
            samples.extend(collect())
        return samples

    def render(self) -> str:
        return render(self.samples())
