"""One ``pyconnect mirror-maker`` process (dedicated MirrorMaker 2): for tests, benchmarks and people.

The twin of ``java_reference.JavaMirrorMaker`` (same fields: ``config`` as a path or a mapping rendered to
``<work_dir>/mm2.properties``, ``work_dir``, ``clusters`` for ``--clusters``, ``die_with_parent``), built
on the same ``OwnedProcess`` base: owned by PID, tagged by its config path (an argument of its command
line), ``stop()`` is SIGTERM (herders commit offsets and leave their groups) with SIGKILL after a bound,
``kill()`` is kill -9. ``start()`` after a stop or kill starts it again with the same file.

Dedicated mode has no public REST API, so readiness comes from the log: :meth:`wait_started` returns
once this run logged ``Kafka MirrorMaker started`` and fails at once, with the log tail, if the process
exits. With the internal REST server on, :attr:`internal_rest_url` is the URL it advertises (read from
the same log). Waits are bounded.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyconnect.testing.connect_worker import OwnedProcess, ProcessNotReady
from pyconnect.testing.java_process import JavaProcess
from pyconnect.testing.kafka import render_properties

STARTED_LINE = "Kafka MirrorMaker started"
READY_TIMEOUT_S = 90.0
_ADVERTISED = re.compile(r"Internal REST server listening; advertised as (\S+)")


@dataclass
class PyconnectMirrorMaker(OwnedProcess):
    config: Path | Mapping[str, object] = field(default_factory=dict)
    work_dir: Path = Path(".")
    clusters: Sequence[str] = ()
    die_with_parent: bool = False
    log_level: str = "INFO"
    _log_offset: int = field(default=0, init=False, repr=False)

    label = "pyconnect MirrorMaker"

    def __post_init__(self) -> None:
        self.work_dir = Path(self.work_dir).resolve()

    @property
    def config_file(self) -> Path:
        if isinstance(self.config, Mapping):
            return self.work_dir / "mm2.properties"
        return Path(self.config).resolve()

    @property
    def log_file(self) -> Path:
        return self.work_dir / "mirror-maker.log"

    @property
    def tag(self) -> str:
        return str(self.config_file)

    def command(self) -> list[str]:
        args = [sys.executable, "-m", "pyconnect.cli", "mirror-maker", str(self.config_file)]
        args += ["--log-level", self.log_level]
        if self.clusters:
            args += ["--clusters", *self.clusters]
        return args

    def start(self) -> None:
        """Write the config (when given as a mapping) and launch; returns at once (see ``wait_started``)."""
        if self.running:
            return
        self.work_dir.mkdir(parents=True, exist_ok=True)
        if isinstance(self.config, Mapping):
            self.config_file.write_text(render_properties(self.config), encoding="iso-8859-1")
        elif not self.config_file.exists():
            raise ProcessNotReady(f"no MirrorMaker config at {self.config_file}")
        self._log_offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        self.process = JavaProcess(
            self.command(), self.log_file, self.tag, die_with_parent=self.die_with_parent, tag_in_command=True
        )
        self.process.start()

    def log_since_start(self) -> str:
        """What this run (since the last ``start()``) wrote to the log."""
        try:
            with open(self.log_file, "rb") as log:
                log.seek(self._log_offset)
                return log.read().decode(errors="replace")
        except OSError:
            return ""

    def wait_started(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Return once this run logged that every herder started; ProcessNotReady on exit or timeout."""
        deadline = time.monotonic() + timeout
        while STARTED_LINE not in self.log_since_start():
            self.check_alive()
            if time.monotonic() >= deadline:
                raise ProcessNotReady(
                    f"{self.label} did not start within {timeout:.0f}s; log tail:\n{self.log_tail()}"
                )
            time.sleep(0.2)

    @property
    def internal_rest_url(self) -> str | None:
        """The advertised internal REST URL of this run (after ``wait_started``), or None without it."""
        found = _ADVERTISED.search(self.log_since_start())
        return found.group(1) if found else None
