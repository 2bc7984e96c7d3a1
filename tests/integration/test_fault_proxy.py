"""The fault proxy and per-client network routes, on loopback sockets and on a real Kafka cluster.

First the proxy alone in front of an echo server (drop, blackhole, delay order, counters), then a
one-node cluster of this module's own with routes ``w1`` and ``w2``: real aiokafka clients on each route
and two pyconnect workers of one group, one per route, one of which is cut off past its session timeout.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaConnectionError, KafkaError
from aiokafka.protocol.metadata import MetadataRequest

from pyconnect.testing.fault_proxy import FaultProxy
from pyconnect.testing.kafka import KafkaCluster, free_ports, start_clusters, stop_clusters
from tests.integration.fleet import fleet, python_workers, read_topic, running_tasks, verifiable, wait_for

SESSION_TIMEOUT_MS = 6000


# ---- the proxy alone, in front of an echo server ------------------------------------------------


@pytest.fixture
def echo_port() -> Iterator[int]:
    """A 127.0.0.1 echo server (one thread per connection), closed at the end."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def echo(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(0.2)
            while not stop.is_set():
                try:
                    data = conn.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not data:
                    return
                conn.sendall(data)

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=echo, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        server.close()


def connect(proxy: FaultProxy) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    s.settimeout(2)
    return s


def echoed(s: socket.socket, data: bytes) -> bytes:
    s.sendall(data)
    got = b""
    while len(got) < len(data):
        chunk = s.recv(65536)
        if not chunk:
            break
        got += chunk
    return got


def test_drop_resets_open_connections_and_refuses_new_ones_until_healed(echo_port: int) -> None:
    with FaultProxy("127.0.0.1", echo_port) as proxy:
        assert proxy.state == "pass"
        with closing(connect(proxy)) as s:
            assert echoed(s, b"hello") == b"hello"
            assert proxy.stats().open == 1
            proxy.drop()
            assert proxy.state == "drop"
            assert proxy.stats().open == 0
            with pytest.raises(OSError):
                echoed(s, b"x")
        with pytest.raises(OSError):  # accepted by the kernel, then reset by the proxy
            with closing(connect(proxy)) as s:
                echoed(s, b"x")
        proxy.heal()
        with closing(connect(proxy)) as s:
            assert echoed(s, b"again") == b"again"
        stats = proxy.stats()
        assert (stats.accepted, stats.refused) == (3, 1)
        assert stats.bytes_upstream == stats.bytes_downstream == len(b"hello") + len(b"again")


def test_blackhole_holds_every_byte_then_heal_closes_what_lived_through_it(echo_port: int) -> None:
    with FaultProxy("127.0.0.1", echo_port) as proxy:
        with closing(connect(proxy)) as old:
            assert echoed(old, b"before") == b"before"
            proxy.blackhole()
            with closing(connect(proxy)) as new:  # new connections are accepted, and held too
                for s in (old, new):
                    s.sendall(b"held")
                    s.settimeout(0.5)
                    with pytest.raises(TimeoutError):
                        s.recv(10)
                assert proxy.stats().open == 2
                assert proxy.stats().bytes_upstream == len(b"before")
                proxy.heal()
                for s in (old, new):  # the held bytes are gone with the connection
                    s.settimeout(2)
                    with pytest.raises(OSError):
                        echoed(s, b"x")
        with closing(connect(proxy)) as s:
            assert echoed(s, b"after") == b"after"
        assert proxy.stats().bytes_upstream == len(b"before") + len(b"after")


def test_delay_holds_each_direction_and_keeps_order_when_lowered(echo_port: int) -> None:
    with FaultProxy("127.0.0.1", echo_port) as proxy, closing(connect(proxy)) as s:
        assert echoed(s, b"warm") == b"warm"
        proxy.delay(0.3)
        started = time.monotonic()
        s.sendall(b"first")
        time.sleep(0.1)  # the proxy has read it (and holds it)
        proxy.delay(0)  # the next chunk may not overtake the one still held
        s.sendall(b"second")
        got = b""
        while len(got) < len(b"firstsecond"):
            got += s.recv(100)
        assert got == b"firstsecond"
        assert time.monotonic() - started >= 0.3
        with pytest.raises(ValueError, match="delay"):
            proxy.delay(-1)
        with pytest.raises(ValueError, match="rate"):
            proxy.throttle(0)


