"""Where the test clusters come from: the local KRaft launcher, external servers, or testcontainers.

Chosen by environment variables:

- ``PYCONNECT_TEST_BOOTSTRAP_A`` / ``PYCONNECT_TEST_BOOTSTRAP_B``: use these external clusters (setting
  only one of them is an error that names the other, not a silent fall-back to local clusters).
  Tests of three-cluster topologies also ask for ``C`` (``PYCONNECT_TEST_BOOTSTRAP_C``).
- ``PYCONNECT_TEST_BACKEND``: ``local`` (the default; brokers from the fetched jars on 127.0.0.1),
  ``external`` (requires the two variables above) or ``testcontainers`` (brokers in containers of
  the locally built Kafka image, through podman's Docker API and the ``docker`` extra; see
  :func:`_testcontainers`).

Secured clusters (:func:`provide_secured_clusters`) always come from the local launcher, whatever the
backend: their users, passwords and CA are made when they start.

A backend that cannot provide clusters raises ``BackendUnavailable`` with a message that says what
is missing; tests that need Kafka then fail, they never skip.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pyconnect.errors import ConnectError
from pyconnect.testing.kafka import KafkaCluster, start_clusters, stop_clusters

ALIASES = ("A", "B")


class BackendUnavailable(ConnectError, RuntimeError):
    """The chosen backend cannot provide the test clusters."""


@dataclass(frozen=True)
class ClusterHandle:
    """A cluster the tests may use; ``local`` is set only when this process started it (fault tests)."""

    alias: str
    bootstrap_servers: str
    local: KafkaCluster | None = None

    def require_local(self) -> KafkaCluster:
        if self.local is None:
            raise BackendUnavailable(
                f"cluster {self.alias} is external: this test stops and restarts brokers and needs the local backend"
            )
        return self.local


def chosen_backend() -> str:
    backend = os.environ.get("PYCONNECT_TEST_BACKEND", "").strip().lower()
    if backend:
        return backend
    if any(os.environ.get(f"PYCONNECT_TEST_BOOTSTRAP_{a}", "").strip() for a in ALIASES):
        return "external"
    return "local"


@contextmanager
def provide_clusters(
    work_dir: Path, aliases: tuple[str, ...] = ALIASES
) -> Iterator[dict[str, ClusterHandle]]:
    """Provide one cluster per alias (A and B unless told) for the duration of the context, then
    release what was started."""
    backend = chosen_backend()
    if backend == "local":
        with _local(work_dir, aliases) as handles:
            yield handles
    elif backend == "external":
        yield _external(aliases)
    elif backend == "testcontainers":
        with _testcontainers(aliases) as handles:
            yield handles
    else:
        raise BackendUnavailable(
            f"PYCONNECT_TEST_BACKEND={backend!r}: expected local, external or testcontainers"
        )


@contextmanager
def _local(work_dir: Path, aliases: tuple[str, ...]) -> Iterator[dict[str, ClusterHandle]]:
    try:
        clusters = start_clusters(aliases, work_dir, die_with_parent=True)
    except Exception as exc:
        raise BackendUnavailable(f"could not start local Kafka clusters: {exc}") from exc
    try:
        yield {a: ClusterHandle(a, c.bootstrap_servers, c) for a, c in clusters.items()}
    finally:
        stop_clusters(clusters.values())


@contextmanager
def provide_secured_clusters(work_dir: Path) -> Iterator[Callable[[str], KafkaCluster]]:
    """A factory ``get(protocol)`` of local one-node clusters secured with ``protocol`` (``sasl_plaintext``,
    ``sasl_ssl``, ``ssl`` or ``mtls``; see :mod:`pyconnect.testing.kafka_security`): each protocol's
    cluster starts on its first request and is shared afterwards; all stop when the context ends.

    Call ``get`` from the thread that entered the context, outside a running event loop (a pytest
    fixture, not a coroutine): the brokers die with that thread, and starting one waits for it.
    """
    started: dict[str, KafkaCluster] = {}

    def get(protocol: str) -> KafkaCluster:
        if protocol not in started:
            alias = protocol.upper()
            try:
                started[protocol] = start_clusters(
                    [alias], work_dir, security=protocol, die_with_parent=True
                )[alias]
            except Exception as exc:
                raise BackendUnavailable(f"could not start a local {protocol} Kafka cluster: {exc}") from exc
        return started[protocol]

    try:
        yield get
    finally:
        stop_clusters(started.values())


def _external(aliases: tuple[str, ...]) -> dict[str, ClusterHandle]:
    handles = {}
    for alias in aliases:
        servers = os.environ.get(f"PYCONNECT_TEST_BOOTSTRAP_{alias}", "").strip()
        if not servers:
            raise BackendUnavailable(f"the external backend needs PYCONNECT_TEST_BOOTSTRAP_{alias}")
        handles[alias] = ClusterHandle(alias, servers)
    return handles


@contextmanager
def _testcontainers(aliases: tuple[str, ...]) -> Iterator[dict[str, ClusterHandle]]:
    """One single-node KRaft container per alias, through testcontainers, from the Apache Kafka image
    built locally from the jars ``make kafka`` fetched (pyconnect.testing.images; nothing is pulled).

    The engine is podman's Docker API (pyconnect.testing.podman): ``DOCKER_HOST`` when set, else the
    socket ``make test-containers`` leaves running, else a service this process starts and stops.
    testcontainers' reaper (Ryuk) is disabled, as its documentation says for engines that cannot run
    it (``TESTCONTAINERS_RYUK_DISABLED=true``): its image cannot be pulled here. Instead every container
    carries this process's PID as a label and is stopped by ID when the context ends, and containers
    of test runs that died are removed (by ID) before new ones start. Host networking: each broker
    listens on, and advertises, a free 127.0.0.1 port.
    """
    os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
    try:
        import docker  # noqa: F401  (the testcontainers engine client)
        from testcontainers.core.container import DockerContainer
        from testcontainers.core.wait_strategies import LogMessageWaitStrategy
    except ImportError as exc:
        raise BackendUnavailable(
            "the testcontainers backend needs the 'docker' extra: pip install -e '.[docker]'"
        ) from exc
    from pyconnect.testing.images import ImageBuildError, ensure_image
    from pyconnect.testing.kafka import free_ports
    from pyconnect.testing.podman import DockerApiService, EngineUnavailable, owner_labels, remove_orphans

    service = DockerApiService()
    try:
        if not os.environ.get("DOCKER_HOST"):
            os.environ["DOCKER_HOST"] = service.start()
        remove_orphans()
        image = ensure_image("kafka")
    except (EngineUnavailable, ImageBuildError, RuntimeError) as exc:
        service.stop()
        raise BackendUnavailable(f"the testcontainers backend cannot run: {exc}") from exc
    containers = []
    try:
        handles = {}
        for alias in aliases:
            port, controller = free_ports(2)
            container = (
                DockerContainer(image, command="server", env=_container_env(port, controller))
                .with_kwargs(network_mode="host", labels=owner_labels())
                .waiting_for(LogMessageWaitStrategy("Kafka Server started").with_startup_timeout(120))
            )
            containers.append(container)
            container.start()
            handles[alias] = ClusterHandle(alias, f"127.0.0.1:{port}")
        yield handles
    finally:
        for container in containers:
            container.stop()
        service.stop()


def _container_env(port: int, controller_port: int) -> dict[str, str]:
    from pyconnect.testing.kafka import _kraft_cluster_id

    return {
        "CLUSTER_ID": _kraft_cluster_id(),
        "KAFKA_NODE_ID": "1",
        "KAFKA_PROCESS_ROLES": "broker,controller",
        "KAFKA_LISTENERS": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "KAFKA_ADVERTISED_LISTENERS": f"PLAINTEXT://127.0.0.1:{port}",
        "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
        "KAFKA_INTER_BROKER_LISTENER_NAME": "PLAINTEXT",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "KAFKA_CONTROLLER_QUORUM_VOTERS": f"1@127.0.0.1:{controller_port}",
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
        "KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS": "5",
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
        "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR": "1",
        "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR": "1",
        "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
        "KAFKA_HEAP_OPTS": "-Xmx512m -Xms64m",
    }
