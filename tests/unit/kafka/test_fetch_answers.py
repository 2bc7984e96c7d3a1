"""Fetch responses read in place: the fields aiokafka's structs decode, each partition's records a view."""

from __future__ import annotations

import pytest
from aiokafka.protocol import fetch

from pyconnect.kafka.fetch_answers import TruncatedFetchResponse, read_fetch_response

RECORDS = {("mirror.events", 0): b"batch bytes " * 20, ("mirror.events", 3): b"", ("t\u00f6pic", 1): b"x" * 7}
ABORTED = {("mirror.events", 0): [(4000, 17), (4001, 90)], ("mirror.events", 3): None, ("t\u00f6pic", 1): []}


def _partition(version: int, topic: str, partition: int) -> tuple[object, ...]:
    fields: list[object] = [partition, 3 if partition == 3 else 0, 1000 + partition, 900 + partition]
    if version >= 5:
        fields.append(12)  # log start offset
    fields.append(ABORTED[(topic, partition)])
    if version >= 11:
        fields.append(-1)  # preferred read replica
    fields.append(RECORDS[(topic, partition)] or None)
    return tuple(fields)


def _encoded(version: int) -> bytes:
    topics = [
        ("mirror.events", [_partition(version, "mirror.events", 0), _partition(version, "mirror.events", 3)]),
        ("t\u00f6pic", [_partition(version, "t\u00f6pic", 1)]),
    ]
    response_class = getattr(fetch, f"FetchResponse_v{version}")
    head = (25, 0 if version < 8 else 58, 77) if version >= 7 else (25,)
    return bytes(response_class(*head, topics).encode())


@pytest.mark.parametrize("version", range(4, 12))
def test_each_field_as_aiokafka_decodes_it_and_the_records_are_views(version: int) -> None:
    prefix = b"header!"
    data = prefix + _encoded(version)
    answer = read_fetch_response(version, data, len(prefix))
    assert (answer.error_code, answer.session_id) == (
        (0 if version < 8 else 58, 77) if version >= 7 else (0, 0)
    )
    got = {(topic, partition): part for topic, partition, part in answer.partitions}
    assert list(got) == list(RECORDS)
    for key, part in got.items():
        assert bytes(part.records) == RECORDS[key]
        assert part.aborted_transactions == (ABORTED[key] or [])
        assert (part.error_code, part.high_watermark, part.last_stable_offset) == (
            3 if key[1] == 3 else 0,
            1000 + key[1],
            900 + key[1],
        )
    records = got[("mirror.events", 0)].records
    assert isinstance(records, memoryview) and records.obj is data  # not copied


@pytest.mark.parametrize("version", [4, 7, 11])
def test_a_body_cut_anywhere_is_refused_naming_where(version: int) -> None:
    data = _encoded(version)
    for cut in range(len(data)):
        with pytest.raises(TruncatedFetchResponse, match="the fetch response ends at byte"):
            read_fetch_response(version, data[:cut])


def test_a_negative_count_is_refused() -> None:
    data = b"\x00\x00\x00\x19" + b"\xff\xff\xff\xfe"  # throttle time, then -2 topics
    with pytest.raises(TruncatedFetchResponse, match="counts -2 topics"):
        read_fetch_response(4, data)


@pytest.mark.parametrize("version", [1, 3, 12])
def test_versions_outside_4_to_11_are_not_read(version: int) -> None:
    with pytest.raises(ValueError, match=f"Fetch v{version} responses are not read here"):
        read_fetch_response(version, b"")
