"""Where a pyconnect worker spends its CPU: py-spy attached by PID, its folded stacks, and their summary.

``PySpyRecorder`` runs ``py-spy record --format raw --function`` against one worker PID (an owned
process, ``die_with_parent``, stopped by PID: SIGINT makes py-spy write its file, SIGKILL after a
bound). py-spy leaves idle samples out (a thread blocked in ``epoll`` is idle), so the shares below
are shares of the CPU the worker used, not of wall time. With ``--function`` a frame is one function
(``name (file:first line)``), so the self and cumulative shares are per function.

``summarize`` turns the folded stacks into the figures of the report: the functions with the most
self samples (the sample's innermost frame) and the most cumulative samples (anywhere on the stack,
counted once per sample), and self samples by package. Paths are made relative (site-packages and the
standard library are cut off, project files start at their package) so a stored profile names no
machine path. Pure functions except the recorder, so the summary is unit-tested.
"""

from __future__ import annotations

import re
import shutil
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyconnect.testing.java_process import JavaProcess, signal_tagged

PROJECT_PACKAGES = ("pyconnect", "connectors", "benchmarks", "spark_analytics")
_FRAME = re.compile(r"^(?P<name>.*) \((?P<path>[^()]*?)(?::(?P<line>\d+))?\)$")
_ADDRESS = re.compile(r"^0x[0-9a-fA-F]+$")
_LIBRARY_ROOT = re.compile(r"^.*/(?:site-packages|dist-packages|lib/python3\.\d+)/")


def py_spy_executable() -> str | None:
    """The ``py-spy`` next to this interpreter (the venv's), else on PATH; None when not installed."""
    beside = Path(sys.executable).parent / "py-spy"
    if beside.exists():
        return str(beside)
    return shutil.which("py-spy")


@dataclass
class PySpyRecorder:
    """``py-spy record`` of one PID into ``output`` (folded stacks) at ``rate_hz`` until ``stop()``."""

    pid: int
    output: Path
    rate_hz: int = 100
    executable: str | None = None
    native: bool = False
    _process: JavaProcess | None = None

    def start(self) -> None:
        exe = self.executable or py_spy_executable()
        if exe is None:
            raise RuntimeError("py-spy is not installed (pip install -e '.[bench]')")
        self.output.parent.mkdir(parents=True, exist_ok=True)
        self.output.unlink(missing_ok=True)
        command = [
            exe,
            "record",
            "--pid",
            str(self.pid),
            "--rate",
            str(self.rate_hz),
            "--format",
            "raw",
            "--function",
            "--output",
            str(self.output),
        ]
        if self.native:
            command.append("--native")  # C frames too: where the time inside uvloop and buffers goes
        self._process = JavaProcess(
            command,
            self.output.with_suffix(".log"),
            str(self.output),
            die_with_parent=True,
            tag_in_command=True,
        )
        self._process.start()
        time.sleep(0.5)
        if not self._process.running:
            raise RuntimeError(f"py-spy exited at once: {self._process.log_tail(5)}")

    def stop(self, timeout: float = 30.0) -> str:
        """Stop sampling (SIGINT: py-spy writes its file) and return the folded stacks it wrote."""
        process = self._process
        if process is None:
            raise RuntimeError("py-spy was not started")
        if process.running and process.pid is not None:
            signal_tagged(process.pid, str(self.output), signal.SIGINT)
            deadline = time.monotonic() + timeout
            while process.running and time.monotonic() < deadline:
                time.sleep(0.1)
        process.stop(10)
        if not self.output.exists():
            raise RuntimeError(f"py-spy wrote no profile: {process.log_tail(5)}")
        return self.output.read_text()


def short_path(path: str) -> str:
    """A frame's file path without machine folders: from the package for libraries and project files."""
    if not path.startswith("/"):
        return path
    cut = _LIBRARY_ROOT.sub("", path)
    if cut != path:
        return cut
    parts = path.split("/")
    for i, part in enumerate(parts):
        if part in PROJECT_PACKAGES:
            return "/".join(parts[i:])
    return "/".join(parts[-2:])


def clean_frame(frame: str) -> str:
    """A frame without machine folders; a native frame py-spy could not name (an address inside a
    library, with ``--native``) is named ``unnamed code`` so that its samples add up per library."""
    match = _FRAME.match(frame)
    if not match:
        return frame
    line = f":{match['line']}" if match["line"] else ""
    name = "unnamed code" if _ADDRESS.match(match["name"]) else match["name"]
    return f"{name} ({short_path(match['path'])}{line})"


def parse_folded(text: str) -> Counter[tuple[str, ...]]:
    """``{stack (root first): samples}`` from py-spy's raw output (``frame;frame;... count`` lines).

    A frame of generated code (file ``<string>``: dataclass and namedtuple ``__init__``) is named after
    its caller, ``__init__ (generated) <- caller (caller's file:line)``, so its cost shows where it is
    incurred rather than pooled over every dataclass.
    """
    stacks: Counter[tuple[str, ...]] = Counter()
    for line in text.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [clean_frame(f) for f in stack.split(";")]
        for i in range(1, len(frames)):
            match = _FRAME.match(frames[i])
            if match and match["path"].startswith("<"):
                name = match["name"].rsplit(".", 1)[-1]
                frames[i] = f"{name} (generated) <- {frames[i - 1]}"
        stacks[tuple(frames)] += int(count)
    return stacks


def render_folded(stacks: Counter[tuple[str, ...]]) -> str:
    """Folded stacks back as text (the stored raw profile: speedscope and flamegraph.pl read it)."""
    return "".join(f"{';'.join(stack)} {count}\n" for stack, count in sorted(stacks.items()))


def package_of(frame: str) -> str:
    """The package a frame belongs to: two levels for project code (``pyconnect/kafka``), else the top."""
    match = _FRAME.match(frame)
    path = match["path"] if match else frame
    parts = path.split("/")
    if parts[0] in PROJECT_PACKAGES and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0].removesuffix(".py")


def summarize(stacks: Counter[tuple[str, ...]], top: int = 15) -> dict[str, Any]:
    """Top functions by self and by cumulative share (percent of samples), and self share by package.

    ``top_cumulative`` leaves out frames present in at least 99 % of the samples (the interpreter's
    and event loop's entry frames) and lists them under ``ubiquitous``.
    """
    total = sum(stacks.values())
    if total == 0:
        return {"samples": 0, "top_self": [], "top_cumulative": [], "by_package": [], "ubiquitous": []}
    own: Counter[str] = Counter()
    cumulative: Counter[str] = Counter()
    packages: Counter[str] = Counter()
    for stack, count in stacks.items():
        own[stack[-1]] += count
        packages[package_of(stack[-1])] += count
        for frame in set(stack):
            cumulative[frame] += count

    def pct(n: int) -> float:
        return round(100.0 * n / total, 1)

    def entry(frame: str) -> dict[str, Any]:
        return {"function": frame, "self_pct": pct(own[frame]), "cumulative_pct": pct(cumulative[frame])}

    ubiquitous = {f for f, n in cumulative.items() if n >= 0.99 * total}
    return {
        "samples": total,
        "top_self": [entry(f) for f, _ in own.most_common(top)],
        "top_cumulative": [
            entry(f)
            for f, _ in sorted(cumulative.items(), key=lambda kv: (-kv[1], kv[0]))
            if f not in ubiquitous
        ][:top],
        "by_package": [{"package": p, "self_pct": pct(n)} for p, n in packages.most_common(top)],
        "ubiquitous": sorted(ubiquitous),
    }
