"""docs/disaster-recovery.md, run: every command of the runbook against two SASL_SSL clusters, and the
failover it ends with moving four groups from a killed cluster re-reading and skipping nothing, then
the way back (section 8, failback) and a planned cutover (section 9).

Cluster B is the session's SASL_SSL cluster (``secured_cluster``); cluster A is this module's own
SASL_SSL cluster, whose only broker is killed at the cut. The runbook's files are written from its
fenced blocks (``file=NAME``) with the ``<...>`` placeholders filled in, and its ``sh`` blocks run in
order, section by section, with the Kafka tools (``kafka-configs.sh``, ``kafka-acls.sh``: the fetched
4.3.1 jars), ``pyconnect``, ``curl`` and ``promtool`` on the PATH: the principal and its ACLs (with what
exactly-once adds), the worker file (``pyconnect distributed`` runs in the background), the connector
JSONs through ``PUT``, monitoring while sequence-numbered records flow on A and four groups (two classic,
two consumer-protocol) read them there, and, once A's broker is killed, ``pyconnect failover plan`` and
``execute`` from the worker's REST URL (secrets as ``${file:...}`` variables resolved with
``--worker-config``). The name ``orders`` is made unique for the shared cluster B.

Checked: every command exits 0; on B, the records and their binary headers are byte-identical; each
group resumes on B re-reading nothing and skipping nothing (by sequence numbers), as the failover report
says; executing again commits nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from connectors.mirror.offsets.mirror_client import MirrorClient
from pyconnect.testing.distribution import ensure_distribution
from pyconnect.testing.kafka import KafkaCluster, free_ports, start_clusters, stop_clusters
from pyconnect.testing.kafka_security import ADMIN_USER
from tests.integration.failover_drill import ConsumerProtocolGroup, Traffic, committed, measure, read_all
from tests.integration.fleet import wait_for
from tests.promtool import INSTALL as PROMTOOL_INSTALL

pytestmark = pytest.mark.kafka

ROOT = Path(__file__).resolve().parents[2]
RUNBOOK = ROOT / "docs" / "disaster-recovery.md"
MECHANISM = "SCRAM-SHA-512"
PARTITIONS = 3
TOOLS = {
    "kafka-configs.sh": "kafka.admin.ConfigCommand",
    "kafka-acls.sh": "org.apache.kafka.tools.AclCommand",
}
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
COMMAND_TIMEOUT_S = 360  # a failback or a cutover ends with its Spark audit
IDENTITY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"


@dataclass(frozen=True)
class Block:
    section: int
    language: str
    file: str | None
    body: str


def runbook_blocks(text: str) -> list[Block]:
    """The fenced blocks of the runbook with the number of the ``## N.`` section they are in."""
    found = []
    for match in FENCE.finditer(text):
        heading = re.findall(r"^## (\d+)\.", text[: match.start()], re.MULTILINE)
        options = dict(o.split("=", 1) for o in match.group(2).split() if "=" in o)
        found.append(
            Block(int(heading[-1]) if heading else 0, match.group(1), options.get("file"), match.group(3))
        )
    return found


def commands(body: str) -> list[str]:
    """The commands of an ``sh`` block (continuation lines joined)."""
    return [c.strip() for c in body.replace("\\\n", " ").splitlines() if c.strip() and not c.startswith("#")]


