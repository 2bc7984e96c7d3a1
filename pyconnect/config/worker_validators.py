"""The worker table's custom validators (Java lambdas in ``DistributedConfig`` and ``RestServerConfig``)."""

from __future__ import annotations

import hashlib
import re

from pyconnect.config.javastr import invalid_value
from pyconnect.errors import ConfigError

HMAC_ALGORITHMS: dict[str, str] = {
    "HmacMD5": "md5",
    "HmacSHA1": "sha1",
    "HmacSHA224": "sha224",
    "HmacSHA256": "sha256",
    "HmacSHA384": "sha384",
    "HmacSHA512": "sha512",
    "HmacSHA512/224": "sha512_224",
    "HmacSHA512/256": "sha512_256",
    "HmacSHA3-224": "sha3_224",
    "HmacSHA3-256": "sha3_256",
    "HmacSHA3-384": "sha3_384",
    "HmacSHA3-512": "sha3_512",
}
"""JCA MAC / KeyGenerator names this runtime can serve, mapped to ``hashlib`` digest names."""


def hmac_digest(algorithm: str) -> str | None:
    """The ``hashlib`` name for a JCA ``Hmac*`` name (case-insensitive, as JCA lookups are), or ``None``."""
    for java_name, digest in HMAC_ALGORITHMS.items():
        if java_name.lower() == algorithm.lower() and digest in hashlib.algorithms_available:
            return digest
    return None


def _supported() -> str:
    return "[" + ", ".join(n for n in HMAC_ALGORITHMS if hmac_digest(n)) + "]"


def _unsupported(name: str, value: object) -> ConfigError:
    return invalid_value(
        name,
        value,
        f"the algorithm is not supported by this JVM; the supported algorithms are: {_supported()}",
    )


class _Described:
    description = ""

    def __str__(self) -> str:
        return self.description


class Partitions(_Described):
    description = "Positive number, or -1 to use the broker's default"

    def __call__(self, name: str, value: object) -> None:
        if not isinstance(value, int) or (value <= 0 and value != -1):
            raise invalid_value(
                name, value, "Number of partitions must be positive, or -1 to use the broker's default"
            )


class ReplicationFactor(_Described):
    description = "Positive number not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default"

    def __call__(self, name: str, value: object) -> None:
        if not isinstance(value, int) or (value <= 0 and value != -1):
            raise invalid_value(
                name,
                value,
                "Replication factor must be positive and not larger than the number of brokers in the Kafka "
                "cluster, or -1 to use the broker's default",
            )


class ConnectProtocol(_Described):
    """``eager`` / ``compatible`` / ``sessioned``, case-insensitive."""

    values = ("eager", "compatible", "sessioned")
    description = "[eager, compatible, sessioned]"

    def __call__(self, name: str, value: object) -> None:
        if not isinstance(value, str) or value.lower() not in self.values:
            raise invalid_value(name, value, "Invalid Connect protocol compatibility")


class KeyGenerationAlgorithm(_Described):
    description = "Any KeyGenerator algorithm supported by the worker JVM"

    def __call__(self, name: str, value: object) -> None:
        if not isinstance(value, str) or hmac_digest(value) is None:
            raise _unsupported(name, value)


class SignatureAlgorithm(_Described):
    description = "Any MAC algorithm supported by the worker JVM"

    def __call__(self, name: str, value: object) -> None:
        if not isinstance(value, str) or hmac_digest(value) is None:
            raise _unsupported(name, value)


class VerificationAlgorithms(_Described):
    description = "A list of one or more MAC algorithms, each supported by the worker JVM"

    def __call__(self, name: str, value: object) -> None:
        assert isinstance(value, list)
        if not value:
            raise invalid_value(name, value, "At least one signature verification algorithm must be provided")
        for algorithm in value:
            if hmac_digest(algorithm) is None:
                raise _unsupported(name, algorithm)


class Listeners(_Described):
    description = "List of comma-separated URLs, ex: http://localhost:8080,https://localhost:8443."

    def __call__(self, name: str, value: object) -> None:
        if not isinstance(value, list):
            raise ConfigError(
                "Invalid value type for listeners (expected list of URLs , ex: http://localhost:8080,https://localhost:8443)."
            )
        if not value:
            raise ConfigError(
                "Invalid value for listeners, at least one URL is expected, ex: http://localhost:8080,https://localhost:8443."
            )
        for item in value:
            if not isinstance(item, str):
                raise ConfigError("Invalid type for listeners (expected String).")
            if not item.strip():
                raise ConfigError("Empty URL found when parsing listeners list.")


HEADER_ACTIONS = ("set", "add", "setDate", "addDate")


def _csv_split(text: str) -> list[str]:
    """Jetty ``StringUtil.csvSplit``: comma-separated, trimmed, double quotes group and are removed."""
    items: list[str] = []
    current: list[str] = []
    quoted = False
    i = 0
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\" and i + 1 < len(text):
                current.append(text[i + 1])
                i += 1
            elif c == '"':
                quoted = False
            else:
                current.append(c)
        elif c == '"':
            quoted = True
        elif c == ",":
            items.append("".join(current).strip())
            current = []
        else:
            current.append(c)
        i += 1
    last = "".join(current).strip()
    if last or items:
        items.append(last)
    return items


def validate_header_rule(rule: str) -> None:
    """One ``response.http.headers.config`` rule: ``<action> <Name>:<value>``."""
    tokens = rule.strip().split(None, 1)
    if len(tokens) != 2:
        raise ConfigError(
            f"Invalid format of header config '{rule}'. Expected: '[action] [header name]:[header value]'"
        )
    action, header = tokens[0].strip(), tokens[1]
    if not any(action.lower() == a.lower() for a in HEADER_ACTIONS):
        raise ConfigError(
            f"Invalid header config action: '{action}'. Expected one of [{', '.join(HEADER_ACTIONS)}]"
        )
    parts = [p for p in header.strip().split(":")]
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if len(parts) != 2:
        raise ConfigError(
            f"Invalid format of header name and header value pair '{header}'. "
            "Expected: '[header name]:[header value]'"
        )
    header_name = parts[0].strip()
    if not header_name or re.search(r"\s", header_name):
        raise ConfigError(
            f"Invalid header name '{header_name}'. The '[header name]' cannot contain whitespace"
        )


class ResponseHttpHeaders(_Described):
    description = (
        "Comma-separated header rules, where each header rule is of the form '[action] [header name]:[header value]' "
        "and optionally surrounded by double quotes if any part of a header rule contains a comma"
    )

    def __call__(self, name: str, value: object) -> None:
        if value is None or not str(value).strip():
            return
        for rule in _csv_split(str(value)):
            validate_header_rule(rule)


PARTITIONS = Partitions()
REPLICATION_FACTOR = ReplicationFactor()
CONNECT_PROTOCOL = ConnectProtocol()
KEY_GENERATION_ALGORITHM = KeyGenerationAlgorithm()
SIGNATURE_ALGORITHM = SignatureAlgorithm()
VERIFICATION_ALGORITHMS = VerificationAlgorithms()
LISTENERS = Listeners()
RESPONSE_HTTP_HEADERS = ResponseHttpHeaders()
