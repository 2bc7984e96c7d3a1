"""Which event loop a pyconnect process runs on: uvloop by default, asyncio's own loop on request.

Every process entry point (``pyconnect distributed``, ``standalone``, ``mirror-maker``,
``offsets translate``) runs its main coroutine through :func:`run`. The loop is chosen, in this
order, by the command's ``--event-loop`` option, by the ``PYCONNECT_EVENT_LOOP`` environment variable,
then by the default, ``uvloop``; each names ``uvloop`` or ``asyncio`` (case and surrounding blanks
do not matter, an empty variable counts as unset). Anything else is an :class:`EventLoopChoiceError`
(the CLI prints it as one line and exits with 2). Where uvloop cannot be imported (a platform it does
not support) the process runs on asyncio's loop after one WARN line.

Nothing in pyconnect depends on one loop's internals: both run the same code (TLS listeners and
clients, signal handlers, the event-loop lag sampler). :func:`running_loop_name` says which one runs,
for the startup log line and the ``python_eventloop_info`` metric.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

from pyconnect.errors import ConfigError

UVLOOP = "uvloop"
ASYNCIO = "asyncio"
CHOICES = (UVLOOP, ASYNCIO)
DEFAULT = UVLOOP
ENVIRONMENT_VARIABLE = "PYCONNECT_EVENT_LOOP"

T = TypeVar("T")
LoopFactory = Callable[[], asyncio.AbstractEventLoop]

log = logging.getLogger(__name__)


class EventLoopChoiceError(ConfigError, ValueError):
    """The requested event loop is neither ``uvloop`` nor ``asyncio``; the message is one line."""


def _normalised(value: str, source: str) -> str:
    name = value.strip().lower()
    if name not in CHOICES:
        raise EventLoopChoiceError(
            f"{source} must be one of {', '.join(CHOICES)}, not {value.strip()[:40]!r}"
        )
    return name


def add_event_loop_option(parser: argparse.ArgumentParser) -> None:
    """``--event-loop``: the loop the command runs on (checked by :func:`requested_loop`)."""
    parser.add_argument(
        "--event-loop",
        metavar="{uvloop,asyncio}",
        help=f"event loop to run on (default: ${ENVIRONMENT_VARIABLE}, else {DEFAULT})",
    )


def requested_loop(option: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The loop asked for: ``option`` (the ``--event-loop`` value) when given, else the environment
    variable when set and not blank, else :data:`DEFAULT`. Raises :class:`EventLoopChoiceError` for a
    name that is not one of :data:`CHOICES`, naming where it came from."""
    if option is not None:
        return _normalised(option, "--event-loop")
    value = (os.environ if environ is None else environ).get(ENVIRONMENT_VARIABLE, "")
    if value.strip():
        return _normalised(value, ENVIRONMENT_VARIABLE)
    return DEFAULT


def _uvloop_factory() -> LoopFactory | None:
    try:
        import uvloop
    except ImportError:
        return None
    factory: LoopFactory = uvloop.new_event_loop
    return factory


def loop_factory(name: str) -> tuple[str, LoopFactory]:
    """``(name of the loop that will run, its factory)`` for a name of :data:`CHOICES`.

    ``uvloop`` when it cannot be imported gives asyncio's loop and logs one WARN line saying so.
    """
    if _normalised(name, "the event loop") == UVLOOP:
        factory = _uvloop_factory()
        if factory is not None:
            return UVLOOP, factory
        log.warning(
            "uvloop is not installed on this platform: running on the asyncio event loop "
            "(set %s=asyncio to choose it and silence this line)",
            ENVIRONMENT_VARIABLE,
        )
    return ASYNCIO, asyncio.new_event_loop


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """``uvloop`` for a uvloop loop, ``asyncio`` for any other."""
    return UVLOOP if type(loop).__module__.split(".", 1)[0] == UVLOOP else ASYNCIO


def running_loop_name() -> str:
    """The name of the loop running the caller (call from a coroutine or a callback of the loop)."""
    return loop_name(asyncio.get_running_loop())


def loop_version(name: str) -> str:
    """The version of the loop implementation: uvloop's release, or the Python version for asyncio."""
    if name == UVLOOP:
        import uvloop

        return str(uvloop.__version__)
    import platform

    return platform.python_version()


def run(main: Coroutine[Any, Any, T], name: str = DEFAULT) -> T:
    """Run ``main`` to completion on a new loop of kind ``name`` and close the loop, as ``asyncio.run``
    does (remaining tasks are cancelled, async generators and the default executor shut down; Ctrl-C
    cancels ``main``). Logs at INFO which loop runs. Call once per process, from the main thread."""
    try:
        _, factory = loop_factory(name)
    except BaseException:
        main.close()
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        running = loop_name(runner.get_loop())
        log.info("Running on the %s event loop (%s %s)", running, running, loop_version(running))
        return runner.run(main)
