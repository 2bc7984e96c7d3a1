"""The one place pyconnect reaches inside aiokafka: every patch point and every private attribute.

Contract:

- Importing this module checks the installed aiokafka: ``aiokafka.__version__`` must be in
  :data:`SUPPORTED` (``>=0.14,<0.15``, the versions ``tests/unit/kafka/test_aiokafka_seam.py`` passes on,
  and the pin in ``pyproject.toml``); otherwise :class:`UnsupportedAiokafka` (an ``ImportError``) names
  the installed version and the supported range (a :class:`~pyconnect.errors.ConfigError` too). Every module that imports this one fails to import
  with it, so an unknown aiokafka stops pyconnect at start-up, not on the data path.
- No other module of pyconnect replaces an aiokafka method, function or attribute, or reads or writes
  an attribute aiokafka keeps private (a name starting with ``_``); ``tests/unit/house/test_import_seams.py``
  holds that rule. They call the small named functions below instead, each of which does exactly
  the access its name says (same attribute, same default when absent), so behaviour is that of the
  code they replaced, byte for byte on the wire.
- Each patch point and private attribute has a contract test in ``tests/unit/kafka/test_aiokafka_seam.py``
  that fails, naming the point, when aiokafka no longer has it with the shape assumed here.

What lives here and what does not. The installations (the assignments into aiokafka objects) and the
private reads live here; the bodies of the larger replacements stay next to the logic they serve
(:mod:`~pyconnect.kafka.produce_writes` frames a produce request, :mod:`~pyconnect.kafka.batch_expiry`
filters a drain, :mod:`~pyconnect.kafka.parked_errors` reads parked errors,
:mod:`~pyconnect.kafka.fetched_bytes` counts fetched sets), written against the functions below, so
that moving them changed no line of their logic. The produce handler and its client wrapper, which
exist only to reach ``SendProduceReqHandler``'s private ``_client``, moved here whole.

Reading order of the patch points (aiokafka 0.14; file paths are inside the aiokafka package):

1. Produce requests written as frames (:func:`install_produce_writer`). ``Sender._send_produce_req
   (node_id, batches)`` (producer/sender.py) makes a ``SendProduceReqHandler``, awaits its ``do(node_id)``
   and removes the node from ``Sender._in_flight`` and each partition from
   ``Sender._muted_partitions``. It is replaced on the producer's sender instance by the same steps
   with a handler whose ``_client`` is a wrapper whose ``send`` of a ``ProduceRequest`` is
   :func:`~pyconnect.kafka.produce_writes.send_produce` (framing plus the batches' own buffers, one
   ``writelines``), so batches are not re-encoded. That function reads the connection through
   ``AIOKafkaClient._get_conn`` and the connection's ``_versions``, ``_writer``, ``_host``/``_port``,
   ``_next_correlation_id()``, ``_client_id``, ``_requests`` (a deque of ``(correlation_id,
   request_struct, future)`` the reader answers in order) and ``_request_timeout``, and the request's
   ``_transactional_id``, ``_required_acks``, ``_timeout`` and ``_topics``. If aiokafka renames
   ``_send_produce_req`` the replacement is never called (batches go aiokafka's way, slower, and the
   tuple batches of :class:`~pyconnect.kafka.raw_batches_io.RawBatch` fail to encode); if the handler
   or connection internals change, produce requests fail.
2. Expiry at drain (:func:`install_drain_by_nodes`). ``MessageAccumulator.drain_by_nodes(ignore_nodes,
   muted_partitions)`` (producer/message_accumulator.py) returns ``(nodes, unknown_leaders)``; it is
   replaced on a non-transactional producer's accumulator by a wrapper that fails the drained batches
   past their time to live (``_batch_ttl``, which :func:`set_batch_ttl` sets to delivery.timeout.ms).
   If its name or return shape changes, batches are no longer expired at drain or sends fail.
3. Parked errors (:func:`install_transaction_error_hook`, :func:`install_fail_all`).
   ``TransactionManager.error_transaction(exc)`` and ``fatal_error(exc)`` (producer/transaction_manager.py)
   and ``MessageAccumulator.fail_all(exc)`` are replaced on the instance by wrappers that call them,
   then read the exceptions parked on ``TransactionManager._transaction_waiter`` and on each failed
   batch's ``MessageBatch._drain_waiter`` (batches from ``_batches`` and ``_pending_batches``). If they
   change, "Future exception was never retrieved" is logged again.
4. Counting fetched bytes (:func:`install_fetch_buffer`). ``Fetcher._records`` (consumer/fetcher.py),
   the ``OrderedDict`` of completed fetches, is replaced by a subclass that counts each stored
   ``FetchResult._partition_records._records`` (``MemoryRecords.size_in_bytes()``). The caller
   checks the shape first and falls back to counting polled records.
5. The fetcher's wake-up (:func:`slow_fetcher_wakeup`). ``Fetcher._fetcher_timeout`` (seconds,
   ``consumer_timeout_ms / 1000``) is raised for a raw source consumer whose partitions are all
   paused. If renamed, only idle CPU rises.
6. Batch time to live (:func:`set_batch_ttl`). ``MessageAccumulator._batch_ttl`` (seconds) is set to
   the producer's delivery timeout. If renamed, batches expire at the request timeout again.
7. OAUTHBEARER answers (:func:`install_oauth_authenticator`). ``AIOKafkaConnection.authenticator_oauth``
   (conn.py) is replaced at class level (at import of :mod:`~pyconnect.kafka.oauth_login`) by a
   factory of an ``OAuthAuthenticator`` subclass that answers a broker's error document; it reads
   the connection's ``_sasl_oauth_token_provider`` and the authenticator's ``_token_sent``. If they
   change, a rejected token hangs or fails differently.
8. Raw fetches (no patch: a bypass). ``Fetcher._proc_fetch_request`` (consumer/fetcher.py) decodes
   every record it fetches and has no hook; :mod:`~pyconnect.kafka.raw_batches_io` sends its own
   ``FetchRequest`` subclass through the consumer's ``AIOKafkaClient.send`` (public), overriding
   ``FetchRequest.build(request_struct_class)`` and setting the struct's ``RESPONSE_TYPE`` (the
   connection's reader decodes with it). The consumer's parts it needs are read here:
   ``AIOKafkaConsumer._client``, ``_fetcher`` (its ``_isolation_level``, ``_fetch_max_wait_ms``,
   ``_fetch_min_bytes``, ``_fetch_max_bytes``, ``_max_partition_fetch_bytes``, ``_records``),
   ``_subscription`` and ``_request_timeout_ms``.
9. Raw produce (no patch: an interface). ``AIOKafkaProducer.send_batch`` queues any builder; aiokafka
   then calls the builder's ``_set_producer_state(producer_id, producer_epoch, base_sequence)``
   (``MessageAccumulator._pop_batch``) and ``_build()`` (``MessageBatch.get_data_buffer``), which
   :class:`~pyconnect.kafka.raw_batches_io.RawBatch` implements. If aiokafka calls other private
   methods of a builder, raw produce fails.

Other private reads, each a function below: ``AIOKafkaProducer._sender``, ``_max_request_size``,
``_compression_type``, ``_message_accumulator``, ``_txn_manager``; ``AIOKafkaClient._topics`` (the topics its metadata
tracks), ``_client_id``, ``_security_protocol``, ``_sasl_mechanism``, ``_sasl_plain_username``,
``_sasl_oauth_token_provider``; ``ClusterMetadata._partitions`` (``{topic: {partition:
PartitionMetadata}}``, read without the per-call copies of its accessors);
``AIOKafkaAdminClient._client`` and ``_send_request(request, node_id=None)``.

Reading order of the raw record-batch path, fetch to produce (a mirror task that copies batches):

1. :mod:`pyconnect.kafka.raw_source_fetch` (:class:`RawSourceFetch`) keeps the source consumer's
   partitions paused and, per leader, sends one fetch with
   :func:`~pyconnect.kafka.raw_batches_io.fetch_raw_session`, keeping the KIP-227 session of
   :mod:`pyconnect.kafka.fetch_session`.
2. :mod:`pyconnect.kafka.raw_batches_io` sends the ``SessionFetchRequest`` through the consumer's
   client; the answer is read in place by :mod:`pyconnect.kafka.fetch_answers` (each partition's
   records a ``memoryview`` of the response).
3. :mod:`pyconnect.kafka.record_batches` splits a partition's records into batches, reads their
   headers and the aborted transactions (read_committed), and decides whether a batch can be copied
   as it is (``refusal``).
4. ``connectors/mirror`` (the source task and ``raw_copy``) and ``pyconnect/worker/source_task.py``
   make each batch a :class:`~pyconnect.kafka.raw_batches_io.RawBatch` (``RawBatch.of_batch``) and
   hand it to :meth:`pyconnect.kafka.batch_sender.BatchSender.send_raw` (or
   :mod:`pyconnect.kafka.task_transactions` for exactly-once).
5. :mod:`pyconnect.kafka.batch_sender` checks the size against ``max.request.size`` and gives it to
   :mod:`pyconnect.kafka.target_lanes`, which hands it to ``AIOKafkaProducer.send_batch`` once its
   partition is ready (:mod:`pyconnect.kafka.target_metadata`) or parks it.
6. aiokafka's accumulator and sender batch it per node (patch points 2, 3, 6); at the first build
   ``RawBatch._build`` rewrites the header (producer state, transactional bit, CRC).
7. :mod:`pyconnect.kafka.produce_writes` (patch point 1) writes the produce request as the framing of
   :mod:`pyconnect.kafka.produce_frames` around the batches' own buffers, and reads the answer
   through aiokafka's connection.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import aiokafka
from aiokafka.conn import AIOKafkaConnection
from aiokafka.producer.sender import SendProduceReqHandler
from aiokafka.protocol.produce import ProduceRequest

from pyconnect.errors import ConfigError

SUPPORTED = ((0, 14), (0, 15))
"""The aiokafka versions pyconnect runs on: at least the first, below the second."""
SUPPORTED_RANGE = ">=0.14,<0.15"


class UnsupportedAiokafka(ConfigError, ImportError):
    """The installed aiokafka is outside :data:`SUPPORTED`: a deployment's configuration error, raised
    while importing (so an ``ImportError`` too, for callers that import optionally)."""


def check_version(version: str) -> None:
    """Raise :class:`UnsupportedAiokafka` unless ``version`` (an ``aiokafka.__version__``) is supported."""
    found = re.match(r"(\d+)\.(\d+)", version)
    release = (int(found.group(1)), int(found.group(2))) if found else None
    if release is None or not SUPPORTED[0] <= release < SUPPORTED[1]:
        raise UnsupportedAiokafka(
            f"aiokafka {version} is installed; pyconnect supports aiokafka{SUPPORTED_RANGE}"
        )


check_version(str(getattr(aiokafka, "__version__", "unknown")))


# -- Producer ---------------------------------------------------------------------------------------

_PRODUCE_WRITER_MARK = "_pyconnect_writes_produce_frames"

ProduceSend = Callable[[Any, int, ProduceRequest], Awaitable[Any]]


def producer_sender(producer: Any) -> Any:
    """``AIOKafkaProducer._sender``, or ``None`` without one."""
    return getattr(producer, "_sender", None)


def max_request_bytes(producer: Any) -> int:
    """``AIOKafkaProducer._max_request_size`` (max.request.size)."""
    size: int = producer._max_request_size
    return size


def max_request_bytes_or_none(producer: Any) -> Any:
    """``AIOKafkaProducer._max_request_size``, else ``None`` (not an aiokafka producer)."""
    return getattr(producer, "_max_request_size", None)


def producer_compression_type(producer: Any) -> Any:
    """``AIOKafkaProducer._compression_type`` (``"gzip"``, ... or ``None``), else ``None``."""
    return getattr(producer, "_compression_type", None)


def producer_accumulator(producer: Any) -> Any:
    """``AIOKafkaProducer._message_accumulator``, or ``None`` without one."""
    return getattr(producer, "_message_accumulator", None)


def producer_txn_manager(producer: Any) -> Any:
    """``AIOKafkaProducer._txn_manager``, or ``None`` without one (neither idempotent nor transactional)."""
    return getattr(producer, "_txn_manager", None)


def producer_txn_manager_of_started(producer: Any) -> Any:
    """``AIOKafkaProducer._txn_manager`` of a real producer (``AttributeError`` on anything else)."""
    return producer._txn_manager


def set_batch_ttl(producer: Any, seconds: float) -> None:
    """Patch point 6: the producer's batches expire ``seconds`` after they are queued."""
    producer._message_accumulator._batch_ttl = seconds


