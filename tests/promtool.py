"""``promtool check metrics`` (Debian's ``prometheus`` package) as a format check for expositions.

A test that needs it and does not find it fails with one line saying what to install; it never skips.
promtool exits 1 for a malformed exposition and 3 for naming-convention lints. The names a JMX-exporter
setup gives Java workers are the contract (Strimzi's dashboards query them), so the only lints accepted
are the ones those names draw; anything else fails.

``prometheus_server`` runs the real server against workers, ``prometheus_query`` asks it.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

INSTALL = "promtool not found: install Debian's prometheus package (apt-get install -y prometheus)"
CONTRACT_LINTS = (
    "metric names should not contain abbreviated units",
    'non-histogram and non-summary metrics should not have "_count" suffix',
)


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.fail(INSTALL, pytrace=False)
    return path


def check_metrics(text: str) -> list[str]:
    """The lints promtool reports for ``text``; fails the test on a format error or an unexpected lint."""
    done = subprocess.run(
        [promtool(), "check", "metrics"], input=text.encode(), capture_output=True, timeout=60, check=False
    )
    output = (done.stdout + done.stderr).decode(errors="replace")
    assert done.returncode in (0, 3), f"promtool refused the exposition (rc {done.returncode}):\n{output}"
    lints = [line for line in output.splitlines() if line.strip()]
    unexpected = [line for line in lints if not line.endswith(CONTRACT_LINTS)]
    assert not unexpected, "promtool lints beyond the contract's names:\n" + "\n".join(unexpected)
    return lints


def prometheus_query(port: int, query: str) -> list[dict[str, object]]:
    """The result vector of an instant ``query`` on the Prometheus server at ``port``."""
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": query})
    with urllib.request.urlopen(url, timeout=10) as response:
        body = json.loads(response.read())
    assert body["status"] == "success", body
    return list(body["data"]["result"])


@contextmanager
def prometheus_process(base: Path, scrape_configs: str, rules: Sequence[Path] = ()) -> Iterator[int]:
    """A real Prometheus (Debian's package) on 127.0.0.1 with ``scrape_configs`` (YAML, indented as the
    list under ``scrape_configs:``), scraping and evaluating the rule files ``rules`` every second,
    storage under ``base``; yields its HTTP port and stops it (by PID) at the end."""
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail(INSTALL.replace("promtool", "prometheus"), pytrace=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    config = base / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
        + (f"rule_files: [{', '.join(repr(str(r)) for r in rules)}]\n" if rules else "")
        + "scrape_configs:\n"
        + scrape_configs
    )
    with (base / "prometheus.log").open("wb") as log:
        server = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={base / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield port
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


@contextmanager
def prometheus_server(base: Path, targets: list[str], rules: Sequence[Path] = ()) -> Iterator[int]:
    """:func:`prometheus_process` scraping ``targets`` (host:port)."""
    scrape = (
        "  - job_name: pyconnect\n    static_configs:\n"
        f"      - targets: [{', '.join(repr(t) for t in targets)}]\n"
    )
    with prometheus_process(base, scrape, rules) as port:
        yield port
