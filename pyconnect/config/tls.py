"""Java's TLS store configs -> ``ssl.SSLContext``: the client side of Kafka's ``DefaultSslEngineFactory``.

Called (through :mod:`pyconnect.config.client_configs`) for every Kafka client whose
``security.protocol`` is ``SSL`` or ``SASL_SSL``; synchronous, reads the store files on each call and
keeps nothing. Values may be strings or :class:`~pyconnect.config.types.Password`; ``None`` and ``""``
count as unset.

**Trust** (``ssl.truststore.*``): a file at ``ssl.truststore.location`` of type PEM (certificates),
JKS or PKCS12 (opened with ``ssl.truststore.password``; without one, as in Java, no integrity check and
only what is stored unencrypted: every certificate of a JKS store, the unencrypted certificate bags of a
PKCS12 store), or the PEM text ``ssl.truststore.certificates`` (type PEM). The context then trusts
exactly those certificates, each one an anchor (intermediates included, as Java's trust manager does);
with no truststore, the system's default CAs. A JKS truststore trusts its trusted-certificate entries
and the first certificate of each key entry (Java's ``TrustStoreUtil``).

**Key** (``ssl.keystore.*``, mutual TLS): a file at ``ssl.keystore.location`` of type PEM (one private
key, encrypted or not, and its certificate chain), JKS or PKCS12 (``ssl.keystore.password`` required;
the key password ``ssl.key.password`` defaults to the store password), or the inline PEM pair
``ssl.keystore.certificate.chain`` + ``ssl.keystore.key`` (type PEM; ``ssl.key.password`` for an
encrypted key). A store with several key entries gives its first.

**Types.** Unset means JKS (``SslConfigs.DEFAULT_SSL_KEYSTORE_TYPE`` and ``..._TRUSTSTORE_TYPE``). Since
JDK 9 (``keystore.type.compat``) a JKS-typed store also opens PKCS12 files and a PKCS12-typed one JKS
files, so for those two the content decides: ``0xFEEDFEED`` is JKS, DER is PKCS12. PEM text under JKS or
PKCS12, or a binary file under PEM, is an error naming the type to set. Java's rules on which keys go
together are kept (inline keys only with type PEM, no store password with PEM, a JKS/PKCS12 keystore
needs its password, ...).

**Hostname.** ``ssl.endpoint.identification.algorithm`` (default ``https``) verifies the broker's host
name; the empty string turns that off (the chain is still verified).

**Errors** raise :class:`TlsConfigError`, one line, ``Invalid value <file> for configuration <key>:
<reason>`` (``[hidden]`` for inline PEM values); no password or key material is ever in a message.

**Secrets on disk.** Python's ``ssl`` loads a key only from a file: the key, re-encrypted under a
one-time random password, and its chain are written to a 0600 file in a private temporary directory,
loaded, and deleted before this returns.

Where we accept more than Java: a PKCS12 truststore trusts every certificate in it (Java only those
stored as trusted-certificate entries, so a store made by ``openssl pkcs12 -nokeys`` is empty to
Java); a PEM key may be PKCS#1/SEC1 as well as PKCS#8, and an unencrypted PEM key is read even when
``ssl.key.password`` is set; a PKCS12 key is opened with the store password (keytool gives PKCS12
keys no password of their own).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import pkcs12

from pyconnect.config.keystores import (
    JCEKS_MAGIC,
    JKS_MAGIC,
    JksStore,
    KeyStoreFormatError,
    KeyStorePasswordError,
    pkcs12_clear_certificates,
    read_jks,
    recover_jks_key,
)
from pyconnect.config.types import Password
from pyconnect.errors import ConfigError

DEFAULT_STORE_TYPE = "JKS"
STORE_TYPES = ("JKS", "PKCS12", "PEM")

TRUSTSTORE_TYPE = "ssl.truststore.type"
TRUSTSTORE_LOCATION = "ssl.truststore.location"
TRUSTSTORE_PASSWORD = "ssl.truststore.password"
TRUSTSTORE_CERTIFICATES = "ssl.truststore.certificates"
KEYSTORE_TYPE = "ssl.keystore.type"
KEYSTORE_LOCATION = "ssl.keystore.location"
KEYSTORE_PASSWORD = "ssl.keystore.password"
KEYSTORE_KEY = "ssl.keystore.key"
KEYSTORE_CHAIN = "ssl.keystore.certificate.chain"
KEY_PASSWORD = "ssl.key.password"
ENDPOINT_IDENTIFICATION = "ssl.endpoint.identification.algorithm"

_HIDDEN = Password.HIDDEN
_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----.*?-----END \1-----", re.DOTALL)


class TlsConfigError(ConfigError, ValueError):
    """A TLS setting cannot be honoured; the message names the key (and the file), never a secret."""


@dataclass(frozen=True)
class KeyMaterial:
    """A private key and its certificate chain (the key's certificate first), and where they came from."""

    key: PrivateKeyTypes
    chain: list[x509.Certificate]
    setting: str
    shown: str


def client_ssl_context(config: Mapping[str, Any]) -> ssl.SSLContext:
    """The context a Kafka client with these ``ssl.*`` keys uses (see the module docstring)."""
    trusted = truststore_certificates(config)
    material = keystore_material(config)
    if trusted is None:
        context = ssl.create_default_context()
    else:
        context = ssl.create_default_context(cadata=certificates_pem(trusted))
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    if material is not None:
        load_key_material(context, material)
    context.check_hostname = verifies_hostname(config)
    return context


def certificates_pem(certificates: list[x509.Certificate]) -> str:
    """The certificates as PEM text (``cadata`` of ``load_verify_locations``)."""
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in certificates)


