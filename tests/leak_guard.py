"""The test suite fails when a task was destroyed pending or an aiokafka client was left unclosed.

``leak_guard`` (autouse, imported by ``tests/conftest.py``) fails a test at teardown when, during
it, this process or a process it started (a worker, a MirrorMaker; see
:data:`pyconnect.testing.leaks.PROCESS_LOGS`) reported "Task was destroyed but it is pending" or
"Unclosed AIOKafka...". It first collects the young generations (the test's event loop is closed by
then), so that a leak usually shows in the test that made it; a full collection per test would cost
more than the suite's own work. What is found only when the session ends (after a full collection, or
from a module- or session-scoped process stopping) fails the session.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from pyconnect.testing.leaks import PROCESS_LOGS, LeakRecorder

RECORDER = LeakRecorder()


def _report(found: list[str]) -> str:
    return "leaked tasks or clients:\n  " + "\n  ".join(found)


@pytest.fixture(autouse=True)
def leak_guard() -> Iterator[None]:
    RECORDER.install()
    mark = RECORDER.mark()
    yield
    gc.collect(1)
    found = RECORDER.since(mark) + PROCESS_LOGS.new_leaks()
    if found:
        pytest.fail(_report(found), pytrace=False)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    mark = RECORDER.mark()
    gc.collect()
    found = RECORDER.since(mark) + PROCESS_LOGS.new_leaks()
    RECORDER.uninstall()
    if found:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(_report(found), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
