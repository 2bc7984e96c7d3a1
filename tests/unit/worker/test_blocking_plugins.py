"""Plugins whose plain methods block: the worker's parts stay responsive, bound the calls and report them.

Each blocking method waits on a ``threading.Event`` the test sets at the end (no thread outlives it).
Kafka is not involved: the connector runner, the source task loop and the herder's validation run over
fakes and in-memory stores (tests.herder_fakes).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator, Mapping

import pytest

from pyconnect.api.connector import SourceConnector
from pyconnect.api.converters.bytearray import ByteArrayConverter
from pyconnect.api.converters.string import StringConverter
from pyconnect.api.source import SourceRecord, SourceTask, SourceTaskContext
from pyconnect.config.definition import ConfigDef, ConfigValue
from pyconnect.errors import ConnectError
from pyconnect.herder.abstract import ValidationTimedOut
from pyconnect.herder.herder import Herder
from pyconnect.protocol.internal_records import State, TargetState
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.plugin_calls import PluginCalls
from pyconnect.worker.plugins import PluginDesc, PluginRegistry, PluginType
from pyconnect.worker.retry_with_tolerance import RetryWithTolerance
from pyconnect.worker.source_commits import OffsetCommits
from pyconnect.worker.source_parts import SourceTaskParts
from pyconnect.worker.source_records import SourceRecordPipeline
from pyconnect.worker.source_task import WorkerSourceTask
from pyconnect.worker.status import RecordingReporter
from pyconnect.worker.task_converters import TaskConverters
from pyconnect.worker.worker_connector import WorkerConnector
from tests.herder_fakes import scripted_herder, stop_herder

RELEASE = threading.Event()


@pytest.fixture(autouse=True)
def released_at_the_end() -> Iterator[None]:
    RELEASE.clear()
    yield
    RELEASE.set()


@pytest.fixture
def calls() -> Iterator[PluginCalls]:
    pool = PluginCalls(max_threads=4)
    yield pool
    pool.close()


class BlockingConnector(SourceConnector):
    """Blocks (plainly, on its thread) in the method named by ``block``."""

    def __init__(self, block: str = "") -> None:
        self.block = block
        self.stopped = threading.Event()

    def _maybe_block(self, method: str) -> None:
        if method == self.block:
            RELEASE.wait(30)

    def version(self) -> str:
        return "1.0"

    def config(self) -> ConfigDef:
        self._maybe_block("config")
        return ConfigDef()

    def validate(self, props: Mapping[str, str | None]) -> dict[str, ConfigValue]:
        if props.get("block") == "validate":  # a fresh instance: only the config says where to block
            RELEASE.wait(30)
        return super().validate(props)

    def start(self, props: Mapping[str, str]) -> None:
        self._maybe_block("start")

    def task_class(self) -> type:
        return BlockingTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        self._maybe_block("task_configs")
        return [{}]

    def stop(self) -> None:
        self.stopped.set()
        self._maybe_block("stop")


class BlockingTask(SourceTask):
    def __init__(self, block: str = "") -> None:
        self.block = block
        self.stop_called = threading.Event()

    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:  # type: ignore[override]
        if self.block == "start":
            RELEASE.wait(30)

    def poll(self) -> list[SourceRecord] | None:  # type: ignore[override]
        RELEASE.wait(30 if self.block == "poll" else 0.01)
        return None

    def stop(self) -> None:  # type: ignore[override]
        self.stop_called.set()
        if self.block == "stop":
            RELEASE.wait(30)


def runner(plugin: BlockingConnector, calls: PluginCalls, reporter: RecordingReporter) -> WorkerConnector:
    return WorkerConnector(
        "c", plugin, {}, object(), reporter, stop_timeout_s=0.1, calls=calls, task_configs_timeout_s=0.1
    )


async def test_a_start_that_blocks_goes_on_in_the_background_and_shutdown_abandons_it(
    calls: PluginCalls,
) -> None:
    reporter = RecordingReporter()
    plugin = BlockingConnector("start")
    wc = runner(plugin, calls, reporter)
    outcomes: list[tuple[bool, TargetState | None]] = []
    starting = wc.begin(TargetState.STARTED, lambda ok, state: outcomes.append((ok, state)))
    await asyncio.sleep(0.05)
    assert not starting.done() and reporter.states("c") == []  # as in Java: nothing reported yet
    assert await wc.transition_to(TargetState.PAUSED)  # applied once the start returns
    await asyncio.wait_for(wc.shutdown(), 1.0)
    assert starting.cancelled() and outcomes == []
    assert plugin.stopped.is_set()  # the plugin may release what its start opened
    assert calls.abandoned == 1


async def test_a_pause_during_a_slow_start_is_applied_after_it() -> None:
    reporter = RecordingReporter()
    wc = runner(BlockingConnector("start"), PluginCalls(), reporter)
    outcomes: list[tuple[bool, TargetState | None]] = []
    wc.begin(TargetState.STARTED, lambda ok, state: outcomes.append((ok, state)))
    await asyncio.sleep(0.02)
    await wc.transition_to(TargetState.PAUSED)
    RELEASE.set()
    while not outcomes:
        await asyncio.sleep(0.01)
    assert outcomes == [(True, TargetState.PAUSED)]  # the herder generates no task configs for it
    assert reporter.states("c") == [State.RUNNING, State.PAUSED]
    assert wc.target_state == TargetState.PAUSED


async def test_task_configs_that_block_fail_the_connector_naming_the_method(calls: PluginCalls) -> None:
    reporter = RecordingReporter()
    wc = runner(BlockingConnector("task_configs"), calls, reporter)
    assert await wc.start(TargetState.STARTED)
    with pytest.raises(ConnectError, match=r"task_configs\(\) did not return within 0.1 s"):
        await wc.task_configs(1)
    assert reporter.states("c") == [State.RUNNING, State.FAILED]
    trace = next(t for item, state, t in reporter.reports if item == "c" and state == State.FAILED)
    assert trace is not None and "c: task_configs() did not return" in trace.splitlines()[0]
    assert calls.abandoned == 1


async def test_a_plain_stop_that_blocks_is_bounded(calls: PluginCalls) -> None:
    reporter = RecordingReporter()
    wc = runner(BlockingConnector("stop"), calls, reporter)
    assert await wc.start(TargetState.STARTED)
    await asyncio.wait_for(wc.shutdown(), 1.0)
    assert calls.abandoned == 1
    assert reporter.states("c") == [State.RUNNING, State.UNASSIGNED]


class UnusedProducer:
    """Stands in for a task's producer where nothing is sent."""


