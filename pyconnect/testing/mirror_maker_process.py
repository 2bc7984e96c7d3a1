"""One ``pyconnect mirror-maker`` process (dedicated MirrorMaker 2): for tests, benchmarks and people.

The twin of ``java_reference.JavaMirrorMaker``: both are ``connect_worker.MirrorMakerProcess`` (same
fields: ``config`` as a path or a mapping rendered to ``<work_dir>/mm2.properties``, ``work_dir``,
``clusters`` for ``--clusters``, ``die_with_parent``), owned by PID; this one is tagged by its config
path (an argument of its command line). ``stop()`` is SIGTERM (herders commit offsets and leave their
groups) with SIGKILL after a bound, ``kill()`` is kill -9. ``start()`` after a stop or kill starts it
again with the same file. ``event_loop`` (``uvloop`` or ``asyncio``) becomes ``--event-loop``; without
it the process runs on what ``PYCONNECT_EVENT_LOOP`` says, else uvloop.

Dedicated mode has no public REST API, so readiness comes from the log: :meth:`wait_started` returns
once this run logged ``Kafka MirrorMaker started`` and fails at once, with the log tail, if the process
exits. With the internal REST server on, :attr:`internal_rest_url` is the URL it advertises (read from
the same log). Waits are bounded.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from pyconnect.testing.connect_worker import MirrorMakerProcess
from pyconnect.testing.java_process import JavaProcess

_ADVERTISED = re.compile(r"Internal REST server listening; advertised as (\S+)")


@dataclass
class PyconnectMirrorMaker(MirrorMakerProcess):
    log_level: str = "INFO"
    event_loop: str | None = None

    label = "pyconnect MirrorMaker"

    @property
    def tag(self) -> str:
        return str(self.config_file)

    def command(self) -> list[str]:
        args = [sys.executable, "-m", "pyconnect.cli", "mirror-maker", str(self.config_file)]
        if self.event_loop is not None:
            args += ["--event-loop", self.event_loop]
        return [*args, "--log-level", self.log_level, *self.cluster_args()]

    def launch(self) -> JavaProcess:
        return JavaProcess(
            self.command(), self.log_file, self.tag, die_with_parent=self.die_with_parent, tag_in_command=True
        )

    @property
    def internal_rest_url(self) -> str | None:
        """The advertised internal REST URL of this run (after ``wait_started``), or None without it."""
        found = _ADVERTISED.search(self.log_since_start())
        return found.group(1) if found else None
