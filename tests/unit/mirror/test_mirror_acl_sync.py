"""Topic ACL sync of MirrorSourceConnector (Java's ``syncTopicAcls``), with in-memory fakes.

Covered here: which source ACLs are kept and how they are rewritten (``shouldReplicateAcl``,
``targetAclBinding``, the topic predicate), the no-authorizer path, and MirrorAdmin's DescribeAcls /
CreateAcls wire handling (request bytes, response decoding, Java's client-side de-duplication and
indefinite-field check). The brokers' side is tests/integration/test_mirror_acl_sync.py.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import pytest
from aiokafka.protocol.admin import CreateAclsResponse_v1, DescribeAclsResponse_v1
from aiokafka.protocol.api import Request

from connectors.mirror.config import MirrorSourceConfig
from connectors.mirror.source import MirrorSourceConnector
from pyconnect.kafka.acls import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AclRequestError,
    PatternType,
    ResourceType,
    SecurityDisabled,
)
from pyconnect.kafka.mirror_admin import MirrorAdmin

ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
ALL, READ, WRITE, DESCRIBE = AclOperation.ALL, AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
IDENTITY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"


def acl(
    topic: str,
    permission: AclPermissionType,
    operation: AclOperation,
    principal: str = "User:alice",
    host: str = "*",
    pattern: PatternType = LITERAL,
    resource: ResourceType = ResourceType.TOPIC,
) -> AclBinding:
    return AclBinding(resource, topic, pattern, principal, host, operation, permission)


class FakeSourceAdmin:
    """The source cluster: answers DescribeAcls with fixed bindings, or as a broker without authorizer."""

    def __init__(self, bindings: list[AclBinding] | None) -> None:
        self.bindings = bindings
        self.describes = 0

    async def start(self) -> None:
        pass

    async def describe_topic_acls(self) -> list[AclBinding]:
        self.describes += 1
        if self.bindings is None:
            raise SecurityDisabled("No Authorizer is configured.")
        return list(self.bindings)


class FakeTargetAdmin:
    """The target cluster: records every CreateAcls call; fails the bindings listed in ``failing``."""

    def __init__(self, failing: Iterable[AclBinding] = ()) -> None:
        self.created: list[list[AclBinding]] = []
        self.failing = set(failing)

    async def start(self) -> None:
        pass

    async def create_acls(self, bindings: Iterable[AclBinding]) -> dict[AclBinding, str | None]:
        batch = list(bindings)
        self.created.append(batch)
        return {b: ("CLUSTER_AUTHORIZATION_FAILED" if b in self.failing else None) for b in batch}


def connector(source: FakeSourceAdmin, target: FakeTargetAdmin, **props: str) -> MirrorSourceConnector:
    """A connector wired as ``start`` wires it, with fake admins and no scheduler."""
    config = MirrorSourceConfig(
        {
            "name": "mirror",
            "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
            "source.cluster.alias": "A",
            "target.cluster.alias": "B",
            **props,
        }
    )
    c = MirrorSourceConnector()
    c._config = config
    c._name = "mirror"
    c._policy = config.replication_policy
    c._topic_filter = config.topic_filter
    c._property_filter = config.config_property_filter
    c._source_admin = source  # type: ignore[assignment]
    c._target_admin = target  # type: ignore[assignment]
    return c


def test_kept_acls_are_rewritten_for_the_remote_topic() -> None:
    c = connector(FakeSourceAdmin([]), FakeTargetAdmin(), topics="orders|payments")
    source = [
        acl("orders", ALLOW, READ),
        acl("orders", ALLOW, ALL, principal="User:bob"),
        acl("orders", ALLOW, WRITE, principal="User:carol"),
        acl("orders", DENY, READ, principal="User:mallory"),
        acl("orders", DENY, ALL, principal="User:eve"),
        acl("orders", DENY, WRITE, principal="User:eve"),
        acl("payments", ALLOW, DESCRIBE, host="10.0.0.7"),
        acl("invoices", ALLOW, READ),
        acl("ord", ALLOW, READ, pattern=PREFIXED),
        acl("orders", ALLOW, READ, resource=ResourceType.GROUP),
    ]
    assert c.target_acl_bindings(source) == [
        acl("A.orders", ALLOW, READ),
        acl("A.orders", ALLOW, READ, principal="User:bob"),
        acl("A.orders", DENY, READ, principal="User:mallory"),
        acl("A.orders", DENY, ALL, principal="User:eve"),
        acl("A.orders", DENY, WRITE, principal="User:eve"),
        acl("A.payments", ALLOW, DESCRIBE, host="10.0.0.7"),
    ]


def test_topic_predicate_applies_to_acls() -> None:
    """Internal topics, cycles (topics that came from the target) and the heartbeats bypass behave as
    for topic replication; a literal ``*`` ACL passes the default filter and names the topic ``A.*``."""
    c = connector(FakeSourceAdmin([]), FakeTargetAdmin())
    source = [
        acl("__consumer_offsets", ALLOW, READ),
        acl("mm2-offset-syncs.B.internal", ALLOW, READ),
        acl("B.orders", ALLOW, READ),
        acl("C.orders", ALLOW, READ),
        acl("*", ALLOW, READ),
    ]
    assert [b.name for b in c.target_acl_bindings(source)] == ["A.C.orders", "A.*"]

    narrow = connector(FakeSourceAdmin([]), FakeTargetAdmin(), topics="orders")
    assert [b.name for b in narrow.target_acl_bindings([acl("heartbeats", ALLOW, READ)])] == ["A.heartbeats"]
    no_heartbeats = connector(
        FakeSourceAdmin([]),
        FakeTargetAdmin(),
        topics="orders",
        **{"heartbeats.replication.enabled": "false"},
    )
    assert no_heartbeats.target_acl_bindings([acl("heartbeats", ALLOW, READ)]) == []


def test_identity_policy_keeps_the_topic_name() -> None:
    c = connector(
        FakeSourceAdmin([]), FakeTargetAdmin(), topics="orders", **{"replication.policy.class": IDENTITY}
    )
    assert c.target_acl_bindings([acl("orders", ALLOW, ALL)]) == [acl("orders", ALLOW, READ)]


async def test_sync_creates_the_mapped_acls_and_logs_failures(caplog: pytest.LogCaptureFixture) -> None:
    failing = acl("A.orders", DENY, READ, principal="User:mallory")
    source = FakeSourceAdmin(
        [
            acl("orders", ALLOW, ALL),
            acl("orders", ALLOW, WRITE),
            acl("orders", DENY, READ, principal="User:mallory"),
        ]
    )
    target = FakeTargetAdmin(failing=[failing])
    c = connector(source, target, topics="orders")
    with caplog.at_level(logging.WARNING, logger="connectors.mirror.source"):
        await c.sync_topic_acls()
    assert target.created == [[acl("A.orders", ALLOW, READ), failing]]
    assert [r.getMessage() for r in caplog.records] == [
        "mirror: could not sync ACL of topic A.orders: CLUSTER_AUTHORIZATION_FAILED"
    ]

    source.bindings = [acl("other", ALLOW, READ)]
    await c.sync_topic_acls()
    assert len(target.created) == 1, "nothing to create: no CreateAcls request"


async def test_source_without_authorizer_is_logged_once_and_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    source, target = FakeSourceAdmin(None), FakeTargetAdmin()
    c = connector(source, target)
    with caplog.at_level(logging.DEBUG, logger="connectors.mirror.source"):
        for _ in range(3):
            await c.sync_topic_acls()
    assert source.describes == 3, "Java asks again at every interval"
    assert target.created == []
    levels = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert [lvl for lvl, _ in levels] == [logging.INFO, logging.DEBUG, logging.DEBUG]
    assert "No ACL authorizer is configured on the source Kafka cluster" in levels[0][1]
    assert "sync.topic.acls.enabled to 'false'" in levels[0][1]


# -- MirrorAdmin on the wire ----------------------------------------------------------------------


class FakeWire:
    """Stands in for the aiokafka admin: encodes each request at the version a 4.x broker picks and
    answers with a response decoded from bytes, as the client would."""

    def __init__(self, response: bytes) -> None:
        self.response = response
        self.requests: list[tuple[int, int, bytes]] = []

    async def _send_request(self, request: Request[Any], node_id: int | None = None) -> Any:
        struct = request.prepare({29: (1, 3), 30: (1, 3)})
        self.requests.append((struct.API_KEY, struct.API_VERSION, struct.encode()))
        return struct.RESPONSE_TYPE.decode(self.response)


def wired_admin(response: bytes) -> tuple[MirrorAdmin, FakeWire]:
    admin = MirrorAdmin.__new__(MirrorAdmin)
    wire = FakeWire(response)
    admin._admin = wire  # type: ignore[assignment]
    admin._started = True
    admin.cluster = "cluster 127.0.0.1:9092"
    return admin, wire


async def test_describe_topic_acls_sends_the_any_topic_filter_and_decodes_bindings() -> None:
    response = DescribeAclsResponse_v1(
        0,
        0,
        None,
        [
            (2, "orders", 3, [("User:alice", "*", 3, 3), ("User:eve", "10.0.0.1", 2, 2)]),
            (2, "ord", 4, [("User:bob", "*", 99, 3)]),
        ],
    ).encode()
    admin, wire = wired_admin(response)
    bindings = await admin.describe_topic_acls()
    # v1: TOPIC, null name, pattern ANY, null principal, null host, operation ANY, permission ANY.
    assert wire.requests == [(29, 1, b"\x02\xff\xff\x01\xff\xff\xff\xff\x01\x01")]
    assert bindings == [
        acl("orders", ALLOW, READ),
        acl("orders", DENY, ALL, principal="User:eve", host="10.0.0.1"),
        acl("ord", ALLOW, AclOperation.UNKNOWN, principal="User:bob", pattern=PREFIXED),
    ]


async def test_describe_topic_acls_errors() -> None:
    admin, _ = wired_admin(DescribeAclsResponse_v1(0, 54, "No Authorizer is configured.", []).encode())
    with pytest.raises(SecurityDisabled, match="No Authorizer"):
        await admin.describe_topic_acls()
    admin, _ = wired_admin(DescribeAclsResponse_v1(0, 31, "Cluster authorization failed.", []).encode())
    with pytest.raises(AclRequestError, match="error code 31"):
        await admin.describe_topic_acls()


async def test_create_acls_dedupes_refuses_indefinite_and_sends_one_request() -> None:
    response = CreateAclsResponse_v1(0, [(0, None), (41, "Invalid principal")]).encode()
    admin, wire = wired_admin(response)
    good = acl("A.orders", ALLOW, READ)
    bad_principal = acl("A.orders", DENY, READ, principal="nobody")
    unknown = acl("A.orders", ALLOW, AclOperation.UNKNOWN)
    results = await admin.create_acls([good, good, unknown, bad_principal])
    assert results == {
        good: None,
        unknown: "Invalid ACL creation: Operation is UNKNOWN",
        bad_principal: "Invalid principal",
    }
    assert len(wire.requests) == 1
    api_key, version, body = wire.requests[0]
    assert (api_key, version) == (30, 1)
    assert body == (
        b"\x00\x00\x00\x02"
        + b"\x02\x00\x08A.orders\x03\x00\x0aUser:alice\x00\x01*\x03\x03"
        + b"\x02\x00\x08A.orders\x03\x00\x06nobody\x00\x01*\x03\x02"
    )


async def test_create_acls_sends_nothing_without_definite_bindings() -> None:
    admin, wire = wired_admin(b"")
    assert await admin.create_acls([]) == {}
    assert await admin.create_acls([acl("t", AclPermissionType.ANY, READ)]) == {
        acl("t", AclPermissionType.ANY, READ): "Invalid ACL creation: Permission type is ANY"
    }
    assert wire.requests == []
