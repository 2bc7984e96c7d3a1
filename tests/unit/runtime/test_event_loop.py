"""Event-loop choice (pyconnect.event_loop): uvloop by default, asyncio on request, one-line errors.

The selection order (``--event-loop``, then ``PYCONNECT_EVENT_LOOP``, then uvloop), the fallback to
asyncio with one WARN line where uvloop cannot be imported, the CLI's exit code 2 for an unknown name,
and that what runs is what was asked for: the coroutine, the ``python_eventloop_info`` sample and a TLS
REST listener (pyconnect.rest over the loop's own SSL transport) on each loop.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import aiohttp
import pytest

from pyconnect import cli, event_loop
from pyconnect.metrics.process import event_loop_samples
from pyconnect.rest.server import RestServer
from tests.unit.rest.test_rest_api import MemoryHerder
from tests.unit.rest.test_rest_security import Certs, certs, client_ssl, tls  # noqa: F401  (certs is a fixture)

LOOPS = ("uvloop", "asyncio")


def test_uvloop_is_the_default() -> None:
    assert event_loop.requested_loop(None, {}) == "uvloop"
    assert event_loop.requested_loop(None, {event_loop.ENVIRONMENT_VARIABLE: "  "}) == "uvloop"


def test_the_environment_chooses_and_the_option_overrides_it() -> None:
    env = {event_loop.ENVIRONMENT_VARIABLE: " AsyncIO "}
    assert event_loop.requested_loop(None, env) == "asyncio"
    assert event_loop.requested_loop("uvloop", env) == "uvloop"
    assert event_loop.requested_loop("asyncio", {}) == "asyncio"


def test_unknown_names_are_errors_naming_their_source() -> None:
    with pytest.raises(
        event_loop.EventLoopChoiceError,
        match=r"^PYCONNECT_EVENT_LOOP must be one of uvloop, asyncio, not 'trio'$",
    ):
        event_loop.requested_loop(None, {event_loop.ENVIRONMENT_VARIABLE: "trio"})
    with pytest.raises(
        event_loop.EventLoopChoiceError, match=r"^--event-loop must be one of uvloop, asyncio, not ''$"
    ):
        event_loop.requested_loop("", {event_loop.ENVIRONMENT_VARIABLE: "asyncio"})


@pytest.mark.parametrize("name", LOOPS)
def test_run_runs_on_the_chosen_loop_and_says_so(name: str, caplog: pytest.LogCaptureFixture) -> None:
    async def which() -> tuple[str, list[tuple[tuple[str, str], ...]]]:
        return event_loop.running_loop_name(), [s.labels for s in event_loop_samples()]

    with caplog.at_level(logging.INFO, logger="pyconnect.event_loop"):
        running, labels = event_loop.run(which(), name)
    assert running == name
    assert len(labels) == 1 and labels[0][0] == ("implementation", name)
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == [f"Running on the {name} event loop"]


def test_no_info_sample_outside_a_running_loop() -> None:
    assert event_loop_samples() == []


def test_missing_uvloop_falls_back_to_asyncio_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError

    async def which() -> str:
        return event_loop.running_loop_name()

    with caplog.at_level(logging.INFO, logger="pyconnect.event_loop"):
        assert event_loop.run(which(), "uvloop") == "asyncio"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].getMessage().startswith("uvloop is not installed on this platform")
    assert "\n" not in warnings[0].getMessage()


def test_run_with_an_unknown_name_raises_and_leaves_no_coroutine_unawaited() -> None:
    async def never() -> None:
        raise AssertionError("must not run")

    main = never()
    with pytest.raises(event_loop.EventLoopChoiceError):
        event_loop.run(main, "tokio")
    assert main.cr_frame is None, "the coroutine was closed"


@pytest.mark.parametrize(
    ("argv", "environ", "message"),
    [
        (
            ["distributed", "worker.properties", "--event-loop", "gevent"],
            "",
            "pyconnect: --event-loop must be one of uvloop, asyncio, not 'gevent'",
        ),
        (
            ["mirror-maker", "mm2.properties"],
            "curio",
            "pyconnect: PYCONNECT_EVENT_LOOP must be one of uvloop, asyncio, not 'curio'",
        ),
        (
            ["offsets", "translate", "--group", "g", "--from", "A", "--to", "B", "--bootstrap", "A=x:1"],
            "qt",
            "pyconnect: PYCONNECT_EVENT_LOOP must be one of uvloop, asyncio, not 'qt'",
        ),
    ],
    ids=["option", "environment", "offsets-environment"],
)
def test_cli_rejects_an_unknown_loop_in_one_line_with_exit_code_2(
    argv: list[str],
    environ: str,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(event_loop.ENVIRONMENT_VARIABLE, environ)
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.splitlines() == [message]


def test_cli_runs_a_worker_on_the_loop_the_option_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An invalid worker file fails inside the loop: the loop the option chose is the one that ran."""
    seen: list[str] = []
    original = cli.run_distributed

    async def recording(path: str) -> int:
        seen.append(event_loop.running_loop_name())
        return await original(path)

    monkeypatch.setattr(cli, "run_distributed", recording)
    monkeypatch.setenv(event_loop.ENVIRONMENT_VARIABLE, "uvloop")
    worker = tmp_path / "worker.properties"
    worker.write_text("bootstrap.servers=127.0.0.1:1\n")
    assert cli.main(["distributed", str(worker), "--event-loop", "asyncio"]) == 1
    assert seen == ["asyncio"]
    assert len(capsys.readouterr().err.splitlines()) == 1


@pytest.mark.parametrize("name", LOOPS)
def test_tls_rest_listener_serves_on_each_loop(name: str, certs: Certs) -> None:  # noqa: F811
    async def serve_and_fetch() -> tuple[str, int, dict[str, object]]:
        server = RestServer(MemoryHerder(), ["https://127.0.0.1:0"], ssl_settings=tls(certs))
        await server.start()
        try:
            async with (
                aiohttp.ClientSession() as http,
                http.get(server.advertised_url, ssl=client_ssl(certs)) as resp,
            ):
                return event_loop.running_loop_name(), resp.status, await resp.json()
        finally:
            await server.stop()

    running, status, body = event_loop.run(serve_and_fetch(), name)
    assert (running, status) == (name, 200)
    assert set(body) == {"version", "commit", "kafka_cluster_id"}


def test_a_loop_object_is_named_by_its_implementation() -> None:
    loop = asyncio.new_event_loop()
    try:
        assert event_loop.loop_name(loop) == "asyncio"
    finally:
        loop.close()
    import uvloop

    loop = uvloop.new_event_loop()
    try:
        assert event_loop.loop_name(loop) == "uvloop"
    finally:
        loop.close()
