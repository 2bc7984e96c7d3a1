"""The three internal-topic stores (configs, offsets, statuses) and their in-memory twins.

Each store runs over a topic source: :class:`~pyconnect.stores.kafka_topic.InternalTopic` (a real
Kafka topic, tailed with :class:`~pyconnect.kafka.log.KafkaLog`) or
:class:`~pyconnect.stores.memory.MemoryTopic` (the twins ``Memory*Store``, same code and bytes).
Startup order in the runtime: offsets, statuses, configs (spec §2.1).
"""

from pyconnect.stores.config import (
    ClusterConfigState,
    ConfigStateMachine,
    ConfigStore,
    MemoryConfigStore,
)
from pyconnect.stores.config_events import ConfigEvent, ConfigListener
from pyconnect.stores.kafka_topic import InternalTopic
from pyconnect.stores.memory import MemoryLog, MemoryTopic
from pyconnect.stores.offsets import MemoryOffsetStore, OffsetStore
from pyconnect.stores.status import MemoryStatusStore, StatusStore

__all__ = [
    "ClusterConfigState",
    "ConfigEvent",
    "ConfigListener",
    "ConfigStateMachine",
    "ConfigStore",
    "InternalTopic",
    "MemoryConfigStore",
    "MemoryLog",
    "MemoryOffsetStore",
    "MemoryStatusStore",
    "MemoryTopic",
    "OffsetStore",
    "StatusStore",
]
