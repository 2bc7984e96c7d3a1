"""MirrorMaker 2's offset-sync and checkpoint records decoded inside Spark, with the project's codecs.

The decoding is :mod:`connectors.mirror.records` and :mod:`connectors.mirror.checkpoint_records`,
run as plain Python UDFs (pickled rows, no pandas or pyarrow needed). A record that does not decode
(malformed bytes, a tombstone) is kept with ``decodable`` false and null fields, so the caller can
count what it skips, as Java's readers skip such records.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from connectors.mirror.checkpoint_records import Checkpoint
from connectors.mirror.records import OffsetSync, RecordFormatError

SYNC_TYPE = StructType(
    [
        StructField("topic", StringType(), False),
        StructField("partition", IntegerType(), False),
        StructField("upstream_offset", LongType(), False),
        StructField("downstream_offset", LongType(), False),
    ]
)
CHECKPOINT_TYPE = StructType(
    [
        StructField("group", StringType(), False),
        StructField("topic", StringType(), False),
        StructField("partition", IntegerType(), False),
        StructField("upstream_offset", LongType(), False),
        StructField("downstream_offset", LongType(), False),
        StructField("metadata", StringType(), False),
    ]
)


def offset_sync_fields(key: bytes | None, value: bytes | None) -> tuple[str, int, int, int] | None:
    """One offset-syncs record as :data:`SYNC_TYPE` fields, or ``None`` when it does not decode."""
    try:
        sync = OffsetSync.deserialize_record(key, value)
    except RecordFormatError:
        return None
    return sync.topic, sync.partition, sync.upstream_offset, sync.downstream_offset


def checkpoint_fields(key: bytes | None, value: bytes | None) -> tuple[str, str, int, int, int, str] | None:
    """One checkpoints record as :data:`CHECKPOINT_TYPE` fields, or ``None`` when it does not decode."""
    try:
        c = Checkpoint.from_record(key, value)
    except RecordFormatError:
        return None
    return c.consumer_group_id, c.topic, c.partition, c.upstream_offset, c.downstream_offset, c.metadata


def _udf(function: Callable[..., object], returns: StructType) -> Callable[..., Column]:
    """A plain (pickled rows) Python UDF, built per use: a UDF object caches its Java twin, which
    would outlive a Spark gateway that :func:`spark_analytics.session.local_spark` shut down."""
    return F.udf(function, returns, useArrow=False)


def _decoded(raw: DataFrame, decoded: Column, fields: StructType) -> DataFrame:
    frame = raw.select(
        F.col("partition").alias("record_partition"),
        F.col("offset").alias("record_offset"),
        decoded.alias("decoded"),
    )
    return frame.select(
        "record_partition",
        "record_offset",
        F.col("decoded").isNotNull().alias("decodable"),
        *[F.col(f"decoded.{f.name}").alias(f.name) for f in fields.fields],
    )


def decode_offset_syncs(raw: DataFrame) -> DataFrame:
    """Spark Kafka rows of an offset-syncs topic -> ``record_partition, record_offset`` (where the sync
    is in its topic), ``decodable`` and the :data:`SYNC_TYPE` fields (null when not decodable)."""
    return _decoded(raw, _udf(offset_sync_fields, SYNC_TYPE)(F.col("key"), F.col("value")), SYNC_TYPE)


def decode_checkpoints(raw: DataFrame) -> DataFrame:
    """Spark Kafka rows of a checkpoints topic -> ``record_partition, record_offset``, ``decodable`` and
    the :data:`CHECKPOINT_TYPE` fields (``topic`` is the target-side name; null when not decodable)."""
    return _decoded(
        raw, _udf(checkpoint_fields, CHECKPOINT_TYPE)(F.col("key"), F.col("value")), CHECKPOINT_TYPE
    )
