"""The Strimzi Metrics Reporter's scheme: which keys turn it on, and the series it exposes.

Strimzi's ``metricsConfig: {type: strimziMetricsReporter}`` adds ``io.strimzi.kafka.metrics.prometheus.
ClientMetricsReporter`` to ``metric.reporters`` (and the older ``io.strimzi.kafka.metrics.
KafkaPrometheusMetricsReporter`` is the same reporter) with:

- ``prometheus.metrics.reporter.listener`` (default ``http://:8080``; Strimzi writes ``http://:9404``),
  ``prometheus.metrics.reporter.listener.enable`` (default ``true``);
- ``prometheus.metrics.reporter.allowlist``: comma-separated regexes joined with ``|``, matched against
  the whole series name (default ``.*``).

:func:`reporter_config` reads them from the worker's properties (None when the reporter is not named;
a malformed listener or allowlist is a ``ValueError`` naming the key). The series follow the reporter's
``KafkaMetricWrapper`` and ``KafkaCollector`` (strimzi/metrics-reporter):

- name: ``<prefix>_<group>_<name>`` with the registry's domain as prefix (``kafka.connect`` ->
  ``kafka_connect``), characters outside ``[a-zA-Z0-9_:]`` replaced by ``_``, the reserved suffixes
  ``_total``, ``_created``, ``_bucket`` and ``_info`` removed, lower-cased: e.g.
  ``kafka_connect_connect_worker_metrics_connector_count`` and
  ``kafka_connect_mirror_mirrorsourceconnector_record_count``;
- labels: the metric's tags, names sanitized the same way, values **as they are** (no JMX quoting:
  ``connector="A->B.MirrorSourceConnector"``), in name order;
- a numeric value is a gauge printed as Java prints a double (``1.0``, ``1.5E9``); any other value is an
  info series ``<name>_info`` with the value as label ``<metric name>`` and value ``1.0``;
- ``kafka_connect_mirror_kafka_metrics_count_count`` is left out, as the reporter does.
"""

from __future__ import annotations

import decimal
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from pyconnect.metrics.prometheus import GAUGE, Sample
from pyconnect.metrics.registry import MetricReading

CLIENT_CLASS = "io.strimzi.kafka.metrics.prometheus.ClientMetricsReporter"
KAFKA_CLASS = "io.strimzi.kafka.metrics.KafkaPrometheusMetricsReporter"
REPORTER_CLASSES = (CLIENT_CLASS, KAFKA_CLASS)
LISTENER = "prometheus.metrics.reporter.listener"
LISTENER_ENABLE = "prometheus.metrics.reporter.listener.enable"
ALLOWLIST = "prometheus.metrics.reporter.allowlist"
DEFAULT_LISTENER = "http://:8080"
IGNORED = frozenset({"kafka_connect_mirror_kafka_metrics_count_count"})
_RESERVED_SUFFIXES = ("_total", "_created", "_bucket", "_info", ".total", ".created", ".bucket", ".info")
_ILLEGAL = re.compile(r"[^a-zA-Z0-9_:]")
_ILLEGAL_LABEL = re.compile(r"[^a-zA-Z0-9_]")


@dataclass(frozen=True)
class ReporterConfig:
    host: str
    port: int
    enabled: bool
    allowlist: re.Pattern[str]


def reporter_config(props: Mapping[str, object]) -> ReporterConfig | None:
    """The reporter's settings when ``metric.reporters`` names it, else None."""
    reporters = [c.strip() for c in str(props.get("metric.reporters") or "").split(",")]
    if not any(c in REPORTER_CLASSES for c in reporters):
        return None
    listener = str(props.get(LISTENER) or DEFAULT_LISTENER).strip()
    parts = urlsplit(listener)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or port is None or parts.path not in ("", "/"):
        raise ValueError(
            f"Invalid value {listener} for configuration {LISTENER}: expected http://[host]:port"
        )
    enabled = str(props.get(LISTENER_ENABLE, "true")).strip().lower() != "false"
    patterns = [p.strip() for p in str(props.get(ALLOWLIST) or ".*").split(",") if p.strip()]
    try:
        allowlist = re.compile("|".join(patterns) or ".*")
    except re.error as exc:
        raise ValueError(f"Invalid value for configuration {ALLOWLIST}: {exc}") from None
    return ReporterConfig(parts.hostname or "0.0.0.0", port, enabled, allowlist)


def _strip_reserved(name: str) -> str:
    changed = True
    while changed:
        changed = False
        for suffix in _RESERVED_SUFFIXES:
            if name == suffix:
                return "_"
            if name.endswith(suffix):
                name, changed = name[: -len(suffix)], True
    return name


def series_name(domain: str, group: str, name: str) -> str:
    """``KafkaMetricWrapper.prometheusName`` for a metric of ``group`` in a registry of ``domain``."""
    prefix = _strip_reserved(domain).replace(".", "_")
    sanitized = _strip_reserved(_ILLEGAL.sub("_", f"{prefix}_{group}_{name}")).lower()
    return _strip_reserved(sanitized).replace(".", "_")


def label_name(key: str) -> str:
    name = _ILLEGAL_LABEL.sub("_", key)
    return "_" + name if name[:1].isdigit() else name


def java_double(value: float) -> str:
    """Java's ``Double.toString`` (the reporter's text format), ``+Inf``/``-Inf``/``NaN`` aside."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0.0" if math.copysign(1, value) < 0 else "0.0"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e7:
        text = repr(float(value))
        return text if ("." in text or "e" in text) else text + ".0"
    sign, digits, exponent = decimal.Decimal(repr(float(value))).normalize().as_tuple()
    assert isinstance(exponent, int)
    shown = "".join(str(d) for d in digits)
    power = exponent + len(shown) - 1
    mantissa = shown[0] + "." + (shown[1:] or "0")
    return ("-" if sign else "") + f"{mantissa}E{power}"


def samples(readings: Iterable[MetricReading], allowlist: re.Pattern[str]) -> list[Sample]:
    """The reporter's series for ``readings`` that the allowlist lets through (see the module docstring)."""
    found: list[Sample] = []
    for reading in readings:
        name = series_name(reading.domain, reading.name.group, reading.name.name)
        if name in IGNORED or not allowlist.fullmatch(name):
            continue
        labels: dict[str, str] = {}
        for key, tag in reading.name.tags:
            labels.setdefault(label_name(key), tag)
        value = reading.value
        help_text = f"Use {name} in allowlist"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            labels.setdefault(label_name(reading.name.name), "" if value is None else _text(value))
            found.append(Sample(f"{name}_info", tuple(sorted(labels.items())), 1.0, GAUGE, help_text))
        else:
            found.append(Sample(name, tuple(sorted(labels.items())), float(value), GAUGE, help_text))
    return found


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def render(found: Iterable[Sample]) -> str:
    """Text format 0.0.4: families in first-seen order, values as Java prints them."""
    families: dict[str, list[Sample]] = {}
    for sample in found:
        families.setdefault(sample.name, []).append(sample)
    lines: list[str] = []
    for name, members in families.items():
        lines.append(f"# HELP {name} {members[0].help}")
        lines.append(f"# TYPE {name} gauge")
        for s in members:
            labels = ",".join(f'{k}="{_escape(v)}"' for k, v in s.labels)
            lines.append(
                f"{name}{{{labels}}} {java_double(s.value)}" if labels else f"{name} {java_double(s.value)}"
            )
    return "\n".join(lines) + "\n" if lines else ""


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
