"""What a plugin is, apart from how plugins are found: its type, its description and how to look one up.

:class:`PluginType` and :class:`PluginDesc` describe one plugin (a connector, converter, header converter,
transformation or predicate) as Java's ``PluginType`` and ``PluginDesc`` do. :class:`PluginCatalog` is
what code that resolves plugin names needs from a catalogue of plugins; the worker's
:class:`~pyconnect.worker.plugins.PluginRegistry` (discovery through entry points) is the one the runtime
passes. They live here, below the transformations and the worker, so that the ``transforms`` config
syntax (:mod:`pyconnect.transforms.config`) can resolve classes without importing the worker.
"""

from __future__ import annotations

import builtins
import enum
from dataclasses import dataclass
from typing import Protocol


class PluginType(enum.Enum):
    """``PluginType``; ``value`` is the REST ``type`` string. Declaration order is Java's."""

    SOURCE = "source"
    SINK = "sink"
    CONVERTER = "converter"
    HEADER_CONVERTER = "header_converter"
    TRANSFORMATION = "transformation"
    PREDICATE = "predicate"


SUFFIXES = {
    PluginType.SOURCE: "Connector",
    PluginType.SINK: "Connector",
    PluginType.CONVERTER: "Converter",
    PluginType.HEADER_CONVERTER: "HeaderConverter",
    PluginType.TRANSFORMATION: "Transformation",
    PluginType.PREDICATE: "Predicate",
}
"""The suffix Java's ``PluginUtils.prunedName`` removes from a plugin's simple name, per type."""


@dataclass(frozen=True)
class PluginDesc:
    """One discovered plugin: the class name Connect reports, its type, version and Python class."""

    class_name: str
    type: PluginType
    version: str
    plugin_class: builtins.type

    @property
    def simple_name(self) -> str:
        return self.class_name.rsplit(".", 1)[-1].rsplit("$", 1)[-1]

    @property
    def pruned_name(self) -> str:
        simple = self.simple_name
        pos = simple.rfind(SUFFIXES[self.type])
        return simple[:pos] if pos > 0 else simple

    @property
    def python_name(self) -> str:
        return f"{self.plugin_class.__module__}.{self.plugin_class.__qualname__}"

    def __str__(self) -> str:
        """Java's ``PluginDesc.toString`` (used in the unknown-connector message)."""
        return (
            f"PluginDesc{{klass=class {self.class_name}, name='{self.class_name}', version='{self.version}', "
            f"encodedVersion={self.version}, type={self.type.value}, typeName='{self.type.value}', "
            f"location='classpath'}}"
        )


class PluginCatalog(Protocol):
    """The plugins one can resolve by name (:class:`~pyconnect.worker.plugins.PluginRegistry`)."""

    def plugins(self, *types: PluginType) -> list[PluginDesc]:
        """Plugins of the given types (all when none given), sorted by class name like Java's sets."""
        ...

    def resolve(self, name: str) -> PluginDesc:
        """Any plugin by class name or alias; an unknown name raises :class:`~pyconnect.errors.NotFoundError`."""
        ...
