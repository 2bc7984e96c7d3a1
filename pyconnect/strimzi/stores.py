"""PKCS12 stores from PEM files, as Strimzi's ``tls_utils.sh`` makes them with keytool and openssl.

Pure functions over bytes; every error is :class:`StoreInputError` naming the file (never its content).

- :func:`truststore` is keytool's ``-import -storetype PKCS12`` of each certificate: a Java truststore
  (each certificate a trusted-certificate entry, alias = the file path as Strimzi passes it), readable
  by Java and by pyconnect (pyconnect.config.tls).
- :func:`keystore` is ``openssl pkcs12 -export -in CERT -inkey KEY -name ALIAS``: one key entry whose
  chain is every certificate of the certificate file, the key's own first.

Both are encrypted with PBES2 (PBKDF2-SHA256, AES-256-CBC) and carry an HMAC-SHA256 MAC.
"""

from __future__ import annotations

from collections.abc import Sequence

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import pkcs12

from pyconnect.errors import ConnectError

_STORABLE_KEYS = (
    rsa.RSAPrivateKey,
    ec.EllipticCurvePrivateKey,
    ed25519.Ed25519PrivateKey,
    ed448.Ed448PrivateKey,
)

Named = tuple[str, bytes]
"""``(path, content)`` of one input file."""


class StoreInputError(ConnectError, ValueError):
    """An input file does not hold what the store needs; the message names the file."""


def certificates(path: str, data: bytes) -> list[x509.Certificate]:
    """Every certificate of a PEM file (at least one)."""
    try:
        found = x509.load_pem_x509_certificates(data)
    except ValueError:
        found = []
    if not found:
        raise StoreInputError(f"{path} holds no PEM certificate that parses")
    return found


def private_key(path: str, data: bytes) -> PrivateKeyTypes:
    try:
        return serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise StoreInputError(f"{path} holds no unencrypted PEM private key that parses") from None


def truststore(files: Sequence[Named], password: str) -> bytes:
    """A PKCS12 truststore of every certificate of ``files`` (each file's path is its alias)."""
    if not files:
        raise StoreInputError("no certificate file to put in the truststore")
    entries = []
    for path, data in files:
        found = certificates(path, data)
        for index, cert in enumerate(found):
            alias = path if index == 0 else f"{path}-{index}"
            entries.append(pkcs12.PKCS12Certificate(cert, alias.encode()))
    return pkcs12.serialize_java_truststore(entries, _encryption(password))


def keystore(cert: Named, key: Named, alias: str, password: str) -> bytes:
    """A PKCS12 keystore with the key of ``key`` and the chain of ``cert`` under ``alias``."""
    chain = certificates(*cert)
    secret = private_key(*key)
    if chain[0].public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    ) != secret.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    ):
        raise StoreInputError(f"{key[0]} is not the private key of the certificate in {cert[0]}")
    if not isinstance(secret, _STORABLE_KEYS):
        raise StoreInputError(
            f"{key[0]} holds a {type(secret).__name__}, which a PKCS12 keystore cannot hold"
        )
    return pkcs12.serialize_key_and_certificates(
        alias.encode(), secret, chain[0], chain[1:] or None, _encryption(password)
    )


def _encryption(password: str) -> serialization.KeySerializationEncryption:
    return (
        serialization.PrivateFormat.PKCS12.encryption_builder()
        .key_cert_algorithm(pkcs12.PBES.PBESv2SHA256AndAES256CBC)
        .hmac_hash(hashes.SHA256())
        .build(password.encode())
    )
