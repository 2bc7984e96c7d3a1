"""Java TLS store configs become a client ``ssl.SSLContext`` (pyconnect.config.tls through client_configs).

The stores are made at test time with ``openssl`` and Java 17's ``keytool``, as an operator makes them;
each context proves itself by a real handshake with an in-process TLS server on 127.0.0.1 that
requires a client certificate of the test CA and reports the client's common name.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import ssl
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pyconnect.config.client_configs import ClientConfigError, producer_kwargs
from pyconnect.config.types import Password
from tests.tls_material import jks_from_pkcs12, pkcs12_from_pem, run, truststore

STORE_PW = "store-secret-1"
KEY_PW = "key-secret-2"
PASSWORDS = (STORE_PW, KEY_PW)


@dataclass(frozen=True)
class Material:
    dir: Path
    ca: Path
    server_key: Path
    server_cert: Path
    client_key: Path
    client_key_encrypted: Path
    client_cert: Path
    client_pem: Path
    client_p12: Path
    client_jks: Path
    client_jks_same_password: Path
    trust_jks: Path
    trust_p12: Path
    trust_p12_clear: Path
    foreign_jks: Path


def _certificate(d: Path, name: str, ca: str, key_args: list[str], extensions: str) -> None:
    run("openssl", "genpkey", *key_args, "-out", f"{name}.key", cwd=d)
    run("openssl", "req", "-new", "-key", f"{name}.key", "-subj", f"/CN={name}", "-out", f"{name}.csr", cwd=d)
    (d / f"{name}.ext").write_text(extensions)
    run(
        "openssl", "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
        "-CAcreateserial", "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=d,
    )  # fmt: skip


def _ca(d: Path, name: str) -> None:
    run(
        "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.pem", "-subj", f"/CN={name}", "-days", "2",
        "-addext", "basicConstraints=critical,CA:TRUE", cwd=d,
    )  # fmt: skip


@pytest.fixture(scope="module")
def material(tmp_path_factory: pytest.TempPathFactory) -> Material:
    d = tmp_path_factory.mktemp("tls")
    _ca(d, "ca")
    _ca(d, "foreign-ca")
    ec = ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
    server_ext = "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n"
    _certificate(d, "server", "ca", ec, server_ext)
    rsa = ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
    _certificate(d, "client", "ca", rsa, "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n")
    run(
        "openssl", "pkcs8", "-topk8", "-in", "client.key", "-out", "client-encrypted.key",
        "-v2", "aes-256-cbc", "-passout", f"pass:{KEY_PW}", cwd=d,
    )  # fmt: skip
    (d / "client-chain.pem").write_bytes((d / "client.pem").read_bytes() + (d / "ca.pem").read_bytes())
    (d / "client-keystore.pem").write_bytes(
        (d / "client-encrypted.key").read_bytes() + (d / "client-chain.pem").read_bytes()
    )
    clear_certificates = ["-J-Dkeystore.pkcs12.certProtectionAlgorithm=NONE"]
    p12 = pkcs12_from_pem(d / "client.key", d / "client-chain.pem", d / "client.p12", STORE_PW)
    return Material(
        dir=d,
        ca=d / "ca.pem",
        server_key=d / "server.key",
        server_cert=d / "server.pem",
        client_key=d / "client.key",
        client_key_encrypted=d / "client-encrypted.key",
        client_cert=d / "client-chain.pem",
        client_pem=d / "client-keystore.pem",
        client_p12=p12,
        client_jks=jks_from_pkcs12(p12, STORE_PW, d / "client.jks", STORE_PW, KEY_PW),
        client_jks_same_password=jks_from_pkcs12(p12, STORE_PW, d / "client-same.jks", STORE_PW, STORE_PW),
        trust_jks=truststore(d / "ca.pem", d / "trust.jks", "JKS", STORE_PW),
        trust_p12=truststore(d / "ca.pem", d / "trust.p12", "PKCS12", STORE_PW),
        trust_p12_clear=truststore(
            d / "ca.pem", d / "trust-clear.p12", "PKCS12", STORE_PW, *clear_certificates
        ),
        foreign_jks=truststore(d / "foreign-ca.pem", d / "foreign.jks", "JKS", STORE_PW),
    )


def context(config: dict[str, Any]) -> ssl.SSLContext:
    """The context a producer gets from these Java keys (the runtime's own translation)."""
    kwargs = producer_kwargs({"bootstrap.servers": "127.0.0.1:9092", "security.protocol": "SSL", **config})
    ctx = kwargs["ssl_context"]
    assert isinstance(ctx, ssl.SSLContext)
    return ctx


def server_context(m: Material) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(m.server_cert), str(m.server_key))
    ctx.load_verify_locations(cafile=str(m.ca))
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


