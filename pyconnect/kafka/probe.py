"""Readiness probes: does a cluster answer metadata with the brokers we expect?"""

from __future__ import annotations

import asyncio
import contextlib
import time

from aiokafka import AIOKafkaClient
from aiokafka.errors import KafkaError


async def broker_ids(bootstrap_servers: str, *, request_timeout_ms: int = 5000) -> set[int]:
    """The node ids a metadata request to ``bootstrap_servers`` reports; raises KafkaError when none answers."""
    client = AIOKafkaClient(bootstrap_servers=bootstrap_servers, request_timeout_ms=request_timeout_ms)
    try:
        await client.bootstrap()
        return {b.nodeId for b in client.cluster.brokers()}
    finally:
        with contextlib.suppress(Exception):
            await client.close()


async def wait_for_brokers(bootstrap_servers: str, expected: int, timeout: float) -> set[int]:
    """Poll until metadata lists at least ``expected`` brokers; TimeoutError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: str = "no answer yet"
    while True:
        try:
            ids = await broker_ids(bootstrap_servers, request_timeout_ms=3000)
            if len(ids) >= expected:
                return ids
            last = f"{len(ids)} of {expected} brokers registered"
        except (KafkaError, OSError) as exc:
            last = f"{type(exc).__name__}: {exc}"
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{bootstrap_servers} not ready after {timeout:.0f}s ({last})")
        await asyncio.sleep(0.3)
