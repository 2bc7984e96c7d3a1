"""Topic, config and ACL operations MirrorSourceConnector runs against its source and target clusters.

Connectors never import aiokafka (design.md seams); they call these helpers with Java client config
maps (``bootstrap.servers``, ``isolation.level`` ...), translated by :mod:`pyconnect.config.client_configs`.
Beside this module, by concern: :mod:`pyconnect.kafka.admin_client` (the client every admin helper
shares, and the byte-array producers), :mod:`pyconnect.kafka.acls` (ACL values and requests),
:mod:`pyconnect.kafka.group_admin` (consumer groups), :mod:`pyconnect.kafka.source_consumer` (the
source task's consumer).

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
  type. A cluster without an authorizer raises :class:`~pyconnect.kafka.acls.SecurityDisabled`; other
  errors raise :class:`~pyconnect.kafka.acls.AclRequestError`. ``create_acls`` is Java's
  ``createAcls``: duplicates dropped (first one kept), bindings with an indefinite field refused
  without a request, the rest in one CreateAcls v1 request; it returns one error message (``None`` =
  created or already there) per distinct binding.
- Refusals raise: every client here is named after its cluster (``cluster``, e.g. ``source cluster
  S (host:port)``); a start refused by the cluster or an operation refused for lack of an ACL raises
  :class:`~pyconnect.errors.AuthenticationError` / :class:`~pyconnect.errors.AuthorizationError`
  (:mod:`pyconnect.kafka.access`) naming it, where Java's MM2 logs and goes on. A client config that
  cannot be honoured raises :class:`~pyconnect.errors.ConfigError` naming the cluster. A start that
  fails leaves no open client.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from aiokafka.admin import NewPartitions, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import (
    KafkaError,
)
from aiokafka.protocol.admin import DescribeAclsRequest_v1
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import Array, Boolean, Int8, Int16, Int32, Schema, String

from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.acls import (
    SECURITY_DISABLED,
    AclBinding,
    AclOperation,
    AclPermissionType,
    AclRequestError,
    CreateAclsRequest,
    DeleteAclsRequest,
    DescribeAclsRequest,
    DescribeTopicAclsRequest,
    PatternType,
    ResourceType,
    SecurityDisabled,
)
from pyconnect.kafka.admin_client import AdminClient
from pyconnect.kafka.topics import TOPIC_ALREADY_EXISTS, broker_defaults

log = logging.getLogger(__name__)

DEFAULT_CONFIG = 5
"""``ConfigEntry.ConfigSource.DEFAULT_CONFIG`` (DescribeConfigs ``config_source``)."""
STATIC_BROKER_CONFIG = 4
DYNAMIC_TOPIC_CONFIG = 1
OP_SET = 0
OP_DELETE = 1
TOPIC_RESOURCE = 2
INVALID_PARTITIONS = 37


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


class MirrorAdmin(AdminClient):
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
        return await self._describe_acls(DescribeTopicAclsRequest())

    async def describe_acls(
        self,
        resource_type: ResourceType,
        name: str | None = None,
        pattern_type: PatternType = PatternType.ANY,
        node_id: int | None = None,
    ) -> list[AclBinding]:
        """The ACLs matching one resource filter as broker ``node_id`` (any broker if ``None``) applies
        them, errors as :meth:`describe_topic_acls`."""
        return await self._describe_acls(DescribeAclsRequest(resource_type, name, pattern_type), node_id)

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
            response = await seam.admin_send_request(self._admin, CreateAclsRequest(sent))
        answers = list(response.creation_responses)
        if len(answers) != len(sent):
            raise AclRequestError(f"CreateAcls answered {len(answers)} results for {len(sent)} ACL creations")
        for binding, (code, message) in zip(sent, answers, strict=True):
            results[binding] = None if code == 0 else (message or f"error code {code}")
        return results

    async def delete_acls(self, bindings: Sequence[AclBinding]) -> dict[AclBinding, str | None]:
        """Delete each of ``bindings`` exactly (one filter each, in one request); per binding ``None``
        (deleted, or not there) or the error message; :class:`SecurityDisabled` without an authorizer."""
        if not bindings:
            return {}
        with self._refusals():
            response = await seam.admin_send_request(self._admin, DeleteAclsRequest(bindings))
        answers = list(response.filter_responses)
        if len(answers) != len(bindings):
            raise AclRequestError(f"DeleteAcls answered {len(answers)} results for {len(bindings)} filters")
        results: dict[AclBinding, str | None] = {}
        for binding, (code, message, *_matches) in zip(bindings, answers, strict=True):
            if code == SECURITY_DISABLED:
                raise SecurityDisabled(message or "No Authorizer is configured.")
            results[binding] = None if code == 0 else (message or f"error code {code}")
        return results
