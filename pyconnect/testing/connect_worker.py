"""What every process the tests start has in common, and what every Connect worker process shares.

``OwnedProcess``: one tagged ``JavaProcess`` (any program) owned by PID: ``pid``, ``running``,
``start`` (``prepare`` what it reads, then ``launch`` it), ``stop`` (SIGTERM, SIGKILL after a bound),
``kill`` (-9), ``log_tail`` and ``check_alive``. Every log it launches is watched for leak reports
(``leaks.PROCESS_LOGS``; the test suite fails on them).

``ConnectWorkerProcess``: a distributed Connect worker (Java or pyconnect) on a free 127.0.0.1 REST
port with its ``worker.properties``: the internal topics default to ``<group_id>-configs``,
``-offsets`` and ``-status`` with replication factor 1, converters are ``JsonConverter``, and
``extra`` overrides everything. ``wait_ready`` polls ``GET /`` and ``GET /health`` with a deadline
and fails at once, with the log tail, if the process exits. Subclasses say how to launch it.
HTTP uses the standard library only.

``MirrorMakerProcess``: a dedicated MirrorMaker 2 (Java or pyconnect) run from an ``mm2.properties``.
``config`` is a path to an existing file or a mapping rendered to ``<work_dir>/mm2.properties``
(ISO-8859-1, the encoding both read properties in); ``clusters`` becomes ``--clusters``. Its log,
``<work_dir>/mirror-maker.log``, is appended to across restarts: ``log_since_start`` is what the
current run wrote, and ``wait_started`` waits (bounded, failing at once with the log tail if the
process exits) for that run's ``Kafka MirrorMaker started``. Subclasses say how to launch it.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyconnect.errors import ConnectError
from pyconnect.testing.java_process import JavaProcess
from pyconnect.testing.kafka import free_ports, render_properties
from pyconnect.testing.leaks import PROCESS_LOGS

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
READY_TIMEOUT_S = 90.0
MIRROR_MAKER_STARTED = "Kafka MirrorMaker started"
"""What Java's and pyconnect's dedicated MirrorMaker log once every herder started."""


class ProcessNotReady(ConnectError, RuntimeError):
    """A started process exited or did not become ready in time; the message carries its log tail."""


@dataclass
class OwnedProcess:
    process: JavaProcess | None = field(default=None, init=False, repr=False)

    label = "process"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def running(self) -> bool:
        return bool(self.process and self.process.running)

    def check_alive(self) -> None:
        """Raise ProcessNotReady (with the log tail) if the process was never started or has exited."""
        if self.process is None:
            raise ProcessNotReady(f"{self.label} was never started")
        if not self.process.running:
            raise ProcessNotReady(
                f"{self.label} exited with {self.process.exit_code()}; log tail:\n{self.log_tail()}"
            )

    def stop(self, timeout: float = 30.0) -> None:
        if self.process:
            self.process.stop(timeout)

    def kill(self) -> None:
        if self.process:
            self.process.kill()

    def log_tail(self, lines: int = 40) -> str:
        return self.process.log_tail(lines) if self.process else "(not started)"

    def prepare(self) -> None:
        """Write what the process reads at launch (its config); called by ``start``."""

    def launch(self) -> JavaProcess:
        """The process to run (subclasses: which program, which arguments, which tag)."""
        raise NotImplementedError

    def start(self) -> None:
        """``prepare``, then launch; returns at once, and does nothing while the process runs."""
        if self.running:
            return
        self.prepare()
        self.process = self.launch()
        PROCESS_LOGS.watch(self.process.log_file)
        self.process.start()


@dataclass
class ConnectWorkerProcess(OwnedProcess):
    bootstrap_servers: str = ""
    work_dir: Path = Path(".")
    group_id: str = "connect-cluster"
    config_topic: str | None = None
    offset_topic: str | None = None
    status_topic: str | None = None
    extra: Mapping[str, object] = field(default_factory=dict)
    port: int = 0
    die_with_parent: bool = False

    def __post_init__(self) -> None:
        self.work_dir = Path(self.work_dir).resolve()
        self.config_topic = self.config_topic or f"{self.group_id}-configs"
        self.offset_topic = self.offset_topic or f"{self.group_id}-offsets"
        self.status_topic = self.status_topic or f"{self.group_id}-status"
        if not self.port:
            self.port = free_ports(1)[0]

    @property
    def rest_url(self) -> str:
        """The advertised REST URL, as it appears in group metadata (with the trailing slash)."""
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

    def prepare(self) -> None:
        """Write ``worker.properties`` (``start`` then launches the worker; see ``wait_ready``)."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(render_properties(self.properties()))

    def wait_ready(
        self, timeout: float = READY_TIMEOUT_S, *, healthy: bool = True, interval: float = 0.2
    ) -> dict[str, Any]:
        """Poll ``GET /`` until 200 (and, with ``healthy``, ``GET /health`` too) every ``interval``
        seconds; returns the ``GET /`` body."""
        deadline = time.monotonic() + timeout
        root: dict[str, Any] = {}
        for path in ["/", "/health"] if healthy else ["/"]:
            last = "no answer yet"
            while True:
                self.check_alive()
                try:
                    status, body = self.rest("GET", path, timeout=5.0)
                    if status == 200:
                        root = body if path == "/" else root
                        break
                    last = f"HTTP {status}: {body}"
                except OSError as exc:
                    last = f"{type(exc).__name__}: {exc}"
                if time.monotonic() >= deadline:
                    raise ProcessNotReady(
                        f"{self.label} at {self.rest_url} not ready after {timeout:.0f}s (GET {path}: {last}); "
                        f"log tail:\n{self.log_tail()}"
                    )
                time.sleep(interval)
        return root

    def rest(
        self, method: str, path: str, body: object | None = None, *, timeout: float = 30.0
    ) -> tuple[int, Any]:
        """One REST call; ``(status, parsed JSON or text or None)`` for every HTTP status.

        Connection errors (worker not listening) propagate as OSError.
        """
        return http_json(method, self.rest_url.rstrip("/") + path, body, timeout=timeout)


