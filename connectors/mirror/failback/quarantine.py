"""The quarantine of a failback: the orphans copied, once, to a topic of their own for their owners.

:func:`quarantine` writes the orphan records of each source partition to partition ``p`` of
``template.format(topic=...)`` (default ``<topic>.orphans``) on the source cluster, keys, values,
headers and timestamps unchanged, plus three headers naming where each came from
(``pyconnect.orphan.topic``, ``.partition``, ``.offset``). The topic is created with the source topic's
partition count when missing. All records go in one transaction of the transactional id
``pyconnect-failback-<source>-<target>``, so a copy interrupted at any point leaves nothing visible and
a new run fences the old producer; a quarantine topic that already holds the expected count of committed
records (a run that committed, then died before recording it) is not written again. Errors:
:class:`~connectors.mirror.offsets.failover_calls.FailoverError`, one line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from connectors.mirror.offsets.failover_calls import FailoverError, one_line
from pyconnect.config.client_configs import mirror_client_config
from pyconnect.kafka.admin_client import start_producer
from pyconnect.kafka.mirror_admin import MirrorAdmin, NewTopicSpec
from pyconnect.kafka.record_offsets import FetchedRecord, committed_records, partition_bounds

__all__ = ["DEFAULT_TEMPLATE", "quarantine"]

DEFAULT_TEMPLATE = "{topic}.orphans"
Partition = tuple[str, int]


def _headers(record: FetchedRecord) -> list[tuple[str, bytes]]:
    origin = [
        ("pyconnect.orphan.topic", record.topic.encode()),
        ("pyconnect.orphan.partition", str(record.partition).encode()),
        ("pyconnect.orphan.offset", str(record.offset).encode()),
    ]
    return [*[(k, bytes(v)) for k, v in (record.headers or ())], *origin]


async def quarantine(
    cluster: str,
    client_config: Mapping[str, str],
    records: Mapping[Partition, Sequence[FetchedRecord]],
    template: str,
    transactional_id: str,
    timeout_s: float,
) -> dict[str, int]:
    """Copy ``records`` (by source partition) to their quarantine topics (see the module docstring);
    returns the records per quarantine topic."""
    wanted: dict[str, int] = {}
    for (topic, _), found in records.items():
        name = template.format(topic=topic)
        wanted[name] = wanted.get(name, 0) + len(found)
    if not any(wanted.values()):
        return wanted
    admin = MirrorAdmin(mirror_client_config(client_config, "admin"), cluster)
    try:
        await admin.start()
        partitions = await admin.topic_partitions()
        specs = [
            NewTopicSpec(
                template.format(topic=t),
                len(partitions.get(t, [])) or 1 + max(p for s, p in records if s == t),
                -1,
                {},
            )
            for t in sorted({t for t, _ in records})
            if template.format(topic=t) not in partitions
        ]
        errors = {k: v for k, v in (await admin.create_topics(specs)).items() if v}
        if errors:
            name, error = next(iter(errors.items()))
            raise FailoverError(f"cannot create the quarantine topic {name} on cluster {cluster}: {error}")
    except FailoverError:
        raise
    except Exception as exc:
        raise FailoverError(f"cannot prepare the quarantine on cluster {cluster}: {one_line(exc)}") from None
    finally:
        await admin.close()
    held = await _committed_counts(client_config, wanted, timeout_s)
    if held == wanted:
        return wanted
    if any(held.values()):
        found = ", ".join(f"{t}: {n}" for t, n in sorted(held.items()) if n)
        raise FailoverError(
            f"the quarantine topics already hold records ({found}): give another --quarantine name"
        )
    producer_config = {
        **mirror_client_config(client_config, "producer"),
        "transactional.id": transactional_id,
    }
    try:
        producer = await start_producer(producer_config, cluster)
    except Exception as exc:
        raise FailoverError(f"cannot write the quarantine on cluster {cluster}: {one_line(exc)}") from None
    try:
        async with producer.transaction():
            for (topic, partition), found in sorted(records.items()):
                for record in found:
                    await producer.send(
                        template.format(topic=topic),
                        record.value,
                        key=record.key,
                        partition=partition,
                        timestamp_ms=record.timestamp,
                        headers=_headers(record),
                    )
    except Exception as exc:
        raise FailoverError(f"the quarantine copy on cluster {cluster} failed: {one_line(exc)}") from None
    finally:
        await producer.stop()
    return wanted


async def _committed_counts(
    client_config: Mapping[str, str], wanted: Mapping[str, int], timeout_s: float
) -> dict[str, int]:
    """Committed records per quarantine topic, counted by reading them (markers are not records)."""
    admin = MirrorAdmin(mirror_client_config(client_config, "admin"))
    try:
        await admin.start()
        described = await admin.topic_partitions()
    finally:
        await admin.close()
    consumer = mirror_client_config(client_config, "consumer")
    partitions = [(name, p) for name in wanted for p in described.get(name, [])]
    bounds = await partition_bounds(consumer, partitions, timeout_s)
    read = await committed_records(
        consumer, [(t, p, start - 1, None) for (t, p), (start, _) in bounds.items()], timeout_s
    )
    counts = dict.fromkeys(wanted, 0)
    for (name, _, _, _), found in read.items():
        counts[name] += len(found)
    return counts
