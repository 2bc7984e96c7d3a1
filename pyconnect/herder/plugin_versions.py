"""KIP-891 version requirements on ``GET /connector-plugins/{plugin}/config?version=``, checked as
Java's ``DelegatingClassLoader`` checks them.

Java answers differently by where a plugin would load from. A class Connect loads in isolation
(``PluginUtils.shouldLoadInIsolation``: every class outside ``org.apache.kafka``, and Kafka's own
transformations, predicates, converters, JSON, file and MirrorMaker plugins) fails with ``Plugin X not
found that matches the version range R, available versions: [V, ...]`` (one version per installed
entry of that class, so a class installed as two plugin types lists its version twice); any other
class (e.g. ``org.apache.kafka.connect.tools.*``) fails with ``Plugin X has version V which does not
match the required version range R``. Both are 400 (``BadRequestException``).
"""

from __future__ import annotations

import re

from pyconnect.config.version_range import VersionRange
from pyconnect.errors import BadRequestError
from pyconnect.worker.plugins import PluginRegistry

_ISOLATED_KAFKA_CLASS = re.compile(
    r"org\.apache\.kafka\.(?:connect\.(?:"
    r"transforms\.(?!Transformation|predicates\.Predicate$).*"
    r"|json\..*|file\..*|mirror\..*|mirror-client\..*|converters\..*"
    r"|storage\.StringConverter|storage\.SimpleHeaderConverter"
    r"|rest\.basic\.auth\.extension\.BasicAuthSecurityRestExtension"
    r"|connector\.policy\.(?!ConnectorClientConfig(?:OverridePolicy|Request(?:\$ClientType)?)$).*"
    r")|common\.config\.provider\.(?!ConfigProvider$).*)"
)


def loads_in_isolation(class_name: str) -> bool:
    """Java's ``shouldLoadInIsolation`` for the class names plugins carry."""
    if not class_name.startswith("org.apache.kafka."):
        return True
    return _ISOLATED_KAFKA_CLASS.fullmatch(class_name) is not None


def check_plugin_version(plugins: PluginRegistry, plugin: str, required: VersionRange | None) -> None:
    """Nothing when ``required`` is None or the installed ``plugin`` satisfies it; else
    ``BadRequestError`` with Java's message. ``NotFoundError`` first for an unknown plugin."""
    desc = plugins.resolve(plugin)
    if required is None:
        return
    if loads_in_isolation(desc.class_name):
        versions = [p.version for p in plugins.plugins() if p.class_name == desc.class_name]
        if not any(required.contains(v) for v in versions):
            raise BadRequestError(
                f"Plugin {desc.class_name} not found that matches the version range {required}, "
                f"available versions: [{', '.join(versions)}]"
            )
    elif not required.contains(desc.version):
        raise BadRequestError(
            f"Plugin {desc.class_name} has version {desc.version} which does not match the required "
            f"version range {required}"
        )
