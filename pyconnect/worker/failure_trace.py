"""The ``trace`` a FAILED connector or task reports: the exception line first, then Python's traceback.

Java's trace starts with the exception line (``org.apache.kafka...Exception: message``) and then the
stack, so an operator reads what failed in the first line of ``GET /connectors/{c}/status``. Ours is
``<module>.<Class>: <message>`` (the message's first line), a blank line, then the full
``traceback.format_exception`` text, causes included. Pure; called where a failure is reported.
"""

from __future__ import annotations

import traceback


def failure_trace(exc: BaseException) -> str:
    first = traceback.format_exception_only(exc)[0].rstrip("\n").splitlines()[0]
    return first + "\n\n" + "".join(traceback.format_exception(exc))
