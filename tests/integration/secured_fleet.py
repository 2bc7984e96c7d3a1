"""Helpers shared by the tests that run workers against secured (SASL/TLS, ACL-enforcing) clusters.

- :func:`client_security`: a user's client properties without ``bootstrap.servers`` (what a worker's
  own clients and its default producer/consumer/admin add to its file).
- :func:`secured_worker_properties`: those keys for the worker's clients and, prefixed, for the
  ``producer.``/``consumer.``/``admin.`` defaults of its tasks, on top of ``FAST_GROUP``.
- :func:`grant_sync`: one ACL binding, granted from synchronous test code.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from pyconnect.testing.kafka import KafkaCluster
from pyconnect.testing.kafka_security import grant
from tests.integration.fleet import FAST_GROUP

TASK_CLIENT_ROLES = ("producer", "consumer", "admin")


def client_security(client_properties: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in client_properties.items() if k != "bootstrap.servers"}


def secured_worker_properties(security: Mapping[str, str], **extra: object) -> dict[str, object]:
    props: dict[str, object] = {**FAST_GROUP, **security, **extra}
    for role in TASK_CLIENT_ROLES:
        props.update({f"{role}.{k}": v for k, v in security.items()})
    return props


def grant_sync(
    cluster: KafkaCluster, user: str, rtype: str, name: str, ops: list[str], pattern: str = "LITERAL"
) -> None:
    asyncio.run(grant(cluster, f"User:{user}", rtype, name, ops, pattern))
