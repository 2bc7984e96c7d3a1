"""`make demo` end to end: the quick-start command mirrors live records A -> B, plays its failover
drill, and Ctrl-C stops it cleanly.

Runs ``python -m pyconnect.testing.demo`` (what ``make demo`` runs) as a child process on its own two
clusters:
- without the drill: waits until the live line shows mirrored records, sends SIGINT as a terminal's
  Ctrl-C would, and checks the clean exit and the final counts;
- with the drill after 8 s (``make test``; 15 s in ``make chaos``): the application's group moves from
  A to B at its translated offsets and the demo reports 0 records re-read and 0 lost; then the way back:
  A returns, ``pyconnect failback`` finds the 60 records A took after the mirror's last copy, and over
  the round trip A -> B -> A the application re-reads 0, loses 0 and reads no orphan; the demo ends by
  itself. The live line shows the group-sync staleness, and the drill waits until B's copy of the
  group's offsets is the position the application committed on A before A fails.
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
RESUMED = re.compile(
    r"resumed on B at its translated offsets: it read (\d+) records there, re-read (\d+), lost (\d+) "
    r"\(of (\d+) produced\)"
)
ROUND_TRIP = re.compile(
    r"Round trip A -> B -> A: read (\d+), re-read (\d+), lost (\d+), orphans read (\d+)\."
)
ORPHANS_FOUND = re.compile(r"The failback found (\d+) orphans on A")
STALENESS = re.compile(r"\| group sync on B (-|(>=)?\d+ behind)")
MEASURED = re.compile(r"\| group sync on B (>=)?\d+ behind")
SYNCED = "group sync on B: the group's offsets on B are its position on A, 0 records behind"
URLS = re.compile(r"Mirror status page: (http://127\.0\.0\.1:\d+/)mirrors/ui   metrics: \1metrics")


def start_demo(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[bytes], Path]:
    out = tmp_path / "demo.out"
    with out.open("wb") as sink:  # the child keeps its own descriptor
        demo = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pyconnect.testing.demo",
                "--dir",
                str(tmp_path / "demo"),
                "--rate",
                "100",
                *extra,
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    return demo, out


def test_demo_mirrors_live_records_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    demo, out = start_demo(tmp_path, "--failover-after", "0")
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
    assert URLS.search(text), text[-2000:]
    produced, arrived = map(int, FINAL.findall(text)[-1])
    assert 200 <= arrived <= produced, text[-2000:]
    assert "Failover drill" not in text
    assert text.rstrip().endswith("Stopped."), text[-2000:]


def run_drill(tmp_path: Path, failover_after: int, *extra: str) -> str:
    demo, out = start_demo(tmp_path, "--failover-after", str(failover_after), *extra)
    try:
        assert demo.wait(timeout=300) == 0, out.read_text(errors="replace")[-3000:]
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait(timeout=30)
    return out.read_text(errors="replace")


def check_drill(text: str, *, measured: bool, audited: bool) -> None:
    """The drill's verdict is 0 and 0; the live line has its group-sync field (``measured``: with a
    number at least once; a short live phase may end before the first checkpoint)."""
    resumed = RESUMED.search(text)
    assert resumed, text[-3000:]
    read_on_b, reread, lost, produced = map(int, resumed.groups())
    print(
        f"\ndrill: {produced} produced, {read_on_b} read on B after the move, {reread} re-read, {lost} lost"
    )
    assert (reread, lost) == (0, 0), text[-3000:]
    assert 0 < read_on_b < produced, text[-3000:]
    assert STALENESS.search(text), text[-3000:]
    assert MEASURED.search(text) or not measured, text[-3000:]
    assert SYNCED in text, text[-3000:]
    assert text.index(SYNCED) < text.index("A fails: cluster A's brokers stop.")
    assert "Unable connect" not in text and "Traceback" not in text, text[-3000:]
    assert text.rstrip().endswith("Stopped."), text[-2000:]
    check_way_back(text, audited=audited)


def check_way_back(text: str, *, audited: bool) -> None:
    """After the drill the way back: the failback finds the records A took after the mirror's last copy
    (the demo writes 60), over the round trip the application re-reads, loses and reads no orphan, and the
    failback's closing audit passes with exactly those orphans on A alone."""
    found, trip = ORPHANS_FOUND.search(text), ROUND_TRIP.search(text)
    assert found and trip, text[-3000:]
    read, reread, lost, orphans_read = map(int, trip.groups())
    print(f"way back: {found.group(1)} orphans, round trip read {read}, re-read {reread}, lost {lost}")
    assert int(found.group(1)) == 60 and (reread, lost, orphans_read) == (0, 0, 0) and read > 0, text[-3000:]
    assert text.index("A comes back") > text.index("A fails: cluster A's brokers stop.")
    if audited:
        assert "audit of A->B: PASS" in text and "(the 60 orphans)" in text, text[-3000:]
    else:
        assert "audit of A->B" not in text, text[-3000:]


def test_demo_failover_drill_rereads_and_loses_nothing(tmp_path: Path) -> None:
    """The short drill, without the failback's Spark audit (its long sibling below runs it)."""
    check_drill(run_drill(tmp_path, 8, "--no-audit"), measured=False, audited=False)


@pytest.mark.long  # ~2 minutes with the failback's Spark audit; its short sibling above runs in make test
def test_demo_failover_drill_moves_the_group_to_b_rereading_and_losing_nothing(tmp_path: Path) -> None:
    check_drill(run_drill(tmp_path, 15), measured=True, audited=True)
