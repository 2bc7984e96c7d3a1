"""``pyconnect cutover`` again and again on real Kafka at 5,000 records/s with 10 classic groups (``long``:
``make chaos``; ``test_cutover.py`` is the short version that runs under ``make test``).

Each run is the cutover benchmark's (:func:`pyconnect.testing.cutover_drill.run_once`) on the session's
clusters A and B and one pyconnect worker of the forward fleet: a fresh topic and ten fresh groups, the
applications stopped on A, ``cutover execute`` (the second run killed with SIGKILL once the ``quiet``
step is recorded and the third once ``groups-moved`` is, each resumed), the producer switched to B, every
group resumed on B and read to the end. Checked for every run: the cutover reached ``promoted``, no group
lost or got twice any record (sequence numbers over what it read on A and on B), and B holds every record
A and B acknowledged once. The pause and the other figures are printed; their targets are the
benchmark's (``python -m benchmarks --scenario cutover``), not asserted here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.cutover_drill import DrillSettings, run_once
from tests.integration.fleet import fleet, python_workers

pytestmark = [pytest.mark.kafka, pytest.mark.long]

SETTINGS = DrillSettings(rate=5000, groups=10, partitions=4, load_s=15.0, after_s=3.0, quiet_s=1.0)
KILLS = (None, "quiet", "groups-moved")


@pytest.mark.timeout(1500)
def test_repeated_cutovers_at_5000_records_a_second_lose_and_duplicate_nothing(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    worker = python_workers(b, tmp_path / "forward", unique("forward"), 1)[0]
    with fleet([worker]):
        results = [
            run_once(worker, a, b, unique(f"cut{i}"), SETTINGS, kill, tmp_path)
            for i, kill in enumerate(KILLS)
        ]
    print("\nrun records/s killed-after resumes pause-s fence-to-promote-s lost duplicates")
    for r in results:
        print(
            r.run,
            r.rate_on_a,
            r.kill_after,
            r.resumes,
            r.pause_s,
            r.fenced_to_promoted_s,
            r.lost,
            r.duplicates,
        )
    for r in results:
        assert r.error is None and r.promoted, r
        assert len(r.kills) == r.resumes == (0 if r.kill_after is None else 1), r
        bad = {g: v for g, v in r.groups.items() if v["lost"] or v["duplicates"]}
        assert not bad and len(r.groups) == SETTINGS.groups, (r.run, bad)
        assert (r.copy_lost, r.copy_duplicates) == (0, 0), r
