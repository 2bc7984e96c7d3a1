"""HerderCore with exactly-once source support (KIP-618): the leader claims config-topic write privileges.

Mirrors Java's ``DistributedHerder``: ``claimWritePrivileges`` in ``onAssigned`` for a leader, and the
``fencedFromConfigTopic`` branch of ``tick`` (a leader reclaims, backing off
``CONFIG_TOPIC_WRITE_PRIVILEGES_BACKOFF_MS`` = 250 ms after a failure; a follower does not).
"""

from __future__ import annotations

import pytest

from pyconnect.herder.core import CLAIM_BACKOFF_S, CoreSettings
from pyconnect.herder.effects import ClaimWritePrivileges, Rebalance
from tests.herder_core_fakes import WORKER_ID, CoreHarness, round_

TRANSACTIONAL = CoreSettings(WORKER_ID, transactional_leader=True)


def joined(*, leader: bool, settings: CoreSettings = TRANSACTIONAL) -> CoreHarness:
    h = CoreHarness(settings)
    h.perform(h.join(round_(leader=leader)))
    return h


def test_a_new_leader_claims_before_anything_else_and_then_holds() -> None:
    h = joined(leader=True)
    assert h.step(holds_write_privileges=False) == [ClaimWritePrivileges()]
    h.core.write_privileges_claimed(True, h.now)
    assert h.step(holds_write_privileges=True) == []


def test_a_failed_claim_is_retried_after_250_ms_while_leader() -> None:
    assert CLAIM_BACKOFF_S == 0.25
    h = joined(leader=True)
    assert h.step(holds_write_privileges=False) == [ClaimWritePrivileges()]
    h.core.write_privileges_claimed(False, h.now)
    assert h.step(holds_write_privileges=False) == []
    assert h.core.wait_time(h.now) == pytest.approx(CLAIM_BACKOFF_S)
    h.advance(CLAIM_BACKOFF_S)
    assert h.step(holds_write_privileges=False) == [ClaimWritePrivileges()]


def test_a_leader_fenced_out_by_a_failed_write_claims_again() -> None:
    h = joined(leader=True)
    h.step(holds_write_privileges=False)
    h.core.write_privileges_claimed(True, h.now)
    assert h.step(holds_write_privileges=True) == []
    assert h.step(holds_write_privileges=False) == [ClaimWritePrivileges()]  # the writer was fenced


def test_a_rejoin_comes_before_a_claim() -> None:
    h = joined(leader=True)
    h.core.request_rejoin("test")
    assert h.step(holds_write_privileges=False) == [Rebalance()]


@pytest.mark.parametrize(
    ("leader", "settings"),
    [(False, TRANSACTIONAL), (True, CoreSettings(WORKER_ID))],
    ids=["follower", "exactly-once-disabled"],
)
def test_followers_and_workers_without_exactly_once_never_claim(leader: bool, settings: CoreSettings) -> None:
    h = joined(leader=leader, settings=settings)
    assert h.step(holds_write_privileges=False) == []


def test_no_claim_before_the_first_round() -> None:
    h = CoreHarness(TRANSACTIONAL)
    assert h.step(holds_write_privileges=False) == [Rebalance()]


@pytest.mark.parametrize(
    ("value", "transactional"),
    [("disabled", False), ("preparing", True), ("enabled", True), ("ENABLED", True)],
)
def test_the_setting_follows_exactly_once_source_support(value: str, transactional: bool) -> None:
    settings = CoreSettings.from_worker_config({"exactly.once.source.support": value}, WORKER_ID)
    assert settings.transactional_leader is transactional
    assert CoreSettings.from_worker_config({}, WORKER_ID).transactional_leader is False
