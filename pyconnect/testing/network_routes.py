"""Per-client network routes to a local Kafka cluster, each through fault proxies of its own.

A Kafka client connects where the metadata response tells it, so a proxy in front of the bootstrap
address alone would be bypassed after the first request. A route is therefore a broker listener of its
own: every broker gets one extra PLAINTEXT listener per route (``ROUTE_<NAME>`` on a free port) whose
advertised address is the port of a :class:`~pyconnect.testing.fault_proxy.FaultProxy` forwarding to it.
A client bootstrapped on a route's proxies only ever talks through them; clients on the normal listener
or on other routes never cross them. Faults on a route cut or slow exactly the clients that use it::

    cluster = start_clusters(["A"], base, routes=("w1", "w2"))["A"]
    w1 = cluster.route("w1")
    w1.bootstrap_servers      # "127.0.0.1:<proxy of node 1>,..."
    w1.drop(); w1.heal()      # every broker of w1 at once
    w1.broker(2).blackhole()  # one broker only

The proxies' ports are chosen before the brokers are formatted (they are advertised) and the proxies
start before the brokers, so a broker restarted after a kill keeps its routes. The cluster stops its
proxies when it stops. Routes are plaintext only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pyconnect.testing.fault_proxy import FaultProxy, ProxyStats

__all__ = ["NetworkRoute", "RoutePorts", "check_routes", "listener_name", "route_listener_properties"]

ROUTE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]{0,39}")


def listener_name(route: str) -> str:
    """The broker listener of ``route``: ``ROUTE_W1`` for ``w1``."""
    return f"ROUTE_{route.upper()}"


def check_routes(routes: Iterable[str]) -> tuple[str, ...]:
    """The route names as given, or ValueError naming the first that cannot be a listener name (letters,
    digits and ``_``, at most 40) or that repeats another ignoring case."""
    names = tuple(routes)
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not ROUTE_NAME.fullmatch(name):
            raise ValueError(
                f"route {name!r}: expected letters, digits and '_' (at most 40, not starting with '_')"
            )
        if name.upper() in seen:
            raise ValueError(f"route {name!r} is given twice (route names ignore case)")
        seen.add(name.upper())
    return names


@dataclass(frozen=True)
class RoutePorts:
    """Where one route reaches one broker: the broker's own listener and the proxy in front of it."""

    listener_port: int
    proxy_port: int


def route_listener_properties(
    properties: Mapping[str, object], routes: Mapping[str, RoutePorts]
) -> dict[str, object]:
    """``listeners``, ``advertised.listeners`` and ``listener.security.protocol.map`` of a broker's
    ``properties`` extended with one PLAINTEXT listener per route, advertised at the route's proxy."""
    listeners = [str(properties["listeners"])]
    advertised = [str(properties["advertised.listeners"])]
    protocols = [str(properties["listener.security.protocol.map"])]
    for route, ports in routes.items():
        name = listener_name(route)
        listeners.append(f"{name}://127.0.0.1:{ports.listener_port}")
        advertised.append(f"{name}://127.0.0.1:{ports.proxy_port}")
        protocols.append(f"{name}:PLAINTEXT")
    return {
        "listeners": ",".join(listeners),
        "advertised.listeners": ",".join(advertised),
        "listener.security.protocol.map": ",".join(protocols),
    }


class NetworkRoute:
    """One route of a cluster: a proxy per broker. Fault methods apply to every broker's proxy;
    :meth:`broker` gives one proxy to fault one broker. Thread-safe as :class:`FaultProxy` is."""

    def __init__(self, name: str, proxies: Mapping[int, FaultProxy]) -> None:
        self.name = name
        self.proxies = dict(proxies)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{p.listen_port}" for p in self.proxies.values())

    def broker(self, node_id: int) -> FaultProxy:
        try:
            return self.proxies[node_id]
        except KeyError:
            raise KeyError(
                f"route {self.name} has no broker {node_id} (brokers: {sorted(self.proxies)})"
            ) from None

    def heal(self) -> None:
        """Plain pass-through on every broker of the route (see :meth:`FaultProxy.heal`)."""
        for p in self.proxies.values():
            p.heal()

    def drop(self) -> None:
        """Reset the route's connections to every broker and refuse new ones until healed."""
        for p in self.proxies.values():
            p.drop()

    def blackhole(self) -> None:
        """Hold every byte to and from every broker of the route (half-open) until healed."""
        for p in self.proxies.values():
            p.blackhole()

    def delay(self, seconds: float) -> None:
        """A one-way delay of ``seconds`` each way to every broker (the round trip gains twice that)."""
        for p in self.proxies.values():
            p.delay(seconds)

    def throttle(self, bytes_per_second: float | None) -> None:
        """Hold each broker's link, each direction, to ``bytes_per_second`` (so the route as a whole
        carries up to that times the number of brokers); None removes the limit."""
        for p in self.proxies.values():
            p.throttle(bytes_per_second)

    @property
    def state(self) -> dict[int, str]:
        return {node_id: p.state for node_id, p in self.proxies.items()}

    def stats(self) -> dict[int, ProxyStats]:
        return {node_id: p.stats() for node_id, p in self.proxies.items()}

    def start(self) -> None:
        for p in self.proxies.values():
            p.start()

    def close(self) -> None:
        for p in self.proxies.values():
            p.close()
