"""One real Prometheus for a test session, evaluating the shipped alert rules
(deploy/prometheus/pyconnect-alerts.yml) against whichever workers a test points it at.

The fault-catalogue tests each start their own workers; rather than a Prometheus per test, the session
runs one (Debian's ``prometheus``: scrape and evaluation every second, on 127.0.0.1) whose scrape
targets come from a file (``file_sd_configs``, re-read on change). A test calls
:meth:`AlertWatch.scrape` with its workers' REST addresses, then :meth:`AlertWatch.wait_firing` for the
alert of a condition code, and :meth:`AlertWatch.wait_resolved` after the repair. A missing
``prometheus`` binary fails the test with one line saying what to install (tests/promtool.py).
"""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.promtool import prometheus_process

RULES = Path(__file__).resolve().parents[1] / "deploy" / "prometheus" / "pyconnect-alerts.yml"


class AlertWatch:
    """The session's Prometheus at ``port``; its scrape targets are the JSON file ``targets``."""

    def __init__(self, port: int, targets: Path) -> None:
        self.port = port
        self._targets = targets

    def scrape(self, urls: Sequence[str]) -> None:
        """Scrape exactly the workers at these REST URLs (``http://host:port/``) from now on; the
        previous test's targets go."""
        addresses = [urllib.parse.urlsplit(url).netloc for url in urls]
        staged = self._targets.with_suffix(".tmp")
        staged.write_text(json.dumps([{"targets": list(addresses), "labels": {"job": "pyconnect"}}]))
        staged.replace(self._targets)

    def firing(self, code: str, state: str = "firing") -> list[dict[str, str]]:
        """The labels of each alert in ``state`` (``firing``, or ``pending``: its rule matches and
        waits out its ``for``) that carries ``code``."""
        query = f'ALERTS{{alertstate="{state}",code="{code}"}}'
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": query})
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        return [dict(item["metric"]) for item in body["data"]["result"]]

    def wait_firing(
        self, code: str, timeout_s: float, state: str = "firing"
    ) -> tuple[float, list[dict[str, str]]]:
        """Seconds until an alert with ``code`` is in ``state`` (and its labels); fails after
        ``timeout_s``. A rule with a long ``for`` (a warning such as GROUP_SYNC_BLOCKED waits 10
        minutes) is checked as ``pending``."""
        started = time.monotonic()
        while time.monotonic() - started < timeout_s:
            found = self.firing(code, state)
            if found:
                return time.monotonic() - started, found
            time.sleep(0.5)
        raise AssertionError(f"no {state} alert with code {code} in Prometheus within {timeout_s:.0f} s")

    def wait_resolved(self, code: str, timeout_s: float) -> float:
        """Seconds until no alert with ``code`` fires any more; fails after ``timeout_s``."""
        started = time.monotonic()
        while time.monotonic() - started < timeout_s:
            if not self.firing(code) and not self.firing(code, "pending"):
                return time.monotonic() - started
            time.sleep(0.5)
        raise AssertionError(f"the alert with code {code} still fires after {timeout_s:.0f} s")


@contextmanager
def alert_watch(base: Path) -> Iterator[AlertWatch]:
    """Start the session's Prometheus under ``base`` and stop it (by PID) at the end."""
    targets = base / "targets.json"
    targets.write_text("[]")
    scrape = (
        "  - job_name: pyconnect\n    file_sd_configs:\n"
        f"      - files: [{str(targets)!r}]\n        refresh_interval: 1s\n"
    )
    with prometheus_process(base, scrape, [RULES]) as port:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    log = (base / "prometheus.log").read_text()[-2000:]
                    raise AssertionError(f"prometheus did not start: {log}") from None
                time.sleep(0.3)
        yield AlertWatch(port, targets)
