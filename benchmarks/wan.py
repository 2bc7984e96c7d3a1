"""The high-latency-link scenario: the source cluster reached through fault proxies that delay every
byte (``wan_delay_ms`` each way, so twice that per round trip), as over a link between regions.

Cluster A gets a route of its own (:mod:`pyconnect.testing.network_routes`: a broker listener per route,
advertised at a proxy in front of each broker, so a client that bootstraps through the route never
bypasses it). The connectors' ``source.cluster.bootstrap.servers`` is that route; the target and the
workers' own clusters stay local. Each Connect system drains the 1 KB throughput backlog once more,
under an alias of its own (``WAN_ALIASES``), one fresh worker each, measured as in the throughput
scenario; then latency at the first fixed rate over the same link. The ratio ``wan_throughput_1kb`` is
pyconnect's records/s over Java's.
"""

from __future__ import annotations

ROUTE = "wan"
WAN_ALIASES = {"java-connect": "wj", "pyconnect": "wp"}
"""The source alias each system mirrors under across the delayed link."""


def source_overrides(route_bootstrap: str) -> dict[str, str]:
    """What the connector JSON changes to reach the source through the delayed route."""
    return {"source.cluster.bootstrap.servers": route_bootstrap}
