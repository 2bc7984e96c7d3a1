"""Helpers of the group offset sync tests on real Kafka: the continuous checkpoint connector, the
coordinator's own commit history, and Java's group clients (consumer-protocol and share consumers,
tests/integration/group_clients). Source commits at a fixed rate with the target watched meanwhile
(``run_load``) and the sync's own summary lines come from the group_sync benchmark.

Every wait is bounded; the Java processes are started and stopped by the caller (by PID).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from benchmarks.group_sync import Load, commit_all, commit_history, run_load, sync_summaries
from connectors.mirror.share_group_sync import effective_starts
from pyconnect.kafka.group_offsets import SyncAdmin
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.distribution import ensure_distribution
from pyconnect.testing.java_process import JavaProcess
from tests.integration.test_mirror_checkpoint import flow

GROUP_CLIENTS = Path(__file__).parent / "group_clients" / "GroupClients.java"
QUICK_JVM = ("-XX:TieredStopAtLevel=1",)
CONTINUOUS = "pyconnect.sync.group.offsets.continuous"
TP = tuple[str, int]
__all__ = ["Load", "commit_all", "commit_history", "run_load", "sync_summaries"]


def continuous_checkpoints(
    a: ClusterHandle, b: ClusterHandle, groups: str, topics: str, **extra: str
) -> dict[str, str]:
    """A MirrorCheckpointConnector A -> B for ``groups`` on ``topics`` with the continuous group offset
    sync (checkpoints every 60 s, groups refreshed every 2 s, single-broker checkpoints topic)."""
    return flow(
        a,
        b,
        "MirrorCheckpointConnector",
        groups=groups,
        topics=topics,
        **{
            "refresh.groups.interval.seconds": "2",
            "checkpoints.topic.replication.factor": "1",
            "sync.group.offsets.enabled": "true",
            CONTINUOUS: "true",
            **extra,
        },
    )


def group_clients(mode: str, *args: str, log_dir: Path, name: str) -> JavaProcess:
    """Java's group clients (see GroupClients.java) in ``mode`` with ``args``; started by the caller."""
    command = ensure_distribution().java_command(
        str(GROUP_CLIENTS), mode, *args, heap="256m", jvm_opts=QUICK_JVM
    )
    return JavaProcess(
        command, log_dir / f"{name}.log", f"group-clients-{log_dir.name}-{name}", die_with_parent=True
    )


async def with_admin(bootstrap: str, work: str, *args: object) -> object:
    """``await SyncAdmin(bootstrap).<work>(*args)`` on a client closed afterwards."""
    admin = SyncAdmin({"bootstrap.servers": bootstrap})
    try:
        return await getattr(admin, work)(*args)
    finally:
        await admin.close()


def ends(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    answer = asyncio.run(with_admin(bootstrap, "log_ends", [(topic, p) for p in range(partitions)]))
    assert isinstance(answer, dict)
    return {p: o for (_, p), o in answer.items()}


def committed(bootstrap: str, groups: Sequence[str]) -> dict[str, dict[TP, int]]:
    answer = asyncio.run(with_admin(bootstrap, "fetch_committed", list(groups)))
    assert isinstance(answer, dict)
    return {g: {tp: c.offset for tp, c in offsets.items()} for g, offsets in answer.items()}


def share_starts(bootstrap: str, groups: Sequence[str]) -> dict[str, dict[TP, int]]:
    """The share groups' start offsets as the broker answers them."""
    answer = asyncio.run(with_admin(bootstrap, "share_offsets", list(groups)))
    return dict(answer.offsets)  # type: ignore[attr-defined]


def share_position(bootstrap: str, group: str) -> dict[TP, int]:
    """Where share group ``group`` stands (connectors.mirror.share_group_sync.effective_starts)."""

    async def ask() -> dict[TP, int]:
        admin = SyncAdmin({"bootstrap.servers": bootstrap})
        try:
            partitions = list((await admin.share_offsets([group])).offsets.get(group, {}))
            ends = await admin.log_ends(partitions, refresh=True)
            answer = await admin.share_offsets([group])
            return effective_starts(answer.offsets.get(group, {}), answer.lags.get(group, {}), ends)
        finally:
            await admin.close()

    return asyncio.run(ask())


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