def verifies_hostname(config: Mapping[str, Any]) -> bool:
    value = config.get(ENDPOINT_IDENTIFICATION)
    return value is None or str(value).strip() != ""


def truststore_certificates(config: Mapping[str, Any]) -> list[x509.Certificate] | None:
    """The certificates the truststore settings name, or None when there is no truststore."""
    kind = _store_type(config, TRUSTSTORE_TYPE)
    location = _location(config, TRUSTSTORE_LOCATION)
    password = _secret(config, TRUSTSTORE_PASSWORD)
    inline = _secret(config, TRUSTSTORE_CERTIFICATES)
    if inline is not None:
        if kind != "PEM":
            raise _error(
                TRUSTSTORE_CERTIFICATES,
                f"inline certificates need {TRUSTSTORE_TYPE}=PEM, not {kind}",
                _HIDDEN,
            )
        if location is not None:
            raise _error(TRUSTSTORE_CERTIFICATES, f"{TRUSTSTORE_LOCATION} is set too; give one of them")
        if password is not None:
            raise _error(TRUSTSTORE_PASSWORD, "a PEM truststore takes no password")
        return _pem_certificates(inline, TRUSTSTORE_CERTIFICATES, _HIDDEN)
    if location is None:
        if password is not None:
            raise _error(TRUSTSTORE_PASSWORD, f"{TRUSTSTORE_LOCATION} is not set")
        return None
    if kind == "PEM" and password is not None:
        raise _error(TRUSTSTORE_PASSWORD, "a PEM truststore takes no password")
    data = _read(TRUSTSTORE_LOCATION, location)
    found = _format(data)
    _check_format(kind, found, TRUSTSTORE_LOCATION, TRUSTSTORE_TYPE, location)
    if found == "PEM":
        return _pem_certificates(data.decode("utf-8"), TRUSTSTORE_LOCATION, location)
    if found == "JKS":
        store = _open_jks(data, password, TRUSTSTORE_LOCATION, TRUSTSTORE_PASSWORD, location)
        der = [c for _, c in store.trusted] + [e.chain[0] for e in store.keys if e.chain]
    elif password is None:
        try:
            der = pkcs12_clear_certificates(data)
        except KeyStoreFormatError:
            raise _error(TRUSTSTORE_LOCATION, "not a PKCS12 store", location) from None
    else:
        opened = _open_pkcs12(data, password, TRUSTSTORE_LOCATION, TRUSTSTORE_PASSWORD, location)
        certs = ([opened.cert] if opened.cert else []) + list(opened.additional_certs)
        der = [c.certificate.public_bytes(serialization.Encoding.DER) for c in certs]
    if not der:
        unreadable = f" readable without {TRUSTSTORE_PASSWORD}" if password is None else ""
        raise _error(TRUSTSTORE_LOCATION, f"no trusted certificate in the store{unreadable}", location)
    return [_der_certificate(c, TRUSTSTORE_LOCATION, location) for c in der]


