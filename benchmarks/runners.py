"""The systems compared, each started the same way on the same two clusters (source A, target B).

- ``java-connect``: Java's MirrorSourceConnector on Java Connect distributed workers
  (``JavaConnectWorker``), the connector created through REST. The fairest comparison, and the
  reference of every ratio: pyconnect gets the identical connector JSON.
- ``pyconnect``: the pyconnect MirrorSourceConnector port on ``pyconnect distributed`` workers
  (``PyconnectWorker``), created through REST with the same JSON. Runs only when the plugin registry
  resolves the connector class; otherwise it reports ``MIRROR_UNAVAILABLE`` and no figure.
- ``java-dedicated``: Java MirrorMaker 2 in dedicated mode (``JavaMirrorMaker``) from an
  ``mm2.properties`` with the same flow settings (throughput only).

Each system mirrors under its own source alias, so the same source topic lands in a different
target topic per system (``<alias>.<topic>``). Workers group on the target cluster. Every process is
started with ``die_with_parent`` and stopped by PID. pyconnect workers run on the event loop
``make_workers`` is given (``uvloop`` or ``asyncio``), else on the default (uvloop);
:func:`event_loop_of` reads from a worker's ``/metrics`` which loop it really runs on.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pyconnect.testing.connect_worker import ConnectWorkerProcess
from pyconnect.testing.java_reference import JavaConnectWorker, JavaMirrorMaker
from pyconnect.testing.worker_process import PyconnectWorker

MIRROR_SOURCE = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
MIRROR_CHECKPOINT = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
BYTE_ARRAY = "org.apache.kafka.connect.converters.ByteArrayConverter"
MIRROR_UNAVAILABLE = "MirrorSourceConnector is not available in this build"
TARGET_ALIAS = "B"
JAVA_HEAP = "512m"

ALIASES = {"java-connect": "jc", "java-dedicated": "jd", "pyconnect": "py"}
PROFILE_ALIAS = "pp"
SCALE_OUT_ALIAS = "s2"
EVENT_LOOP_ALIASES = {"uvloop": "lu", "asyncio": "la"}
"""The source alias each pyconnect worker of the event-loop scenario mirrors under."""
_EVENT_LOOP_INFO = re.compile(r'^python_eventloop_info\{[^}]*implementation="([^"]+)"', re.MULTILINE)


def pyconnect_mirror_available() -> tuple[bool, str | None]:
    """Whether this build's plugin registry resolves MirrorSourceConnector; the reason when it does not."""
    try:
        from pyconnect.worker.plugins import PluginRegistry

        PluginRegistry.from_entry_points().resolve_connector(MIRROR_SOURCE)
    except Exception as exc:
        first = str(exc).split(",", 1)[0]
        return False, f"{MIRROR_UNAVAILABLE} ({type(exc).__name__}: {first})"
    return True, None


def remote_topic(system: str, topic: str) -> str:
    """The target topic of ``topic`` under DefaultReplicationPolicy for ``system``'s source alias."""
    return f"{ALIASES[system]}.{topic}"


def flow_settings(tasks_max: int) -> dict[str, str]:
    """The MirrorSourceConnector settings every system gets (besides aliases, bootstraps and topics)."""
    return {
        "tasks.max": str(tasks_max),
        "key.converter": BYTE_ARRAY,
        "value.converter": BYTE_ARRAY,
        "header.converter": BYTE_ARRAY,
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "sync.topic.acls.enabled": "false",
    }


PYCONNECT_MIRROR_SETTINGS: dict[str, str] = {}
"""Extra MirrorSourceConnector settings for pyconnect's connectors only (``--pyconnect-mirror-setting``,
e.g. ``pyconnect.mirror.raw.batches.enable=false`` to measure the record path)."""


def connector_config(
    system: str,
    source: str,
    target: str,
    topics: Sequence[str],
    tasks_max: int,
    *,
    alias: str | None = None,
) -> dict[str, str]:
    """The connector JSON posted to ``/connectors`` (identical but for the alias across Connect systems).

    ``alias`` overrides the system's source alias (the profiled drains mirror under ``PROFILE_ALIAS``).
    """
    return {
        "connector.class": MIRROR_SOURCE,
        "source.cluster.alias": alias or ALIASES[system],
        "target.cluster.alias": TARGET_ALIAS,
        "source.cluster.bootstrap.servers": source,
        "target.cluster.bootstrap.servers": target,
        "topics": ",".join(topics),
        **flow_settings(tasks_max),
        **(PYCONNECT_MIRROR_SETTINGS if system == "pyconnect" else {}),
    }


def checkpoint_connector_config(
    system: str,
    source: str,
    target: str,
    topics: Sequence[str],
    groups: Sequence[str],
    *,
    emit_interval_s: int,
    sync_interval_s: int,
) -> dict[str, str]:
    """MirrorCheckpointConnector JSON for the checkpoint-lag scenario (identical but for the alias).

    One task; checkpoints every ``emit_interval_s``; group offsets synced to the target every
    ``sync_interval_s``. The checkpoints topic ``<alias>.checkpoints.internal`` is created by the
    benchmark beforehand (LogAppendTime), so ``checkpoints.topic.replication.factor`` only matters
    if it were missing.
    """
    return {
        "connector.class": MIRROR_CHECKPOINT,
        "tasks.max": "1",
        "source.cluster.alias": ALIASES[system],
        "target.cluster.alias": TARGET_ALIAS,
        "source.cluster.bootstrap.servers": source,
        "target.cluster.bootstrap.servers": target,
        "topics": ",".join(topics),
        "groups": ",".join(groups),
        "key.converter": BYTE_ARRAY,
        "value.converter": BYTE_ARRAY,
        "header.converter": BYTE_ARRAY,
        "emit.checkpoints.interval.seconds": str(emit_interval_s),
        "sync.group.offsets.enabled": "true",
        "sync.group.offsets.interval.seconds": str(sync_interval_s),
        "checkpoints.topic.replication.factor": "1",
    }


