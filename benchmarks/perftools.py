"""Kafka's own perf tools from the pinned jars: the physical limit of the brokers, and fast backlogs.

``ProducerPerformance`` (``kafka-producer-perf-test``) and ``ConsumerPerformance``
(``kafka-consumer-perf-test``) run as owned JVMs (``die_with_parent``), bounded in time, with their
output in a log file that is parsed here. ProducerPerformance also fills the throughput backlogs: it
is the fastest producer on the machine and the same for every system measured.
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path
from typing import Any

from pyconnect.testing.distribution import KafkaDistribution
from pyconnect.testing.java_process import JavaProcess

PRODUCER_PERFORMANCE = "org.apache.kafka.tools.ProducerPerformance"
CONSUMER_PERFORMANCE = "org.apache.kafka.tools.ConsumerPerformance"
PRODUCER_PROPS = {"acks": "all", "linger.ms": "5", "batch.size": "65536"}

_PRODUCER_SUMMARY = re.compile(
    r"(?P<records>\d+) records sent, (?P<rps>[\d.]+) records/sec \((?P<mbps>[\d.]+) MB/sec\), "
    r"(?P<avg>[\d.]+) ms avg latency, (?P<max>[\d.]+) ms max latency"
    r"(?:, (?P<p50>\d+) ms 50th, (?P<p95>\d+) ms 95th, (?P<p99>\d+) ms 99th)?"
)


class PerfToolError(RuntimeError):
    """A perf tool failed, timed out, or printed nothing parsable; the message carries its output tail."""


def run_tool(dist: KafkaDistribution, main: str, args: list[str], log_file: Path, timeout: float) -> str:
    """Run one Kafka tool to completion (SIGTERM/SIGKILL at ``timeout``); return its output."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    log_file.write_text("")
    proc = JavaProcess(
        dist.java_command(main, *args, heap="512m"),
        log_file,
        f"bench-tool:{uuid.uuid4().hex}",
        die_with_parent=True,
    )
    proc.start()
    deadline = time.monotonic() + timeout
    while proc.running and time.monotonic() < deadline:
        time.sleep(0.2)
    if proc.running:
        proc.stop(10)
        raise PerfToolError(
            f"{main.rsplit('.', 1)[1]} did not finish in {timeout:.0f}s:\n{proc.log_tail(15)}"
        )
    output = log_file.read_text(errors="replace")
    if proc.exit_code() != 0:
        raise PerfToolError(f"{main.rsplit('.', 1)[1]} exited with {proc.exit_code()}:\n{proc.log_tail(15)}")
    return output


def parse_producer_output(output: str) -> dict[str, Any]:
    """The final summary line of ProducerPerformance as numbers."""
    matches = list(_PRODUCER_SUMMARY.finditer(output))
    if not matches:
        raise PerfToolError(f"no ProducerPerformance summary in output:\n{output[-1500:]}")
    m = matches[-1]
    out: dict[str, Any] = {
        "records": int(m["records"]),
        "records_per_s": float(m["rps"]),
        "mb_per_s": float(m["mbps"]),
        "avg_latency_ms": float(m["avg"]),
        "max_latency_ms": float(m["max"]),
    }
    if m["p99"] is not None:
        out.update(p50_latency_ms=int(m["p50"]), p95_latency_ms=int(m["p95"]), p99_latency_ms=int(m["p99"]))
    return out


def parse_consumer_output(output: str) -> dict[str, Any]:
    """The CSV row of ConsumerPerformance (header ``start.time, end.time, data.consumed.in.MB, ...``)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if not line.startswith("start.time"):
            continue
        header = [h.strip() for h in line.split(",")]
        for candidate in lines[i + 1 :]:
            values = [v.strip() for v in candidate.split(",")]
            if len(values) != len(header) or not candidate[:1].isdigit():
                continue  # a log line printed between the header and the figures
            row = dict(zip(header, values, strict=True))
            return {
                "records": int(float(row["data.consumed.in.nMsg"])),
                "mb": float(row["data.consumed.in.MB"]),
                "records_per_s": float(row["fetch.nMsg.sec"]),
                "mb_per_s": float(row["fetch.MB.sec"]),
                "records_per_s_incl_rebalance": float(row["nMsg.sec"]),
                "rebalance_ms": float(row["rebalance.time.ms"]),
            }
    raise PerfToolError(f"no ConsumerPerformance result in output:\n{output[-1500:]}")


def produce(
    dist: KafkaDistribution,
    bootstrap: str,
    topic: str,
    records: int,
    record_size: int,
    log_file: Path,
    *,
    throughput: int = -1,
    timeout: float = 600.0,
    payload_file: Path | None = None,
    producer_props: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``records`` records of ``record_size`` bytes with ProducerPerformance; with ``payload_file`` the
    values are lines of that file (drawn at random by the tool) instead of one repeated payload;
    ``producer_props`` add to or replace ``PRODUCER_PROPS`` (e.g. ``compression.type``)."""
    payload = ["--payload-file", str(payload_file)] if payload_file else ["--record-size", str(record_size)]
    args = [
        "--topic",
        topic,
        "--num-records",
        str(records),
        *payload,
        "--throughput",
        str(throughput),
        "--producer-props",
        f"bootstrap.servers={bootstrap}",
        *(f"{k}={v}" for k, v in {**PRODUCER_PROPS, **(producer_props or {})}.items()),
    ]
    return parse_producer_output(run_tool(dist, PRODUCER_PERFORMANCE, args, log_file, timeout))


def consume(
    dist: KafkaDistribution,
    bootstrap: str,
    topic: str,
    records: int,
    log_file: Path,
    *,
    timeout: float = 600.0,
) -> dict[str, Any]:
    args = [
        "--bootstrap-server",
        bootstrap,
        "--topic",
        topic,
        "--num-records",
        str(records),
        "--timeout",
        "60000",
        "--group",
        f"bench-perf-{uuid.uuid4().hex[:8]}",
    ]
    return parse_consumer_output(run_tool(dist, CONSUMER_PERFORMANCE, args, log_file, timeout))
