"""What a connector author sees: the data model, connectors, source tasks and converters.

Nothing here does I/O or imports a Kafka or HTTP client; the runtime drives these classes.
"""

from pyconnect.api.connector import (
    Connector,
    ConnectorContext,
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SourceConnector,
    maybe_await,
)
from pyconnect.api.source import (
    Header,
    MemoryOffsetStorageReader,
    OffsetStorageReader,
    RecordMetadata,
    SourceRecord,
    SourceTask,
    SourceTaskContext,
)

__all__ = [
    "Connector",
    "ConnectorContext",
    "ConnectorTransactionBoundaries",
    "ExactlyOnceSupport",
    "Header",
    "MemoryOffsetStorageReader",
    "OffsetStorageReader",
    "RecordMetadata",
    "SourceConnector",
    "SourceRecord",
    "SourceTask",
    "SourceTaskContext",
    "maybe_await",
]
