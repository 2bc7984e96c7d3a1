"""A standalone worker's herder: the one :class:`~pyconnect.herder.herder.Herder` in
:data:`~pyconnect.herder.modes.STANDALONE` mode (Java's StandaloneHerder).

Configs and statuses live in the in-memory stores (``MemoryConfigStore``/``MemoryStatusStore``, the
same reader state machines as the Kafka-backed ones); the worker is a group of one
(:class:`~pyconnect.herder.membership.SoloMembership`): always the leader, holding every connector
and task. Nothing is forwarded: this worker is the whole cluster.
"""

from __future__ import annotations

from typing import Any

from pyconnect.herder.herder import Herder
from pyconnect.herder.membership import SoloMembership
from pyconnect.herder.modes import STANDALONE
from pyconnect.stores.config import MemoryConfigStore
from pyconnect.stores.status import MemoryStatusStore
from pyconnect.worker.worker import Worker


def standalone_herder(config: Any, *, worker: Worker, kafka_cluster_id: str) -> Herder:
    """The herder of a standalone worker whose id is ``worker.worker_id`` (``host:port``)."""
    url = f"http://{worker.worker_id}/"
    herder = Herder(
        config,
        worker=worker,
        config_store=MemoryConfigStore(),
        status_store=MemoryStatusStore(),
        membership_factory=lambda h: SoloMembership(url, h.config_store.snapshot, h.on_revoked),
        rest_url=url,
        kafka_cluster_id=kafka_cluster_id,
        mode=STANDALONE,
        worker_id=worker.worker_id,
    )
    return herder
