"""A broker outage is a retriable condition: the worker logs it at WARN, a bounded number of times, and
recovers by itself (pyconnect.log_guard; Java's clients log these at WARN too).

One worker on its own single-node cluster runs a source connector; the node is killed for
``OUTAGE_S`` and restarted. Afterwards the task is RUNNING, ``/health`` is 200, the worker's log
holds no ERROR line from the outage, and its WARN lines stay within a bound independent of how long
the outage lasted (one per condition per window, not one per retry).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pyconnect.testing.kafka import KafkaCluster
from tests.integration.fleet import fleet, own_cluster, python_workers, running_tasks, verifiable, wait_for

pytestmark = pytest.mark.kafka

OUTAGE_S = 20.0
WARN_BOUND = 60
LEVEL = re.compile(r"^\[[^\]]+\] (ERROR|WARNING) ", re.MULTILINE)


@pytest.fixture(scope="module")
def lone_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    with own_cluster(tmp_path_factory.mktemp("quiet"), "Q", brokers=1) as cluster:
        yield cluster


@pytest.mark.long  # its own cluster and a long outage (~40 s); the short chaos run kills a broker in make test
def test_a_broker_outage_is_warned_about_boundedly_and_healed_without_errors(
    lone_node: KafkaCluster, unique: Callable[[str], str], tmp_path: Path
) -> None:
    (worker,) = python_workers(lone_node.bootstrap_servers, tmp_path, unique("quiet"), 1)
    topic = unique("out")
    with fleet([worker]):
        code, body = worker.rest("POST", "/connectors", {"name": "v", "config": verifiable(topic, 1)})
        assert code == 201, body
        wait_for("the task RUNNING", lambda: running_tasks(worker, "v", 1), 60)
        before = len(worker.log_file.read_text(errors="replace"))

        (node,) = lone_node.nodes
        node.kill()
        time.sleep(OUTAGE_S)
        node.start()

        wait_for("the task RUNNING again", lambda: running_tasks(worker, "v", 1), 120, interval=1.0)
        wait_for("/health 200", lambda: worker.rest("GET", "/health")[0] == 200, 60, interval=1.0)
        worker.check_alive()
        log = worker.log_file.read_text(errors="replace")[before:]
        levels = LEVEL.findall(log)
        errors = [line for line in log.splitlines() if " ERROR " in line[:40]]
        print(
            f"\nbroker outage of {OUTAGE_S:.0f} s: {levels.count('WARNING')} WARN, {len(errors)} ERROR lines"
        )
        assert errors == [], "\n".join(errors[:20])
        assert 0 < levels.count("WARNING") <= WARN_BOUND, log[-4000:]
