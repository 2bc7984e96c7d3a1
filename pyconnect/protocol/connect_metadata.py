"""Connect member metadata (JoinGroup ``protocols[].metadata``) and the protocols a member offers.

Layouts::

    V0 ("default"):                version:int16=0 | url:string | config-offset:int64
    V1 ("compatible") / V2 ("sessioned"):
                                   version:int16 | url:string | config-offset:int64
                                   | allocation:nullable bytes

``allocation`` is the member's current holding serialized as an assignment with the same header
version as the enclosing metadata (KIP-415), or null when the member holds Java's empty assignment.
V2 differs from V1 only by its version number (KIP-507 sessioned protocol). Every member and the
leader parse all versions with the V1 schema: any version >= 0, a missing allocation means null,
trailing bytes are ignored.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pyconnect.protocol.connect_assignment import (
    CONNECT_PROTOCOL_V0,
    CONNECT_PROTOCOL_V1,
    CONNECT_PROTOCOL_V2,
    EMPTY_ASSIGNMENT,
    ExtendedAssignment,
    decode_assignment,
    encode_assignment,
    read_version,
)
from pyconnect.protocol.primitives import ProtocolError, Reader, Writer

PROTOCOL_TYPE = "connect"


class ConnectProtocolCompatibility(enum.Enum):
    """``connect.protocol`` values: (config name, JoinGroup protocol name, metadata version)."""

    EAGER = ("eager", "default", CONNECT_PROTOCOL_V0)
    COMPATIBLE = ("compatible", "compatible", CONNECT_PROTOCOL_V1)
    SESSIONED = ("sessioned", "sessioned", CONNECT_PROTOCOL_V2)

    @property
    def config_name(self) -> str:
        return self.value[0]

    @property
    def protocol(self) -> str:
        return self.value[1]

    @property
    def version(self) -> int:
        return self.value[2]

    @classmethod
    def from_config(cls, name: str) -> ConnectProtocolCompatibility:
        """Parse a ``connect.protocol`` value (case-insensitive, like Java)."""
        for mode in cls:
            if mode.config_name == name.lower():
                return mode
        raise ValueError(f"Unknown Connect protocol compatibility mode: {name}")

    @classmethod
    def from_protocol(cls, name: str) -> ConnectProtocolCompatibility:
        """The mode for a protocol name selected by the coordinator (case-insensitive)."""
        for mode in cls:
            if mode.protocol == name.lower():
                return mode
        raise ValueError(f"Not found Connect protocol compatibility mode for protocol: {name}")

    @classmethod
    def from_version(cls, version: int) -> ConnectProtocolCompatibility:
        for mode in cls:
            if mode.version == version:
                return mode
        raise ValueError(f"Unknown Connect protocol version: {version}")


@dataclass(frozen=True, slots=True)
class WorkerState:
    """A member's metadata: advertised REST ``url`` and config-topic snapshot offset."""

    url: str
    config_offset: int


@dataclass(frozen=True, slots=True)
class ExtendedWorkerState(WorkerState):
    """V1/V2 metadata: adds the member's current holding (Java's empty assignment when none)."""

    assignment: ExtendedAssignment = EMPTY_ASSIGNMENT


def _allocation(state: WorkerState, version: int) -> bytes | None:
    assignment = state.assignment if isinstance(state, ExtendedWorkerState) else None
    if assignment is None or assignment == EMPTY_ASSIGNMENT:
        return None
    return encode_assignment(assignment, version)


def encode_metadata(state: WorkerState, version: int) -> bytes:
    """Serialize member metadata for ``version`` 0, 1 or 2 exactly as the Java worker does."""
    if version not in (CONNECT_PROTOCOL_V0, CONNECT_PROTOCOL_V1, CONNECT_PROTOCOL_V2):
        raise ProtocolError(f"Cannot encode Connect metadata with version {version}")
    allocation = None if version == CONNECT_PROTOCOL_V0 else _allocation(state, version)
    return _metadata(state, version, allocation)


def _metadata(state: WorkerState, version: int, allocation: bytes | None) -> bytes:
    writer = Writer().int16(version).string(state.url).int64(state.config_offset)
    if version == CONNECT_PROTOCOL_V0:
        return writer.getvalue()
    return writer.nullable_bytes(allocation).getvalue()


def _with_version(allocation: bytes | None, version: int) -> bytes | None:
    """An encoded V1/V2 assignment under the other header: the two differ only in that int16."""
    return None if allocation is None else Writer().int16(version).getvalue() + allocation[2:]


def decode_metadata(data: bytes | bytearray | memoryview) -> ExtendedWorkerState:
    """Parse metadata of any version >= 0 (V0 yields the empty assignment); raises ProtocolError."""
    reader = Reader(data)
    read_version(reader)
    url = reader.string()
    config_offset = reader.int64()
    allocation = reader.nullable_bytes() if reader.remaining else None
    assignment = EMPTY_ASSIGNMENT if allocation is None else decode_assignment(allocation)
    return ExtendedWorkerState(url, config_offset, assignment)


def join_group_protocols(state: WorkerState, mode: ConnectProtocolCompatibility) -> list[tuple[str, bytes]]:
    """``(name, metadata)`` pairs for JoinGroup, most preferred first.

    ``sessioned`` offers sessioned/compatible/default, ``compatible`` offers compatible/default,
    ``eager`` offers only default; the coordinator picks the first protocol all members support.
    """
    offered = {
        ConnectProtocolCompatibility.SESSIONED: (
            ConnectProtocolCompatibility.SESSIONED,
            ConnectProtocolCompatibility.COMPATIBLE,
            ConnectProtocolCompatibility.EAGER,
        ),
        ConnectProtocolCompatibility.COMPATIBLE: (
            ConnectProtocolCompatibility.COMPATIBLE,
            ConnectProtocolCompatibility.EAGER,
        ),
        ConnectProtocolCompatibility.EAGER: (ConnectProtocolCompatibility.EAGER,),
    }[mode]
    allocation = (
        _allocation(state, CONNECT_PROTOCOL_V1) if mode is not ConnectProtocolCompatibility.EAGER else None
    )
    return [(m.protocol, _metadata(state, m.version, _with_version(allocation, m.version))) for m in offered]
