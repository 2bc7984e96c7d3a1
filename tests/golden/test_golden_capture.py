"""The bytes the Java jars wrote (captured by tests/golden/capture.py), checked against the spec.

No Kafka here: these tests read the committed data files. They pin what Java 4.3.1 writes, so the
codecs that follow can be tested against the same files. The small stdlib decoders below
(``Reader``, ``decode_*``) are the reference reading of spec §3 (connect-runtime) and
§4 (mirror-connectors); re-encoding must give back the exact captured bytes.
"""

from __future__ import annotations

import base64
import json
import re
import struct
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from pyconnect.kafka.batch_sender import java_partition

GOLDEN = Path(__file__).resolve().parent
KAFKA_VERSION = "4.3.1"
CONNECTOR = "golden-hb"
PAUSED_CONNECTOR = "golden-hb-paused"


# --------------------------------------------------------------------------------------------------
# readers of the Kafka protocol primitives (big-endian, non-compact)


class Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _take(self, fmt: str) -> int:
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value

    def int16(self) -> int:
        return self._take(">h")

    def int32(self) -> int:
        return self._take(">i")

    def int64(self) -> int:
        return self._take(">q")

    def string(self) -> str:
        n = self.int16()
        assert n >= 0, "STRING is not nullable"
        raw = self.data[self.pos : self.pos + n]
        assert len(raw) == n, "truncated STRING"
        self.pos += n
        return raw.decode("utf-8")

    def nullable_bytes(self) -> bytes | None:
        n = self.int32()
        if n < 0:
            return None
        raw = self.data[self.pos : self.pos + n]
        self.pos += n
        return raw

    def at_end(self) -> bool:
        return self.pos == len(self.data)


def w_string(s: str) -> bytes:
    raw = s.encode()
    return struct.pack(">h", len(raw)) + raw


# --------------------------------------------------------------------------------------------------
# Connect group protocol (connect-runtime.md §3.3, §3.4)


def decode_connector_assignments(r: Reader) -> dict[str, list[int]] | None:
    count = r.int32()
    if count < 0:
        return None
    out: dict[str, list[int]] = {}
    for _ in range(count):
        name = r.string()
        out[name] = [r.int32() for _ in range(r.int32())]
    return out


def encode_connector_assignments(items: dict[str, list[int]] | None) -> bytes:
    if items is None:
        return struct.pack(">i", -1)
    out = struct.pack(">i", len(items))
    for name, tasks in items.items():
        out += w_string(name) + struct.pack(">i", len(tasks)) + b"".join(struct.pack(">i", t) for t in tasks)
    return out


def decode_assignment(data: bytes) -> dict[str, Any]:
    r = Reader(data)
    a: dict[str, Any] = {
        "version": r.int16(),
        "error": r.int16(),
        "leader": r.string(),
        "leader_url": r.string(),
        "config_offset": r.int64(),
        "assignment": decode_connector_assignments(r),
    }
    if a["version"] >= 1:
        a["revoked"] = decode_connector_assignments(r)
        a["delay"] = r.int32()
    assert r.at_end(), f"{len(data) - r.pos} trailing bytes after a V{a['version']} assignment"
    return a


def encode_assignment(a: dict[str, Any]) -> bytes:
    out = struct.pack(">hh", a["version"], a["error"]) + w_string(a["leader"]) + w_string(a["leader_url"])
    out += struct.pack(">q", a["config_offset"]) + encode_connector_assignments(a["assignment"])
    if a["version"] >= 1:
        out += encode_connector_assignments(a["revoked"]) + struct.pack(">i", a["delay"])
    return out


def decode_metadata(data: bytes) -> dict[str, Any]:
    r = Reader(data)
    m: dict[str, Any] = {"version": r.int16(), "url": r.string(), "config_offset": r.int64()}
    if m["version"] >= 1:
        raw = r.nullable_bytes()
        m["allocation_bytes"] = raw
        m["allocation"] = None if raw is None else decode_assignment(raw)
    assert r.at_end(), f"{len(data) - r.pos} trailing bytes after V{m['version']} metadata"
    return m