async def handshake(client: ssl.SSLContext, m: Material, host: str = "localhost") -> str:
    """The common name the server saw, after a TLS handshake and one exchanged message."""
    seen: list[str] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        cert = writer.get_extra_info("peercert")
        seen.extend(v for rdn in cert["subject"] for k, v in rdn if k == "commonName")
        writer.write(b"ok")
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=server_context(m))
    port = server.sockets[0].getsockname()[1]
    async with server:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client, server_hostname=host)
        try:
            assert await reader.read(2) == b"ok"
        finally:
            writer.close()
            await writer.wait_closed()
    return ",".join(seen)


def trust_pem(m: Material) -> dict[str, Any]:
    return {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(m.ca)}


KEYSTORES: dict[str, Callable[[Material], dict[str, Any]]] = {
    "pem-file-encrypted-key": lambda m: {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(m.client_pem),
        "ssl.key.password": KEY_PW,
    },
    "pem-inline": lambda m: {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.key": m.client_key.read_text(),
        "ssl.keystore.certificate.chain": m.client_cert.read_text(),
    },
    "pem-inline-encrypted-key-as-password-values": lambda m: {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.key": Password(m.client_key_encrypted.read_text()),
        "ssl.keystore.certificate.chain": Password(m.client_cert.read_text()),
        "ssl.key.password": Password(KEY_PW),
    },
    "pkcs12": lambda m: {
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": str(m.client_p12),
        "ssl.keystore.password": STORE_PW,
    },
    "jks-with-key-password": lambda m: {
        "ssl.keystore.type": "JKS",
        "ssl.keystore.location": str(m.client_jks),
        "ssl.keystore.password": STORE_PW,
        "ssl.key.password": KEY_PW,
    },
    "jks-default-type-key-password-is-store-password": lambda m: {
        "ssl.keystore.location": str(m.client_jks_same_password),
        "ssl.keystore.password": STORE_PW,
    },
    "jks-typed-pkcs12-file": lambda m: {
        "ssl.keystore.type": "JKS",
        "ssl.keystore.location": str(m.client_p12),
        "ssl.keystore.password": STORE_PW,
    },
    "pkcs12-typed-jks-file": lambda m: {
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": str(m.client_jks),
        "ssl.keystore.password": STORE_PW,
        "ssl.key.password": KEY_PW,
    },
}


@pytest.mark.parametrize("keystore", KEYSTORES)
async def test_keystore_presents_the_client_certificate(material: Material, keystore: str) -> None:
    ctx = context({**trust_pem(material), **KEYSTORES[keystore](material)})
    assert await handshake(ctx, material) == "client"


