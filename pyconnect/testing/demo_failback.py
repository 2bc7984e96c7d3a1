"""The demo's way back: after the failover drill the application writes on B, A returns, and
``pyconnect failback`` brings the application home with nothing re-read and nothing lost.

Contract (every wait bounded; the caller owns the clusters and the forward fleet):

- :func:`cut_off_and_fail` plays the end of the drill as a real loss of A would: the forward mirror is
  cut off from A (paused) while A takes ``ORPHANS`` more records, A fails, and the operator's first act
  stops the forward connector (so it cannot copy those records into B when A returns).
- :func:`fail_over` runs ``pyconnect failover execute`` for the application's group (in process, with
  its state file in the work folder: the record a failback needs).
- :func:`way_back`: the application writes ``WRITTEN_ON_B`` records on B and reads them there; A
  restarts on its data; a worker on A (the reverse fleet) starts; ``pyconnect failback execute
  --quarantine`` runs (in process, resumable state file; its closing Spark audit writes its reports to
  ``failback-audit/`` in the work folder and its verdict is printed); the application writes ``WRITTEN_ON_A``
  records on A again and reads on A from where the failback put it. Returns the :class:`RoundTrip`, which :func:`round_trip` measures by sequence numbers.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from connectors.mirror.failback.command import FailbackOptions
from connectors.mirror.failback.command import run as run_failback
from connectors.mirror.offsets.failover_command import FailoverOptions
from connectors.mirror.offsets.failover_command import run as run_failover
from pyconnect.cli_offsets import spark_auditor
from pyconnect.kafka.record_offsets import partition_bounds
from pyconnect.kafka.traffic import TrafficCounters, produce_at_rate, run_application_on
from pyconnect.testing.demo_failover import CHECKPOINT_CONNECTOR, GROUP
from pyconnect.testing.worker_process import PyconnectWorker

ORPHANS_RATE = 200.0
ORPHANS = 60
WRITTEN_ON_B = 120
WRITTEN_ON_A = 60
SOURCE_CONNECTOR = "mm2-source"


def _connector_state(worker: PyconnectWorker, name: str) -> str:
    code, body = worker.rest("GET", f"/connectors/{name}/status")
    return str(body["connector"]["state"]) if code == 200 and isinstance(body, dict) else "UNKNOWN"


async def _until_state(worker: PyconnectWorker, name: str, state: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while await asyncio.to_thread(_connector_state, worker, name) != state:
        if time.monotonic() > deadline:
            raise TimeoutError(f"connector {name} did not reach {state} within {timeout_s:.0f} s")
        await asyncio.sleep(0.5)


async def cut_off_and_fail(
    worker: PyconnectWorker, source: str, topic: str, first: int, fail_a: Callable[[], None]
) -> int:
    """The mirror cut off from A, ``ORPHANS`` records on A only, A failed, the forward connector stopped;
    returns the records produced to A in this step."""
    await asyncio.to_thread(worker.rest, "PUT", f"/connectors/{SOURCE_CONNECTOR}/pause")
    await _until_state(worker, SOURCE_CONNECTOR, "PAUSED")
    await asyncio.sleep(2.0)  # the task's commit on pausing syncs the last record it copied
    counters = TrafficCounters()
    await produce_at_rate(
        source, topic, ORPHANS_RATE, asyncio.Event(), counters, max_records=ORPHANS, first=first
    )
    await asyncio.to_thread(fail_a)
    await asyncio.to_thread(worker.rest, "PUT", f"/connectors/{SOURCE_CONNECTOR}/stop")
    await _until_state(worker, SOURCE_CONNECTOR, "STOPPED")
    return counters.produced


async def fail_over(worker: PyconnectWorker, state: Path) -> dict[str, object]:
    """``pyconnect failover execute --group GROUP --state STATE --json``; its report."""
    out = io.StringIO()
    options = FailoverOptions(
        "execute",
        groups=(GROUP,),
        url=worker.rest_url,
        connector=CHECKPOINT_CONNECTOR,
        state_file=str(state),
        as_json=True,
    )
    await run_failover(options, out, io.StringIO())
    report: dict[str, object] = json.loads(out.getvalue())
    return report


async def _serving(bootstrap: str, topic: str, partitions: int, timeout_s: float = 120.0) -> None:
    """Until every partition of ``topic`` answers its offsets (a restarted broker elects its partitions'
    leaders after recovering its logs)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            await partition_bounds(
                {"bootstrap.servers": bootstrap}, [(topic, p) for p in range(partitions)], 5
            )
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(1.0)


