"""KIP-507 internal request signatures: HMAC of the exact body bytes with the cluster's session key.

Contract (spec §4.6): the sender adds ``X-Connect-Authorization: <base64 MAC>`` and
``X-Connect-Request-Signature-Algorithm: <algorithm>``; the receiver recomputes the MAC over the raw
bytes it received. ``verify`` raises the error Java answers with: missing headers or an algorithm not
allowed -> 400, no session key yet -> 503, a MAC that does not match -> 403.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable, Collection, Mapping
from typing import Any

from pyconnect.errors import BadRequestError, ForbiddenError, ServiceUnavailableError

SIGNATURE_HEADER = "X-Connect-Authorization"
ALGORITHM_HEADER = "X-Connect-Request-Signature-Algorithm"

_DIGESTS = {
    "HmacSHA256": hashlib.sha256,
    "HmacSHA384": hashlib.sha384,
    "HmacSHA512": hashlib.sha512,
    "HmacSHA1": hashlib.sha1,
}


def digest_for(algorithm: str) -> Callable[..., Any]:
    try:
        return _DIGESTS[algorithm]
    except KeyError:
        raise BadRequestError(f"Unsupported signature algorithm: {algorithm}") from None


def sign(key: bytes, body: bytes, algorithm: str = "HmacSHA256") -> dict[str, str]:
    mac = hmac.new(key, body, digest_for(algorithm)).digest()
    return {SIGNATURE_HEADER: base64.b64encode(mac).decode(), ALGORITHM_HEADER: algorithm}


def verify(key: bytes | None, body: bytes, headers: Mapping[str, str], allowed: Collection[str]) -> None:
    lowered = {k.lower(): v for k, v in headers.items()}
    signature = lowered.get(SIGNATURE_HEADER.lower())
    algorithm = lowered.get(ALGORITHM_HEADER.lower())
    if not signature or not algorithm:
        raise BadRequestError("Internal request missing required signature")
    if algorithm not in allowed:
        raise BadRequestError(
            f"This worker does not support the '{algorithm}' signature algorithm for internal requests"
        )
    if key is None:
        raise ServiceUnavailableError(
            "This worker is still starting up and has not been able to read a session key from the config topic yet"
        )
    expected = hmac.new(key, body, digest_for(algorithm)).digest()
    try:
        given = base64.b64decode(signature, validate=True)
    except ValueError:
        given = b""
    if not hmac.compare_digest(expected, given):
        raise ForbiddenError("Internal request contained invalid signature.")
