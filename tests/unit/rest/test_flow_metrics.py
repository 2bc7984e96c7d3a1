"""The status document behind the ``pyconnect_mirror_*`` series of ``GET /metrics``
(pyconnect.rest.flow_metrics): cached for scrapes, gathered once for concurrent scrapes, a scrape never
waits past its bound, a failure leaves no series, stop cancels what runs; and on real REST servers with
fake herders, a peer that stops answering turns the flow UNKNOWN in the series as in ``/mirrors``."""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any, cast

import aiohttp
import pytest

from pyconnect.herder.interface import HerderApi
from pyconnect.metrics.prometheus import render
from pyconnect.rest.flow_metrics import StatusDocumentCache, serve_flow_status
from pyconnect.rest.server import RestServer
from tests.unit.mirror_status.test_mirror_status_rest import MirrorHerder, progress, worker_id


class ManualClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def document(status: str) -> dict[str, Any]:
    return {
        "generated_ms": 1,
        "flows": [
            {"flow": "A->B", "source": "A", "target": "B", "status": status, "in_sync": status == "IN_SYNC"}
        ],
    }


def status_of(cache: StatusDocumentCache) -> str | None:
    shown = [
        dict(s.labels)["status"] for s in cache.samples() if s.name.endswith("flow_status") and s.value == 1
    ]
    return shown[0] if shown else None


class Gatherer:
    """A gathering that answers the documents given, counting calls; ``gate`` holds it until set."""

    def __init__(self, *answers: dict[str, Any] | Exception | None) -> None:
        self.answers = list(answers)
        self.calls = 0
        self.gate = asyncio.Event()
        self.gate.set()

    async def __call__(self) -> dict[str, Any] | None:
        self.calls += 1
        answer = self.answers[min(self.calls, len(self.answers)) - 1]
        await self.gate.wait()
        if isinstance(answer, Exception):
            raise answer
        return answer


async def test_a_document_is_reused_within_its_age_and_gathered_again_after() -> None:
    clock = ManualClock()
    cache = StatusDocumentCache(max_age_s=2.0, clock=clock)
    gather = Gatherer(document("IN_SYNC"), document("STALLED"))
    await cache.refresh(gather)
    assert status_of(cache) == "IN_SYNC"
    clock.now += 1.9
    await cache.refresh(gather)
    assert (gather.calls, status_of(cache)) == (1, "IN_SYNC")
    clock.now += 0.2
    await cache.refresh(gather)
    assert (gather.calls, status_of(cache)) == (2, "STALLED")
    await cache.stop()


async def test_concurrent_scrapes_share_one_gathering() -> None:
    cache = StatusDocumentCache()
    gather = Gatherer(document("LAGGING"))
    gather.gate.clear()
    scrapes = [asyncio.create_task(cache.refresh(gather)) for _ in range(3)]
    await asyncio.sleep(0)
    gather.gate.set()
    await asyncio.gather(*scrapes)
    assert (gather.calls, status_of(cache)) == (1, "LAGGING")
    await cache.stop()


async def test_a_slow_gathering_serves_the_previous_document_and_lands_for_the_next_scrape() -> None:
    clock = ManualClock()
    cache = StatusDocumentCache(max_age_s=2.0, wait_s=0.01, clock=clock)
    await cache.refresh(Gatherer(document("IN_SYNC")))
    clock.now += 5
    slow = Gatherer(document("UNKNOWN"))
    slow.gate.clear()
    await cache.refresh(slow)
    assert status_of(cache) == "IN_SYNC"
    slow.gate.set()
    await cache.refresh(Gatherer(document("FAILED")))
    assert (slow.calls, status_of(cache)) == (1, "UNKNOWN")
    await cache.stop()


