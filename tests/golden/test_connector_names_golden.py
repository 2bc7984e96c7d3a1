"""tests/golden/connector_names/vectors.json is exactly what the pinned Kafka jars say today.

Runs ``ConnectorNames.java`` (Java's single-file source launcher, no separate compile step) against
the jars of ``pyconnect.testing.distribution`` and compares its output with the committed file; only
``java_version`` may differ. The Python side is tested against the file in
tests/unit/config/test_connector_name.py.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pyconnect.testing.distribution import ensure_distribution, java_executable

pytestmark = pytest.mark.java

FOLDER = Path(__file__).resolve().parent / "connector_names"


def test_vectors_are_reproduced_by_the_jars(tmp_path: Path) -> None:
    dist = ensure_distribution()
    output = tmp_path / "vectors.json"
    done = subprocess.run(
        [
            java_executable(),
            "-Xmx256m",
            "-cp",
            dist.classpath,
            str(FOLDER / "ConnectorNames.java"),
            str(FOLDER / "cases.json"),
            str(output),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    fresh = json.loads(output.read_text(encoding="ascii"))
    committed = json.loads((FOLDER / "vectors.json").read_text(encoding="ascii"))
    fresh.pop("java_version")
    committed.pop("java_version")
    assert fresh == committed
