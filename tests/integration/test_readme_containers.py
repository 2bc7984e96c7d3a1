"""Every command of docs/containers.md ("Running in containers"), run as written.

The ``sh`` blocks run in order in one bash (``set -euo pipefail``): the first in the checkout (it runs
``make image`` and exports ``CONTAINERS_CONF``), the others in a temporary folder, with ``BOOTSTRAP``
(cluster A), ``PORT`` and ``METRICS_PORT`` (free ports) set. Containers the blocks leave behind are
removed by name, and a podman service the blocks started is stopped. ``long``: its commands are the
ones tests/integration/test_container_image.py and test_strimzi_conformance.py run in ``make test``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.kafka import free_ports
from pyconnect.testing.podman import DEFAULT_SOCKET, podman

pytestmark = pytest.mark.kafka

REPO = Path(__file__).resolve().parents[2]
NAMES = ("readme-worker", "readme-strimzi", "readme-metrics")


def section_blocks() -> list[str]:
    text = (REPO / "docs" / "containers.md").read_text()
    return re.findall(r"```sh\n(.*?)```", text, re.DOTALL)


@pytest.mark.long
@pytest.mark.timeout(900)
def test_the_readme_container_commands_run_as_written(cluster_a: ClusterHandle, tmp_path: Path) -> None:
    blocks = section_blocks()
    assert len(blocks) == 5, "docs/containers.md changed: update this test's expectations"
    port, metrics_port = free_ports(2)
    pid_file = DEFAULT_SOCKET.with_suffix(".pid")
    service_was_up = pid_file.exists()
    script = "set -euo pipefail\n" + blocks[0] + f'cd "{tmp_path}"\n' + "".join(blocks[1:])
    env = dict(
        os.environ,
        BOOTSTRAP=cluster_a.bootstrap_servers,
        PORT=str(port),
        METRICS_PORT=str(metrics_port),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    try:
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=840,
            check=False,
        )
    finally:
        for name in NAMES:
            podman("rm", "-f", "-t", "0", name, check=False)
        if not service_was_up and pid_file.exists():
            subprocess.run(
                [sys.executable, "-m", "pyconnect.testing.podman", "down"], check=False, timeout=60
            )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    lines = done.stdout.splitlines()
    assert sum(line.startswith("pyconnect 0.1.0") for line in lines) == 2, output[-2000:]
    assert "143" in lines, output[-2000:]
    assert sum(line.startswith('{"status":"healthy"') for line in lines) == 3, output[-2000:]
    assert any(line.startswith("kafka_connect_connect_worker_metrics_connector_count ") for line in lines)
