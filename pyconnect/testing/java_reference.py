"""The Java reference implementation, run from the pinned jars: a Connect worker and MirrorMaker 2.

Python::

    worker = JavaConnectWorker("127.0.0.1:9092", Path(dir), group_id="ref-connect")
    worker.start(); worker.wait_ready()
    status, body = worker.rest("GET", "/")          # {"version": "4.3.1", ...}
    worker.stop()

    mm2 = JavaMirrorMaker({"clusters": "A, B", ...}, Path(dir))
    mm2.start(); ...; mm2.stop()

Shell::

    python -m pyconnect.testing.java_reference connect --bootstrap HOST:PORT --dir DIR [--group-id G]
    python -m pyconnect.testing.java_reference mirror-maker --config mm2.properties --dir DIR [--clusters B]
    python -m pyconnect.testing.java_reference down --dir DIR

``connect`` and ``mirror-maker`` start one process, print one JSON line (pid, REST URL, log file) and
return with it running; ``down`` stops what they started in DIR, by PID and ownership tag.

Contract:
- Every process binds to 127.0.0.1 only (the worker's REST listener is ``http://127.0.0.1:<free port>``;
  dedicated MirrorMaker runs without its internal REST server unless the caller enables it).
- Processes are ``JavaProcess`` instances: started in their own session, stopped or killed only by
  PID while they still carry their ownership tag. Tests and the golden capture set ``die_with_parent``
  so the JVMs die with them; the CLI does not (its processes must outlive it).
- Readiness waits are bounded and fail fast, with the log tail, when the process exits.
- HTTP uses the standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyconnect.testing.distribution import DistributionError, KafkaDistribution, ensure_distribution
from pyconnect.testing.java_process import JavaProcess, pid_alive, stop_tagged
from pyconnect.testing.kafka import free_ports, render_properties

CONNECT_MAIN = "org.apache.kafka.connect.cli.ConnectDistributed"
MIRROR_MAKER_MAIN = "org.apache.kafka.connect.mirror.MirrorMaker"
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
DEFAULT_HEAP = "384m"
READY_TIMEOUT_S = 90.0
STATE_FILE = "java-reference.json"


class JavaReferenceError(RuntimeError):
    """A Java reference process did not start or did not become ready; the message carries its log tail."""


@dataclass
class JavaConnectWorker:
    """One Java Connect distributed worker (``ConnectDistributed``) on a free 127.0.0.1 REST port.

    The internal topics default to ``<group_id>-configs``, ``-offsets`` and ``-status`` with
    replication factor 1 (the test clusters have one broker); partitions keep the Java defaults
    (offsets 25, status 5). Converters are ``JsonConverter`` with its defaults. ``extra`` properties
    override everything written here.
    """

    bootstrap_servers: str
    work_dir: Path
    group_id: str = "connect-cluster"
    config_topic: str | None = None
    offset_topic: str | None = None
    status_topic: str | None = None
    extra: Mapping[str, object] = field(default_factory=dict)
    heap: str = DEFAULT_HEAP
    dist: KafkaDistribution | None = None
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
        """The advertised REST URL, as Java puts it in group metadata (with the trailing slash)."""
        return f"http://127.0.0.1:{self.port}/"

    @property
    def config_file(self) -> Path:
        return self.work_dir / "worker.properties"

    @property
    def log_file(self) -> Path:
        return self.work_dir / "worker.log"

    @property
    def tag(self) -> str:
        return f"java-connect:{self.work_dir}"

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
        """Write ``worker.properties`` and launch the worker; returns at once (see ``wait_ready``)."""
        if self.running:
            return
        dist = self.dist or ensure_distribution()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(render_properties(self.properties()))
        cmd = dist.java_command(CONNECT_MAIN, str(self.config_file), heap=self.heap)
        self.process = JavaProcess(cmd, self.log_file, self.tag, die_with_parent=self.die_with_parent)
        self.process.start()

    def wait_ready(self, timeout: float = READY_TIMEOUT_S, *, healthy: bool = True) -> dict[str, Any]:
        """Poll ``GET /`` until it answers 200 (and, with ``healthy``, ``GET /health`` too).

        Returns the ``GET /`` body. Raises JavaReferenceError at once if the process exits, and after
        ``timeout`` seconds otherwise; both carry the log tail.
        """
        deadline = time.monotonic() + timeout
        paths = ["/", "/health"] if healthy else ["/"]
        root: dict[str, Any] = {}
        for path in paths:
            last = "no answer yet"
            while True:
                self._check_alive()
                try:
                    status, body = self.rest("GET", path, timeout=5.0)
                    if status == 200:
                        if path == "/":
                            root = body
                        break
                    last = f"HTTP {status}: {body}"
                except OSError as exc:
                    last = f"{type(exc).__name__}: {exc}"
                if time.monotonic() >= deadline:
                    raise JavaReferenceError(
                        f"Java Connect worker at {self.rest_url} not ready after {timeout:.0f}s "
                        f"(GET {path}: {last}); log tail:\n{self.log_tail()}"
                    )
                time.sleep(0.5)
        return root

    def _check_alive(self) -> None:
        if self.process is None:
            raise JavaReferenceError("Java Connect worker was never started")
        if not self.process.running:
            raise JavaReferenceError(
                f"Java Connect worker exited with {self.process.exit_code()}; log tail:\n{self.log_tail()}"
            )

    def rest(
        self, method: str, path: str, body: object | None = None, *, timeout: float = 30.0
    ) -> tuple[int, Any]:
        """One REST call; returns ``(status, parsed JSON or text or None)`` for every HTTP status.

        Connection errors (worker not listening) propagate as OSError.
        """
        return http_json(method, self.rest_url.rstrip("/") + path, body, timeout=timeout)

    def stop(self, timeout: float = 30.0) -> None:
        if self.process:
            self.process.stop(timeout)

    def kill(self) -> None:
        if self.process:
            self.process.kill()

    def log_tail(self, lines: int = 40) -> str:
        return self.process.log_tail(lines) if self.process else "(not started)"


@dataclass
class JavaMirrorMaker:
    """Java MirrorMaker 2 in dedicated mode (``MirrorMaker``) from an ``mm2.properties``.

    ``config`` is either a path to an existing properties file or a mapping rendered to
    ``<work_dir>/mm2.properties``. ``clusters`` becomes ``--clusters`` (the target aliases this node serves).
    """

    config: Path | Mapping[str, object]
    work_dir: Path
    clusters: Sequence[str] = ()
    heap: str = "512m"
    dist: KafkaDistribution | None = None
    die_with_parent: bool = False
    process: JavaProcess | None = field(default=None, init=False, repr=False)

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
        return f"java-mm2:{self.work_dir}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def running(self) -> bool:
        return bool(self.process and self.process.running)

    def start(self) -> None:
        if self.running:
            return
        dist = self.dist or ensure_distribution()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        if isinstance(self.config, Mapping):
            self.config_file.write_text(render_properties(self.config))
        elif not self.config_file.exists():
            raise JavaReferenceError(f"no MirrorMaker config at {self.config_file}")
        args = [str(self.config_file)]
        if self.clusters:
            args += ["--clusters", *self.clusters]
        cmd = dist.java_command(MIRROR_MAKER_MAIN, *args, heap=self.heap)
        self.process = JavaProcess(cmd, self.log_file, self.tag, die_with_parent=self.die_with_parent)
        self.process.start()

    def check_alive(self) -> None:
        """Raise JavaReferenceError (with the log tail) if the process has exited."""
        if self.process is None:
            raise JavaReferenceError("Java MirrorMaker was never started")
        if not self.process.running:
            raise JavaReferenceError(
                f"Java MirrorMaker exited with {self.process.exit_code()}; log tail:\n{self.log_tail()}"
            )

    def stop(self, timeout: float = 30.0) -> None:
        if self.process:
            self.process.stop(timeout)

    def kill(self) -> None:
        if self.process:
            self.process.kill()

    def log_tail(self, lines: int = 40) -> str:
        return self.process.log_tail(lines) if self.process else "(not started)"


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


def _record(base_dir: Path, entry: dict[str, Any]) -> None:
    path = base_dir / STATE_FILE
    entries = json.loads(path.read_text()) if path.exists() else []
    entries.append(entry)
    path.write_text(json.dumps(entries, indent=2) + "\n")


def down(base_dir: Path, timeout: float = 30.0) -> list[int]:
    """Stop every process the CLI recorded in ``base_dir``; return the PIDs that were signalled."""
    path = base_dir / STATE_FILE
    if not path.exists():
        raise FileNotFoundError(f"no {STATE_FILE} in {base_dir}: nothing was started there")
    stopped = []
    for entry in json.loads(path.read_text()):
        pid, tag = entry.get("pid"), entry.get("tag")
        if pid and tag and pid_alive(pid):
            stop_tagged(pid, tag, timeout)
            stopped.append(pid)
    return stopped


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pyconnect.testing.java_reference", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("connect", help="start a Java Connect distributed worker and wait until it answers")
    c.add_argument("--bootstrap", required=True, help="bootstrap servers of the worker's Kafka cluster")
    c.add_argument("--dir", required=True, type=Path)
    c.add_argument("--group-id", default="connect-cluster")
    c.add_argument("--heap", default=DEFAULT_HEAP)
    c.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra worker property")
    m = sub.add_parser("mirror-maker", help="start Java MirrorMaker 2 in dedicated mode")
    m.add_argument("--config", required=True, type=Path, help="mm2.properties")
    m.add_argument("--dir", required=True, type=Path)
    m.add_argument("--clusters", default="", help="comma-separated target aliases (default: all)")
    d = sub.add_parser("down", help="stop the processes started in --dir")
    d.add_argument("--dir", required=True, type=Path)
    args = parser.parse_args(argv)
    base = args.dir.resolve()
    try:
        if args.command == "connect":
            extra = dict(kv.split("=", 1) for kv in args.set)
            worker = JavaConnectWorker(
                args.bootstrap,
                base / f"connect-{args.group_id}",
                group_id=args.group_id,
                extra=extra,
                heap=args.heap,
            )
            worker.start()
            try:
                worker.wait_ready()
            except BaseException:
                worker.stop(10)
                raise
            _record(base, {"kind": "connect", "pid": worker.pid, "tag": worker.tag})
            print(
                json.dumps({"pid": worker.pid, "rest_url": worker.rest_url, "log": str(worker.log_file)}),
                flush=True,
            )
        elif args.command == "mirror-maker":
            clusters = [a.strip() for a in args.clusters.split(",") if a.strip()]
            mm2 = JavaMirrorMaker(args.config, base / "mirror-maker", clusters=clusters)
            mm2.start()
            time.sleep(2)
            mm2.check_alive()
            _record(base, {"kind": "mirror-maker", "pid": mm2.pid, "tag": mm2.tag})
            print(json.dumps({"pid": mm2.pid, "rest_url": None, "log": str(mm2.log_file)}), flush=True)
        elif args.command == "down":
            print(f"stopped {len(down(base))} Java process(es)")
    except (DistributionError, JavaReferenceError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main())
