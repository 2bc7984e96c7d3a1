"""``python -m benchmarks [--quick] [--out DIR] [--scenario NAME ...]``: pyconnect beside Java MirrorMaker 2.

Starts two local clusters, runs the selected scenarios for every system (see ``benchmarks.scenarios``)
and writes ``DIR/results.json``, ``DIR/report.md``, ``DIR/chart.png`` and the raw profiles
(``DIR/profile-*.folded.txt``). Exit status 0 when the run
completed (even if a system could not run: that is recorded with its reason), 1 when it could not.
"""

from __future__ import annotations

import argparse
import compileall
import dataclasses
import datetime as dt
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks import report, runners, settings
from benchmarks.procstats import LoadSampler, load_average
from benchmarks.scenarios import Bench
from pyconnect.testing.distribution import (
    KAFKA_VERSION,
    DistributionError,
    ensure_distribution,
    java_executable,
)

SHARED_NOTE = (
    "Figures were taken on a small machine that other work may share while the benchmark runs; "
    "treat them as indicative, and compare systems within one run rather than across runs."
)


def machine_info() -> dict[str, Any]:
    """CPU model, core count, memory, kernel and the versions involved (no paths, no host names)."""
    cpu_model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_mb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_mb = int(line.split()[1]) // 1024
    except OSError:
        pass
    try:
        java = subprocess.run([java_executable(), "-version"], capture_output=True, text=True, timeout=30)
        java_version = (java.stderr or java.stdout).splitlines()[0].strip()
    except (OSError, DistributionError, subprocess.SubprocessError, IndexError):
        java_version = None

    def version(dist: str) -> str | None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {
        "source_revision": source_revision(),
        "cpu_model": cpu_model or platform.processor() or None,
        "cpus": os.cpu_count(),
        "memory_mb": memory_mb,
        "os": f"{platform.system()} {platform.release()}",
        "python_version": platform.python_version(),
        "java_version": java_version,
        "kafka_version": KAFKA_VERSION,
        "pyconnect_version": version("pyconnect"),
        "aiokafka_version": version("aiokafka"),
        "load_average_at_start": load_average(),
    }


