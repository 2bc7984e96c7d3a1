"""Local KRaft Kafka clusters on 127.0.0.1, for tests, benchmarks, the demo and people.

Size: over 600 lines because the launcher's cluster model, KRaft formatting, listeners, routes and its
command line share one cluster description.

Shell::

    python -m pyconnect.testing.kafka fetch [--versions 4.3.1,3.9.1,2.8.2]
    python -m pyconnect.testing.kafka up --clusters A,B --dir DIR [--brokers 3] [--security sasl_ssl]
    python -m pyconnect.testing.kafka up --clusters OLD --dir DIR --version 2.8.2
    python -m pyconnect.testing.kafka status --dir DIR
    python -m pyconnect.testing.kafka grant --dir DIR --cluster A --principal User:alice \
        --resource-type topic --name orders --operations read,write,describe
    python -m pyconnect.testing.kafka down --dir DIR

``up`` formats fresh clusters on free ports, waits until each answers metadata with all its brokers,
prints one JSON line ``{"A": "127.0.0.1:port,...", "B": ...}`` and returns with the brokers still
running. ``down`` stops what ``up`` started in DIR (SIGTERM, then SIGKILL after a bound), by PID, and
only processes that still carry this launcher's tag.

``--version`` starts another Apache Kafka release (:mod:`pyconnect.testing.kafka_versions`: 2.x/3.x,
plaintext, before 3.3 with a ZooKeeper server per cluster); ``fetch --versions`` caches releases ahead.

``--security`` is ``plaintext`` (the default: no authentication, no authorizer), ``sasl_plaintext``,
``sasl_ssl``, ``ssl`` or ``mtls`` (see :mod:`pyconnect.testing.kafka_security`: SCRAM and PLAIN
users, a CA and certificates made at start, the StandardAuthorizer with ``admin`` as super user).
A secured ``up`` prints, after the JSON line, one line per user and mechanism naming the client
properties file to use; ``grant`` adds ACLs as the super user. ``--oauthbearer`` (with ``sasl_plaintext``
or ``sasl_ssl``) also enables OAUTHBEARER, validated against a token server per cluster that this launcher
starts and stops with the brokers (``--token-lifetime`` seconds per token, 3600 by default).

Python::

    clusters = start_clusters(["A", "B"], Path(dir), brokers=1)
    clusters["A"].bootstrap_servers
    clusters["A"].node(1).kill(); clusters["A"].node(1).start()   # fault tests
    stop_clusters(clusters.values())

    secured = start_clusters(["S"], Path(dir), security="sasl_ssl")["S"]
    secured.client_properties("alice", "SCRAM-SHA-512")   # Java client keys, bootstrap included
    oauth = start_clusters(["O"], Path(dir), security="sasl_plaintext", oauth=True)["O"]
    oauth.client_properties("alice", "OAUTHBEARER")       # client-credentials login, token endpoint
    await grant(secured, "User:alice", "topic", "orders", ["write", "describe"])

    routed = start_clusters(["R"], Path(dir), routes=("w1", "w2"))["R"]
    routed.route("w1").bootstrap_servers; routed.route("w1").drop()   # see network_routes

Every node runs both KRaft roles (broker and controller) with a static voter set, so a cluster of
three survives the loss of any one node. Each broker gets a bounded heap (512 MiB by default) so
several clusters fit beside the tests. Broker logs go to ``DIR/<alias>/node-<id>/broker.log``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from pyconnect.kafka.probe import wait_for_brokers
from pyconnect.testing.distribution import (
    KAFKA_VERSION,
    DistributionError,
    KafkaDistribution,
    ensure_distribution,
)
from pyconnect.testing.fault_proxy import FaultProxy
from pyconnect.testing.java_process import JavaProcess, pid_alive, pid_has_tag, stop_tagged
from pyconnect.testing.kafka_security import (
    ADMIN_USER,
    PROTOCOLS,
    SECURITY_DIR,
    USERS,
    ClusterSecurity,
    GrantError,
    grant,
)
from pyconnect.testing.network_routes import NetworkRoute, RoutePorts, check_routes, route_listener_properties

__all__ = [
    "PROTOCOLS",
    "BrokerNode",
    "GrantError",
    "KafkaCluster",
    "down",
    "grant",
    "start_clusters",
    "stop_clusters",
]

STATE_FILE = "clusters.json"
DEFAULT_HEAP = "512m"
READY_TIMEOUT_S = 90.0


def free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1 (held open together so none repeats)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def render_properties(props: Mapping[str, object]) -> str:
    return "".join(f"{k}={v}\n" for k, v in props.items())


@dataclass
class BrokerNode:
    """One combined broker+controller process of a cluster."""

    cluster: KafkaCluster
    node_id: int
    port: int
    controller_port: int
    process: JavaProcess | None = field(default=None, repr=False)

    @property
    def dir(self) -> Path:
        return self.cluster.dir / f"node-{self.node_id}"

    @property
    def config_file(self) -> Path:
        return self.dir / "server.properties"

    @property
    def log_file(self) -> Path:
        return self.dir / "broker.log"

    @property
    def tag(self) -> str:
        return f"kafka:{self.dir}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def properties(self) -> dict[str, object]:
        n = len(self.cluster.nodes)
        rf = min(3, n)
        props: dict[str, object] = {
            "process.roles": "broker,controller",
            "node.id": self.node_id,
            "controller.quorum.voters": self.cluster.voters,
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": self.dir / "data",
            "num.io.threads": 4,
            "num.network.threads": 2,
            "offsets.topic.replication.factor": rf,
            "offsets.topic.num.partitions": 10,
            "transaction.state.log.replication.factor": rf,
            "transaction.state.log.min.isr": 1,
            "transaction.state.log.num.partitions": 10,
            "share.coordinator.state.topic.replication.factor": rf,
            "share.coordinator.state.topic.min.isr": 1,
            "group.initial.rebalance.delay.ms": 0,
        }
        if self.cluster.security:
            props.update(self.cluster.security.broker_properties(self.port, self.controller_port))
        if self.cluster.routes:
            props.update(route_listener_properties(props, self.cluster.route_ports(self.node_id)))
        props.update(self.cluster.overrides)
        return props

    def format(self, cluster_id: str) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(render_properties(self.properties()))
        cmd = self.cluster.dist.java_command(
            "kafka.tools.StorageTool",
            "format",
            "-t",
            cluster_id,
            "-c",
            str(self.config_file),
            *(self.cluster.security.format_arguments() if self.cluster.security else ()),
            heap="256m",
            jvm_opts=self.cluster.jvm_options,
        )
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(
                f"formatting {self.cluster.alias} node {self.node_id} failed: {proc.stdout}{proc.stderr}"
            )

    def start(self) -> None:
        """Start (or restart after stop/kill) this node on its existing data directory."""
        if self.process and self.process.running:
            return
        cmd = self.cluster.dist.java_command(
            "kafka.Kafka", str(self.config_file), heap=self.cluster.heap, jvm_opts=self.cluster.jvm_options
        )
        self.process = JavaProcess(cmd, self.log_file, self.tag, die_with_parent=self.cluster.die_with_parent)
        self.process.start()
        self.cluster.save_state()

    def stop(self, timeout: float = 30.0) -> None:
        """Graceful shutdown (SIGTERM), SIGKILL after ``timeout`` seconds."""
        if self.process:
            self.process.stop(timeout)

    def kill(self) -> None:
        """kill -9: the node crashes without a controlled shutdown."""
        if self.process:
            self.process.kill()

    @property
    def running(self) -> bool:
        return bool(self.process and self.process.running)


@dataclass
class KafkaCluster:
    """A KRaft cluster of ``brokers`` combined nodes under ``dir``."""

    alias: str
    dir: Path
    dist: KafkaDistribution
    brokers: int = 1
    heap: str = DEFAULT_HEAP
    overrides: dict[str, object] = field(default_factory=dict)
    die_with_parent: bool = False
    ports: list[int] | None = None
    nodes: list[BrokerNode] = field(default_factory=list)
    security: ClusterSecurity | None = None
    routes: tuple[str, ...] = ()
    token_server: JavaProcess | None = field(default=None, init=False, repr=False)
    _routes: dict[str, NetworkRoute] = field(default_factory=dict, init=False, repr=False)
    _route_ports: dict[tuple[str, int], RoutePorts] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        """``ports``: two per node (client, controller), then two per route and node (the route's
        listener, its proxy); free ports are chosen when not given."""
        self.routes = check_routes(self.routes)
        if self.routes and self.security:
            raise ValueError(
                f"cluster {self.alias}: network routes are plaintext only, not {self.security.protocol}"
            )
        if not self.nodes:
            needed = 2 * self.brokers * (1 + len(self.routes))
            ports = self.ports or free_ports(needed)
            if len(ports) != needed:
                raise ValueError(f"cluster {self.alias} needs {needed} ports, got {len(ports)}")
            self.nodes = [
                BrokerNode(self, node_id=i + 1, port=ports[2 * i], controller_port=ports[2 * i + 1])
                for i in range(self.brokers)
            ]
            route_ports = iter(ports[2 * self.brokers :])
            for route in self.routes:
                for n in self.nodes:
                    self._route_ports[(route, n.node_id)] = RoutePorts(next(route_ports), next(route_ports))
        for route in self.routes:
            self._routes[route] = NetworkRoute(
                route,
                {
                    n.node_id: FaultProxy(
                        "127.0.0.1",
                        self._route_ports[(route, n.node_id)].listener_port,
                        self._route_ports[(route, n.node_id)].proxy_port,
                        name=f"{self.alias}/{route}/node-{n.node_id}",
                    )
                    for n in self.nodes
                },
            )

    def route_ports(self, node_id: int) -> dict[str, RoutePorts]:
        """Each route's listener and proxy ports on node ``node_id``."""
        return {route: self._route_ports[(route, node_id)] for route in self.routes}

    def route(self, name: str) -> NetworkRoute:
        """The route ``name`` given at start (``routes=``): its proxies' bootstrap servers and faults."""
        try:
            return self._routes[name]
        except KeyError:
            raise KeyError(
                f"cluster {self.alias} has no route {name!r} (routes: {list(self.routes)})"
            ) from None

    @property
    def voters(self) -> str:
        return ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in self.nodes)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def client_properties(
        self, user: str | None = ADMIN_USER, mechanism: str | None = None
    ) -> dict[str, str]:
        """Java client keys for ``user``: ``bootstrap.servers`` plus, on a secured cluster, what
        :meth:`ClusterSecurity.client_properties` gives (SCRAM-SHA-256 unless ``mechanism`` says)."""
        props = {"bootstrap.servers": self.bootstrap_servers}
        if self.security:
            props.update(self.security.client_properties(user, mechanism))
        return props

    @property
    def jvm_options(self) -> tuple[str, ...]:
        return self.security.jvm_options() if self.security else ()

    @property
    def token_server_tag(self) -> str:
        return f"token-server:{self.dir}"

    def start_token_server(self, timeout: float = 15.0) -> None:
        """Start the OAUTHBEARER token server (if this cluster has one) and wait until it accepts
        connections; the brokers fetch its JWKS when they start."""
        if not (self.security and self.security.oauth) or (self.token_server and self.token_server.running):
            return
        command = self.security.token_server_command(self.token_server_tag)
        self.token_server = JavaProcess(
            command,
            self.dir / "token-server.log",
            self.token_server_tag,
            die_with_parent=self.die_with_parent,
            tag_in_command=True,
        )
        self.token_server.start()
        deadline = time.monotonic() + timeout
        while True:
            if not self.token_server.running:
                raise RuntimeError(
                    f"the token server of cluster {self.alias} exited:\n{self.token_server.log_tail()}"
                )
            try:
                with socket.create_connection(("127.0.0.1", int(self.security.oauth_port or 0)), timeout=1):
                    return
            except OSError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(
                        f"the token server of cluster {self.alias} did not listen within {timeout:.0f}s"
                    ) from None
                time.sleep(0.1)

    def node(self, node_id: int) -> BrokerNode:
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        raise KeyError(f"{self.alias} has no node {node_id}")

    def format(self) -> None:
        cluster_id = _kraft_cluster_id()
        for n in self.nodes:
            n.format(cluster_id)

    def start(self) -> None:
        """Start the routes' proxies (they are advertised, so they come first), then every node."""
        for route in self._routes.values():
            route.start()
        self.start_token_server()
        for n in self.nodes:
            n.start()

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Block until the metadata of *every* node lists every node (one node's view can be ahead of
        another's just after a restart); fail fast with the log tail if a node exits."""
        deadline = time.monotonic() + timeout
        while True:
            for n in self.nodes:
                if n.process and not n.process.running:
                    raise RuntimeError(
                        f"Kafka node {n.node_id} of cluster {self.alias} exited with {n.process.exit_code()}:\n"
                        f"{n.process.log_tail()}"
                    )
            remaining = deadline - time.monotonic()
            try:
                if self.security and self.security.tls:
                    handshake_s = min(2.0, max(remaining, 0.5))
                    if not all(self.security.accepts_tls(n.port, handshake_s) for n in self.nodes):
                        time.sleep(0.3)
                        raise TimeoutError("no TLS handshake yet")
                asyncio.run(self._every_node_sees_every_broker(min(5.0, max(remaining, 0.5))))
                return
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(
                        f"cluster {self.alias} ({self.bootstrap_servers}) did not answer metadata within {timeout:.0f}s; "
                        f"log tail:\n{self.nodes[0].process.log_tail() if self.nodes[0].process else ''}"
                    ) from None

    async def _every_node_sees_every_broker(self, timeout: float) -> None:
        config = self.client_properties() if self.security else None
        for n in self.nodes:
            await wait_for_brokers(f"127.0.0.1:{n.port}", len(self.nodes), timeout, config)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every node at once: stopped one by one, the last nodes lose their KRaft quorum, cannot
        finish a controlled shutdown and are SIGKILLed after ``timeout``."""
        try:
            _in_parallel([partial(n.stop, timeout) for n in self.nodes])
        finally:
            for route in self._routes.values():
                route.close()
            if self.token_server:
                self.token_server.stop(5.0)

    @property
    def state_file(self) -> Path:
        """The launcher state shared by the clusters of one ``--dir`` (their parent folder)."""
        return self.dir.parent / STATE_FILE

    def save_state(self) -> None:
        """Record this cluster's nodes and PIDs in the shared state file (merging, atomic replace),
        so that ``down`` also stops nodes restarted after ``up``."""
        path = self.state_file
        state = json.loads(path.read_text()) if path.exists() else {}
        state[self.alias] = self.state()
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2) + "\n")
        tmp.replace(path)

    def state(self) -> dict[str, object]:
        security = {"security": self.security.protocol} if self.security else {}
        if self.token_server and self.token_server.pid:
            security["token_server"] = {"pid": self.token_server.pid, "tag": self.token_server_tag}  # type: ignore[assignment]
        return {
            "bootstrap_servers": self.bootstrap_servers,
            **security,
            "nodes": [
                {
                    "node_id": n.node_id,
                    "port": n.port,
                    "controller_port": n.controller_port,
                    "pid": n.pid,
                    "tag": n.tag,
                }
                for n in self.nodes
            ],
        }


def _kraft_cluster_id() -> str:
    """A random KRaft cluster id: 16 random bytes, URL-safe base64 without padding (22 characters).

    Like Kafka's ``Uuid.randomUuid()`` it never starts with ``-``: ``kafka-storage format -t -...``
    would read such an id as an option and fail (one cluster in 64 otherwise).
    """
    import base64

    for _ in range(1000):
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id
    raise RuntimeError("could not draw a KRaft cluster id that does not start with '-'")


def start_clusters(
    aliases: Iterable[str],
    base_dir: Path,
    *,
    brokers: int = 1,
    heap: str = DEFAULT_HEAP,
    overrides: Mapping[str, object] | None = None,
    dist: KafkaDistribution | None = None,
    die_with_parent: bool = False,
    security: str | Mapping[str, str] = "plaintext",
    users: Iterable[str] = USERS,
    routes: Iterable[str] = (),
    oauth: bool = False,
    token_lifetime_s: int = 3600,
) -> dict[str, KafkaCluster]:
    """Format and start one fresh cluster per alias under ``base_dir/<alias>``; return once all answer.

    ``security`` (one of :data:`PROTOCOLS`, or one per alias as a mapping) secures every cluster's client
    listener; each cluster
    gets its own users (``users``, ``admin`` being the super user), passwords and CA under
    ``base_dir/<alias>/security``.

    ``routes`` (names such as ``w1``) give every cluster one network route per name, each broker an
    extra listener behind a fault proxy of this process (:mod:`pyconnect.testing.network_routes`;
    plaintext clusters only): ``cluster.route("w1")``.

    ``oauth`` (SASL protocols only) adds OAUTHBEARER: each cluster gets a token server issuing tokens
    valid ``token_lifetime_s`` seconds, started before and stopped after its brokers.

    With ``die_with_parent`` the brokers are killed when this Python process exits, however it ends
    (tests use that); the CLI leaves it off. Each cluster records itself in ``base_dir/clusters.json``
    so that ``down`` (another process) can stop them later.
    On failure every process started here is stopped before the error propagates.
    """
    aliases = list(aliases)
    protocols = {a: security for a in aliases} if isinstance(security, str) else dict(security)
    for protocol in protocols.values():
        if protocol not in PROTOCOLS:
            raise ValueError(f"security {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    if set(protocols) != set(aliases):
        raise ValueError(f"security names clusters {sorted(protocols)}, not the aliases {aliases}")
    routes = check_routes(routes)
    for protocol in protocols.values():
        if routes and protocol != "plaintext":
            raise ValueError(f"network routes are plaintext only: security {protocol!r} cannot take routes")
        if oauth and not protocol.startswith("sasl_"):
            raise ValueError(f"OAUTHBEARER needs security sasl_plaintext or sasl_ssl, not {protocol!r}")
    dist = dist or ensure_distribution()
    base_dir = base_dir.resolve()
    clusters: dict[str, KafkaCluster] = {}
    per_cluster = 2 * brokers * (1 + len(routes))
    ports = free_ports(per_cluster * len(aliases) + (len(aliases) if oauth else 0))
    oauth_ports = ports[per_cluster * len(aliases) :]
    try:
        for index, alias in enumerate(aliases):
            cdir = base_dir / alias
            if cdir.exists() and any(cdir.iterdir()):
                raise RuntimeError(f"{cdir} is not empty: give a fresh --dir (or run 'down' and remove it)")
            clusters[alias] = KafkaCluster(
                alias,
                cdir,
                dist,
                brokers=brokers,
                heap=heap,
                overrides=dict(overrides or {}),
                die_with_parent=die_with_parent,
                ports=ports[per_cluster * index : per_cluster * (index + 1)],
                security=None
                if protocols[alias] == "plaintext"
                else ClusterSecurity.create(
                    protocols[alias],
                    cdir / SECURITY_DIR,
                    users,
                    oauth_port=oauth_ports[index] if oauth else None,
                    token_lifetime_s=token_lifetime_s,
                ),
                routes=routes,
            )
        for c in clusters.values():
            if c.security:
                c.security.write_client_files(c.bootstrap_servers)
            c.format()
        for c in clusters.values():
            c.start()
        for c in clusters.values():
            c.wait_ready()
    except BaseException:
        stop_clusters(clusters.values(), timeout=10)
        raise
    return clusters


def stop_clusters(clusters: Iterable[KafkaCluster], timeout: float = 30.0) -> None:
    for c in clusters:
        c.stop(timeout)


def read_state(base_dir: Path) -> dict[str, dict]:
    path = base_dir / STATE_FILE
    if not path.exists():
        raise FileNotFoundError(f"no {STATE_FILE} in {base_dir}: nothing was started there with 'up'")
    return json.loads(path.read_text())


def down(base_dir: Path, timeout: float = 30.0) -> list[int]:
    """Stop every node recorded in ``base_dir/clusters.json`` (all at once), then the clusters' token
    servers and ZooKeeper servers; return the broker PIDs signalled."""
    stopped: list[tuple[int, str]] = []
    servers: list[tuple[int, str]] = []
    for cluster in read_state(base_dir).values():
        for node in cluster["nodes"]:
            if _still_ours(node):
                stopped.append((node["pid"], node["tag"]))
        for side in ("token_server", "zookeeper"):
            server = cluster.get(side)
            if server and _still_ours(server):
                servers.append((server["pid"], server["tag"]))
    _in_parallel([partial(stop_tagged, pid, tag, timeout) for pid, tag in stopped])
    _in_parallel([partial(stop_tagged, pid, tag, 5.0) for pid, tag in servers])
    return [pid for pid, _ in stopped]


@dataclass(frozen=True)
class _RecordedCluster:
    """A cluster another process started, as ``grant`` sees it from the state file."""

    bootstrap_servers: str
    security: ClusterSecurity

    def client_properties(
        self, user: str | None = ADMIN_USER, mechanism: str | None = None
    ) -> dict[str, str]:
        return {
            "bootstrap.servers": self.bootstrap_servers,
            **self.security.client_properties(user, mechanism),
        }


def _recorded_cluster(base_dir: Path, alias: str) -> _RecordedCluster:
    state = read_state(base_dir)
    if alias not in state:
        raise ValueError(f"no cluster {alias!r} in {base_dir / STATE_FILE} (clusters: {', '.join(state)})")
    if not state[alias].get("security"):
        raise ValueError(f"cluster {alias} runs without security (plaintext): there are no ACLs to grant")
    return _RecordedCluster(
        state[alias]["bootstrap_servers"], ClusterSecurity.load(base_dir / alias / SECURITY_DIR)
    )


def _still_ours(node: Mapping[str, object]) -> bool:
    """The recorded node process still runs: its PID is alive and carries its tag (not a recycled PID)."""
    pid, tag = node.get("pid"), node.get("tag")
    return isinstance(pid, int) and isinstance(tag, str) and pid_alive(pid) and pid_has_tag(pid, tag)


def _in_parallel(calls: list[Callable[[], object]]) -> None:
    """Run blocking calls in one thread each and wait for all; re-raise the first failure."""
    if not calls:
        return
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        for future in [pool.submit(call) for call in calls]:
            future.result()


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pyconnect.testing.kafka", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    fetch_p = sub.add_parser(
        "fetch", help="fetch Kafka jars into the cache (idempotent, offline once cached)"
    )
    fetch_p.add_argument(
        "--versions",
        default=KAFKA_VERSION,
        help=f"comma-separated Apache Kafka releases to fetch (default {KAFKA_VERSION}; see kafka_versions)",
    )
    up_p = sub.add_parser("up", help="start fresh clusters and print {alias: bootstrap} as one JSON line")
    up_p.add_argument("--clusters", default="A,B", help="comma-separated aliases (default A,B)")
    up_p.add_argument("--dir", required=True, type=Path, help="folder for data, logs and the state file")
    up_p.add_argument("--brokers", type=int, default=1, help="nodes per cluster (default 1)")
    up_p.add_argument("--heap", default=DEFAULT_HEAP, help=f"max heap per broker (default {DEFAULT_HEAP})")
    up_p.add_argument(
        "--version",
        default=KAFKA_VERSION,
        help=f"Apache Kafka release (default {KAFKA_VERSION}; 2.x/3.x plaintext only, before 3.3 with ZooKeeper)",
    )
    up_p.add_argument(
        "--security",
        default="plaintext",
        choices=PROTOCOLS,
        help="client listener security (default plaintext); the others add users, TLS and ACLs",
    )
    up_p.add_argument(
        "--oauthbearer",
        action="store_true",
        help="also enable OAUTHBEARER (sasl_plaintext/sasl_ssl): a token server per cluster, JWTs checked by the brokers",
    )
    up_p.add_argument(
        "--token-lifetime",
        type=int,
        default=3600,
        help="seconds an OAUTHBEARER token is valid (default 3600)",
    )
    grant_p = sub.add_parser("grant", help="allow a principal operations on a resource of a secured cluster")
    grant_p.add_argument("--dir", required=True, type=Path)
    grant_p.add_argument("--cluster", required=True, help="the cluster alias")
    grant_p.add_argument("--principal", required=True, help="e.g. User:alice")
    grant_p.add_argument("--resource-type", required=True, help="topic, group, cluster, transactional_id")
    grant_p.add_argument("--name", required=True, help="resource name (kafka-cluster for the cluster)")
    grant_p.add_argument("--operations", required=True, help="comma-separated, e.g. read,write,describe")
    grant_p.add_argument("--pattern", default="literal", help="literal (default) or prefixed")
    down_p = sub.add_parser("down", help="stop the clusters started in --dir")
    down_p.add_argument("--dir", required=True, type=Path)
    down_p.add_argument("--timeout", type=float, default=30.0, help="seconds between SIGTERM and SIGKILL")
    status_p = sub.add_parser("status", help="print each cluster's bootstrap servers and which nodes run")
    status_p.add_argument("--dir", required=True, type=Path)
    args = parser.parse_args(argv)
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)

    try:
        if args.command == "fetch":
            from pyconnect.testing.kafka_versions import ensure_release

            for version in [v.strip() for v in args.versions.split(",") if v.strip()]:
                print(ensure_release(version, quiet=False).home)
        elif args.command == "up":
            aliases = [a.strip() for a in args.clusters.split(",") if a.strip()]
            if not aliases or args.brokers < 1:
                parser.error("--clusters needs at least one alias and --brokers at least 1")
            if args.token_lifetime < 1:
                parser.error("--token-lifetime must be at least 1 second")
            if args.version != KAFKA_VERSION and (args.security != "plaintext" or args.oauthbearer):
                parser.error(f"Kafka {args.version} runs plaintext only (no --security, no --oauthbearer)")
            if args.version != KAFKA_VERSION:
                from pyconnect.testing.kafka_versions import start_release_clusters

                clusters = start_release_clusters(
                    args.version, aliases, args.dir, brokers=args.brokers, heap=args.heap
                )
            else:
                clusters = start_clusters(
                    aliases,
                    args.dir,
                    brokers=args.brokers,
                    heap=args.heap,
                    security=args.security,
                    oauth=args.oauthbearer,
                    token_lifetime_s=args.token_lifetime,
                )
            print(json.dumps({a: c.bootstrap_servers for a, c in clusters.items()}), flush=True)
            for alias, started in clusters.items():
                if started.security:
                    print("\n".join(started.security.describe(alias, started.bootstrap_servers)), flush=True)
        elif args.command == "down":
            stopped = down(args.dir.resolve(), args.timeout)
            print(f"stopped {len(stopped)} broker process(es)")
        elif args.command == "status":
            for alias, c in read_state(args.dir.resolve()).items():
                alive = [n["node_id"] for n in c["nodes"] if _still_ours(n)]
                security = f" ({c['security']})" if c.get("security") else ""
                print(f"{alias}: {c['bootstrap_servers']} running nodes {alive}{security}")
        elif args.command == "grant":
            cluster = _recorded_cluster(args.dir.resolve(), args.cluster)
            operations = [op.strip() for op in args.operations.split(",") if op.strip()]
            asyncio.run(
                grant(cluster, args.principal, args.resource_type, args.name, operations, args.pattern)
            )
            print(f"granted {args.principal} {','.join(operations)} on {args.resource_type} {args.name}")
    except (DistributionError, RuntimeError, TimeoutError, FileNotFoundError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main())
