"""The chaos harness on real Kafka: a fleet of three pyconnect workers mirrors sequence-numbered records
between two three-node clusters while faults hit it; the verdict comes from the data.

Promises asserted (issue 16, point 2): nothing lost (at-least-once), and with exactly-once source
support nothing duplicated under read_committed either; checkpoints never ahead of the data; after every
fault heals, every task RUNNING and the lag back under the bound within the recovery bound, and zero at
the end; the REST API answering throughout.

- The short run (in ``make test``): a fixed schedule with one kill -9 of a worker, one worker frozen past
  its session timeout, one kill -9 of a broker leading an internal topic's partition.
- The long runs (``make chaos``): a seeded nemesis with every available fault kind for
  ``CHAOS_DURATION_S`` seconds (600 by default), exactly-once off and on, the Spark audits, and the
  report kept under ``run/chaos/`` (named in the output). Every fault kind is drawn, network partitions
  included (each worker reaches each cluster through a route of fault proxies of its own).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from pyconnect.testing.chaos import nemesis
from pyconnect.testing.chaos.run import RunConfig, run

pytestmark = pytest.mark.kafka

REPO = Path(__file__).resolve().parents[2]
LONG_SECONDS = float(os.environ.get("CHAOS_DURATION_S", "600"))
LONG_SEED = int(os.environ.get("CHAOS_SEED", "1616"))


def assert_promises(report: dict[str, Any]) -> None:
    verdict = report["verdict"]
    print(
        f"\nchaos: {len(report['faults'])} faults; totals {verdict['totals']}; recovery {verdict['recovery_s']}; "
        f"REST {verdict['rest_calls']} calls, p99 {verdict['rest_p99_ms']} ms; checkpoints "
        f"{verdict['checkpoints']['checked']} checked, {verdict['checkpoints']['ahead']} ahead; source offsets "
        f"committed {verdict['offset_commits']['commits']}, went back {verdict['offset_commits']['rewinds']}"
    )
    assert not [f for f in report["faults"] if f["error"]], report["faults"]
    assert verdict["totals"]["produced"] > 0 and verdict["checkpoints"]["checked"] > 0
    assert verdict["offset_commits"]["commits"] > 0, "the source offsets history was read"
    assert all(mb > 20 for mb in report["memory"]["peak_rss_mb"]), report["memory"]  # the workers' own RSS
    assert verdict["broken_promises"] == []


@pytest.mark.timeout(280)
def test_short_chaos_run_keeps_the_promises(tmp_path: Path) -> None:
    faults = nemesis.fixed(
        [
            (nemesis.WORKER_KILL, 2, 3, {"worker": 1}),
            (nemesis.WORKER_PAUSE, 12, 9, {"worker": 2}),
            (nemesis.BROKER_KILL, 26, 4, {"cluster": "B", "role": "internal-leader"}),
        ]
    )
    report = run(
        RunConfig(
            seed=16,
            duration_s=30,
            out_dir=tmp_path / "chaos",
            faults=faults,
            quiet_s=60,
            rate=15,
            batch=5,
            settle_s=2,
        )
    )
    assert sorted(f["fault"]["kind"] for f in report["faults"]) == sorted(f.kind for f in faults)
    assert_promises(report)


def long_out(name: str) -> Path:
    out = REPO / "run" / "chaos" / f"{time.strftime('%Y%m%d-%H%M%S')}-{name}-seed{LONG_SEED}"
    print(f"\nchaos report directory: {out}")
    return out


@pytest.mark.long
@pytest.mark.timeout(int(LONG_SECONDS) + 2400)
@pytest.mark.parametrize("exactly_once", [False, True], ids=["at-least-once", "exactly-once"])
def test_long_chaos_run_keeps_the_promises(exactly_once: bool) -> None:
    report = run(
        RunConfig(
            seed=LONG_SEED + int(exactly_once),
            duration_s=LONG_SECONDS,
            out_dir=long_out("eos" if exactly_once else "alo"),
            exactly_once=exactly_once,
            audits=True,
            rate=20,
        )
    )
    assert set(report["run"]["kinds"]) == set(nemesis.KINDS)
    assert {f["fault"]["kind"] for f in report["faults"]} == set(nemesis.KINDS)
    assert_promises(report)
    replication = report["audits"]["replication"]
    assert replication.get("totals", {}).get("missing") == 0, replication["summary"]
    if exactly_once:
        assert replication["totals"]["duplicates"] == 0, replication["summary"]
    translation = report["audits"]["translation"]
    assert translation.get("violations") == 0, translation["summary"]


BOUNCE_SECONDS = 240.0
BOUNCE_RATE = 160.0
"""Records per second per partition asked of the workload (2 topics x 3 partitions): 960 a second, so
the issue's 200,000 records within the faults' 240 s (more when recoveries delay the schedule)."""
BOUNCE_BATCH = 40
"""Records per partition per acknowledged round: 4 rounds a second, each record sequence-numbered."""
BOUNCE_RECORDS = 200_000
"""Measured on 2 shared cores: at-least-once 227,280 records (0 lost, 1,280 duplicated), exactly-once
382,560 (0 lost, 0 duplicated; its warm-up to the lag bound took 144 s while the workload ran on)."""


@pytest.mark.long
@pytest.mark.timeout(2400)
@pytest.mark.parametrize("exactly_once", [False, True], ids=["at-least-once", "exactly-once"])
def test_a_bounced_fleet_mirrors_every_record(exactly_once: bool) -> None:
    """The bounce test of the exactly-once issue (as Java's system test): a fleet of three mirrors while
    its workers are restarted, cleanly and with kill -9, one at a time in bounded rounds. With
    exactly-once support a read_committed reader of B sees every source record exactly once, per
    partition in order; without it, every record at least once, in order, none lost."""
    report = run(
        RunConfig(
            seed=LONG_SEED + 10 + int(exactly_once),
            duration_s=BOUNCE_SECONDS,
            out_dir=long_out("bounce-eos" if exactly_once else "bounce-alo"),
            kinds=(nemesis.WORKER_RESTART, nemesis.WORKER_KILL),
            exactly_once=exactly_once,
            rate=BOUNCE_RATE,
            batch=BOUNCE_BATCH,
            settle_s=3,
            warm_s=360,
        )
    )
    kinds = [f["fault"]["kind"] for f in report["faults"]]
    assert kinds.count(nemesis.WORKER_RESTART) >= 2 and kinds.count(nemesis.WORKER_KILL) >= 2, kinds
    assert_promises(report)
    totals = report["verdict"]["totals"]
    print(f"bounce ({'exactly-once' if exactly_once else 'at-least-once'}): {totals}")
    assert totals["produced"] >= BOUNCE_RECORDS, totals
    assert totals["out_of_order"] == 0 and totals["lost"] == 0
    if exactly_once:
        assert totals["duplicated"] == 0
