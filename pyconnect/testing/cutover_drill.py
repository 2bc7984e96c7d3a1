"""Repeated ``pyconnect cutover`` runs under load, each measured: the driver of the cutover benchmark
(``benchmarks/cutover.py``) and of the long integration test.

:func:`run_once` is one cutover of a flow A -> B on a fresh topic and fresh groups, on a running pyconnect
worker of the forward fleet (grouped on B). In order, every wait bounded:

1. the topic is created on A (``partitions``); the run's MirrorSourceConnector and
   MirrorCheckpointConnector are created on the worker (:func:`connector_configs`: IdentityReplicationPolicy,
   offset syncs on B, checkpoints every second, group offset sync off), named after the run;
2. :class:`~pyconnect.testing.cutover_traffic.CutoverTraffic` writes ``rate`` records/s to A while the
   ``groups`` read and commit there; once ``pyconnect failover plan`` of the run's groups succeeds (each
   is checkpointed on B) and ``load_s`` has passed since the traffic started, the cut:
3. the producer stops writing to A and the groups commit and leave (the operator stops the
   applications: no ACL fence, the command verifies A stays still for ``--quiet``); then
   ``pyconnect cutover execute`` runs (:func:`cut_over`): when ``kill_after`` names a step, the command
   is killed with SIGKILL as soon as its state file records that step, and ``cutover resume`` runs until
   one finishes by itself;
4. once its state file records ``promoted`` (the operator's signal: the command says so on stderr; its
   closing Spark audit runs after it and must pass) the producer switches to B and the groups resume
   there; after ``after_s`` the producer stops and every group reads B to its end;
5. measured (:class:`RunResult`): the write pause (see ``cutover_traffic``), ``fenced_to_promoted_s``
   of the command's final report (the fence step's completion to the promote's, recorded in the state
   file, so across kills), the records each group never got or got twice over A and B by sequence
   numbers, the same for B's copy of the topic (every record A and B acknowledged, read back from B),
   the kills and the resumes;
6. the run's connectors are deleted (the topic stays).

A run that fails keeps its reason in :attr:`RunResult.error` (its figures are then partial); nothing is
raised, so a series goes on. Processes: the commands are children of this process, each killed by its
own PID; nothing else is started or stopped here.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from connectors.mirror.cutover.state import STEPS
from pyconnect.kafka.clients import create_consumer
from pyconnect.kafka.log import TopicPartition
from pyconnect.kafka.sequenced_traffic import create_topics
from pyconnect.testing.connect_worker import ConnectWorkerProcess
from pyconnect.testing.cutover_traffic import CutoverTraffic, Ledger

IDENTITY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
KILL_STEPS = STEPS[:-1]
"""The steps a run's command is killed after (in rotation): a kill after the last one finds nothing to do."""
MAX_COMMANDS = 12
CHECKPOINTED_TIMEOUT_S = 120.0
CONNECTOR_TIMEOUT_S = 60.0
CLI_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class DrillSettings:
    rate: int = 5000
    """Records a second the producer writes, in all."""
    partitions: int = 4
    groups: int = 10
    load_s: float = 20.0
    """Traffic on A before the cut (at least: until every group is checkpointed on B)."""
    after_s: float = 3.0
    """Traffic on B after the switch."""
    quiet_s: float = 1.0
    """``cutover --quiet``."""
    command_timeout_s: float = 300.0
    """Bound of each cutover command (execute or resume)."""
    read_timeout_s: float = 180.0


@dataclass
class CommandOutcome:
    """What :func:`cut_over` saw: the steps it killed after, the commands run, the final report or the
    last failure."""

    kills: list[str] = field(default_factory=list)
    commands: int = 0
    report: dict[str, Any] | None = None
    failure: str | None = None
    wall_s: float = 0.0

    @property
    def resumes(self) -> int:
        return max(0, self.commands - 1)


