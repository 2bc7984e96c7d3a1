"""The image build's pure parts: input fingerprints and the base recipe (pyconnect.testing.images)."""

from __future__ import annotations

from pathlib import Path

from pyconnect.testing import images


def test_a_fingerprint_follows_paths_and_contents_not_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    first = images.fingerprint_files([a, b], tmp_path)
    assert images.fingerprint_files([b, a], tmp_path) == first
    b.write_text("y = 3\n")
    assert images.fingerprint_files([a, b], tmp_path) != first
    b.rename(tmp_path / "c.py")
    assert images.fingerprint_files([a, tmp_path / "c.py"], tmp_path) != first


def test_the_image_gets_the_runtime_sources_without_test_support() -> None:
    files = {p.relative_to(images.REPO).as_posix() for p in images.app_files()}
    assert "pyconnect/cli.py" in files and "connectors/mirror/source.py" in files
    assert not any(f.startswith(("pyconnect/testing/", "tests/", "benchmarks/")) for f in files)
    assert not any("__pycache__" in f for f in files)


def test_both_images_share_one_base_recipe() -> None:
    python, java = images.PYTHON_BASE.command(Path("p.tar")), images.JAVA_BASE.command(Path("j.tar"))
    shared = [arg for arg in python if not arg.startswith(("--include=", "p.tar"))]
    assert shared == [arg for arg in java if not arg.startswith(("--include=", "j.tar"))]
    assert "--variant=essential" in python and "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr" in java
    assert images.PYTHON_BASE.fingerprint() != images.JAVA_BASE.fingerprint()
    assert "--include=ca-certificates,tini,python3" in python
    assert "--include=ca-certificates,tini,openjdk-17-jre-headless" in java
