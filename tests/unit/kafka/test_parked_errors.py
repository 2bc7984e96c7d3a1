"""A fenced task producer's errors: recognised through their causes, and never left unread for asyncio
to log at ERROR (pyconnect.kafka.task_transactions)."""

from __future__ import annotations

import asyncio
import gc
import logging
from types import SimpleNamespace

import pytest
from aiokafka.errors import KafkaError, ProducerFenced

from pyconnect.errors import ConnectError
from pyconnect.kafka.parked_errors import read_parked_errors
from pyconnect.kafka.task_transactions import TaskTransactions


def test_a_fence_is_recognised_through_the_errors_raised_from_it() -> None:
    fenced = ProducerFenced()
    try:
        try:
            raise fenced
        except ProducerFenced as exc:
            raise ConnectError("commit failed") from exc
    except ConnectError as wrapped:
        assert TaskTransactions.fenced(wrapped)
    assert not TaskTransactions.fenced(ConnectError("other"))
    assert not TaskTransactions.fenced(KafkaError("transient"))


async def test_transaction_errors_parked_on_the_waiter_are_read_so_asyncio_does_not_log_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = asyncio.get_running_loop()

    class Manager:  # the two aiokafka TransactionManager methods that park an error on the waiter
        def __init__(self) -> None:
            self._transaction_waiter = loop.create_future()

        def error_transaction(self, exc: BaseException) -> None:
            self._transaction_waiter.set_exception(exc)

        def fatal_error(self, exc: BaseException) -> None:
            if self._transaction_waiter.done():
                self._transaction_waiter = loop.create_future()  # the old one is dropped, as aiokafka does
            self._transaction_waiter.set_exception(exc)

    manager = Manager()
    read_parked_errors(SimpleNamespace(_txn_manager=manager))  # type: ignore[arg-type]
    manager.error_transaction(KafkaError("abortable"))
    manager.fatal_error(ProducerFenced())
    with pytest.raises(ProducerFenced):
        manager._transaction_waiter.result()  # still raised to whoever reads it
    manager.fatal_error(ProducerFenced())
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        del manager
        gc.collect()
        await asyncio.sleep(0)
    assert "never retrieved" not in caplog.text
    read_parked_errors(SimpleNamespace())  # type: ignore[arg-type]  # no transactions: nothing


async def test_failed_batches_drain_waiters_are_read_when_the_sender_fails_them_all(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = asyncio.get_running_loop()

    class Batch:  # aiokafka's MessageBatch: failure() sets the drain waiter nobody awaits
        def __init__(self) -> None:
            self._drain_waiter = loop.create_future()

        def failure(self, exc: BaseException) -> None:
            self._drain_waiter.set_exception(exc)

    class Accumulator:
        def __init__(self) -> None:
            self._batches = {"t-0": [Batch(), Batch()]}
            self._pending_batches = {Batch()}

        def fail_all(self, exc: BaseException) -> None:
            for queue in self._batches.values():
                for batch in queue:
                    batch.failure(exc)
            for batch in self._pending_batches:
                batch.failure(exc)

    producer = SimpleNamespace(_message_accumulator=Accumulator())
    read_parked_errors(producer)
    read_parked_errors(producer)  # once per producer
    producer._message_accumulator.fail_all(ProducerFenced())
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        del producer
        gc.collect()
        await asyncio.sleep(0)
    assert "never retrieved" not in caplog.text
