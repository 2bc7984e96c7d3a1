"""A connector whose plain (synchronous) methods block where its ``block`` config says (Java's
``BlockingConnectorTest.BlockingConnector`` and ``BlockingSourceConnector`` in one).

``block`` names the point, in Java's words: ``Connector::validate``, ``Connector::start``,
``Connector::taskConfigs``, ``Connector::stop``, ``Task::start``, ``SourceTask::poll``, ``Task::stop``.
``block.dir`` is a directory shared with the test: reaching the point appends its name to
``<block.dir>/blocked``, then the thread sleeps (in 50 ms steps, the way a plugin doing blocking I/O
would hold its thread) until ``<block.dir>/release`` exists or :data:`BLOCK_BOUND_S` has passed. A
test creates ``release`` when it ends, so no thread outlives it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from pyconnect.api.connector import SourceConnector
from pyconnect.api.source import SourceRecord, SourceTask
from pyconnect.config.definition import ConfigDef, ConfigKey, ConfigValue
from pyconnect.config.types import Importance, Type

BLOCK_CONFIG = "block"
BLOCK_DIR_CONFIG = "block.dir"
BLOCK_BOUND_S = 120.0
BLOCKED_FILE = "blocked"
RELEASE_FILE = "release"


class Block:
    """One blocking point of one plugin instance; see the module docstring."""

    def __init__(self, props: Mapping[str, str | None]) -> None:
        self.point = props.get(BLOCK_CONFIG) or ""
        directory = props.get(BLOCK_DIR_CONFIG)
        self.directory = Path(directory) if directory else None

    def maybe_block_on(self, point: str) -> None:
        if point != self.point or self.directory is None:
            return
        with open(self.directory / BLOCKED_FILE, "a") as marker:
            marker.write(point + "\n")
        release = self.directory / RELEASE_FILE
        deadline = time.monotonic() + BLOCK_BOUND_S
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.05)


BLOCK_CONFIG_DEF = ConfigDef(
    [
        ConfigKey(
            BLOCK_CONFIG, Type.STRING, "", Importance.MEDIUM, "Where to block, e.g. 'Connector::start'."
        ),
        ConfigKey(BLOCK_DIR_CONFIG, Type.STRING, "", Importance.LOW, "The directory shared with the test."),
    ]
)


class BlockingConnector(SourceConnector):
    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._block = Block({})

    def version(self) -> str:
        return "0.0.0"

    def config(self) -> ConfigDef:
        return BLOCK_CONFIG_DEF

    def validate(self, props: Mapping[str, str | None]) -> dict[str, ConfigValue]:
        Block(props).maybe_block_on("Connector::validate")
        return super().validate(props)

    def start(self, props: Mapping[str, str]) -> None:
        self._props = dict(props)
        self._block = Block(props)
        self._block.maybe_block_on("Connector::start")

    def task_class(self) -> type:
        return BlockingSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        self._block.maybe_block_on("Connector::taskConfigs")
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        self._block.maybe_block_on("Connector::stop")


class BlockingSourceTask(SourceTask):
    java_class = "org.apache.kafka.connect.integration.BlockingConnector$BlockingSourceTask"

    def __init__(self) -> None:
        self._block = Block({})

    def version(self) -> str:
        return "0.0.0"

    def start(self, props: Mapping[str, str]) -> None:  # type: ignore[override]
        self._block = Block(props)
        self._block.maybe_block_on("Task::start")

    def poll(self) -> list[SourceRecord] | None:  # type: ignore[override]
        self._block.maybe_block_on("SourceTask::poll")
        time.sleep(0.05)  # nothing to send: no busy loop
        return None

    def stop(self) -> None:  # type: ignore[override]
        self._block.maybe_block_on("Task::stop")
