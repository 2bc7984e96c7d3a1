"""The operator-facing words for a transactional producer's failures (pure)."""

from __future__ import annotations

from aiokafka import errors as kafka_errors

from pyconnect.errors import AuthenticationError, AuthorizationError, ConnectError
from pyconnect.kafka.producer_fencing import ProducerFencingError
from pyconnect.kafka.transaction_access import (
    TransactionsUnavailableError,
    init_timeout_s,
    transaction_refusal,
)

CLUSTER = "cluster 127.0.0.1:9092"


def test_a_refused_transactional_id_names_the_id_and_the_operations() -> None:
    got = transaction_refusal(kafka_errors.TransactionalIdAuthorizationFailed("g-c-0"), "g-c-0", CLUSTER)
    assert isinstance(got, AuthorizationError)
    assert str(got).startswith("Transactional Id authorization failed. ")
    assert "WRITE and DESCRIBE on TransactionalId g-c-0 on cluster 127.0.0.1:9092" in str(got)


def test_a_refused_topic_names_the_topic_and_write_even_when_wrapped() -> None:
    try:
        try:
            raise kafka_errors.TopicAuthorizationFailedError("orders")
        except kafka_errors.KafkaError as exc:
            raise ConnectError("commit failed") from exc
    except ConnectError as wrapped:
        got = transaction_refusal(wrapped, "g-c-0", CLUSTER)
    assert isinstance(got, AuthorizationError)
    assert str(got).startswith("Not authorized to access topics: [orders] on cluster 127.0.0.1:9092.")
    assert "WRITE (and DESCRIBE) on Topic orders" in str(got)


def test_a_timeout_means_no_coordinator_only_while_initialising() -> None:
    assert transaction_refusal(TimeoutError(), "connect-cluster-g", CLUSTER) is None
    got = transaction_refusal(TimeoutError(), "connect-cluster-g", CLUSTER, initialising=True, timeout_s=10)
    assert isinstance(got, TransactionsUnavailableError)
    text = str(got)
    assert init_timeout_s(9.2e15) == 60.0 and init_timeout_s(10.0) == 10.0
    assert text.startswith("Timeout expired after 10000ms while awaiting InitProducerId for TransactionalId ")
    assert "connect-cluster-g" in text and "transaction.state.log.replication.factor" in text


def test_other_access_errors_pass_through_and_the_rest_is_not_ours() -> None:
    login = AuthenticationError("Authentication to cluster x failed: wrong password")
    assert transaction_refusal(login, "t", CLUSTER) is login
    assert transaction_refusal(ValueError("boom"), "t", CLUSTER) is None


def test_an_access_error_already_made_from_a_refused_id_is_worded_again() -> None:
    try:
        try:
            raise kafka_errors.TransactionalIdAuthorizationFailed("g-c-1")
        except kafka_errors.KafkaError as exc:
            raise AuthorizationError("Transactional Id authorization failed g-c-1 on x") from exc
    except AuthorizationError as made:
        got = transaction_refusal(made, "g-c-1", CLUSTER)
    assert got is not None and "WRITE and DESCRIBE on TransactionalId g-c-1" in str(got)


def test_a_fencing_rounds_refusal_keeps_its_own_words() -> None:
    try:
        try:
            raise kafka_errors.TransactionalIdAuthorizationFailed("g-c-0")
        except kafka_errors.KafkaError as exc:
            raise ProducerFencingError("InitProducerId request for transactionalId `g-c-0` failed") from exc
    except ProducerFencingError as fencing:
        assert transaction_refusal(fencing, "g-c-0", CLUSTER) is None
