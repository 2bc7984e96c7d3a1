"""Apache Kafka releases other than the pinned one, for migration tests (an old source, a newer target).

Contract:

- :func:`release` describes a release by its version: the pinned one (``KAFKA_VERSION``, the
  distribution of :mod:`pyconnect.testing.distribution`), or any 2.x/3.x release published on Maven
  Central as ``org.apache.kafka:kafka_2.13`` (tested: 3.9.1 and 2.8.2). Releases from 3.3 on run in
  KRaft mode (combined broker+controller nodes, static voters, as the pinned launcher does); older
  ones keep their metadata in a ZooKeeper server (the one their broker jar depends on) that the
  cluster starts before its brokers and stops after them.
- :func:`ensure_release` fetches the broker jar and its runtime dependencies with ``mvn`` into
  ``<cache>/kafka-<version>`` (one folder per version, idempotent, offline once cached; see
  :mod:`pyconnect.maven_cache`), with reload4j as the logging backend these releases were shipped with.
- :func:`start_release_clusters` starts fresh clusters of a release on 127.0.0.1 like
  :func:`pyconnect.testing.kafka.start_clusters` (plaintext only; ``node(id).stop()/kill()/start()``
  work the same; ``down`` stops brokers first, then the ZooKeeper server).
- :func:`provide_release_clusters` is the session-scoped factory behind the ``kafka_release`` test
  fixture: one cluster per version, started on first request.
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pyconnect.maven_cache import artifacts_fingerprint, cache_root, ensure_artifacts
from pyconnect.testing.distribution import (
    KAFKA_VERSION,
    SCALA_VERSION,
    DistributionError,
    KafkaDistribution,
    ensure_distribution,
)
from pyconnect.testing.java_process import JavaProcess
from pyconnect.testing.kafka import (
    DEFAULT_HEAP,
    BrokerNode,
    KafkaCluster,
    free_ports,
    render_properties,
    start_clusters,
    stop_clusters,
)

__all__ = [
    "KafkaRelease",
    "ReleaseDistribution",
    "ZooKeeperCluster",
    "ensure_release",
    "provide_release_clusters",
    "release",
    "start_release_clusters",
]

RELOAD4J_VERSION = "1.2.25"
SLF4J_RELOAD4J_VERSION = "1.7.36"
FIRST_KRAFT_RELEASE = (3, 3)
ZOOKEEPER_READY_S = 30.0

_LOG4J_CONFIG = """\
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.apache.kafka.clients=WARN
log4j.logger.org.apache.zookeeper=WARN
log4j.logger.kafka.utils.Log4jControllerRegistration$=WARN
"""


@dataclass(frozen=True)
class KafkaRelease:
    """One Apache Kafka release: its version, whether it keeps metadata in ZooKeeper, its artifacts."""

    version: str
    zookeeper: bool
    artifacts: tuple[tuple[str, str, str], ...]

    @property
    def pinned(self) -> bool:
        return self.version == KAFKA_VERSION


def _parts(version: str) -> tuple[int, int, int]:
    found = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", version)
    if found is None:
        raise ValueError(f"Kafka version {version!r}: expected MAJOR.MINOR.PATCH, e.g. 3.9.1")
    major, minor, patch = (int(p) for p in found.groups())
    return major, minor, patch


def release(version: str) -> KafkaRelease:
    """The release ``version``: the pinned one, or a 2.x/3.x release (``ValueError`` for others)."""
    if version == KAFKA_VERSION:
        return KafkaRelease(version, zookeeper=False, artifacts=())
    major, minor, _ = _parts(version)
    if major not in (2, 3):
        raise ValueError(
            f"Kafka {version}: this launcher runs the pinned {KAFKA_VERSION} or a 2.x/3.x release"
        )
    return KafkaRelease(
        version,
        zookeeper=(major, minor) < FIRST_KRAFT_RELEASE,
        artifacts=(
            ("org.apache.kafka", f"kafka_{SCALA_VERSION}", version),
            ("ch.qos.reload4j", "reload4j", RELOAD4J_VERSION),
            ("org.slf4j", "slf4j-reload4j", SLF4J_RELOAD4J_VERSION),
        ),
    )


@dataclass(frozen=True)
class ReleaseDistribution(KafkaDistribution):
    """The jars of a 2.x/3.x release; its Java commands log through reload4j (``log4j.properties``)."""

    @property
    def log4j_config(self) -> Path:
        return self.home / "log4j.properties"

    def java_command(
        self, main_class: str, *args: str, heap: str = "512m", jvm_opts: tuple[str, ...] = ()
    ) -> list[str]:
        return super().java_command(
            main_class,
            *args,
            heap=heap,
            jvm_opts=(f"-Dlog4j.configuration=file:{self.log4j_config}", *jvm_opts),
        )


def _pom(found: KafkaRelease) -> str:
    deps = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>"
        for g, a, v in found.artifacts
    )
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>pyconnect</groupId>
  <artifactId>kafka-release</artifactId>
  <version>{found.version}</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
"""


