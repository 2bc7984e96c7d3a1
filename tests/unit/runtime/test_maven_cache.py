"""The fingerprinted Maven cache shared by the Kafka distribution and Spark's Kafka source, with a
stand-in ``mvn`` script on PATH (no network)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from pyconnect.maven_cache import COMPLETE_MARKER, artifacts_fingerprint, ensure_artifacts, is_complete

ARTIFACTS = (("org.example", "thing", "1.0"),)
POM = "<project/>\n"


class FetchFailed(RuntimeError):
    pass


def fake_mvn(bin_dir: Path, body: str) -> None:
    """An ``mvn`` that runs ``body`` (sh) with ``$out`` set to the ``-DoutputDirectory`` it was given."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "mvn"
    script.write_text(
        "#!/bin/sh\n"
        'for arg in "$@"; do\n'
        '  case "$arg" in -DoutputDirectory=*) out="${arg#-DoutputDirectory=}";; esac\n'
        "done\n"
        f"{body}\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def fetch(home: Path, **kwargs: object) -> Path:
    return ensure_artifacts(
        home, POM, artifacts_fingerprint(ARTIFACTS), what="Thing 1.0", error=FetchFailed, **kwargs
    )


def test_fetch_writes_libs_extra_files_and_marker_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_mvn(tmp_path / "bin", 'mkdir -p "$out" && touch "$out/b-2.0.jar" "$out/a-1.0.jar"')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    home = tmp_path / "cache" / "thing-1.0"
    libs = fetch(home, extra_files={"log.yaml": "x: 1\n"})
    assert libs == home / "libs"
    assert sorted(p.name for p in libs.iterdir()) == ["a-1.0.jar", "b-2.0.jar"]
    assert not (home / "libs.partial").exists()
    assert (home / "pom.xml").read_text() == POM
    assert (home / "log.yaml").read_text() == "x: 1\n"
    fingerprint = artifacts_fingerprint(ARTIFACTS)
    assert (home / COMPLETE_MARKER).read_text() == f"{fingerprint}\na-1.0.jar\nb-2.0.jar\n"
    assert is_complete(home, fingerprint)


def test_a_complete_cache_needs_no_maven(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "thing"
    home.mkdir()
    (home / COMPLETE_MARKER).write_text(artifacts_fingerprint(ARTIFACTS) + "\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert fetch(home) == home / "libs"


def test_another_artifact_list_is_fetched_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "thing"
    home.mkdir()
    (home / COMPLETE_MARKER).write_text(artifacts_fingerprint((("org.example", "thing", "0.9"),)) + "\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(FetchFailed, match=r"install Maven to fetch it, or else$"):
        fetch(home, missing_mvn_hint=", or else")


def test_a_maven_failure_is_reported_with_its_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    fake_mvn(tmp_path / "bin", "echo 'resolution failed: thing:1.0'; exit 1")
    with pytest.raises(
        FetchFailed, match=re.escape("fetching Thing 1.0 with Maven failed:\nresolution failed")
    ):
        fetch(tmp_path / "thing")
    assert not is_complete(tmp_path / "thing", artifacts_fingerprint(ARTIFACTS))
