"""The README's "A worker and a mirror", run as a new user runs it: its ``worker.properties`` block as the
worker's file, ``pyconnect distributed`` on it, its ``sh`` block (the connector JSON through ``curl``,
then ``pyconnect status``), on the session's clusters A and B.

What is changed before running: ``<A>``/``<B>`` become the clusters' addresses (what ``make clusters``
prints), the REST port a free one, and the group, internal topics and topic names unique ones, because
the session's clusters are shared. ``.venv/bin/pyconnect`` is this interpreter's ``pyconnect``.
Checked: every command exits 0, the records of A's topic arrive on B under ``A.<topic>``, and
``pyconnect status`` answers exit code 0 (IN_SYNC) within a minute.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.kafka import free_ports
from tests.integration.fleet import create_topic, read_topic, wait_for
from tests.integration.test_mirror_source import produce

pytestmark = pytest.mark.kafka

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## A worker and a mirror"
RECORDS = 60


def section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(SECTION)
    return text[start : text.index("\n## ", start + 1)]


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", section(), re.DOTALL)


def test_the_readme_worker_and_mirror_run_as_written(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, tmp_path: Path
) -> None:
    if shutil.which("curl") is None:
        pytest.fail("curl not found: install it (apt-get install -y curl)", pytrace=False)
    (properties,) = blocks("properties")
    (commands,) = blocks("sh")
    tag = uuid.uuid4().hex[:8]
    (port,) = free_ports(1)
    topic = f"orders-{tag}"

    def filled(text: str) -> str:
        text = text.replace("<A>", cluster_a.bootstrap_servers).replace("<B>", cluster_b.bootstrap_servers)
        text = text.replace("127.0.0.1:8083", f"127.0.0.1:{port}")
        text = text.replace("connect-cluster", f"readme-{tag}").replace("connect-", f"readme-{tag}-")
        text = text.replace(".venv/bin/pyconnect", f"{sys.executable} -m pyconnect")
        return re.sub(r'"topics": "orders"', f'"topics": "{topic}"', text)

    worker_file = tmp_path / "worker.properties"
    worker_file.write_text(filled(properties))
    assert f"group.id=readme-{tag}" in worker_file.read_text()
    asyncio.run(create_topic(cluster_a.bootstrap_servers, topic, 2))
    asyncio.run(produce(cluster_a.bootstrap_servers, topic, 2, RECORDS))

    log = (tmp_path / "worker.log").open("w")
    worker = subprocess.Popen(
        [sys.executable, "-m", "pyconnect", "distributed", str(worker_file)],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
        start_new_session=True,
    )
    try:
        status, curl = [], []
        for line in filled(commands).strip().splitlines():
            (status if " -m pyconnect status " in line else curl).append(line)
        assert len(status) == 1 and curl, commands

        def rest_ready() -> bool:
            probe = subprocess.run(
                [
                    "curl",
                    "-s",
                    "-o",
                    "/dev/null",
                    "-w",
                    "%{http_code}",
                    f"http://127.0.0.1:{port}/connectors",
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            return probe.stdout == "200"

        wait_for("the worker's REST API", rest_ready, 90, interval=0.5)
        created = subprocess.run(["bash", "-c", "\n".join(curl)], capture_output=True, text=True, check=False)
        assert created.returncode == 0 and '"name":"mirror-source"' in created.stdout.replace(" ", ""), (
            created.stdout,
            created.stderr,
        )

        def worker_state() -> str:
            connector = subprocess.run(
                ["curl", "-s", f"http://127.0.0.1:{port}/connectors/mirror-source/status"],
                capture_output=True,
                text=True,
                check=False,
            )
            lines = (tmp_path / "worker.log").read_text(errors="replace").splitlines()
            alive = "running" if worker.poll() is None else f"exited {worker.returncode}"
            return f"worker {alive}; status {connector.stdout}; log tail:\n" + "\n".join(lines[-40:])

        # three idle polls: a fresh consumer's first poll on a busy machine can come back empty before
        # its partitions are even assigned, and one empty poll would end the read there
        arrived = wait_for(
            f"A.{topic} on B",
            lambda: (lambda got: got if len(got) >= RECORDS else None)(
                asyncio.run(read_topic(cluster_b.bootstrap_servers, f"A.{topic}", "read_uncommitted"))
            ),
            90,
            interval=1.0,
            describe=worker_state,
        )
        started = time.monotonic()
        last: list[subprocess.CompletedProcess[str]] = []

        def in_sync() -> bool:
            done = subprocess.run(["bash", "-c", status[0]], capture_output=True, text=True, check=False)
            last[:] = [done]
            return done.returncode == 0

        wait_for(
            "pyconnect status exit code 0",
            in_sync,
            60,
            interval=1.0,
            describe=lambda: (last[-1].stdout[-800:], worker_state()),
        )
        assert "IN_SYNC" in last[-1].stdout, last[-1].stdout
        print(f"\n{len(arrived)} records on B; IN_SYNC {time.monotonic() - started:.1f} s after they arrived")
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(10)
        log.close()