def ensure_release(version: str, *, quiet: bool = True) -> KafkaDistribution:
    """The jars of release ``version``, fetched with ``mvn`` first unless cached (the pinned release
    comes from :func:`~pyconnect.testing.distribution.ensure_distribution`)."""
    found = release(version)
    if found.pinned:
        return ensure_distribution(quiet=quiet)
    home = cache_root() / f"kafka-{version}"
    ensure_artifacts(
        home,
        _pom(found),
        artifacts_fingerprint(found.artifacts),
        what=f"Kafka {version}",
        error=DistributionError,
        extra_files={"log4j.properties": _LOG4J_CONFIG},
        quiet=quiet,
    )
    return ReleaseDistribution(home)


@dataclass
class ZooKeeperBrokerNode(BrokerNode):
    """A broker of a ZooKeeper cluster (``controller_port`` is unused: the controller is a broker)."""

    def properties(self) -> dict[str, object]:
        assert isinstance(self.cluster, ZooKeeperCluster)
        rf = min(3, len(self.cluster.nodes))
        props: dict[str, object] = {
            "broker.id": self.node_id,
            "zookeeper.connect": f"127.0.0.1:{self.cluster.zookeeper_port}",
            "zookeeper.connection.timeout.ms": 18000,
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": self.dir / "data",
            "num.io.threads": 4,
            "num.network.threads": 2,
            "offsets.topic.replication.factor": rf,
            "offsets.topic.num.partitions": 10,
            "transaction.state.log.replication.factor": rf,
            "transaction.state.log.min.isr": 1,
            "transaction.state.log.num.partitions": 10,
            "group.initial.rebalance.delay.ms": 0,
        }
        props.update(self.cluster.overrides)
        return props

    def format(self, cluster_id: str) -> None:
        """Write the broker's config; a ZooKeeper broker formats its log directory itself."""
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(render_properties(self.properties()))


@dataclass
class ZooKeeperCluster(KafkaCluster):
    """Brokers of a pre-KRaft release and the one ZooKeeper server holding their metadata."""

    zookeeper_port: int = 0
    zookeeper: JavaProcess | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.security or self.routes:
            raise ValueError(f"cluster {self.alias}: a ZooKeeper cluster here is plaintext, without routes")
        super().__post_init__()
        self.nodes = [
            ZooKeeperBrokerNode(self, n.node_id, n.port, n.controller_port) if type(n) is BrokerNode else n
            for n in self.nodes
        ]
        if not self.zookeeper_port:
            self.zookeeper_port = free_ports(1)[0]

    @property
    def zookeeper_dir(self) -> Path:
        return self.dir / "zookeeper"

    @property
    def zookeeper_tag(self) -> str:
        return f"zookeeper:{self.dir}"

    def format(self) -> None:
        self.zookeeper_dir.mkdir(parents=True, exist_ok=True)
        (self.zookeeper_dir / "zookeeper.properties").write_text(
            render_properties(
                {
                    "dataDir": self.zookeeper_dir / "data",
                    "clientPort": self.zookeeper_port,
                    "clientPortAddress": "127.0.0.1",
                    "maxClientCnxns": 0,
                    "admin.enableServer": "false",
                    "4lw.commands.whitelist": "ruok,srvr",
                }
            )
        )
        for n in self.nodes:
            n.format("")

    def start(self) -> None:
        """Start the ZooKeeper server, wait until it answers ``ruok``, then every broker."""
        self.start_zookeeper()
        super().start()

    def start_zookeeper(self, timeout: float = ZOOKEEPER_READY_S) -> None:
        if self.zookeeper and self.zookeeper.running:
            return
        command = self.dist.java_command(
            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            str(self.zookeeper_dir / "zookeeper.properties"),
            heap="256m",
        )
        self.zookeeper = JavaProcess(
            command,
            self.zookeeper_dir / "zookeeper.log",
            self.zookeeper_tag,
            die_with_parent=self.die_with_parent,
        )
        self.zookeeper.start()
        deadline = time.monotonic() + timeout
        while not _zookeeper_ok(self.zookeeper_port):
            if not self.zookeeper.running:
                raise RuntimeError(
                    f"the ZooKeeper server of cluster {self.alias} exited:\n{self.zookeeper.log_tail()}"
                )
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"the ZooKeeper server of cluster {self.alias} did not answer within {timeout:.0f}s"
                )
            time.sleep(0.2)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the brokers (they need ZooKeeper for a controlled shutdown), then ZooKeeper."""
        try:
            super().stop(timeout)
        finally:
            if self.zookeeper:
                self.zookeeper.stop(10.0)

    def state(self) -> dict[str, object]:
        recorded = super().state()
        if self.zookeeper and self.zookeeper.pid:
            recorded["zookeeper"] = {"pid": self.zookeeper.pid, "tag": self.zookeeper_tag}
        return recorded


def _zookeeper_ok(port: int) -> bool:
    """ZooKeeper's ``ruok`` four-letter command answers ``imok``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"ruok")
            return sock.recv(4) == b"imok"
    except OSError:
        return False


