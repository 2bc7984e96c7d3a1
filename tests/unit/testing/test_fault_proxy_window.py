"""A fault-proxy connection holds at most its byte window per direction: the reader waits for room."""

from __future__ import annotations

import asyncio

from pyconnect.testing.fault_proxy import _Pipe


async def test_a_full_window_holds_the_reader_until_the_writer_makes_room() -> None:
    pipe = _Pipe(window=100)
    await pipe.put((0.0, b"a" * 60))
    await pipe.put((0.0, b"b" * 60))  # room was left (60 < 100): the window may overshoot by one chunk
    third = asyncio.ensure_future(pipe.put((0.0, b"c" * 10)))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not third.done() and pipe.held == 120
    pipe.written(60)
    for _ in range(5):
        await asyncio.sleep(0)
    assert third.done() and pipe.held == 70
    held = [pipe.chunks.get_nowait() for _ in range(3)]
    assert [item[1][:1] for item in held if item is not None] == [b"a", b"b", b"c"]


async def test_the_end_of_stream_marker_takes_no_room() -> None:
    pipe = _Pipe(window=10)
    await pipe.put(None)
    assert pipe.held == 0 and pipe.chunks.get_nowait() is None
