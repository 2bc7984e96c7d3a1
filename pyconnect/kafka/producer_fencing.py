"""Fence the producers of transactional ids (Java ``Admin.fenceProducers``, KIP-618).

aiokafka's admin client has no ``fenceProducers``; this module does what Java's
``FenceProducersHandler`` does, over the protocol: for each transactional id, find its transaction
coordinator (FindCoordinator, key type TRANSACTION) and send it ``InitProducerId`` with that id and no
producer id or epoch. The coordinator bumps the id's epoch (aborting any transaction the id has open),
so every producer instance that initialised the id before is fenced: its next transactional request
fails with ``PRODUCER_FENCED`` / ``INVALID_PRODUCER_EPOCH`` and nothing it has not committed becomes
visible to ``read_committed`` readers.

Contract: :func:`fence_producers` returns once every id was fenced, or raises
:class:`ProducerFencingError` naming the first id that could not be (authorization failures at once,
with the ACL that is missing; any other error, or no answer, once ``timeout_s`` has passed). Retried as
Java retries: ``COORDINATOR_LOAD_IN_PROGRESS`` and ``CONCURRENT_TRANSACTIONS`` (the coordinator is still
aborting the id's open transaction) after a backoff; ``NOT_COORDINATOR`` / ``COORDINATOR_NOT_AVAILABLE``
and lost connections after looking the coordinator up again. The ids are fenced concurrently on one
client, which is closed before returning.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

from aiokafka import AIOKafkaClient
from aiokafka import errors as kafka_errors
from aiokafka.client import ConnectionGroup, CoordinationType
from aiokafka.protocol.transaction import InitProducerIdRequest

from pyconnect.errors import ConnectError
from pyconnect.kafka.clients import admin_client_kwargs

DEFAULT_TIMEOUT_S = 90.0
"""Java's ``FenceProducersOptions.timeoutMs`` as the worker sets it (the REST request timeout)."""
DEFAULT_TRANSACTION_TIMEOUT_MS = 30_000
"""What Java's handler asks the coordinator for (the admin client's ``request.timeout.ms``)."""

_FIRST_BACKOFF_S = 0.05
_MAX_BACKOFF_S = 1.0

_RETRY = frozenset({14, 51})  # COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS
_REDISCOVER = frozenset({15, 16})  # COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
_CLUSTER_AUTHORIZATION_FAILED = 31
_TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53


class ProducerFencingError(ConnectError):
    """A transactional id could not be fenced."""


def _error_name(code: int) -> str:
    try:
        return str(kafka_errors.for_code(code).__name__)
    except Exception:
        return f"error code {code}"


async def _fence_one(
    client: AIOKafkaClient, transactional_id: str, txn_timeout_ms: int, deadline: float
) -> None:
    backoff = _FIRST_BACKOFF_S
    last = "no answer"
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ProducerFencingError(
                f"InitProducerId request for transactionalId `{transactional_id}` did not complete in time: {last}"
            )
        try:
            async with asyncio.timeout(remaining):
                node = await client.coordinator_lookup(CoordinationType.TRANSACTION, transactional_id)
                response = await client.send(
                    node,
                    InitProducerIdRequest(transactional_id, txn_timeout_ms),
                    group=ConnectionGroup.COORDINATION,
                )
        except kafka_errors.TransactionalIdAuthorizationFailed as exc:
            raise ProducerFencingError(
                f"InitProducerId request for transactionalId `{transactional_id}` failed due to transactional ID "
                f"authorization failure (the fencing admin client's principal needs Write on TransactionalId {transactional_id}; a connector's is set by admin.override.*): {exc}"
            ) from exc
        except TimeoutError:
            continue  # the deadline check above raises with the last error seen
        except (kafka_errors.KafkaError, OSError) as exc:
            last = str(exc) or type(exc).__name__
        else:
            code = response.error_code
            if code == 0:
                return
            last = _error_name(code)
            if code == _CLUSTER_AUTHORIZATION_FAILED:
                raise ProducerFencingError(
                    f"InitProducerId request for transactionalId `{transactional_id}` failed due to cluster "
                    "authorization failure"
                )
            if code == _TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
                raise ProducerFencingError(
                    f"InitProducerId request for transactionalId `{transactional_id}` failed due to transactional "
                    f"ID authorization failure (the fencing admin client's principal needs Write on TransactionalId {transactional_id}; a connector's is set by admin.override.*)"
                )
            if code not in _RETRY and code not in _REDISCOVER:
                raise ProducerFencingError(
                    f"InitProducerId request for transactionalId `{transactional_id}` failed due to unexpected "
                    f"error {last}"
                )
        await asyncio.sleep(min(backoff, max(0.0, deadline - time.monotonic())))
        backoff = min(backoff * 2, _MAX_BACKOFF_S)


async def fence_producers(
    config: Mapping[str, Any],
    transactional_ids: Sequence[str],
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    transaction_timeout_ms: int = DEFAULT_TRANSACTION_TIMEOUT_MS,
) -> None:
    """Fence every producer of ``transactional_ids`` on the cluster ``config`` (a Java admin client
    config) names; see the module docstring."""
    if not transactional_ids:
        return
    deadline = time.monotonic() + timeout_s
    client = AIOKafkaClient(**admin_client_kwargs(config))
    try:
        async with asyncio.timeout(timeout_s):
            await client.bootstrap()
        await asyncio.gather(
            *(_fence_one(client, tid, transaction_timeout_ms, deadline) for tid in transactional_ids)
        )
    except TimeoutError:
        raise ProducerFencingError(
            f"Could not reach the Kafka cluster to fence {len(transactional_ids)} producer(s) within {timeout_s:.0f}s"
        ) from None
    finally:
        await client.close()
