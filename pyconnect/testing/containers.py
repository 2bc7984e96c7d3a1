"""Connect workers in containers: pyconnect's image and the Kafka image's Java worker, as test processes.

``ContainerWorker`` is a ``ConnectWorkerProcess`` (same fields, ``wait_ready``, ``rest``, ``stop``,
``kill``) whose process is ``podman run`` in the foreground: host networking (the worker listens on
127.0.0.1:``port`` as a local one does), ``work_dir`` mounted at the same path (the worker reads the
``worker.properties`` written there), labelled with this process's PID (pyconnect.testing.podman).
podman forwards SIGTERM to the container's ``tini``, which forwards it to the worker: ``stop()`` is the
graceful stop a pod's termination is, and the exit code is the worker's (143 after SIGTERM). ``kill()``
SIGKILLs ``podman run``, and the container is then removed by name. ``command`` overrides what runs
(by default ``distributed <worker.properties>``; with ``java=True`` the Kafka image's
``connect-distributed <worker.properties>``); ``mounts`` adds ``(host path, container path)`` pairs and
``environment`` variables; ``entrypoint`` replaces the image's (then only ``command`` follows it); ``mount_work_dir=False`` keeps
``work_dir`` out of the container (Strimzi's scripts empty ``/tmp``, where a test's directory lives).

:func:`container_pid` and :func:`rss_kib` read the worker's process as the host sees it (the child of
the container's ``tini``).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyconnect.testing.connect_worker import ConnectWorkerProcess
from pyconnect.testing.java_process import JavaProcess
from pyconnect.testing.podman import engine_env, owner_labels, podman, podman_binary


@dataclass
class ContainerWorker(ConnectWorkerProcess):
    image: str = ""
    java: bool = False
    command: Sequence[str] = ()
    mounts: Sequence[tuple[Path, str]] = ()
    environment: Mapping[str, str] = field(default_factory=dict)
    entrypoint: str | None = None
    mount_work_dir: bool = True
    name: str = ""
    cpu_to_ready: float = 0.0

    label = "worker container"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.name = self.name or f"pyconnect-test-{self.port}-{uuid.uuid4().hex[:8]}"

    def prepare(self) -> None:
        super().prepare()
        self.work_dir.chmod(0o777)
        for path in self.work_dir.iterdir():
            if path.is_file():
                path.chmod(0o666)

    def run_args(self) -> list[str]:
        """The ``podman run`` command line (see the module docstring)."""
        args = [podman_binary(), "run", "--rm", "--name", self.name, "--network", "host", "--init=false"]
        for key, value in owner_labels().items():
            args += ["--label", f"{key}={value}"]
        if self.mount_work_dir:
            args += ["-v", f"{self.work_dir}:{self.work_dir}"]
        for host, inside in self.mounts:
            args += ["-v", f"{host}:{inside}:ro"]
        for key, value in self.environment.items():
            args += ["-e", f"{key}={value}"]
        if self.entrypoint is not None:
            args += ["--entrypoint", self.entrypoint]
        args.append(self.image)
        if self.command or self.entrypoint is not None:
            args += list(self.command)
        elif self.java:
            args += ["connect-distributed", str(self.config_file)]
        else:
            args += ["distributed", str(self.config_file)]
        return args

    def launch(self) -> JavaProcess:
        if not self.image:
            raise ValueError("ContainerWorker needs an image (pyconnect.testing.images.ensure_image)")
        return JavaProcess(
            self.run_args(),
            self.log_file,
            self.name,
            env=engine_env(),
            die_with_parent=self.die_with_parent,
            tag_in_command=True,
        )

    def kill(self) -> None:
        super().kill()
        podman("rm", "-f", "-t", "0", self.name, check=False)

    def stop(self, timeout: float = 30.0) -> None:
        super().stop(timeout)
        podman("rm", "-f", "-t", "0", self.name, check=False)

    def inspect(self) -> dict[str, object]:
        """``podman inspect`` of the running container."""
        done = podman("inspect", self.name)
        found: list[dict[str, object]] = json.loads(done.stdout)
        return found[0]


def container_pid(name: str) -> int:
    """The host PID of the container's main program: the child of its ``tini`` (or PID 1 itself)."""
    init = int(podman("inspect", "--format", "{{.State.Pid}}", name).stdout.strip())
    children = Path(f"/proc/{init}/task/{init}/children").read_text().split()
    return int(children[0]) if children else init


def rss_kib(pid: int) -> int:
    """The resident set size of ``pid`` in KiB (``VmRSS``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def start_seconds_since_boot(pid: int) -> float:
    """When ``pid`` started, in seconds since boot (``/proc/<pid>/stat`` field 22)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[19]) / os.sysconf("SC_CLK_TCK")