def keystore_material(config: Mapping[str, Any]) -> KeyMaterial | None:
    """The client's key and chain from the keystore settings, or None when there is no keystore."""
    kind = _store_type(config, KEYSTORE_TYPE)
    location = _location(config, KEYSTORE_LOCATION)
    password = _secret(config, KEYSTORE_PASSWORD)
    key_password = _secret(config, KEY_PASSWORD)
    inline_key = _secret(config, KEYSTORE_KEY)
    inline_chain = _secret(config, KEYSTORE_CHAIN)
    if inline_key is not None:
        if kind != "PEM":
            raise _error(KEYSTORE_KEY, f"an inline key needs {KEYSTORE_TYPE}=PEM, not {kind}", _HIDDEN)
        if inline_chain is None:
            raise _error(KEYSTORE_CHAIN, f"not set, but {KEYSTORE_KEY} is")
        if location is not None:
            raise _error(KEYSTORE_KEY, f"{KEYSTORE_LOCATION} is set too; give one of them")
        if password is not None:
            raise _error(KEYSTORE_PASSWORD, f"a PEM key takes no store password, only {KEY_PASSWORD}")
        key = _pem_key(inline_key, key_password, KEYSTORE_KEY, _HIDDEN)
        return KeyMaterial(
            key, _pem_certificates(inline_chain, KEYSTORE_CHAIN, _HIDDEN), KEYSTORE_KEY, _HIDDEN
        )
    if inline_chain is not None:
        raise _error(KEYSTORE_KEY, f"not set, but {KEYSTORE_CHAIN} is")
    if location is None:
        if password is not None:
            raise _error(KEYSTORE_PASSWORD, f"{KEYSTORE_LOCATION} is not set")
        return None
    if kind == "PEM" and password is not None:
        raise _error(KEYSTORE_PASSWORD, f"a PEM keystore takes no store password, only {KEY_PASSWORD}")
    if kind != "PEM" and password is None:
        raise _error(KEYSTORE_PASSWORD, f"not set, but the {kind} keystore {location} needs it")
    data = _read(KEYSTORE_LOCATION, location)
    found = _format(data)
    _check_format(kind, found, KEYSTORE_LOCATION, KEYSTORE_TYPE, location)
    if found == "PEM":
        text = data.decode("utf-8")
        key = _pem_key(text, key_password, KEYSTORE_LOCATION, location)
        return KeyMaterial(
            key, _pem_certificates(text, KEYSTORE_LOCATION, location), KEYSTORE_LOCATION, location
        )
    assert password is not None
    if found == "JKS":
        store = _open_jks(data, password, KEYSTORE_LOCATION, KEYSTORE_PASSWORD, location)
        if not store.keys:
            raise _error(KEYSTORE_LOCATION, "no private key entry in the store", location)
        entry = store.keys[0]
        try:
            plain = recover_jks_key(entry, key_password if key_password is not None else password)
        except KeyStorePasswordError:
            wrong = KEY_PASSWORD if key_password is not None else f"{KEYSTORE_PASSWORD} (no {KEY_PASSWORD})"
            raise _error(
                KEYSTORE_LOCATION, f"cannot recover the key of entry '{entry.alias}': wrong {wrong}", location
            ) from None
        except KeyStoreFormatError as exc:
            raise _error(KEYSTORE_LOCATION, str(exc), location) from None
        key = _der_key(plain, KEYSTORE_LOCATION, location)
        chain = [_der_certificate(c, KEYSTORE_LOCATION, location) for c in entry.chain]
    else:
        opened = _open_pkcs12(data, password, KEYSTORE_LOCATION, KEYSTORE_PASSWORD, location)
        if opened.key is None or opened.cert is None:
            raise _error(KEYSTORE_LOCATION, "no private key entry in the store", location)
        key = opened.key
        chain = [opened.cert.certificate] + [c.certificate for c in opened.additional_certs]
    if not chain:
        raise _error(KEYSTORE_LOCATION, "the key entry has no certificate chain", location)
    return KeyMaterial(key, chain, KEYSTORE_LOCATION, location)


# -- reading --------------------------------------------------------------------------------------------


def _error(key: str, reason: str, shown: str | None = None) -> TlsConfigError:
    if shown is None:
        return TlsConfigError(f"Invalid configuration {key}: {reason}")
    return TlsConfigError(f"Invalid value {shown} for configuration {key}: {reason}")


def _secret(config: Mapping[str, Any], key: str) -> str | None:
    value = config.get(key)
    if isinstance(value, Password):
        value = value.value
    if value is None or str(value) == "":
        return None
    return str(value)


def _location(config: Mapping[str, Any], key: str) -> str | None:
    value = _secret(config, key)
    return None if value is None or not value.strip() else value.strip()


def _store_type(config: Mapping[str, Any], key: str) -> str:
    declared = (_location(config, key) or DEFAULT_STORE_TYPE).upper()
    if declared not in STORE_TYPES:
        raise _error(key, f"the store types read here are {', '.join(STORE_TYPES)}", declared)
    return declared


def _read(key: str, location: str) -> bytes:
    try:
        return Path(location).read_bytes()
    except OSError as exc:
        raise _error(key, exc.strerror or type(exc).__name__, location) from None


def _format(data: bytes) -> str:
    """What the bytes are: PEM, JKS, JCEKS, PKCS12 (DER) or unknown."""
    if data.startswith(JKS_MAGIC):
        return "JKS"
    if data.startswith(JCEKS_MAGIC):
        return "JCEKS"
    with contextlib.suppress(UnicodeDecodeError):
        if "-----BEGIN " in data.decode("utf-8"):
            return "PEM"
    return "PKCS12" if data[:1] == b"\x30" else "unknown"


