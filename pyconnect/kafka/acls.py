"""Kafka ACLs as MirrorSourceConnector syncs them (Java ``syncTopicAcls``) and a cutover fences with:
Java's enums with their wire codes, the binding, and the DescribeAcls v1 / CreateAcls v1 / DeleteAcls v1
requests the admin sends (:class:`~pyconnect.kafka.mirror_admin.MirrorAdmin` performs them)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Self

from aiokafka.protocol.admin import CreateAclsRequest_v1, DeleteAclsRequest_v1, DescribeAclsRequest_v1
from aiokafka.protocol.api import Request

from pyconnect.errors import ConnectError

log = logging.getLogger(__name__)

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


class DescribeTopicAclsRequest(Request[DescribeAclsRequest_v1]):
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


class DescribeAclsRequest(Request[DescribeAclsRequest_v1]):
    """DescribeAcls v1 for one resource pattern (any principal, host, operation and permission)."""

    API_KEY = 29

    def __init__(self, resource_type: ResourceType, name: str | None, pattern_type: PatternType) -> None:
        self._filter = (resource_type, name, pattern_type)

    def build(self, request_struct_class: type[DescribeAclsRequest_v1]) -> DescribeAclsRequest_v1:
        return request_struct_class(*self._filter, None, None, AclOperation.ANY, AclPermissionType.ANY)


class CreateAclsRequest(Request[CreateAclsRequest_v1]):
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


class DeleteAclsRequest(Request[DeleteAclsRequest_v1]):
    """DeleteAcls v1 with one exact filter per binding (each deletes that binding only)."""

    API_KEY = 31

    def __init__(self, bindings: Sequence[AclBinding]) -> None:
        self._bindings = bindings

    def build(self, request_struct_class: type[DeleteAclsRequest_v1]) -> DeleteAclsRequest_v1:
        return request_struct_class(
            [
                (b.resource_type, b.name, b.pattern_type, b.principal, b.host, b.operation, b.permission_type)
                for b in self._bindings
            ]
        )
