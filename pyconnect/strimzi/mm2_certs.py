"""MirrorMaker 2's certificates, as Strimzi's ``kafka_mirror_maker_2_run.sh`` (up to 1.0) prepares them.

The operator mounts each cluster's secrets under ``/opt/kafka/mm2-certs/<alias>/<secret>/`` and names
what to use in environment variables (``KafkaMirrorMaker2Cluster.getEnvVars``):

- ``KAFKA_MIRRORMAKER_2_CLUSTERS``: the aliases, ``;``-separated;
- ``KAFKA_MIRRORMAKER_2_TRUSTED_CERTS_CLUSTERS``: one line per alias, ``alias=secret/file;secret/*.crt``
  (a file name or a glob pattern within the secret);
- ``KAFKA_MIRRORMAKER_2_TLS_AUTH_CERTS_CLUSTERS`` and ``..._KEYS_CLUSTERS``: one line per alias,
  ``alias=secret/file`` (mutual TLS).

:func:`plan` turns these into :class:`StoreJob` values (pure); :func:`write_stores` writes
``/tmp/kafka/clusters/<alias>.truststore.p12`` and ``<alias>.keystore.p12`` under the store password.
As the script does, a pattern that matches no file adds nothing, and a cluster with no certificate left
gets no truststore; a named certificate or key file that is missing is an error naming it.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pyconnect.strimzi import stores

CERTS_ROOT = "/opt/kafka/mm2-certs"
STORES_DIR = "/tmp/kafka/clusters"
CLUSTERS = "KAFKA_MIRRORMAKER_2_CLUSTERS"
TRUSTED_CERTS = "KAFKA_MIRRORMAKER_2_TRUSTED_CERTS_CLUSTERS"
TLS_AUTH_CERTS = "KAFKA_MIRRORMAKER_2_TLS_AUTH_CERTS_CLUSTERS"
TLS_AUTH_KEYS = "KAFKA_MIRRORMAKER_2_TLS_AUTH_KEYS_CLUSTERS"
PASSWORD = "MIRRORMAKER_2_CERTS_STORE_PASSWORD"


@dataclass(frozen=True)
class StoreJob:
    """The stores of one cluster alias: trusted certificate patterns and the mutual-TLS pair."""

    alias: str
    trusted: tuple[str, ...]
    auth_cert: str | None
    auth_key: str | None

    @property
    def truststore_path(self) -> str:
        return f"{STORES_DIR}/{self.alias}.truststore.p12"

    @property
    def keystore_path(self) -> str:
        return f"{STORES_DIR}/{self.alias}.keystore.p12"

    @property
    def certs_dir(self) -> str:
        return f"{CERTS_ROOT}/{self.alias}"


def _by_alias(value: str | None) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in (value or "").splitlines():
        alias, sep, rest = line.partition("=")
        if sep and alias:
            found[alias] = rest
    return found


def plan(environ: Mapping[str, str]) -> list[StoreJob]:
    """One job per alias of ``KAFKA_MIRRORMAKER_2_CLUSTERS`` that has certificates to store."""
    trusted = _by_alias(environ.get(TRUSTED_CERTS))
    certs = _by_alias(environ.get(TLS_AUTH_CERTS))
    keys = _by_alias(environ.get(TLS_AUTH_KEYS))
    jobs = []
    for alias in [a for a in environ.get(CLUSTERS, "").split(";") if a]:
        patterns = tuple(p for p in trusted.get(alias, "").split(";") if p)
        job = StoreJob(alias, patterns, certs.get(alias) or None, keys.get(alias) or None)
        if job.trusted or (job.auth_cert and job.auth_key):
            jobs.append(job)
    return jobs


def _read(path: str) -> stores.Named:
    try:
        return path, Path(path).read_bytes()
    except OSError as exc:
        raise stores.StoreInputError(f"cannot read {path}: {exc.strerror or exc}") from None


def write_stores(jobs: list[StoreJob], password: str, root: str = "") -> list[str]:
    """Write every job's stores (paths under ``root``, for tests); returns the paths written."""
    written = []
    for job in jobs:
        if job.trusted:
            files = [
                _read(match)
                for pattern in job.trusted
                for match in sorted(glob.glob(f"{root}{job.certs_dir}/{pattern}"))
                if os.path.isfile(match)
            ]
            if files:
                written.append(_write(root + job.truststore_path, stores.truststore(files, password)))
        if job.auth_cert and job.auth_key:
            data = stores.keystore(
                _read(f"{root}{job.certs_dir}/{job.auth_cert}"),
                _read(f"{root}{job.certs_dir}/{job.auth_key}"),
                job.auth_cert,
                password,
            )
            written.append(_write(root + job.keystore_path, data))
    return written


def _write(path: str, data: bytes) -> str:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    return path