def start_release_clusters(
    version: str,
    aliases: Iterable[str],
    base_dir: Path,
    *,
    brokers: int = 1,
    heap: str = DEFAULT_HEAP,
    overrides: dict[str, object] | None = None,
    die_with_parent: bool = False,
) -> dict[str, KafkaCluster]:
    """Format and start one fresh plaintext cluster of release ``version`` per alias under
    ``base_dir/<alias>``; return once every node answers metadata with every broker. On failure every
    process started here is stopped before the error propagates."""
    found = release(version)
    dist = ensure_release(version)
    if not found.zookeeper:
        return start_clusters(
            aliases,
            base_dir,
            brokers=brokers,
            heap=heap,
            overrides=overrides,
            dist=dist,
            die_with_parent=die_with_parent,
        )
    aliases = list(aliases)
    base_dir = base_dir.resolve()
    per_cluster = 2 * brokers + 1
    ports = free_ports(per_cluster * len(aliases))
    clusters: dict[str, KafkaCluster] = {}
    try:
        for index, alias in enumerate(aliases):
            cdir = base_dir / alias
            if cdir.exists() and any(cdir.iterdir()):
                raise RuntimeError(f"{cdir} is not empty: give a fresh --dir (or run 'down' and remove it)")
            own = ports[per_cluster * index : per_cluster * (index + 1)]
            clusters[alias] = ZooKeeperCluster(
                alias,
                cdir,
                dist,
                brokers=brokers,
                heap=heap,
                overrides=dict(overrides or {}),
                die_with_parent=die_with_parent,
                ports=own[1:],
                zookeeper_port=own[0],
            )
        for c in clusters.values():
            c.format()
            c.start()
        for c in clusters.values():
            c.wait_ready()
    except BaseException:
        stop_clusters(clusters.values(), timeout=10)
        raise
    return clusters


@contextmanager
def provide_release_clusters(work_dir: Path) -> Iterator[Callable[[str], KafkaCluster]]:
    """A factory ``get(version)`` of local one-node plaintext clusters of that Apache Kafka release,
    each started on its first request (alias ``K<version without dots>``) and shared afterwards; all
    stop when the context ends. Call ``get`` from the thread that entered the context (a pytest
    fixture, not a coroutine): the brokers die with that thread."""
    started: dict[str, KafkaCluster] = {}

    def get(version: str) -> KafkaCluster:
        if version not in started:
            alias = "K" + version.replace(".", "")
            try:
                started[version] = start_release_clusters(version, [alias], work_dir, die_with_parent=True)[
                    alias
                ]
            except Exception as exc:
                raise RuntimeError(
                    f"could not start a local Kafka {version} cluster (it needs Java 17 and mvn, or the "
                    f"jars cached by 'python -m pyconnect.testing.kafka fetch --versions {version}'): {exc}"
                ) from exc
        return started[version]

    try:
        yield get
    finally:
        stop_clusters(started.values())
