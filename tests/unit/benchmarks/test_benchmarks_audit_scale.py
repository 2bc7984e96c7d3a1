"""The pure parts of the audit-at-scale benchmark: which processes are driver and executor, how time
grows with records, the payload file, and the report section."""

from __future__ import annotations

from pathlib import Path

from benchmarks.audit_scale import DRIVER, EXECUTOR, growth, process_roles, write_payload_file
from benchmarks.report import _audit_scale_section

SUBMIT, DRIVER_PY = 100, 101
MASTER, WORKER_1, WORKER_2 = 200, 201, 202
EXEC_1, EXEC_1_DAEMON, EXEC_1_PY, EXEC_2 = 300, 301, 302, 310
STRANGER = 400

STANDALONE = {
    1: (0, "init"),
    SUBMIT: (1, "java -cp ... org.apache.spark.deploy.SparkSubmit --master spark://127.0.0.1:1 job.py"),
    DRIVER_PY: (SUBMIT, "python job.py --config mm2.properties"),
    MASTER: (1, "java ... org.apache.spark.deploy.master.Master"),
    WORKER_1: (1, "java ... org.apache.spark.deploy.worker.Worker"),
    WORKER_2: (1, "java ... org.apache.spark.deploy.worker.Worker"),
    EXEC_1: (WORKER_1, "java ... org.apache.spark.executor.CoarseGrainedExecutorBackend --app-id x"),
    EXEC_1_DAEMON: (EXEC_1, "python -m pyspark.daemon"),
    EXEC_1_PY: (EXEC_1_DAEMON, "python -m pyspark.daemon"),
    EXEC_2: (WORKER_2, "java ... org.apache.spark.executor.CoarseGrainedExecutorBackend --app-id x"),
    STRANGER: (1, "python -m pyspark.daemon"),
}


def test_standalone_driver_and_executors_are_told_apart_and_daemons_are_not_counted() -> None:
    roles = process_roles(STANDALONE, SUBMIT, (WORKER_1, WORKER_2))
    assert roles == {
        SUBMIT: DRIVER,
        DRIVER_PY: DRIVER,
        EXEC_1: EXECUTOR,
        EXEC_1_DAEMON: EXECUTOR,
        EXEC_1_PY: EXECUTOR,
        EXEC_2: EXECUTOR,
    }


def test_local_mode_python_workers_under_the_driver_jvm_are_executors() -> None:
    table = {
        1: (0, "init"),
        10: (1, "python -m pyconnect audit --config c --flow A->B"),
        11: (10, "java ... org.apache.spark.deploy.SparkSubmit pyspark-shell"),
        12: (11, "python -m pyspark.daemon"),
        13: (12, "python -m pyspark.daemon"),
        20: (1, "java kafka.Kafka"),
    }
    assert process_roles(table, 10) == {10: DRIVER, 11: DRIVER, 12: EXECUTOR, 13: EXECUTOR}
    assert process_roles(table, 99) == {}


def test_growth_compares_the_smallest_and_largest_size() -> None:
    rows = {
        1_000_000: {"wall_s": 50.0, "audit_s": 40.0},
        10_000_000: {"wall_s": 400.0, "audit_s": 380.0},
    }
    assert growth(rows) == {
        "from_records": 1_000_000,
        "to_records": 10_000_000,
        "records_ratio": 10.0,
        "wall_ratio": 8.0,
        "audit_ratio": 9.5,
    }
    assert growth({1_000_000: rows[1_000_000]}) is None
    assert growth({1: {"wall_s": 1.0}, 10: {"wall_s": None}}) is None


def test_payload_lines_are_distinct_and_of_the_record_size(tmp_path: Path) -> None:
    lines = write_payload_file(tmp_path / "p.txt", 1000, 100).read_text().splitlines()
    assert len(lines) == 1000 == len(set(lines))
    assert {len(line) for line in lines} == {100}


def test_the_report_section_shows_each_mode_and_the_growth() -> None:
    row = {
        "wall_s": 61.2,
        "audit_s": 50.1,
        "records_scanned_per_s": 32680,
        "peak_driver_rss_mb": 900.0,
        "peak_executor_rss_mb": 120.0,
        "verdict": "pass",
        "html_report_bytes": 51234,
        "load_1min_at_start": 4.5,
        "load_1min_mean": 5.25,
    }
    scenario = {
        "description": "d",
        "status": "ok",
        "systems": {
            "pyconnect": {
                "status": "ok",
                "metrics": {
                    "modes": {"local[2]": {"1000000": row}},
                    "growth": {
                        "local[2]": {
                            "from_records": 1_000_000,
                            "to_records": 10_000_000,
                            "records_ratio": 10.0,
                            "wall_ratio": 8.5,
                            "audit_ratio": 9.0,
                        }
                    },
                },
            }
        },
    }
    text = "\n".join(_audit_scale_section(scenario))
    assert "| local[2] | 1,000,000 | 61.2 | 50.1 | 32,680 |" in text
    assert "51,234" in text and "4.5 / 5.2" in text
    assert "wall time x8.50, audit time x9.00" in text
