"""Metrics with Kafka's model and Connect's names, exposed in the Prometheus text format.

Reading order: ``stats.py`` (Kafka's windowed and cumulative statistics), ``registry.py`` (metric
names, sensors, gauges, groups, the per-process hub), ``state_tracker.py`` (time per state),
``connect.py`` (the Connect runtime's metric groups), ``jmx.py`` (the JMX names Java gives them),
``prometheus.py`` (Strimzi's JMX-exporter rules applied to those names; the text format), ``process.py``
(process and event-loop series). Standard library only; the REST layer serves the exposition.
"""
