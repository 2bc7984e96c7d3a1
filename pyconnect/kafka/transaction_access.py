"""Why a transactional producer could not start or write, as an operator reads it (KIP-618).

Exactly-once source support needs three things of the cluster that only a person can fix: the
principal's ``WRITE`` and ``DESCRIBE`` on each ``TransactionalId`` (the leader's
``connect-cluster-<group.id>``, each task's ``<group.id>-<connector>-<task>``), ``WRITE`` on every
topic a task writes, and brokers able to run transactions. The last fails silently: with
``transaction.state.log.replication.factor`` above the number of live brokers the broker cannot create
``__transaction_state``, every ``InitProducerId`` answers ``COORDINATOR_NOT_AVAILABLE`` and an aiokafka
producer waits for its producer id forever. Java's producer gives up after ``max.block.ms`` with
``Timeout expired after ...ms while awaiting InitProducerId``; Java's worker then fails the task (or, as
leader, logs and retries the claim) without saying why.

Contract (pure, no I/O):

- :func:`transaction_refusal` maps an exception met while initialising or using a transactional
  producer to a :class:`~pyconnect.errors.KafkaAccessError` (a refused ACL) or a
  :class:`TransactionsUnavailableError` (no answer within :func:`init_timeout_s`), whose one-line
  message starts with Java's words where Java has them (``Transactional Id authorization failed.``,
  ``Not authorized to access topics: [t]``, ``Timeout expired after <ms>ms while awaiting
  InitProducerId``) and goes on with the resource, the operations and the fix; ``None`` for anything
  else. The cause chain is searched, so a refusal wrapped by a commit error is still found; a chain
  holding a :class:`~pyconnect.kafka.producer_fencing.ProducerFencingError` gives ``None``: the
  zombie-fencing round's message already names the admin client's principal, which is not the
  producer's.
- Messages name ids, topics and clusters, never a config value.
"""

from __future__ import annotations

from aiokafka import errors as kafka_errors

from pyconnect.errors import AuthorizationError, ConnectError, KafkaAccessError
from pyconnect.kafka.producer_fencing import ProducerFencingError

INIT_TIMEOUT_S = 60.0
"""The longest a transactional producer waits for its producer id: Java's producer waits its
``max.block.ms`` (60 s by default; a source task's producer is given ``Long.MAX_VALUE`` there, so a Java
task waits forever); here ``min(max.block.ms, 60 s)``, see :func:`init_timeout_s`."""


def init_timeout_s(max_block_s: float) -> float:
    """How long to wait for a producer id, given the producer's ``max.block.ms`` in seconds."""
    return max(0.001, min(max_block_s, INIT_TIMEOUT_S))


class TransactionsUnavailableError(ConnectError):
    """The cluster did not give a transactional producer its id in time: a broker setting to fix."""


def transactional_id_refused(transactional_id: str, cluster: str) -> AuthorizationError:
    return AuthorizationError(
        f"Transactional Id authorization failed. The principal needs WRITE and DESCRIBE on TransactionalId "
        f"{transactional_id} on {cluster}: grant both (kafka-acls --add --operation Write --operation "
        f"Describe --transactional-id {transactional_id}); a leader claims it again by itself, a task needs "
        "a restart."
    )


def topic_write_refused(topics: str, cluster: str) -> AuthorizationError:
    return AuthorizationError(
        f"Not authorized to access topics: {topics} on {cluster}. The task's producer needs WRITE (and "
        f"DESCRIBE) on Topic {topics.strip('[]')}: grant them (kafka-acls --add --operation Write --topic ...), "
        "then restart the task."
    )


def coordinator_unavailable(
    transactional_id: str, cluster: str, timeout_s: float = INIT_TIMEOUT_S
) -> TransactionsUnavailableError:
    return TransactionsUnavailableError(
        f"Timeout expired after {int(timeout_s * 1000)}ms while awaiting InitProducerId for TransactionalId "
        f"{transactional_id} on {cluster}: no transaction coordinator answered. The brokers cannot run "
        "transactions: check that transaction.state.log.replication.factor is at most the number of brokers "
        "and transaction.state.log.min.isr at most that factor (the __transaction_state topic must exist), "
        "or disable exactly.once.source.support."
    )


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 10:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def transaction_refusal(
    exc: BaseException,
    transactional_id: str,
    cluster: str,
    *,
    initialising: bool = False,
    timeout_s: float = INIT_TIMEOUT_S,
) -> ConnectError | None:
    """The operator-facing error ``exc`` means for the producer of ``transactional_id`` on ``cluster``
    (see the module docstring); ``initialising``: ``exc`` ended the wait for the producer id, so a
    timeout there (after ``timeout_s``) means no coordinator answered."""
    chain = _chain(exc)
    if any(isinstance(link, ProducerFencingError) for link in chain):
        return None  # a zombie-fencing round's refusal: its own message names the admin principal
    for link in chain:
        if isinstance(link, TransactionsUnavailableError):
            return link
        if isinstance(link, kafka_errors.TransactionalIdAuthorizationFailed):
            return transactional_id_refused(transactional_id, cluster)
        if isinstance(link, kafka_errors.TopicAuthorizationFailedError):
            names = link.args[0] if link.args else ""
            listed = names if isinstance(names, list | tuple | set) else [names]
            return topic_write_refused("[" + ", ".join(str(n) for n in listed) + "]", cluster)
    for link in chain:
        if isinstance(link, KafkaAccessError):
            return link
    if initialising and any(isinstance(link, TimeoutError) for link in chain):
        return coordinator_unavailable(transactional_id, cluster, timeout_s)
    return None
