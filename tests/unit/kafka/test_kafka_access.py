"""A cluster's refusals as operators read them (pyconnect.kafka.access), the scheduler's handling of them
(connectors.mirror.scheduler), the trace a FAILED item reports, and the SASL mechanism check.

Pure logic: the aiokafka errors are built as aiokafka raises them (same classes, same arguments); the
behaviour of real brokers is covered by tests/integration/test_secured_failures.py.
"""

from __future__ import annotations

import asyncio
import ssl

import pytest
from aiokafka import errors as kafka_errors

from connectors.mirror.scheduler import Scheduler
from pyconnect.config.client_configs import ClientConfigError, admin_kwargs
from pyconnect.errors import AuthenticationError, AuthorizationError, ConnectError, KafkaAccessError
from pyconnect.kafka.access import (
    INIT_PRODUCER_ID,
    access_error,
    cluster_label,
    refusals_raised,
    start_client,
)
from pyconnect.worker.failure_trace import failure_trace

CLUSTER = "source cluster S (127.0.0.1:9092)"
SCRAM_REFUSAL = (
    "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
)


def test_cluster_label_names_side_alias_and_servers() -> None:
    config = {"bootstrap.servers": "127.0.0.1:9092, 127.0.0.1:9093"}
    assert cluster_label(config, "S", "source") == "source cluster S (127.0.0.1:9092,127.0.0.1:9093)"
    assert cluster_label(config) == "cluster 127.0.0.1:9092,127.0.0.1:9093"
    assert cluster_label({}, "T") == "cluster T"


@pytest.mark.parametrize(
    ("raised", "kind", "message"),
    [
        (
            kafka_errors.SaslAuthenticationFailed(SCRAM_REFUSAL),
            AuthenticationError,
            f"Authentication to {CLUSTER} failed: {SCRAM_REFUSAL}",
        ),
        (
            kafka_errors.UnsupportedSaslMechanismError(object()),
            AuthenticationError,
            f"Authentication to {CLUSTER} failed: Client SASL mechanism 'SCRAM-SHA-512' not enabled in the server",
        ),
        (
            ssl.SSLCertVerificationError(1, "certificate verify failed"),
            AuthenticationError,
            f"Authentication to {CLUSTER} failed: SSL handshake failed (",
        ),
        (
            kafka_errors.TopicAuthorizationFailedError("orders"),
            AuthorizationError,
            f"Not authorized to access topics: [orders] on {CLUSTER}",
        ),
        (
            kafka_errors.TopicAuthorizationFailedError({"a"}),
            AuthorizationError,
            f"Not authorized to access topics: [a] on {CLUSTER}",
        ),
        (
            kafka_errors.GroupAuthorizationFailedError("Unable to get coordinator id for app"),
            AuthorizationError,
            f"Not authorized to access group: app on {CLUSTER}",
        ),
        (
            kafka_errors.ClusterAuthorizationFailedError(),
            AuthorizationError,
            f"Cluster authorization failed on {CLUSTER}",
        ),
        (
            kafka_errors.TransactionalIdAuthorizationFailed("tx-1"),
            AuthorizationError,
            f"Transactional Id authorization failed tx-1 on {CLUSTER}",
        ),
    ],
)
def test_refusals_become_access_errors_in_javas_words(
    raised: BaseException, kind: type[KafkaAccessError], message: str
) -> None:
    found = access_error(raised, CLUSTER, mechanism="SCRAM-SHA-512")
    assert isinstance(found, kind)
    assert str(found).startswith(message), str(found)
    assert not found.retriable
    assert "\n" not in str(found)


def test_group_and_operation_are_named_when_the_caller_knows_them() -> None:
    group = access_error(kafka_errors.GroupAuthorizationFailedError(), CLUSTER, group="app")
    assert str(group) == f"Not authorized to access group: app on {CLUSTER}"
    init = access_error(kafka_errors.ClusterAuthorizationFailedError(), CLUSTER, operation=INIT_PRODUCER_ID)
    assert str(init) == f"Cluster authorization failed for {INIT_PRODUCER_ID} on {CLUSTER}"


@pytest.mark.parametrize(
    "other",
    [
        kafka_errors.KafkaConnectionError("Unable to bootstrap from [('127.0.0.1', 9092, 2)]"),
        kafka_errors.NotLeaderForPartitionError(),
        kafka_errors.RequestTimedOutError(),
        TimeoutError(),
        ConnectionRefusedError(),
        ValueError("x"),
    ],
)
def test_everything_else_is_no_refusal(other: BaseException) -> None:
    assert access_error(other, CLUSTER) is None


