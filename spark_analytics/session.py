"""A small local Spark session for the audits: loopback only, no UI, few partitions, quiet logs.

Contract:

- :func:`local_spark` starts (or joins) the process's Spark session with Spark's Kafka source on the
  class path and yields it; on exit it stops the session and, unless ``keep_jvm``, the Java gateway too,
  so the JVM's memory is returned and the next :func:`local_spark` in this process starts a fresh one
  (with the same class path). The JVM also exits when this Python process dies (pyspark ties it to our
  stdin).
- Everything binds to 127.0.0.1; the Spark UI and the console progress bar are off; shuffles use
  :data:`SHUFFLE_PARTITIONS` partitions; the driver heap is ``memory`` (default 512 MiB). Python UDFs
  run in workers started from this interpreter and need neither pandas nor pyarrow.
- Under ``spark-submit`` (the driver of a submitted job, :mod:`spark_analytics.job_package`) it joins
  the session ``spark-submit`` configured: master, jars and memory are ``spark-submit``'s, ``master``
  and ``memory`` are ignored, and the JVM (``spark-submit``'s own) is left to end with the job.
- Nested use joins: a :func:`local_spark` entered while another is active yields the same session
  (its arguments are ignored) and leaves it running; the outermost one stops it. One thread at a time.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from spark_analytics.packages import cache_root, ensure_kafka_source_jars

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SHUFFLE_PARTITIONS = 4
DEFAULT_MASTER = "local[2]"
DEFAULT_MEMORY = "512m"
_JVM_EXIT_TIMEOUT_S = 30
_active: SparkSession | None = None
_SQL_CONF = {
    "spark.sql.shuffle.partitions": str(SHUFFLE_PARTITIONS),
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.pythonUDF.arrow.enabled": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "false",
}

_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
logger.hadoop.name = org.apache.hadoop.util.NativeCodeLoader
logger.hadoop.level = error
logger.kafka.name = org.apache.kafka
logger.kafka.level = error
logger.sparkkafka.name = org.apache.spark.sql.kafka010
logger.sparkkafka.level = error
"""


def submitted() -> bool:
    """True in the driver of a ``spark-submit`` job (the JVM was started by ``spark-submit``)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def log_config() -> Path:
    """The quiet log4j2 configuration the sessions use (written to the cache on first use)."""
    path = cache_root() / "spark-log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J2:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_LOG4J2)
    return path


def _stop_gateway() -> None:
    """Shut the py4j gateway and wait for its JVM, so a later session starts a new one."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is None:
        return
    proc = getattr(gateway, "proc", None)
    with contextlib.suppress(Exception):
        gateway.shutdown()
    if proc is not None:
        with contextlib.suppress(Exception):
            if proc.stdin:
                proc.stdin.close()
        try:
            proc.wait(timeout=_JVM_EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=_JVM_EXIT_TIMEOUT_S)
    SparkContext._gateway = None
    SparkContext._jvm = None


@contextlib.contextmanager
def local_spark(
    app_name: str = "pyconnect-audit",
    *,
    master: str = DEFAULT_MASTER,
    memory: str = DEFAULT_MEMORY,
    keep_jvm: bool = False,
) -> Iterator[SparkSession]:
    """A local :class:`SparkSession` that can read Kafka (see the module docstring)."""
    global _active
    if _active is not None:
        yield _active
        return
    if submitted():
        from pyspark.sql import SparkSession

        joined = SparkSession.builder.appName(app_name).getOrCreate()
        for name, value in _SQL_CONF.items():
            joined.conf.set(name, value)
        _active = joined
        try:
            yield joined
        finally:
            _active = None
        return
    jars = ensure_kafka_source_jars()
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    log_option = f"-Dlog4j2.configurationFile={log_config().as_uri()}"
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.jars", ",".join(str(j) for j in jars))
        .config("spark.driver.memory", memory)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.extraJavaOptions", log_option)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.default.parallelism", "2")
        .config("spark.python.worker.reuse", "true")
    )
    for name, value in _SQL_CONF.items():
        builder = builder.config(name, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    _active = spark
    try:
        yield spark
    finally:
        _active = None
        spark.stop()
        if not keep_jvm:
            _stop_gateway()
