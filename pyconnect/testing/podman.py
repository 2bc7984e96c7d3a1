"""The container engine the tests and ``make image`` use: podman, configured by the project's own file.

Contract:
- Every podman call runs with ``CONTAINERS_CONF`` = ``deploy/image/containers.conf`` (runc, cgroupfs,
  host networking, no default ulimits), so nothing under ``/etc`` needs changing.
- :func:`podman` runs one command and returns its ``CompletedProcess``; a missing ``podman`` binary is
  :class:`EngineUnavailable` with one line saying what to install.
- :class:`DockerApiService` is podman's Docker-compatible API on a unix socket (``podman system service``),
  the engine testcontainers talks to. ``start()`` returns at once when something already answers on the
  socket (the one ``make test-containers`` left running), otherwise starts a service owned by this
  process (by PID) and waits, bounded, until it answers ``/_ping``; ``stop()`` ends only a service it
  started.
- Containers are labelled with the PID of the process that started them (:data:`OWNER_LABEL`);
  :func:`remove_orphans` removes only containers so labelled whose owner is gone, by ID. This stands in
  for testcontainers' reaper (Ryuk), which is disabled because its image cannot be pulled here.

Shell::

    python -m pyconnect.testing.podman up      # start the socket service in the background, print DOCKER_HOST
    python -m pyconnect.testing.podman down    # stop the service ``up`` started (by its PID file)
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pyconnect.errors import ConnectError

REPO = Path(__file__).resolve().parents[2]
CONTAINERS_CONF = REPO / "deploy" / "image" / "containers.conf"
DEFAULT_SOCKET = Path("/run/pyconnect-podman/podman.sock")
OWNER_LABEL = "org.pyconnect.test.owner-pid"
SERVICE_READY_TIMEOUT_S = 30.0
INSTALL_HINT = "apt-get install podman buildah mmdebstrap runc uidmap (or run `make test-containers`)"


class EngineUnavailable(ConnectError, RuntimeError):
    """podman is missing or does not answer; the message says what to install or start."""


def engine_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every podman call runs with (the project's containers.conf)."""
    env = dict(os.environ if base is None else base)
    env["CONTAINERS_CONF"] = str(CONTAINERS_CONF)
    return env


def podman_binary() -> str:
    found = shutil.which("podman")
    if not found:
        raise EngineUnavailable(f"podman is not installed: {INSTALL_HINT}")
    return found


def podman(
    *args: str, check: bool = True, capture: bool = True, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``podman ARGS`` with the project's configuration; ``check`` raises on a non-zero exit with
    podman's last error line."""
    done = subprocess.run(
        [podman_binary(), *args],
        env=engine_env(),
        capture_output=capture,
        text=True,
        check=False,
        timeout=timeout,
    )
    if check and done.returncode != 0:
        tail = (done.stderr or "").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise RuntimeError(f"podman {' '.join(args[:2])} failed: {tail[0]}")
    return done


def image_exists(tag: str) -> bool:
    return podman("image", "exists", tag, check=False).returncode == 0


def docker_host(socket_path: Path = DEFAULT_SOCKET) -> str:
    return f"unix://{socket_path}"


def answers(socket_path: Path, timeout: float = 2.0) -> bool:
    """True when a Docker API answers ``GET /_ping`` with 200 on ``socket_path``."""
    if not socket_path.exists():
        return False
    conn = _UnixHTTPConnection(str(socket_path), timeout)
    try:
        conn.request("GET", "/_ping")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


@dataclass
class DockerApiService:
    """podman's Docker API on ``socket_path`` (see the module contract)."""

    socket_path: Path = DEFAULT_SOCKET
    die_with_parent: bool = True
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return docker_host(self.socket_path)

    def start(self) -> str:
        if answers(self.socket_path):
            return self.url
        self.socket_path.parent.mkdir(parents=True, exist_ok=True)
        if self.socket_path.exists():
            self.socket_path.unlink()
        self.process = subprocess.Popen(
            [podman_binary(), "system", "service", "--time=0", self.url],
            env=engine_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent if self.die_with_parent else None,
        )
        deadline = time.monotonic() + SERVICE_READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise EngineUnavailable(f"podman system service exited with {self.process.returncode}")
            if answers(self.socket_path):
                return self.url
            time.sleep(0.2)
        self.stop()
        raise EngineUnavailable(f"podman's Docker API did not answer on {self.socket_path} within 30 s")

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)
        self.process = None


def _die_with_parent() -> None:
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def owner_labels() -> dict[str, str]:
    """Labels that mark a container as started by this process."""
    return {OWNER_LABEL: str(os.getpid())}


def remove_orphans() -> list[str]:
    """Remove (by ID) the containers labelled by a test process that no longer runs; returns their IDs."""
    listed = podman(
        "ps",
        "-a",
        "--filter",
        f"label={OWNER_LABEL}",
        "--format",
        f'{{{{.ID}}}} {{{{index .Labels "{OWNER_LABEL}"}}}}',
    )
    removed = []
    for line in listed.stdout.splitlines():
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            continue
        if not Path(f"/proc/{parts[1]}").exists():
            podman("rm", "-f", "-t", "5", parts[0], check=False)
            removed.append(parts[0])
    return removed


def _pid_file(socket_path: Path) -> Path:
    return socket_path.with_suffix(".pid")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pyconnect.testing.podman")
    parser.add_argument("action", choices=("up", "down"))
    parser.add_argument("--socket", type=Path, default=DEFAULT_SOCKET)
    args = parser.parse_args(argv)
    pid_file = _pid_file(args.socket)
    try:
        if args.action == "up":
            service = DockerApiService(args.socket, die_with_parent=False)
            url = service.start()
            if service.process is not None:
                pid_file.write_text(str(service.process.pid))
            print(f"DOCKER_HOST={url}")
            return 0
        if pid_file.exists():
            pid = int(pid_file.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline")
            if cmdline.exists() and b"system\0service" in cmdline.read_bytes():
                os.kill(pid, signal.SIGTERM)
            pid_file.unlink()
        return 0
    except EngineUnavailable as exc:
        print(f"pyconnect: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