def tool_scripts(bin_dir: Path) -> None:
    """``kafka-configs.sh`` and ``kafka-acls.sh`` as the Kafka distribution has them, over the fetched jars."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, main in TOOLS.items():
        argv = ensure_distribution().java_command(main, heap="256m", jvm_opts=("-XX:TieredStopAtLevel=1",))
        script = bin_dir / name
        script.write_text("#!/bin/sh\nexec " + " ".join(shlex.quote(a) for a in argv) + ' "$@"\n')
        script.chmod(0o755)


@dataclass
class Runbook:
    """The runbook's working folder, its placeholders and environment, and the worker it started."""

    work: Path
    values: dict[str, str]
    env: dict[str, str]
    blocks: list[Block]
    workers: list[tuple[subprocess.Popen[bytes], Any]] = field(default_factory=list)

    def fill(self, text: str) -> str:
        text = text.replace("orders", self.values["TOPIC"])
        for key, value in self.values.items():
            text = text.replace(f"<{key}>", value)
        return text

    def run_section(self, section: int) -> dict[str, subprocess.CompletedProcess[str]]:
        done = {}
        for block in (b for b in self.blocks if b.section == section):
            if block.file is not None:
                (self.work / block.file).write_text(self.fill(block.body))
            elif block.language == "sh":
                for command in commands(self.fill(block.body)):
                    done[command] = self.run(command)
        return done

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        if command.startswith("export "):
            names = {pair.split("=", 1)[0] for pair in shlex.split(command)[1:]}
            assert names <= set(self.env), f"the runbook exports {names - set(self.env)}, unknown to the test"
            return subprocess.CompletedProcess(command, 0, "", "")
        if command.startswith("pyconnect distributed "):
            properties = command.split()[-1]
            log = (self.work / f"{properties}.log").open("wb")
            worker = subprocess.Popen(
                ["bash", "-c", "exec " + command],
                cwd=self.work,
                env=self.env,
                stdout=log,
                stderr=log,
            )
            self.workers.append((worker, log))
            listener = next(
                line.split("=", 1)[1]
                for line in (self.work / properties).read_text().splitlines()
                if line.startswith("listeners=")
            )
            wait_for(
                f"the runbook's worker {properties} ready",
                lambda: self.worker_ready(worker, listener, properties),
                120,
                interval=1.0,
            )
            return subprocess.CompletedProcess(command, 0, "", "")
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
        return done

    def worker_ready(self, worker: subprocess.Popen[bytes], url: str, properties: str) -> bool:
        assert worker.poll() is None, (self.work / f"{properties}.log").read_text()[-3000:]
        try:
            with urllib.request.urlopen(url + "/", timeout=5) as answer:
                return bool(answer.status == 200)
        except OSError:
            return False

    def stop(self) -> None:
        for worker, log in reversed(self.workers):
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
                try:
                    worker.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    worker.kill()
                    worker.wait(timeout=30)
            log.close()


def admin_config(cluster: KafkaCluster) -> dict[str, str]:
    return cluster.client_properties(ADMIN_USER, MECHANISM)


@pytest.fixture(scope="module")
def cluster_a(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    started = start_clusters(
        ["A"], tmp_path_factory.mktemp("runbook-kafka"), security="sasl_ssl", die_with_parent=True
    )
    try:
        yield started["A"]
    finally:
        stop_clusters(started.values(), timeout=15)


@pytest.fixture(scope="module")
def sasl_ssl_b(secured_cluster: Callable[[str], KafkaCluster]) -> KafkaCluster:
    return secured_cluster("sasl_ssl")


def runbook(a: KafkaCluster, b: KafkaCluster, topic: str, groups: list[str], tmp_path: Path) -> Runbook:
    """The runbook in a working folder of its own: the placeholders' values for these clusters, the
    variables of its first block, and the tools on the PATH (the alert rules where a checkout has them)."""
    port, back_port = free_ports(2)
    work = tmp_path / "runbook"
    work.mkdir()
    bin_dir = tmp_path / "bin"
    tool_scripts(bin_dir)
    (work / "deploy" / "prometheus").mkdir(parents=True)
    (work / "deploy" / "prometheus" / "pyconnect-alerts.yml").write_bytes(
        (ROOT / "deploy" / "prometheus" / "pyconnect-alerts.yml").read_bytes()
    )
    values = {
        "A_BOOTSTRAP": a.bootstrap_servers,
        "B_BOOTSTRAP": b.bootstrap_servers,
        "CONNECT_URL": f"http://127.0.0.1:{port}",
        "CONNECT_LISTENER": f"http://127.0.0.1:{port}",
        "CONNECT_BACK_URL": f"http://127.0.0.1:{back_port}",
        "CONNECT_BACK_LISTENER": f"http://127.0.0.1:{back_port}",
        "A_ADMIN_JAAS": admin_config(a)["sasl.jaas.config"],
        "B_ADMIN_JAAS": admin_config(b)["sasl.jaas.config"],
        "A_CA_FILE": admin_config(a)["ssl.truststore.location"],
        "B_CA_FILE": admin_config(b)["ssl.truststore.location"],
        "MIRROR_PASSWORD": uuid.uuid4().hex,
        "SECRETS_FILE": str(work / "mirror-secrets.properties"),
        "TOPIC": topic,
    }
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "A": a.bootstrap_servers,
        "B": b.bootstrap_servers,
        "CONNECT": values["CONNECT_URL"],
        "CONNECT_BACK": values["CONNECT_BACK_URL"],
        "CONSUMER_GROUPS": " ".join(f"--group {g}" for g in groups),
    }
    return Runbook(work, values, env, runbook_blocks(RUNBOOK.read_text()))


