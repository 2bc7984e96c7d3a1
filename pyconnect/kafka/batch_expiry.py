"""A producer batch past its delivery bound is failed instead of sent, also while it waits in the queue.

Java's producer fails a batch once ``delivery.timeout.ms`` has passed since it was created, wherever it
is: queued, or in flight and failing. aiokafka checks a batch's time to live (pyconnect sets it to
``delivery.timeout.ms``, :func:`pyconnect.kafka.clients.create_producer`) only when a send of it fails
or its partition has no leader, so a batch queued behind a request stuck on a cut connection is sent
after the network heals, however old. For the worker's source-offsets writes that is a rewind: a commit
the task gave up on (``offset.flush.timeout.ms``) lands after the commit of the task's new owner.

Contract: ``expire_at_drain(producer)`` makes a producer without idempotence fail (with
``KafkaTimeoutError``) every batch its sender drains past the batch's time to live, instead of sending
it. Idempotent and transactional producers are left alone: their batches never expire (as in both
clients), a gap would break their sequence numbers. Once per producer.
"""

from __future__ import annotations

from typing import Any

from aiokafka.errors import KafkaTimeoutError

from pyconnect.kafka import aiokafka_seam as seam

_MARK = "_pyconnect_expires_at_drain"


def expire_at_drain(producer: Any) -> None:
    """See the module docstring."""
    accumulator: Any = seam.producer_accumulator(producer)
    if (
        accumulator is None
        or seam.producer_txn_manager(producer) is not None
        or getattr(accumulator, _MARK, False)
    ):
        return
    drain = accumulator.drain_by_nodes

    def drain_live_batches(*args: Any, **kwargs: Any) -> Any:
        nodes, unknown_leaders = drain(*args, **kwargs)
        for batches in nodes.values():
            for tp, batch in list(batches.items()):
                if batch.expired():
                    del batches[tp]
                    batch.failure(
                        exception=KafkaTimeoutError(
                            f"Expiring a batch for {tp.topic}-{tp.partition}: its delivery timeout passed "
                            "while it waited to be sent"
                        )
                    )
        return nodes, unknown_leaders

    seam.install_drain_by_nodes(accumulator, drain_live_batches)
    setattr(accumulator, _MARK, True)
