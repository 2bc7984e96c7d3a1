"""Other Apache Kafka releases from the launcher: ``up --version 2.8.2`` starts a ZooKeeper cluster that
answers metadata, ``down`` stops its broker and then its ZooKeeper server (pyconnect.testing.kafka_versions)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pyconnect.kafka.probe import broker_ids
from pyconnect.testing.java_process import pid_alive, pid_has_tag
from pyconnect.testing.kafka import STATE_FILE, down
from tests.integration.test_launcher import cli

pytestmark = pytest.mark.kafka


async def test_cli_up_a_zookeeper_release_and_down(tmp_path: Path) -> None:
    work = tmp_path / "clusters"
    try:
        up = await asyncio.to_thread(cli, "up", "--clusters", "OLD", "--dir", str(work), "--version", "2.8.2")
        assert up.returncode == 0, up.stderr
        bootstrap = json.loads(up.stdout.splitlines()[0])["OLD"]
        assert await broker_ids(bootstrap) == {1}
        state = json.loads((work / STATE_FILE).read_text())["OLD"]
        (node,) = state["nodes"]
        zookeeper = state["zookeeper"]
        assert pid_has_tag(zookeeper["pid"], zookeeper["tag"])
        stopped = await asyncio.to_thread(cli, "down", "--dir", str(work))
        assert stopped.stdout.strip() == "stopped 1 broker process(es)", stopped.stderr
        assert not pid_alive(node["pid"]) and not pid_alive(zookeeper["pid"])
    finally:
        if (work / STATE_FILE).exists():
            down(work, timeout=10)


def test_cli_refuses_a_secured_old_release_in_one_line(tmp_path: Path) -> None:
    result = cli("up", "--dir", str(tmp_path), "--version", "3.9.1", "--security", "ssl", timeout=60)
    assert result.returncode == 2 and "plaintext only" in result.stderr.splitlines()[-1]