def _check_format(declared: str, found: str, key: str, type_key: str, location: str) -> None:
    if declared == "PEM" and found != "PEM":
        what = f"a {found} store" if found in ("JKS", "JCEKS", "PKCS12") else "binary"
        raise _error(key, f"{type_key} is PEM but the file is {what}, not PEM text", location)
    if declared != "PEM" and found == "PEM":
        raise _error(key, f"the file is PEM text; set {type_key}=PEM", location)
    if declared != "PEM" and found not in ("JKS", "PKCS12"):
        raise _error(key, f"not a {declared} store (found {found} data)", location)


def _open_jks(data: bytes, password: str | None, key: str, password_key: str, location: str) -> JksStore:
    try:
        return read_jks(data, password)
    except KeyStorePasswordError:
        raise _error(key, f"wrong {password_key}, or the store is damaged", location) from None
    except KeyStoreFormatError as exc:
        raise _error(key, str(exc), location) from None


def _open_pkcs12(
    data: bytes, password: str, key: str, password_key: str, location: str
) -> pkcs12.PKCS12KeyAndCertificates:
    try:
        return pkcs12.load_pkcs12(data, password.encode("utf-8"))
    except (ValueError, UnsupportedAlgorithm):
        pass
    try:
        pkcs12_clear_certificates(data)
    except KeyStoreFormatError:
        raise _error(key, "not a PKCS12 store", location) from None
    raise _error(key, f"wrong {password_key}, or the store uses an algorithm that cannot be read", location)


def _pem_blocks(text: str, labels: tuple[str, ...]) -> list[str]:
    return [m.group(0) for m in _PEM_BLOCK.finditer(text) if m.group(1) in labels]


def _pem_certificates(text: str, key: str, shown: str) -> list[x509.Certificate]:
    blocks = _pem_blocks(text, ("CERTIFICATE",))
    if not blocks:
        raise _error(key, "no CERTIFICATE block", shown)
    try:
        return [x509.load_pem_x509_certificate(b.encode("ascii")) for b in blocks]
    except (ValueError, UnicodeEncodeError):
        raise _error(key, "a CERTIFICATE block cannot be parsed", shown) from None


def _pem_key(text: str, password: str | None, key: str, shown: str) -> PrivateKeyTypes:
    labels = ("PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY")
    blocks = _pem_blocks(text, labels)
    if len(blocks) != 1:
        raise _error(key, f"expected one PRIVATE KEY block, found {len(blocks)}", shown)
    block = blocks[0]
    encrypted = block.startswith("-----BEGIN ENCRYPTED") or "Proc-Type: 4,ENCRYPTED" in block
    if encrypted and password is None:
        raise _error(key, f"the private key is encrypted; set {KEY_PASSWORD}", shown)
    try:
        return serialization.load_pem_private_key(
            block.encode("ascii"), password.encode("utf-8") if encrypted and password is not None else None
        )
    except (ValueError, TypeError, UnsupportedAlgorithm, UnicodeEncodeError):
        reason = (
            f"cannot decrypt the private key: wrong {KEY_PASSWORD}" if encrypted else "unreadable private key"
        )
        raise _error(key, reason, shown) from None


def _der_certificate(der: bytes, key: str, shown: str) -> x509.Certificate:
    try:
        return x509.load_der_x509_certificate(der)
    except ValueError:
        raise _error(key, "a certificate in the store cannot be parsed", shown) from None


def _der_key(der: bytes, key: str, shown: str) -> PrivateKeyTypes:
    try:
        return serialization.load_der_private_key(der, None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise _error(key, "the private key in the store cannot be parsed", shown) from None


# -- loading the key into the context -----------------------------------------------------------------


def load_key_material(context: ssl.SSLContext, material: KeyMaterial) -> None:
    """``load_cert_chain`` from a 0600 file in a private directory, deleted before returning; the key in
    it is encrypted under a password that lives only in this call."""
    one_time = secrets.token_urlsafe(32)
    pem = material.key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(one_time.encode("ascii")),
    ) + b"".join(c.public_bytes(serialization.Encoding.PEM) for c in material.chain)
    with tempfile.TemporaryDirectory(prefix="pyconnect-tls-") as directory:
        path = os.path.join(directory, "key.pem")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(pem)
            context.load_cert_chain(path, password=one_time)
        except ssl.SSLError as exc:
            reason = (
                f"the private key does not fit the chain's first certificate ({exc.reason or 'SSLError'})"
            )
            raise _error(material.setting, reason, material.shown) from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
