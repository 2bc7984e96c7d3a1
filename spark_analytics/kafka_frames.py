"""Kafka topics as Spark DataFrames: Spark's Kafka batch source from earliest to latest, normalised.

Contract:

- :func:`read_records` reads every record of the named topics that exists when the read starts (offset
  range ``earliest..latest`` per partition, fixed at planning time) into :data:`RECORD_COLUMNS`:
  ``topic, partition, offset, key, value, headers, timestamp_ms``. ``headers`` is an array of
  ``struct<key: string, value: binary>`` in record order, empty (never null) for a record without
  headers; ``timestamp_ms`` is the record timestamp in epoch milliseconds, whatever its type.
- A topic that does not exist reads as no records (no error, and no topic is created: existence is
  asked of the admin client first, and only existing topics are subscribed). Gaps in offsets (compaction, transaction markers, retention racing the read) are
  expected and never fail the read.
- ``KafkaCluster.properties`` are consumer/admin properties (``security.protocol``,
  ``isolation.level``, ...) passed through as ``kafka.<name>``; ``timeout_s`` bounds every metadata
  call (Kafka's ``default.api.timeout.ms``/``request.timeout.ms``) so an unreachable cluster fails fast.
- The read is lazy: nothing touches Kafka until an action runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

RECORD_COLUMNS = ("topic", "partition", "offset", "key", "value", "headers", "timestamp_ms")
HEADERS_TYPE = "array<struct<key:string,value:binary>>"


@dataclass(frozen=True)
class KafkaCluster:
    """Where to read: bootstrap servers plus client properties, as given on the command line."""

    bootstrap_servers: str
    properties: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 30.0


KAFKA_SOURCE_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset bigint, timestamp timestamp, "
    f"timestampType int, headers {HEADERS_TYPE}"
)
"""The columns of Spark's Kafka source with ``includeHeaders``, for a read of no existing topic."""


def client_properties(cluster: KafkaCluster) -> dict[str, str]:
    """Java client properties for ``cluster`` (bootstrap, timeouts, then the given properties)."""
    timeout_ms = str(max(1000, int(cluster.timeout_s * 1000)))
    return {
        "bootstrap.servers": cluster.bootstrap_servers,
        "default.api.timeout.ms": timeout_ms,
        "request.timeout.ms": timeout_ms,
        **cluster.properties,
    }


def list_topics(spark: SparkSession, cluster: KafkaCluster) -> set[str]:
    """The topic names of ``cluster`` (internal ones left out, as the admin client does by default),
    asked with the Kafka admin client in Spark's JVM (same client, same properties as the Kafka
    source). Raises on an unreachable cluster."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    props = jvm.java.util.Properties()
    for name, value in client_properties(cluster).items():
        props.setProperty(name, value)
    admin = jvm.org.apache.kafka.clients.admin.Admin.create(props)
    try:
        timeout_ms = max(1000, int(cluster.timeout_s * 1000))
        names = admin.listTopics().names().get(timeout_ms, jvm.java.util.concurrent.TimeUnit.MILLISECONDS)
        return set(names)
    finally:
        admin.close()


def existing_topics(spark: SparkSession, cluster: KafkaCluster, topics: Sequence[str]) -> list[str]:
    """Those of ``topics`` that exist on ``cluster`` (:func:`list_topics`)."""
    present = list_topics(spark, cluster)
    return [t for t in topics if t in present]


def raw_reader(spark: SparkSession, cluster: KafkaCluster, topics: Sequence[str]) -> DataFrame:
    """Spark's Kafka source over those of ``topics`` that exist: Spark's own columns (``key, value,
    topic, partition, offset, timestamp, timestampType, headers``); no rows when none exists."""
    if not topics:
        raise ValueError("at least one topic is needed")
    present = existing_topics(spark, cluster, topics)
    if not present:
        return spark.createDataFrame([], KAFKA_SOURCE_SCHEMA)
    reader = (
        spark.read.format("kafka")
        .option("subscribe", ",".join(present))
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .option("includeHeaders", "true")
        .option("failOnDataLoss", "false")
        .option("fetchOffset.numRetries", "1")
    )
    for name, value in client_properties(cluster).items():
        reader = reader.option(f"kafka.{name}", value)
    return reader.load()


def normalised(raw: DataFrame, topic: Column | None = None) -> DataFrame:
    """Spark's Kafka columns as :data:`RECORD_COLUMNS`; ``topic`` replaces the topic column if given."""
    return raw.select(
        (topic if topic is not None else F.col("topic")).alias("topic"),
        F.col("partition"),
        F.col("offset"),
        F.col("key"),
        F.col("value"),
        F.coalesce(F.col("headers"), F.array().cast(HEADERS_TYPE)).alias("headers"),
        F.unix_millis(F.col("timestamp")).alias("timestamp_ms"),
    )


def read_records(
    spark: SparkSession,
    cluster: KafkaCluster,
    topics: Sequence[str],
    rename: Mapping[str, str] | None = None,
) -> DataFrame:
    """Every record of ``topics`` as :data:`RECORD_COLUMNS`; ``rename`` maps read names to reported
    names (e.g. remote topic -> source topic), so both sides of a mirror share one ``topic`` column."""
    raw = raw_reader(spark, cluster, topics)
    if not rename:
        return normalised(raw)
    mapping = F.create_map(*[F.lit(x) for pair in rename.items() for x in pair])
    return normalised(raw, F.coalesce(mapping[F.col("topic")], F.col("topic")))
