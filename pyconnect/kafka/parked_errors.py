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

_MARK = "_pyconnect_reads_parked_errors"


def _read(future: Any) -> None:
    if future is not None and future.done() and not future.cancelled():
        future.exception()


def read_parked_errors(producer: Any) -> None:
    """See the module docstring."""
    if getattr(producer, _MARK, False):
        return
    manager = getattr(producer, "_txn_manager", None)
    if manager is not None:
        for name in ("error_transaction", "fatal_error"):
            original = getattr(manager, name, None)
            if original is None:
                continue

            def after_transaction_error(exc: BaseException, original: Any = original) -> None:
                original(exc)
                _read(getattr(manager, "_transaction_waiter", None))

            setattr(manager, name, after_transaction_error)
    accumulator: Any = getattr(producer, "_message_accumulator", None)
    fail_all = getattr(accumulator, "fail_all", None)
    if fail_all is not None:

        def after_fail_all(exc: BaseException) -> None:
            queues = getattr(accumulator, "_batches", {})
            failed = [b for queue in queues.values() for b in queue]
            failed += list(getattr(accumulator, "_pending_batches", ()))
            fail_all(exc)
            for batch in failed:
                _read(getattr(batch, "_drain_waiter", None))

        accumulator.fail_all = after_fail_all
    setattr(producer, _MARK, True)