# ---- routes to a real cluster ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def routed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    """A one-node cluster of this module with routes w1 and w2."""
    clusters = start_clusters(
        ["R"], tmp_path_factory.mktemp("routed"), routes=("w1", "w2"), die_with_parent=True
    )
    try:
        yield clusters["R"]
    finally:
        stop_clusters(clusters.values(), timeout=15)


@pytest.fixture(autouse=True)
def healed(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every route of the routed cluster is healed after each test that used it."""
    yield
    if "routed" in request.fixturenames:
        cluster: KafkaCluster = request.getfixturevalue("routed")
        for name in cluster.routes:
            cluster.route(name).heal()


@asynccontextmanager
async def producer(bootstrap: str, **config: Any) -> AsyncIterator[AIOKafkaProducer]:
    p = AIOKafkaProducer(bootstrap_servers=bootstrap, **config)
    try:
        await p.start()
        yield p
    finally:
        await p.stop()


def proxy_ports(cluster: KafkaCluster, route: str) -> set[int]:
    return {p.listen_port for p in cluster.route(route).proxies.values()}


async def test_a_route_carries_its_clients_and_metadata_names_only_its_proxies(
    routed: KafkaCluster,
) -> None:
    w1 = routed.route("w1")
    before = w1.broker(1).stats()
    async with producer(w1.bootstrap_servers) as p:
        await p.send_and_wait("routed", b"via-w1", key=b"k")
        advertised = {b.port for b in p.client.cluster.brokers()}
    assert advertised == proxy_ports(routed, "w1")
    assert not advertised & ({n.port for n in routed.nodes} | proxy_ports(routed, "w2"))
    after = w1.broker(1).stats()
    assert after.accepted > before.accepted
    assert after.bytes_upstream > before.bytes_upstream and after.bytes_downstream > before.bytes_downstream

    records = await read_topic(w1.bootstrap_servers, "routed", max_s=15, idle_reads=1)
    assert (b"k", b"via-w1") in {(k, v) for _, _, k, v in records}
    assert w1.broker(1).stats().bytes_downstream > after.bytes_downstream  # the fetch came through w1


async def test_drop_cuts_one_route_while_another_works_and_heal_restores_it(routed: KafkaCluster) -> None:
    w1, w2 = routed.route("w1"), routed.route("w2")
    async with (
        producer(w1.bootstrap_servers, request_timeout_ms=3000) as p1,
        producer(w2.bootstrap_servers, request_timeout_ms=3000) as p2,
    ):
        await p1.send_and_wait("drop", b"1")
        w1.drop()
        assert w1.stats()[1].open == 0
        with pytest.raises(KafkaError):
            await p1.send_and_wait("drop", b"lost")
        fresh = AIOKafkaProducer(bootstrap_servers=w1.bootstrap_servers)
        try:
            with pytest.raises(KafkaConnectionError):
                await fresh.start()
        finally:
            await fresh.stop()
        await p2.send_and_wait("drop", b"w2 works")
        assert w1.stats()[1].refused >= 1

        w1.heal()
        await asyncio.wait_for(p1.send_and_wait("drop", b"w1 again"), 15)


async def test_blackhole_keeps_connections_open_and_requests_time_out(routed: KafkaCluster) -> None:
    w1, w2 = routed.route("w1"), routed.route("w2")
    timeout_ms = 2000
    async with (
        producer(w1.bootstrap_servers, request_timeout_ms=timeout_ms) as p1,
        producer(w2.bootstrap_servers) as p2,
    ):
        await p1.send_and_wait("blackhole", b"1")
        w1.blackhole()
        assert w1.state == {1: "blackhole"}
        held = w1.stats()[1]
        assert held.open >= 1
        started = time.monotonic()
        send = asyncio.ensure_future(p1.send_and_wait("blackhole", b"held"))
        await asyncio.sleep(1.0)
        assert not send.done()
        assert w1.stats()[1].open >= 1  # half-open: nothing reset the client's connection
        with pytest.raises(KafkaError):
            await asyncio.wait_for(send, timeout_ms / 1000 + 10)
        elapsed = time.monotonic() - started
        assert timeout_ms / 1000 * 0.9 <= elapsed <= timeout_ms / 1000 + 5, elapsed
        assert w1.stats()[1].bytes_downstream == held.bytes_downstream  # not one byte came back
        await p2.send_and_wait("blackhole", b"w2 works")

        w1.heal()
        await asyncio.wait_for(p1.send_and_wait("blackhole", b"w1 again"), 15)


async def produce_round_trips(p: AIOKafkaProducer, count: int) -> list[float]:
    """The seconds of ``count`` produce round trips (acks=1, one record each)."""
    times = []
    for i in range(count):
        started = time.monotonic()
        await p.send_and_wait("delay", str(i).encode())
        times.append(time.monotonic() - started)
    return times


async def test_delay_adds_twice_the_one_way_delay_to_a_round_trip(routed: KafkaCluster) -> None:
    """Every round trip through a delay of 100 ms each way takes 200 ms more than the fastest plain one
    (the minimum: a loaded machine slows some plain round trips, never the delayed ones below it)."""
    w1 = routed.route("w1")
    async with producer(w1.bootstrap_servers, acks=1) as p:
        await p.send_and_wait("delay", b"warm-up")
        plain = await produce_round_trips(p, 5)
        w1.delay(0.1)
        assert w1.state == {1: "pass delay=100ms"}
        delayed = await produce_round_trips(p, 5)
    print(
        f"\nproduce round trip (min/median): plain {min(plain) * 1000:.1f}/{statistics.median(plain) * 1000:.1f}"
        f" ms, with delay(0.1) {min(delayed) * 1000:.1f}/{statistics.median(delayed) * 1000:.1f} ms"
    )
    assert min(delayed) - min(plain) >= 0.195
    assert statistics.median(delayed) < statistics.median(plain) + 0.5


async def timed_produce(p: AIOKafkaProducer, proxy: FaultProxy, topic: str, total: int) -> float:
    """Bytes per second the proxy forwarded upstream while ``total`` bytes of values were produced."""
    value = b"x" * 8192
    before = proxy.stats().bytes_upstream
    started = time.monotonic()
    sent = [await p.send(topic, value) for _ in range(total // len(value))]
    await asyncio.gather(*sent)
    elapsed = time.monotonic() - started
    return (proxy.stats().bytes_upstream - before) / elapsed


async def test_throttle_bounds_a_routes_throughput_to_its_rate(routed: KafkaCluster) -> None:
    w1 = routed.route("w1")
    rate = 64 * 1024
    async with producer(w1.bootstrap_servers, linger_ms=5) as p:
        await p.send_and_wait("throttle", b"warm-up")
        free = await timed_produce(p, w1.broker(1), "throttle", 768 * 1024)
        w1.throttle(rate)
        slow = await timed_produce(p, w1.broker(1), "throttle", 192 * 1024)
    print(
        f"\nproduce through w1: {free / 1024:.0f} KiB/s free, {slow / 1024:.0f} KiB/s at {rate // 1024} KiB/s"
    )
    assert 0.6 * rate <= slow <= 1.15 * rate
    assert free > 3 * rate


def owners_by_worker(owners: dict[int, str]) -> Counter[str]:
    return Counter(owners.values())


def test_a_worker_cut_off_its_route_loses_its_tasks_and_gets_them_back_after_heal(
    routed: KafkaCluster, tmp_path: Path
) -> None:
    """Two workers of one group, each on its own route: dropping w1 past the session timeout moves every
    task to the w2 worker; after heal the w1 worker rejoins and the tasks spread again."""
    w1, w2 = routed.route("w1"), routed.route("w2")
    group, topic = "routed-fleet", "routed-fleet-out"
    extra = {"session.timeout.ms": SESSION_TIMEOUT_MS, "scheduled.rebalance.max.delay.ms": 0}
    (cut,) = python_workers(w1.bootstrap_servers, tmp_path / "w1", group, 1, **extra)
    (kept,) = python_workers(w2.bootstrap_servers, tmp_path / "w2", group, 1, **extra)
    with fleet([cut, kept]):
        code, body = kept.rest("POST", "/connectors", {"name": "verif", "config": verifiable(topic, 4, 20)})
        assert code == 201, body
        spread = wait_for(
            "4 tasks RUNNING on both workers",
            lambda: (o := running_tasks(kept, "verif", 4)) and len(owners_by_worker(o)) == 2 and o,
            60,
        )
        assert set(spread.values()) == {cut.worker_id, kept.worker_id}

        w1.drop()
        dropped_at = time.monotonic()
        moved = wait_for(
            "every task RUNNING on the w2 worker",
            lambda: (o := running_tasks(kept, "verif", 4)) and set(o.values()) == {kept.worker_id} and o,
            SESSION_TIMEOUT_MS / 1000 + 30,
        )
        print(f"\nw1 dropped to all tasks on the w2 worker: {time.monotonic() - dropped_at:.1f} s")
        assert len(moved) == 4
        assert cut.running  # cut off, not dead

        w1.heal()
        healed_at = time.monotonic()
        wait_for(
            "the w1 worker to own tasks again",
            lambda: (o := running_tasks(kept, "verif", 4)) and sorted(owners_by_worker(o).values()) == [2, 2],
            60,
        )
        print(f"w1 healed to tasks spread 2/2: {time.monotonic() - healed_at:.1f} s")
        stable = running_tasks(kept, "verif", 4)
        time.sleep(3)  # three heartbeats later the group is still as it was: no rebalance followed
        assert running_tasks(kept, "verif", 4) == stable
        assert running_tasks(cut, "verif", 4) == stable
    assert asyncio.run(read_topic(w2.bootstrap_servers, topic, max_s=15, idle_reads=1))


def test_the_cli_forwards_with_a_delay_until_interrupted_and_refuses_bad_arguments(echo_port: int) -> None:
    command = [sys.executable, "-m", "pyconnect.testing.fault_proxy"]
    bad = subprocess.run(
        [*command, "--listen", "0", "--upstream", "nowhere"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 1
    assert bad.stderr.strip().splitlines() == ["error: --upstream 'nowhere': expected HOST:PORT"]

    (port,) = free_ports(1)
    proc = subprocess.Popen(
        [*command, "--listen", str(port), "--upstream", f"127.0.0.1:{echo_port}", "--delay-ms", "50"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith(f"listening on 127.0.0.1:{port}, forwarding to 127.0.0.1:{echo_port}"), line
        assert "delay=50ms" in line
        with closing(socket.create_connection(("127.0.0.1", port), timeout=5)) as s:
            s.settimeout(5)
            started = time.monotonic()
            assert echoed(s, b"ping") == b"ping"
            assert time.monotonic() - started >= 0.1
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


async def answers(p: AIOKafkaProducer, node_id: int) -> bool:
    """Whether broker ``node_id`` answers a metadata request from ``p``'s client within 5 s."""
    try:
        await asyncio.wait_for(p.client.send(node_id, MetadataRequest(topics=[])), 5)
    except (KafkaError, TimeoutError):
        return False
    return True


@pytest.mark.long
def test_routes_on_three_brokers_fault_one_broker_and_survive_a_broker_kill(tmp_path: Path) -> None:
    """A three-node cluster: a route's metadata names its three proxies; one broker's proxy dropped makes
    only that broker unreachable through the route; a broker killed (-9) and restarted serves the route
    again through the same proxy."""
    clusters = start_clusters(["R3"], tmp_path, brokers=3, routes=("w1", "w2"), die_with_parent=True)
    cluster = clusters["R3"]
    w1 = cluster.route("w1")
    try:

        async def check() -> None:
            async with producer(w1.bootstrap_servers, request_timeout_ms=5000) as p:
                await p.send_and_wait("three", b"1")
                assert {b.port for b in p.client.cluster.brokers()} == proxy_ports(cluster, "w1")
                w1.broker(2).drop()
                reachable = {n: await answers(p, n) for n in (1, 2, 3)}
                assert reachable == {1: True, 2: False, 3: True}
                w1.broker(2).heal()
                assert await answers(p, 2)

        asyncio.run(check())
        victim = cluster.node(1)
        victim.kill()
        victim.start()
        cluster.wait_ready()

        async def after_restart() -> None:
            async with producer(w1.bootstrap_servers, request_timeout_ms=10000) as p:
                assert await answers(p, 1)
                for i in range(6):
                    await p.send_and_wait("three", str(i).encode(), partition=0)

        asyncio.run(asyncio.wait_for(after_restart(), 60))
        assert w1.broker(1).stats().accepted > 0
    finally:
        stop_clusters(clusters.values(), timeout=15)


def test_a_closed_proxy_starts_again_on_its_port_with_its_faults(echo_port: int) -> None:
    proxy = FaultProxy("127.0.0.1", echo_port).start()
    try:
        port = proxy.port
        proxy.drop()
        proxy.close()
        proxy.close()  # idempotent
        proxy.start()
        assert (proxy.port, proxy.state) == (port, "drop")
        with pytest.raises(OSError), closing(connect(proxy)) as s:
            echoed(s, b"x")
        proxy.heal()
        with closing(connect(proxy)) as s:
            assert echoed(s, b"back") == b"back"
    finally:
        proxy.close()


def test_a_mirror_cut_off_its_source_says_so_in_its_status_and_recovers_after_heal(
    routed: KafkaCluster, tmp_path: Path
) -> None:
    """A MirrorSource task whose source cluster stops answering (its consumer's route dropped) stays
    RUNNING and retrying, as Java's does, but its REST status carries a trace naming the cluster, the
    client and the partitions once no fetch was answered for ``pyconnect.mirror.unreachable.after.ms``,
    and the worker logs it once at WARN; after heal the trace is gone and new records are copied."""
    source = routed.route("w1")
    topic, remote = "unreachable-src", "A.unreachable-src"

    async def produce(first: int, count: int) -> None:
        async with producer(routed.bootstrap_servers) as p:
            for i in range(first, first + count):
                await p.send_and_wait(topic, f"v{i}".encode(), partition=0)

    asyncio.run(produce(0, 10))
    config = {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "tasks.max": "1",
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": source.bootstrap_servers,
        "target.cluster.bootstrap.servers": routed.bootstrap_servers,
        "topics": topic,
        "replication.factor": "1",
        "offset-syncs.topic.location": "target",
        "offset-syncs.topic.replication.factor": "1",
        "sync.topic.acls.enabled": "false",
        "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "pyconnect.mirror.unreachable.after.ms": "2000",
    }
    (worker,) = python_workers(routed.bootstrap_servers, tmp_path, "unreachable-fleet", 1)

    def copied(count: int) -> bool:
        return len(asyncio.run(read_topic(routed.bootstrap_servers, remote, max_s=5, idle_reads=1))) >= count

    def task_zero() -> dict[str, Any] | None:
        code, body = worker.rest("GET", "/connectors/mirror/status")
        tasks = body.get("tasks", []) if code == 200 and isinstance(body, dict) else []
        return tasks[0] if tasks else None

    with fleet([worker]):
        code, body = worker.rest("POST", "/connectors", {"name": "mirror", "config": config})
        assert code == 201, body
        wait_for("10 records copied", lambda: copied(10), 60)
        assert "trace" not in (task_zero() or {})

        source.drop()
        cut_at = time.monotonic()
        told = wait_for(
            "the task's status to name the unreachable source",
            lambda: (t := task_zero()) and "trace" in t and t,
            30,
        )
        print(f"\nsource cut off to the status saying so: {time.monotonic() - cut_at:.1f} s")
        assert told["state"] == "RUNNING"
        first_line = told["trace"].splitlines()[0]
        assert first_line.startswith("SOURCE_UNREACHABLE: source cluster A (127.0.0.1:"), first_line
        assert "replication-consumer' for 2 s or more (partitions unreachable-src-0)" in first_line
        log = worker.log_file.read_text(errors="replace")
        warned = [line for line in log.splitlines() if "Unreachable: source cluster A" in line]
        assert len(warned) == 1 and " WARNING [mirror|task-0] mirror-0: " in warned[0], warned

        source.heal()
        asyncio.run(produce(10, 5))
        wait_for("the trace cleared", lambda: (t := task_zero()) and "trace" not in t and t, 60)
        wait_for("the records written during the cut copied", lambda: copied(15), 60)
        assert task_zero()["state"] == "RUNNING"  # type: ignore[index]


def test_a_worker_cut_off_mid_commit_never_rewinds_the_committed_offsets(
    routed: KafkaCluster, tmp_path: Path
) -> None:
    """Issue 16 point 7 through the network: w1 is cut off (blackhole) while its tasks keep committing
    every 200 ms, so the commits it starts before its session ends are stuck in its client; w2 takes the
    tasks and commits past them. After heal those stuck writes must not land over w2's (the offsets
    producer gives up on a write after offset.flush.timeout.ms, as the task already did): every task's
    committed seqno in the offsets topic only moves forward."""
    w1, w2 = routed.route("w1"), routed.route("w2")
    group, topic = "rewind-fleet", "rewind-fleet-out"
    extra = {
        "session.timeout.ms": SESSION_TIMEOUT_MS,
        "scheduled.rebalance.max.delay.ms": 0,
        "offset.flush.interval.ms": 200,
        "offset.flush.timeout.ms": 2000,
        "offset.storage.topic": "rewind-fleet-offsets",
    }
    (cut,) = python_workers(w1.bootstrap_servers, tmp_path / "w1", group, 1, **extra)
    (kept,) = python_workers(w2.bootstrap_servers, tmp_path / "w2", group, 1, **extra)
    with fleet([cut, kept]):
        code, body = kept.rest("POST", "/connectors", {"name": "verif", "config": verifiable(topic, 2, 50)})
        assert code == 201, body
        wait_for(
            "2 tasks RUNNING, one on each worker",
            lambda: (o := running_tasks(kept, "verif", 2)) and len(owners_by_worker(o)) == 2 and o,
            60,
        )
        time.sleep(2)
        w1.blackhole()
        wait_for(
            "both tasks RUNNING on the w2 worker",
            lambda: (o := running_tasks(kept, "verif", 2)) and set(o.values()) == {kept.worker_id} and o,
            SESSION_TIMEOUT_MS / 1000 + 30,
        )
        time.sleep(3)  # w2 commits past what w1 held
        w1.heal()
        wait_for(
            "the w1 worker to own a task again",
            lambda: (o := running_tasks(kept, "verif", 2)) and len(owners_by_worker(o)) == 2 and o,
            60,
        )
        time.sleep(3)  # anything w1's client still held has had its chance to land
    rows = asyncio.run(read_topic(w2.bootstrap_servers, "rewind-fleet-offsets", max_s=15, idle_reads=1))
    history: dict[bytes, list[int]] = {}
    for row in sorted(rows, key=lambda r: (r[0], r[1])):
        key, value = row[2], row[3]
        if key is not None and value is not None and b'"verif"' in key:
            history.setdefault(key, []).append(json.loads(value)["seqno"])
    assert len(history) == 2 and all(len(seqnos) > 10 for seqnos in history.values()), history
    rewinds = {
        key.decode(): [(a, b) for a, b in itertools.pairwise(seqnos) if b < a]
        for key, seqnos in history.items()
    }
    assert not any(rewinds.values()), rewinds
