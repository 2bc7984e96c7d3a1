"""``pyconnect status --url URL``: read a worker's ``GET /mirrors`` and print it (text or JSON).

Exit codes: 0 every flow is IN_SYNC (or there is none), 4 some flow is not, 1 the worker could not be
read (one line on stderr: unreachable, a TLS failure, credentials refused, an HTTP error with the worker's
message, or not the document). A secured worker (HTTPS, client certificate, basic auth) is read with the
options of :mod:`pyconnect.rest_client`. Standard library only; ``--timeout`` bounds the whole request.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from pyconnect.errors import ConnectError
from pyconnect.mirror_status.text import render
from pyconnect.rest_client import RestAccess, RestClientError, get_json

EXIT_OK, EXIT_ERROR, EXIT_NOT_IN_SYNC = 0, 1, 4


class StatusError(ConnectError):
    """The status could not be read; the message is one line."""


def status_url(url: str) -> str:
    """The ``/mirrors`` URL of a worker given by its base URL (or by that URL itself)."""
    text = url.strip()
    if not text.startswith(("http://", "https://")):
        raise StatusError(f"--url must start with http:// or https://, not {url!r}")
    text = text.rstrip("/")
    return text if text.endswith("/mirrors") else text + "/mirrors"


def fetch(url: str, timeout_s: float, access: RestAccess | None = None) -> dict[str, Any]:
    """The status document of the worker at ``url`` (plain access without ``access``); :class:`StatusError`
    with the one-line reason otherwise."""
    target = status_url(url)
    try:
        document = get_json(target, timeout_s, access or RestAccess())
    except RestClientError as exc:
        raise StatusError(str(exc)) from None
    if not isinstance(document, dict) or not isinstance(document.get("flows"), list):
        raise StatusError(f"{target} did not answer a mirror status document")
    return document


def run(
    url: str,
    *,
    as_json: bool,
    timeout_s: float,
    access: RestAccess | None = None,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    """Print the status of the worker at ``url`` on ``out`` and answer the exit code (see the module)."""
    try:
        document = fetch(url, timeout_s) if access is None else fetch(url, timeout_s, access)
    except StatusError as exc:
        print(f"pyconnect: {exc}".splitlines()[0], file=err)
        return EXIT_ERROR
    out.write(json.dumps(document, indent=2) + "\n" if as_json else render(document))
    return EXIT_OK if all(flow.get("in_sync") for flow in document["flows"]) else EXIT_NOT_IN_SYNC