def test_an_access_error_stays_itself() -> None:
    error = AuthorizationError("Not authorized to access topics: [t] on cluster x")
    assert access_error(error, CLUSTER) is error


def test_refusals_raised_replaces_only_refusals() -> None:
    with pytest.raises(AuthorizationError, match=r"^Not authorized to access group: g on ") as caught:
        with refusals_raised(CLUSTER, group="g"):
            raise kafka_errors.GroupAuthorizationFailedError("Unable to get coordinator id for g")
    assert isinstance(caught.value.__cause__, kafka_errors.GroupAuthorizationFailedError)
    with pytest.raises(kafka_errors.RequestTimedOutError), refusals_raised(CLUSTER):
        raise kafka_errors.RequestTimedOutError()


class FakeClient:
    """A client whose start raises ``error``; records whether it was stopped."""

    def __init__(self, error: BaseException | None) -> None:
        self.error = error
        self.stopped = False

    async def start(self) -> None:
        if self.error is not None:
            raise self.error

    async def stop(self) -> None:
        self.stopped = True


async def test_start_client_stops_a_client_whose_start_failed_and_names_the_refusal() -> None:
    refused = FakeClient(kafka_errors.ClusterAuthorizationFailedError())
    with pytest.raises(AuthorizationError, match="Cluster authorization failed") as caught:
        await start_client(refused, {}, CLUSTER)
    assert refused.stopped and isinstance(
        caught.value.__cause__, kafka_errors.ClusterAuthorizationFailedError
    )

    broken = FakeClient(kafka_errors.RequestTimedOutError())
    with pytest.raises(kafka_errors.RequestTimedOutError):
        await start_client(broken, {}, CLUSTER)
    assert broken.stopped

    cancelled = FakeClient(asyncio.CancelledError())
    with pytest.raises(asyncio.CancelledError):
        await start_client(cancelled, {}, CLUSTER)
    assert cancelled.stopped

    fine = FakeClient(None)
    await start_client(fine, {}, CLUSTER)
    assert not fine.stopped


def test_failure_trace_starts_with_the_exception_line() -> None:
    try:
        try:
            raise kafka_errors.TopicAuthorizationFailedError("t")
        except kafka_errors.TopicAuthorizationFailedError as exc:
            raise AuthorizationError("Not authorized to access topics: [t] on cluster x") from exc
    except AuthorizationError as error:
        trace = failure_trace(error)
    first, blank, *rest = trace.splitlines()
    assert first == "pyconnect.errors.AuthorizationError: Not authorized to access topics: [t] on cluster x"
    assert blank == ""
    assert "TopicAuthorizationFailedError" in "\n".join(rest) and rest[-1] == first


async def test_scheduler_raises_a_refusal_from_execute_and_keeps_retrying_a_refused_repeating_job() -> None:
    refusal = AuthorizationError("Not authorized to access group: g on cluster x")
    refused_with: list[tuple[KafkaAccessError, str]] = []
    accepted: list[str] = []
    runs = 0

    async def refused_twice() -> None:
        nonlocal runs
        runs += 1
        if runs <= 3:
            raise refusal

    async def failing() -> None:
        raise ConnectError("transient")

    scheduler = Scheduler("c", 5.0, lambda exc, what: refused_with.append((exc, what)), accepted.append)
    with pytest.raises(AuthorizationError):
        await scheduler.execute(refused_twice, "loading groups")
    assert await scheduler.execute(failing, "other") is False  # other errors are only logged

    scheduler.schedule_repeating(refused_twice, 0.001, "syncing")
    deadline = asyncio.get_running_loop().time() + 10
    while not accepted and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.005)
    assert refused_with == [(refusal, "syncing"), (refusal, "syncing")]
    assert accepted and set(accepted) == {"syncing"}  # still repeating once it passes
    await asyncio.wait_for(scheduler.close(), 10)


@pytest.mark.parametrize(
    ("mechanism", "message"),
    [
        (
            "SCRAM-SHA-1",
            r"Invalid value SCRAM-SHA-1 for configuration sasl\.mechanism: unknown SASL mechanism",
        ),
        ("scram-sha-512", r"Invalid value scram-sha-512 for configuration sasl\.mechanism"),
    ],
)
def test_an_unknown_sasl_mechanism_is_refused_naming_the_key(mechanism: str, message: str) -> None:
    config = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism}
    with pytest.raises(ClientConfigError, match=message):
        admin_kwargs(config)
    assert admin_kwargs({"sasl.mechanism": mechanism}) == {"sasl_mechanism": mechanism}  # unused on PLAINTEXT