@dataclass
class MirrorMakerProcess(OwnedProcess):
    config: Path | Mapping[str, object] = field(default_factory=dict)
    work_dir: Path = Path(".")
    clusters: Sequence[str] = ()
    die_with_parent: bool = False
    _log_offset: int = field(default=0, init=False, repr=False)

    label = "MirrorMaker"
    config_error = ProcessNotReady
    """Raised by ``start`` when ``config`` names a file that does not exist."""

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

    def cluster_args(self) -> list[str]:
        """``--clusters A B`` for the target aliases this node serves; nothing when it serves all."""
        return ["--clusters", *self.clusters] if self.clusters else []

    def prepare(self) -> None:
        """Write the config when given as a mapping and mark where this run's log starts (``start``
        then launches; see ``wait_started``)."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        if isinstance(self.config, Mapping):
            self.config_file.write_text(render_properties(self.config), encoding="iso-8859-1")
        elif not self.config_file.exists():
            raise self.config_error(f"no MirrorMaker config at {self.config_file}")
        self._log_offset = self.log_file.stat().st_size if self.log_file.exists() else 0

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
        while MIRROR_MAKER_STARTED not in self.log_since_start():
            self.check_alive()
            if time.monotonic() >= deadline:
                raise ProcessNotReady(
                    f"{self.label} did not start within {timeout:.0f}s; log tail:\n{self.log_tail()}"
                )
            time.sleep(0.2)


def http_json(method: str, url: str, body: object | None = None, *, timeout: float = 30.0) -> tuple[int, Any]:
    """``(status, body)`` of one HTTP request with an optional JSON body; JSON answers are parsed."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method.upper())
    req.add_header("Accept", "application/json")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, _decode(resp.read())
    except urllib.error.HTTPError as err:
        with err:
            return err.code, _decode(err.read())


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")


def group_leader_url(bootstrap_servers: str, group_id: str, *, timeout_s: float = 15.0) -> str | None:
    """The Connect group leader's REST URL, read from a member's assignment via DescribeGroups.

    None when the group has no stable assignment yet. Fault tests use it to kill a follower: killing
    the leader takes another path in incremental cooperative rebalancing (the new leader holds no
    previous assignment, so lost work is reassigned without the scheduled delay, in Java too).
    """
    import asyncio

    from pyconnect.kafka.group_member import describe_group
    from pyconnect.protocol.connect_assignment import decode_assignment
    from pyconnect.protocol.primitives import ProtocolError

    described = asyncio.run(
        describe_group({"bootstrap.servers": bootstrap_servers}, group_id, timeout_s=timeout_s)
    )
    for member in described["members"]:
        try:
            assignment = decode_assignment(bytes(member["assignment"]))
        except ProtocolError:
            continue
        if assignment.leader_url:
            return assignment.leader_url
    return None