def source_task(task: BlockingTask, calls: PluginCalls, reporter: RecordingReporter) -> WorkerSourceTask:
    return WorkerSourceTask(
        ConnectorTaskId("c", 0),
        task,
        {},
        SourceTaskContext({}, offset_storage_reader=None),  # type: ignore[arg-type]
        SourceTaskParts(
            UnusedProducer(), TaskConverters(None, None, None), reporter, calls=calls, stop_timeout_s=0.1
        ),
        OffsetCommits(lambda offsets: asyncio.sleep(0)),
    )


@pytest.mark.parametrize("block", ["start", "poll", "stop"])
async def test_a_plain_task_that_blocks_stops_within_the_bound(block: str, calls: PluginCalls) -> None:
    reporter = RecordingReporter()
    task = BlockingTask(block)
    runner_ = source_task(task, calls, reporter)
    runner_.start()
    await asyncio.sleep(0.1)
    ticks = 0
    for _ in range(10):  # the loop keeps running while the plugin blocks on its thread
        await asyncio.sleep(0.001)
        ticks += 1
    assert ticks == 10
    runner_.stop()
    await asyncio.wait_for(runner_.wait_stopped(0.3), 2.0)
    assert not runner_.running
    assert task.stop_called.is_set()  # stop() ran exactly as Java's: while start/poll may still block
    assert calls.abandoned >= 1


async def test_a_plain_task_polls_on_a_plugin_thread(calls: PluginCalls) -> None:
    reporter = RecordingReporter()
    task = BlockingTask()
    runner_ = source_task(task, calls, reporter)
    runner_.start()
    while reporter.states(ConnectorTaskId("c", 0)) != [State.RUNNING]:
        await asyncio.sleep(0.01)
    assert calls.threads >= 1
    runner_.stop()
    assert await runner_.wait_stopped(2.0)
    assert reporter.states(ConnectorTaskId("c", 0)) == [State.RUNNING, State.UNASSIGNED]
    for _ in range(100):  # a poll pending at the stop was detached from; it returns by itself
        if calls.abandoned == 0:
            break
        await asyncio.sleep(0.01)
    assert calls.abandoned == 0


