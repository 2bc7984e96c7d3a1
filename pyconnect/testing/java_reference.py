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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyconnect.testing.connect_worker import ConnectWorkerProcess, MirrorMakerProcess, ProcessNotReady
from pyconnect.testing.distribution import DistributionError, KafkaDistribution, ensure_distribution
from pyconnect.testing.java_process import JavaProcess, pid_alive, stop_tagged

CONNECT_MAIN = "org.apache.kafka.connect.cli.ConnectDistributed"
MIRROR_MAKER_MAIN = "org.apache.kafka.connect.mirror.MirrorMaker"
DEFAULT_HEAP = "384m"
READY_TIMEOUT_S = 90.0
STATE_FILE = "java-reference.json"


class JavaReferenceError(ProcessNotReady):
    """A Java process exited or did not become ready; the message carries its log tail."""


@dataclass
class JavaConnectWorker(ConnectWorkerProcess):
    """One Java Connect distributed worker (``ConnectDistributed``) on a free 127.0.0.1 REST port."""

    heap: str = DEFAULT_HEAP
    dist: KafkaDistribution | None = None

    label = "Java Connect worker"

    @property
    def tag(self) -> str:
        return f"java-connect:{self.work_dir}"

    def launch(self) -> JavaProcess:
        dist = self.dist or ensure_distribution()
        cmd = dist.java_command(CONNECT_MAIN, str(self.config_file), heap=self.heap)
        return JavaProcess(cmd, self.log_file, self.tag, die_with_parent=self.die_with_parent)


@dataclass
class JavaMirrorMaker(MirrorMakerProcess):
    """Java MirrorMaker 2 in dedicated mode (``MirrorMaker``) from an ``mm2.properties``.

    ``config`` is either a path to an existing properties file or a mapping rendered to
    ``<work_dir>/mm2.properties``. ``clusters`` becomes ``--clusters`` (the target aliases this node serves).
    """

    heap: str = "512m"
    dist: KafkaDistribution | None = None

    label = "Java MirrorMaker"
    config_error = JavaReferenceError

    @property
    def tag(self) -> str:
        return f"java-mm2:{self.work_dir}"

    def launch(self) -> JavaProcess:
        dist = self.dist or ensure_distribution()
        cmd = dist.java_command(
            MIRROR_MAKER_MAIN, str(self.config_file), *self.cluster_args(), heap=self.heap
        )
        return JavaProcess(cmd, self.log_file, self.tag, die_with_parent=self.die_with_parent)


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
