"""Offset syncs to the offset-syncs topic in batches: one produce batch, one task and one delivery for
the syncs handed over together, rather than a task, a send and a future per sync.

Contract of :func:`send_offset_syncs`: writes ``group``'s syncs, in order, to partition 0 of ``topic``
through ``producer`` (an ``AIOKafkaProducer``: ``create_batch`` and ``send_batch``), as few batches as
the producer's ``batch.size`` allows, each record the key and value Java's ``OffsetSync`` writes and the
current time. Each ``done`` of ``group`` is called exactly once: ``None`` once its batch is
acknowledged, else the error (its batch failed, or could not be handed over); if the call is
cancelled, every ``done`` not yet called gets a ``ConnectError`` before the cancellation goes on. It
returns once every batch is acknowledged or failed, so one caller at a time keeps the syncs in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from connectors.mirror.offsets.sync_writer import SendDone
from connectors.mirror.records import OffsetSync
from pyconnect.errors import ConnectError

SYNC_PARTITION = 0


async def send_offset_syncs(producer: Any, topic: str, group: Sequence[tuple[OffsetSync, SendDone]]) -> None:
    """``group``'s syncs to ``topic`` in batches; see the module docstring."""
    dones = [done for _sync, done in group]
    finished = 0  # dones[:finished] are called; batches cover consecutive stretches of the group
    batches: list[tuple[asyncio.Future[Any], int]] = []  # a batch's delivery and its number of syncs
    try:
        builder, count = producer.create_batch(), 0
        for sync, _done in group:
            key, value = sync.record_key(), sync.record_value()
            # a full batch goes and a new one starts
            if builder.append(timestamp=None, key=key, value=value) is None:
                batches.append((await producer.send_batch(builder, topic, partition=SYNC_PARTITION), count))
                builder, count = producer.create_batch(), 0
                if builder.append(timestamp=None, key=key, value=value) is None:
                    raise ConnectError(f"offset sync {sync} does not fit in an empty batch")
            count += 1
        if count:
            batches.append((await producer.send_batch(builder, topic, partition=SYNC_PARTITION), count))
        for delivery, count in batches:
            error: BaseException | None = None
            try:
                await delivery
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                error = exc
            _finish(dones[finished : finished + count], error)
            finished += count
    except asyncio.CancelledError:
        _finish(dones[finished:], ConnectError("offset sync send cancelled"))
        raise
    except Exception as exc:  # not handed over: it and every sync after it fail
        _finish(dones[finished:], exc)


def _finish(dones: Sequence[SendDone], error: BaseException | None) -> None:
    for done in dones:
        done(error)
