"""Reading Java key store files without Java: the JKS format, and the certificates of a PKCS12 store
that has no password to open it.

Only the parts Kafka clients need; both readers are pure functions over bytes and raise
:class:`KeyStoreFormatError` (malformed data), :class:`KeyStorePasswordError` (integrity check or key
recovery failed) with messages that never contain a password or key material.

**JKS** (Sun's ``JavaKeyStore``): a big-endian stream ``0xFEEDFEED``, version (1 or 2), entry count,
then per entry a tag (1 private key, 2 trusted certificate), the alias (Java ``DataInput.readUTF``), the
creation time (ms), and either an ``EncryptedPrivateKeyInfo`` plus its certificate chain or one
certificate (version 2 writes each certificate's type, ``X.509``, before its length). The store ends
with ``SHA-1(password as UTF-16BE || "Mighty Aphrodite" || everything before)``; without a password
the check is skipped, as Java does. Private keys are protected by Sun's ``KeyProtector`` (OID
1.3.6.1.4.1.42.2.17.1.1): ``salt(20) || key XOR keystream || SHA-1(password || key)`` where the
keystream is ``d1 d2 ...`` with ``d0 = salt`` and ``d(i) = SHA-1(password || d(i-1))``, and the key
is PKCS#8 DER.

**PKCS12 without a password**: Java opens such a store but skips its encrypted parts (and the MAC);
:func:`pkcs12_clear_certificates` returns the certificates of the unencrypted ``certBag`` entries (a
store whose certificates are encrypted, as keytool writes them by default, gives none).
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass, field

from pyconnect.errors import ConfigError

JKS_MAGIC = b"\xfe\xed\xfe\xed"
JCEKS_MAGIC = b"\xce\xce\xce\xce"
KEY_PROTECTOR_OID = "1.3.6.1.4.1.42.2.17.1.1"
_WHITENER = b"Mighty Aphrodite"
_DIGEST_LEN = 20

_PKCS7_DATA = "1.2.840.113549.1.7.1"
_CERT_BAG = "1.2.840.113549.1.12.10.1.3"
_X509_CERTIFICATE = "1.2.840.113549.1.9.22.1"


class KeyStoreFormatError(ConfigError, ValueError):
    """The bytes are not a well-formed store of the expected format."""


class KeyStorePasswordError(ConfigError, ValueError):
    """The store's integrity check or a key's recovery failed: a wrong password (or a damaged file)."""


@dataclass(frozen=True)
class JksKeyEntry:
    alias: str
    protected_key: bytes = field(repr=False)
    """The ``EncryptedPrivateKeyInfo`` DER; :func:`recover_jks_key` gives the PKCS#8 key."""
    chain: list[bytes]
    """DER certificates, the key's own first."""


@dataclass
class JksStore:
    keys: list[JksKeyEntry] = field(default_factory=list)
    trusted: list[tuple[str, bytes]] = field(default_factory=list)
    """``(alias, DER certificate)`` of the trusted-certificate entries."""


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise KeyStoreFormatError("the JKS store is truncated")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def u16(self) -> int:
        return int(struct.unpack(">H", self.take(2))[0])

    def u32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def utf(self) -> str:
        return self.take(self.u16()).decode("utf-8", "replace")

    def certificate(self, version: int) -> bytes:
        if version == 2:
            kind = self.utf()
            if kind != "X.509":
                raise KeyStoreFormatError(f"the JKS store holds a certificate of type {kind}, not X.509")
        return self.take(self.u32())


def read_jks(data: bytes, password: str | None) -> JksStore:
    """The entries of a JKS store; its integrity is checked when ``password`` is given."""
    reader = _Reader(data)
    if reader.take(4) != JKS_MAGIC:
        raise KeyStoreFormatError("not a JKS store (no 0xFEEDFEED magic)")
    version = reader.u32()
    if version not in (1, 2):
        raise KeyStoreFormatError(f"unknown JKS version {version}")
    store = JksStore()
    for _ in range(reader.u32()):
        tag = reader.u32()
        alias = reader.utf()
        reader.take(8)  # creation time
        if tag == 1:
            protected = reader.take(reader.u32())
            chain = [reader.certificate(version) for _ in range(reader.u32())]
            store.keys.append(JksKeyEntry(alias, protected, chain))
        elif tag == 2:
            store.trusted.append((alias, reader.certificate(version)))
        else:
            raise KeyStoreFormatError(f"unknown JKS entry tag {tag}")
    body = data[: reader.pos]
    expected = reader.take(_DIGEST_LEN)
    if password is not None:
        actual = hashlib.sha1(password.encode("utf-16-be") + _WHITENER + body).digest()
        if not hmac.compare_digest(actual, expected):
            raise KeyStorePasswordError("Keystore was tampered with, or password was incorrect")
    return store


