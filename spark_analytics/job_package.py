"""The audit as a ``spark-submit`` job: the project's code in one zip, an entry script, the Kafka jars.

Contract:

- :func:`build_package` writes into ``out_dir``: ``pyconnect-audit.zip`` (every ``.py`` file of the
  packages in :data:`PACKAGES`, from this installation; what the executors need to decode MirrorMaker 2's
  records with the project's codecs, and what the driver needs to run the audit) and
  ``pyconnect_audit_job.py`` (the driver's entry: ``pyconnect audit`` arguments in, the same output and
  exit codes out). Building twice gives the same zip (fixed timestamps, sorted names).
- :func:`submit_command` is the ``spark-submit`` argument list for a master: ``--py-files`` the zip,
  ``--jars`` Spark's Kafka source, the entry script and the audit arguments. Third-party Python
  packages are not shipped: the cluster's Python needs the ``spark`` extra's dependencies (only the
  standard library is used by the code that runs on executors).
- ``python -m spark_analytics.job_package DIR`` builds the package and prints a ``spark-submit`` line.
- Under ``spark-submit`` the audit joins the session ``spark-submit`` configured (master, jars,
  memory) instead of starting a local one (:func:`spark_analytics.session.local_spark`).
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from spark_analytics.packages import ensure_kafka_source_jars

PACKAGES = ("pyconnect", "connectors", "spark_analytics")
ZIP_NAME = "pyconnect-audit.zip"
ENTRY_NAME = "pyconnect_audit_job.py"
_FIXED_TIME = (2020, 1, 1, 0, 0, 0)

ENTRY_SCRIPT = '''\
"""Driver entry of the pyconnect audit under spark-submit: same arguments as `pyconnect audit`."""

import sys

from spark_analytics.audit_cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''


@dataclass(frozen=True)
class JobPackage:
    zip_path: Path
    entry: Path
    jars: tuple[Path, ...]


def _package_root() -> Path:
    import spark_analytics

    return Path(spark_analytics.__file__).resolve().parent.parent


def package_files(root: Path) -> list[Path]:
    """The ``.py`` files of :data:`PACKAGES` under ``root``, sorted, relative to ``root``."""
    found: list[Path] = []
    for package in PACKAGES:
        found.extend(
            p.relative_to(root) for p in (root / package).rglob("*.py") if "__pycache__" not in p.parts
        )
    return sorted(found)


def build_package(out_dir: Path) -> JobPackage:
    """Write the zip and the entry script into ``out_dir`` (created) and resolve the Kafka jars."""
    out_dir.mkdir(parents=True, exist_ok=True)
    root = _package_root()
    zip_path = out_dir / ZIP_NAME
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as archive:
        for relative in package_files(root):
            info = zipfile.ZipInfo(relative.as_posix(), _FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, (root / relative).read_bytes())
    entry = out_dir / ENTRY_NAME
    entry.write_text(ENTRY_SCRIPT)
    return JobPackage(zip_path, entry, tuple(ensure_kafka_source_jars()))


def submit_command(
    spark_submit: str | Path,
    master: str,
    package: JobPackage,
    audit_args: Sequence[str],
    *,
    conf: Sequence[str] = (),
) -> list[str]:
    """``spark-submit --master MASTER --py-files ZIP --jars JARS [--conf K=V ...] ENTRY AUDIT_ARGS``."""
    command = [str(spark_submit), "--master", master, "--py-files", str(package.zip_path)]
    command += ["--jars", ",".join(str(j) for j in package.jars)]
    for item in conf:
        command += ["--conf", item]
    return [*command, str(package.entry), *audit_args]


def _main(argv: list[str]) -> int:
    """``python -m spark_analytics.job_package DIR [--master URL]``: build, print the command line."""
    import argparse
    import shlex
    import sys

    from spark_analytics.packages import SparkPackageError

    parser = argparse.ArgumentParser(prog="python -m spark_analytics.job_package")
    parser.add_argument("out_dir", type=Path, help="where the zip and the entry script are written")
    parser.add_argument("--master", default="spark://HOST:7077", help="the master to show in the command")
    args = parser.parse_args(argv)
    try:
        package = build_package(args.out_dir)
    except (OSError, SparkPackageError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    command = submit_command("spark-submit", args.master, package, ["--config", "mm2.properties"])
    print(shlex.join([*command, "--flow", "A->B", "--out", "report"]))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(_main(sys.argv[1:]))