@pytest.mark.long  # ~6 minutes and fifteen Java tool launches; its short siblings in make test are
# tests/integration/test_failover_command.py (the same failover on real Kafka, both delivery modes),
# test_failback.py and test_cutover.py
@pytest.mark.timeout(900)
def test_the_runbook_moves_four_groups_off_a_killed_cluster_rereading_and_skipping_nothing(
    cluster_a: KafkaCluster, sasl_ssl_b: KafkaCluster, tmp_path: Path
) -> None:
    for tool, install in (
        ("promtool", PROMTOOL_INSTALL),
        ("curl", "curl not found: install it (apt-get install -y curl)"),
    ):
        if shutil.which(tool) is None:
            pytest.fail(install, pytrace=False)
    a, b = cluster_a, sasl_ssl_b
    topic = f"orders{uuid.uuid4().hex[:6]}"
    groups = [f"{topic}-classic-1", f"{topic}-classic-2", f"{topic}-consumer-1", f"{topic}-consumer-2"]
    book = runbook(a, b, topic, groups, tmp_path)
    work = book.work
    assert {b.section for b in book.blocks} >= {0, 1, 2, 3, 4, 5, 6}
    asyncio.run(create_source_topic(admin_config(a), topic))
    traffic = Traffic(admin_config(a), topic, PARTITIONS, 40, groups[:2])
    java = [
        ConsumerProtocolGroup(a.bootstrap_servers, topic, g, tmp_path, work / "a-admin.properties")
        for g in groups[2:]
    ]
    try:
        for section in range(5):
            book.run_section(section)
        traffic.start()
        for consumer in java:
            consumer.start()
        wait_for(
            "every group committing on A",
            lambda: all(asyncio.run(committed(admin_config(a), g, topic)) for g in groups),
            120,
            interval=1.0,
        )
        wait_for("records of every partition on B", lambda: records_on_b(b, topic), 120, interval=1.0)
        try:
            wait_for("checkpoints of every group on B", lambda: checkpointed(b, groups), 90, interval=1.0)
        except AssertionError as exc:
            status = book.run("curl -s $CONNECT/connectors/mm2-checkpoint/status").stdout
            raise AssertionError(f"{exc}: {status[-3000:]}") from None
        book.run_section(5)
        stopped = {groups[3]: java[1].stop()}
        time.sleep(1.5)
        stopped[groups[1]] = traffic.stop_group(groups[1])
        stopped[groups[2]] = java[0].stop()
        time.sleep(1.0)
        stopped[groups[0]] = traffic.stop_group(groups[0])
        time.sleep(1.3)
        positions = {g: asyncio.run(committed(admin_config(a), g, topic)) for g in groups}
        traffic.stop()
        a.nodes[0].kill()
        cut = time.monotonic()
        assert not traffic.errors, traffic.errors
        assert all(cut - at >= 1.0 for at in stopped.values()), {g: cut - at for g, at in stopped.items()}
        time.sleep(2)
        done = book.run_section(6)
        report = json.loads((work / "failover-report.json").read_text())
        execute = next(c for c in done if c.startswith("pyconnect failover execute"))
        again = book.run(execute.replace(" > failover-report.json", ""))
        assert [g["committed"] for g in json.loads(again.stdout)["groups"]] == [0] * len(groups)
        check_failover(b, topic, groups, positions, report, {g: cut - at for g, at in stopped.items()})

        a.nodes[0].start()
        a.wait_ready()
        wait_for("A serving its topic again", lambda: serving(admin_config(a), topic), 120, interval=1.0)
        written = asyncio.run(produce(admin_config(b), topic, WRITTEN_ON_B))
        book.run_section(8)
        check_failback(a, topic, json.loads((work / "failback-report.json").read_text()), written)
        book.run_section(9)
        check_cutover(json.loads((work / "cutover-report.json").read_text()), groups)
    finally:
        traffic.stop()
        for consumer in java:
            consumer.kill()
        book.stop()


