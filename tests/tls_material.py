"""TLS stores made as operators make them, with ``openssl`` and Java's ``keytool``.

A test that needs a missing tool fails with one line saying what to install; it never skips.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

INSTALL = {
    "openssl": "OpenSSL (apt-get install openssl)",
    "keytool": "a Java 17 JDK (apt-get install openjdk-17-jdk-headless)",
}


def run(tool: str, *args: str | Path, cwd: Path) -> None:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} not found on PATH: install {INSTALL[tool]}", pytrace=False)
    done = subprocess.run([path, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        pytest.fail(f"{tool} {args[0]} failed: {done.stderr.strip() or done.stdout.strip()}", pytrace=False)


def pkcs12_from_pem(key: Path, certs: Path, out: Path, password: str, *extra: str) -> Path:
    """``out``: the key of ``key`` and the certificates of ``certs`` (its own first) as PKCS12."""
    run(
        "openssl", "pkcs12", "-export", "-inkey", key, "-in", certs, "-out", out,
        "-passout", f"pass:{password}", "-name", "client", *extra, cwd=out.parent,
    )  # fmt: skip
    return out


def jks_from_pkcs12(p12: Path, p12_password: str, out: Path, password: str, key_password: str) -> Path:
    """``out``: the key entry of ``p12`` in a JKS store (keytool -storetype JKS)."""
    run(
        "keytool", "-importkeystore", "-noprompt", "-srckeystore", p12, "-srcstoretype", "PKCS12",
        "-srcstorepass", p12_password, "-destkeystore", out, "-deststoretype", "JKS",
        "-deststorepass", password, "-destkeypass", key_password, cwd=out.parent,
    )  # fmt: skip
    return out


def truststore(ca: Path, out: Path, store_type: str, password: str, *java_options: str) -> Path:
    """``out``: a ``store_type`` store with ``ca`` as its one trusted-certificate entry."""
    run(
        "keytool", *java_options, "-importcert", "-noprompt", "-alias", "ca", "-file", ca,
        "-keystore", out, "-storetype", store_type, "-storepass", password, cwd=out.parent,
    )  # fmt: skip
    return out
