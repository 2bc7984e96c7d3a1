"""``GET /health`` (KIP-1017 and beyond): the pure verdicts, the real herder's loop, and a follower
asking its leader over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest

from pyconnect.herder import effects as fx
from pyconnect.herder.health import (
    HEALTHY,
    LeaderAnswer,
    Stage,
    TickRecorder,
    WorkerHealth,
    fleet_verdict,
    instant,
    stage_description,
    unhealthy,
    worker_verdict,
)
from pyconnect.rest.server import RestServer
from pyconnect.stores import MemoryConfigStore
from tests.herder_fakes import play_round, scripted_herder, stop_herder
from tests.unit.rest.test_rest_api import MemoryHerder

# -- pure ------------------------------------------------------------------------------------------


def test_instants_and_stage_summaries_read_as_javas() -> None:
    assert instant(0) == "1970-01-01T00:00:00Z"
    assert instant(1_764_088_326_659) == "2025-11-25T16:32:06.659Z"
    assert instant(1_764_088_326_000) == "2025-11-25T16:32:06Z"
    assert instant(1_764_088_326_050) == "2025-11-25T16:32:06.050Z"
    running = Stage("reading to the end of the config topic", 1_764_088_326_659)
    assert running.summarize() == (
        "The worker is currently reading to the end of the config topic, which began at 2025-11-25T16:32:06.659Z."
    )
    done = Stage("ensuring membership in the cluster", 1_764_088_326_000, 1_764_088_327_500)
    assert done.summarize() == (
        "The last operation the worker completed was ensuring membership in the cluster, which began at "
        "2025-11-25T16:32:06Z and completed at 2025-11-25T16:32:07.500Z."
    )


def test_effects_that_can_hold_the_loop_have_a_stage_and_records_do_not() -> None:
    assert stage_description(fx.Rebalance()) == "ensuring membership in the cluster"
    assert stage_description(fx.Sleep(0.25)) == "sleeping for a backoff duration of 250ms"
    assert stage_description(fx.ReadConfigToEnd(3.0)) == "reading to the end of the config topic"
    assert stage_description(fx.RunRequests()) is not None
    assert stage_description(fx.ApplyLoggerLevel("x", "INFO")) is None


def test_worker_verdicts() -> None:
    recorder = TickRecorder()

    def verdict(
        answered: bool = True, ready: bool = True, leader: bool = True, eos: bool = False
    ) -> WorkerHealth:
        return worker_verdict(
            answered=answered, ready=ready, recorder=recorder, leader=leader, lacks_write_privileges=eos
        )

    assert verdict() == HEALTHY
    recorder.begin("ensuring membership in the cluster", 1000)
    starting = verdict(answered=False, ready=False)
    assert (starting.http_status, starting.status) == (503, "starting")
    assert starting.message == (
        "Worker is still starting up. The worker is currently ensuring membership in the cluster, which began "
        "at 1970-01-01T00:00:01Z."
    )
    stuck = verdict(answered=False)
    assert (stuck.http_status, stuck.status) == (500, "unhealthy")
    assert stuck.message.startswith("Worker was unable to handle this request and may be unable to handle")
    assert "currently ensuring membership in the cluster" in stuck.message

    recorder.step_failed(RuntimeError("config topic unreadable"), 2000)
    failing = verdict()
    assert failing.http_status == 500
    assert failing.message.endswith(
        "The last herder step failed at 1970-01-01T00:00:02Z: RuntimeError: config topic unreadable"
    )
    recorder.step_succeeded()
    assert verdict() == HEALTHY

    recorder.write_failed(OSError("record too large"), 3000)
    assert verdict(leader=False) == HEALTHY, "a follower does not write the config topic"
    assert "last write to the config topic failed" in verdict().message and verdict().http_status == 500
    recorder.write_succeeded()
    assert verdict() == HEALTHY
    assert "write privileges" in verdict(eos=True).message
    assert verdict(eos=True, leader=False) == HEALTHY
    why = "Transactional Id authorization failed. The principal needs WRITE and DESCRIBE on TransactionalId x"
    claimed = worker_verdict(
        answered=True,
        ready=True,
        recorder=recorder,
        leader=True,
        lacks_write_privileges=True,
        claim_failure=why,
    )
    assert claimed.http_status == 500 and claimed.message.endswith(f"Its latest claim failed: {why}")


def test_fleet_verdicts_name_the_leader() -> None:
    leader = "http://10.0.0.1:8083/"
    assert fleet_verdict(HEALTHY, leader, LeaderAnswer(200, {"status": "healthy"})) == HEALTHY
    own = unhealthy("mine")
    assert fleet_verdict(own, leader, LeaderAnswer(200)) is own
    down = fleet_verdict(HEALTHY, leader, LeaderAnswer(500, {"status": "unhealthy", "message": "its reason"}))
    assert (down.http_status, down.status) == (503, "unhealthy")
    assert down.message == (
        "This worker is healthy but the cluster cannot accept writes: its leader at http://10.0.0.1:8083/ "
        "answered 500: its reason"
    )
    gone = fleet_verdict(HEALTHY, leader, LeaderAnswer(None, error="Connection refused"))
    assert gone.http_status == 503 and gone.message.endswith("could not be reached: Connection refused")
    nobody = fleet_verdict(HEALTHY, None, None)
    assert nobody.http_status == 503 and "no leader is known" in nobody.message


# -- the real herder --------------------------------------------------------------------------------


class BreakableConfigStore(MemoryConfigStore):
    """A config store whose reads (every herder step) or writes fail while the test says so."""

    reads_fail = False
    writes_fail = False

    def snapshot(self):  # type: ignore[no-untyped-def]
        if self.reads_fail:
            raise RuntimeError("config topic unreadable")
        return super().snapshot()

    async def put_connector_config(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if self.writes_fail:
            raise OSError("MessageSizeTooLargeError: the record is larger than the topic accepts")
        return await super().put_connector_config(*args, **kwargs)


CONFIG = {"connector.class": "VerifiableSource", "tasks.max": "1", "topic": "t"}


async def test_a_herder_that_fails_every_step_is_unhealthy_with_the_reason_then_recovers() -> None:
    store = BreakableConfigStore()
    herder = await scripted_herder(configs=store)
    try:
        await play_round(herder, leader=True)
        assert await herder.health_check() == HEALTHY
        herder.health_timeout_s = 0.5
        store.reads_fail = True
        herder.wake()
        health = await herder.health_check()
        assert (health.http_status, health.status) == (500, "unhealthy")
        assert "The last herder step failed at" in health.message
        assert "RuntimeError: config topic unreadable" in health.message
        store.reads_fail = False
        herder.health_timeout_s = 10.0
        assert await herder.health_check() == HEALTHY
    finally:
        await stop_herder(herder)


async def test_a_leader_whose_config_writes_fail_is_unhealthy_until_one_succeeds() -> None:
    store = BreakableConfigStore()
    herder = await scripted_herder(configs=store, serving=True)
    try:
        store.writes_fail = True
        with pytest.raises(OSError):
            await herder.put_connector_config("c", {"name": "c", **CONFIG}, allow_replace=False)
        health = await herder.health_check()
        assert health.http_status == 500
        assert "its last write to the config topic failed at" in health.message
        assert "MessageSizeTooLargeError" in health.message
        store.writes_fail = False
        await herder.put_connector_config("c", {"name": "c", **CONFIG}, allow_replace=False)
        health = await herder.health_check()
        assert health == HEALTHY, health
    finally:
        await stop_herder(herder)


async def test_a_loop_held_in_a_rebalance_is_starting_then_unhealthy_naming_the_stage() -> None:
    herder = await scripted_herder()
    try:
        herder.health_timeout_s = 0.3
        before = await herder.health_check()
        assert (before.http_status, before.status) == (503, "starting")
        assert "The worker is currently ensuring membership in the cluster, which began at" in before.message
        await play_round(herder, leader=True)
        assert await herder.health_check() == HEALTHY
        herder.membership.play(leader=False)  # type: ignore[attr-defined]
        herder.membership.serving = False  # type: ignore[attr-defined]
        herder.membership._plays.get_nowait()  # type: ignore[attr-defined]  # the round never completes
        herder.wake()
        held = await herder.health_check()
        assert (held.http_status, held.status) == (500, "unhealthy")
        assert "currently ensuring membership in the cluster" in held.message
    finally:
        await stop_herder(herder)


# -- over HTTP: a follower asks its leader ------------------------------------------------------------


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def get_health(
    http: aiohttp.ClientSession, server: RestServer, query: str = ""
) -> tuple[int, dict[str, str]]:
    async with http.get(server.advertised_url.rstrip("/") + "/health" + query) as resp:
        return resp.status, await resp.json()


async def test_a_follower_answers_503_naming_a_leader_that_cannot_take_writes(
    http: aiohttp.ClientSession,
) -> None:
    leader_herder = MemoryHerder()
    leader = RestServer(leader_herder, ["http://127.0.0.1:0"])
    await leader.start()
    follower = RestServer(MemoryHerder(leader.advertised_url, is_leader=False), ["http://127.0.0.1:0"])
    await follower.start()
    try:
        assert await get_health(http, follower) == (200, HEALTHY.to_json())
        leader_herder.health = unhealthy("The last herder step failed at 1970-01-01T00:00:02Z: boom")
        code, body = await get_health(http, follower)
        assert code == 503 and body["status"] == "unhealthy"
        assert body["message"].startswith(
            f"This worker is healthy but the cluster cannot accept writes: its leader at {leader.advertised_url} "
            "answered 500: Worker was unable to handle this request"
        )
        assert body["message"].endswith("boom")
        assert (await get_health(http, follower, "?scope=worker"))[0] == 200, "scope=worker: only itself"
        assert (await get_health(http, leader))[0] == 500
        await leader.stop()
        code, body = await get_health(http, follower)
        assert code == 503 and "could not be reached" in body["message"], body
    finally:
        await follower.stop()
        await leader.stop()