def check_failover(
    b: KafkaCluster,
    topic: str,
    groups: list[str],
    positions: dict[str, dict[int, int]],
    report: dict[str, Any],
    ages: dict[str, float],
) -> None:
    """Each group resumes on B re-reading and skipping nothing, as the failover report says; the records
    and their binary headers arrived byte for byte."""
    altered: list[int] = []
    records = asyncio.run(read_all(admin_config(b), topic, PARTITIONS, altered))
    assert not altered, f"records whose headers changed on the way: {altered[:10]}"
    by_group = {g["group"]: g for g in report["groups"]}
    assert report["flow"]["replication_policy"].endswith("IdentityReplicationPolicy")
    table = []
    for group in groups:
        measured = measure(
            group, positions[group], asyncio.run(committed(admin_config(b), group, topic)), records
        )
        basis = sorted({p["basis"] for p in by_group[group]["partitions"]})
        table.append((group.rsplit("-", 2)[-2:], measured, basis, round(ages[group], 1)))
        assert (measured.reread, measured.skipped) == (0, 0), (group, measured, by_group[group])
        assert (by_group[group]["expected_reread"], by_group[group]["expected_skipped"]) == (0, 0), by_group[
            group
        ]
        assert by_group[group]["status"] == "verified" and measured.read > 0
    print("\nrunbook failover (exactly-once, SASL_SSL): group read re-read skipped basis commit-age-s")
    for name, measured, basis, age in table:
        print("-".join(name), measured.read, measured.reread, measured.skipped, "/".join(basis), age)


def serving(config: dict[str, str], topic: str) -> bool:
    """Whether every partition of ``topic`` answers its offsets (a restarted broker elects leaders after
    recovering its logs)."""
    from pyconnect.kafka.record_offsets import partition_bounds

    try:
        asyncio.run(partition_bounds(config, [(topic, p) for p in range(PARTITIONS)], 5))
    except Exception:
        return False
    return True


WRITTEN_ON_B = 20
ON_B = 10**6
"""The applications' records on B after the failover: numbered from here, told apart from A's."""


async def produce(config: dict[str, str], topic: str, count: int) -> list[int]:
    """``count`` records per partition on B (value ``ON_B + n``); their numbers."""
    from pyconnect.kafka.clients import create_producer

    producer = create_producer(config, acks="all")
    await producer.start()
    try:
        for p in range(PARTITIONS):
            for n in range(count):
                await (await producer.send(topic, b"%d" % (ON_B + p * count + n), partition=p))
    finally:
        await producer.stop()
    return [ON_B + n for n in range(PARTITIONS * count)]


def check_failback(a: KafkaCluster, topic: str, report: dict[str, Any], written: list[int]) -> None:
    """Section 8 finished every step; each partition of A holds each of its records once and the records
    the applications wrote on B once (nothing echoed); the closing audit found exactly the orphans on A
    alone."""
    assert report["steps_left"] == [], report
    on_a = asyncio.run(read_all(admin_config(a), topic, PARTITIONS))
    for p, rows in on_a.items():
        values = [s for _, s in rows]
        assert len(values) == len(set(values)), f"a record of A-{p} is there twice"
    assert sorted(s for rows in on_a.values() for _, s in rows if s >= ON_B) == written
    audit = report["audit"]
    assert audit["ok"] and audit["a_only"] == report["orphans_total"] and audit["b_only"] == 0, audit
    print(
        f"runbook failback: orphans {report['orphans_total']}, copied back {len(written)} records, groups "
        f"returned {sorted(report['returned'])}, step times {report['timings_s']}\n{audit['verdict']}"
    )


def check_cutover(report: dict[str, Any], groups: list[str]) -> None:
    """Section 9 finished every step, moved every group exactly, and its audit passed."""
    assert report["steps_left"] == [], report
    assert report["audit"]["ok"] and set(report["audit"]["groups"]) == set(groups), report["audit"]
    by_group = {g["group"]: g for g in report["groups"]}
    for group in groups:
        entry = by_group[group]
        assert (entry["expected_reread"], entry["expected_skipped"], entry["status"]) == (0, 0, "verified"), (
            entry
        )
    print(
        f"runbook cutover: fenced to promoted {report['fenced_to_promoted_s']} s, step times {report['timings_s']}"
        f"\n{report['audit']['verdict']}"
    )


async def create_source_topic(config: dict[str, str], topic: str) -> None:
    from aiokafka.admin import NewTopic

    from pyconnect.kafka.clients import create_admin

    admin = create_admin(config)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
    finally:
        await admin.close()


def checkpointed(b: KafkaCluster, groups: list[str]) -> bool:
    """Every group has a checkpoint in ``A.checkpoints.internal`` on B."""

    async def read() -> bool:
        client = MirrorClient({**admin_config(b), "replication.policy.class": IDENTITY}, alias="B")
        async with client:
            found = [(await client.latest_checkpoints(g, "A"))[0] for g in groups]
        return all(found)

    try:
        return asyncio.run(read())
    except Exception:
        return False


def records_on_b(b: KafkaCluster, topic: str) -> bool:
    try:
        found = asyncio.run(read_all(admin_config(b), topic, PARTITIONS))
    except Exception:
        return False
    return all(found.values())
