"""What MirrorSourceTask writes for the source records it copies (Java's ``MirrorSourceTask.convertRecord``).

``copied(records, source_partition, remote, partition)``: one SourceRecord per consumer record (an
aiokafka ``ConsumerRecord`` or a record decoded from a batch: ``offset``, ``key``, ``value``,
``timestamp``, ``headers``), in order: the source partition map given, the source offset
``{"offset": n}``, the remote topic and the same partition, bytes key, value and headers unchanged,
the record's timestamp. Built in one list comprehension: this runs for every record on the record path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from connectors.mirror.records import OFFSET_KEY
from pyconnect.api.data import BYTES_SCHEMA, OPTIONAL_BYTES_SCHEMA
from pyconnect.api.source import Header, SourceRecord


def copied(
    records: Sequence[Any], source_partition: Mapping[str, Any], remote: str, partition: int
) -> list[SourceRecord]:
    """See the module docstring."""
    return [
        SourceRecord(
            source_partition,
            {OFFSET_KEY: m.offset},
            remote,
            partition,
            OPTIONAL_BYTES_SCHEMA,
            m.key,
            BYTES_SCHEMA,
            m.value,
            m.timestamp,
            [Header(k, BYTES_SCHEMA, v) for k, v in m.headers] if m.headers else (),
        )
        for m in records
    ]
