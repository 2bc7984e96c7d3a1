"""Kafka operations the MirrorMaker 2 connectors run against the source and target clusters.

Size: over 600 lines: the mirror connectors' admin calls in one client; to be split by concern (topics,
configs, ACLs, groups) before it grows further.

Connectors never import aiokafka (design.md seams); they call these helpers with Java client config
maps (``bootstrap.servers``, ``isolation.level`` ...), translated by :mod:`pyconnect.config.client_configs`.

Contract:
- :class:`MirrorAdmin` wraps one admin client. ``topic_partitions()`` is one metadata round trip
  (Java's ``listTopics`` + ``describeTopics``), broker-internal topics left out as in Java's default
  listing. ``create_topics`` / ``create_partitions`` / ``incremental_alter_configs`` return the
  per-topic error message (``None`` = success) instead of raising for per-topic failures; transport
  failures raise. Replication factor or partition count ``-1`` mean the broker default (resolved
  from the broker's configs, because aiokafka speaks CreateTopics only up to v3).
- ``describe_topic_configs`` returns :class:`ConfigEntry` lists with Java's ``ConfigSource`` codes.
- ``describe_topic_acls`` is Java's ``describeAcls`` with the any-topic filter (any name, any pattern
  type, any principal/host/operation/permission): DescribeAcls v1, whose answer carries the pattern
  type. A cluster without an authorizer raises :class:`SecurityDisabled`; other errors raise
  :class:`AclRequestError`. ``create_acls`` is Java's ``createAcls``: duplicates dropped (first one
  kept), bindings with an indefinite field refused without a request, the rest in one CreateAcls v1
  request; it returns one error message (``None`` = created or already there) per distinct binding.
- :class:`SourceConsumer` is the task's assign/seek/poll consumer (no group, no commits). ``poll``
  turns transient Kafka errors into an empty batch after a short backoff, logged at most once per
  error type and :data:`POLL_WARNING_INTERVAL_S` (Java's MirrorSourceTask logs each and returns null).
  Beyond Java, a position out of range is never reset in silence: ``poll`` raises
  :class:`PositionOutOfRange` naming every refused partition of the poll at once, with its log start
  and end and the records the same poll got for the other partitions, and the caller seeks; a
  partition without a position is placed by the configured ``auto.offset.reset`` (``reset``, asked
  at assignment, without waiting) as before. ``log_bounds`` answers log start and end offsets (a
  partition the cluster lacks is left out); ``log_bounds_of`` asks them of a short-lived consumer.
- Refusals raise: every client here is named after its cluster (``cluster``, e.g. ``source cluster
  S (host:port)``); a start refused by the cluster or an operation refused for lack of an ACL raises
  :class:`~pyconnect.errors.AuthenticationError` / :class:`~pyconnect.errors.AuthorizationError`
  (:mod:`pyconnect.kafka.access`) naming it, where Java's MM2 logs and goes on: a consumer without
  READ fails its task instead of polling forever. A client config that cannot be honoured raises
  :class:`~pyconnect.errors.ConfigError` naming the cluster. A start that fails leaves no open client.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Self

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.consumer.fetcher import OffsetResetStrategy
from aiokafka.errors import (
    IllegalStateError,
    KafkaError,
    NoOffsetForPartitionError,
    OffsetOutOfRangeError,
    TopicAuthorizationFailedError,
)
from aiokafka.protocol.admin import CreateAclsRequest_v1, DescribeAclsRequest_v1
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.commit import OffsetCommitRequest
from aiokafka.protocol.types import Array, Boolean, Int8, Int16, Int32, Schema, String

from pyconnect.config.client_configs import ClientConfigError, consumer_kwargs
from pyconnect.errors import AuthorizationError, ConfigError, ConnectError
from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.access import access_error, cluster_label, refusals_raised, start_client
from pyconnect.kafka.clients import create_admin, create_consumer, create_producer
from pyconnect.kafka.fetched_bytes import count_fetched_bytes
from pyconnect.kafka.group_describe import describe_groups
from pyconnect.kafka.group_view import GroupView
from pyconnect.kafka.source_faults import ReadRefusals, TopicCheck, check_topics
from pyconnect.kafka.topics import TOPIC_ALREADY_EXISTS, broker_defaults
from pyconnect.metrics.client_metrics import ConsumerMetrics
from pyconnect.metrics.registry import MetricsHub

log = logging.getLogger(__name__)

DEFAULT_CONFIG = 5
"""``ConfigEntry.ConfigSource.DEFAULT_CONFIG`` (DescribeConfigs ``config_source``)."""
STATIC_BROKER_CONFIG = 4
DYNAMIC_TOPIC_CONFIG = 1
OP_SET = 0
OP_DELETE = 1
TOPIC_RESOURCE = 2
INVALID_PARTITIONS = 37
TOPIC_AUTHORIZATION_FAILED = 29
GROUP_AUTHORIZATION_FAILED = 30


class _IncrementalAlterConfigsResponseV0(Response):
    API_KEY = 44
    API_VERSION = 0
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        (
            "responses",
            Array(
                ("error_code", Int16),
                ("error_message", String("utf-8")),
                ("resource_type", Int8),
                ("resource_name", String("utf-8")),
            ),
        ),
    )


class _IncrementalAlterConfigsRequestV0(RequestStruct):
    API_KEY = 44
    API_VERSION = 0
    RESPONSE_TYPE = _IncrementalAlterConfigsResponseV0
    SCHEMA = Schema(
        (
            "resources",
            Array(
                ("resource_type", Int8),
                ("resource_name", String("utf-8")),
                (
                    "configs",
                    Array(
                        ("name", String("utf-8")),
                        ("config_operation", Int8),
                        ("value", String("utf-8")),
                    ),
                ),
            ),
        ),
        ("validate_only", Boolean),
    )


class IncrementalAlterConfigsRequest(Request[_IncrementalAlterConfigsRequestV0]):
    """IncrementalAlterConfigs (API 44) v0, which aiokafka does not ship."""

    API_KEY = 44

    def __init__(self, resources: list[tuple[int, str, list[tuple[str, int, str | None]]]]) -> None:
        self._resources = resources

    def build(
        self, request_struct_class: type[_IncrementalAlterConfigsRequestV0]
    ) -> _IncrementalAlterConfigsRequestV0:
        return request_struct_class(self._resources, False)


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One described topic config (Java's ``ConfigEntry``)."""

    name: str
    value: str | None
    source: int
    read_only: bool
    sensitive: bool

    @property
    def is_default(self) -> bool:
        return self.source == DEFAULT_CONFIG