def recover_jks_key(entry: JksKeyEntry, password: str) -> bytes:
    """The PKCS#8 DER private key of ``entry``, unprotected with ``password`` (Sun's ``KeyProtector``)."""
    algorithm, protected = _encrypted_private_key_info(entry.protected_key)
    if algorithm != KEY_PROTECTOR_OID:
        raise KeyStoreFormatError(
            f"the key of entry '{entry.alias}' is protected by algorithm {algorithm}, not JKS's KeyProtector"
        )
    if len(protected) < 2 * _DIGEST_LEN:
        raise KeyStoreFormatError(f"the protected key of entry '{entry.alias}' is truncated")
    salt, encrypted, check = (
        protected[:_DIGEST_LEN],
        protected[_DIGEST_LEN:-_DIGEST_LEN],
        protected[-_DIGEST_LEN:],
    )
    secret = password.encode("utf-16-be")
    stream = bytearray()
    digest = salt
    while len(stream) < len(encrypted):
        digest = hashlib.sha1(secret + digest).digest()
        stream += digest
    plain = bytes(a ^ b for a, b in zip(encrypted, stream, strict=False))
    if not hmac.compare_digest(hashlib.sha1(secret + plain).digest(), check):
        raise KeyStorePasswordError(f"Cannot recover key of entry '{entry.alias}'")
    return plain


def pkcs12_clear_certificates(data: bytes) -> list[bytes]:
    """The DER certificates of the unencrypted ``certBag`` entries of a PKCS12 (PFX) store."""
    try:
        certificates: list[bytes] = []
        authenticated_safe = _data(_children(_only(data, 0x30))[1])
        if authenticated_safe is None:
            raise ValueError("the authenticated safe is not of type data")
        for info in _children(_only(authenticated_safe, 0x30)):
            safe_contents = _data(info)
            if safe_contents is None:
                continue  # encryptedData: needs the password
            for bag in _children(_only(safe_contents, 0x30)):
                bag_id, value, *_ = _children(_only(bag, 0x30))
                if _oid(bag_id) != _CERT_BAG:
                    continue
                cert_id, cert_value = _children(_only(_explicit(value), 0x30))[:2]
                if _oid(cert_id) == _X509_CERTIFICATE:
                    certificates.append(_only(_explicit(cert_value), 0x04))
        return certificates
    except (IndexError, ValueError) as exc:
        raise KeyStoreFormatError(f"not a PKCS12 store ({exc})") from None


# -- a DER reader, enough for the structures above (definite lengths only) --------------------------------

_Tlv = tuple[int, bytes]


def _tlv(data: bytes, pos: int) -> tuple[_Tlv, int]:
    if pos + 2 > len(data):
        raise ValueError("truncated DER")
    tag, length = data[pos], data[pos + 1]
    pos += 2
    if length & 0x80:
        size = length & 0x7F
        if size == 0 or size > 4 or pos + size > len(data):
            raise ValueError("unsupported DER length")
        length = int.from_bytes(data[pos : pos + size], "big")
        pos += size
    if pos + length > len(data):
        raise ValueError("truncated DER")
    return (tag, data[pos : pos + length]), pos + length


def _only(data: bytes, tag: int) -> bytes:
    (found, content), _ = _tlv(data, 0)
    if found != tag:
        raise ValueError(f"expected DER tag {tag:#x}, found {found:#x}")
    return content


def _children(content: bytes) -> list[bytes]:
    """The encoded elements inside a constructed value's ``content``."""
    out, pos = [], 0
    while pos < len(content):
        _, end = _tlv(content, pos)
        out.append(content[pos:end])
        pos = end
    return out


def _explicit(element: bytes) -> bytes:
    """The single element inside a ``[0] EXPLICIT`` wrapper."""
    return _only(element, 0xA0)


def _oid(element: bytes) -> str:
    raw = _only(element, 0x06)
    if not raw:
        raise ValueError("empty OID")
    arcs = [raw[0] // 40 if raw[0] < 80 else 2, raw[0] % 40 if raw[0] < 80 else raw[0] - 80]
    value = 0
    for byte in raw[1:]:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            arcs.append(value)
            value = 0
    return ".".join(map(str, arcs))


def _data(content_info: bytes) -> bytes | None:
    """The octets of a PKCS#7 ``data`` ContentInfo; None for another content type."""
    content_type, *rest = _children(_only(content_info, 0x30))
    if _oid(content_type) != _PKCS7_DATA:
        return None
    return _only(_explicit(rest[0]), 0x04)


def _encrypted_private_key_info(data: bytes) -> tuple[str, bytes]:
    try:
        algorithm, encrypted = _children(_only(data, 0x30))[:2]
        return _oid(_children(_only(algorithm, 0x30))[0]), _only(encrypted, 0x04)
    except (IndexError, ValueError) as exc:
        raise KeyStoreFormatError(f"malformed protected key ({exc})") from None
