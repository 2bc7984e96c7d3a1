"""Until a MirrorSourceConnector has copied, committed and synced every record of a quiet source: the
drain that both the failback's reverse flow and the cutover's forward flow wait on.

:func:`copy_progress` reads, for the flow ``copy`` (whose source cluster the connector copies), the
source partitions' bounds, the connector's committed offsets (``GET /connectors/{name}/offsets``) and
the flow's newest offset sync per partition, and counts what is left: the committed records past each
partition's committed offset (or from ``starts`` when it has none), plus one for every partition with a
record between its newest sync and its committed offset (a copy the syncs do not prove yet; a committed
offset that is a transaction marker or was set by ``PATCH .../offsets`` past the last record needs none).

:func:`drain` waits, within ``timeout_s``, until the source's last stable offsets stay still for
``quiet_s`` with nothing left. Once the source is quiet but something is left, the connector is stopped:
its task's final commit writes its offsets and the offset sync of its last record at once (not at the
worker's next offset flush, 60 s by default); if that shows nothing left it stays STOPPED, else it runs
again and the wait goes on. On time out, :class:`NotCaughtUp` (exit 9) says how much was left; the
connector is left running. Cluster and REST errors propagate (one line).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connectors.mirror.failback.connect_api import ConnectApi
from connectors.mirror.failback.ledger_reads import flow_runs
from connectors.mirror.offsets.failover_calls import FailoverError, cluster_bounds
from connectors.mirror.offsets.failover_flow import FailoverFlow
from connectors.mirror.offsets.mirror_client import MirrorClientError
from pyconnect.config.client_configs import mirror_client_config
from pyconnect.kafka.record_offsets import committed_records

__all__ = [
    "CONNECTOR_WAIT_S",
    "EXIT_NOT_CAUGHT_UP",
    "CopyProgress",
    "NotCaughtUp",
    "copy_progress",
    "drain",
    "source_offsets",
]

EXIT_NOT_CAUGHT_UP = 9
CONNECTOR_WAIT_S = 60.0
Partition = tuple[str, int]


class NotCaughtUp(FailoverError):
    """The connector had not copied everything within the time given; it keeps running."""

    exit_code = EXIT_NOT_CAUGHT_UP


def source_offsets(
    entries: list[tuple[dict[str, Any], dict[str, Any]]], cluster: str
) -> dict[Partition, int]:
    """A MirrorSourceConnector's committed offsets of ``cluster``, by ``(topic, partition)``."""
    found: dict[Partition, int] = {}
    for partition, offset in entries:
        value = offset.get("offset")
        if partition.get("cluster") == cluster and isinstance(value, int) and not isinstance(value, bool):
            found[(str(partition.get("topic")), int(partition.get("partition", -1)))] = value
    return found


@dataclass(frozen=True)
class CopyProgress:
    """The source partitions' ``(log start, last stable offset)``, the connector's committed offsets and
    the records (and unproved positions) left."""

    bounds: dict[Partition, tuple[int, int]]
    committed: dict[Partition, int]
    left: int


async def copy_progress(
    api: ConnectApi, connector: str, copy: FailoverFlow, starts: Mapping[Partition, int], timeout_s: float
) -> CopyProgress:
    """See the module docstring; ``starts``: the first offset to copy of each partition."""
    config = mirror_client_config(copy.source_config, "consumer")
    committed = source_offsets(await api.offsets(connector), copy.source)
    stretches = [(t, p, max(committed.get((t, p), -1), starts[(t, p)] - 1), None) for t, p in starts]
    bounds = await cluster_bounds(copy.source_config, copy.source, list(starts), timeout_s)
    try:
        left = sum(len(r) for r in (await committed_records(config, stretches, timeout_s)).values())
    except TimeoutError:
        raise FailoverError(
            f"reading cluster {copy.source} did not finish within {timeout_s:.0f} s"
        ) from None
    try:
        _, newest, _ = await flow_runs(copy, timeout_s)
    except MirrorClientError:
        newest = {}
    behind = [
        (t, p, max(newest.get((t, p), (-1, -1))[0], starts[(t, p)] - 1), committed[(t, p)] + 1)
        for t, p in starts
        if committed.get((t, p), -1) > newest.get((t, p), (-1, -1))[0]
    ]
    try:
        found = await committed_records(config, behind, timeout_s)
    except TimeoutError:
        raise FailoverError(
            f"reading cluster {copy.source} did not finish within {timeout_s:.0f} s"
        ) from None
    unsynced = sum(1 for records in found.values() if records)
    return CopyProgress(bounds, committed, left + unsynced)


async def drain(
    api: ConnectApi,
    connector: str,
    copy: FailoverFlow,
    starts: Mapping[Partition, int],
    *,
    quiet_s: float,
    timeout_s: float,
    call_timeout_s: float,
    settled: bool = False,
) -> CopyProgress:
    """Wait until nothing is left (see the module docstring); the final :class:`CopyProgress`.
    ``settled``: the caller has just seen the source still (a fenced cutover), so the first round goes
    straight to the stop that makes the connector commit."""
    deadline = time.monotonic() + timeout_s
    left = -1
    while time.monotonic() < deadline:
        before = await copy_progress(api, connector, copy, starts, call_timeout_s)
        if settled:
            after, settled = before, False
        else:
            await asyncio.sleep(quiet_s)
            after = await copy_progress(api, connector, copy, starts, call_timeout_s)
        left = after.left
        if before.bounds != after.bounds:
            continue
        if left == 0:
            return after
        await api.stop(connector)
        await api.wait_state(connector, "STOPPED", CONNECTOR_WAIT_S)
        stopped = await copy_progress(api, connector, copy, starts, call_timeout_s)
        left = stopped.left
        if stopped.bounds == after.bounds and left == 0:
            return stopped
        await api.resume(connector)
        await api.wait_state(connector, "RUNNING", CONNECTOR_WAIT_S)
    raise NotCaughtUp(
        f"connector {connector} still had {left} records to copy or sync after {timeout_s:.0f} s (or cluster "
        f"{copy.source} kept taking writes); it keeps running: run again"
    )