async def test_a_failed_gathering_leaves_no_series_and_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    cache = StatusDocumentCache(clock=clock)
    await cache.refresh(Gatherer(document("IN_SYNC")))
    assert cache.samples()
    failing = Gatherer(RuntimeError("herder gone"))
    with caplog.at_level(logging.WARNING, "pyconnect.rest.flow_metrics"):
        for _ in range(3):
            clock.now += 5
            await cache.refresh(failing)
    assert failing.calls == 3 and cache.samples() == []
    assert [r.getMessage() for r in caplog.records] == [
        "The mirror status for /metrics could not be gathered: RuntimeError: herder gone"
    ]
    clock.now += 5
    await cache.refresh(Gatherer(None))
    assert cache.samples() == []
    await cache.stop()


async def test_a_gathering_past_its_limit_is_cancelled(caplog: pytest.LogCaptureFixture) -> None:
    cache = StatusDocumentCache(wait_s=1.0, limit_s=0.01)
    hung = Gatherer(document("IN_SYNC"))
    hung.gate.clear()
    with caplog.at_level(logging.WARNING, "pyconnect.rest.flow_metrics"):
        await cache.refresh(hung)
    assert cache.samples() == []
    assert "TimeoutError" in caplog.text
    await cache.stop()


async def test_stop_cancels_the_gathering_and_closes_the_cache() -> None:
    cache = StatusDocumentCache(wait_s=0.01)
    hung = Gatherer(document("IN_SYNC"))
    hung.gate.clear()
    await cache.refresh(hung)
    running = [t for t in asyncio.all_tasks() if t.get_name() == "mirror status for /metrics"]
    assert len(running) == 1
    await cache.stop()
    assert running[0].cancelled()
    later = Gatherer(document("IN_SYNC"))
    await cache.refresh(later)
    assert later.calls == 0 and cache.samples() == []
    await cache.stop()


def rendered(cache: StatusDocumentCache) -> str:
    return render(cache.samples())


async def scrape(http: aiohttp.ClientSession, server: RestServer) -> str:
    async with http.get(server.advertised_url.rstrip("/") + "/metrics") as resp:
        assert resp.status == 200
        return await resp.text()


async def test_metrics_of_a_worker_show_the_fleets_flow_and_an_absent_peer_makes_it_unknown() -> None:
    herders = [MirrorHerder(), MirrorHerder()]
    servers = [RestServer(cast(HerderApi, h), ["http://127.0.0.1:0"]) for h in herders]
    caches = []
    for server, topic in zip(servers, ("A.one", "A.two"), strict=True):
        server.serve_mirror_progress(functools.partial(progress, topic))
        cache = serve_flow_status(server)
        server.serve_metrics(functools.partial(rendered, cache))
        caches.append(cache)
        await server.start()
    try:
        ids = [worker_id(s) for s in servers]
        for herder, own in zip(herders, ids, strict=True):
            herder.worker_id = own
            herder.task_workers = ids
        async with aiohttp.ClientSession() as http:
            text = await scrape(http, servers[0])
            assert (
                'pyconnect_mirror_flow_status{flow="A->B",source="A",target="B",status="IN_SYNC"} 1.0' in text
            )
            assert 'pyconnect_mirror_flow_in_sync{flow="A->B",source="A",target="B"} 1.0' in text
            await caches[1].stop()
            await servers[1].stop()
            caches[0].max_age_s = 0.0
            text = await scrape(http, servers[0])
            assert 'status="UNKNOWN"} 1.0' in text, text
            assert (
                'pyconnect_mirror_condition{flow="A->B",source="A",target="B",code="WORKER_UNREACHABLE"'
                in text
            )
    finally:
        for cache, server in zip(caches, servers, strict=True):
            await cache.stop()
            await server.stop()


async def test_metrics_before_the_herder_is_attached_have_no_flow_series() -> None:
    server = RestServer(None, ["http://127.0.0.1:0"])
    cache = serve_flow_status(server)
    server.serve_metrics(lambda: rendered(cache) + "up_marker 1\n")
    await server.start()
    try:
        async with aiohttp.ClientSession() as http:
            assert await scrape(http, server) == "up_marker 1\n"
    finally:
        await cache.stop()
        await server.stop()
