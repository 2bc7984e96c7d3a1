"""The compressed-source scenario: backlogs their producer compressed (``CODECS``), drained by one fresh
worker per Connect system whose target producer is asked for the same codec.

Each codec gets a source topic of its own (:func:`topic`, ``partitions`` like the throughput
backlogs, Kafka's default CreateTime) holding ``backlog["1kb"]`` records written by
ProducerPerformance with ``compression.type=<codec>`` from a payload file of distinct, text-like lines
of ``record_size["1kb"]`` bytes (:func:`write_payload_file`): one repeated payload would compress to
almost nothing and flatter every system. The connector JSON is the throughput scenario's plus
``producer.override.compression.type=<codec>`` (:func:`overrides`), the same on both systems, under a
source alias of the system's own (``ALIASES``); Java's producer then decompresses and recompresses
every batch, pyconnect's raw path can copy the fetched batches as they are. Measured as in the
throughput scenario (records/s and CPU from the first record seen on the target to the last). The
ratios ``compressed_<codec>`` (records/s) and ``compressed_cpu_<codec>`` (CPU-seconds per record)
are pyconnect's figure over Java's Connect worker's. Java MirrorMaker 2 in dedicated mode is not run
here.
"""

from __future__ import annotations

import random
from pathlib import Path

CODECS = ("lz4", "zstd")
ALIASES = {"java-connect": "cj", "pyconnect": "cp"}
"""The source alias each system mirrors the compressed backlogs under."""
PAYLOAD_LINES = 2000

_WORDS = (
    "order customer region status shipped pending account amount currency price quantity sku warehouse "
    "event user session click view page device mobile desktop country city latency error retry ok "
    "timestamp request response service version build release deploy cluster broker topic partition"
).split()


def topic(codec: str) -> str:
    """The source topic of ``codec``'s backlog."""
    return f"bench-cz-{codec}"


def overrides(codec: str) -> dict[str, str]:
    """What the connector JSON adds so that the target producer writes ``codec`` batches."""
    return {"producer.override.compression.type": codec}


def payload_line(rng: random.Random, size: int) -> str:
    """One line of exactly ``size`` printable bytes: key=value words with numbers, like a log or JSON
    record, compressible as such data is (a few times, not a hundredfold)."""
    parts: list[str] = []
    length = 0
    while length <= size:  # joined, the parts are length - 1 characters long
        part = f"{rng.choice(_WORDS)}={rng.randrange(10 ** rng.randint(1, 9))}"
        parts.append(part)
        length += len(part) + 1
    return " ".join(parts)[:size]


def write_payload_file(path: Path, lines: int, size: int, seed: int = 17) -> Path:
    """``lines`` distinct lines of :func:`payload_line` (seeded, so every run writes the same file)."""
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        for _ in range(lines):
            out.write(payload_line(rng, size) + "\n")
    return path
