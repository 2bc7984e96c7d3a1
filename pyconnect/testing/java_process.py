"""One Java process started from the fetched Kafka jars, owned and stopped by PID.

Contract:
- ``start()`` launches the command in its own session (so a Ctrl-C aimed at the caller does not hit
  it, and it outlives a CLI that returns), with stdout and stderr appended to ``log_file``.
- Every Java command carries ``-Dpyconnect.process=<tag>`` (other programs, ``tag_in_command``, carry
  the tag as one of their own arguments, e.g. a unique config path); ``stop``/``kill`` signal a PID only while its
  ``/proc/<pid>/cmdline`` still holds that tag, so a recycled PID is never signalled.
- With ``die_with_parent`` the kernel SIGKILLs the process when the Python process that started it
  exits (Linux ``PR_SET_PDEATHSIG``), so a test run that is itself killed leaves no brokers behind.
  The cluster CLI's ``up`` does not set it: there the brokers must outlive the command. The signal
  follows the starting *thread*: start such processes from a thread that lives as long as they should.
- ``stop()`` sends SIGTERM and waits up to ``timeout`` seconds, then SIGKILLs; ``kill()`` is kill -9.
  Both are idempotent.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

TAG_PROPERTY = "-Dpyconnect.process="


def tagged(command: list[str], tag: str) -> list[str]:
    """Insert the ownership tag right after the java executable."""
    return [command[0], f"{TAG_PROPERTY}{tag}", *command[1:]]


_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """preexec hook: ask the kernel to SIGKILL this child when its parent exits (Linux only)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def pid_has_tag(pid: int, tag: str) -> bool:
    """The process carries ``tag``: as ``-Dpyconnect.process=<tag>`` (Java) or as an argument itself."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    args = cmdline.split(b"\0")
    return f"{TAG_PROPERTY}{tag}".encode() in args or tag.encode() in args


def pid_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    state = stat.rsplit(")", 1)[1].split()[0]
    return state != "Z"


def signal_tagged(pid: int, tag: str, sig: int) -> bool:
    """Send ``sig`` to ``pid`` if it is still the process carrying ``tag``; True when sent."""
    if not pid_has_tag(pid, tag):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
        return True
    return False


def stop_tagged(pid: int, tag: str, timeout: float = 20.0) -> None:
    """SIGTERM, wait up to ``timeout`` seconds, then SIGKILL; returns once the process is gone."""
    if not signal_tagged(pid, tag, signal.SIGTERM):
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return
        time.sleep(0.1)
    signal_tagged(pid, tag, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


@dataclass
class JavaProcess:
    """A Java main class run from the fetched jars, with its log file and ownership tag."""

    command: list[str]
    log_file: Path
    tag: str
    env: dict[str, str] | None = None
    die_with_parent: bool = False
    tag_in_command: bool = False
    _popen: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen else None

    def start(self) -> None:
        if self.running:
            return
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.pop("JAVA_TOOL_OPTIONS", None)
        if self.env:
            env.update(self.env)
        with open(self.log_file, "ab") as log:
            self._popen = subprocess.Popen(
                self.command if self.tag_in_command else tagged(self.command, self.tag),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=env,
                preexec_fn=_die_with_parent if self.die_with_parent else None,
            )

    @property
    def running(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    def exit_code(self) -> int | None:
        return self._popen.poll() if self._popen else None

    def stop(self, timeout: float = 20.0) -> None:
        if self._popen is None:
            return
        if self._popen.poll() is None:
            stop_tagged(self._popen.pid, self.tag, timeout)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(timeout=10)

    def kill(self) -> None:
        """kill -9, as a crash would."""
        if self._popen is None or self._popen.poll() is not None:
            return
        signal_tagged(self._popen.pid, self.tag, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(timeout=10)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"