class ThreadNamingConverter:
    """A converter from outside the runtime: it may block, so it converts on a plugin thread."""

    def from_connect_data(self, topic: str, headers: object, schema: object, value: object) -> bytes | None:
        return None if value is None else threading.current_thread().name.encode()


async def test_a_batch_is_converted_on_a_plugin_thread_only_when_a_converter_is_not_the_runtimes(
    calls: PluginCalls,
) -> None:
    records = [SourceRecord({"p": 0}, {"o": i}, "t", value=f"v{i}") for i in range(3)]
    converter = ThreadNamingConverter()
    foreign = pipeline(TaskConverters(ByteArrayConverter(), converter, None), calls)
    out = await foreign.convert_batch(records)
    assert [r.value for r in out] == [b"plugin-c-0"] * 3
    own = pipeline(TaskConverters(ByteArrayConverter(), StringConverter(), None), calls)
    convert = own.convert
    converted_on: list[threading.Thread] = []

    def watched(batch: list[SourceRecord]) -> object:
        converted_on.append(threading.current_thread())
        return convert(batch)

    own.convert = watched  # type: ignore[method-assign,assignment]
    out = await own.convert_batch(records)
    assert [r.value for r in out] == [b"v0", b"v1", b"v2"]
    assert converted_on == [threading.current_thread()]  # the runtime's own converters: no thread hop


def pipeline(converters: TaskConverters, calls: PluginCalls) -> SourceRecordPipeline:
    """The record pipeline of task ``c-0`` (no transformation, nothing retried)."""

    async def never_waits(delay_ms: int) -> bool:
        return True

    return SourceRecordPipeline(converters, None, RetryWithTolerance(), never_waits, calls, "c-0")


BLOCKING_CLASS = "org.example.BlockingConnector"


@pytest.fixture
async def herder() -> AsyncIterator[Herder]:
    herder = await scripted_herder(serving=True)
    herder.worker.plugins = PluginRegistry(
        [PluginDesc(BLOCKING_CLASS, PluginType.SOURCE, "1.0", BlockingConnector)]
    )
    herder.validation_timeout_s = 0.2
    yield herder
    await stop_herder(herder)


async def test_a_validation_that_blocks_answers_500_with_javas_staged_message(herder: Herder) -> None:
    config = {"connector.class": BLOCKING_CLASS, "tasks.max": "1", "block": "validate"}
    with pytest.raises(ValidationTimedOut) as raised:
        await herder.validate_connector_config("BlockingConnector", config)
    assert raised.value.status == 500
    assert str(raised.value).startswith(
        "Request timed out. The worker is currently performing multi-property validation for the connector, "
        "which began at "
    )
    with pytest.raises(ValidationTimedOut, match="performing multi-property validation"):
        await herder.put_connector_config("b", config, allow_replace=False)
    assert herder.worker.plugin_calls.abandoned == 2
    assert herder.connectors() == []
    healthy = {"connector.class": BLOCKING_CLASS, "tasks.max": "1", "name": "b"}
    infos = await herder.validate_connector_config("BlockingConnector", healthy)
    assert infos["error_count"] == 0, [c["value"] for c in infos["configs"] if c["value"]["errors"]]


async def test_a_patch_whose_validation_blocks_holds_up_that_request_not_the_loop(herder: Herder) -> None:
    base = {"connector.class": BLOCKING_CLASS, "tasks.max": "1"}
    await herder.put_connector_config("b", {"name": "b", **base}, allow_replace=False)
    herder.validation_timeout_s = 2.0
    patching = asyncio.ensure_future(herder.patch_connector_config("b", {"block": "validate"}))
    await asyncio.sleep(0.05)
    created, _ = await asyncio.wait_for(
        herder.put_connector_config("other", {"name": "other", **base}, allow_replace=False), 1.0
    )
    assert created and not patching.done()
    assert (await herder.health_check()).http_status == 200
    with pytest.raises(ValidationTimedOut, match="performing multi-property validation"):
        await patching
    assert "block" not in herder.config_store.snapshot().connector_configs["b"]
