"""KIP-507 request signatures: round trip and each rejection Java gives."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from pyconnect.errors import BadRequestError, ForbiddenError, ServiceUnavailableError
from pyconnect.herder.signing import ALGORITHM_HEADER, SIGNATURE_HEADER, sign, verify

KEY = bytes(range(32))
BODY = b'[{"k":"v"}]'


def test_signature_is_base64_hmac_sha256_of_the_exact_body() -> None:
    headers = sign(KEY, BODY)
    assert headers[ALGORITHM_HEADER] == "HmacSHA256"
    assert base64.b64decode(headers[SIGNATURE_HEADER]) == hmac.new(KEY, BODY, hashlib.sha256).digest()
    verify(KEY, BODY, {k.lower(): v for k, v in headers.items()}, ["HmacSHA256"])


@pytest.mark.parametrize(
    ("key", "body", "headers", "error", "status"),
    [
        (KEY, BODY, {}, BadRequestError, 400),
        (KEY, BODY, sign(KEY, BODY, "HmacSHA512"), BadRequestError, 400),
        (None, BODY, sign(KEY, BODY), ServiceUnavailableError, 503),
        (KEY, BODY + b" ", sign(KEY, BODY), ForbiddenError, 403),
        (b"other-key", BODY, sign(KEY, BODY), ForbiddenError, 403),
        (KEY, BODY, {SIGNATURE_HEADER: "!!", ALGORITHM_HEADER: "HmacSHA256"}, ForbiddenError, 403),
    ],
)
def test_rejections(
    key: bytes | None, body: bytes, headers: dict[str, str], error: type[Exception], status: int
) -> None:
    with pytest.raises(error) as caught:
        verify(key, body, headers, ["HmacSHA256"])
    assert caught.value.status == status  # type: ignore[attr-defined]
