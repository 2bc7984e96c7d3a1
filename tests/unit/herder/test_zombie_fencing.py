"""The fencing decision (Java's exact conditions) and the sharing of fencing rounds, over the in-memory
config store (no Kafka: the producer fencing itself is tested on real Kafka in
tests/integration/test_zombie_fencing.py)."""

from __future__ import annotations

import asyncio

import pytest

from pyconnect.errors import ConflictError
from pyconnect.herder.fencing_rounds import NEW_TASK_CONFIGS, ZombieFencings
from pyconnect.herder.zombie_fencing import Fence, NothingToFence, RecordOnly, decide, transactional_ids
from pyconnect.stores.config import MemoryConfigStore

PROPS = {"connector.class": "Demo", "tasks.max": "2", "name": "c"}


async def store_with(*generations: int, record_after: dict[int, int] | None = None) -> MemoryConfigStore:
    """A store where ``c`` published task generations of the given sizes; ``record_after[i]`` writes a
    task-count record after generation ``i``."""
    store = MemoryConfigStore()
    await store.start()
    await store.put_connector_config("c", PROPS)
    for index, count in enumerate(generations):
        await store.put_task_configs("c", [{"n": str(n)} for n in range(count)])
        if record_after and index in record_after:
            await store.put_task_count_record("c", record_after[index])
    return store


async def test_first_generation_only_records_its_task_count() -> None:
    store = await store_with(3)
    decision = decide(store.snapshot(), "c")
    assert isinstance(decision, RecordOnly) and decision.task_count == 3
    assert "first time" in decision.reason


async def test_a_recorded_generation_needs_nothing() -> None:
    store = await store_with(3, record_after={0: 3})
    assert decide(store.snapshot(), "c") == NothingToFence()


async def test_a_new_generation_fences_the_recorded_count_and_records_the_new_one() -> None:
    store = await store_with(3, 1, record_after={0: 3})
    assert decide(store.snapshot(), "c") == Fence(to_fence=3, to_record=1, generation=1)
    store = await store_with(1, 4, record_after={0: 1})
    assert decide(store.snapshot(), "c") == Fence(to_fence=1, to_record=4, generation=1)


async def test_one_task_after_one_task_fences_itself() -> None:
    store = await store_with(1, 1, record_after={0: 1})
    decision = decide(store.snapshot(), "c")
    assert isinstance(decision, RecordOnly) and decision.task_count == 1
    assert "only contain one task" in decision.reason


async def test_the_last_record_counts_even_after_several_unfenced_generations() -> None:
    store = await store_with(2, 5, 3, record_after={0: 2})
    assert decide(store.snapshot(), "c") == Fence(to_fence=2, to_record=3, generation=2)


def test_transactional_ids_are_javas() -> None:
    assert transactional_ids("connect-cluster", "my-src", 3) == [
        "connect-cluster-my-src-0",
        "connect-cluster-my-src-1",
        "connect-cluster-my-src-2",
    ]


async def test_concurrent_requests_share_one_round_and_a_new_generation_fails_it_with_409() -> None:
    rounds = ZombieFencings()
    release = asyncio.Event()
    runs = 0
    tasks: list[asyncio.Task[None]] = []

    async def start() -> None:
        nonlocal runs
        runs += 1
        await release.wait()

    def spawn(coroutine: object, name: str) -> None:
        tasks.append(asyncio.ensure_future(coroutine))  # type: ignore[arg-type]

    first = rounds.join("c", start, spawn)
    assert rounds.join("c", start, spawn) is first and rounds.active("c")
    await asyncio.sleep(0)
    rounds.conflict("c")
    with pytest.raises(ConflictError, match=NEW_TASK_CONFIGS):
        await first
    assert rounds.cancelled("c")
    # a request for the new generation starts a round of its own, even while the failed one runs on
    second = rounds.join("c", start, spawn)
    assert second is not first and not second.done()
    release.set()
    await asyncio.gather(*tasks)
    await second
    assert runs == 2 and not rounds.active("c")


async def test_a_failed_round_reports_its_error_and_a_spawn_refusal_leaves_no_round() -> None:
    rounds = ZombieFencings()

    async def fail() -> None:
        raise RuntimeError("coordinator unreachable")

    tasks: list[asyncio.Future[None]] = []
    future = rounds.join("c", fail, lambda c, n: tasks.append(asyncio.ensure_future(c)))  # type: ignore[arg-type, func-returns-value]
    with pytest.raises(RuntimeError, match="unreachable"):
        await future
    await asyncio.gather(*tasks)

    def refuse(coroutine: object, name: str) -> None:
        raise RuntimeError("Worker is shutting down")

    with pytest.raises(RuntimeError, match="shutting down"):
        rounds.join("c", fail, refuse)
    assert not rounds.active("c")
