"""A batch past its delivery bound is failed at drain instead of sent (pyconnect.kafka.batch_expiry)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from aiokafka.errors import KafkaTimeoutError
from aiokafka.structs import TopicPartition

from pyconnect.kafka.batch_expiry import expire_at_drain


class Batch:
    def __init__(self, expired: bool) -> None:
        self._expired = expired
        self.failed: BaseException | None = None

    def expired(self) -> bool:
        return self._expired

    def failure(self, exception: BaseException) -> None:
        self.failed = exception


def accumulator_with(nodes: dict[int, dict[TopicPartition, Batch]]) -> Any:
    return SimpleNamespace(drain_by_nodes=lambda ignore, muted=frozenset(): (nodes, False))


def test_an_expired_batch_is_failed_not_sent_and_a_live_one_is_sent() -> None:
    old, fresh = Batch(expired=True), Batch(expired=False)
    a0, a1 = TopicPartition("offsets", 0), TopicPartition("offsets", 1)
    producer = SimpleNamespace(_message_accumulator=accumulator_with({1: {a0: old, a1: fresh}}))
    expire_at_drain(producer)
    expire_at_drain(producer)  # once per producer
    nodes, unknown = producer._message_accumulator.drain_by_nodes(set())
    assert nodes == {1: {a1: fresh}} and not unknown
    assert isinstance(old.failed, KafkaTimeoutError) and "offsets-0" in str(old.failed)
    assert fresh.failed is None


def test_idempotent_and_transactional_producers_keep_every_batch() -> None:
    old = Batch(expired=True)
    tp = TopicPartition("t", 0)
    producer = SimpleNamespace(_message_accumulator=accumulator_with({1: {tp: old}}), _txn_manager=object())
    expire_at_drain(producer)
    nodes, _ = producer._message_accumulator.drain_by_nodes(set())
    assert nodes == {1: {tp: old}} and old.failed is None
