"""``pyconnect status --url URL``: read a worker's ``GET /mirrors`` and print it (text or JSON).

Exit codes: 0 every flow is IN_SYNC (or there is none), 4 some flow is not, 1 the worker could not be
read (one line on stderr: unreachable, an HTTP error with the worker's message, or not the document).
Standard library only; ``--timeout`` bounds the whole request.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from typing import Any, TextIO

from pyconnect.mirror_status.text import render

EXIT_OK, EXIT_ERROR, EXIT_NOT_IN_SYNC = 0, 1, 4


class StatusError(Exception):
    """The status could not be read; the message is one line."""


def status_url(url: str) -> str:
    """The ``/mirrors`` URL of a worker given by its base URL (or by that URL itself)."""
    text = url.strip()
    if not text.startswith(("http://", "https://")):
        raise StatusError(f"--url must start with http:// or https://, not {url!r}")
    text = text.rstrip("/")
    return text if text.endswith("/mirrors") else text + "/mirrors"


def fetch(url: str, timeout_s: float) -> dict[str, Any]:
    target = status_url(url)
    request = urllib.request.Request(target, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            payload = response.read()
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("message") or exc.reason
        except (ValueError, AttributeError):
            message = exc.reason
        raise StatusError(f"{target} answered HTTP {exc.code}: {message}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise StatusError(f"cannot reach {target}: {reason}") from None
    try:
        document = json.loads(payload)
    except ValueError:
        raise StatusError(f"{target} did not answer JSON") from None
    if not isinstance(document, dict) or not isinstance(document.get("flows"), list):
        raise StatusError(f"{target} did not answer a mirror status document")
    return document


def run(
    url: str, *, as_json: bool, timeout_s: float, out: TextIO = sys.stdout, err: TextIO = sys.stderr
) -> int:
    try:
        document = fetch(url, timeout_s)
    except StatusError as exc:
        print(f"pyconnect: {exc}".splitlines()[0], file=err)
        return EXIT_ERROR
    out.write(json.dumps(document, indent=2) + "\n" if as_json else render(document))
    return EXIT_OK if all(flow.get("in_sync") for flow in document["flows"]) else EXIT_NOT_IN_SYNC
