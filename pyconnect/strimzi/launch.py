"""The entry of Strimzi's scripts in the pyconnect image: prepare as Strimzi's scripts do, then exec the worker.

Called as ``python3 -m pyconnect.strimzi connect`` by ``/opt/kafka/kafka_connect_run.sh`` and with
``mirror-maker-2`` by ``/opt/kafka/kafka_mirror_maker_2_run.sh`` (after they cleaned ``/tmp``). In order:

1. ``ADVERTISED_HOSTNAME`` is set, as the scripts set it (the first four labels of the host's FQDN):
   the generated config advertises ``${strimzienv:ADVERTISED_HOSTNAME}``.
2. ``/opt/kafka/custom-config/kafka-connect.properties`` is copied to ``/tmp/strimzi-connect.properties``
   and printed (``sasl.jaas.config`` values hidden); a missing or unreadable file is one line naming it.
3. MirrorMaker 2 (``KAFKA_MIRRORMAKER_2_CLUSTERS`` set): the store password is generated (32 characters
   of ``[_A-Za-z0-9-]``, as the script does) into ``MIRRORMAKER_2_CERTS_STORE_PASSWORD`` and the PKCS12
   stores are written (pyconnect.strimzi.mm2_certs); a certificate or key that does not parse is one
   line naming its file.
4. The root level of ``log4j2.properties`` (``rootLogger.level``, or of the file ``KAFKA_LOG4J_OPTS``
   names with ``-Dlog4j2.configurationFile=``) becomes ``--log-level``.
5. Each Java-only setting is one WARN line (pyconnect.strimzi.java_only).
6. The process becomes ``tini -w -e 143 -- pyconnect distributed /tmp/strimzi-connect.properties``:
   tini forwards SIGTERM, the worker stops gracefully, and exit code 143 becomes 0, as with Strimzi's
   Java image.

:func:`prepare` does 1-5 and returns the argv (pure but for the files it reads and writes, all under
``root`` so tests run it on a temporary tree); :func:`main` reports errors and execs.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import string
import sys
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path

from pyconnect.config import properties
from pyconnect.errors import ConnectError
from pyconnect.strimzi import java_only, mm2_certs, stores

CUSTOM_CONFIG = "/opt/kafka/custom-config"
WORKER_PROPERTIES = f"{CUSTOM_CONFIG}/kafka-connect.properties"
LOGGING_PROPERTIES = f"{CUSTOM_CONFIG}/log4j2.properties"
RUN_PROPERTIES = "/tmp/strimzi-connect.properties"
TINI = "/usr/bin/tini"
PYCONNECT = "/usr/local/bin/pyconnect"
_PASSWORD_ALPHABET = "_" + string.ascii_uppercase + "-" + string.ascii_lowercase + "-" + string.digits
_JAAS = re.compile(r"^(\s*\S*sasl\.jaas\.config\s*[=:]).*$", re.MULTILINE)
_LOG_LEVELS = {
    "ALL": "DEBUG",
    "TRACE": "DEBUG",
    "DEBUG": "DEBUG",
    "INFO": "INFO",
    "WARN": "WARNING",
    "ERROR": "ERROR",
    "FATAL": "CRITICAL",
    "OFF": "CRITICAL",
}


class LaunchError(ConnectError, RuntimeError):
    """The container cannot start: one line naming the file or variable."""


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    printed_config: str
    warnings: list[str]
    stores: list[str]


def advertised_hostname() -> str:
    return ".".join(socket.getfqdn().split(".")[:4])


def hidden(config_text: str) -> str:
    """The config as Strimzi's script prints it: each ``sasl.jaas.config`` value replaced."""
    return _JAAS.sub(r"\1[hidden]", config_text)


def log_level(text: str) -> str:
    """The Python level of a log4j2 properties file's root logger (INFO when it names none)."""
    values = properties.loads(text, source="log4j2.properties")
    level = (values.get("rootLogger.level") or "").strip().upper()
    if not level:
        root = (values.get("rootLogger") or "").split(",")[0].strip().upper()
        level = root
    return _LOG_LEVELS.get(level, "INFO")


def logging_file(environ: MutableMapping[str, str]) -> str:
    options = environ.get("KAFKA_LOG4J_OPTS", "")
    found = re.search(r"-Dlog4j2?\.configurationFile=(?:file:)?(\S+)", options)
    return found.group(1) if found else LOGGING_PROPERTIES


def store_password() -> str:
    return "".join(secrets.choice(_PASSWORD_ALPHABET) for _ in range(32))


def _read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="iso-8859-1")
    except FileNotFoundError:
        raise LaunchError(f"{path} is missing: mount {what} there") from None
    except OSError as exc:
        raise LaunchError(f"cannot read {path}: {exc.strerror or exc}") from None


def prepare(environ: MutableMapping[str, str], root: str = "") -> Launch:
    """Steps 1-5 of the module docstring; updates ``environ`` with what the worker needs."""
    environ.setdefault("ADVERTISED_HOSTNAME", advertised_hostname())
    text = _read_text(root + WORKER_PROPERTIES, "the KafkaConnect's configuration (its ConfigMap)")
    try:
        props = properties.loads(text, source=WORKER_PROPERTIES)
    except ValueError as exc:
        raise LaunchError(f"{WORKER_PROPERTIES} does not parse: {exc}") from None
    Path(root + "/tmp/kafka").mkdir(parents=True, exist_ok=True)
    target = Path(root + RUN_PROPERTIES)
    target.write_text(text, encoding="iso-8859-1")
    target.chmod(0o600)
    written: list[str] = []
    if environ.get(mm2_certs.CLUSTERS):
        environ.setdefault(mm2_certs.PASSWORD, store_password())
        try:
            written = mm2_certs.write_stores(mm2_certs.plan(environ), environ[mm2_certs.PASSWORD], root)
        except stores.StoreInputError as exc:
            raise LaunchError(str(exc)) from None
    level_file = logging_file(environ)
    level = (
        log_level(_read_text(root + level_file, "the logging configuration"))
        if Path(root + level_file).exists()
        else "INFO"
    )
    argv = [TINI, "-w", "-e", "143", "--", PYCONNECT, "distributed", RUN_PROPERTIES, "--log-level", level]
    return Launch(argv, hidden(text), java_only.findings(props, environ), written)


def main(argv: list[str]) -> int:
    kind = argv[0] if argv else "connect"
    if kind not in ("connect", "mirror-maker-2"):
        print(f"pyconnect: unknown Strimzi component {kind!r}: connect or mirror-maker-2", file=sys.stderr)
        return 2
    try:
        launch = prepare(os.environ)
    except LaunchError as exc:
        print(f"pyconnect: {exc}", file=sys.stderr)
        return 1
    if launch.stores:
        print("Preparing MirrorMaker 2 cluster truststores and keystores: " + ", ".join(launch.stores))
    print("Starting Kafka Connect with configuration:")
    print(launch.printed_config)
    for line in launch.warnings:
        print(f"WARN {line} (pyconnect.strimzi)", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(launch.argv[0], launch.argv)
    return 0  # not reached
