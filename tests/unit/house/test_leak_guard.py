"""The leak guard: a pending task destroyed or an aiokafka client left unclosed fails the test, in
this process or in a process the test started."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from pyconnect.testing.leaks import LeakRecorder, LogWatch, leak_lines

REPO = Path(__file__).resolve().parents[3]

INNER_TESTS = """
import asyncio
import gc

from aiokafka import AIOKafkaProducer


async def test_leaks_a_pending_task() -> None:
    async def wait_forever() -> None:
        await asyncio.get_running_loop().create_future()

    asyncio.ensure_future(wait_forever())  # no owner: only the future it waits on refers to it
    await asyncio.sleep(0)
    gc.collect()


async def test_leaves_a_producer_unclosed() -> None:
    AIOKafkaProducer(bootstrap_servers="127.0.0.1:1")


async def test_ends_its_task() -> None:
    task = asyncio.ensure_future(asyncio.sleep(5))
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
"""


def test_the_guard_fails_a_test_that_leaks_and_passes_one_that_does_not(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
        "filterwarnings = error\n"
    )
    (tmp_path / "conftest.py").write_text("from tests.leak_guard import leak_guard, pytest_sessionfinish\n")
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(INNER_TESTS))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "test_inner.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert "ERROR test_inner.py::test_leaks_a_pending_task" in out, out
    assert "Task was destroyed but it is pending" in out, out
    assert "ERROR test_inner.py::test_leaves_a_producer_unclosed" in out, out
    assert "PASSED test_inner.py::test_ends_its_task" in out, out
    assert "ERROR test_inner.py::test_ends_its_task" not in out, out


def test_recorder_keeps_only_leak_reports_with_the_task_they_name() -> None:
    recorder = LeakRecorder()
    mark = recorder.mark()
    for message in (
        "Task was destroyed but it is pending!\ntask: <Task pending name='sender' coro=<send()>>",
        "Unclosed AIOKafkaConsumer\nconsumer: <aiokafka.consumer.consumer.AIOKafkaConsumer>",
        "Some other loop error",
    ):
        recorder.emit(logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, None, None))
    assert recorder.since(mark) == [
        "Task was destroyed but it is pending! (task: <Task pending name='sender' coro=<send()>>)",
        "Unclosed AIOKafkaConsumer (consumer: <aiokafka.consumer.consumer.AIOKafkaConsumer>)",
    ]


def test_log_watch_reports_each_new_leak_line_once(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    log.write_text("[t] ERROR Task was destroyed but it is pending! (asyncio)\n")
    watch = LogWatch()
    watch.watch(log)  # what was there before the process started is not its leak
    assert watch.new_leaks() == []
    with open(log, "a") as out:
        out.write("[t] INFO fine\n[t] ERROR Unclosed AIOKafkaProducer (asyncio)\n[t] ERROR Task was destr")
    assert watch.new_leaks() == [f"{log}: [t] ERROR Unclosed AIOKafkaProducer (asyncio)"]
    with open(log, "a") as out:
        out.write("oyed but it is pending! (asyncio)\n")
    watch.watch(log)  # a restart keeps the place
    assert watch.new_leaks() == [f"{log}: [t] ERROR Task was destroyed but it is pending! (asyncio)"]
    assert watch.new_leaks() == []


def test_leak_lines() -> None:
    assert leak_lines("a\nUnclosed AIOKafkaConnection x\nb") == ["Unclosed AIOKafkaConnection x"]
