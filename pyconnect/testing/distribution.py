"""The pinned Apache Kafka release, fetched with Maven into a git-ignored cache.

Contract:
- ``KAFKA_VERSION`` is the one pinned release. Every artifact the project runs (broker, tools,
  Connect runtime, JSON converter, MirrorMaker 2 and its client library, the log4j2 backend) comes
  from that release's Maven coordinates.
- ``ensure_distribution()`` is idempotent: the first call resolves the artifacts and their runtime
  dependencies with ``mvn`` into ``<cache>/kafka-<version>/libs``; once the ``complete`` marker is
  written (with a fingerprint of the artifact list), later calls do no network work at all, so a
  cached machine runs offline. Changing the artifact list fetches again (see ``pyconnect.maven_cache``).
- ``connect-test-plugins`` brings Java's VerifiableSourceConnector, the test connector both runtimes
  share in compatibility tests.
- The cache lives in ``<repo>/.cache`` for a source checkout and ``~/.cache/pyconnect`` otherwise;
  ``PYCONNECT_CACHE`` overrides both, ``PYCONNECT_KAFKA_LIBS`` points at an existing folder of jars.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from pyconnect import COMPATIBLE_KAFKA_VERSION
from pyconnect.errors import ConnectError
from pyconnect.maven_cache import artifacts_fingerprint, cache_root, ensure_artifacts

KAFKA_VERSION = COMPATIBLE_KAFKA_VERSION
SCALA_VERSION = "2.13"
LOG4J_VERSION = "2.25.4"

_ARTIFACTS: tuple[tuple[str, str, str], ...] = (
    ("org.apache.kafka", f"kafka_{SCALA_VERSION}", KAFKA_VERSION),
    ("org.apache.kafka", "kafka-tools", KAFKA_VERSION),
    ("org.apache.kafka", "connect-runtime", KAFKA_VERSION),
    ("org.apache.kafka", "connect-json", KAFKA_VERSION),
    ("org.apache.kafka", "connect-mirror", KAFKA_VERSION),
    ("org.apache.kafka", "connect-mirror-client", KAFKA_VERSION),
    ("org.apache.kafka", "connect-test-plugins", KAFKA_VERSION),
    ("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J_VERSION),
)

_LOG4J2_CONFIG = """\
Configuration:
  Appenders:
    Console:
      name: STDOUT
      PatternLayout:
        Pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: STDOUT
    Logger:
      - name: org.apache.kafka.clients
        level: WARN
      - name: org.reflections
        level: ERROR
"""


class DistributionError(ConnectError, RuntimeError):
    """The Kafka jars are missing and could not be fetched; the message says why and what to do."""


@dataclass(frozen=True)
class KafkaDistribution:
    """A folder of jars that together run every Kafka main class the project uses."""

    home: Path

    @property
    def libs(self) -> Path:
        return self.home / "libs"

    @property
    def classpath(self) -> str:
        return str(self.libs / "*")

    @property
    def log4j2_config(self) -> Path:
        return self.home / "log4j2.yaml"

    def java_command(
        self, main_class: str, *args: str, heap: str = "512m", jvm_opts: tuple[str, ...] = ()
    ) -> list[str]:
        """The argv that runs ``main_class`` from these jars with a bounded heap and quiet logging. An
        ``OutOfMemoryError`` ends the process (as container images of Kafka do), so whoever waits on it
        sees it die rather than a JVM that lingers without working."""
        return [
            java_executable(),
            f"-Xmx{heap}",
            "-Xms64m",
            "-XX:+UseG1GC",
            "-XX:+ExitOnOutOfMemoryError",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.log4j2_config}",
            *jvm_opts,
            "-cp",
            self.classpath,
            main_class,
            *args,
        ]


def java_executable() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise DistributionError("no 'java' on PATH and JAVA_HOME is not set: install a Java 17+ runtime")
    return found


def distribution_home(version: str = KAFKA_VERSION) -> Path:
    return cache_root() / f"kafka-{version}"


def _pom() -> str:
    deps = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>"
        for g, a, v in _ARTIFACTS
    )
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>pyconnect</groupId>
  <artifactId>kafka-distribution</artifactId>
  <version>{KAFKA_VERSION}</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
"""


def ensure_distribution(*, quiet: bool = True) -> KafkaDistribution:
    """Return the cached distribution, fetching it with ``mvn`` first when it is not complete."""
    libs_override = os.environ.get("PYCONNECT_KAFKA_LIBS")
    if libs_override:
        libs = Path(libs_override).expanduser().resolve()
        if not any(libs.glob("kafka-clients-*.jar")):
            raise DistributionError(f"PYCONNECT_KAFKA_LIBS={libs} holds no kafka-clients jar")
        home = cache_root() / f"kafka-external-{hashlib.sha256(str(libs).encode()).hexdigest()[:12]}"
        home.mkdir(parents=True, exist_ok=True)
        if not (home / "libs").exists():
            (home / "libs").symlink_to(libs)
        (home / "log4j2.yaml").write_text(_LOG4J2_CONFIG)
        return KafkaDistribution(home)

    home = distribution_home()
    ensure_artifacts(
        home,
        _pom(),
        artifacts_fingerprint(_ARTIFACTS),
        what=f"Kafka {KAFKA_VERSION}",
        error=DistributionError,
        extra_files={"log4j2.yaml": _LOG4J2_CONFIG},
        quiet=quiet,
    )
    return KafkaDistribution(home)
