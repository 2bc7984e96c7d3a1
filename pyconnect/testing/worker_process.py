"""One ``pyconnect distributed`` worker process on a free 127.0.0.1 port: for tests, benchmarks, the demo.

The twin of ``java_reference.JavaConnectWorker`` (both are ``ConnectWorkerProcess``: same
constructor, ``rest``, ``wait_ready``, ``stop``, ``kill``), so a test can run a fleet of either, or a
mixed one. The process is owned by PID and tagged by its unique ``worker.properties`` path;
``kill()`` is kill -9, ``stop()`` SIGTERM (the worker commits offsets and leaves the group) with
SIGKILL after a bound. ``start()`` after a stop or kill restarts it on the same port and topics.
``python_path`` entries go before the inherited ``PYTHONPATH`` of the worker process (a directory
holding a ``*.dist-info`` with entry points registers extra plugins, as an installed distribution does).
``event_loop`` (``uvloop`` or ``asyncio``) becomes ``--event-loop``; without it the worker runs on what
``PYCONNECT_EVENT_LOOP`` in this process's environment says, else uvloop (see pyconnect.event_loop).
``log_format`` becomes ``--log-format`` (pyconnect.log_context). ``environment`` adds variables to the
worker's environment (e.g. what an ``EnvVarConfigProvider`` resolves on that worker only).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pyconnect.testing.connect_worker import ConnectWorkerProcess
from pyconnect.testing.java_process import JavaProcess


@dataclass
class PyconnectWorker(ConnectWorkerProcess):
    event_loop: str | None = None
    log_format: str | None = None
    python_path: Sequence[str] = ()
    environment: Mapping[str, str] = field(default_factory=dict)

    label = "pyconnect worker"

    def launch(self) -> JavaProcess:
        command = [sys.executable, "-m", "pyconnect.cli", "distributed", str(self.config_file)]
        if self.event_loop is not None:
            command += ["--event-loop", self.event_loop]
        if self.log_format is not None:
            command += ["--log-format", self.log_format]
        return JavaProcess(
            command,
            self.log_file,
            str(self.config_file),
            die_with_parent=self.die_with_parent,
            tag_in_command=True,
            env=self._env(),
        )

    def _env(self) -> dict[str, str] | None:
        env = dict(self.environment)
        if self.python_path:
            inherited = os.environ.get("PYTHONPATH")
            env["PYTHONPATH"] = os.pathsep.join([*self.python_path, *([inherited] if inherited else [])])
        return env or None
