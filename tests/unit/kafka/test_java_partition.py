"""Keyed records land on the partition Java's default partitioner chooses (murmur2 vectors from Kafka's own tests)."""

from __future__ import annotations

import pytest
from aiokafka.partitioner import murmur2

from pyconnect.kafka.batch_sender import java_partition

JAVA_MURMUR2 = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
    b"": 275646681,
}


@pytest.mark.parametrize(("key", "java_hash"), JAVA_MURMUR2.items())
def test_murmur2_matches_java(key: bytes, java_hash: int) -> None:
    signed = murmur2(key) - (1 << 32) if murmur2(key) >= (1 << 31) else murmur2(key)
    assert signed == java_hash
    assert java_partition(key, 7) == (java_hash & 0x7FFFFFFF) % 7