def mm2_properties(source: str, target: str, topics: Sequence[str], tasks_max: int) -> dict[str, object]:
    """``mm2.properties`` for dedicated mode with the same flow settings as ``connector_config``."""
    src = ALIASES["java-dedicated"]
    props: dict[str, object] = {
        "clusters": f"{src}, {TARGET_ALIAS}",
        f"{src}.bootstrap.servers": source,
        f"{TARGET_ALIAS}.bootstrap.servers": target,
        f"{src}->{TARGET_ALIAS}.enabled": "true",
        f"{src}->{TARGET_ALIAS}.topics": ",".join(topics),
        f"{TARGET_ALIAS}->{src}.enabled": "false",
        "checkpoints.topic.replication.factor": 1,
        "heartbeats.topic.replication.factor": 1,
        "offset.storage.replication.factor": 1,
        "status.storage.replication.factor": 1,
        "config.storage.replication.factor": 1,
    }
    props.update(flow_settings(tasks_max))
    return props


def make_workers(
    system: str,
    target: str,
    base: Path,
    count: int,
    extra: Mapping[str, object] | None = None,
    *,
    event_loop: str | None = None,
) -> list[ConnectWorkerProcess]:
    """``count`` workers of one fresh Connect cluster grouped on ``target``, not started yet; pyconnect
    workers run on ``event_loop`` (``uvloop`` or ``asyncio``; None: the default)."""
    group = f"bench-{system}-{uuid.uuid4().hex[:6]}"
    cls: Any = JavaConnectWorker if system == "java-connect" else PyconnectWorker
    kwargs: dict[str, Any] = {"heap": JAVA_HEAP} if system == "java-connect" else {}
    if event_loop is not None:
        if system != "pyconnect":
            raise ValueError(f"{system} has no event loop to choose")
        kwargs["event_loop"] = event_loop
    return [
        cls(
            target,
            base / f"{system}-{i}",
            group_id=group,
            extra=dict(extra or {}),
            die_with_parent=True,
            **kwargs,
        )
        for i in range(count)
    ]


def make_dedicated(
    source: str, target: str, base: Path, topics: Sequence[str], tasks_max: int
) -> JavaMirrorMaker:
    return JavaMirrorMaker(
        mm2_properties(source, target, topics, tasks_max),
        base,
        clusters=[TARGET_ALIAS],
        heap=JAVA_HEAP,
        die_with_parent=True,
    )


def event_loop_of(worker: ConnectWorkerProcess) -> str | None:
    """The event loop a pyconnect worker runs on, from ``python_eventloop_info`` on its ``/metrics``;
    None when the worker does not expose it (a Java worker)."""
    status, body = worker.rest("GET", "/metrics", timeout=10)
    found = _EVENT_LOOP_INFO.search(body) if status == 200 and isinstance(body, str) else None
    return found.group(1) if found else None


def scrape(worker: ConnectWorkerProcess, path: str) -> str:
    """The text a worker answers at ``path`` ('' unless 200)."""
    status, body = worker.rest("GET", path, timeout=10)
    return body if status == 200 and isinstance(body, str) else ""


class Scraper:
    """While entered, GET ``path`` of ``worker`` every ``interval_s`` on a daemon thread (as a Prometheus
    server would), counting the answers in ``scrapes``; leaving stops the thread (bounded wait)."""

    def __init__(self, worker: ConnectWorkerProcess, path: str, interval_s: float) -> None:
        self._worker, self._path, self._interval_s = worker, path, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="scraper", daemon=True)
        self.scrapes = 0

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                if scrape(self._worker, self._path):
                    self.scrapes += 1
            except OSError:
                continue

    def __enter__(self) -> Scraper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=15)


def create_connector(worker: ConnectWorkerProcess, name: str, config: Mapping[str, str]) -> None:
    status, body = worker.rest("POST", "/connectors", {"name": name, "config": dict(config)})
    if status not in (200, 201):
        raise RuntimeError(f"creating connector {name} failed: HTTP {status}: {body}")


def delete_connector(worker: ConnectWorkerProcess, name: str, timeout: float = 30.0) -> None:
    worker.rest("DELETE", f"/connectors/{name}")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, _ = worker.rest("GET", f"/connectors/{name}")
        if status == 404:
            return
        time.sleep(0.25)


def running_tasks(
    worker: ConnectWorkerProcess, name: str, expected: int | None, live: set[str] | None = None
) -> dict[int, str] | None:
    """task id -> worker id once the connector and its tasks are RUNNING (on ``live`` workers), else None."""
    try:
        status, body = worker.rest("GET", f"/connectors/{name}/status", timeout=5)
    except OSError:
        return None
    if status != 200 or body["connector"]["state"] != "RUNNING" or not body["tasks"]:
        return None
    if expected is not None and len(body["tasks"]) != expected:
        return None
    if any(t["state"] != "RUNNING" for t in body["tasks"]):
        return None
    if live is not None and any(t["worker_id"] not in live for t in body["tasks"]):
        return None
    return {t["id"]: t["worker_id"] for t in body["tasks"]}


def wait_running(
    worker: ConnectWorkerProcess,
    name: str,
    expected: int | None,
    timeout: float,
    live: set[str] | None = None,
    interval: float = 0.1,
) -> dict[int, str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        worker.check_alive()
        got = running_tasks(worker, name, expected, live)
        if got:
            return got
        time.sleep(interval)
    raise TimeoutError(f"connector {name} not RUNNING with all tasks within {timeout:.0f}s")