def source_revision() -> str | None:
    """The git commit of this checkout, with ``+uncommitted`` when the working tree has changes."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=here, capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+uncommitted" if dirty.stdout.strip() else "")


def byte_compile_project() -> None:
    """Write the bytecode of pyconnect's packages, as ``pip install`` does for an installed package.

    An editable install never compiles, and with ``PYTHONDONTWRITEBYTECODE`` set a worker would
    compile its ~100 modules on every start (about 0.2 s here): a cost of the checkout, not of
    pyconnect, that the start-up scenario would otherwise count.
    """
    root = Path(__file__).resolve().parent.parent
    for package in ("pyconnect", "connectors"):
        compileall.compile_dir(root / package, quiet=1)


def _sizes(text: str) -> tuple[int, ...]:
    """``N[,N...]``: positive record counts."""
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of record counts: {text!r}") from None
    if not sizes or min(sizes) <= 0:
        raise argparse.ArgumentTypeError(f"record counts must be positive: {text!r}")
    return sizes


def _seconds(text: str) -> tuple[float, ...]:
    """``S[,S...]``: non-negative durations in seconds."""
    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of seconds: {text!r}") from None
    if not values or min(values) < 0:
        raise argparse.ArgumentTypeError(f"seconds must not be negative: {text!r}")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a few minutes on a 2-core machine")
    parser.add_argument("--out", type=Path, help="output folder (default benchmarks/results/<date>[-quick])")
    parser.add_argument(
        "--rebuild",
        type=Path,
        metavar="DIR",
        help="run nothing: recompute the ratios and rewrite report.md and chart.png of the run in DIR",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        choices=settings.SCENARIOS,
        help="run only these scenarios (repeatable)",
    )
    parser.add_argument(
        "--system",
        action="append",
        choices=["java-connect", "java-dedicated", "pyconnect"],
        help="run only these systems (repeatable; default all)",
    )
    parser.add_argument(
        "--work-dir", type=Path, help="folder for cluster data and logs (default: a temp folder)"
    )
    parser.add_argument("--keep-work-dir", action="store_true", help="keep cluster data and logs afterwards")
    parser.add_argument(
        "--audit-sizes",
        type=_sizes,
        metavar="N[,N...]",
        help="records per audit_scale run instead of the mode's (e.g. 1000000)",
    )
    parser.add_argument(
        "--backlog",
        action="append",
        default=[],
        metavar="SIZE=N",
        help="records in the SIZE (100b or 1kb) throughput backlog instead of the mode's (repeatable; "
        "e.g. 100b=2000000 makes the quick metrics_cost drains long enough to rise above noise)",
    )
    parser.add_argument(
        "--pyconnect-mirror-setting",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an extra MirrorSourceConnector setting for pyconnect's connectors (repeatable)",
    )
    parser.add_argument(
        "--profile-native",
        action="store_true",
        help="the profile scenario samples C frames too (py-spy --native: uvloop, sockets, buffers; "
        "slower sampling)",
    )
    parser.add_argument(
        "--backlog-timestamps",
        choices=["LogAppendTime", "CreateTime"],
        default=None,
        help="message.timestamp.type of the backlog source topics (default CreateTime, Kafka's: batches a "
        "mirror can copy as bytes; LogAppendTime batches must be re-stamped record by record)",
    )
    parser.add_argument(
        "--cutover-runs",
        type=int,
        metavar="N",
        help="cutover runs per --quiet setting (default 5; 2 with --quick)",
    )
    parser.add_argument(
        "--cutover-quiet",
        type=_seconds,
        metavar="S[,S...]",
        help="the cutover command's --quiet settings to run (default 1,5; 1 with --quick)",
    )
    args = parser.parse_args(argv)
    if args.rebuild is not None:
        if not (args.rebuild / "results.json").is_file():
            parser.error(f"--rebuild: no results.json in {args.rebuild}")
        for kind, path in report.rebuild_results(args.rebuild).items():
            print(f"{kind}: {path}")
        return 0
    for setting in args.pyconnect_mirror_setting:
        key, sep, value = setting.partition("=")
        if not sep or not key.strip():
            parser.error(f"--pyconnect-mirror-setting wants KEY=VALUE, got {setting!r}")
        runners.PYCONNECT_MIRROR_SETTINGS[key.strip()] = value.strip()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    for noisy in ("aiokafka", "kafka"):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)
    byte_compile_project()
    bench_settings = settings.quick() if args.quick else settings.full()
    if args.audit_sizes:
        bench_settings = dataclasses.replace(bench_settings, audit_sizes=args.audit_sizes)
    backlog = dict(bench_settings.backlog)
    for item in args.backlog:
        size, sep, count = item.partition("=")
        if not sep or size.strip() not in backlog or not count.strip().isdigit() or int(count) <= 0:
            parser.error(f"--backlog wants SIZE=N with SIZE one of {sorted(backlog)} and N > 0, got {item!r}")
        backlog[size.strip()] = int(count)
    bench_settings = dataclasses.replace(bench_settings, backlog=backlog)
    if args.cutover_runs is not None:
        if args.cutover_runs <= 0:
            parser.error("--cutover-runs must be positive")
        bench_settings = dataclasses.replace(bench_settings, cutover_runs=args.cutover_runs)
    if args.cutover_quiet:
        bench_settings = dataclasses.replace(bench_settings, cutover_quiet_s=args.cutover_quiet)
    if args.profile_native:
        bench_settings = dataclasses.replace(bench_settings, profile_native=True)
    if args.backlog_timestamps:
        bench_settings = dataclasses.replace(bench_settings, backlog_timestamps=args.backlog_timestamps)
    started = dt.datetime.now(dt.UTC)
    out = args.out or Path(__file__).parent / "results" / (
        started.strftime("%Y-%m-%d") + ("-quick" if args.quick else "")
    )
    selected = args.scenario or list(settings.SCENARIOS)
    systems = args.system or ["java-connect", "java-dedicated", "pyconnect"]
    try:
        dist = ensure_distribution()
    except DistributionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    work_dir = (args.work_dir or Path(tempfile.mkdtemp(prefix="pyconnect-bench-"))).resolve()
    work_dir.mkdir(parents=True, exist_ok=True)
    logging.getLogger("benchmarks").info("work folder %s", work_dir)
    machine = machine_info()
    bench = Bench(bench_settings, selected, work_dir, dist, systems)
    failed = False
    load = LoadSampler(interval=10.0).start()
    try:
        scenarios = bench.run()
    except Exception as exc:
        logging.getLogger("benchmarks").exception("benchmark run failed")
        scenarios = bench.scenarios
        scenarios.setdefault("run", {"description": "the run itself", "status": "failed", "systems": {}})
        scenarios["run"]["reason"] = f"{type(exc).__name__}: {exc}"[:600]
        failed = True
    finally:
        if not args.keep_work_dir and args.work_dir is None:
            shutil.rmtree(work_dir, ignore_errors=True)
    machine["load_average_at_end"] = load_average()
    machine["load_average_during_run"] = load.stop()
    notes = [SHARED_NOTE]
    revision = machine.get("source_revision")
    if revision and revision.endswith("+uncommitted"):
        notes.append(
            f"Run from a working tree with uncommitted changes on top of {revision.split('+')[0]}: "
            "the pyconnect figures describe that in-progress state, not a release."
        )
    for name, system in bench.systems.items():
        if not system.get("available"):
            notes.append(
                f"{name} could not run: {system.get('reason')}. Its figures and ratios are n/a, never estimated."
            )
    notes.append(
        "Ratios divide pyconnect's figure by that of Java's MirrorSourceConnector on a Java Connect worker "
        "(the same connector JSON on the same kind of worker); Java MirrorMaker 2 in dedicated mode is shown beside it."
    )
    results = report.build_results(
        mode=bench_settings.mode,
        started_at=started.isoformat(timespec="seconds"),
        finished_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        machine=machine,
        settings={
            **bench_settings.to_json(),
            "java_heap": "512m (Connect workers and dedicated MirrorMaker)",
            "worker_producer": "Connect defaults for both runtimes (no producer overrides)",
            "timestamps": "source and target topics use message.timestamp.type=LogAppendTime"
            + (
                ""
                if bench_settings.backlog_timestamps == "LogAppendTime"
                else f", but the backlog sources (throughput and compressed) use {bench_settings.backlog_timestamps}"
            ),
        },
        systems={
            name: {
                **bench.systems.get(name, {"available": None, "reason": "not run"}),
                "description": report.SYSTEM_LABELS[name],
            }
            for name in systems
        },
        scenarios=scenarios,
        notes=notes,
    )
    problems = report.validate_results(results)
    if problems:
        results["notes"].append("Schema problems: " + "; ".join(problems))
    paths = report.write_results(results, out, bench.artifacts)
    print(f"results: {paths['json']}\nreport:  {paths['markdown']}\nchart:   {paths['chart']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
