"""One Kafka client per cluster, named after it: the admin client the mirror's admin helpers share
(:class:`AdminClient`) and the byte-array producers of the mirror connectors.

Contract: a client config that cannot be honoured raises :class:`~pyconnect.errors.ConfigError`
naming the cluster (:func:`client_config_honoured`); a start refused by the cluster raises its access
error (:mod:`pyconnect.kafka.access`) and leaves no open client; ``start`` and ``close`` of an
:class:`AdminClient` are idempotent.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient

from pyconnect.config.client_configs import ClientConfigError
from pyconnect.errors import ConfigError
from pyconnect.kafka.access import cluster_label, refusals_raised, start_client
from pyconnect.kafka.clients import create_admin, create_producer

log = logging.getLogger(__name__)


@contextlib.contextmanager
def client_config_honoured(cluster: str) -> Iterator[None]:
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


class AdminClient:
    """One admin client on one cluster (from a Java-keyed config), named ``cluster`` in its errors
    (default: its bootstrap servers); ``start`` and ``close`` are idempotent."""

    def __init__(self, java_config: Mapping[str, Any], cluster: str | None = None) -> None:
        self.cluster = cluster or cluster_label(java_config)
        self._config = dict(java_config)
        with client_config_honoured(self.cluster):
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


def new_producer(java_config: Mapping[str, Any]) -> AIOKafkaProducer:
    """A byte-array producer (the offset-syncs producer); the caller starts and stops it."""
    return create_producer(java_config)


async def start_producer(java_config: Mapping[str, Any], cluster: str | None = None) -> AIOKafkaProducer:
    """A started byte-array producer on ``cluster``; the caller stops it. A refused start raises the
    access error (an idempotent producer without IDEMPOTENT_WRITE or any WRITE fails here) and leaves
    no open client; a config that cannot be honoured raises :class:`ConfigError`."""
    name = cluster or cluster_label(java_config)
    with client_config_honoured(name):
        producer = create_producer(java_config)
    await start_client(producer, java_config, name)
    return producer
