"""The JMX names Java's ``JmxReporter`` gives Kafka metrics, which JMX-exporter rules match against.

A metric ``name`` of group ``g`` with tags ``k1=v1, k2=v2`` in a registry with prefix ``kafka.connect``
is attribute ``name`` of the MBean ``kafka.connect:type=g,k1=v1,k2=v2``: tags keep their declared
order, a tag with an empty key or value is left out, and each value goes through
``Sanitizer.jmxSanitize``: kept as it is when it consists only of ASCII letters, digits, ``_``, ``-``,
``%``, ``.``, space and tab, otherwise quoted as ``ObjectName.quote`` does (wrapped in ``"``, with
``"``, ``*``, ``?`` and ``\\`` escaped by a backslash and a newline written ``\\n``). So ``A-to-B``
stays bare while ``A->B.MirrorSourceConnector`` and ``connect-127.0.0.1:8083`` become quoted, and the
quotes stay part of the value a JMX exporter reads (checked against the 4.3.1 jars).
"""

from __future__ import annotations

import re

from pyconnect.metrics.registry import MetricName

_PLAIN = re.compile(r"[\w\-%. \t]*", re.ASCII)
_QUOTE_ESCAPES = {'"': '\\"', "*": "\\*", "?": "\\?", "\\": "\\\\", "\n": "\\n"}


def jmx_sanitize(value: str) -> str:
    """Java's ``Sanitizer.jmxSanitize``."""
    if _PLAIN.fullmatch(value):
        return value
    return '"' + "".join(_QUOTE_ESCAPES.get(c, c) for c in value) + '"'


def bean_properties(name: MetricName) -> list[tuple[str, str]]:
    """The MBean's key properties in order: ``type`` (the group), then the non-empty tags, sanitized."""
    return [("type", name.group)] + [(k, jmx_sanitize(v)) for k, v in name.tags if k and v]


def object_name(domain: str, name: MetricName) -> str:
    """The MBean name as Java prints it, e.g. ``kafka.connect:type=connector-metrics,connector=c``."""
    return domain + ":" + ",".join(f"{k}={v}" for k, v in bean_properties(name))
