"""A fault-injecting TCP proxy on 127.0.0.1, for network faults in tests, chaos runs and benchmarks.

Python::

    with FaultProxy("127.0.0.1", broker_port) as proxy:   # listens on proxy.port
        proxy.drop()          # every open connection reset, new ones closed on accept
        proxy.blackhole()     # half-open: connections stay up, nothing is forwarded (timeouts only)
        proxy.delay(0.02)     # one-way delay in each direction (the round trip gains 40 ms)
        proxy.throttle(1e6)   # a 1 MB/s link in each direction
        proxy.heal()          # plain pass-through again
        proxy.stats()         # connections accepted and open, bytes each way

Shell (benchmarks; runs until Ctrl-C)::

    python -m pyconnect.testing.fault_proxy --listen 19092 --upstream 127.0.0.1:9092 --delay-ms 20

Contract. The proxy runs its own event loop in a daemon thread, so synchronous code (a test, a nemesis
thread) drives it; every fault method may be called from any thread except the proxy's own, and
returns once the change is in force (``drop()`` returns after every open connection was reset).
Calling one from a coroutine blocks that loop for the few milliseconds the change takes.

The faults:

- ``drop()`` and ``blackhole()`` set the *mode*; ``heal()`` sets it back to pass-through.
  While dropped, an accepted connection is reset at once. While blackholed, connections (old and new)
  stay open but no byte moves either way; on ``heal()`` the connections that lived through the
  blackhole are closed and what they held is discarded, as a partition that heals leaves them broken.
- ``delay(seconds)`` and ``throttle(bytes_per_second)`` shape the *link* and keep the mode: chunks
  leave ``seconds`` after they arrived, order kept (see :func:`link_model.release_at`), and each
  direction is held to the rate by one token bucket shared by all connections. ``delay(0)`` and
  ``throttle(None)`` undo one; ``heal()`` undoes both (and the mode).

Each connection holds at most :data:`WINDOW_BYTES` per direction (like a TCP window), then stops
reading; a slow or delayed link therefore pushes back on the sender instead of buffering.
A connection whose upstream cannot be reached is closed. Every fault change is logged at INFO.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import socket
import struct
import sys
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

from pyconnect.testing.link_model import TokenBucket, piece_size, pieces, release_at

__all__ = ["FaultProxy", "ProxyStats"]

log = logging.getLogger(__name__)

CHUNK = 64 * 1024
WINDOW_BYTES = 4 * 1024 * 1024
CONNECT_TIMEOUT_S = 10.0
CONTROL_TIMEOUT_S = 10.0
SHUTDOWN_WAIT_S = 2.0

PASS, DROP, BLACKHOLE = "pass", "drop", "blackhole"
UP, DOWN = "upstream", "downstream"  # client -> upstream, upstream -> client

T = TypeVar("T")


@dataclass(frozen=True)
class ProxyStats:
    """A snapshot of one proxy's counters since it started.

    ``bytes_upstream`` counts what was forwarded (handed to the socket) from clients to the upstream
    server, ``bytes_downstream`` what was forwarded back; held or discarded bytes are not counted.
    """

    accepted: int
    open: int
    refused: int
    bytes_upstream: int
    bytes_downstream: int


class _Pipe:
    """One direction of a connection: the chunks read and not yet written, with their release times,
    bounded by a byte window (the reader waits for room, the writer makes it)."""

    def __init__(self, window: int = WINDOW_BYTES) -> None:
        self.chunks: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()
        self.window = window
        self.held = 0
        self.room = asyncio.Event()
        self.room.set()

    async def put(self, item: tuple[float, bytes] | None) -> None:
        while self.held >= self.window:
            self.room.clear()
            await self.room.wait()
        if item is not None:
            self.held += len(item[1])
        self.chunks.put_nowait(item)

    def written(self, size: int) -> None:
        self.held -= size
        if self.held < self.window:
            self.room.set()


class _Connection:
    """One client connection and its upstream twin; owned by the proxy's loop."""

    def __init__(self, proxy: FaultProxy, client: asyncio.StreamWriter) -> None:
        self.proxy = proxy
        self.client = client
        self.upstream: asyncio.StreamWriter | None = None
        self.task: asyncio.Task[None] | None = None
        self.tainted = proxy._mode == BLACKHOLE

    async def run(self, client_reader: asyncio.StreamReader) -> None:
        proxy = self.proxy
        await proxy._flowing.wait()
        try:
            upstream_reader, upstream = await asyncio.wait_for(
                asyncio.open_connection(proxy.upstream_host, proxy.upstream_port), CONNECT_TIMEOUT_S
            )
        except (TimeoutError, OSError) as exc:
            proxy._upstream_failed(exc)
            return
        self.upstream = upstream
        proxy._upstream_ok()
        up, down = _Pipe(), _Pipe()
        readers = [
            asyncio.create_task(self._read(client_reader, up)),
            asyncio.create_task(self._read(upstream_reader, down)),
        ]
        writers = [
            asyncio.create_task(self._write(up, upstream, UP)),
            asyncio.create_task(self._write(down, self.client, DOWN)),
        ]
        try:
            await asyncio.wait(writers, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in readers + writers:
                task.cancel()
            await asyncio.gather(*readers, *writers, return_exceptions=True)

    async def _read(self, reader: asyncio.StreamReader, pipe: _Pipe) -> None:
        loop = asyncio.get_running_loop()
        previous = 0.0
        while True:
            try:
                data = await reader.read(CHUNK)
            except OSError:
                data = b""
            if not data:
                await pipe.put(None)
                return
            previous = release_at(loop.time(), self.proxy._delay, previous)
            await pipe.put((previous, data))

    async def _write(self, pipe: _Pipe, writer: asyncio.StreamWriter, direction: str) -> None:
        loop = asyncio.get_running_loop()
        proxy = self.proxy
        while True:
            item = await pipe.chunks.get()
            if item is None:
                return
            release, data = item
            wait = release - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            for piece in pieces(data, piece_size(proxy._rate)):
                await proxy._flowing.wait()
                bucket = proxy._buckets.get(direction)
                if bucket is not None:
                    pause = bucket.reserve(len(piece), loop.time())
                    if pause > 0:
                        await asyncio.sleep(pause)
                    await proxy._flowing.wait()
                proxy._count(direction, len(piece))
                try:
                    writer.write(piece)
                    await writer.drain()
                except OSError:
                    return
            pipe.written(len(data))

    def close(self) -> None:
        """Close both sides, flushing nothing more (a normal end or a proxy shutting down)."""
        for w in (self.client, self.upstream):
            if w is not None:
                w.transport.abort()

    def reset(self) -> None:
        """Reset both sides (RST where the socket allows) and stop the connection's task; the
        connection no longer counts as open from this moment."""
        self.proxy._connections.discard(self)
        for w in (self.client, self.upstream):
            if w is None:
                continue
            sock = w.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            w.transport.abort()
        if self.task is not None:
            self.task.cancel()


class FaultProxy:
    """A TCP forwarder from ``127.0.0.1:listen_port`` to ``upstream_host:upstream_port`` whose faults can be
    switched at runtime from any thread (see the module docstring). With ``listen_port`` 0 a free port is
    chosen at ``start()`` and ``listen_port`` becomes it (a restart after ``close()`` binds it again).

    A proxy in front of one broker of a cluster is bypassed as soon as the client reads the metadata
    (brokers advertise their own address): put proxies in front of whole clusters with the routes of
    :mod:`pyconnect.testing.network_routes`."""

    def __init__(
        self, upstream_host: str, upstream_port: int, listen_port: int = 0, *, name: str = ""
    ) -> None:
        self.upstream_host = upstream_host
        self.upstream_port = upstream_port
        self.listen_port = listen_port
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._port: int | None = None
        self._mode = PASS
        self._delay = 0.0
        self._rate: float | None = None
        self._buckets: dict[str, TokenBucket] = {}
        self._connections: set[_Connection] = set()
        self._handlers: set[asyncio.Task[Any]] = set()
        self._flowing: asyncio.Event  # made in the proxy's loop
        self._accepted = 0
        self._refused = 0
        self._bytes = {UP: 0, DOWN: 0}
        self._upstream_down = False

    # ---- lifecycle -------------------------------------------------------------------------------

    def start(self) -> FaultProxy:
        """Bind and start serving; returns once the port is bound (OSError if it cannot be). Idempotent."""
        if self._thread is not None:
            return self
        loop = asyncio.new_event_loop()
        bound: dict[str, BaseException | None] = {"error": None}
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._bind())
            except BaseException as exc:  # reported to start()'s caller
                bound["error"] = exc
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=serve, name=f"fault-proxy-{self.listen_port}", daemon=True)
        self._thread.start()
        ready.wait()
        if bound["error"] is not None:
            self._thread.join()
            self._thread = None
            self._loop = None
            raise bound["error"]
        log.info("fault proxy %s started", self._label())
        return self

    async def _bind(self) -> None:
        self._flowing = asyncio.Event()
        if self._mode == PASS:  # a proxy started again after close() keeps its faults
            self._flowing.set()
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.listen_port)
        self._port = self.listen_port = self._server.sockets[0].getsockname()[1]

    def close(self) -> None:
        """Stop listening, close every connection and end the proxy's thread. Idempotent; ``start()``
        serves again on the same port with the faults in force at close."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if thread.is_alive() and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self._run(self._shutdown())
                loop.call_soon_threadsafe(loop.stop)
        thread.join(CONTROL_TIMEOUT_S)
        self._thread = None
        self._loop = None
        log.info("fault proxy %s closed", self._label())

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        open_now = list(self._connections)
        for conn in open_now:
            conn.reset()
        tasks = [c.task for c in open_now if c.task is not None]
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*self._handlers, return_exceptions=True)
        if self._server is not None:
            # Every connection is reset by now; waiting for the server to notice is bounded so that a
            # transport still closing never holds up close() (the control call would time out first).
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), SHUTDOWN_WAIT_S)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def port(self) -> int:
        """The bound port (the one asked for, or the one chosen for 0); RuntimeError before start()."""
        if self._port is None:
            raise RuntimeError("the fault proxy is not started")
        return self._port

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    # ---- faults ----------------------------------------------------------------------------------

    def heal(self) -> None:
        """Plain pass-through: no drop, no blackhole, no delay, no rate limit."""
        self._control(self._set_heal)

    def drop(self) -> None:
        """Reset every open connection now and reset new ones on accept, until healed."""
        self._control(self._set_drop)

    def blackhole(self) -> None:
        """Hold every byte of open and new connections (they stay open) until healed, then close them."""
        self._control(self._set_blackhole)

    def delay(self, seconds: float) -> None:
        """Deliver each chunk ``seconds`` after it arrived, in each direction (0 removes the delay)."""
        if seconds < 0:
            raise ValueError(f"delay must be >= 0 seconds, got {seconds}")
        self._control(lambda: self._set_delay(float(seconds)))

    def throttle(self, bytes_per_second: float | None) -> None:
        """Hold each direction to ``bytes_per_second`` (None removes the limit)."""
        if bytes_per_second is not None and bytes_per_second <= 0:
            raise ValueError(f"rate must be > 0 bytes per second (None removes it), got {bytes_per_second}")
        self._control(lambda: self._set_rate(bytes_per_second))

    @property
    def state(self) -> str:
        """``pass``, ``drop`` or ``blackhole``, then the link shape if any: e.g. ``pass delay=100ms``,
        ``blackhole rate=1000B/s``."""
        parts = [self._mode]
        if self._delay:
            parts.append(f"delay={self._delay * 1000:g}ms")
        if self._rate is not None:
            parts.append(f"rate={self._rate:g}B/s")
        return " ".join(parts)

    def stats(self) -> ProxyStats:
        return ProxyStats(
            accepted=self._accepted,
            open=len(self._connections),
            refused=self._refused,
            bytes_upstream=self._bytes[UP],
            bytes_downstream=self._bytes[DOWN],
        )

    # ---- the proxy's loop ------------------------------------------------------------------------

    def _control(self, change: Callable[[], str]) -> None:
        async def apply() -> None:
            detail = change()
            log.info("fault proxy %s: %s%s", self._label(), self.state, f" ({detail})" if detail else "")

        self._run(apply())

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self._loop
        if loop is None:
            coro.close()
            raise RuntimeError("the fault proxy is not started")
        if self._thread is threading.current_thread():
            coro.close()
            raise RuntimeError("a fault proxy is driven from other threads, not from its own loop")
        return asyncio.run_coroutine_threadsafe(coro, loop).result(CONTROL_TIMEOUT_S)

    def _set_heal(self) -> str:
        tainted = [c for c in self._connections if c.tainted]
        for conn in tainted:
            conn.reset()
        self._mode = PASS
        self._delay = 0.0
        self._rate = None
        self._buckets = {}
        self._flowing.set()
        return f"{len(tainted)} connection(s) that lived through a blackhole closed" if tainted else ""

    def _set_drop(self) -> str:
        self._mode = DROP
        self._flowing.clear()
        open_now = list(self._connections)
        for conn in open_now:
            conn.reset()
        return f"{len(open_now)} connection(s) reset"

    def _set_blackhole(self) -> str:
        self._mode = BLACKHOLE
        self._flowing.clear()
        for conn in self._connections:
            conn.tainted = True
        return f"{len(self._connections)} connection(s) held"

    def _set_delay(self, seconds: float) -> str:
        self._delay = seconds
        return ""

    def _set_rate(self, rate: float | None) -> str:
        self._rate = rate
        loop = asyncio.get_running_loop()
        self._buckets = {} if rate is None else {d: TokenBucket.full(rate, loop.time()) for d in (UP, DOWN)}
        return ""

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """The server's handler for one client: runs the connection in a task of its own, which a fault
        cancels (cancelling the handler itself would be reported by asyncio as an error)."""
        self._accepted += 1
        handler = asyncio.current_task()
        if handler is not None:
            self._handlers.add(handler)
        conn = _Connection(self, writer)
        if self._mode == DROP:
            self._refused += 1
            conn.reset()
            self._handlers.discard(handler)
            return
        conn.task = asyncio.create_task(conn.run(reader))
        self._connections.add(conn)
        try:
            await asyncio.wait([conn.task])
        finally:
            self._connections.discard(conn)
            conn.close()
            if not conn.task.done():
                conn.task.cancel()
            self._handlers.discard(handler)

    def _count(self, direction: str, size: int) -> None:
        self._bytes[direction] += size

    def _upstream_failed(self, exc: BaseException) -> None:
        if not self._upstream_down:
            self._upstream_down = True
            log.warning(
                "fault proxy %s: upstream unreachable (%s); closing clients until it answers",
                self._label(),
                exc or type(exc).__name__,
            )

    def _upstream_ok(self) -> None:
        if self._upstream_down:
            self._upstream_down = False
            log.info("fault proxy %s: upstream answers again", self._label())

    def _label(self) -> str:
        port = self._port if self._port is not None else self.listen_port
        name = f"{self.name} " if self.name else ""
        return f"{name}127.0.0.1:{port}->{self.upstream_host}:{self.upstream_port}"


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pyconnect.testing.fault_proxy",
        description="A TCP proxy on 127.0.0.1 with a one-way delay and a rate limit; runs until Ctrl-C.",
    )
    parser.add_argument("--listen", type=int, required=True, help="port to listen on (127.0.0.1; 0 for any)")
    parser.add_argument("--upstream", required=True, help="HOST:PORT to forward to")
    parser.add_argument("--delay-ms", type=float, default=0.0, help="one-way delay in each direction (ms)")
    parser.add_argument("--rate", type=float, default=None, help="bytes per second in each direction")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    try:
        host, _, port_text = args.upstream.rpartition(":")
        if not host or not port_text.isdigit():
            raise ValueError(f"--upstream {args.upstream!r}: expected HOST:PORT")
        if not 0 <= args.listen <= 65535:
            raise ValueError(f"--listen {args.listen}: expected a port (0-65535)")
        proxy = FaultProxy(host, int(port_text), args.listen, name="cli").start()
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        if args.delay_ms:
            proxy.delay(args.delay_ms / 1000)
        if args.rate is not None:
            proxy.throttle(args.rate)
        print(f"listening on {proxy.address}, forwarding to {host}:{port_text} ({proxy.state})", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        proxy.close()
    return 0


if __name__ == "__main__":
    sys.exit(_main())
