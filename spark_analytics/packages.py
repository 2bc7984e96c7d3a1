"""The jars of Spark's Kafka source (``spark-sql-kafka-0-10``), fetched with Maven into a git-ignored cache.

Contract:

- :data:`ARTIFACTS` pins the Kafka source and the token-provider module it links against. The Spark
  release installed with pyspark brings everything else (Scala, Spark SQL, compression codecs); jars
  that pyspark already ships (same artifact, any version) are left off the class path so there is one
  copy of each class.
- The pinned pair is the newest published on Maven Central that runs on the pyspark of the ``spark``
  extra, and is what the test suite runs: the Kafka source of Spark 4.2.0 with the token provider of
  4.0.0 (the last release of that module published there). Spark's batch Kafka source only touches
  Spark's public data-source API and a few token-provider helpers, so one minor release apart works; a
  later Spark whose connector is published should pin its own version here.
- :func:`ensure_kafka_source_jars` is idempotent: the first call resolves the artifacts and their
  runtime dependencies with ``mvn`` into ``<cache>/spark-kafka-<version>/libs``; once the ``complete``
  marker (with a fingerprint of :data:`ARTIFACTS`) exists, later calls do no network work, so a cached
  machine runs offline. ``PYCONNECT_SPARK_JARS`` names a folder of jars to use instead (air-gapped
  machines); the cache lives in ``<repo>/.cache`` for a source checkout and ``~/.cache/pyconnect``
  otherwise, ``PYCONNECT_CACHE`` overrides both (``pyconnect.maven_cache``, as the Kafka distribution).

``python -m spark_analytics.packages fetch`` fetches them (``make test`` runs it first).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from pyconnect.maven_cache import artifacts_fingerprint, cache_root, ensure_artifacts

SCALA_VERSION = "2.13"
KAFKA_SOURCE_VERSION = "4.2.0"
TOKEN_PROVIDER_VERSION = "4.0.0"

_KAFKA_SOURCE = f"spark-sql-kafka-0-10_{SCALA_VERSION}"
_TOKEN_PROVIDER = f"spark-token-provider-kafka-0-10_{SCALA_VERSION}"
ARTIFACTS: tuple[tuple[str, str, str], ...] = (
    ("org.apache.spark", _KAFKA_SOURCE, KAFKA_SOURCE_VERSION),
    ("org.apache.spark", _TOKEN_PROVIDER, TOKEN_PROVIDER_VERSION),
)
_FETCH_TIMEOUT_S = 600
_VERSION_START = re.compile(r"-[0-9]+\.")


class SparkPackageError(RuntimeError):
    """The Kafka source jars are missing and could not be fetched; the message says why and what to do."""


def jars_home() -> Path:
    return cache_root() / f"spark-kafka-{KAFKA_SOURCE_VERSION}"


def _pom() -> str:
    """Kafka source without its own token provider (not published for every release), plus the pinned one."""
    (kg, ka, kv), (tg, ta, tv) = ARTIFACTS
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>pyconnect</groupId>
  <artifactId>spark-kafka-source</artifactId>
  <version>{kv}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>{kg}</groupId><artifactId>{ka}</artifactId><version>{kv}</version>
      <exclusions><exclusion><groupId>{tg}</groupId><artifactId>{ta}</artifactId></exclusion></exclusions>
    </dependency>
    <dependency>
      <groupId>{tg}</groupId><artifactId>{ta}</artifactId><version>{tv}</version>
      <exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions>
    </dependency>
  </dependencies>
</project>
"""


def artifact_name(jar: str) -> str:
    """``kafka-clients-3.9.2.jar`` -> ``kafka-clients``: the file name before its version (the first
    ``-<digits>.``), so ``spark-sql-kafka-0-10_2.13-4.2.0.jar`` -> ``spark-sql-kafka-0-10_2.13``."""
    stem = jar[: -len(".jar")] if jar.endswith(".jar") else jar
    found = _VERSION_START.search(stem)
    return stem[: found.start()] if found else stem


def pyspark_jars_dir() -> Path:
    """The ``jars`` folder of the installed pyspark (found without starting Spark)."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise SparkPackageError(
            "pyspark is not installed: install the 'spark' extra (pip install '.[spark]')"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


def without_shipped(jars: list[Path], shipped: list[str]) -> list[Path]:
    """``jars`` minus those whose artifact pyspark already ships (any version)."""
    present = {artifact_name(name) for name in shipped}
    return [jar for jar in jars if artifact_name(jar.name) not in present]


def ensure_kafka_source_jars(*, quiet: bool = True) -> list[Path]:
    """The jars to add to Spark's class path for ``format("kafka")``, fetching them first when needed."""
    override = os.environ.get("PYCONNECT_SPARK_JARS")
    if override:
        folder = Path(override).expanduser().resolve()
        jars = sorted(folder.glob("*.jar"))
        if not any(artifact_name(j.name) == _KAFKA_SOURCE for j in jars):
            raise SparkPackageError(f"PYCONNECT_SPARK_JARS={folder} holds no {_KAFKA_SOURCE} jar")
    else:
        libs = ensure_artifacts(
            jars_home(),
            _pom(),
            artifacts_fingerprint(ARTIFACTS),
            what="Spark's Kafka source",
            error=SparkPackageError,
            missing_mvn_hint=", or point PYCONNECT_SPARK_JARS at a folder holding the jars",
            quiet=quiet,
            timeout_s=_FETCH_TIMEOUT_S,
        )
        jars = sorted(libs.glob("*.jar"))
    shipped_dir = pyspark_jars_dir()
    shipped = [p.name for p in shipped_dir.glob("*.jar")] if shipped_dir.is_dir() else []
    return without_shipped(jars, shipped)


def _main(argv: list[str]) -> int:
    if argv != ["fetch"]:
        print("usage: python -m spark_analytics.packages fetch", file=sys.stderr)
        return 2
    try:
        jars = ensure_kafka_source_jars(quiet=False)
    except SparkPackageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{len(jars)} jars for Spark's Kafka source in {jars[0].parent if jars else jars_home()}")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
