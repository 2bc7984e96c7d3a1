"""``MirrorClient`` over Kafka: Java's ``connect-mirror-client`` (``MirrorClient``/``RemoteClusterUtils``)
reading one cluster (spec §6).

Point it at the cluster you fail over **to**: it holds the remote heartbeat topics and the checkpoints.
The logic is :mod:`connectors.mirror.offsets.remote_cluster_utils` (pure functions); this module only fetches what they read:
the topic names (one metadata request, broker-internal topics left out as by Java's ``listTopics()``) and
partition 0 of a checkpoints topic read from the beginning to its end.

Configuration is a ``MirrorClientConfig`` map of Java keys: ``bootstrap.servers``, ``security.protocol``,
``ssl.*``, ``sasl.*``, ``replication.policy.*`` and ``admin.``/``consumer.`` prefixed overrides. As in Java,
the clients keep only the connectivity keys (``consumer.client.id`` and the like are dropped), so any
cluster-properties map of ``mm2.properties`` (:meth:`MirrorMakerConfig.cluster_props`) can be passed whole.

Contract: every call is bounded by ``timeout_s`` and raises :class:`MirrorClientError` (one line, naming the
cluster) when the cluster cannot be reached or the topic is missing. Unlike Java's
``remoteConsumerOffsets``, a read that does not reach the end of the checkpoints topic in time fails
instead of returning a partial answer (spec §9 #21). Undecodable checkpoint records are skipped and
counted, as Java skips them. Use one instance from one event loop; ``close()`` is idempotent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from connectors.mirror.checkpoint_records import Checkpoint, RecordFormatError
from connectors.mirror.offsets import remote_cluster_utils
from connectors.mirror.policy import ReplicationPolicy, replication_policy
from connectors.mirror.records import OffsetSync, TopicPartition
from pyconnect.config.client_configs import mirror_client_config
from pyconnect.errors import ConnectError
from pyconnect.kafka.log import KafkaLog, LogRecord
from pyconnect.kafka.mirror_admin import MirrorAdmin

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "MirrorClient",
    "MirrorClientError",
    "PartitionRead",
    "read_offset_syncs",
    "read_partition0",
]

DEFAULT_TIMEOUT_S = 30.0


class MirrorClientError(ConnectError, RuntimeError):
    """A cluster could not be reached, or what was asked for is not there; the message is one line."""


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


@dataclass
class PartitionRead:
    """Every record of partition 0 of a topic, oldest first, as ``(key, value)`` pairs."""

    topic: str
    records: list[tuple[bytes | None, bytes | None]] = field(default_factory=list)


async def read_partition0(
    consumer_config: Mapping[str, Any], topic: str, timeout_s: float, *, cluster: str = "the cluster"
) -> PartitionRead:
    """Read partition 0 of ``topic`` from the beginning to the end it had when the read started.

    Raises :class:`MirrorClientError` when the cluster cannot be reached, the topic does not exist, or
    the end is not reached within ``timeout_s``.
    """
    read = PartitionRead(topic)

    def collect(records: Sequence[LogRecord]) -> None:
        read.records.extend((r.key, r.value) for r in records)

    reader = KafkaLog(topic, consumer_config, collect, partitions=[0], read_only=True, topic_wait_s=0)
    try:
        await asyncio.wait_for(reader.start(), timeout_s)
    except LookupError:
        raise MirrorClientError(f"topic {topic} does not exist on {cluster}") from None
    except TimeoutError:
        raise MirrorClientError(
            f"reading {topic} on {cluster} did not finish within {timeout_s:.0f} s"
        ) from None
    except MirrorClientError:
        raise
    except Exception as exc:
        raise MirrorClientError(f"cannot read {topic} on {cluster}: {_one_line(exc)}") from None
    finally:
        with contextlib.suppress(Exception):
            await reader.stop()
    return read


class MirrorClient:
    """The ``MirrorClient`` operations on one cluster (``alias`` only names it in messages)."""

    def __init__(
        self,
        config: Mapping[str, Any],
        *,
        alias: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        policy: ReplicationPolicy | None = None,
    ) -> None:
        self.config = dict(config)
        self.cluster = f"cluster {alias}" if alias else "the cluster"
        self.timeout_s = timeout_s
        self.policy: ReplicationPolicy = policy if policy is not None else replication_policy(self.config)
        self._admin: MirrorAdmin | None = None

    async def __aenter__(self) -> MirrorClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        admin, self._admin = self._admin, None
        if admin is not None:
            with contextlib.suppress(Exception):
                await admin.close()

    @property
    def consumer_config(self) -> dict[str, str]:
        return mirror_client_config(self.config, "consumer")

    @property
    def admin_config(self) -> dict[str, str]:
        return mirror_client_config(self.config, "admin")

    async def list_topics(self) -> set[str]:
        """Java ``Admin.listTopics().names()`` (broker-internal topics left out)."""
        try:
            if self._admin is None:
                self._admin = MirrorAdmin(self.admin_config)
            admin = self._admin
            await asyncio.wait_for(admin.start(), self.timeout_s)
            return set(await asyncio.wait_for(admin.topic_partitions(), self.timeout_s))
        except TimeoutError:
            raise MirrorClientError(f"{self.cluster} did not answer within {self.timeout_s:.0f} s") from None
        except Exception as exc:
            raise MirrorClientError(f"cannot reach {self.cluster}: {_one_line(exc)}") from None

    async def heartbeat_topics(self) -> set[str]:
        return remote_cluster_utils.heartbeat_topics(await self.list_topics(), self.policy)

    async def checkpoint_topics(self) -> set[str]:
        return remote_cluster_utils.checkpoint_topics(await self.list_topics(), self.policy)

    async def upstream_clusters(self) -> set[str]:
        return remote_cluster_utils.upstream_clusters(await self.list_topics(), self.policy)

    async def replication_hops(self, upstream_cluster_alias: str) -> int:
        return remote_cluster_utils.replication_hops(
            await self.list_topics(), upstream_cluster_alias, self.policy
        )

    async def remote_topics(self, source: str | None = None) -> set[str]:
        return remote_cluster_utils.remote_topics(await self.list_topics(), source, self.policy)

    async def checkpoint_records(self, remote_cluster_alias: str) -> PartitionRead:
        """Partition 0 of ``checkpoints_topic(remote_cluster_alias)`` on this cluster, read to its end."""
        topic = self.policy.checkpoints_topic(remote_cluster_alias)
        return await read_partition0(self.consumer_config, topic, self.timeout_s, cluster=self.cluster)

    async def remote_consumer_offsets(
        self, consumer_group_id: str, remote_cluster_alias: str
    ) -> dict[TopicPartition, remote_cluster_utils.OffsetAndMetadata]:
        """Java ``remoteConsumerOffsets`` / ``RemoteClusterUtils.translateOffsets``: where the group resumes
        on this cluster, by target-side topic partition (empty when the group has no checkpoints)."""
        read = await self.checkpoint_records(remote_cluster_alias)
        return remote_cluster_utils.remote_consumer_offsets(read.records, consumer_group_id).offsets

    async def latest_checkpoints(
        self, consumer_group_id: str, remote_cluster_alias: str
    ) -> tuple[dict[TopicPartition, Checkpoint], int]:
        """The group's latest checkpoint per target-side partition (upstream offsets included), and the
        number of undecodable records skipped."""
        read = await self.checkpoint_records(remote_cluster_alias)
        latest: dict[TopicPartition, Checkpoint] = {}
        skipped = 0
        for key, value in read.records:
            try:
                checkpoint = Checkpoint.from_record(key, value)
            except RecordFormatError:
                skipped += 1
                continue
            if checkpoint.consumer_group_id == consumer_group_id:
                latest[checkpoint.topic_partition] = checkpoint
        return latest, skipped


async def read_offset_syncs(
    consumer_config: Mapping[str, Any], topic: str, timeout_s: float, *, cluster: str = "the cluster"
) -> tuple[list[OffsetSync], int]:
    """Every decodable offset sync of partition 0 of ``topic``, in topic order, and the count skipped."""
    read = await read_partition0(consumer_config, topic, timeout_s, cluster=cluster)
    syncs: list[OffsetSync] = []
    skipped = 0
    for key, value in read.records:
        try:
            syncs.append(OffsetSync.deserialize_record(key, value))
        except RecordFormatError:
            skipped += 1
    return syncs, skipped
