"""Maven artifacts fetched into a fingerprinted cache folder (the Kafka jars, Spark's Kafka source).

Contract:

- :func:`cache_root` is where such folders live: ``<repo>/.cache`` for a source checkout,
  ``~/.cache/pyconnect`` otherwise; ``PYCONNECT_CACHE`` overrides both.
- :func:`ensure_artifacts` is idempotent. A folder whose ``complete`` marker starts with the
  fingerprint of the wanted artifacts is used as it is, with no network work (a cached machine runs
  offline). Otherwise ``mvn`` resolves the given POM's runtime dependencies into ``libs.partial``,
  which then replaces ``libs``; the extra files are written, and the marker last (the fingerprint, then
  the jar names), so an interrupted fetch is fetched again. A changed artifact list changes the
  fingerprint and so fetches again.
- Failures (no ``mvn`` on PATH, Maven failing, a fetch over its time bound) raise the caller's error
  type with a message naming what was fetched and, for a Maven failure, the tail of its output.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

COMPLETE_MARKER = "complete"


def cache_root() -> Path:
    override = os.environ.get("PYCONNECT_CACHE")
    if override:
        return Path(override).expanduser().resolve()
    checkout = Path(__file__).resolve().parents[1]
    if (checkout / "pyproject.toml").exists():
        return checkout / ".cache"
    return Path.home() / ".cache" / "pyconnect"


def artifacts_fingerprint(artifacts: Iterable[tuple[str, str, str]]) -> str:
    """Identifies a list of ``(group, artifact, version)``: a cache made for another list is fetched again."""
    listing = ";".join(":".join(a) for a in artifacts)
    return "artifacts " + hashlib.sha256(listing.encode()).hexdigest()[:16]


def is_complete(home: Path, fingerprint: str) -> bool:
    marker = home / COMPLETE_MARKER
    return marker.exists() and marker.read_text().startswith(fingerprint)


def ensure_artifacts(
    home: Path,
    pom: str,
    fingerprint: str,
    *,
    what: str,
    error: type[Exception],
    missing_mvn_hint: str = "",
    extra_files: Mapping[str, str] | None = None,
    quiet: bool = True,
    timeout_s: int | None = None,
) -> Path:
    """``home/libs`` holding the runtime dependencies of ``pom``, fetched with Maven unless ``home`` is
    complete for ``fingerprint``. ``what`` names the artifacts in messages; ``missing_mvn_hint`` is
    appended to the no-``mvn`` message; ``extra_files`` (name -> text) are written into ``home`` after
    a fetch; ``timeout_s`` bounds the Maven run (None: unbounded)."""
    if is_complete(home, fingerprint):
        return home / "libs"
    mvn = shutil.which("mvn")
    if not mvn:
        raise error(
            f"{what} is not cached in {home} and 'mvn' is not on PATH: "
            f"install Maven to fetch it{missing_mvn_hint}"
        )
    home.mkdir(parents=True, exist_ok=True)
    staging = home / "libs.partial"
    shutil.rmtree(staging, ignore_errors=True)
    pom_file = home / "pom.xml"
    pom_file.write_text(pom)
    cmd = [
        mvn,
        "-B",
        *(["-q"] if quiet else []),
        "-f",
        str(pom_file),
        "dependency:copy-dependencies",
        f"-DoutputDirectory={staging}",
        "-DincludeScope=runtime",
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise error(f"fetching {what} with Maven took over {timeout_s} s") from None
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise error(f"fetching {what} with Maven failed:\n{tail}")
    shutil.rmtree(home / "libs", ignore_errors=True)
    staging.rename(home / "libs")
    for name, text in (extra_files or {}).items():
        (home / name).write_text(text)
    jars = sorted(p.name for p in (home / "libs").glob("*.jar"))
    (home / COMPLETE_MARKER).write_text(fingerprint + "\n" + "\n".join(jars) + "\n")
    return home / "libs"
