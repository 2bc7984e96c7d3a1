"""One ``pyconnect distributed`` worker process on a free 127.0.0.1 port: for tests, benchmarks, the demo.

The twin of ``java_reference.JavaConnectWorker`` (same constructor shape, same ``rest``/``wait_ready``/
``stop``/``kill``), so a test can run a fleet of either, or a mixed one. The process is owned by PID
and tagged by its unique ``worker.properties`` path; ``kill()`` is kill -9, ``stop()`` SIGTERM (the
worker commits offsets and leaves the group) with SIGKILL after a bound. ``start()`` after a stop
or kill restarts it on the same port and topics.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyconnect.testing.java_process import JavaProcess
from pyconnect.testing.java_reference import JSON_CONVERTER, http_json
from pyconnect.testing.kafka import free_ports, render_properties

READY_TIMEOUT_S = 60.0


class WorkerProcessError(RuntimeError):
    """The worker exited or did not become ready; the message carries its log tail."""


@dataclass
class PyconnectWorker:
    bootstrap_servers: str
    work_dir: Path
    group_id: str = "connect-cluster"
    config_topic: str | None = None
    offset_topic: str | None = None
    status_topic: str | None = None
    extra: Mapping[str, object] = field(default_factory=dict)
    port: int = 0
    die_with_parent: bool = False
    process: JavaProcess | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.work_dir = Path(self.work_dir).resolve()
        self.config_topic = self.config_topic or f"{self.group_id}-configs"
        self.offset_topic = self.offset_topic or f"{self.group_id}-offsets"
        self.status_topic = self.status_topic or f"{self.group_id}-status"
        if not self.port:
            self.port = free_ports(1)[0]

    @property
    def rest_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def worker_id(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def config_file(self) -> Path:
        return self.work_dir / "worker.properties"

    @property
    def log_file(self) -> Path:
        return self.work_dir / "worker.log"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def running(self) -> bool:
        return bool(self.process and self.process.running)

    def properties(self) -> dict[str, object]:
        props: dict[str, object] = {
            "bootstrap.servers": self.bootstrap_servers,
            "group.id": self.group_id,
            "key.converter": JSON_CONVERTER,
            "value.converter": JSON_CONVERTER,
            "config.storage.topic": self.config_topic,
            "offset.storage.topic": self.offset_topic,
            "status.storage.topic": self.status_topic,
            "config.storage.replication.factor": 1,
            "offset.storage.replication.factor": 1,
            "status.storage.replication.factor": 1,
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
        self.config_file.write_text(render_properties(self.properties()))
        command = [sys.executable, "-m", "pyconnect.cli", "distributed", str(self.config_file)]
        self.process = JavaProcess(
            command,
            self.log_file,
            str(self.config_file),
            die_with_parent=self.die_with_parent,
            tag_in_command=True,
        )
        self.process.start()

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> dict[str, Any]:
        """Poll ``GET /health`` until 200; returns ``GET /``. Fails at once if the process exits."""
        deadline = time.monotonic() + timeout
        last = "no answer yet"
        while True:
            if self.process is None or not self.process.running:
                code = self.process.exit_code() if self.process else None
                raise WorkerProcessError(
                    f"worker {self.worker_id} exited with {code}; log tail:\n{self.log_tail()}"
                )
            try:
                status, body = self.rest("GET", "/health", timeout=5.0)
                if status == 200:
                    return dict(self.rest("GET", "/")[1])
                last = f"HTTP {status}: {body}"
            except OSError as exc:
                last = f"{type(exc).__name__}: {exc}"
            if time.monotonic() >= deadline:
                raise WorkerProcessError(
                    f"worker {self.worker_id} not ready after {timeout:.0f}s ({last}); log tail:\n{self.log_tail()}"
                )
            time.sleep(0.2)

    def rest(
        self, method: str, path: str, body: object | None = None, *, timeout: float = 30.0
    ) -> tuple[int, Any]:
        return http_json(method, self.rest_url.rstrip("/") + path, body, timeout=timeout)

    def stop(self, timeout: float = 30.0) -> None:
        if self.process:
            self.process.stop(timeout)

    def kill(self) -> None:
        if self.process:
            self.process.kill()

    def log_tail(self, lines: int = 40) -> str:
        return self.process.log_tail(lines) if self.process else "(not started)"