@dataclass(frozen=True)
class RoundTrip:
    """What the application read in each place, the orphans the failback found, its report."""

    read_on_b_after: list[int]
    read_on_a_after: list[int]
    orphans: int
    quarantine: str
    report: dict[str, object]
    written: set[int]
    """The sequence numbers the application wrote on B, then on A once back."""


async def way_back(
    forward: PyconnectWorker,
    reverse: PyconnectWorker,
    clusters: tuple[str, str],
    topic: str,
    partitions: int,
    first_on_b: int,
    restart_a: Callable[[], None],
    work: Path,
    say: Callable[[str], None],
    *,
    audit: bool = True,
) -> RoundTrip:
    """The way back (see the module docstring); ``audit``: the failback ends with its Spark audit."""
    source, target = clusters
    counters = TrafficCounters()
    await produce_at_rate(
        target, topic, ORPHANS_RATE, asyncio.Event(), counters, max_records=WRITTEN_ON_B, first=first_on_b
    )
    read_on_b = await run_application_on(target, topic, GROUP, partitions, 60)
    say(
        f"The application writes {counters.produced} records on B and reads them there ({len(read_on_b)} read)."
    )
    say("A comes back: its brokers restart on their data.")
    await asyncio.to_thread(restart_a)
    await _serving(source, topic, partitions)
    await asyncio.to_thread(reverse.start)
    await asyncio.to_thread(reverse.wait_ready)
    say(f"  a worker on A for the reverse flow: {reverse.rest_url}")
    out = io.StringIO()
    options = FailbackOptions(
        "execute",
        failover_state=str(work / "failover-state.json"),
        url=forward.rest_url,
        connector=CHECKPOINT_CONNECTOR,
        reverse_url=reverse.rest_url,
        state_file=str(work / "failback-state.json"),
        quarantine="{topic}.orphans",
        quiet_s=2.0,
        catch_up_timeout_s=120.0,
        as_json=True,
        auditor=spark_auditor if audit else None,
        audit_out=str(work / "failback-audit"),
    )
    say(
        f"pyconnect failback execute --url {forward.rest_url} --reverse-url {reverse.rest_url} "
        "--failover-state failover-state.json --state failback-state.json --quarantine"
    )
    await run_failback(options, out)
    report: dict[str, object] = json.loads(out.getvalue())
    steps = report.get("timings_s", {})
    assert isinstance(steps, dict)
    say("  " + ", ".join(f"{step} {seconds:.1f} s" for step, seconds in steps.items()))
    verdict = report.get("audit")
    if isinstance(verdict, dict):
        say(f"  {verdict['verdict']}")
        say(f"  audit reports: {' '.join(verdict['reports'])}")
    again = TrafficCounters()
    first_on_a = first_on_b + counters.produced
    await produce_at_rate(
        source, topic, ORPHANS_RATE, asyncio.Event(), again, max_records=WRITTEN_ON_A, first=first_on_a
    )
    read_on_a = await run_application_on(source, topic, GROUP, partitions, 60)
    orphans = int(str(report.get("orphans_total", 0)))
    written = set(range(first_on_b, first_on_b + counters.produced)) | set(
        range(first_on_a, first_on_a + again.produced)
    )
    return RoundTrip(read_on_b, read_on_a, orphans, f"{topic}.orphans", report, written)


@dataclass(frozen=True)
class RoundTripVerdict:
    """Over the whole round trip (A, B, A again): records the application read twice, records that
    reached the clusters it used and it never read, and orphans it read."""

    read: int
    reread: int
    lost: int
    orphans_read: int


def round_trip(everything_read: list[int], delivered: set[int], orphans: set[int]) -> RoundTripVerdict:
    """``everything_read``: the sequence numbers in reading order across the trip; ``delivered``: every
    record that reached a cluster the application read (A's before the cut that B got, and B's own);
    ``orphans``: the records A took after the mirror's last copy."""
    seen = set(everything_read)
    return RoundTripVerdict(
        len(everything_read),
        len(everything_read) - len(seen),
        len(delivered - seen),
        len(orphans & seen),
    )