def encode_metadata(m: dict[str, Any]) -> bytes:
    out = struct.pack(">h", m["version"]) + w_string(m["url"]) + struct.pack(">q", m["config_offset"])
    if m["version"] >= 1:
        alloc = m["allocation"]
        if alloc is None:
            out += struct.pack(">i", -1)
        else:
            raw = encode_assignment(alloc)
            out += struct.pack(">i", len(raw)) + raw
    return out


# --------------------------------------------------------------------------------------------------
# MirrorMaker 2 records (mirror-connectors.md §4)


def decode_offset_sync(key: bytes, value: bytes) -> dict[str, Any]:
    k, v = Reader(key), Reader(value)
    out = {"topic": k.string(), "partition": k.int32(), "upstreamOffset": v.int64(), "offset": v.int64()}
    assert k.at_end() and v.at_end(), "OffsetSync has exactly these fields"
    return out


def encode_offset_sync(s: dict[str, Any]) -> tuple[bytes, bytes]:
    return w_string(s["topic"]) + struct.pack(">i", s["partition"]), struct.pack(
        ">qq", s["upstreamOffset"], s["offset"]
    )


def decode_checkpoint(key: bytes, value: bytes) -> dict[str, Any]:
    k, v = Reader(key), Reader(value)
    out = {
        "group": k.string(),
        "topic": k.string(),
        "partition": k.int32(),
        "version": v.int16(),
        "upstreamOffset": v.int64(),
        "offset": v.int64(),
        "metadata": v.string(),
    }
    assert k.at_end() and v.at_end(), "Checkpoint v0 has exactly these fields"
    return out


def encode_checkpoint(c: dict[str, Any]) -> tuple[bytes, bytes]:
    key = w_string(c["group"]) + w_string(c["topic"]) + struct.pack(">i", c["partition"])
    value = struct.pack(">hqq", c["version"], c["upstreamOffset"], c["offset"]) + w_string(c["metadata"])
    return key, value


def decode_heartbeat(key: bytes, value: bytes) -> dict[str, Any]:
    k, v = Reader(key), Reader(value)
    out = {
        "sourceClusterAlias": k.string(),
        "targetClusterAlias": k.string(),
        "version": v.int16(),
        "timestamp": v.int64(),
    }
    assert k.at_end() and v.at_end(), "Heartbeat v0 has exactly these fields"
    return out


def encode_heartbeat(h: dict[str, Any]) -> tuple[bytes, bytes]:
    key = w_string(h["sourceClusterAlias"]) + w_string(h["targetClusterAlias"])
    return key, struct.pack(">hq", h["version"], h["timestamp"])


# --------------------------------------------------------------------------------------------------
# loading


@cache
def load(name: str) -> dict[str, Any]:
    return json.loads((GOLDEN / name).read_text())


def raw(blob: dict[str, Any] | None) -> bytes | None:
    return None if blob is None else base64.b64decode(blob["base64"])


def text(blob: dict[str, Any] | None) -> str | None:
    return None if blob is None else raw(blob).decode("utf-8")


def connect() -> dict[str, Any]:
    return load("connect_internal_topics.json")


def records(role: str, step: str | None = None) -> list[dict[str, Any]]:
    return [r for r in connect()["records"] if r["role"] == role and (step is None or r["step"] == step)]


def by_key(role: str, key: str, step: str | None = None) -> list[dict[str, Any]]:
    return [r for r in records(role, step) if text(r["key"]) == key]


def value_json(r: dict[str, Any]) -> Any:
    return None if r["value"] is None else json.loads(text(r["value"]))


