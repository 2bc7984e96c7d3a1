"""Errors aiokafka's producer parks on futures nobody awaits, read as soon as they are set.

When a send fails for good (a fenced or failed transaction, a sender that stops), aiokafka sets the
error on futures only some calls await: the transaction waiter (read by a later commit) and each
failed batch's drain waiter (read only when a caller waits for room in that batch). The error reaches
the task anyway, through its batches' futures; when such a parked future is dropped unread, asyncio
logs "Future exception was never retrieved" at ERROR, which tells an operator nothing (a zombie fenced
by design, a task that already failed with the reason).

Contract: ``read_parked_errors(producer)`` makes this producer read those exceptions right after
aiokafka sets them (``Future.exception()``), which leaves a later ``result()`` raising as before. Once
per producer (calling again changes nothing); a producer without these parts is left alone.
"""

from __future__ import annotations

from typing import Any

from pyconnect.kafka import aiokafka_seam as seam

_MARK = "_pyconnect_reads_parked_errors"


def _read(future: Any) -> None:
    if future is not None and future.done() and not future.cancelled():
        future.exception()


def read_parked_errors(producer: Any) -> None:
    """See the module docstring."""
    if getattr(producer, _MARK, False):
        return
    manager = seam.producer_txn_manager(producer)
    if manager is not None:
        for name in ("error_transaction", "fatal_error"):
            original = getattr(manager, name, None)
            if original is None:
                continue

            def after_transaction_error(exc: BaseException, original: Any = original) -> None:
                original(exc)
                _read(seam.transaction_waiter(manager))

            seam.install_transaction_error_hook(manager, name, after_transaction_error)
    accumulator: Any = seam.producer_accumulator(producer)
    fail_all = getattr(accumulator, "fail_all", None)
    if fail_all is not None:

        def after_fail_all(exc: BaseException) -> None:
            queues = seam.accumulator_queues(accumulator, {})
            failed = [b for queue in queues.values() for b in queue]
            failed += list(seam.accumulator_pending(accumulator))
            fail_all(exc)
            for batch in failed:
                _read(seam.batch_drain_waiter(batch))

        seam.install_fail_all(accumulator, after_fail_all)
    setattr(producer, _MARK, True)
