"""``promtool check metrics`` (Debian's ``prometheus`` package) as a format check for expositions.

A test that needs it and does not find it fails with one line saying what to install; it never skips.
promtool exits 1 for a malformed exposition and 3 for naming-convention lints. The names a JMX-exporter
setup gives Java workers are the contract (Strimzi's dashboards query them), so the only lints accepted
are the ones those names draw; anything else fails.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

INSTALL = "promtool not found: install Debian's prometheus package (apt-get install -y prometheus)"
CONTRACT_LINTS = (
    "metric names should not contain abbreviated units",
    'non-histogram and non-summary metrics should not have "_count" suffix',
)


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.fail(INSTALL, pytrace=False)
    return path


def check_metrics(text: str) -> list[str]:
    """The lints promtool reports for ``text``; fails the test on a format error or an unexpected lint."""
    done = subprocess.run(
        [promtool(), "check", "metrics"], input=text.encode(), capture_output=True, timeout=60, check=False
    )
    output = (done.stdout + done.stderr).decode(errors="replace")
    assert done.returncode in (0, 3), f"promtool refused the exposition (rc {done.returncode}):\n{output}"
    lints = [line for line in output.splitlines() if line.strip()]
    unexpected = [line for line in lints if not line.endswith(CONTRACT_LINTS)]
    assert not unexpected, "promtool lints beyond the contract's names:\n" + "\n".join(unexpected)
    return lints
