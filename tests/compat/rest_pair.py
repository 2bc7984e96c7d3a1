"""A live Java worker beside a two-worker pyconnect cluster, asked the same raw requests.

Every request goes to the Java worker (a one-worker cluster: its leader) and to both pyconnect
workers, the leader and the follower (so forwarding is on the path); answers are compared as status
and JSON after :meth:`RestPair.normalize` (worker ids, each side's topic names and file paths). Java's
``connect-file`` plugin jar (FileStreamSource/FileStreamSink) is fetched with Maven into the project's
cache and put on the Java worker's ``plugin.path``, as Kafka's quick start does.
:func:`kafka_connect_openapi` gives Apache Kafka's own Connect OpenAPI document for the pinned
release, generated from its jars the way Kafka's build generates the one it publishes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyconnect.maven_cache import artifacts_fingerprint, cache_root, ensure_artifacts
from pyconnect.testing.connect_worker import ConnectWorkerProcess
from pyconnect.testing.distribution import (
    KAFKA_VERSION,
    DistributionError,
    ensure_distribution,
    java_executable,
)

WORKER_ID = re.compile(r"127\.0\.0\.1:\d+")
CONNECT_FILE = (("org.apache.kafka", "connect-file", KAFKA_VERSION),)

Answer = tuple[int, Any]


def connect_file_jar() -> Path:
    """Java's ``connect-file`` jar of the pinned release (fetched once into the cache)."""
    group, artifact, version = CONNECT_FILE[0]
    pom = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>pyconnect</groupId><artifactId>connect-file-plugin</artifactId><version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version></dependency>
  </dependencies>
</project>
"""
    libs = ensure_artifacts(
        cache_root() / f"connect-file-{version}",
        pom,
        artifacts_fingerprint(CONNECT_FILE),
        what=f"Kafka {version} connect-file",
        error=DistributionError,
        timeout_s=600,
    )
    return libs / f"{artifact}-{version}.jar"


SWAGGER = (("io.swagger.core.v3", "swagger-jaxrs2-jakarta", "2.2.39"),)
"""The generator Kafka's build uses for its published document (the version of the
``swagger-annotations`` jar connect-runtime ships with)."""
OPENAPI_TEMPLATE = """openapi: 3.0.0
info:
  version: {version}
  title: Kafka Connect REST API
  description: "This is the documentation of the [Apache Kafka](https://kafka.apache.org) Connect REST API."
  contact:
    email: dev@kafka.apache.org
  license:
    name: Apache 2.0
    url: https://www.apache.org/licenses/LICENSE-2.0.html
"""
GENERATOR = Path(__file__).parent / "java" / "ConnectOpenApi.java"
RUNTIME_JARS = (
    "connect-runtime",
    "connect-api",
    "connect-json",
    "connect-transforms",
    "swagger-annotations",
    "maven-artifact",
    "jersey-server",
    "jersey-common",
    "jakarta.inject-api",
    "jakarta.servlet-api",
    "jetty-client",
    "jetty-util",
    "jakarta.ws.rs-api",
    "kafka-clients",
)


def kafka_connect_openapi() -> dict[str, Any]:
    """Apache Kafka's Connect REST OpenAPI document for the pinned release, as Kafka's build
    generates and publishes it (``connect_rest.yaml``), here as JSON: swagger-jaxrs2 (fetched with
    Maven) over the connect-runtime jar, run by ``java/ConnectOpenApi.java``. Cached once generated."""
    group, artifact, version = SWAGGER[0]
    home = cache_root() / f"swagger-jaxrs2-{version}"
    pom = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>pyconnect</groupId><artifactId>swagger-jaxrs2</artifactId><version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version></dependency>
  </dependencies>
</project>
"""
    libs = ensure_artifacts(
        home,
        pom,
        artifacts_fingerprint(SWAGGER),
        what=f"swagger-jaxrs2 {version}",
        error=DistributionError,
        timeout_s=600,
    )
    document = home / f"connect_rest-{KAFKA_VERSION}.json"
    if not document.exists():
        kafka_libs = ensure_distribution().libs
        runtime = [
            str(jar) for jar in sorted(kafka_libs.glob("*.jar")) if jar.name.rsplit("-", 1)[0] in RUNTIME_JARS
        ]
        template = home / "openapi.yaml"
        template.write_text(OPENAPI_TEMPLATE.format(version=KAFKA_VERSION))
        run = subprocess.run(
            [
                java_executable(),
                "-cp",
                os.pathsep.join([str(libs / "*"), *runtime]),
                str(GENERATOR),
                str(template),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if run.returncode != 0:
            raise DistributionError(f"generating Kafka's OpenAPI document failed:\n{run.stderr[-3000:]}")
        document.write_text(run.stdout)
    loaded: dict[str, Any] = json.loads(document.read_text())
    return loaded


def send(
    worker: ConnectWorkerProcess, method: str, path: str, raw: bytes | None = None, *, timeout: float = 60.0
) -> Answer:
    """One request with ``raw`` as a JSON body; ``(status, parsed JSON or text or None)``."""
    request = urllib.request.Request(worker.rest_url.rstrip("/") + path, data=raw, method=method)
    request.add_header("Accept", "application/json")
    if raw is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, payload = response.status, response.read()
    except urllib.error.HTTPError as err:
        with err:
            status, payload = err.code, err.read()
    if not payload:
        return status, None
    try:
        return status, json.loads(payload)
    except ValueError:
        return status, payload.decode(errors="replace")


def body(value: object) -> bytes:
    return value if isinstance(value, bytes) else json.dumps(value).encode()


@dataclass
class RestPair:
    """``java``: the reference; ``leader``/``follower``: ours. ``names`` maps each side to the
    strings that legitimately differ (topics, file paths), replaced by placeholders when comparing."""

    java: ConnectWorkerProcess
    leader: ConnectWorkerProcess
    follower: ConnectWorkerProcess
    names: dict[str, dict[str, str]] = field(default_factory=dict)

    def normalize(self, side: str, value: Any) -> Any:
        if isinstance(value, dict):
            return {
                key: ("<trace>" if item else item) if key == "trace" else self.normalize(side, item)
                for key, item in value.items()
            }
        if isinstance(value, list):
            return [self.normalize(side, item) for item in value]
        if isinstance(value, str):
            for actual, placeholder in sorted(self.names.get(side, {}).items(), key=lambda kv: -len(kv[0])):
                value = value.replace(actual, placeholder)
            return WORKER_ID.sub("<worker>", value)
        return value

    def ask(
        self, worker: ConnectWorkerProcess, side: str, method: str, path: str, raw: object = None
    ) -> Answer:
        status, payload = send(worker, method, path, None if raw is None else body(raw))
        return status, self.normalize(side, payload)

    def java_answer(self, method: str, path: str, raw: object = None) -> Answer:
        return self.ask(self.java, "java", method, path, raw)

    def ours(self, method: str, path: str, raw: object = None, *, via: str = "leader") -> Answer:
        return self.ask(self.leader if via == "leader" else self.follower, "ours", method, path, raw)

    def same(
        self, method: str, path: str, raw: object = None, *, vias: tuple[str, ...] = ("leader", "follower")
    ) -> Answer:
        """Java's answer, after checking that ours through each of ``vias`` is the same."""
        java = self.java_answer(method, path, raw)
        for via in vias:
            ours = self.ours(method, path, raw, via=via)
            assert ours == java, f"{method} {path} {raw!r} via our {via}\n java: {java}\n ours: {ours}"
        return java
