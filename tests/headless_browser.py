"""Headless Chromium (Debian's ``chromium``) for the tests that load a page of ours: the mirror status
page and the audit's HTML report.

A test that needs it and does not find it fails with one line saying what to install; it never skips.
Each call runs the browser once, with its own profile folder, no sandbox and no GPU, bounded in time.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

INSTALL = "chromium is not installed: apt-get install -y chromium"
TIMEOUT_S = 120


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail(INSTALL, pytrace=False)
    return found


def headless(url: str, profile: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """Load ``url`` (``http://`` or ``file://``) with ``flags`` (``--dump-dom``, ``--screenshot=...``)."""
    return subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            f"--user-data-dir={profile}",
            *flags,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
