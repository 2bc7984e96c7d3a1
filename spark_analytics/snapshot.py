"""What a flow audit read, kept as Parquet so the audit can run again offline (``--snapshot`` /
``--from-snapshot``), e.g. for a fail-over post-mortem after the source cluster is gone.

Contract:

- A :class:`FlowFrames` is the four inputs of a flow audit: ``source`` and ``target`` records
  (:data:`spark_analytics.kafka_frames.RECORD_COLUMNS`, target ``topic`` holding the source names) and
  the raw Kafka rows of the offset-syncs and checkpoints topics (Spark's Kafka columns).
- :func:`write_snapshot` writes each frame to ``DIR/<name>.parquet`` (overwriting) and, last,
  ``DIR/snapshot.json`` with the caller's manifest (what was audited: aliases, topics, policy) plus the
  format version; a folder without that file is not a snapshot. The frames are read from Kafka once,
  during the write: the audit then runs on the written files (:func:`read_snapshot`), so what is audited
  is exactly what was kept.
- :func:`read_snapshot` returns the frames and the manifest; a missing or foreign folder is a
  :class:`SnapshotError` (one line).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

FORMAT_VERSION = 1
MANIFEST = "snapshot.json"
FRAMES = ("source", "target", "offset_syncs", "checkpoints")


class SnapshotError(ValueError):
    """The folder is not a readable snapshot."""


@dataclass(frozen=True)
class FlowFrames:
    source: DataFrame
    target: DataFrame
    offset_syncs: DataFrame
    checkpoints: DataFrame


def write_snapshot(frames: FlowFrames, folder: Path, manifest: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).unlink(missing_ok=True)
    for name in FRAMES:
        getattr(frames, name).write.mode("overwrite").parquet(str(folder / f"{name}.parquet"))
    body = {"format_version": FORMAT_VERSION, **manifest}
    (folder / MANIFEST).write_text(json.dumps(body, indent=2, sort_keys=True))


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    try:
        body = json.loads(path.read_text())
    except FileNotFoundError:
        raise SnapshotError(f"{folder} is not a snapshot (no {MANIFEST})") from None
    except (OSError, ValueError) as exc:
        raise SnapshotError(f"cannot read {path}: {exc}") from None
    if not isinstance(body, dict) or body.get("format_version") != FORMAT_VERSION:
        raise SnapshotError(f"{path} is not a snapshot of format {FORMAT_VERSION}")
    return body


def read_snapshot(spark: SparkSession, folder: Path) -> tuple[FlowFrames, dict[str, Any]]:
    manifest = read_manifest(folder)
    for name in FRAMES:
        if not (folder / f"{name}.parquet").exists():
            raise SnapshotError(f"{folder} lacks {name}.parquet")
    frames = FlowFrames(*(spark.read.parquet(str(folder / f"{name}.parquet")) for name in FRAMES))
    return frames, manifest
