"""The pure arithmetic of a shaped link (pyconnect.testing.link_model): ordered one-way delay, token
bucket, throttled pieces, and the route listeners a broker gets (pyconnect.testing.network_routes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyconnect.testing.kafka import KafkaCluster
from pyconnect.testing.link_model import MAX_PIECE, MIN_PIECE, TokenBucket, piece_size, pieces, release_at
from pyconnect.testing.network_routes import (
    RoutePorts,
    check_routes,
    listener_name,
    route_listener_properties,
)


def test_release_is_arrival_plus_delay_and_never_overtakes() -> None:
    assert release_at(10.0, 0.1, 0.0) == pytest.approx(10.1)
    # the delay was lowered after a chunk left at 10.5: the next one waits for it (order kept)
    assert release_at(10.2, 0.0, 10.5) == 10.5
    with pytest.raises(ValueError, match="delay"):
        release_at(1.0, -0.1, 0.0)


@given(
    st.lists(
        st.tuples(st.floats(0, 1, allow_nan=False), st.floats(0, 2, allow_nan=False)), min_size=1, max_size=50
    )
)
def test_releases_keep_order_and_never_come_early(steps: list[tuple[float, float]]) -> None:
    arrival, previous = 0.0, 0.0
    for gap, delay in steps:
        arrival += gap
        released = release_at(arrival, delay, previous)
        assert released >= previous
        assert released >= arrival + delay
        previous = released


def test_full_bucket_sends_a_burst_then_makes_the_caller_wait() -> None:
    bucket = TokenBucket.full(1000.0, now=0.0, burst=100.0)
    assert bucket.reserve(100, 0.0) == 0.0
    assert bucket.reserve(50, 0.0) == pytest.approx(0.05)
    # reservations queue behind the debt: the next 50 bytes wait for the first 50 too
    assert bucket.reserve(50, 0.0) == pytest.approx(0.1)
    # a second later the debt is paid and the bucket refilled, but never beyond its burst
    assert bucket.reserve(0, 1.1) == 0.0
    assert bucket.tokens == pytest.approx(100.0)


@given(st.lists(st.integers(1, 10_000), min_size=1, max_size=60), st.floats(100.0, 1e6))
def test_bucket_never_lets_more_than_rate_times_time_plus_burst(sizes: list[int], rate: float) -> None:
    """Whatever the chunk sizes, when every reservation is sent at the time it was told, the bytes sent
    by time t are at most burst + rate * t."""
    bucket = TokenBucket.full(rate, now=0.0)
    now = 0.0
    sent = 0
    for size in sizes:
        now += bucket.reserve(size, now)
        sent += size
        assert sent <= bucket.burst + rate * now + 1e-6 * sent


def test_bucket_refuses_a_rate_of_zero() -> None:
    with pytest.raises(ValueError, match="rate must be > 0"):
        TokenBucket.full(0, now=0.0)


def test_pieces_cover_the_data_in_order() -> None:
    data = bytes(range(256)) * 10
    parts = pieces(data, 1000)
    assert [len(p) for p in parts] == [1000, 1000, 560]
    assert b"".join(parts) == data
    assert pieces(b"", 10) == []
    assert piece_size(None) == MAX_PIECE
    assert piece_size(100.0) == MIN_PIECE
    assert piece_size(200_000.0) == 10_000
    assert piece_size(1e9) == MAX_PIECE


def test_route_names_become_listener_names_or_are_refused() -> None:
    assert listener_name("w1") == "ROUTE_W1"
    assert check_routes(["w1", "W_2"]) == ("w1", "W_2")
    for bad in ("", "w-1", "_w", "w 1", "x" * 41):
        with pytest.raises(ValueError, match="route"):
            check_routes([bad])
    with pytest.raises(ValueError, match="twice"):
        check_routes(["w1", "W1"])


def test_route_listeners_are_advertised_at_their_proxies() -> None:
    base = {
        "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
        "advertised.listeners": "PLAINTEXT://127.0.0.1:9092",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    }
    props = route_listener_properties(base, {"w1": RoutePorts(9100, 9200), "w2": RoutePorts(9101, 9201)})
    assert props == {
        "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093,"
        "ROUTE_W1://127.0.0.1:9100,ROUTE_W2://127.0.0.1:9101",
        "advertised.listeners": "PLAINTEXT://127.0.0.1:9092,ROUTE_W1://127.0.0.1:9200,ROUTE_W2://127.0.0.1:9201",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,"
        "ROUTE_W1:PLAINTEXT,ROUTE_W2:PLAINTEXT",
    }


def test_a_routed_cluster_gives_each_route_and_broker_its_own_ports(tmp_path: Path) -> None:
    dist: Any = None  # never formatted or started here
    ports = list(range(20000, 20012))  # 2 brokers: 4 ports of their own, then 2 routes x 2 brokers x 2
    cluster = KafkaCluster("R", tmp_path, dist, brokers=2, ports=ports, routes=("w1", "w2"))
    assert [(n.port, n.controller_port) for n in cluster.nodes] == [(20000, 20001), (20002, 20003)]
    assert cluster.route_ports(1) == {"w1": RoutePorts(20004, 20005), "w2": RoutePorts(20008, 20009)}
    assert cluster.route_ports(2) == {"w1": RoutePorts(20006, 20007), "w2": RoutePorts(20010, 20011)}
    assert cluster.route("w1").bootstrap_servers == "127.0.0.1:20005,127.0.0.1:20007"
    assert cluster.route("w2").broker(2).upstream_port == 20010
    props = cluster.node(2).properties()
    assert "ROUTE_W2://127.0.0.1:20010" in str(props["listeners"])
    assert "ROUTE_W2://127.0.0.1:20011" in str(props["advertised.listeners"])
    assert props["inter.broker.listener.name"] == "PLAINTEXT"
    with pytest.raises(KeyError, match="no route 'w3'"):
        cluster.route("w3")
    with pytest.raises(ValueError, match="needs 12 ports"):
        KafkaCluster("R", tmp_path, dist, brokers=2, ports=ports[:4], routes=("w1", "w2"))


def test_routes_on_a_secured_cluster_are_refused_before_anything_starts(tmp_path: Path) -> None:
    from pyconnect.testing.kafka import start_clusters

    with pytest.raises(ValueError, match="plaintext only"):
        start_clusters(["S"], tmp_path, security="sasl_ssl", routes=("w1",))
    with pytest.raises(ValueError, match="route 'w-1'"):
        start_clusters(["S"], tmp_path, routes=("w-1",))
    assert not any(tmp_path.iterdir())