def compact(obj: Any) -> str:
    """Jackson's ``writeValueAsBytes`` for these values (connect-runtime.md §2.1)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------------------------------
# Connect internal topics (connect-runtime.md §2)


def test_capture_metadata() -> None:
    data = connect()
    assert data["kafka_version"] == KAFKA_VERSION
    steps = [s["step"] for s in data["steps"]]
    assert steps == [
        "worker-started",
        "connector-created",
        "worker-2-joined",
        "paused",
        "resumed",
        "stopped",
        "offsets-altered",
        "offsets-reset",
        "resumed-after-stop",
        "reconfigured",
        "restarted",
        "created-paused",
        "deleted",
    ]
    assert {r["step"] for r in data["records"]} <= set(steps)
    assert {r["role"] for r in data["records"]} == {"config", "offset", "status"}


CONFIG_KEY = re.compile(
    r"^(connector-.+|target-state-.+|task-.+-\d+|commit-.+|restart-connector-.+|tasks-fencing-.+|session-key|logger-cluster-.+)$"
)


def test_config_topic_is_one_partition_with_spec_keys() -> None:
    config = records("config")
    assert config, "no config records captured"
    assert {r["partition"] for r in config} == {0}
    assert [r["offset"] for r in config] == list(range(len(config)))
    for r in config:
        assert CONFIG_KEY.match(text(r["key"])), text(r["key"])
        assert r["headers"] == []


def test_every_internal_value_is_compact_jackson_json() -> None:
    for r in connect()["records"]:
        if r["value"] is None:
            continue
        value = text(r["value"])
        assert compact(json.loads(value)) == value, value
        if r["role"] == "offset":
            assert compact(json.loads(text(r["key"]))) == text(r["key"])


def test_session_key_record() -> None:
    (first, *_) = by_key("config", "session-key", "worker-started")
    value = value_json(first)
    assert list(value) == ["key", "algorithm", "creation-timestamp"]
    assert value["algorithm"] == "HmacSHA256"
    assert len(base64.b64decode(value["key"], validate=True)) == 32
    assert isinstance(value["creation-timestamp"], int) and value["creation-timestamp"] > 1_600_000_000_000
    assert text(first["value"]).startswith('{"key":"') and value["key"].endswith("=")


def test_connector_config_record() -> None:
    (record,) = by_key("config", f"connector-{CONNECTOR}", "connector-created")
    value = value_json(record)
    assert list(value) == ["properties"]
    props = value["properties"]
    assert props["name"] == CONNECTOR
    assert props["connector.class"] == "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
    assert props["tasks.max"] == "1"
    assert all(isinstance(v, str) for v in props.values())
    assert props["source.cluster.bootstrap.servers"] == props["target.cluster.bootstrap.servers"]


def test_task_configs_then_commit() -> None:
    created = [text(r["key"]) for r in records("config", "connector-created")]
    assert created == [f"connector-{CONNECTOR}", f"task-{CONNECTOR}-0", f"commit-{CONNECTOR}"]
    (task,) = by_key("config", f"task-{CONNECTOR}-0", "connector-created")
    props = value_json(task)["properties"]
    assert props["task.class"] == "org.apache.kafka.connect.mirror.MirrorHeartbeatTask"
    assert props["emit.heartbeats.interval.seconds"] == "1"
    (commit,) = by_key("config", f"commit-{CONNECTOR}", "connector-created")
    assert text(commit["value"]) == '{"tasks":1}'


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ("paused", '{"state":"PAUSED","state.v2":"PAUSED"}'),
        ("resumed", '{"state":"STARTED","state.v2":"STARTED"}'),
        ("stopped", '{"state":"PAUSED","state.v2":"STOPPED"}'),
        ("resumed-after-stop", '{"state":"STARTED","state.v2":"STARTED"}'),
    ],
)
def test_target_state_records(step: str, expected: str) -> None:
    (record,) = by_key("config", f"target-state-{CONNECTOR}", step)
    assert text(record["value"]) == expected


def test_stop_writes_zero_tasks_before_the_stopped_target_state() -> None:
    keys = [(text(r["key"]), text(r["value"])) for r in records("config", "stopped")]
    assert keys == [
        (f"commit-{CONNECTOR}", '{"tasks":0}'),
        (f"target-state-{CONNECTOR}", '{"state":"PAUSED","state.v2":"STOPPED"}'),
    ]


def test_resume_after_stop_republishes_task_configs() -> None:
    keys = [text(r["key"]) for r in records("config", "resumed-after-stop")]
    assert keys == [f"target-state-{CONNECTOR}", f"task-{CONNECTOR}-0", f"commit-{CONNECTOR}"]


def test_reconfigure_rewrites_connector_then_tasks() -> None:
    keys = [text(r["key"]) for r in records("config", "reconfigured")]
    assert keys == [f"connector-{CONNECTOR}", f"task-{CONNECTOR}-0", f"commit-{CONNECTOR}"]
    (task,) = by_key("config", f"task-{CONNECTOR}-0", "reconfigured")
    assert value_json(task)["properties"]["emit.heartbeats.interval.seconds"] == "2"


def test_restart_request_record() -> None:
    (record,) = by_key("config", f"restart-connector-{CONNECTOR}", "restarted")
    assert text(record["value"]) == '{"include-tasks":true,"only-failed":false}'


def test_initial_state_paused_writes_target_state_first() -> None:
    keys = [(text(r["key"]), text(r["value"])[:40]) for r in records("config", "created-paused")]
    assert keys[0] == (f"target-state-{PAUSED_CONNECTOR}", '{"state":"PAUSED","state.v2":"PAUSED"}')
    assert keys[1][0] == f"connector-{PAUSED_CONNECTOR}"
    assert len(keys) == 2, "a connector created PAUSED publishes no task configs"


def test_delete_tombstones_connector_then_target_state_only() -> None:
    deleted = [(text(r["key"]), r["value"]) for r in records("config", "deleted")]
    assert deleted == [
        (f"connector-{CONNECTOR}", None),
        (f"target-state-{CONNECTOR}", None),
        (f"connector-{PAUSED_CONNECTOR}", None),
        (f"target-state-{PAUSED_CONNECTOR}", None),
    ]


def test_offset_records_key_bytes_partition_and_value() -> None:
    offsets = records("offset")
    assert offsets
    expected_key = '["golden-hb",{"sourceClusterAlias":"A","targetClusterAlias":"B"}]'
    for r in offsets:
        assert text(r["key"]) == expected_key
        assert r["partition"] == java_partition(raw(r["key"]), 25)
    assert text(records("offset", "connector-created")[0]["value"]) == '{"offset":0}'
    (altered,) = records("offset", "offsets-altered")
    assert text(altered["value"]) == '{"offset":0}'
    (reset,) = records("offset", "offsets-reset")
    assert reset["value"] is None, "DELETE /offsets writes a tombstone"


STATUS_KEY = re.compile(r"^status-(connector-.+|task-.+-\d+|topic-[^:]+:connector-.+)$")
STATES = {"UNASSIGNED", "RUNNING", "PAUSED", "FAILED", "RESTARTING", "STOPPED"}


def test_status_records_shapes_and_partitions() -> None:
    workers = {u.removeprefix("http://").rstrip("/") for u in connect()["worker"]["worker_urls"]}
    for r in records("status"):
        key = text(r["key"])
        assert STATUS_KEY.match(key), key
        assert r["partition"] == java_partition(raw(r["key"]), 5)
        value = value_json(r)
        if value is None:
            continue
        if key.startswith("status-topic-"):
            assert list(value) == ["topic"]
            assert list(value["topic"]) == ["name", "connector", "task", "discoverTimestamp"]
            assert value["topic"]["name"] == "heartbeats" and value["topic"]["connector"] == CONNECTOR
            continue
        assert list(value) == ["state", "trace", "worker_id", "generation", "version"]
        assert value["state"] in STATES
        assert value["trace"] is None
        assert value["worker_id"] in workers
        assert isinstance(value["generation"], int)
        # the plugin version (newer than the spec's snapshot): set while an instance exists, else null
        assert value["version"] in {KAFKA_VERSION, None}
        if value["state"] in {"RUNNING", "PAUSED", "STOPPED"}:
            assert value["version"] == KAFKA_VERSION


def test_status_lifecycle() -> None:
    def states(step: str, key: str) -> list[str | None]:
        return [None if r["value"] is None else value_json(r)["state"] for r in by_key("status", key, step)]

    assert states("connector-created", f"status-connector-{CONNECTOR}") == ["RUNNING"]
    assert states("connector-created", f"status-task-{CONNECTOR}-0") == ["RUNNING"]
    assert states("paused", f"status-task-{CONNECTOR}-0") == ["PAUSED"]
    assert states("stopped", f"status-connector-{CONNECTOR}") == ["STOPPED"]
    assert states("stopped", f"status-task-{CONNECTOR}-0") == ["UNASSIGNED", None]
    assert states("restarted", f"status-connector-{CONNECTOR}") == ["UNASSIGNED", "RESTARTING", "RUNNING"]
    assert states("created-paused", f"status-connector-{PAUSED_CONNECTOR}") == ["PAUSED"]
    assert states("deleted", f"status-connector-{PAUSED_CONNECTOR}")[-1] is None


def test_rest_offsets_entities() -> None:
    calls = [c for c in connect()["rest"] if c["path"] == f"/connectors/{CONNECTOR}/offsets"]
    get_stopped = next(c for c in calls if c["method"] == "GET" and c["step"] == "stopped")
    assert get_stopped["response"] == {
        "offsets": [
            {"partition": {"sourceClusterAlias": "A", "targetClusterAlias": "B"}, "offset": {"offset": 0}}
        ]
    }
    patch = next(c for c in calls if c["method"] == "PATCH")
    assert patch["response"] == {"message": "The offsets for this connector have been altered successfully"}
    delete = next(c for c in calls if c["method"] == "DELETE")
    assert delete["response"] == {"message": "The offsets for this connector have been reset successfully"}
    get_reset = next(c for c in calls if c["method"] == "GET" and c["step"] == "offsets-reset")
    assert get_reset["response"] == {"offsets": []}


# --------------------------------------------------------------------------------------------------
# group protocol bytes (connect-runtime.md §3)

PROTOCOL_NAME = {"sessioned": "sessioned", "compatible": "compatible", "eager": "default"}
PROTOCOL_VERSION = {"sessioned": 2, "compatible": 1, "eager": 0}


def group_captures() -> list[dict[str, Any]]:
    return load("connect_group_protocol.json")["captures"]


def test_group_captures_cover_the_three_protocols() -> None:
    seen = {(c["connect_protocol_setting"], len(c["members"])) for c in group_captures()}
    assert seen == {(p, n) for p in PROTOCOL_NAME for n in (1, 2)}


@pytest.mark.parametrize(
    "capture", group_captures(), ids=lambda c: f"{c['connect_protocol_setting']}-{len(c['members'])}"
)
def test_group_member_bytes(capture: dict[str, Any]) -> None:
    setting = capture["connect_protocol_setting"]
    version = PROTOCOL_VERSION[setting]
    assert capture["protocol_type"] == "connect"
    assert capture["protocol"] == PROTOCOL_NAME[setting]
    assert capture["state"] == "Stable" and capture["error_code"] == 0
    member_ids = {m["member_id"] for m in capture["members"]}
    urls = set(capture["worker_urls"])
    url_of: dict[str, str] = {}
    leaders = set()
    for member in capture["members"]:
        metadata_bytes = bytes.fromhex(member["metadata_hex"])
        assert base64.b64decode(member["metadata_base64"]) == metadata_bytes
        meta = decode_metadata(metadata_bytes)
        assert meta["version"] == version
        assert meta["url"] in urls and meta["url"].endswith("/")
        host_port = meta["url"].removeprefix("http://").rstrip("/")
        assert member["client_id"] == f"connect-{host_port}"
        assert member["member_id"].startswith(f"connect-{host_port}-")
        assert meta["config_offset"] >= 0
        assert encode_metadata(meta) == metadata_bytes
        url_of[member["member_id"]] = meta["url"]
        if version >= 1 and meta["allocation"] is not None:
            assert meta["allocation"]["version"] == version
            assert meta["allocation"]["leader"] in member_ids
            assert encode_assignment(meta["allocation"]) == meta["allocation_bytes"]

        assignment_bytes = bytes.fromhex(member["assignment_hex"])
        a = decode_assignment(assignment_bytes)
        assert a["version"] == version and a["error"] == 0
        assert a["config_offset"] == meta["config_offset"]
        assert encode_assignment(a) == assignment_bytes
        if version >= 1:
            assert a["revoked"] == {} and a["delay"] == 0, "Java writes empty arrays, not null"
            assert a["assignment"] is not None
        leaders.add((a["leader"], a["leader_url"]))
    (leader, leader_url) = leaders.pop()
    assert not leaders, "every member names the same leader"
    assert leader in member_ids and url_of[leader] == leader_url


def test_eager_assignments_round_robin_over_sorted_members() -> None:
    (capture,) = [
        c for c in group_captures() if c["connect_protocol_setting"] == "eager" and len(c["members"]) == 2
    ]
    assigned = {
        m["member_id"]: decode_assignment(bytes.fromhex(m["assignment_hex"]))["assignment"]
        for m in capture["members"]
    }
    first, second = sorted(assigned)
    assert assigned[first] == {"hb-eager": [-1]}
    assert assigned[second] == {"hb-eager": [0]}


def test_single_worker_holds_connector_and_task() -> None:
    for c in group_captures():
        if len(c["members"]) != 1:
            continue
        (member,) = c["members"]
        connector = f"hb-{c['connect_protocol_setting']}" if c["group_id"] != "golden-connect" else CONNECTOR
        a = decode_assignment(bytes.fromhex(member["assignment_hex"]))
        meta = decode_metadata(bytes.fromhex(member["metadata_hex"]))
        if c["connect_protocol_setting"] == "eager":
            assert a["assignment"] == {connector: [-1, 0]}
        else:
            # incremental: the last round only adds the task; the connector came in an earlier round
            holding = defaultdict(list)
            for source in (meta["allocation"]["assignment"], a["assignment"]):
                for name, tasks in source.items():
                    holding[name] += tasks
            assert sorted(holding[connector]) == [-1, 0]


def test_metadata_example_of_the_spec_round_trips() -> None:
    example = bytes.fromhex("0002000F687474703A2F2F77313A383038332F000000000000002AFFFFFFFF")
    meta = decode_metadata(example)
    assert meta == {
        "version": 2,
        "url": "http://w1:8083/",
        "config_offset": 42,
        "allocation_bytes": None,
        "allocation": None,
    }
    assert encode_metadata(meta) == example


# --------------------------------------------------------------------------------------------------
# MirrorMaker 2 (mirror-connectors.md §0.1, §3.7, §4)


def mm2() -> dict[str, Any]:
    return load("mm2_records.json")


def mm2_records(role: str) -> list[dict[str, Any]]:
    return [r for r in mm2()["records"] if r["role"] == role]


def test_mm2_capture_topics() -> None:
    topics = mm2()["topics"]
    assert topics["offset-syncs"] == {"cluster": "A", "topic": "mm2-offset-syncs.B.internal"}
    assert topics["checkpoints"] == {"cluster": "B", "topic": "A.checkpoints.internal"}
    assert topics["mirrored-topic"] == {"cluster": "B", "topic": "A.golden-orders"}
    for role in ("offset-syncs", "checkpoints", "heartbeats-on-A", "heartbeats-on-B", "mirrored-topic"):
        assert mm2_records(role), f"no {role} records captured"
    for role in ("offset-syncs", "checkpoints", "heartbeats-on-A", "heartbeats-on-B"):
        assert {r["partition"] for r in mm2_records(role)} == {0}
        assert all(r["headers"] == [] for r in mm2_records(role))


def test_offset_syncs_decode() -> None:
    syncs = []
    for r in mm2_records("offset-syncs"):
        key, value = raw(r["key"]), raw(r["value"])
        s = decode_offset_sync(key, value)
        assert encode_offset_sync(s) == (key, value)
        assert len(value) == 16 and len(key) == 2 + len(s["topic"]) + 4
        syncs.append(s)
    assert {s["topic"] for s in syncs} <= {"golden-orders", "heartbeats"}
    for p in (0, 1):
        first = next(s for s in syncs if s["topic"] == "golden-orders" and s["partition"] == p)
        assert (first["upstreamOffset"], first["offset"]) == (0, 0)
    for s in syncs:
        # source and target topics start empty, so a record keeps its offset
        assert s["offset"] == s["upstreamOffset"]


def test_checkpoints_decode_and_translate() -> None:
    committed = mm2()["committed_on_A"]
    syncs = [decode_offset_sync(raw(r["key"]), raw(r["value"])) for r in mm2_records("offset-syncs")]
    latest: dict[int, dict[str, Any]] = {}
    for r in mm2_records("checkpoints"):
        key, value = raw(r["key"]), raw(r["value"])
        c = decode_checkpoint(key, value)
        assert encode_checkpoint(c) == (key, value)
        assert c["group"] == "golden-group"
        assert c["topic"] == "A.golden-orders"
        assert c["version"] == 0
        expected = committed[f"golden-orders-{c['partition']}"]
        assert c["upstreamOffset"] == expected["offset"]
        assert c["metadata"] == expected["metadata"]
        assert len(value) == 2 + 8 + 8 + 2 + len(c["metadata"].encode())
        usable = [s for s in syncs if s["partition"] == c["partition"] and s["topic"] == "golden-orders"]
        assert any(
            s["upstreamOffset"] <= c["upstreamOffset"]
            and c["offset"] == s["offset"] + (0 if s["upstreamOffset"] == c["upstreamOffset"] else 1)
            for s in usable
        ), f"checkpoint {c} is not a translation through any offset sync"
        latest[c["partition"]] = c
    assert set(latest) == {0, 1}
    for c in latest.values():
        # both topics started empty, so a correct translation never passes the upstream offset
        assert 1 <= c["offset"] <= c["upstreamOffset"]
    synced = mm2()["synced_group_offsets_on_B"]
    for p, c in latest.items():
        assert 0 < synced[f"A.golden-orders-{p}"] <= c["offset"]


@pytest.mark.parametrize(
    ("role", "source", "target"), [("heartbeats-on-B", "A", "B"), ("heartbeats-on-A", "B", "A")]
)
def test_heartbeats_decode(role: str, source: str, target: str) -> None:
    previous = 0
    for r in mm2_records(role):
        key, value = raw(r["key"]), raw(r["value"])
        h = decode_heartbeat(key, value)
        assert encode_heartbeat(h) == (key, value)
        assert (h["sourceClusterAlias"], h["targetClusterAlias"], h["version"]) == (source, target, 0)
        assert len(key) == 4 + len(source) + len(target) and len(value) == 10
        assert 1_600_000_000_000 < h["timestamp"] < 4_000_000_000_000
        assert h["timestamp"] >= previous
        previous = h["timestamp"]


def test_heartbeats_of_the_reverse_flow_are_mirrored() -> None:
    mirrored = [decode_heartbeat(raw(r["key"]), raw(r["value"])) for r in mm2_records("mirrored-heartbeats")]
    originals = [decode_heartbeat(raw(r["key"]), raw(r["value"])) for r in mm2_records("heartbeats-on-A")]
    assert mirrored and all(
        (h["sourceClusterAlias"], h["targetClusterAlias"]) == ("B", "A") for h in mirrored
    )
    # A's heartbeats topic was read just before A.heartbeats on B, so B may hold a newer copy.
    newest = max(h["timestamp"] for h in originals)
    assert [h for h in mirrored if h["timestamp"] <= newest] == [
        h for h in originals if h["timestamp"] <= newest
    ][: len([h for h in mirrored if h["timestamp"] <= newest])]


def test_mirrored_records_keep_key_value_headers_timestamp_partition() -> None:
    produced = mm2()["produced_to_A"]
    mirrored = mm2_records("mirrored-topic")
    assert len(mirrored) == len(produced) == 10
    for p in (0, 1):
        src = [x for x in produced if x["partition"] == p]
        dst = [x for x in mirrored if x["partition"] == p]
        assert [(text(d["key"]), text(d["value"]), d["timestamp"], d["timestamp_type"]) for d in dst] == [
            (s["key"], s["value"], s["timestamp"], 0) for s in src
        ]
        assert [d["offset"] for d in dst] == [s["offset"] for s in src]
        for s, d in zip(src, dst, strict=True):
            assert [(h["key"], text(h["value"])) for h in d["headers"]] == [("h", "x" + s["key"][1:])]


def test_mm2_connect_offsets_keys() -> None:
    by_text: dict[str, list[str]] = defaultdict(list)
    for r in mm2_records("connect-offsets-A->B"):
        assert r["partition"] == java_partition(raw(r["key"]), 25)
        by_text[text(r["key"])].append(text(r["value"]))
    for p in (0, 1):
        key = f'["MirrorSourceConnector",{{"cluster":"A","partition":{p},"topic":"golden-orders"}}]'
        assert by_text[key][-1] == '{"offset":4}', (
            "last replicated upstream offset of 5 records per partition"
        )
    heartbeat_key = '["MirrorHeartbeatConnector",{"sourceClusterAlias":"A","targetClusterAlias":"B"}]'
    assert set(by_text[heartbeat_key]) == {'{"offset":0}'}
    for p in (0, 1):
        key = f'["MirrorCheckpointConnector",{{"partition":{p},"topic":"A.golden-orders","group":"golden-group"}}]'
        assert set(by_text[key]) == {'{"offset":0}'}


def test_mm2_dedicated_herder_group_has_no_rest_url() -> None:
    group = mm2()["herder_group_A->B"]
    assert (group["group_id"], group["protocol_type"], group["protocol"]) == ("A-mm2", "connect", "sessioned")
    (member,) = group["members"]
    assert member["client_id"] == "A->B" and member["member_id"].startswith("A->B-")
    metadata_bytes = bytes.fromhex(member["metadata_hex"])
    meta = decode_metadata(metadata_bytes)
    assert encode_metadata(meta) == metadata_bytes
    # without dedicated.mode.enable.internal.rest the herder advertises this placeholder, no trailing '/'
    assert meta["version"] == 2 and meta["url"] == "NOTUSED"
    holding: dict[str, list[int]] = defaultdict(list)
    a = decode_assignment(bytes.fromhex(member["assignment_hex"]))
    assert (a["leader"], a["leader_url"], a["config_offset"]) == (
        member["member_id"],
        "NOTUSED",
        meta["config_offset"],
    )
    for source in (meta["allocation"]["assignment"], a["assignment"]):
        for name, tasks in source.items():
            holding[name] += tasks
    assert {name: sorted(tasks) for name, tasks in holding.items()} == {
        "MirrorSourceConnector": [-1, 0],
        "MirrorCheckpointConnector": [-1, 0],
        "MirrorHeartbeatConnector": [-1, 0],
    }


def test_mm2_dedicated_status_worker_id() -> None:
    worker_ids = set()
    for r in mm2_records("connect-status-A->B"):
        assert r["partition"] == java_partition(raw(r["key"]), 5)
        value = value_json(r)
        if value is not None and "worker_id" in value:
            worker_ids.add(value["worker_id"])
    (worker_id,) = worker_ids
    # not the spec's host:port: 4.3.1 dedicated mode names the herder worker "<host>/<S->T>/<uuid>"
    assert re.fullmatch(
        r"[^/]+/A->B/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", worker_id
    ), worker_id
