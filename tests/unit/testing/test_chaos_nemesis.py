"""The nemesis schedule: seeded, bounded, non-overlapping, every enabled kind covered."""

from __future__ import annotations

import itertools

import pytest

from pyconnect.testing.chaos.nemesis import (
    BROKER_KILL,
    KINDS,
    NETWORK_MODES,
    PARTITION,
    SLOW_TARGET,
    WORKER_KILL,
    WORKER_PAUSE,
    Timing,
    fixed,
    schedule,
)

ALL_BUT_NETWORK = [WORKER_KILL, WORKER_PAUSE, BROKER_KILL, SLOW_TARGET]


def test_the_same_seed_gives_the_same_schedule_and_another_seed_another() -> None:
    one = schedule(7, 900, ALL_BUT_NETWORK)
    assert one == schedule(7, 900, ALL_BUT_NETWORK)
    assert one != schedule(8, 900, ALL_BUT_NETWORK)


@pytest.mark.parametrize("seed", range(20))
def test_faults_never_overlap_stay_within_the_run_and_cover_every_kind(seed: int) -> None:
    faults = schedule(seed, 600, ALL_BUT_NETWORK, max_faults=40)
    assert 0 < len(faults) <= 40
    assert {f.kind for f in faults} == set(ALL_BUT_NETWORK)
    for before, after in itertools.pairwise(faults):
        assert after.start_s >= before.heal_s
    assert all(f.heal_s <= 600 for f in faults)


def test_a_pause_lasts_past_the_session_timeout_and_targets_are_valid() -> None:
    timing = Timing(session_timeout_s=9.0)
    faults = schedule(3, 3000, list(KINDS), workers=3, timing=timing)
    pauses = [f for f in faults if f.kind == WORKER_PAUSE]
    assert pauses and all(f.heal_after_s > 9.0 for f in pauses)
    for f in faults:
        if "worker" in f.target:
            assert f.target["worker"] in range(3)
        if "cluster" in f.target:
            assert f.target["cluster"] in ("A", "B")


def test_the_count_is_bounded_and_bad_input_is_refused() -> None:
    assert len(schedule(1, 100_000, ALL_BUT_NETWORK, max_faults=5)) == 5
    assert schedule(1, 5, ALL_BUT_NETWORK) == []
    with pytest.raises(ValueError, match="fault kinds"):
        schedule(1, 100, ["meteor"])
    with pytest.raises(ValueError, match="fault kinds"):
        schedule(1, 100, [])


def test_a_fixed_schedule_is_checked_for_overlap() -> None:
    ok = fixed([(WORKER_KILL, 5, 3, {"worker": 0}), (BROKER_KILL, 10, 5, {"cluster": "A", "role": "any"})])
    assert [f.heal_s for f in ok] == [8, 15]
    with pytest.raises(ValueError, match="before"):
        fixed([(WORKER_KILL, 5, 10, {"worker": 0}), (WORKER_KILL, 10, 5, {"worker": 1})])


@pytest.mark.parametrize("seed", [1616, 1617, 2611, 2612, 7])
def test_every_network_mode_is_drawn_once_per_round_of_partitions(seed: int) -> None:
    faults = schedule(seed, 3_000, [PARTITION])
    modes = [f.target["mode"] for f in faults]
    assert len(modes) >= 6
    for start in range(0, len(modes) - 2, 3):
        assert sorted(modes[start : start + 3]) == sorted(NETWORK_MODES), modes