@dataclass
class RunResult:
    run: str
    quiet_s: float
    kill_after: str | None
    kills: list[str] = field(default_factory=list)
    resumes: int = 0
    rate_on_a: float | None = None
    records_on_a: int = 0
    records_on_b: int = 0
    pause_s: float | None = None
    fenced_to_promoted_s: float | None = None
    command_s: float | None = None
    step_times_s: dict[str, float] = field(default_factory=dict)
    promoted: bool = False
    groups: dict[str, dict[str, int]] = field(default_factory=dict)
    lost: int | None = None
    duplicates: int | None = None
    copy_lost: int | None = None
    copy_duplicates: int | None = None
    load_1m: float | None = None
    """The machine's 1-minute load average at the cut (the command competes for the cores)."""
    audit: str | None = None
    """The verdict line of the command's closing audit."""
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def kill_plan(runs: int, every: int = 2, steps: Sequence[str] = KILL_STEPS) -> list[str | None]:
    """Which step each of ``runs`` runs is killed after: every ``every``-th run (the second, the fourth,
    ...), the steps in rotation; ``None``: not killed. ``every`` 0 kills none."""
    plan: list[str | None] = []
    for i in range(runs):
        killed = every > 0 and i % every == every - 1
        plan.append(steps[(i // every) % len(steps)] if killed else None)
    return plan


def connector_configs(
    a: str,
    b: str,
    topic: str,
    groups: str,
    *,
    aliases: tuple[str, str] = ("A", "B"),
    policy: str = IDENTITY,
    checkpointed: str | None = None,
) -> dict[str, dict[str, str]]:
    """The ``source`` and ``checkpoint`` connector configs of the flow ``aliases`` (source, target) from
    bootstrap ``a`` to ``b`` for ``topic`` and the groups matching the regex ``groups``: ``policy``,
    offset syncs on the target, byte-array converters, one task, fast refreshes, no ACL, config or
    heartbeat sync, no group offset sync; ``checkpointed``: the checkpoint connector's topics (``topic``
    by default)."""
    common = {
        "source.cluster.alias": aliases[0],
        "target.cluster.alias": aliases[1],
        "source.cluster.bootstrap.servers": a,
        "target.cluster.bootstrap.servers": b,
        "offset-syncs.topic.location": "target",
        "replication.policy.class": policy,
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
        "tasks.max": "1",
    }
    return {
        "source": {
            **common,
            "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
            "topics": topic,
            "replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1",
            "refresh.topics.interval.seconds": "2",
            "sync.topic.acls.enabled": "false",
            "sync.topic.configs.enabled": "false",
            "heartbeats.replication.enabled": "false",
            "consumer.isolation.level": "read_committed",
        },
        "checkpoint": {
            **common,
            "connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
            "groups": groups,
            "topics": checkpointed or topic,
            "emit.checkpoints.interval.seconds": "1",
            "refresh.groups.interval.seconds": "1",
            "sync.group.offsets.enabled": "false",
            "checkpoints.topic.replication.factor": "1",
        },
    }


def cli(*args: str, timeout: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """``python -m pyconnect ARGS`` to its end (bounded)."""
    return subprocess.run(
        [sys.executable, "-m", "pyconnect", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _done(state: Path) -> list[str]:
    try:
        return list(json.loads(state.read_text())["done"])
    except (OSError, ValueError, KeyError):
        return []


def cut_over(
    args: Sequence[str],
    state: Path,
    kill_after: Collection[str] = (),
    *,
    max_commands: int = MAX_COMMANDS,
    timeout_s: float = 300.0,
    on_promoted: Callable[[], None] | None = None,
) -> CommandOutcome:
    """``pyconnect cutover execute ARGS --state STATE --json``, then ``resume`` after each kill: a command
    is killed (SIGKILL, by its PID) as soon as the state file records a step of ``kill_after`` it had not
    recorded when the command started (each such step once), until one finishes by itself. ``kills``
    names the last step recorded at each kill (a later one than asked when a step completes at once, as
    ``fenced`` does without principals). Each command is bounded by ``timeout_s`` (then killed and
    reported as a failure). ``on_promoted`` is called once, as soon as the state file records ``promoted``
    (the operator's signal to start the applications on B; the closing audit runs after it)."""
    outcome, action, started = CommandOutcome(), "execute", time.monotonic()
    killed: set[str] = set()
    signalled = False

    def watch(done: list[str]) -> None:
        nonlocal signalled
        if on_promoted is not None and not signalled and "promoted" in done:
            signalled = True
            on_promoted()

    for _ in range(max_commands):
        seen = set(_done(state))
        process = subprocess.Popen(
            [sys.executable, "-m", "pyconnect", "cutover", action, *args, "--state", str(state), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        outcome.commands += 1
        deadline = time.monotonic() + timeout_s
        while process.poll() is None and time.monotonic() < deadline:
            done = _done(state)
            watch(done)
            fresh = [s for s in done if s not in seen and s in kill_after and s not in killed]
            if fresh:
                process.send_signal(signal.SIGKILL)
                killed.update(fresh)
                outcome.kills.append(done[-1])
                break
            time.sleep(0.01)
        if process.poll() is None and time.monotonic() >= deadline:
            process.send_signal(signal.SIGKILL)
            process.communicate(timeout=30)
            outcome.failure = f"cutover {action} did not finish within {timeout_s:.0f} s"
            break
        out, err = process.communicate(timeout=60)
        watch(_done(state))
        if process.returncode == 0:
            outcome.report = json.loads(out)
            break
        if process.returncode != -signal.SIGKILL:
            outcome.failure = f"cutover {action} exited {process.returncode}: {err.strip()[-600:]}"
            break
        action = "resume"
    else:
        outcome.failure = (
            f"the cutover did not finish in {max_commands} commands (killed after {outcome.kills})"
        )
    outcome.wall_s = round(time.monotonic() - started, 3)
    return outcome


async def read_sequences(bootstrap: str, topic: str, partitions: int, timeout_s: float) -> Ledger:
    """Every committed record of ``topic`` up to its end offsets, as a ledger of sequence numbers."""
    consumer = create_consumer(
        {"bootstrap.servers": bootstrap}, enable_auto_commit=False, isolation_level="read_committed"
    )
    await consumer.start()
    ledger = Ledger()
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if all([await consumer.position(tp) >= ends[tp] for tp in tps]):
                return ledger
            for tp, messages in (await consumer.getmany(timeout_ms=500)).items():
                ledger.add(tp.partition, [int(m.value) for m in messages])
        raise TimeoutError(f"reading {topic} did not reach its end within {timeout_s:.0f} s")
    finally:
        await consumer.stop()


def _wait(what: str, probe: Any, timeout_s: float, interval: float = 0.5) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if probe():
            return
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def _state_of(worker: ConnectWorkerProcess, connector: str) -> str | None:
    code, body = worker.rest("GET", f"/connectors/{connector}/status")
    return body["connector"]["state"] if code == 200 else None


def run_once(
    worker: ConnectWorkerProcess,
    a: str,
    b: str,
    name: str,
    settings: DrillSettings,
    kill_after: str | None,
    work_dir: Path,
) -> RunResult:
    """One measured cutover named ``name`` (see the module docstring)."""
    result = RunResult(name, settings.quiet_s, kill_after)
    topic, groups = f"{name}-orders", [f"{name}-g{i}" for i in range(settings.groups)]
    names = {"source": f"{name}-source", "checkpoint": f"{name}-checkpoint"}
    asyncio.run(create_topics(a, [topic], settings.partitions, 1))
    traffic = CutoverTraffic(
        {"bootstrap.servers": a}, {"bootstrap.servers": b}, topic, settings.partitions, settings.rate, groups
    )
    try:
        for role, config in connector_configs(a, b, topic, f"{name}-g.*").items():
            code, body = worker.rest("POST", "/connectors", {"name": names[role], "config": config})
            if code != 201:
                raise RuntimeError(f"creating {names[role]}: HTTP {code}: {body}")
        _wait("the source connector RUNNING", lambda: _state_of(worker, names["source"]) == "RUNNING", 60)
        traffic.start()
        started = time.monotonic()
        flow = ["--url", worker.rest_url, "--connector", names["checkpoint"]]
        group_args = [x for g in groups for x in ("--group", g)]
        _wait(
            "every group checkpointed on B",
            lambda: cli("failover", "plan", *flow, *group_args).returncode == 0,
            CHECKPOINTED_TIMEOUT_S,
            interval=1.0,
        )
        time.sleep(max(0.0, settings.load_s - (time.monotonic() - started)))
        traffic.prepare_b()
        result.load_1m = round(os.getloadavg()[0], 2)
        traffic.stop_on_a()
        if traffic.errors:
            raise RuntimeError(f"traffic on A: {traffic.errors[:3]}")
        outcome = cut_over(
            [*flow, "--source-connector", names["source"], *group_args, "--quiet", f"{settings.quiet_s:g}"],
            work_dir / f"{name}-cutover.json",
            () if kill_after is None else (kill_after,),
            timeout_s=settings.command_timeout_s,
            on_promoted=traffic.switch_to_b,
        )
        result.kills, result.resumes, result.command_s = outcome.kills, outcome.resumes, outcome.wall_s
        report = outcome.report or {}
        result.promoted = "promoted" in report.get("steps_done", [])
        result.fenced_to_promoted_s = report.get("fenced_to_promoted_s")
        result.step_times_s = dict(report.get("timings_s", {}))
        if not result.promoted:
            raise RuntimeError(outcome.failure or f"the cutover ended without promoting: {report}")
        audit = report.get("audit") or {}
        result.audit = str(audit.get("verdict", "not audited"))
        if not audit.get("ok"):
            raise RuntimeError(f"the cutover's audit did not pass: {result.audit}")
        time.sleep(settings.after_s)
        traffic.stop_on_b(settings.read_timeout_s)
        if traffic.errors:
            raise RuntimeError(f"traffic: {traffic.errors[:3]}")
        result.pause_s = None if traffic.pause_s is None else round(traffic.pause_s, 3)
        rate = traffic.rate_on_a()
        result.rate_on_a = None if rate is None else round(rate, 1)
        result.records_on_a = sum(traffic.produced_on_a)
        result.records_on_b = sum(traffic.produced) - result.records_on_a
        verdicts = traffic.verdicts()
        result.groups = {
            g: {"lost": lost, "duplicates": dup, "read_on_a": app.read["a"], "read_on_b": app.read["b"]}
            for (g, (lost, dup)), app in zip(verdicts.items(), traffic.groups.values(), strict=True)
        }
        result.lost = sum(v[0] for v in verdicts.values())
        result.duplicates = sum(v[1] for v in verdicts.values())
        copy = asyncio.run(read_sequences(b, topic, settings.partitions, settings.read_timeout_s))
        result.copy_lost, result.copy_duplicates = copy.verdict(traffic.produced)
    except Exception as exc:
        result.error = f"{type(exc).__name__}: {exc}"[:800]
    finally:
        traffic.close()
        for connector in names.values():
            try:
                worker.rest("DELETE", f"/connectors/{connector}")
            except OSError:
                pass
    return result
