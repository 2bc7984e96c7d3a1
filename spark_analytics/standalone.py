"""A Spark standalone cluster on this machine: one master and N workers, from the installed PySpark.

Contract:

- :func:`standalone_cluster` starts ``org.apache.spark.deploy.master.Master`` and ``workers`` times
  ``org.apache.spark.deploy.worker.Worker`` through the installed PySpark's own ``bin/spark-class`` (the
  pip package has no ``sbin/start-master.sh``), each a child process of this one whose PID is kept. All
  bind to 127.0.0.1 on free ports (the web UIs too, ``SPARK_LOCAL_IP``); each worker offers ``cores``
  cores and ``memory`` of executor memory. It yields a :class:`StandaloneCluster` once the master's
  JSON status lists every worker ``ALIVE`` (bounded by ``timeout_s``, else :class:`ClusterError` with the
  logs' tails). On exit every process it started is stopped by PID: SIGTERM, then SIGKILL after
  :data:`STOP_TIMEOUT_S`. Logs go to files in ``work_dir``.
- Executors run ``python`` (default: this interpreter) with the environment given in ``env`` plus
  loopback binding; nothing of this checkout is put on their path, so a job must ship its code
  (``--py-files``, see :mod:`spark_analytics.job_package`).

``python -m spark_analytics.standalone --work-dir DIR`` runs one until interrupted and prints its URL.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from spark_analytics.packages import SparkPackageError, pyspark_jars_dir

STOP_TIMEOUT_S = 20.0
_POLL_S = 0.5
_LOG_TAIL = 800


class ClusterError(RuntimeError):
    """The cluster did not come up; the message names the process and the tail of its log."""


@dataclass(frozen=True)
class StandaloneCluster:
    """A running cluster: ``master_url`` is ``spark://127.0.0.1:PORT``; ``pids`` master first."""

    master_url: str
    web_url: str
    pids: tuple[int, ...]
    work_dir: Path

    def status(self, timeout_s: float = 5.0) -> dict[str, object]:
        """The master's JSON status (``workers``, ``activeapps``, ``completedapps``, ...)."""
        with urllib.request.urlopen(f"{self.web_url}/json/", timeout=timeout_s) as response:
            body = json.loads(response.read().decode())
        assert isinstance(body, dict)
        return body


def spark_home() -> Path:
    """The installed PySpark's folder, which holds ``bin/spark-class`` and ``jars``."""
    return pyspark_jars_dir().parent


def spark_script(name: str) -> Path:
    """``bin/<name>`` of the installed PySpark (``spark-class``, ``spark-submit``)."""
    script = spark_home() / "bin" / name
    if not script.exists():
        raise SparkPackageError(f"{script} is missing: reinstall pyspark (pip install '.[spark]')")
    return script


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def loopback_env(python: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of the cluster's processes: loopback binding, ``python`` for the executors, no
    ``PYTHONPATH`` inherited from the caller."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_GATEWAY_PORT")}
    env.update(
        {
            "SPARK_HOME": str(spark_home()),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_MASTER_HOST": "127.0.0.1",
            "PYSPARK_PYTHON": python,
            "SPARK_NO_DAEMONIZE": "1",
        }
    )
    env.update(extra or {})
    return env


def _tail(path: Path) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return " | ".join(text[-_LOG_TAIL:].strip().splitlines()[-6:])


def stop_pid(proc: subprocess.Popen[bytes], timeout_s: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM ``proc`` (one we started), wait, SIGKILL if it is still there."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout_s)


@contextlib.contextmanager
def standalone_cluster(
    work_dir: Path,
    *,
    workers: int = 2,
    cores: int = 1,
    memory: str = "512m",
    python: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float = 90.0,
) -> Iterator[StandaloneCluster]:
    """Start a master and ``workers`` workers, yield the cluster, stop them all (see module docstring)."""
    spark_class = str(spark_script("spark-class"))
    work_dir.mkdir(parents=True, exist_ok=True)
    environment = loopback_env(python or sys.executable, env)
    environment["SPARK_DAEMON_MEMORY"] = environment.get("SPARK_DAEMON_MEMORY", "256m")
    port, web_port = free_port(), free_port()
    master_url, web_url = f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{web_port}"
    procs: list[tuple[str, subprocess.Popen[bytes], Path]] = []

    def start(name: str, args: list[str]) -> None:
        log = work_dir / f"{name}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [spark_class, *args],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=environment,
                cwd=work_dir,
            )
        procs.append((name, proc, log))

    try:
        start(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                *("--host", "127.0.0.1", "--port", str(port), "--webui-port", str(web_port)),
            ],
        )
        for i in range(workers):
            worker_dir = work_dir / f"worker-{i}"
            worker_dir.mkdir(exist_ok=True)
            start(
                f"worker-{i}",
                [
                    "org.apache.spark.deploy.worker.Worker",
                    *("--host", "127.0.0.1", "--cores", str(cores), "--memory", memory),
                    *("--webui-port", str(free_port()), "--work-dir", str(worker_dir), master_url),
                ],
            )
        cluster = StandaloneCluster(master_url, web_url, tuple(p.pid for _, p, _ in procs), work_dir)
        deadline = time.monotonic() + timeout_s
        alive = 0
        while True:
            for name, proc, log in procs:
                if proc.poll() is not None:
                    raise ClusterError(f"Spark {name} exited with {proc.returncode}: {_tail(log)}")
            with contextlib.suppress(OSError, ValueError):
                listed = cluster.status(timeout_s=2.0).get("workers")
                alive = sum(
                    1 for w in (listed if isinstance(listed, list) else []) if w.get("state") == "ALIVE"
                )
                if alive >= workers:
                    break
            if time.monotonic() > deadline:
                raise ClusterError(
                    f"only {alive} of {workers} Spark workers registered with {master_url} within "
                    f"{timeout_s:.0f} s: {_tail(procs[-1][2])}"
                )
            time.sleep(_POLL_S)
        yield cluster
    finally:
        for _, proc, _ in reversed(procs):
            stop_pid(proc)


def _main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m spark_analytics.standalone")
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    try:
        with standalone_cluster(args.work_dir, workers=args.workers) as cluster:
            print(f"{cluster.master_url} (status {cluster.web_url}); Ctrl-C stops it", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                while True:
                    time.sleep(3600)
    except (ClusterError, SparkPackageError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
