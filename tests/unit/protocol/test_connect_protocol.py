"""Connect group protocol codecs against bytes produced by Kafka's Java classes.

The expected bytes in tests/golden/protocol/vectors.txt come from tests/golden/protocol/generate.jsh
(Kafka 4.3.1 jars, JDK 17), never from our encoder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyconnect.protocol.assignor import revoking_rebalance_backoff
from pyconnect.protocol.connect_assignment import (
    CONFIG_MISMATCH,
    EMPTY_ASSIGNMENT,
    NO_ERROR,
    Assignment,
    ExtendedAssignment,
    decode_assignment,
    encode_assignment,
    merge_into_snapshot,
)
from pyconnect.protocol.connect_metadata import (
    ConnectProtocolCompatibility,
    ExtendedWorkerState,
    WorkerState,
    decode_metadata,
    encode_metadata,
    join_group_protocols,
)
from pyconnect.protocol.javahash import default_hash_order, hash_set_copy_order, java_string_hash
from pyconnect.protocol.primitives import ProtocolError
from pyconnect.protocol.task_id import ConnectorTaskId as T

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "protocol"
CAPTURED_GROUPS = Path(__file__).resolve().parents[2] / "golden" / "connect_group_protocol.json"
URL = "http://w1:8083/"


def _load_vectors() -> dict[str, str]:
    vectors = {}
    for line in (GOLDEN / "vectors.txt").read_text(encoding="utf-8").splitlines():
        name, _, value = line.partition(" ")
        vectors[name] = value
    return vectors


VECTORS = _load_vectors()


def golden(name: str) -> bytes:
    return bytes.fromhex(VECTORS[name])


HELD = ExtendedAssignment(
    NO_ERROR, "m1", URL, 40, ("c2", "c1"), (T("c1", 0), T("c2", 1), T("c3", 0)), ("c4",), (T("c4", 1),), 0, 2
)

METADATA_CASES = {
    "metadata.v0.basic": (WorkerState(URL, 42), 0),
    "metadata.v0.empty_offset": (WorkerState("http://[::1]:8083/", -1), 0),
    "metadata.v1.no_assignment": (ExtendedWorkerState(URL, 42), 1),
    "metadata.v2.no_assignment": (ExtendedWorkerState(URL, 42), 2),
    "metadata.v1.with_assignment": (ExtendedWorkerState(URL, 42, HELD), 1),
    "metadata.v2.with_assignment": (ExtendedWorkerState(URL, 42, HELD), 2),
    "metadata.v2.with_empty_holding": (
        ExtendedWorkerState("http://w\u00f6rker:8083/", 7, ExtendedAssignment(NO_ERROR, "m1", URL, 7)),
        2,
    ),
}


def _incremental_cases(v: int) -> dict[str, Assignment]:
    many40 = tuple(f"mm2-{i}" for i in range(40))
    return {
        f"assignment.v{v}.basic": ExtendedAssignment(NO_ERROR, "m1", URL, 42, ("c",), (T("c", 0),)),
        f"assignment.v{v}.empty": ExtendedAssignment(NO_ERROR, "m1", URL, 42),
        f"assignment.v{v}.revoked_delay": ExtendedAssignment(
            NO_ERROR,
            "connect-1-6f1c",
            "http://10.0.0.1:8083/",
            1234567890123,
            ("new-conn",),
            (T("new-conn", 0), T("old", 3)),
            ("old", "gone", "old"),
            (T("gone", 1), T("old", 0), T("x", 2), T("gone", 0)),
            300000,
        ),
        f"assignment.v{v}.config_mismatch": ExtendedAssignment(CONFIG_MISMATCH, "m1", URL, 99),
        f"assignment.v{v}.duplicates": ExtendedAssignment(
            NO_ERROR, "m1", URL, 3, ("a", "b", "a"), (T("a", 0), T("a", 0))
        ),
        f"assignment.v{v}.many11": ExtendedAssignment(
            NO_ERROR, "m1", URL, 3, tuple(f"connector-{i}" for i in range(11))
        ),
        f"assignment.v{v}.many12": ExtendedAssignment(
            NO_ERROR, "m1", URL, 3, tuple(f"connector-{i}" for i in range(12))
        ),
        f"assignment.v{v}.many40": ExtendedAssignment(
            NO_ERROR, "m1", URL, 3, many40, (T("mm2-7", 1), T("mm2-3", 0)), delay=7
        ),
        f"assignment.v{v}.unicode": ExtendedAssignment(
            NO_ERROR,
            "m\u00fc",
            "http://h\u00e9:1/",
            0,
            ("\U0001f600", "\uffff", "\u00e9"),
            (T("\U0001f600", 0),),
        ),
    }


ASSIGNMENT_CASES: dict[str, tuple[Assignment, int]] = {
    "assignment.v0.basic": (Assignment(NO_ERROR, "m1", URL, 42, ("c",), (T("c", 0),)), 0),
    "assignment.v0.empty": (Assignment(NO_ERROR, "m1", URL, 42), 0),
    "assignment.v0.config_mismatch": (Assignment(CONFIG_MISMATCH, "leader-1", URL, 99), 0),
    "assignment.v0.grouping": (
        Assignment(
            NO_ERROR,
            "m1",
            URL,
            5,
            ("zeta", "alpha", "mirror-source", "b"),
            (T("b", 2), T("other", 0), T("alpha", 1), T("b", 0), T("other", 3)),
        ),
        0,
    ),
    **{name: (a, 1) for name, a in _incremental_cases(1).items()},
    **{name: (a, 2) for name, a in _incremental_cases(2).items()},
}


@pytest.mark.parametrize("name", sorted(METADATA_CASES))
def test_metadata_matches_java_bytes(name: str) -> None:
    state, version = METADATA_CASES[name]
    assert encode_metadata(state, version) == golden(name)


@pytest.mark.parametrize("name", sorted(ASSIGNMENT_CASES))
def test_assignment_matches_java_bytes(name: str) -> None:
    assignment, version = ASSIGNMENT_CASES[name]
    assert encode_assignment(assignment, version) == golden(name)


@pytest.mark.parametrize("name", sorted(ASSIGNMENT_CASES))
def test_java_assignment_bytes_decode_and_reencode(name: str) -> None:
    original, version = ASSIGNMENT_CASES[name]
    decoded = decode_assignment(golden(name))
    assert decoded.version == version
    assert (decoded.error, decoded.leader, decoded.leader_url, decoded.config_offset) == (
        original.error,
        original.leader,
        original.leader_url,
        original.config_offset,
    )
    assert set(decoded.connectors) == set(original.connectors)
    assert sorted(decoded.tasks) == sorted(original.tasks)
    if isinstance(original, ExtendedAssignment):
        assert list(dict.fromkeys(decoded.revoked_connectors)) == list(
            dict.fromkeys(original.revoked_connectors)
        )
        assert sorted(decoded.revoked_tasks) == sorted(original.revoked_tasks)
        assert decoded.delay == original.delay
    else:
        assert (decoded.revoked_connectors, decoded.revoked_tasks, decoded.delay) == ((), (), 0)
    assert encode_assignment(decoded, version) == golden(name)


def test_assignment_entries_group_tasks_under_connector_in_java_order() -> None:
    decoded = decode_assignment(golden("assignment.v0.grouping"))
    assert decoded.connectors == ("zeta", "b", "mirror-source", "alpha")
    assert decoded.tasks == (T("b", 2), T("b", 0), T("alpha", 1), T("other", 0), T("other", 3))


@pytest.mark.parametrize("name", sorted(METADATA_CASES))
def test_java_metadata_bytes_decode(name: str) -> None:
    state, version = METADATA_CASES[name]
    decoded = decode_metadata(golden(name))
    assert (decoded.url, decoded.config_offset) == (state.url, state.config_offset)
    if version == 0 or not isinstance(state, ExtendedWorkerState) or state.assignment == EMPTY_ASSIGNMENT:
        assert decoded.assignment is EMPTY_ASSIGNMENT or decoded.assignment == EMPTY_ASSIGNMENT
    else:
        assert decoded.assignment.version == version
        assert set(decoded.assignment.connectors) == set(state.assignment.connectors)
    assert encode_metadata(decoded, version) == golden(name)


@pytest.mark.parametrize("mode", list(ConnectProtocolCompatibility))
def test_join_group_protocols_match_java_preference_order(mode: ConnectProtocolCompatibility) -> None:
    protocols = join_group_protocols(ExtendedWorkerState(URL, 42, HELD), mode)
    expected = []
    index = 0
    while f"join.{mode.config_name}.{index}.name" in VECTORS:
        expected.append(
            (
                VECTORS[f"join.{mode.config_name}.{index}.name"],
                golden(f"join.{mode.config_name}.{index}.metadata"),
            )
        )
        index += 1
    assert protocols == expected
    assert [name for name, _ in protocols] == {
        ConnectProtocolCompatibility.SESSIONED: ["sessioned", "compatible", "default"],
        ConnectProtocolCompatibility.COMPATIBLE: ["compatible", "default"],
        ConnectProtocolCompatibility.EAGER: ["default"],
    }[mode]


def test_spec_examples_agree_with_java() -> None:
    spec_metadata = "0002000f687474703a2f2f77313a383038332f000000000000002affffffff"
    assert golden("metadata.v2.no_assignment").hex() == spec_metadata
    assert golden("assignment.v2.basic") == bytes.fromhex(
        "0002" "0000" "00026d31" "000f" + b"http://w1:8083/".hex() + "000000000000002a"
        "00000001" "000163" "00000002" "ffffffff" "00000000" "00000000" "00000000"
    )  # fmt: skip


def test_empty_instance_is_a_null_allocation_and_null_leader_cannot_be_encoded() -> None:
    assert VECTORS["assignment.empty_instance.v2"] == "null"
    assert encode_metadata(ExtendedWorkerState(URL, 1, EMPTY_ASSIGNMENT), 2).endswith(b"\xff\xff\xff\xff")
    with pytest.raises(ProtocolError):
        encode_assignment(ExtendedAssignment(NO_ERROR, None, None, -1, ("c",)), 2)
    with pytest.raises(ProtocolError):
        encode_assignment(ExtendedAssignment(NO_ERROR, "m1", None, 0), 1)


def test_v0_bytes_parse_with_the_tolerant_v1_schema() -> None:
    decoded = decode_assignment(golden("assignment.v0.basic"))
    assert decoded == ExtendedAssignment(NO_ERROR, "m1", URL, 42, ("c",), (T("c", 0),), version=0)
    assert decode_metadata(golden("metadata.v0.basic")) == ExtendedWorkerState(URL, 42)


def test_higher_versions_and_trailing_bytes_are_tolerated() -> None:
    future = b"\x00\x07" + golden("assignment.v2.revoked_delay")[2:] + b"\x01\x02\x03extra-field"
    decoded = decode_assignment(future)
    assert decoded.version == 7
    assert decoded.delay == 300000
    meta = b"\x00\x05" + golden("metadata.v2.with_assignment")[2:] + b"\xde\xad"
    assert (
        decode_metadata(meta).assignment.connectors
        == decode_metadata(golden("metadata.v2.with_assignment")).assignment.connectors
    )


def test_missing_trailing_fields_take_java_defaults() -> None:
    header = golden("assignment.v1.basic")
    fixed = 2 + 2 + 4 + 2 + 15 + 8
    assert decode_assignment(header[:fixed]).connectors == ()
    without_delay = header[: len(header) - 4]
    assert decode_assignment(without_delay).delay == 0
    with pytest.raises(ProtocolError, match="Missing value for field 'config-offset'"):
        decode_assignment(header[: fixed - 8])


def test_negative_version_and_negative_lengths_are_rejected() -> None:
    with pytest.raises(ProtocolError, match="Unsupported subscription version"):
        decode_assignment(b"\xff\xff" + golden("assignment.v1.basic")[2:])
    with pytest.raises(ProtocolError, match="cannot be negative"):
        decode_metadata(b"\x00\x01\xff\xfe")
    bad_tasks = bytearray(golden("assignment.v1.basic"))
    tasks_count_at = 2 + 2 + 4 + 2 + 15 + 8 + 4 + 3
    bad_tasks[tasks_count_at : tasks_count_at + 4] = b"\xff\xff\xff\xff"
    with pytest.raises(ProtocolError, match="Array size -1 cannot be negative"):
        decode_assignment(bytes(bad_tasks))
    v1_empty = golden("assignment.v1.empty")
    any_negative_is_null = v1_empty[:-12] + b"\xff\xff\xff\xfe" + v1_empty[-8:]
    assert decode_assignment(any_negative_is_null).connectors == ()


@pytest.mark.parametrize("name", ["assignment.v2.revoked_delay", "metadata.v2.with_assignment"])
def test_every_truncation_either_decodes_or_raises_protocol_error(name: str) -> None:
    data = golden(name)
    decode = decode_metadata if name.startswith("metadata") else decode_assignment
    for cut in range(len(data)):
        try:
            decode(data[:cut])
        except ProtocolError:
            pass


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=80))
def test_arbitrary_bytes_never_escape_as_other_errors(data: bytes) -> None:
    for decode in (decode_assignment, decode_metadata):
        try:
            decode(data)
        except ProtocolError:
            pass


names = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
task_ids = st.builds(T, names, st.integers(0, 50))


@st.composite
def extended_assignments(draw: st.DrawFn) -> ExtendedAssignment:
    return ExtendedAssignment(
        draw(st.sampled_from([NO_ERROR, CONFIG_MISMATCH])),
        draw(names),
        draw(names),
        draw(st.integers(-1, 2**63 - 1)),
        tuple(draw(st.lists(names, unique=True, max_size=20))),
        tuple(draw(st.lists(task_ids, unique=True, max_size=20))),
        tuple(draw(st.lists(names, unique=True, max_size=5))),
        tuple(draw(st.lists(task_ids, unique=True, max_size=5))),
        draw(st.integers(0, 2**31 - 1)),
        draw(st.sampled_from([1, 2])),
    )


@settings(max_examples=200, deadline=None)
@given(extended_assignments())
def test_assignment_round_trip(assignment: ExtendedAssignment) -> None:
    data = encode_assignment(assignment, assignment.version)
    decoded = decode_assignment(data)
    assert decoded.version == assignment.version
    assert set(decoded.connectors) == set(assignment.connectors)
    assert set(decoded.tasks) == set(assignment.tasks)
    assert decoded.revoked_connectors == assignment.revoked_connectors or set(
        decoded.revoked_connectors
    ) == set(assignment.revoked_connectors)
    assert set(decoded.revoked_tasks) == set(assignment.revoked_tasks)
    assert (decoded.error, decoded.leader, decoded.leader_url, decoded.config_offset, decoded.delay) == (
        assignment.error,
        assignment.leader,
        assignment.leader_url,
        assignment.config_offset,
        assignment.delay,
    )
    assert encode_assignment(decoded, assignment.version) == data
    state = ExtendedWorkerState("http://h:1/", 5, assignment)
    assert decode_metadata(encode_metadata(state, assignment.version)).assignment == decoded


def test_merge_into_snapshot_follows_worker_coordinator() -> None:
    previous = ExtendedAssignment(NO_ERROR, "m1", URL, 5, ("a", "b"), (T("a", 0), T("b", 0)))
    received = ExtendedAssignment(NO_ERROR, "m1", URL, 6, ("c",), (T("c", 0),), ("a",), (T("b", 0),), 0, 2)
    merged = merge_into_snapshot(previous, received, eager=False)
    assert merged.connectors == ("c", "b")
    assert merged.tasks == (T("c", 0), T("a", 0))
    assert merged.config_offset == 6
    assert merge_into_snapshot(previous, received, eager=True) is received
    assert merge_into_snapshot(None, received, eager=False) is received


def test_protocol_compatibility_names() -> None:
    assert ConnectProtocolCompatibility.from_config("SESSIONED") is ConnectProtocolCompatibility.SESSIONED
    assert ConnectProtocolCompatibility.from_protocol("default") is ConnectProtocolCompatibility.EAGER
    assert ConnectProtocolCompatibility.from_version(1) is ConnectProtocolCompatibility.COMPATIBLE
    with pytest.raises(ValueError):
        ConnectProtocolCompatibility.from_config("default")


def test_java_facts_string_hash_and_backoff() -> None:
    for key, value in VECTORS.items():
        if key.startswith("hash."):
            assert java_string_hash(bytes.fromhex(key[5:]).decode("utf-8")) == int(value)
        if key.startswith("backoff."):
            max_delay = int(key.split(".")[1])
            assert [revoking_rebalance_backoff(n, max_delay) for n in range(1, 9)] == [
                int(x) for x in value.split(",")
            ]


def test_task_ids_order_like_java_string_compare() -> None:
    ids = [T("\uffff", 0), T("\U0001f600", 0), T("a", 10), T("a", 2)]
    assert sorted(ids) == [T("a", 2), T("a", 10), T("\U0001f600", 0), T("\uffff", 0)]
    assert str(T("mirror", 3)) == "mirror-3"


def _captured_members() -> list[tuple[str, str, dict]]:
    captures = json.loads(CAPTURED_GROUPS.read_text(encoding="utf-8"))["captures"]
    return [(c["protocol"], c["note"], m) for c in captures for m in c["members"]]


@pytest.mark.parametrize(("protocol", "note", "member"), _captured_members())
def test_bytes_captured_from_running_java_workers_round_trip(protocol: str, note: str, member: dict) -> None:
    version = ConnectProtocolCompatibility.from_protocol(protocol).version
    metadata = decode_metadata(bytes.fromhex(member["metadata_hex"]))
    assignment = decode_assignment(bytes.fromhex(member["assignment_hex"]))
    assert metadata.url.endswith("/")
    assert assignment.version == version
    assert assignment.leader_url.endswith("/")
    assert encode_metadata(metadata, version).hex() == member["metadata_hex"]
    assert encode_assignment(assignment, version).hex() == member["assignment_hex"]


def test_java_hash_iteration_orders() -> None:
    inserted = VECTORS["order.members.insert"].split(",")
    assert default_hash_order(inserted, java_string_hash) == VECTORS["order.members.hashmap"].split(",")
    tasks = [T(f"mm2-{c}", t) for c in range(6) for t in range(5)]
    expected = VECTORS["order.tasks.hashset_copy"].split(",")
    assert [str(t) for t in hash_set_copy_order(tasks, T.java_hash)] == expected
