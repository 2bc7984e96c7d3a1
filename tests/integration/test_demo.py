"""`make demo` end to end: the quick-start command mirrors live records A -> B and Ctrl-C stops it cleanly.

Runs ``python -m pyconnect.testing.demo`` (what ``make demo`` runs) as a child process on its own two
clusters, waits until the live line shows mirrored records, sends SIGINT as a terminal's Ctrl-C would,
and checks the clean exit and the final counts.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.kafka

LIVE = re.compile(r"produced (\d+) \| mirrored (\d+) \| lag (\d+) \| latency p50 (\d+) ms")
FINAL = re.compile(r"Produced (\d+) records to A, (\d+) arrived on B so far\.")


def test_demo_mirrors_live_records_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    out = tmp_path / "demo.out"
    with out.open("wb") as sink:
        demo = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pyconnect.testing.demo",
                "--dir",
                str(tmp_path / "demo"),
                "--rate",
                "100",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            deadline = time.monotonic() + 180
            live: list[tuple[str, ...]] = []
            while time.monotonic() < deadline and demo.poll() is None:
                live = LIVE.findall(out.read_text(errors="replace"))
                if live and int(live[-1][1]) >= 200:
                    break
                time.sleep(1)
            text = out.read_text(errors="replace")
            assert live and int(live[-1][1]) >= 200, f"no live line with mirrored records:\n{text[-3000:]}"
            demo.send_signal(signal.SIGINT)
            assert demo.wait(timeout=120) == 0
        finally:
            if demo.poll() is None:
                demo.kill()
                demo.wait(timeout=30)
    text = out.read_text(errors="replace")
    assert "Creating the mirror through REST" in text and "RUNNING" in text
    produced, arrived = map(int, FINAL.findall(text)[-1])
    assert 200 <= arrived <= produced, text[-2000:]
    assert text.rstrip().endswith("Stopped."), text[-2000:]
