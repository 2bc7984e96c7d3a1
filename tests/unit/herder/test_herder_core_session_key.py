"""HerderCore and KIP-507 session keys: the leader of a ``sessioned`` group writes one when there is
none and when it expires (``inter.worker.key.ttl.ms``); followers never do.

Mirrors Java's ``DistributedHerderTest``: ``testKeyRotationWhenWorkerBecomesLeader``,
``testKeyRotationDisabledWhenWorkerBecomesFollower``, ``testFailedToWriteSessionKey``,
``testFailedToReadBackNewlyWrittenSessionKey``, and ``DistributedHerder.checkForKeyRotation``.
"""

from __future__ import annotations

from pyconnect.herder.core import CoreSettings
from pyconnect.herder.effects import Rebalance, WriteSessionKey
from pyconnect.protocol.internal_records import SessionKeyRecord
from pyconnect.stores.config_events import SessionKeyUpdated
from tests.herder_core_fakes import (
    COMPATIBLE,
    SESSIONED,
    WORKER_ID,
    CoreHarness,
    round_,
)

TTL_MS = 60_000


def harness(**settings: object) -> CoreHarness:
    config = {"inter.worker.key.ttl.ms": TTL_MS, **settings}
    return CoreHarness(CoreSettings.from_worker_config(config, WORKER_ID))


def now_ms(h: CoreHarness) -> int:
    return int(h.now * 1000)


def key_written_at(h: CoreHarness, created_ms: int, algorithm: str = "HmacSHA256", size: int = 32) -> None:
    """The key record read back from the config topic (as every worker reads it)."""
    h.events(h.log.put_session_key(SessionKeyRecord(b"k" * size, algorithm, created_ms)))


def test_leader_without_a_key_writes_one_once() -> None:
    h = harness()
    assert h.join(round_(offset=h.log.offset, protocol=SESSIONED)) == []
    assert h.step() == [WriteSessionKey("HmacSHA256", 32, now_ms(h))]
    assert h.step() == []  # the write is in flight
    h.core.session_key_written(SessionKeyRecord(b"k" * 32, "HmacSHA256", now_ms(h)))
    assert h.step() == []


def test_leader_writes_a_new_key_when_the_ttl_expires() -> None:
    h = harness()
    h.join(round_(offset=h.log.offset, protocol=SESSIONED))
    created = now_ms(h)
    key_written_at(h, created)
    assert h.step() == []
    h.advance(TTL_MS / 1000 - 0.001)
    assert h.step() == []
    h.advance(0.001)
    assert h.step() == [WriteSessionKey("HmacSHA256", 32, created + TTL_MS)]


def test_key_uses_the_configured_algorithm_and_size() -> None:
    h = harness(**{"inter.worker.key.generation.algorithm": "HmacSHA512", "inter.worker.key.size": 512})
    h.join(round_(offset=h.log.offset, protocol=SESSIONED))
    assert h.step() == [WriteSessionKey("HmacSHA512", 64, now_ms(h))]


def test_key_of_another_algorithm_is_replaced_at_once() -> None:
    h = harness()
    h.join(round_(offset=h.log.offset, protocol=SESSIONED))
    key_written_at(h, now_ms(h), algorithm="HmacSHA1")
    assert h.step() == [WriteSessionKey("HmacSHA256", 32, now_ms(h))]


def test_key_of_another_size_is_replaced_at_once() -> None:
    """``checkForKeyRotation``: a key whose algorithm *or size* differs from this worker's key generator
    is redistributed."""
    h = harness(**{"inter.worker.key.size": 128})
    h.join(round_(offset=h.log.offset, protocol=SESSIONED))
    key_written_at(h, now_ms(h), size=32)
    assert h.step() == [WriteSessionKey("HmacSHA256", 16, now_ms(h))]


def test_follower_never_writes_a_key_even_an_expired_one() -> None:
    h = harness()
    h.join(round_(offset=h.log.offset, leader=False, protocol=SESSIONED))
    assert h.step() == []
    key_written_at(h, now_ms(h) - 10 * TTL_MS)
    h.advance(3600)
    assert h.step() == []


def test_worker_that_becomes_leader_rotates_the_key_it_read_as_follower() -> None:
    """``testKeyRotationWhenWorkerBecomesLeader``: expiry is tracked from the key read as follower."""
    h = harness()
    h.join(round_(offset=h.log.offset, leader=False, protocol=SESSIONED))
    created = now_ms(h)
    key_written_at(h, created)
    h.core.request_rejoin("test")
    h.join(round_(2, offset=h.log.offset, protocol=SESSIONED))
    assert h.step() == []
    h.advance(TTL_MS / 1000)
    assert h.step() == [WriteSessionKey("HmacSHA256", 32, created + TTL_MS)]


def test_worker_that_becomes_follower_stops_rotating() -> None:
    """``testKeyRotationDisabledWhenWorkerBecomesFollower``."""
    h = harness()
    h.join(round_(offset=h.log.offset, protocol=SESSIONED))
    key_written_at(h, now_ms(h))
    h.core.request_rejoin("test")
    h.join(round_(2, offset=h.log.offset, leader=False, protocol=SESSIONED))
    h.advance(2 * TTL_MS / 1000)
    assert h.step() == []


def test_no_key_without_the_sessioned_protocol() -> None:
    h = harness()
    h.join(round_(offset=h.log.offset, protocol=COMPATIBLE))
    assert h.step() == []


def test_failed_key_write_is_retried_by_the_next_step() -> None:
    """``testFailedToWriteSessionKey``."""
    h = harness()
    h.join(round_(offset=h.log.offset, protocol=SESSIONED))
    assert h.step() == [WriteSessionKey("HmacSHA256", 32, now_ms(h))]
    h.core.step_failed()
    h.advance(0.25)
    assert h.step() == [WriteSessionKey("HmacSHA256", 32, now_ms(h))]


def test_key_read_back_after_a_failed_write_is_not_written_again() -> None:
    """``testFailedToReadBackNewlyWrittenSessionKey``: the write reached the topic; the key read back
    is current, so no second key is written."""
    h = harness()
    h.join(round_(offset=h.log.offset, protocol=SESSIONED))
    assert [type(e) for e in h.step()] == [WriteSessionKey]
    h.core.step_failed()
    events = h.log.put_session_key(SessionKeyRecord(b"k" * 32, "HmacSHA256", now_ms(h)))
    assert [type(e) for e in events] == [SessionKeyUpdated]
    h.events(events)
    assert h.step() == []


def test_rejoin_comes_before_the_key_write() -> None:
    h = harness()
    h.join(round_(offset=h.log.offset, protocol=SESSIONED, revoked=True))
    assert h.step() == [Rebalance()]
