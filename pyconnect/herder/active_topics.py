"""KIP-558 on the worker: the topics each connector's source tasks produced to, recorded once each.

Contract: :meth:`ActiveTopics.record` is called after every acknowledged batch (Java's
``recordActiveTopic``). A topic the status store already holds for the connector is not written again;
a write not yet read back is not repeated for ``retry_s`` (5 s); a write the store refuses is logged at
DEBUG and tried again after that. :meth:`ActiveTopics.reset` forgets a connector's pending writes when its
active topics are reset.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pyconnect.errors import ConnectError
from pyconnect.protocol.internal_records import TopicStatus
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.status import StatusStore

log = logging.getLogger(__name__)

RETRY_S = 5.0


class ActiveTopics:
    """See the module docstring; one per herder."""

    def __init__(
        self, status_store: StatusStore, clock: Callable[[], float], retry_s: float = RETRY_S
    ) -> None:
        self._store = status_store
        self._clock = clock
        self._retry_s = retry_s
        self._sent: dict[tuple[str, str], float] = {}

    def record(self, task: ConnectorTaskId, topic: str) -> None:
        key = (task.connector, topic)
        if self._store.get_topic(task.connector, topic) is not None:
            self._sent.pop(key, None)
            return
        now = self._clock()
        sent = self._sent.get(key)
        if sent is not None and now - sent < self._retry_s:
            return
        self._sent[key] = now
        try:
            self._store.put_topic(TopicStatus(topic, task.connector, task.task, int(now * 1000)))
        except ConnectError as exc:
            log.debug("Connector %s: active topic %s not recorded: %s", task.connector, topic, exc)

    def reset(self, connector: str) -> None:
        for key in [k for k in self._sent if k[0] == connector]:
            del self._sent[key]
