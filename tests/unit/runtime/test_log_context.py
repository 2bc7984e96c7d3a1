"""pyconnect.log_context: Java's connector context on every line about a connector or task, in the
``java``, ``kv`` and ``json`` formats, inherited by asyncio tasks a connector or task starts."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator

import pytest

from pyconnect.cli import main
from pyconnect.log_context import ContextFilter, connector_scope, enter_task, formatter


@pytest.fixture
def capture() -> Iterator[tuple[logging.Logger, io.StringIO, logging.Handler]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ContextFilter())
    logger = logging.getLogger("test.log_context")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield logger, stream, handler
    finally:
        logger.removeHandler(handler)


def test_java_format_carries_javas_mdc_text(
    capture: tuple[logging.Logger, io.StringIO, logging.Handler],
) -> None:
    logger, stream, handler = capture
    handler.setFormatter(formatter("java"))
    logger.info("outside")
    with connector_scope("mirror"):
        logger.info("connector line")
        with connector_scope("mirror", 3, "offsets"):
            logger.info("commit")
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith("] INFO outside (test.log_context)")
    assert "] INFO [mirror|worker] connector line (test.log_context)" in lines[1]
    assert "] INFO [mirror|task-3|offsets] commit (test.log_context)" in lines[2]


def test_json_and_kv_lines_name_connector_and_task_and_keep_tracebacks(
    capture: tuple[logging.Logger, io.StringIO, logging.Handler],
) -> None:
    logger, stream, handler = capture
    handler.setFormatter(formatter("json"))

    async def task_loop() -> None:
        enter_task("c", 0)

        async def child() -> None:  # a task started by the task inherits its context
            logger.info('polled "%s"', "x y")

        await asyncio.create_task(child())
        try:
            raise ValueError("bad record")
        except ValueError:
            logger.exception("failed")

    asyncio.run(task_loop())
    logger.info("after")
    polled, failed, after = (
        json.loads(line) for line in stream.getvalue().splitlines() if line.startswith("{")
    )
    assert (polled["connector"], polled["task"], polled["msg"]) == ("c", 0, 'polled "x y"')
    assert failed["level"] == "ERROR" and failed["exc"].splitlines()[-1] == "ValueError: bad record"
    assert "connector" not in after and "task" not in after

    stream.truncate(0)
    stream.seek(0)
    handler.setFormatter(formatter("kv"))
    with connector_scope("c a"):
        logger.warning('say "hi"=1')
    line = stream.getvalue().strip()
    assert line.startswith("time=") and ' level=WARNING logger=test.log_context connector="c a" ' in line
    assert line.endswith('msg="say \\"hi\\"=1"'), line


def test_an_unknown_format_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="choose one of java, kv, json"):
        formatter("xml")
    assert main(["distributed", "missing.properties", "--log-format", "xml"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["pyconnect: unknown log format 'xml': choose one of java, kv, json"], err
