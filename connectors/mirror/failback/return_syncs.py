"""The forward flow's offset syncs for the records the reverse flow copied back to A.

After a failback, A holds copies of the records the applications wrote on B: under
IdentityReplicationPolicy in A's own topic past the orphans, under DefaultReplicationPolicy in the copy of
B's own topic (B's ``orders`` on A's ``B.orders``). A record ``a`` of a reverse run is a copy of B record
``b``. When the forward flow (A->B) runs again, its checkpoint task translates the groups' positions on A
through the forward offset syncs only, which know nothing of those records: a group positioned among them
(every group the failback returned) would translate to the forward copy's old end on B (or, on
``B.orders``, to nothing) and read the applications' records there again after a later failover or
cutover. So the failback writes, before the forward flow resumes, forward syncs that state what the
reverse runs proved: for each reverse run ``(first_up_B, first_down_A, last_up_B)`` of a partition copied
back, on the topic of its copy on A, the syncs ``A first_down -> B first_up`` and ``A first_down + k -> B
last_up`` (``k = last_up - first_up``). Each is true (the A record is a copy whose original sits at that B
offset), so Java's checkpoint task and ours translate with them unchanged (a checkpoint of ``B.orders`` is
renamed to B's ``orders``, as MirrorCheckpointTask's ``renameTopicPartition`` does for a topic that came
from the target); in our exact mode the pair is a run, so every position in it translates exactly.
Writing them twice (a resumed step) states the same thing twice.

:func:`return_syncs` is pure; :func:`write_syncs` sends them to the forward flow's offset-syncs topic with
a producer on the cluster of ``offset-syncs.topic.location`` (one line on failure).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from connectors.mirror.failback.positions import Run
from connectors.mirror.offsets.failover_calls import FailoverError, one_line
from connectors.mirror.offsets.failover_flow import FailoverFlow
from connectors.mirror.offsets.sync_batches import send_offset_syncs
from connectors.mirror.records import OffsetSync
from pyconnect.config.client_configs import mirror_client_config
from pyconnect.kafka.admin_client import start_producer

__all__ = ["return_syncs", "write_syncs"]

Partition = tuple[str, int]


def return_syncs(copies: Mapping[Partition, tuple[str, Sequence[Run]]]) -> list[OffsetSync]:
    """The forward syncs (see the module docstring). ``copies`` maps each source partition ``(topic, p)``
    of A to ``(its topic on B, the reverse runs of that B partition)``."""
    syncs: list[OffsetSync] = []
    for (topic, partition), (_, runs) in sorted(copies.items()):
        for first_up, first_down, last_up in runs:
            syncs.append(OffsetSync(topic, partition, first_down, first_up))
            if last_up > first_up:
                syncs.append(OffsetSync(topic, partition, first_down + (last_up - first_up), last_up))
    return syncs


async def write_syncs(flow: FailoverFlow, syncs: Sequence[OffsetSync], timeout_s: float) -> None:
    """Send ``syncs`` in order to the flow's offset-syncs topic (see the module docstring)."""
    if not syncs:
        return
    alias, config = (
        (flow.source, flow.source_config)
        if flow.offset_syncs_location == "source"
        else (flow.target, flow.target_config)
    )
    failures: list[BaseException] = []

    def done(error: BaseException | None) -> None:
        if error is not None:
            failures.append(error)

    try:
        producer = await asyncio.wait_for(
            start_producer(mirror_client_config(config, "producer"), alias), timeout_s
        )
    except Exception as exc:
        raise FailoverError(f"cannot write offset syncs on cluster {alias}: {one_line(exc)}") from None
    try:
        await asyncio.wait_for(
            send_offset_syncs(producer, flow.offset_syncs_topic, [(s, done) for s in syncs]), timeout_s
        )
    except TimeoutError:
        raise FailoverError(
            f"writing offset syncs on cluster {alias} did not finish within {timeout_s:.0f} s"
        ) from None
    finally:
        await producer.stop()
    if failures:
        raise FailoverError(f"writing offset syncs on cluster {alias} failed: {one_line(failures[0])}")
