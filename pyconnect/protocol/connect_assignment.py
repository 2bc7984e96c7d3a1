"""Connect group assignments (SyncGroup member assignment): V0 complete, V1/V2 incremental.

Layouts (``ConnectProtocol``/``IncrementalCooperativeConnectProtocol``)::

    ConnectorAssignment := connector:string | tasks:array<int32>     (-1 = the connector itself)
    V0:    version:int16 | error:int16 | leader:string | leader-url:string | config-offset:int64
           | assignment:array<ConnectorAssignment>
    V1/V2: ... same five fields ... | assignment:nullable array | revoked:nullable array | delay:int32

V2 is byte-identical to V1 apart from the header; it only signals that KIP-507 request signing is
active. Under V1/V2 (KIP-415) ``connectors``/``tasks`` hold only what is *newly* assigned this
round and ``revoked_*`` what the member must stop; :func:`merge_into_snapshot` rebuilds a member's
holding exactly as ``WorkerCoordinator.onJoinComplete`` does.

Entry order matches Java: assigned connectors come in ``new HashSet<>(connectors)`` iteration order
(each entry starting with -1), then tasks are appended to their connector's entry (creating entries
in first-seen order); revoked connectors keep their order (distinct). Members decode every version
with the tolerant V1 schema: a field absent because the buffer ended takes its default (arrays null
-> empty, delay 0), fields without default are required, trailing bytes are ignored, and any
version >= 0 is accepted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pyconnect.protocol.javahash import hash_set_copy_order, java_string_hash
from pyconnect.protocol.primitives import ProtocolError, Reader, Writer
from pyconnect.protocol.task_id import CONNECTOR_TASK, ConnectorTaskId

CONNECT_PROTOCOL_V0 = 0
CONNECT_PROTOCOL_V1 = 1
CONNECT_PROTOCOL_V2 = 2

NO_ERROR = 0
CONFIG_MISMATCH = 1


def _tuple(values: Iterable[object]) -> tuple[object, ...]:
    return values if isinstance(values, tuple) else tuple(values)


@dataclass(frozen=True, slots=True)
class Assignment:
    """A complete (eager, V0) assignment; ``leader``/``leader_url`` are None only on the empty one."""

    error: int
    leader: str | None
    leader_url: str | None
    config_offset: int
    connectors: tuple[str, ...] = ()
    tasks: tuple[ConnectorTaskId, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "connectors", _tuple(self.connectors))
        object.__setattr__(self, "tasks", _tuple(self.tasks))

    @property
    def failed(self) -> bool:
        return self.error != NO_ERROR


@dataclass(frozen=True, slots=True)
class ExtendedAssignment(Assignment):
    """A V1/V2 assignment: adds revocations and the delay (ms) after which members should rejoin.

    ``version`` is the header it was decoded from (informational: encoders take the version
    explicitly, as Java's ``serializeAssignment(assignment, sessioned)`` does).
    """

    revoked_connectors: tuple[str, ...] = ()
    revoked_tasks: tuple[ConnectorTaskId, ...] = ()
    delay: int = 0
    version: int = CONNECT_PROTOCOL_V1

    def __post_init__(self) -> None:
        Assignment.__post_init__(self)
        object.__setattr__(self, "revoked_connectors", _tuple(self.revoked_connectors))
        object.__setattr__(self, "revoked_tasks", _tuple(self.revoked_tasks))


EMPTY_ASSIGNMENT = ExtendedAssignment(NO_ERROR, None, None, -1)
"""Java's ``ExtendedAssignment.empty()``: what a member holds before its first assignment."""


def _assigned_entries(
    connectors: Sequence[str], tasks: Sequence[ConnectorTaskId]
) -> list[tuple[str, list[int]]]:
    entries: dict[str, list[int]] = {
        c: [CONNECTOR_TASK] for c in hash_set_copy_order(connectors, java_string_hash)
    }
    for task in tasks:
        entries.setdefault(task.connector, []).append(task.task)
    return list(entries.items())


def _revoked_entries(
    connectors: Sequence[str], tasks: Sequence[ConnectorTaskId]
) -> list[tuple[str, list[int]]]:
    entries: dict[str, list[int]] = {c: [CONNECTOR_TASK] for c in dict.fromkeys(connectors)}
    for task in tasks:
        entries.setdefault(task.connector, []).append(task.task)
    return list(entries.items())


def _write_entries(writer: Writer, entries: list[tuple[str, list[int]]]) -> None:
    writer.int32(len(entries))
    for connector, numbers in entries:
        writer.string(connector).int32(len(numbers))
        for number in numbers:
            writer.int32(number)


def encode_assignment(assignment: Assignment, version: int) -> bytes:
    """Serialize ``assignment`` with the given header version, byte-identical to Java.

    ``version`` 0 = ``ConnectProtocol.serializeAssignment`` (revocations/delay not representable),
    1/2 = ``IncrementalCooperativeConnectProtocol.serializeAssignment(a, sessioned=version == 2)``;
    the assignment's own ``version`` field is not consulted, as in Java.
    """
    writer = Writer().int16(version)
    writer.int16(assignment.error).string(assignment.leader).string(assignment.leader_url)
    writer.int64(assignment.config_offset)
    _write_entries(writer, _assigned_entries(assignment.connectors, assignment.tasks))
    if version == CONNECT_PROTOCOL_V0:
        if isinstance(assignment, ExtendedAssignment) and (
            assignment.revoked_connectors or assignment.revoked_tasks or assignment.delay
        ):
            raise ProtocolError("V0 assignments cannot carry revocations or a delay")
        return writer.getvalue()
    if version not in (CONNECT_PROTOCOL_V1, CONNECT_PROTOCOL_V2):
        raise ProtocolError(f"Cannot encode a Connect assignment with version {version}")
    revoked_c = assignment.revoked_connectors if isinstance(assignment, ExtendedAssignment) else ()
    revoked_t = assignment.revoked_tasks if isinstance(assignment, ExtendedAssignment) else ()
    delay = assignment.delay if isinstance(assignment, ExtendedAssignment) else 0
    _write_entries(writer, _revoked_entries(revoked_c, revoked_t))
    return writer.int32(delay).getvalue()


def read_version(reader: Reader) -> int:
    """Read the int16 header; Java rejects only negative versions (newer ones parse as known)."""
    version = reader.int16()
    if version < CONNECT_PROTOCOL_V0:
        raise ProtocolError(f"Unsupported subscription version: {version}")
    return version


def _required(reader: Reader, name: str) -> None:
    if not reader.remaining:
        raise ProtocolError(f"Missing value for field '{name}' which has no default value.")


def _read_entry(reader: Reader) -> tuple[str, list[int]]:
    connector = reader.string()
    return connector, reader.array(Reader.int32)


def _split(
    entries: list[tuple[str, list[int]]] | None,
) -> tuple[tuple[str, ...], tuple[ConnectorTaskId, ...]]:
    connectors: list[str] = []
    tasks: list[ConnectorTaskId] = []
    for connector, numbers in entries or ():
        for number in numbers:
            if number == CONNECTOR_TASK:
                connectors.append(connector)
            else:
                tasks.append(ConnectorTaskId(connector, number))
    return tuple(connectors), tuple(tasks)


def decode_assignment(data: bytes | bytearray | memoryview) -> ExtendedAssignment:
    """Parse an assignment of any version >= 0 with Java's tolerant V1 schema.

    Raises :class:`ProtocolError` on malformed or truncated input.
    """
    reader = Reader(data)
    version = read_version(reader)
    _required(reader, "error")
    error = reader.int16()
    _required(reader, "leader")
    leader = reader.string()
    _required(reader, "leader-url")
    leader_url = reader.string()
    _required(reader, "config-offset")
    config_offset = reader.int64()
    assigned = reader.nullable_array(_read_entry) if reader.remaining else None
    revoked = reader.nullable_array(_read_entry) if reader.remaining else None
    delay = reader.int32() if reader.remaining else 0
    connectors, tasks = _split(assigned)
    revoked_connectors, revoked_tasks = _split(revoked)
    return ExtendedAssignment(
        error,
        leader,
        leader_url,
        config_offset,
        connectors,
        tasks,
        revoked_connectors,
        revoked_tasks,
        delay,
        version,
    )


def merge_into_snapshot(
    snapshot: ExtendedAssignment | None, received: ExtendedAssignment, *, eager: bool
) -> ExtendedAssignment:
    """A member's new holding after SyncGroup (``WorkerCoordinator.onJoinComplete``).

    Eager: the received assignment is complete. Incremental: received items first, then the previous
    holding minus the revoked items (duplicates kept, as Java's lists do). The result keeps the
    received header fields and revocations; it is what the member advertises in its next JoinGroup.
    """
    if eager or snapshot is None:
        return received
    revoked_c = set(received.revoked_connectors)
    revoked_t = set(received.revoked_tasks)
    return ExtendedAssignment(
        received.error,
        received.leader,
        received.leader_url,
        received.config_offset,
        received.connectors + tuple(c for c in snapshot.connectors if c not in revoked_c),
        received.tasks + tuple(t for t in snapshot.tasks if t not in revoked_t),
        received.revoked_connectors,
        received.revoked_tasks,
        received.delay,
        received.version,
    )
