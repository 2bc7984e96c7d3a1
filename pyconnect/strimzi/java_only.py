"""What a Strimzi configuration asks of Java that pyconnect cannot do: one WARN line each, never a crash.

:func:`findings` is pure: given the worker properties and the container's environment it returns one
sentence per Java-only thing, naming the key or variable and the class:

- ``*interceptor.classes``: client interceptors (Strimzi's tracing puts OpenTelemetry's there);
- ``*metric.reporters`` classes other than Kafka's ``JmxReporter`` (its metrics are the JMX exporter's
  series at ``/metrics``) and Strimzi's Metrics Reporter (pyconnect.metrics.strimzi_reporter);
- ``config.providers.<name>.class`` classes pyconnect has no provider for (Strimzi's Kubernetes
  secret provider is not one of them: pyconnect.config.providers warns once that it is Java-only, and
  each variable that uses it fails naming it);
- ``STRIMZI_TRACING`` (the Java tracing agent), ``STRIMZI_JMX_ENABLED`` (remote JMX),
  ``STRIMZI_JAVA_SYSTEM_PROPERTIES`` and ``STRIMZI_JAVA_OPTS`` / ``KAFKA_JVM_PERFORMANCE_OPTS`` (JVM flags).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyconnect.config.providers import provider_class

JMX_REPORTER = "org.apache.kafka.common.metrics.JmxReporter"
STRIMZI_REPORTERS = (
    "io.strimzi.kafka.metrics.prometheus.ClientMetricsReporter",
    "io.strimzi.kafka.metrics.KafkaPrometheusMetricsReporter",
)
_JVM_VARIABLES = ("STRIMZI_JAVA_SYSTEM_PROPERTIES", "STRIMZI_JAVA_OPTS", "KAFKA_JVM_PERFORMANCE_OPTS")


def _classes(value: str) -> list[str]:
    return [c.strip() for c in value.split(",") if c.strip()]


def findings(props: Mapping[str, str], environ: Mapping[str, str]) -> list[str]:
    """One sentence per Java-only setting (see the module docstring), in a stable order."""
    found: list[str] = []
    for key in sorted(props):
        value = str(props[key])
        if key.endswith("interceptor.classes") and _classes(value):
            found.append(
                f"{key}: the interceptors {', '.join(_classes(value))} are Java classes; pyconnect's "
                "clients run without them"
            )
        elif key.endswith("metric.reporters"):
            other = [c for c in _classes(value) if c != JMX_REPORTER and c not in STRIMZI_REPORTERS]
            if other:
                found.append(f"{key}: the metrics reporters {', '.join(other)} are Java classes; not loaded")
        elif key.startswith("config.providers.") and key.endswith(".class"):
            if provider_class(value) is None:
                found.append(f"{key}: {value.strip()} is a Java class pyconnect has no provider for")
    tracing = environ.get("STRIMZI_TRACING", "")
    if tracing:
        found.append(f"STRIMZI_TRACING={tracing}: the tracing agent is Java-only; no traces are emitted")
    if environ.get("STRIMZI_JMX_ENABLED", "") == "true":
        found.append("STRIMZI_JMX_ENABLED=true: pyconnect has no JMX; its metrics are served over HTTP")
    for name in _JVM_VARIABLES:
        if environ.get(name, "").strip():
            found.append(f"{name}: JVM options do not apply to pyconnect; ignored")
    return found