TRUSTSTORES: dict[str, Callable[[Material], dict[str, Any]]] = {
    "pem-file": trust_pem,
    "pem-inline": lambda m: {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": m.ca.read_text()},
    "jks": lambda m: {
        "ssl.truststore.type": "JKS",
        "ssl.truststore.location": str(m.trust_jks),
        "ssl.truststore.password": STORE_PW,
    },
    "jks-default-type-without-password": lambda m: {"ssl.truststore.location": str(m.trust_jks)},
    "pkcs12": lambda m: {
        "ssl.truststore.type": "PKCS12",
        "ssl.truststore.location": str(m.trust_p12),
        "ssl.truststore.password": STORE_PW,
    },
    "pkcs12-clear-certificates-without-password": lambda m: {
        "ssl.truststore.type": "PKCS12",
        "ssl.truststore.location": str(m.trust_p12_clear),
    },
    "jks-typed-pkcs12-file": lambda m: {
        "ssl.truststore.location": str(m.trust_p12),
        "ssl.truststore.password": STORE_PW,
    },
    "pkcs12-typed-jks-file": lambda m: {
        "ssl.truststore.type": "PKCS12",
        "ssl.truststore.location": str(m.trust_jks),
        "ssl.truststore.password": STORE_PW,
    },
}


@pytest.mark.parametrize("store", TRUSTSTORES)
async def test_truststore_trusts_the_ca(material: Material, store: str) -> None:
    ctx = context({**TRUSTSTORES[store](material), **KEYSTORES["pkcs12"](material)})
    assert await handshake(ctx, material) == "client"


async def test_truststore_trusts_only_its_certificates(material: Material) -> None:
    foreign = {"ssl.truststore.location": str(material.foreign_jks), "ssl.truststore.password": STORE_PW}
    ctx = context({**foreign, **KEYSTORES["pkcs12"](material)})
    with pytest.raises(ssl.SSLCertVerificationError, match="certificate verify failed"):
        await handshake(ctx, material)


async def test_hostname_is_verified_unless_the_algorithm_is_empty(material: Material) -> None:
    config = {**trust_pem(material), **KEYSTORES["pkcs12"](material)}
    assert context(config).check_hostname
    with pytest.raises(ssl.SSLCertVerificationError, match="Hostname mismatch"):
        await handshake(context(config), material, host="broker.example")
    unchecked = context({**config, "ssl.endpoint.identification.algorithm": ""})
    assert not unchecked.check_hostname and unchecked.verify_mode == ssl.CERT_REQUIRED
    assert await handshake(unchecked, material, host="broker.example") == "client"


def test_no_truststore_means_the_system_defaults(material: Material) -> None:
    assert context({}).cert_store_stats() == ssl.create_default_context().cert_store_stats()
    assert context(trust_pem(material)).cert_store_stats()["x509_ca"] == 1


def test_the_key_file_is_gone_once_the_context_is_built(
    material: Material, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    made: list[tuple[str, int]] = []
    real_open = os.open

    def recording_open(path: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        if flags & os.O_CREAT and str(path).startswith(str(scratch)):
            made.append((str(path), mode))
        return real_open(path, flags, mode, **kw)

    monkeypatch.setattr(os, "open", recording_open)
    context({**trust_pem(material), **KEYSTORES["jks-with-key-password"](material)})
    assert [mode for _, mode in made] == [0o600]
    assert list(scratch.iterdir()) == []


def refusal(config: dict[str, Any]) -> str:
    with pytest.raises(ClientConfigError) as caught:
        context(config)
    message = str(caught.value)
    assert "\n" not in message
    for secret in PASSWORDS:
        assert secret not in message
    return message


def test_wrong_passwords_are_named_never_shown(material: Material) -> None:
    m = material
    assert refusal({**KEYSTORES["jks-with-key-password"](m), "ssl.keystore.password": "not-" + STORE_PW}) == (
        f"Invalid value {m.client_jks} for configuration ssl.keystore.location: "
        "wrong ssl.keystore.password, or the store is damaged"
    )
    assert refusal({**KEYSTORES["jks-with-key-password"](m), "ssl.key.password": STORE_PW}) == (
        f"Invalid value {m.client_jks} for configuration ssl.keystore.location: "
        "cannot recover the key of entry 'client': wrong ssl.key.password"
    )
    assert refusal({**KEYSTORES["jks-with-key-password"](m), "ssl.key.password": None}) == (
        f"Invalid value {m.client_jks} for configuration ssl.keystore.location: "
        "cannot recover the key of entry 'client': wrong ssl.keystore.password (no ssl.key.password)"
    )
    assert refusal({**KEYSTORES["pkcs12"](m), "ssl.keystore.password": KEY_PW}) == (
        f"Invalid value {m.client_p12} for configuration ssl.keystore.location: "
        "wrong ssl.keystore.password, or the store uses an algorithm that cannot be read"
    )
    assert refusal({**TRUSTSTORES["jks"](m), "ssl.truststore.password": KEY_PW}) == (
        f"Invalid value {m.trust_jks} for configuration ssl.truststore.location: "
        "wrong ssl.truststore.password, or the store is damaged"
    )
    assert refusal({**KEYSTORES["pem-file-encrypted-key"](m), "ssl.key.password": STORE_PW}) == (
        f"Invalid value {m.client_pem} for configuration ssl.keystore.location: "
        "cannot decrypt the private key: wrong ssl.key.password"
    )
    assert refusal({**KEYSTORES["pem-file-encrypted-key"](m), "ssl.key.password": ""}) == (
        f"Invalid value {m.client_pem} for configuration ssl.keystore.location: "
        "the private key is encrypted; set ssl.key.password"
    )


def test_missing_files_wrong_types_and_keyless_stores(material: Material) -> None:
    m = material
    missing = m.dir / "missing.jks"
    assert refusal({"ssl.truststore.location": str(missing), "ssl.truststore.password": STORE_PW}) == (
        f"Invalid value {missing} for configuration ssl.truststore.location: No such file or directory"
    )
    assert refusal({**KEYSTORES["pkcs12"](m), "ssl.keystore.type": "PEM", "ssl.keystore.password": None}) == (
        f"Invalid value {m.client_p12} for configuration ssl.keystore.location: "
        "ssl.keystore.type is PEM but the file is a PKCS12 store, not PEM text"
    )
    assert refusal({"ssl.truststore.type": "PEM", "ssl.truststore.location": str(m.trust_jks)}) == (
        f"Invalid value {m.trust_jks} for configuration ssl.truststore.location: "
        "ssl.truststore.type is PEM but the file is a JKS store, not PEM text"
    )
    assert refusal({"ssl.truststore.location": str(m.ca)}) == (
        f"Invalid value {m.ca} for configuration ssl.truststore.location: "
        "the file is PEM text; set ssl.truststore.type=PEM"
    )
    assert refusal({**KEYSTORES["jks-with-key-password"](m), "ssl.keystore.location": str(m.trust_jks)}) == (
        f"Invalid value {m.trust_jks} for configuration ssl.keystore.location: no private key entry in the store"
    )
    assert refusal({**KEYSTORES["pkcs12"](m), "ssl.keystore.location": str(m.trust_p12)}) == (
        f"Invalid value {m.trust_p12} for configuration ssl.keystore.location: no private key entry in the store"
    )
    assert refusal({"ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(m.trust_p12)}) == (
        f"Invalid value {m.trust_p12} for configuration ssl.truststore.location: "
        "no trusted certificate in the store readable without ssl.truststore.password"
    )
    assert refusal({"ssl.keystore.type": "BCFKS", "ssl.keystore.location": str(m.client_p12)}) == (
        "Invalid value BCFKS for configuration ssl.keystore.type: the store types read here are JKS, PKCS12, PEM"
    )


def test_a_damaged_jks_store_is_named(material: Material, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.jks"
    damaged.write_bytes(material.client_jks.read_bytes()[:100])
    assert refusal(
        {**KEYSTORES["jks-with-key-password"](material), "ssl.keystore.location": str(damaged)}
    ) == (f"Invalid value {damaged} for configuration ssl.keystore.location: the JKS store is truncated")


def test_a_missing_tool_fails_saying_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    with pytest.raises(pytest.fail.Exception, match=r"^keytool not found on PATH: install a Java 17 JDK \("):
        run("keytool", "-help", cwd=tmp_path)


def test_java_rules_on_which_keys_go_together(material: Material) -> None:
    m = material
    inline = KEYSTORES["pem-inline"](m)
    assert refusal({**inline, "ssl.keystore.type": None}) == (
        "Invalid value [hidden] for configuration ssl.keystore.key: an inline key needs ssl.keystore.type=PEM, not JKS"
    )
    assert refusal({**inline, "ssl.keystore.certificate.chain": None}) == (
        "Invalid configuration ssl.keystore.certificate.chain: not set, but ssl.keystore.key is"
    )
    assert refusal({**inline, "ssl.keystore.password": STORE_PW}) == (
        "Invalid configuration ssl.keystore.password: a PEM key takes no store password, only ssl.key.password"
    )
    assert refusal({**KEYSTORES["pkcs12"](m), "ssl.keystore.password": None}) == (
        f"Invalid configuration ssl.keystore.password: not set, but the PKCS12 keystore {m.client_p12} needs it"
    )
    assert refusal({"ssl.truststore.certificates": m.ca.read_text()}) == (
        "Invalid value [hidden] for configuration ssl.truststore.certificates: "
        "inline certificates need ssl.truststore.type=PEM, not JKS"
    )
    assert refusal({**trust_pem(m), "ssl.truststore.password": STORE_PW}) == (
        "Invalid configuration ssl.truststore.password: a PEM truststore takes no password"
    )
