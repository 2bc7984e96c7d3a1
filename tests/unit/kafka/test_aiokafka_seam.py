"""Contract tests of pyconnect.kafka.aiokafka_seam: one per patch point and private attribute it uses.

Each test checks, on the installed aiokafka, that the method the seam replaces has the signature the
replacement assumes, or that the private attribute it reads exists on a real, unstarted aiokafka
object (bootstrap 127.0.0.1:9, never connected). A failure names the point and the installed
aiokafka: pin aiokafka back to the supported range, or port the seam (its docstring says what each
point is for) and widen ``SUPPORTED``.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiokafka
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.abc import AbstractTokenProvider
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.client import AIOKafkaClient
from aiokafka.conn import AIOKafkaConnection, OAuthAuthenticator
from aiokafka.consumer.fetcher import Fetcher, FetchResult, PartitionRecords
from aiokafka.producer.message_accumulator import MessageAccumulator, MessageBatch
from aiokafka.producer.sender import Sender, SendProduceReqHandler
from aiokafka.producer.transaction_manager import TransactionManager
from aiokafka.protocol.fetch import FetchRequest
from aiokafka.protocol.produce import ProduceRequest
from aiokafka.structs import TopicPartition

from pyconnect.kafka import aiokafka_seam as seam

NOWHERE = "127.0.0.1:9"
INSTALLED = getattr(aiokafka, "__version__", "unknown")


def _fail(point: str, what: str) -> str:
    return f"aiokafka {INSTALLED}, seam point {point!r}: {what} (pyconnect supports aiokafka{seam.SUPPORTED_RANGE})"


def assert_parameters(point: str, function: Callable[..., Any], expected: list[str]) -> None:
    names = list(inspect.signature(function).parameters)
    assert names[: len(expected)] == expected, _fail(
        point, f"{function.__qualname__}{inspect.signature(function)}, expected parameters {expected}"
    )


def assert_has(point: str, obj: Any, *names: str) -> None:
    missing = [name for name in names if not hasattr(obj, name)]
    assert not missing, _fail(point, f"{type(obj).__qualname__} has no {', '.join(missing)}")


def assert_assigns(point: str, function: Callable[..., Any], *attributes: str) -> None:
    source = inspect.getsource(function)
    missing = [a for a in attributes if f"self.{a} =" not in source]
    assert not missing, _fail(point, f"{function.__qualname__} no longer sets {', '.join(missing)}")


class _Tokens(AbstractTokenProvider):
    async def token(self) -> str:
        return "t"


@pytest.fixture
async def producer() -> AsyncIterator[AIOKafkaProducer]:
    made = AIOKafkaProducer(bootstrap_servers=NOWHERE, enable_idempotence=True)
    yield made
    await made.stop()


@pytest.fixture
async def consumer() -> AsyncIterator[AIOKafkaConsumer]:
    made = AIOKafkaConsumer(bootstrap_servers=NOWHERE)
    yield made
    await made.stop()


# -- The version check ------------------------------------------------------------------------------


def test_the_installed_aiokafka_is_supported() -> None:
    seam.check_version(INSTALLED)


@pytest.mark.parametrize("version", ["0.13.0", "0.15.0", "1.0.0", "0.9.1", "unknown", ""])
def test_the_version_check_refuses_an_unsupported_aiokafka(
    monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    monkeypatch.setattr(aiokafka, "__version__", version)
    with pytest.raises(
        seam.UnsupportedAiokafka, match=r"aiokafka .* is installed; pyconnect supports aiokafka>=0.14,<0.15"
    ):
        seam.check_version(aiokafka.__version__)
    assert issubclass(seam.UnsupportedAiokafka, ImportError)


@pytest.mark.parametrize("version", ["0.14.0", "0.14.1", "0.14.0rc1", "0.14.2.dev0"])
def test_the_version_check_accepts_the_supported_range(version: str) -> None:
    seam.check_version(version)


# -- Patch points -----------------------------------------------------------------------------------


async def test_point_1_sender_send_produce_req(producer: AIOKafkaProducer) -> None:
    point = "Sender._send_produce_req"
    assert_parameters(point, Sender._send_produce_req, ["self", "node_id", "batches"])
    assert inspect.iscoroutinefunction(Sender._send_produce_req), _fail(point, "no longer a coroutine")
    sender = seam.producer_sender(producer)
    assert isinstance(sender, Sender), _fail("AIOKafkaProducer._sender", f"is {type(sender)!r}")
    assert_has("Sender._in_flight/_muted_partitions", sender, "_in_flight", "_muted_partitions", "client")
    assert_parameters("SendProduceReqHandler", SendProduceReqHandler.__init__, ["self", "sender", "batches"])
    assert_parameters("SendProduceReqHandler.do", SendProduceReqHandler.do, ["self", "node_id"])
    assert_assigns("SendProduceReqHandler._client", SendProduceReqHandler.__init__, "_client")


async def test_point_1_installs_on_the_sender_instance(producer: AIOKafkaProducer) -> None:
    async def send(client: Any, node_id: int, request: ProduceRequest) -> None:
        return None

    assert not seam.produce_writer_installed(producer)
    seam.install_produce_writer(producer, send)
    replaced = seam.producer_sender(producer)._send_produce_req
    seam.install_produce_writer(producer, send)
    assert seam.produce_writer_installed(producer)
    assert seam.producer_sender(producer)._send_produce_req is replaced
    assert not inspect.ismethod(replaced)


def test_point_1_client_get_conn() -> None:
    assert_parameters("AIOKafkaClient._get_conn", AIOKafkaClient._get_conn, ["self", "node_id"])
    assert inspect.iscoroutinefunction(AIOKafkaClient._get_conn), _fail(
        "AIOKafkaClient._get_conn", "not a coroutine"
    )


async def test_point_1_connection_fields() -> None:
    conn = AIOKafkaConnection("127.0.0.1", 9)
    point = "AIOKafkaConnection private fields"
    assert_has(
        point, conn, "_versions", "_writer", "_host", "_port", "_client_id", "_requests", "_request_timeout"
    )
    assert_parameters("AIOKafkaConnection._next_correlation_id", conn._next_correlation_id, [])
    assert isinstance(seam.connection_next_correlation_id(conn), int)
    assert hasattr(conn._requests, "append"), _fail("AIOKafkaConnection._requests", "is not a deque")
    assert seam.connection_address(conn) == "127.0.0.1:9"
    assert seam.connection_versions(conn) == {}
    assert seam.connection_writer(conn) is None


def test_point_1_produce_request_fields() -> None:
    request = ProduceRequest(transactional_id="t", required_acks=-1, timeout=30, topics=[("a", [(0, b"x")])])
    assert seam.produce_request_fields(request) == ("t", -1, 30, [("a", [(0, b"x")])]), _fail(
        "ProduceRequest._transactional_id/_required_acks/_timeout/_topics", "fields moved"
    )


async def test_point_2_accumulator_drain_by_nodes(producer: AIOKafkaProducer) -> None:
    point = "MessageAccumulator.drain_by_nodes"
    assert_parameters(point, MessageAccumulator.drain_by_nodes, ["self", "ignore_nodes", "muted_partitions"])
    accumulator = seam.producer_accumulator(producer)
    assert isinstance(accumulator, MessageAccumulator), _fail(
        "AIOKafkaProducer._message_accumulator", "missing"
    )
    drained = accumulator.drain_by_nodes(ignore_nodes=set())
    assert type(drained) is tuple and len(drained) == 2 and isinstance(drained[0], dict), _fail(
        point, f"returned {drained!r}, not (nodes, unknown_leaders)"
    )


async def test_point_3_transaction_manager_error_hooks() -> None:
    for name in ("error_transaction", "fatal_error"):
        assert_parameters(f"TransactionManager.{name}", getattr(TransactionManager, name), ["self", "exc"])
    manager = TransactionManager("t", 60000)
    assert_has("TransactionManager._transaction_waiter", manager, "_transaction_waiter", "transactional_id")


async def test_point_3_accumulator_fail_all_and_batches(producer: AIOKafkaProducer) -> None:
    assert_parameters("MessageAccumulator.fail_all", MessageAccumulator.fail_all, ["self", "exception"])
    accumulator = seam.producer_accumulator(producer)
    assert_has("MessageAccumulator._batches/_pending_batches", accumulator, "_batches", "_pending_batches")
    assert seam.accumulator_queues(accumulator) == {}
    batch = MessageBatch(TopicPartition("t", 0), None, 1.0, 0.0)
    assert seam.batch_drain_waiter(batch) is not None, _fail("MessageBatch._drain_waiter", "missing")


async def test_point_4_fetcher_records_buffer(consumer: AIOKafkaConsumer) -> None:
    point = "Fetcher._records"
    fetcher = Fetcher(seam.consumer_client(consumer), seam.consumer_subscription(consumer))
    try:
        buffered = seam.fetcher_buffer(fetcher)
        assert type(buffered).__name__ == "OrderedDict", _fail(point, f"is {type(buffered)!r}")
    finally:
        await fetcher.close()
    assert_parameters("FetchResult", FetchResult.__init__, ["self", "tp"])
    assert_assigns("FetchResult._partition_records", FetchResult.__init__, "_partition_records")
    assert_assigns("PartitionRecords._records", PartitionRecords.__init__, "_records")


async def test_point_5_fetcher_timeout_and_settings(consumer: AIOKafkaConsumer) -> None:
    fetcher = Fetcher(
        seam.consumer_client(consumer), seam.consumer_subscription(consumer), fetcher_timeout=0.2
    )
    try:
        assert_has(
            "Fetcher settings",
            fetcher,
            "_fetcher_timeout",
            "_isolation_level",
            "_fetch_max_wait_ms",
            "_fetch_min_bytes",
            "_fetch_max_bytes",
            "_max_partition_fetch_bytes",
        )
        seam.slow_fetcher_wakeup(fetcher, 5.0)
        assert fetcher._fetcher_timeout == 5.0
        assert seam.fetcher_settings(fetcher)[0] == 0, _fail(
            "Fetcher._isolation_level", "not 0 (READ_UNCOMMITTED)"
        )
    finally:
        await fetcher.close()


async def test_point_6_accumulator_batch_ttl(producer: AIOKafkaProducer) -> None:
    assert_has("MessageAccumulator._batch_ttl", seam.producer_accumulator(producer), "_batch_ttl")
    seam.set_batch_ttl(producer, 7.0)
    assert producer._message_accumulator._batch_ttl == 7.0


async def test_point_7_connection_authenticator_oauth() -> None:
    point = "AIOKafkaConnection.authenticator_oauth"
    handshake = inspect.getsource(AIOKafkaConnection._do_sasl_handshake)
    assert "self.authenticator_oauth()" in handshake, _fail(point, "the SASL handshake no longer calls it")
    conn = AIOKafkaConnection("127.0.0.1", 9, sasl_oauth_token_provider=_Tokens())
    assert isinstance(seam.connection_token_provider(conn), _Tokens), _fail(
        "AIOKafkaConnection._sasl_oauth_token_provider", "missing"
    )
    assert_parameters(
        "OAuthAuthenticator", OAuthAuthenticator.__init__, ["self", "sasl_oauth_token_provider"]
    )
    authenticator = OAuthAuthenticator(sasl_oauth_token_provider=_Tokens())
    assert seam.oauth_token_sent(authenticator) is False, _fail("OAuthAuthenticator._token_sent", "missing")


def test_point_7_is_installed_by_oauth_login() -> None:
    from pyconnect.kafka import oauth_login

    assert AIOKafkaConnection.authenticator_oauth is oauth_login._authenticator_oauth


def test_point_8_raw_fetch_bypasses_proc_fetch_request() -> None:
    assert_parameters(
        "Fetcher._proc_fetch_request",
        Fetcher._proc_fetch_request,
        ["self", "assignment", "node_id", "request"],
    )
    assert_parameters("FetchRequest.build", FetchRequest.build, ["self", "request_struct_class"])


async def test_point_8_consumer_parts(consumer: AIOKafkaConsumer) -> None:
    assert_has(
        "AIOKafkaConsumer privates", consumer, "_client", "_fetcher", "_subscription", "_request_timeout_ms"
    )
    assert isinstance(seam.consumer_client(consumer), AIOKafkaClient)
    assert seam.consumer_fetcher_or_none(consumer) is None  # made at start
    assert isinstance(seam.consumer_request_timeout_ms(consumer), int)


def test_point_9_builder_interface() -> None:
    point = "MessageBatch builder interface"
    source = inspect.getsource(MessageBatch)
    for call in (
        "self._builder._set_producer_state(producer_id, producer_epoch, base_sequence)",
        "self._builder._build()",
    ):
        assert call in source, _fail(point, f"MessageBatch no longer calls {call}")


# -- Other private reads ----------------------------------------------------------------------------


async def test_producer_privates(producer: AIOKafkaProducer) -> None:
    assert_has(
        "AIOKafkaProducer privates",
        producer,
        "_sender",
        "_max_request_size",
        "_compression_type",
        "_message_accumulator",
        "_txn_manager",
    )
    assert seam.max_request_bytes(producer) == 1048576
    assert seam.max_request_bytes_or_none(producer) == 1048576
    assert seam.producer_compression_type(producer) is None
    assert isinstance(seam.producer_txn_manager(producer), TransactionManager)
    assert seam.producer_txn_manager_of_started(producer) is seam.producer_txn_manager(producer)


async def test_client_privates(producer: AIOKafkaProducer) -> None:
    client = producer.client
    assert_has(
        "AIOKafkaClient privates",
        client,
        "_topics",
        "_client_id",
        "_security_protocol",
        "_sasl_mechanism",
        "_sasl_plain_username",
        "_sasl_oauth_token_provider",
    )
    assert seam.client_topics(client) == set()
    assert seam.client_sasl(client) == ("PLAINTEXT", None, "PLAIN")
    assert seam.client_token_provider(producer) is None
    table = seam.cluster_partitions_table(client.cluster)
    assert type(table) is dict, _fail("ClusterMetadata._partitions", f"is {type(table)!r}")


async def test_admin_privates() -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=NOWHERE)
    try:
        assert isinstance(seam.admin_client(admin), AIOKafkaClient), _fail(
            "AIOKafkaAdminClient._client", "missing"
        )
        assert_parameters(
            "AIOKafkaAdminClient._send_request",
            AIOKafkaAdminClient._send_request,
            ["self", "request", "node_id"],
        )
    finally:
        await admin.close()