@dataclass(frozen=True, slots=True)
class NewTopicSpec:
    name: str
    partitions: int
    replication_factor: int
    configs: Mapping[str, str]


# -- ACLs (MirrorSourceConnector.syncTopicAcls) ------------------------------------------------------

SECURITY_DISABLED = 54
"""Error code of ``SecurityDisabledException``: the broker runs without an authorizer."""


class _JavaEnum(IntEnum):
    """A Java ACL enum by its wire code; codes this client does not know read as ``UNKNOWN`` (Java's
    ``fromCode``)."""

    @classmethod
    def from_code(cls, code: int) -> Self:
        try:
            return cls(code)
        except ValueError:
            return cls(0)


class ResourceType(_JavaEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(_JavaEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(_JavaEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(_JavaEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL: a resource pattern and an access control entry (Java's ``AclBinding``)."""

    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    def indefinite_field(self) -> str | None:
        """Why this binding cannot be created (Java's ``findIndefiniteField``), or ``None``."""
        if self.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
            return f"Resource type is {self.resource_type.name}."
        if self.name is None:
            return "Resource name is NULL."
        if self.pattern_type in (PatternType.ANY, PatternType.MATCH, PatternType.UNKNOWN):
            return f"Resource pattern type is {self.pattern_type.name}."
        if self.principal is None:
            return "Principal is NULL"
        if self.host is None:
            return "Host is NULL"
        if self.operation in (AclOperation.ANY, AclOperation.UNKNOWN):
            return f"Operation is {self.operation.name}"
        if self.permission_type in (AclPermissionType.ANY, AclPermissionType.UNKNOWN):
            return f"Permission type is {self.permission_type.name}"
        return None


class SecurityDisabled(ConnectError):
    """The cluster has no authorizer configured (Java's ``SecurityDisabledException``)."""


class AclRequestError(ConnectError):
    """DescribeAcls failed as a whole (authorization, unsupported version ...)."""


class _DescribeTopicAclsRequest(Request[DescribeAclsRequest_v1]):
    """DescribeAcls v1 with Java's ``ANY_TOPIC_ACL`` filter (v0 cannot filter or report pattern types)."""

    API_KEY = 29

    def build(self, request_struct_class: type[DescribeAclsRequest_v1]) -> DescribeAclsRequest_v1:
        return request_struct_class(
            ResourceType.TOPIC,
            None,
            PatternType.ANY,
            None,
            None,
            AclOperation.ANY,
            AclPermissionType.ANY,
        )


class _DescribeAclsRequest(Request[DescribeAclsRequest_v1]):
    """DescribeAcls v1 for one resource pattern (any principal, host, operation and permission)."""

    API_KEY = 29

    def __init__(self, resource_type: ResourceType, name: str | None, pattern_type: PatternType) -> None:
        self._filter = (resource_type, name, pattern_type)

    def build(self, request_struct_class: type[DescribeAclsRequest_v1]) -> DescribeAclsRequest_v1:
        return request_struct_class(*self._filter, None, None, AclOperation.ANY, AclPermissionType.ANY)


class _CreateAclsRequest(Request[CreateAclsRequest_v1]):
    """CreateAcls v1 carrying many creations (aiokafka's request builder sends one)."""

    API_KEY = 30

    def __init__(self, bindings: Sequence[AclBinding]) -> None:
        self._bindings = bindings

    def build(self, request_struct_class: type[CreateAclsRequest_v1]) -> CreateAclsRequest_v1:
        return request_struct_class(
            [
                (
                    b.resource_type,
                    b.name,
                    b.pattern_type,
                    b.principal,
                    b.host,
                    b.operation,
                    b.permission_type,
                )
                for b in self._bindings
            ]
        )


@contextlib.contextmanager
def _honoured(cluster: str) -> Iterator[None]:
    """A client config that cannot be honoured becomes a :class:`ConfigError` naming ``cluster``."""
    try:
        yield
    except ClientConfigError as exc:
        raise ConfigError(f"Client of {cluster}: {exc}") from None


class _StoppableAdmin:
    """An admin client seen as ``start``/``stop`` (what :func:`start_client` drives). ``stop`` after a
    failed start does nothing: a failed bootstrap holds no connection, and a closed admin client could
    not be started again (the next operation retries the start)."""

    def __init__(self, admin: AIOKafkaAdminClient) -> None:
        self._admin = admin

    async def start(self) -> None:
        await self._admin.start()

    async def stop(self) -> None:
        return None


class _AdminClient:
    """One admin client on one cluster (from a Java-keyed config), named ``cluster`` in its errors
    (default: its bootstrap servers); ``start`` and ``close`` are idempotent."""

    def __init__(self, java_config: Mapping[str, Any], cluster: str | None = None) -> None:
        self.cluster = cluster or cluster_label(java_config)
        self._config = dict(java_config)
        with _honoured(self.cluster):
            self._admin: AIOKafkaAdminClient = create_admin(java_config)
        self._started = False

    async def start(self) -> None:
        if not self._started:
            await start_client(_StoppableAdmin(self._admin), self._config, self.cluster)
            self._started = True

    def _refusals(self, group: str | None = None) -> contextlib.AbstractContextManager[None]:
        return refusals_raised(self.cluster, group=group)

    async def close(self) -> None:
        if self._started:
            self._started = False
            await self._admin.close()


class MirrorAdmin(_AdminClient):
    """One admin client on one cluster, with the operations MirrorSourceConnector needs."""

    async def topic_partitions(self) -> dict[str, list[int]]:
        """Every non-internal topic that has no error, with its partition numbers in broker order."""
        found: dict[str, list[int]] = {}
        with self._refusals():
            described = await self._admin.describe_topics()
        for topic in described:
            if topic.get("is_internal") or topic["error_code"] != 0:
                continue
            found[topic["topic"]] = [p["partition"] for p in topic["partitions"]]
        return found

    async def _resolve_defaults(self, specs: Sequence[NewTopicSpec]) -> list[NewTopicSpec]:
        if all(s.partitions != -1 and s.replication_factor != -1 for s in specs):
            return list(specs)
        with self._refusals():
            defaults = await broker_defaults(self._admin)
        partitions = int(defaults.get("num.partitions") or 1)
        replication = int(defaults.get("default.replication.factor") or 1)
        return [
            NewTopicSpec(
                s.name,
                partitions if s.partitions == -1 else s.partitions,
                replication if s.replication_factor == -1 else s.replication_factor,
                s.configs,
            )
            for s in specs
        ]

    async def create_topics(self, specs: Sequence[NewTopicSpec]) -> dict[str, str | None]:
        """Create the topics in one request; per topic ``None`` (created or already there) or the error."""
        if not specs:
            return {}
        resolved = await self._resolve_defaults(specs)
        with self._refusals():
            response = await self._admin.create_topics(
                [
                    NewTopic(s.name, s.partitions, s.replication_factor, topic_configs=dict(s.configs))
                    for s in resolved
                ]
            )
        results: dict[str, str | None] = {}
        for topic, code, *message in response.topic_errors:
            if code in (0, TOPIC_ALREADY_EXISTS):
                results[topic] = None
            else:
                results[topic] = (message[0] if message and message[0] else None) or f"error code {code}"
        return results

    async def create_partitions(self, counts: Mapping[str, int]) -> dict[str, str | None]:
        """Grow each topic to ``counts[topic]`` partitions; "already that many" counts as success."""
        results: dict[str, str | None] = {}
        for topic, count in counts.items():
            try:
                await self._admin.create_partitions({topic: NewPartitions(count)})
                results[topic] = None
            except KafkaError as exc:
                results[topic] = None if getattr(exc, "errno", None) == INVALID_PARTITIONS else str(exc)
        return results

    async def describe_topic_configs(self, topics: Iterable[str]) -> dict[str, list[ConfigEntry]]:
        """All configs of each topic; topics whose description failed are left out (and logged)."""
        resources = [ConfigResource(ConfigResourceType.TOPIC, t) for t in topics]
        if not resources:
            return {}
        found: dict[str, list[ConfigEntry]] = {}
        with self._refusals():
            responses = await self._admin.describe_configs(resources)
        for response in responses:
            for resource in response.to_object()["resources"]:
                if resource["error_code"] != 0:
                    log.warning(
                        "Describing the configs of topic %s failed: %s",
                        resource["resource_name"],
                        resource["error_message"] or resource["error_code"],
                    )
                    continue
                entries = []
                for entry in resource["config_entries"]:
                    source = entry.get("config_source")
                    if source is None:
                        source = DEFAULT_CONFIG if entry.get("is_default") else DYNAMIC_TOPIC_CONFIG
                    entries.append(
                        ConfigEntry(
                            entry["config_names"],
                            entry["config_value"],
                            int(source),
                            bool(entry["read_only"]),
                            bool(entry["is_sensitive"]),
                        )
                    )
                found[resource["resource_name"]] = entries
        return found

    async def incremental_alter_configs(
        self, operations: Mapping[str, Sequence[tuple[str, int, str | None]]]
    ) -> dict[str, str | None]:
        """One IncrementalAlterConfigs request: per topic ``[(name, OP_SET|OP_DELETE, value)]``."""
        if not operations:
            return {}
        request = IncrementalAlterConfigsRequest(
            [(TOPIC_RESOURCE, topic, list(ops)) for topic, ops in operations.items()]
        )
        with self._refusals():
            response = await seam.admin_send_request(self._admin, request)
        results: dict[str, str | None] = {}
        for code, message, _type, name in response.responses:
            results[name] = None if code == 0 else (message or f"error code {code}")
        return results

    async def describe_topic_acls(self) -> list[AclBinding]:
        """Every topic ACL of the cluster, in the broker's order (raises :class:`SecurityDisabled`
        without an authorizer, :class:`AclRequestError` on any other error)."""
        return await self._describe_acls(_DescribeTopicAclsRequest())

    async def describe_acls(
        self,
        resource_type: ResourceType,
        name: str | None = None,
        pattern_type: PatternType = PatternType.ANY,
        node_id: int | None = None,
    ) -> list[AclBinding]:
        """The ACLs matching one resource filter as broker ``node_id`` (any broker if ``None``) applies
        them, errors as :meth:`describe_topic_acls`."""
        return await self._describe_acls(_DescribeAclsRequest(resource_type, name, pattern_type), node_id)

    async def node_ids(self) -> list[int]:
        """The brokers of the cluster's current metadata."""
        with self._refusals():
            await seam.admin_client(self._admin).force_metadata_update()
        return sorted(b.nodeId for b in seam.admin_client(self._admin).cluster.brokers())

    async def _describe_acls(
        self, request: Request[DescribeAclsRequest_v1], node_id: int | None = None
    ) -> list[AclBinding]:
        with self._refusals():
            response = await seam.admin_send_request(self._admin, request, node_id)
        if response.error_code == SECURITY_DISABLED:
            raise SecurityDisabled(response.error_message or "No Authorizer is configured.")
        if response.error_code != 0:
            raise AclRequestError(
                f"DescribeAcls failed with error code {response.error_code}: {response.error_message}"
            )
        return [
            AclBinding(
                ResourceType.from_code(resource_type),
                name,
                PatternType.from_code(pattern_type),
                principal,
                host,
                AclOperation.from_code(operation),
                AclPermissionType.from_code(permission),
            )
            for resource_type, name, pattern_type, acls in response.resources
            for principal, host, operation, permission in acls
        ]

    async def create_acls(self, bindings: Iterable[AclBinding]) -> dict[AclBinding, str | None]:
        """Create the distinct ``bindings`` in one request; per binding ``None`` (created, or already
        there) or the error message. Bindings with an indefinite field fail without being sent."""
        results: dict[AclBinding, str | None] = {}
        sent: list[AclBinding] = []
        for binding in bindings:
            if binding in results:
                continue
            indefinite = binding.indefinite_field()
            results[binding] = None if indefinite is None else f"Invalid ACL creation: {indefinite}"
            if indefinite is None:
                sent.append(binding)
        if not sent:
            return results
        with self._refusals():
            response = await seam.admin_send_request(self._admin, _CreateAclsRequest(sent))
        answers = list(response.creation_responses)
        if len(answers) != len(sent):
            raise AclRequestError(f"CreateAcls answered {len(answers)} results for {len(sent)} ACL creations")
        for binding, (code, message) in zip(sent, answers, strict=True):
            results[binding] = None if code == 0 else (message or f"error code {code}")
        return results


POLL_WARNING_INTERVAL_S = 60.0
"""A transient poll error of one type is logged at most once per this many seconds per consumer."""
POLL_ERROR_BACKOFF_S = 0.1
"""Pause after a failed poll (Java's ``retry.backoff.ms`` default), so that errors never spin."""
LOG_BOUNDS_TIMEOUT_S = 10.0
"""Bound of the log-bounds question ``poll`` asks after refused positions (they are fetched again past it)."""


class LogBoundsUnanswered(ConnectError):
    """:meth:`SourceConsumer.log_bounds` got no answer from its cluster (the Kafka error in the message)."""


async def log_bounds_of(
    java_config: Mapping[str, Any], cluster: str, partitions: Iterable[tuple[str, int]]
) -> dict[tuple[str, int], tuple[int, int]]:
    """:meth:`SourceConsumer.log_bounds` of a short-lived consumer on ``cluster`` (closed before this
    returns); a start or a question that fails raises :class:`LogBoundsUnanswered` (a refused start its
    access error, as :meth:`SourceConsumer.start`)."""
    probe = SourceConsumer(java_config, cluster)
    try:
        try:
            await probe.start()
        except KafkaError as exc:
            raise LogBoundsUnanswered(f"{cluster} did not answer: {exc}") from exc
        return await probe.log_bounds(partitions)
    finally:
        await probe.close()


def _retrieved(answer: asyncio.Future[Any]) -> None:
    """Done callback of a reset nobody waits for: its outcome is read (a consumer closed meanwhile)."""
    if not answer.cancelled():
        answer.exception()


@dataclass(frozen=True, slots=True)
class OutOfRange:
    """A fetch position the broker refused as out of range, with the partition's log bounds then."""

    topic: str
    partition: int
    position: int
    log_start: int
    log_end: int


class PositionOutOfRange(ConnectError):
    """``poll`` met positions out of range; the consumer does not move them (the caller seeks).

    ``partitions`` holds every refused position the poll met (all of them at once, whatever the number
    of partitions); ``batch`` the records the same poll returned for other partitions (``{}`` if none),
    which the caller handles as a normal batch: nothing polled is dropped; ``raw`` the same for a raw
    fetch (:mod:`pyconnect.kafka.raw_source_fetch`)."""

    def __init__(
        self,
        partitions: Sequence[OutOfRange],
        batch: Mapping[Any, list[Any]] | None = None,
        *,
        raw: Sequence[Any] = (),
    ) -> None:
        super().__init__(", ".join(f"{p.topic}-{p.partition}@{p.position}" for p in partitions))
        self.partitions = list(partitions)
        self.batch: dict[Any, list[Any]] = dict(batch or {})
        self.raw = list(raw)  # a raw fetch's answers for the other partitions (raw_source_fetch)


class SourceConsumer:
    """Assign/seek/poll consumer of a MirrorSourceTask on the source cluster (named ``cluster``).

    The client never moves a position by itself (its ``auto.offset.reset`` is ``none``): partitions
    without a position are placed by the configured ``auto.offset.reset`` (:meth:`reset`, Java's
    consumer does the same for a partition it was not told to seek), and refused positions surface in
    :meth:`poll` as :class:`PositionOutOfRange`. A topic refused READ is held back in :attr:`refusals`
    (pyconnect.kafka.source_faults) while the other partitions are polled on."""

    def __init__(self, java_config: Mapping[str, Any], cluster: str | None = None) -> None:
        self.cluster = cluster or cluster_label(java_config)
        config = {k: v for k, v in java_config.items() if k not in ("group.id", "group.instance.id")}
        self._config = config
        with _honoured(self.cluster):
            self._reset = str(consumer_kwargs(config).get("auto_offset_reset", "latest"))
            self._consumer: AIOKafkaConsumer = create_consumer(
                config, enable_auto_commit=False, auto_offset_reset="none"
            )
        self._started = False
        self._warned: dict[type, float] = {}
        self._metrics: ConsumerMetrics | None = None
        self._assigned_at: dict[TopicPartition, int] = {}
        self.refusals = ReadRefusals()

    def measure(self, hub: MetricsHub) -> None:
        """Report this consumer's client metrics (pyconnect.metrics.client_metrics) into ``hub`` until
        :meth:`close`, under its ``client.id``."""
        if self._metrics is None:
            self._metrics = ConsumerMetrics(hub, str(self._config.get("client.id") or ""), self.highwater)
            self._count_fetches()

    async def start(self) -> None:
        """Start the consumer; a refused start raises the access error, and a failed one leaves it closed."""
        if not self._started:
            await start_client(self._consumer, self._config, self.cluster)
            self._started = True
            self._count_fetches()

    def _count_fetches(self) -> None:
        """Once started and measured: fetched bytes counted per record set, or else per polled record."""
        if self._started and self._metrics is not None:
            if not count_fetched_bytes(self._consumer, self._metrics.fetched):
                self._metrics.measure_records()

    def assign(self, partitions: Iterable[tuple[str, int]]) -> None:
        chosen = list(partitions)
        self._consumer.assign([TopicPartition(t, p) for t, p in chosen])
        now = int(time.time() * 1000)
        self._assigned_at = {TopicPartition(t, p): now for t, p in chosen}
        if self._metrics is not None:
            self._metrics.assigned(chosen)

    def seek(self, topic: str, partition: int, offset: int) -> None:
        self._consumer.seek(TopicPartition(topic, partition), offset)
        if self._metrics is not None:
            self._metrics.seeked(topic, partition, offset)

    def reset(self, partitions: Iterable[tuple[str, int]]) -> None:
        """Place assigned ``partitions`` by the configured ``auto.offset.reset`` (``earliest``: log
        start, ``latest``: log end), without waiting: the client asks the offsets in the background and
        retries them as it would its own reset. ``none`` leaves them without a position: each poll then
        fails for them as Java's does (``NoOffsetForPartition``, logged at a bounded rate)."""
        tps = [TopicPartition(t, p) for t, p in partitions]
        if not tps or self._reset not in ("earliest", "latest"):
            return
        strategy = OffsetResetStrategy.EARLIEST if self._reset == "earliest" else OffsetResetStrategy.LATEST
        # The public seek_to_beginning/seek_to_end wait for the answer (up to the request timeout);
        # their first half alone is what the client does for a partition it has no position for.
        waiter = seam.consumer_fetcher(self._consumer).request_offset_reset(tps, strategy)
        waiter.add_done_callback(_retrieved)

    @property
    def max_poll_records(self) -> int:
        """The consumer's ``max.poll.records`` (Java's default 500)."""
        return int(self._config.get("max.poll.records") or 500)

    @property
    def client_id(self) -> str:
        return str(self._config.get("client.id") or "")

    def unanswered(self, after_ms: int, now_ms: int | None = None) -> list[tuple[str, int]]:
        """The assigned partitions that have a position and whose fetches the cluster has not answered
        for longer than ``after_ms`` (counted from their assignment when none was answered yet)."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        late: list[tuple[str, int]] = []
        for tp, since in self._assigned_at.items():
            try:
                answered = self._consumer.last_poll_timestamp(tp)
                placed = self._has_position(tp)
            except (AssertionError, KeyError, AttributeError, IllegalStateError):  # not assigned any more
                continue
            if placed and now - max(answered or 0, since) > after_ms:
                late.append((tp.topic, tp.partition))
        return late

    def _has_position(self, tp: TopicPartition) -> bool:
        subscription = seam.consumer_subscription(self._consumer)
        assignment = subscription.subscription.assignment  # the client's own state
        return bool(assignment.state_value(tp).has_valid_position)

    def highwater(self, topic: str, partition: int) -> int | None:
        """The last high watermark a fetch returned for an assigned partition (``None`` before one)."""
        try:
            return self._consumer.highwater(TopicPartition(topic, partition))
        except (AssertionError, KeyError, AttributeError):  # not assigned (any more)
            return None

    async def poll(self, timeout_ms: int, max_records: int | None = None) -> dict[Any, list[Any]]:
        """``{(topic, partition): [ConsumerRecord, ...]}``; ``{}`` on timeout or a transient Kafka error
        (logged at a bounded rate). A topic refused READ is paused and held back (:meth:`refuse_read`),
        the others polled on; another refusal raises the access error.

        Positions out of range raise :class:`PositionOutOfRange` naming all of them with their log
        bounds, and carrying the records polled for other partitions (they are not moved; the caller
        seeks). The client reports such errors one partition per call: one poll gathers them all (at
        most one extra non-waiting call per assigned partition), so no partition waits for another's
        turn. Partitions without a position (none once :meth:`reset`) are placed by :meth:`reset`."""
        batch: dict[Any, list[Any]] = {}
        refused: dict[TopicPartition, int] = {}
        unplaced: list[TopicPartition] = []
        if self.refusals:
            self._consumer.resume(*(TopicPartition(t, p) for t, p in self.refusals.due()))
        try:
            wait_ms = timeout_ms
            for _ in range(2 * len(self._consumer.assignment()) + 2):
                left = None if max_records is None else max_records - sum(map(len, batch.values()))
                if left == 0:
                    break
                try:
                    polled = await self._consumer.getmany(timeout_ms=wait_ms, max_records=left)
                except OffsetOutOfRangeError as exc:
                    refused.update(exc.args[0] if exc.args and isinstance(exc.args[0], Mapping) else {})
                except NoOffsetForPartitionError as exc:
                    if exc.args and isinstance(exc.args[0], TopicPartition):
                        unplaced.append(exc.args[0])
                except TopicAuthorizationFailedError as exc:
                    self.refuse_read(str(exc.args[0]) if exc.args else "", pause=True)
                else:
                    if not polled:
                        break
                    if not batch and not refused and not unplaced:
                        batch = polled  # the usual case: one call, its result as it is (nothing copied)
                        break
                    for tp, records in polled.items():
                        batch.setdefault(tp, []).extend(records)
                wait_ms = 0  # gather what is already there; never wait twice
        except KafkaError as exc:
            refusal = access_error(exc, self.cluster)
            if refusal is not None:
                raise refusal from exc
            if not batch and not refused and not unplaced:
                self._warn(exc)
                await asyncio.sleep(min(POLL_ERROR_BACKOFF_S, timeout_ms / 1000))
                return {}
            self._warn(exc)
        if self._metrics is not None:
            self._metrics.polled(batch)
        if unplaced:
            self._unplaced(unplaced)
            if not batch and not refused and self._reset not in ("earliest", "latest"):
                await asyncio.sleep(min(POLL_ERROR_BACKOFF_S, timeout_ms / 1000))  # never spin
        if refused:
            known = await self._out_of_range(refused, timeout_ms)
            if known:
                raise PositionOutOfRange(known, batch)
        return batch

    def refuse_read(self, topic: str, *, pause: bool = False) -> None:
        """A fetch of ``topic`` was refused READ: its assigned partitions are held back until their
        next probe (``pause``: the record path pauses them in the client meanwhile)."""
        held = [(tp.topic, tp.partition) for tp in self._assigned_at if tp.topic == topic]
        self.refusals.refuse(held)
        if pause and held:
            self._consumer.pause(*(TopicPartition(t, p) for t, p in held))

    def refused_topics(self) -> set[str]:
        """The topics refused READ whose partitions no fetch answered since (see :attr:`refusals`)."""
        if not self.refusals:
            return set()
        return self.refusals.lift(lambda tp: self._consumer.last_poll_timestamp(TopicPartition(*tp)))

    async def check_topics(self, topics: Iterable[str]) -> TopicCheck:
        """Which of ``topics`` the cluster has, lacks or hides (pyconnect.kafka.source_faults)."""
        return await check_topics(seam.consumer_client(self._consumer), self._config, self.cluster, topics)

    def _unplaced(self, partitions: Sequence[TopicPartition]) -> None:
        """Partitions the client has no position for: placed by :meth:`reset`; under ``none``, a poll
        failure as Java's (logged at a bounded rate, the partitions stay unread)."""
        if self._reset in ("earliest", "latest"):
            self.reset((tp.topic, tp.partition) for tp in partitions)
        else:
            self._warn(
                NoOffsetForPartitionError(", ".join(f"{tp.topic}-{tp.partition}" for tp in partitions))
            )

    async def _out_of_range(self, refused: Mapping[TopicPartition, int], timeout_ms: int) -> list[OutOfRange]:
        """The refused positions whose log bounds are known; the others are fetched again at the same
        position (the bounds were not answered in time: a transient error, logged like a poll error, or
        the partition is gone for now)."""
        try:
            bounds = await asyncio.wait_for(
                self.log_bounds([(tp.topic, tp.partition) for tp in refused]), LOG_BOUNDS_TIMEOUT_S
            )
        except (LogBoundsUnanswered, TimeoutError) as exc:
            self._warn(
                exc
                if isinstance(exc, LogBoundsUnanswered)
                else LogBoundsUnanswered(f"{self.cluster}: {exc!r}")
            )
            await asyncio.sleep(min(POLL_ERROR_BACKOFF_S, timeout_ms / 1000))
            bounds = {}
        known = []
        for tp, offset in refused.items():
            found = bounds.get((tp.topic, tp.partition))
            if found is None:
                self.seek(tp.topic, tp.partition, offset)
            else:
                known.append(OutOfRange(tp.topic, tp.partition, offset, *found))
        return known

    def _warn(self, exc: Exception) -> None:
        now = time.monotonic()
        if now - self._warned.get(type(exc), -POLL_WARNING_INTERVAL_S) >= POLL_WARNING_INTERVAL_S:
            self._warned[type(exc)] = now
            log.warning(
                "Failure during poll from %s (repeats not logged for %.0f s): %s",
                self.cluster,
                POLL_WARNING_INTERVAL_S,
                exc,
            )

    async def log_bounds(
        self, partitions: Iterable[tuple[str, int]]
    ) -> dict[tuple[str, int], tuple[int, int]]:
        """``{(topic, partition): (log start, log end)}``; partitions the cluster does not have are left
        out. One ListOffsets round trip per bound kind; a Kafka error raises :class:`LogBoundsUnanswered`."""
        wanted = list(partitions)
        if not wanted:
            return {}
        try:
            client = seam.consumer_client(self._consumer)
            cluster = await client.fetch_all_metadata()  # answers unassigned topics too
            tps = [TopicPartition(t, p) for t, p in wanted if p in (cluster.partitions_for_topic(t) or ())]
            if not tps:
                return {}
            # The client asks offsets only of topics its own metadata tracks, and learns an untracked
            # one per retry (100 ms each: 10 s for 100 topics); one metadata update tracks them all.
            untracked = {tp.topic for tp in tps}.difference(seam.client_topics(client))
            if untracked:
                await client.set_topics(seam.client_topics(client) | untracked)
            starts = await self._consumer.beginning_offsets(tps)
            ends = await self._consumer.end_offsets(tps)
        except KafkaError as exc:
            raise LogBoundsUnanswered(f"{self.cluster} did not answer log offsets: {exc}") from exc
        return {(tp.topic, tp.partition): (starts[tp], ends[tp]) for tp in tps}

    async def close(self) -> None:
        metrics, self._metrics = self._metrics, None
        if metrics is not None:
            metrics.close()
        if self._started:
            self._started = False
            await self._consumer.stop()


def new_producer(java_config: Mapping[str, Any]) -> AIOKafkaProducer:
    """A byte-array producer (the offset-syncs producer); the caller starts and stops it."""
    return create_producer(java_config)


async def start_producer(java_config: Mapping[str, Any], cluster: str | None = None) -> AIOKafkaProducer:
    """A started byte-array producer on ``cluster``; the caller stops it. A refused start raises the
    access error (an idempotent producer without IDEMPOTENT_WRITE or any WRITE fails here) and leaves
    no open client; a config that cannot be honoured raises :class:`ConfigError`."""
    name = cluster or cluster_label(java_config)
    with _honoured(name):
        producer = create_producer(java_config)
    await start_client(producer, java_config, name)
    return producer


# -- consumer groups (MirrorCheckpointConnector / MirrorCheckpointTask) ---------------------------------

CONSUMER_PROTOCOL_TYPES = ("consumer", "")
"""Protocol types Java's ``Admin.listConsumerGroups`` reports (Connect and other groups are left out)."""


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    """A group's committed offset for one partition (Java ``OffsetAndMetadata``; metadata ``""`` if none)."""

    offset: int
    metadata: str = ""


def admin_offset_commit(group: str, offsets: Mapping[tuple[str, int], CommittedOffset]) -> Any:
    """The OffsetCommit request an admin sends for ``group`` (generation -1, no member id: Java's
    ``alterConsumerGroupOffsets``), ``offsets`` grouped by topic."""
    by_topic: dict[str, list[tuple[int, int, str]]] = {}
    for (topic, partition), committed in offsets.items():
        by_topic.setdefault(topic, []).append((partition, committed.offset, committed.metadata))
    return OffsetCommitRequest(
        group,
        OffsetCommitRequest.DEFAULT_GENERATION_ID,
        "",
        OffsetCommitRequest.DEFAULT_RETENTION_TIME,
        list(by_topic.items()),
    )


class GroupAdmin(_AdminClient):
    """Consumer-group operations of the checkpoint connector and task on one cluster.

    Errors: transport and coordinator errors raise (the caller's scheduler logs them); refusals raise
    :class:`AuthorizationError` naming the group or topic; other per-partition commit errors are returned.
    Classic groups and consumer-protocol groups (KIP-848) are listed, read and committed alike; each
    kind is described with its own API (:meth:`describe_groups`). Group states are the broker's strings
    (``Empty``, ``Stable``, ``Reconciling``, ``Dead`` ...), ``Unknown`` when a describe went unanswered.
    """

    async def list_consumer_groups(self) -> list[str]:
        """Ids of the consumer groups of every broker (protocol type ``consumer`` or empty): classic
        and consumer-protocol groups alike (ListGroups before v5 gives both protocol type ``consumer``)."""
        await self.start()
        with self._refusals():
            listed = await self._admin.list_consumer_groups()
        return sorted({g[0] for g in listed if len(g) < 2 or g[1] in CONSUMER_PROTOCOL_TYPES})

    async def committed_offsets(self, group: str) -> dict[tuple[str, int], CommittedOffset]:
        """Every committed offset of ``group`` (partitions without an offset left out)."""
        await self.start()
        with self._refusals(group):
            found = await self._admin.list_consumer_group_offsets(group)
        return {
            (tp.topic, tp.partition): CommittedOffset(om.offset, om.metadata or "")
            for tp, om in found.items()
            if om.offset >= 0
        }

    async def describe_groups(self, groups: Sequence[str]) -> dict[str, GroupView]:
        """``{group: GroupView}``: each group described with DescribeGroups and ConsumerGroupDescribe
        (:mod:`pyconnect.kafka.group_describe`), so that classic and consumer-protocol (KIP-848) groups
        both show their real state; a group this principal may not DESCRIBE raises
        :class:`AuthorizationError`."""
        await self.start()
        if not groups:
            return {}
        with self._refusals():
            return await describe_groups(self._admin, groups, self.cluster)

    async def group_states(self, groups: Sequence[str]) -> dict[str, str]:
        """``{group: state}`` of :meth:`describe_groups` (``Dead`` for groups the coordinator does not
        know, ``Unknown`` when a describe answered an error)."""
        return {group: view.state for group, view in (await self.describe_groups(groups)).items()}

    async def alter_offsets(
        self, group: str, offsets: Mapping[tuple[str, int], CommittedOffset]
    ) -> dict[tuple[str, int], int]:
        """Commit ``offsets`` for ``group`` as an admin (generation -1, no member id), as Java's
        ``alterConsumerGroupOffsets``; the coordinator rejects it while the group has members.
        Returns the non-zero error codes per partition (empty on success); a refused group (READ) or
        topic raises :class:`AuthorizationError`."""
        await self.start()
        if not offsets:
            return {}
        request = admin_offset_commit(group, offsets)
        with self._refusals(group):
            coordinator = await self._admin.find_coordinator(group)
            response = await seam.admin_send_request(self._admin, request, coordinator)
        errors: dict[tuple[str, int], int] = {}
        for topic, partitions in response.topics:
            for partition, code in partitions:
                if code == GROUP_AUTHORIZATION_FAILED:
                    raise AuthorizationError(f"Not authorized to access group: {group} on {self.cluster}")
                if code == TOPIC_AUTHORIZATION_FAILED:
                    raise AuthorizationError(f"Not authorized to access topics: [{topic}] on {self.cluster}")
                if code:
                    errors[(topic, partition)] = code
        return errors