def accumulator_queues(accumulator: Any, default: Any = None) -> Any:
    """``MessageAccumulator._batches`` (``{TopicPartition: deque[MessageBatch]}``), else ``default``."""
    return getattr(accumulator, "_batches", default)


def accumulator_pending(accumulator: Any) -> Any:
    """``MessageAccumulator._pending_batches`` (drained, in flight), else ``()``."""
    return getattr(accumulator, "_pending_batches", ())


def batch_drain_waiter(batch: Any) -> Any:
    """``MessageBatch._drain_waiter``, else ``None``."""
    return getattr(batch, "_drain_waiter", None)


def transaction_waiter(manager: Any) -> Any:
    """``TransactionManager._transaction_waiter``, else ``None``."""
    return getattr(manager, "_transaction_waiter", None)


def install_drain_by_nodes(accumulator: Any, drain: Callable[..., Any]) -> None:
    """Patch point 2: ``accumulator.drain_by_nodes`` becomes ``drain``."""
    accumulator.drain_by_nodes = drain


def install_transaction_error_hook(manager: Any, name: str, hook: Callable[[BaseException], None]) -> None:
    """Patch point 3: ``manager.<name>`` (``error_transaction`` or ``fatal_error``) becomes ``hook``."""
    setattr(manager, name, hook)


