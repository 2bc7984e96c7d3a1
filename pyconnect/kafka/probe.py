"""Readiness probes: does a cluster answer metadata with the brokers we expect?"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from typing import Any

from aiokafka import AIOKafkaClient
from aiokafka.errors import KafkaError

from pyconnect.kafka.clients import admin_client_kwargs

SSL_CLOSE_S = 0.2
"""aiokafka closes a TLS connection without waiting for it: the socket is released only once the
close_notify exchange ran on the loop, so a probe that ends its loop right away would leak it."""


async def broker_ids(
    bootstrap_servers: str, *, request_timeout_ms: int = 5000, client_config: Mapping[str, Any] | None = None
) -> set[int]:
    """The node ids a metadata request to ``bootstrap_servers`` reports; raises KafkaError when none answers.

    ``client_config`` holds Java client keys (``security.protocol``, ``sasl.jaas.config`` ...) for a
    secured cluster."""
    kwargs = admin_client_kwargs(client_config or {})
    kwargs.update(bootstrap_servers=bootstrap_servers, request_timeout_ms=request_timeout_ms)
    client = AIOKafkaClient(**kwargs)
    try:
        await client.bootstrap()
        return {b.nodeId for b in client.cluster.brokers()}
    finally:
        with contextlib.suppress(Exception):
            await client.close()
        if "ssl_context" in kwargs:
            await asyncio.sleep(SSL_CLOSE_S)


async def wait_for_brokers(
    bootstrap_servers: str, expected: int, timeout: float, client_config: Mapping[str, Any] | None = None
) -> set[int]:
    """Poll until metadata lists at least ``expected`` brokers; TimeoutError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: str = "no answer yet"
    while True:
        try:
            ids = await broker_ids(bootstrap_servers, request_timeout_ms=3000, client_config=client_config)
            if len(ids) >= expected:
                return ids
            last = f"{len(ids)} of {expected} brokers registered"
        except (KafkaError, OSError) as exc:
            last = f"{type(exc).__name__}: {exc}"
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{bootstrap_servers} not ready after {timeout:.0f}s ({last})")
        await asyncio.sleep(0.3)
