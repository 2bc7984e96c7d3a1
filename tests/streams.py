"""``python -m tests.streams [pytest args]``: the suite as two streams at once, as ``make test`` runs it.

The tests that start Kafka, workers and Java processes (``tests/integration``, ``tests/compat``,
``tests/chaos``) spend much of their time waiting on them and leave a core idle; the pure tests
(``tests/unit``, ``tests/golden``) need no Kafka and only CPU. So the pure stream runs beside the
other one, under ``nice`` (the scheduler hands it only what the timing-sensitive stream leaves), its
output kept in a file and printed once both are done. Its per-test timeout (pyproject's ``timeout``)
works by a watchdog thread that dumps every stack and ends the run: an async fixture stuck in its
teardown ignores the default SIGALRM (asyncio reports an exception raised inside a callback and runs
on), and a stream that never ends would hold the whole suite.

Contract: the arguments are passed to both pytest runs (e.g. ``-m "not long"``); the exit code is the
Kafka stream's when it is not 0, else the pure stream's (a stream that selected nothing while the other
ran counts as passed); Ctrl-C stops both (the background run's
whole process group) and exits 130. The last line says how each stream ended.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

PURE = ("tests/unit", "tests/golden")
KAFKA = ("tests/integration", "tests/compat", "tests/chaos")
NICENESS = 10
NO_TESTS = 5  # pytest's exit code when nothing was collected


def _pytest(args: list[str], paths: tuple[str, ...]) -> list[str]:
    return [sys.executable, "-m", "pytest", *args, *paths]


def _outcome(code: int) -> str:
    return "passed" if code == 0 else f"failed (pytest exit code {code})"


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parents[1]
    with tempfile.NamedTemporaryFile("w+b", prefix="pure-tests-", suffix=".log") as log:
        pure = subprocess.Popen(
            ["nice", "-n", str(NICENESS), *_pytest([*argv, "-o", "timeout_method=thread"], PURE)],
            cwd=root,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            kafka_code = subprocess.call(_pytest(argv, KAFKA), cwd=root)
            pure_code = pure.wait()
        except KeyboardInterrupt:
            os.killpg(pure.pid, signal.SIGTERM)
            pure.wait()
            return 130
        sys.stdout.flush()
        print(f"\n===== {' and '.join(PURE)} (ran beside the tests above, under nice {NICENESS}) =====")
        log.seek(0)
        sys.stdout.buffer.write(log.read())
        sys.stdout.flush()
    if NO_TESTS in (kafka_code, pure_code) and {kafka_code, pure_code} != {NO_TESTS}:
        # a selection (-k, a marker) that falls in one stream only: the other's "no tests" is no failure
        kafka_code, pure_code = (0 if c == NO_TESTS else c for c in (kafka_code, pure_code))
    print(
        f"\n===== {', '.join(KAFKA)}: {_outcome(kafka_code)}; {', '.join(PURE)}: {_outcome(pure_code)} ====="
    )
    return kafka_code or pure_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