def install_fail_all(accumulator: Any, fail_all: Callable[[BaseException], None]) -> None:
    """Patch point 3: ``accumulator.fail_all`` becomes ``fail_all``."""
    accumulator.fail_all = fail_all


class _FrameWritingClient:
    """The producer's client as its produce handler sees it, with ``send`` of a produce request
    going to the installed writer."""

    __slots__ = ("_client", "_pyconnect_send")

    def __init__(self, client: Any, send: ProduceSend) -> None:
        self._client = client
        self._pyconnect_send = send

    async def send(self, node_id: int, request: Any, **kwargs: Any) -> Any:
        if isinstance(request, ProduceRequest) and not kwargs:
            return await self._pyconnect_send(self._client, node_id, request)
        return await self._client.send(node_id, request, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class _FrameWritingHandler(SendProduceReqHandler):
    def __init__(self, sender: Any, batches: Any, send: ProduceSend) -> None:
        super().__init__(sender, batches)
        self._client = _FrameWritingClient(sender.client, send)


def produce_writer_installed(producer: Any) -> bool:
    """Whether :func:`install_produce_writer` was called on ``producer``."""
    return bool(getattr(producer_sender(producer), _PRODUCE_WRITER_MARK, False))


def install_produce_writer(producer: Any, send: ProduceSend) -> None:
    """Patch point 1: the producer's sender sends each produce request with ``send(client, node_id,
    request)`` (what ``AIOKafkaClient.send(node_id, request)`` returns); the rest of the sender is
    aiokafka's. Once per producer: a second call changes nothing."""
    sender: Any = producer._sender
    if getattr(sender, _PRODUCE_WRITER_MARK, False):
        return

    async def send_produce_request(node_id: int, batches: Any) -> None:
        handler = _FrameWritingHandler(sender, batches, send)
        await handler.do(node_id)
        sender._in_flight.remove(node_id)
        for tp in batches:
            sender._muted_partitions.remove(tp)

    sender._send_produce_req = send_produce_request
    setattr(sender, _PRODUCE_WRITER_MARK, True)


async def client_connection(client: Any, node_id: int) -> Any:
    """``AIOKafkaClient._get_conn(node_id)``: the node's connection, or ``None`` when not ready."""
    return await client._get_conn(node_id)


def connection_versions(conn: Any) -> Any:
    """``AIOKafkaConnection._versions``: ``{api_key: (lowest, highest)}`` negotiated with the broker."""
    return conn._versions


def connection_writer(conn: Any) -> Any:
    """``AIOKafkaConnection._writer`` (``None`` once closed)."""
    return conn._writer


def connection_address(conn: Any) -> str:
    """``host:port`` of the connection (``_host``, ``_port``)."""
    return f"{conn._host}:{conn._port}"


def connection_next_correlation_id(conn: Any) -> int:
    """``AIOKafkaConnection._next_correlation_id()``."""
    correlation_id: int = conn._next_correlation_id()
    return correlation_id


def connection_client_id(conn: Any) -> Any:
    """``AIOKafkaConnection._client_id``."""
    return conn._client_id


def connection_expect_answer(conn: Any, correlation_id: int, request_struct: Any, future: Any) -> None:
    """Queue ``future`` on the connection's ``_requests``: its reader resolves it with the answer to
    ``correlation_id``, decoded by ``request_struct``."""
    conn._requests.append((correlation_id, request_struct, future))


def connection_request_timeout(conn: Any) -> Any:
    """``AIOKafkaConnection._request_timeout`` (seconds)."""
    return conn._request_timeout


def connection_token_provider(conn: Any) -> Any:
    """``AIOKafkaConnection._sasl_oauth_token_provider``."""
    return conn._sasl_oauth_token_provider


def install_oauth_authenticator(factory: Callable[[AIOKafkaConnection], Any]) -> None:
    """Patch point 7: every connection makes its OAUTHBEARER authenticator with ``factory(connection)``."""
    AIOKafkaConnection.authenticator_oauth = factory


def oauth_token_sent(authenticator: Any) -> Any:
    """``OAuthAuthenticator._token_sent``: whether the client's token was sent."""
    return authenticator._token_sent


def produce_request_fields(request: ProduceRequest) -> tuple[Any, Any, Any, Any]:
    """``(transactional_id, required_acks, timeout, topics)`` of a ``ProduceRequest``: its
    ``_transactional_id``, ``_required_acks``, ``_timeout`` and ``_topics`` (``[(topic, [(partition,
    batch)])]``)."""
    return request._transactional_id, request._required_acks, request._timeout, request._topics


# -- Clients and metadata ---------------------------------------------------------------------------


def client_topics(client: Any) -> Any:
    """``AIOKafkaClient._topics``: the topics its metadata tracks (a set)."""
    return client._topics


def client_topics_or_none(client: Any) -> Any:
    """``AIOKafkaClient._topics``, else ``()``."""
    return getattr(client, "_topics", ())


def client_id(client: Any) -> Any:
    """``AIOKafkaClient._client_id``, else ``""``."""
    return getattr(client, "_client_id", "")


def client_sasl(client: Any) -> tuple[Any, Any, Any]:
    """``(security_protocol, sasl_plain_username, sasl_mechanism)`` of an ``AIOKafkaClient``, each
    ``""``/``None``/``None`` when absent."""
    return (
        getattr(client, "_security_protocol", ""),
        getattr(client, "_sasl_plain_username", None),
        getattr(client, "_sasl_mechanism", None),
    )


def client_token_provider(client: object) -> Any:
    """The ``_sasl_oauth_token_provider`` of an aiokafka producer's, consumer's or admin client's
    ``AIOKafkaClient`` (``client`` of a producer, ``_client`` of a consumer or admin), else ``None``."""
    inner = getattr(client, "client", None) or getattr(client, "_client", None)
    return getattr(inner, "_sasl_oauth_token_provider", None)


def cluster_partitions_table(cluster: Any) -> Any:
    """``ClusterMetadata._partitions`` (``{topic: {partition: PartitionMetadata}}``), else ``None``."""
    return getattr(cluster, "_partitions", None)


def admin_client(admin: Any) -> Any:
    """``AIOKafkaAdminClient._client``."""
    return admin._client


def admin_send_request(admin: Any, *args: Any, **kwargs: Any) -> Any:
    """``AIOKafkaAdminClient._send_request(request, node_id=None)``: the awaitable answer."""
    return admin._send_request(*args, **kwargs)


# -- Consumer and fetcher ---------------------------------------------------------------------------


def consumer_client(consumer: Any) -> Any:
    """``AIOKafkaConsumer._client`` (its ``AIOKafkaClient``)."""
    return consumer._client


def consumer_fetcher(consumer: Any) -> Any:
    """``AIOKafkaConsumer._fetcher``."""
    return consumer._fetcher


def consumer_fetcher_or_none(consumer: Any) -> Any:
    """``AIOKafkaConsumer._fetcher``, else ``None`` (not started)."""
    return getattr(consumer, "_fetcher", None)


def consumer_subscription(consumer: Any) -> Any:
    """``AIOKafkaConsumer._subscription`` (its ``SubscriptionState``)."""
    return consumer._subscription


def consumer_request_timeout_ms(consumer: Any) -> Any:
    """``AIOKafkaConsumer._request_timeout_ms``."""
    return consumer._request_timeout_ms


def fetcher_settings(fetcher: Any) -> tuple[Any, Any, Any, Any, Any]:
    """``(isolation_level, fetch_max_wait_ms, fetch_min_bytes, fetch_max_bytes,
    max_partition_fetch_bytes)`` of a ``Fetcher`` (its private fields of those names)."""
    return (
        fetcher._isolation_level,
        fetcher._fetch_max_wait_ms,
        fetcher._fetch_min_bytes,
        fetcher._fetch_max_bytes,
        fetcher._max_partition_fetch_bytes,
    )


def slow_fetcher_wakeup(fetcher: Any, at_least_s: float) -> None:
    """Patch point 5: the fetcher's periodic wake-up (``_fetcher_timeout``) is at least ``at_least_s``."""
    fetcher._fetcher_timeout = max(float(fetcher._fetcher_timeout), at_least_s)


def fetcher_buffer(fetcher: Any) -> Any:
    """``Fetcher._records`` (``{TopicPartition: FetchResult | FetchError}``), else ``None``."""
    return getattr(fetcher, "_records", None)


def fetcher_drop_buffered(fetcher: Any, tp: Any) -> None:
    """Drop the completed fetch the fetcher holds for ``tp`` (from ``Fetcher._records``), if any."""
    fetcher._records.pop(tp, None)


def install_fetch_buffer(fetcher: Any, buffer: Any) -> None:
    """Patch point 4: ``Fetcher._records`` becomes ``buffer``."""
    fetcher._records = buffer


def fetch_result_records(result: Any) -> Any:
    """The ``MemoryRecords`` of a ``FetchResult`` (``_partition_records._records``), else ``None``."""
    return getattr(getattr(result, "_partition_records", None), "_records", None)
