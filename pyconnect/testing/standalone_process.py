"""One ``pyconnect standalone`` worker process on a free 127.0.0.1 port: for tests and the demo.

Same shape as :class:`~pyconnect.testing.worker_process.PyconnectWorker` (owned by PID, tagged by
its unique ``worker.properties`` path, ``stop()`` = SIGTERM then SIGKILL after a bound, ``kill()``
= kill -9), but the worker properties carry no group or internal topics: offsets go to
``offsets.json`` in ``work_dir`` (``offset.storage.file.filename``), and each entry of
``connectors`` (name -> config) is written to ``<name>.properties`` and named on the command line.
``start()`` after a stop restarts it on the same port, offsets file and connector files.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pyconnect.testing.connect_worker import JSON_CONVERTER, ConnectWorkerProcess
from pyconnect.testing.java_process import JavaProcess
from pyconnect.testing.kafka import render_properties


@dataclass
class StandaloneWorker(ConnectWorkerProcess):
    connectors: Mapping[str, Mapping[str, object]] = field(default_factory=dict)

    label = "pyconnect standalone worker"

    @property
    def offsets_file(self) -> Path:
        return self.work_dir / "offsets.json"

    def connector_file(self, name: str) -> Path:
        return self.work_dir / f"{name}.properties"

    def properties(self) -> dict[str, object]:
        props: dict[str, object] = {
            "bootstrap.servers": self.bootstrap_servers,
            "key.converter": JSON_CONVERTER,
            "value.converter": JSON_CONVERTER,
            "offset.storage.file.filename": str(self.offsets_file),
            "listeners": f"http://127.0.0.1:{self.port}",
            "rest.advertised.host.name": "127.0.0.1",
            "rest.advertised.port": self.port,
            "rest.advertised.listener": "http",
        }
        props.update(self.extra)
        return props

    def start(self) -> None:
        if self.running:
            return
        self.work_dir.mkdir(parents=True, exist_ok=True)
        for name, config in self.connectors.items():
            self.connector_file(name).write_text(render_properties({"name": name, **config}))
        super().start()

    def launch(self) -> JavaProcess:
        command = [sys.executable, "-m", "pyconnect.cli", "standalone", str(self.config_file)]
        command += [str(self.connector_file(name)) for name in self.connectors]
        return JavaProcess(
            command,
            self.log_file,
            str(self.config_file),
            die_with_parent=self.die_with_parent,
            tag_in_command=True,
        )
