"""Security for the local KRaft clusters of :mod:`pyconnect.testing.kafka`: users, certificates, ACLs.

Size: over 600 lines because the certificate authority, the keystores and the SASL/TLS listener configs
of a secured test cluster are built together.

``up --security PROTOCOL`` secures the client listener of every node with one of:

- ``sasl_plaintext`` / ``sasl_ssl``: SASL with SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN enabled at once.
  SCRAM credentials are written into the metadata log when the node is formatted (``kafka-storage
  format --add-scram``); PLAIN users are listed in the listener's JAAS config. Every user has the same
  password for the three mechanisms.
- ``ssl``: TLS, the broker authenticated by a certificate of the cluster's own CA. Client certificates
  are requested, not required: a client presenting one of the CA's certificates is ``User:<CN>``, a
  client without one is ``User:ANONYMOUS``.
- ``mtls``: TLS with client certificates required; the principal is ``User:<CN>``.

``oauth=True`` (``up --oauthbearer``, SASL protocols only) also enables OAUTHBEARER on the client listener:
a token server of :mod:`pyconnect.testing.token_server` (one per cluster, on 127.0.0.1, HTTPS on
``sasl_ssl``) issues RS256 JWTs to the users by the client-credentials grant (client id = user name,
client secret = password), and the brokers validate them with Kafka's
``OAuthBearerValidatorCallbackHandler`` against its JWKS endpoint (the JVM system property
``org.apache.kafka.sasl.oauthbearer.allowed.urls`` lists both URLs, as Kafka 4 requires). The principal
is ``User:<sub>``, so ACLs are the same as with SCRAM. A broker closes a connection whose token expired
(KIP-368), so a short ``token_lifetime_s`` makes clients log in again.

Whatever the protocol: the controller listener is SASL_PLAINTEXT with PLAIN for the ``broker`` user
(so no unauthenticated principal can act as a broker), inter-broker traffic uses the client listener
as ``User:broker`` (PLAIN over SASL, the broker's certificate over TLS), the ``StandardAuthorizer``
runs with ``super.users=User:broker;User:admin`` and ``allow.everyone.if.no.acl.found=false``, so a
user other than ``admin`` may do nothing until :func:`grant` allows it.

The material lives in ``<cluster dir>/security/``: ``ca.pem`` (the truststore, type PEM), ``broker.pem``
and ``<user>.pem`` (unencrypted PKCS#8 key + certificate chain, readable by Java's PEM keystore and
Python's ``ssl``), ``security.json`` (protocol and passwords, mode 0600) and one
``client-<user>[-<mechanism>].properties`` per user with the Java client keys (usable as a
``--command-config`` of Kafka's tools or merged into a worker's properties). Certificates and keys are
made with the ``cryptography`` package the project already depends on, so no ``openssl`` is needed.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pyconnect.errors import ConnectError

PROTOCOLS = ("plaintext", "sasl_plaintext", "sasl_ssl", "ssl", "mtls")
"""Values of ``up --security``; ``plaintext`` (the default) adds no security at all."""

SASL_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN")
OAUTHBEARER = "OAUTHBEARER"
OAUTH_LOGIN_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
OAUTH_LOGIN_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
OAUTH_VALIDATOR = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
OAUTH_ALLOWED_URLS = "org.apache.kafka.sasl.oauthbearer.allowed.urls"
OAUTH_CLOCK_SKEW_S = 2
"""The brokers' ``sasl.oauthbearer.clock.skew.seconds`` (Kafka's default 30 would accept a stale token)."""
BROKER_USER = "broker"
ADMIN_USER = "admin"
USERS = (ADMIN_USER, "alice", "bob")
"""The users every secured cluster has: ``admin`` is a super user, the others start without ACLs."""
ANONYMOUS = "ANONYMOUS"
"""The principal name of a TLS client without a certificate on an ``ssl`` cluster."""

CONTROLLER_LISTENER = "CONTROLLER"
SECURITY_DIR = "security"
SECURITY_FILE = "security.json"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
PRINCIPAL_MAPPING = "RULE:^CN=([A-Za-z0-9._-]+)$/$1/,DEFAULT"
"""``User:alice`` for a certificate whose subject is ``CN=alice`` (our certificates carry only a CN)."""

_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
_VALIDITY = datetime.timedelta(days=30)


def jaas(mechanism: str, username: str, password: str, **users: str) -> str:
    """A ``sasl.jaas.config`` value; ``users`` adds PLAIN's server-side ``user_<name>="<password>"``."""
    options = [f'username="{username}"', f'password="{password}"']
    options += [f'user_{name}="{secret}"' for name, secret in users.items()]
    return f"{_LOGIN_MODULES[mechanism]} required {' '.join(options)};"


@dataclass(frozen=True)
class ClusterSecurity:
    """The security of one cluster: its protocol, users and the folder holding its certificates.

    Made once per cluster by :meth:`create` (before the nodes are formatted) and read back by
    :meth:`load` (``grant`` in another process). ``passwords`` includes the ``broker`` user.
    """

    protocol: str
    dir: Path
    passwords: Mapping[str, str]
    oauth_port: int | None = None
    token_lifetime_s: int = 3600

    @classmethod
    def create(
        cls,
        protocol: str,
        directory: Path,
        users: Iterable[str] = USERS,
        *,
        oauth_port: int | None = None,
        token_lifetime_s: int = 3600,
    ) -> ClusterSecurity:
        """``oauth_port``: enable OAUTHBEARER with a token server on that port (SASL protocols only)."""
        if protocol not in PROTOCOLS or protocol == "plaintext":
            raise ValueError(f"security {protocol!r}: expected one of {', '.join(PROTOCOLS[1:])}")
        if oauth_port is not None and not protocol.startswith("sasl_"):
            raise ValueError(
                f"OAUTHBEARER needs a SASL protocol (sasl_plaintext or sasl_ssl), not {protocol}"
            )
        directory.mkdir(parents=True, exist_ok=True)
        names = [BROKER_USER, *(u for u in users if u != BROKER_USER)]
        passwords = {u: secrets.token_urlsafe(12) for u in names}
        security = cls(protocol, directory, passwords, oauth_port, token_lifetime_s)
        if security.tls:
            _write_certificates(directory, names)
        if security.oauth:
            from pyconnect.testing.token_server import write_signing_key

            write_signing_key(directory)
        _write_private(directory / SECURITY_FILE, json.dumps(security.state(), indent=2) + "\n")
        return security

    def write_client_files(self, bootstrap_servers: str) -> None:
        """One ``client-<user>[-<mechanism>].properties`` per user (and the anonymous one of ``ssl``):
        ``bootstrap.servers`` plus :meth:`client_properties`, as Java's ``Properties.store`` writes."""
        from pyconnect.config.properties import dumps

        clients: list[tuple[str | None, str | None]] = [(u, m) for u in self.users for m in self.mechanisms]
        if self.protocol == "ssl":
            clients.append((None, None))
        for user, mechanism in clients:
            props = {"bootstrap.servers": bootstrap_servers, **self.client_properties(user, mechanism)}
            _write_private(self.client_file(user, mechanism), dumps(props))

    @classmethod
    def load(cls, directory: Path) -> ClusterSecurity:
        state = json.loads((directory / SECURITY_FILE).read_text())
        return cls(
            state["protocol"],
            directory,
            dict(state["passwords"]),
            state.get("oauth_port"),
            state.get("token_lifetime_s", 3600),
        )

    def state(self) -> dict[str, object]:
        oauth = (
            {"oauth_port": self.oauth_port, "token_lifetime_s": self.token_lifetime_s} if self.oauth else {}
        )
        return {"protocol": self.protocol, "passwords": dict(self.passwords), **oauth}

    @property
    def oauth(self) -> bool:
        return self.oauth_port is not None

    @property
    def token_server_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.oauth_port}"

    @property
    def token_endpoint_url(self) -> str:
        return self.token_server_url + "/token"

    @property
    def jwks_endpoint_url(self) -> str:
        return self.token_server_url + "/jwks"

    def jvm_options(self) -> tuple[str, ...]:
        """The brokers' JVM options: Kafka 4 fetches only the OAuth URLs this system property allows."""
        if not self.oauth:
            return ()
        return (f"-D{OAUTH_ALLOWED_URLS}={self.jwks_endpoint_url},{self.token_endpoint_url}",)

    def token_server_command(self, tag: str) -> list[str]:
        """The argv of this cluster's token server (its ``--tag`` is the launcher's ownership tag)."""
        import sys

        command = [sys.executable, "-m", "pyconnect.testing.token_server", "--dir", str(self.dir)]
        command += ["--port", str(self.oauth_port), "--lifetime", str(self.token_lifetime_s), "--tag", tag]
        return command + (["--tls"] if self.tls else [])

    def _endpoint_tls_options(self) -> list[str]:
        """JAAS options trusting the cluster CA for an HTTPS token server (Java reads them there)."""
        if not self.tls:
            return []
        return ['ssl.truststore.type="PEM"', f'ssl.truststore.location="{self.ca_file}"']

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("sasl_")

    @property
    def tls(self) -> bool:
        return self.protocol in ("sasl_ssl", "ssl", "mtls")

    @property
    def security_protocol(self) -> str:
        """Java's ``security.protocol`` of the client listener (also its listener name)."""
        return "SSL" if self.protocol in ("ssl", "mtls") else self.protocol.upper()

    @property
    def users(self) -> list[str]:
        """The users a client may log in as (everyone but ``broker``)."""
        return [u for u in self.passwords if u != BROKER_USER]

    @property
    def mechanisms(self) -> tuple[str | None, ...]:
        if not self.sasl:
            return (None,)
        return (*SASL_MECHANISMS, OAUTHBEARER) if self.oauth else SASL_MECHANISMS

    @property
    def ca_file(self) -> Path:
        return self.dir / "ca.pem"

    def keystore(self, user: str) -> Path:
        return self.dir / f"{user}.pem"

    @staticmethod
    def principal(user: str | None) -> str:
        return f"User:{user or ANONYMOUS}"

    @property
    def super_users(self) -> list[str]:
        return [self.principal(BROKER_USER), self.principal(ADMIN_USER)]

    def client_file(self, user: str | None, mechanism: str | None = None) -> Path:
        suffix = f"-{mechanism.lower()}" if mechanism else ""
        return self.dir / f"client-{user or ANONYMOUS.lower()}{suffix}.properties"

    def accepts_tls(self, port: int, timeout: float) -> bool:
        """A TLS handshake (as ``admin``) with the listener on ``127.0.0.1:port`` completes within
        ``timeout`` seconds.

        A starting broker accepts TCP connections before it serves them, and aiokafka leaks the socket
        of a TLS handshake its connect timeout cancels (an unclosed-transport ResourceWarning later);
        so the launcher waits for a handshake with a blocking socket before its first Kafka request.
        """
        import socket
        import ssl

        context = ssl.create_default_context(cafile=str(self.ca_file))
        context.load_cert_chain(str(self.keystore(ADMIN_USER)))
        try:
            with (
                socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock,
                context.wrap_socket(sock, server_hostname="127.0.0.1"),
            ):
                return True
        except OSError:  # ssl.SSLError and socket timeouts included
            return False

    def format_arguments(self) -> list[str]:
        """``kafka-storage format`` options creating every user's SCRAM credentials."""
        if not self.sasl:
            return []
        return [
            arg
            for user, password in self.passwords.items()
            for mechanism in SASL_MECHANISMS
            if mechanism.startswith("SCRAM")
            for arg in ("--add-scram", f"{mechanism}=[name={user},password={password}]")
        ]

    def broker_properties(self, port: int, controller_port: int) -> dict[str, object]:
        """The listener, authentication and authorization keys of one node's ``server.properties``."""
        name = self.security_protocol
        prefix = f"listener.name.{name.lower()}."
        broker_password = self.passwords[BROKER_USER]
        props: dict[str, object] = {
            "listeners": f"{name}://127.0.0.1:{port},{CONTROLLER_LISTENER}://127.0.0.1:{controller_port}",
            "advertised.listeners": f"{name}://127.0.0.1:{port}",
            "listener.security.protocol.map": f"{name}:{name},{CONTROLLER_LISTENER}:SASL_PLAINTEXT",
            "inter.broker.listener.name": name,
            "sasl.mechanism.controller.protocol": "PLAIN",
            f"listener.name.{CONTROLLER_LISTENER.lower()}.sasl.enabled.mechanisms": "PLAIN",
            f"listener.name.{CONTROLLER_LISTENER.lower()}.plain.sasl.jaas.config": jaas(
                "PLAIN", BROKER_USER, broker_password, **{BROKER_USER: broker_password}
            ),
            "authorizer.class.name": AUTHORIZER,
            "super.users": ";".join(self.super_users),
            "allow.everyone.if.no.acl.found": "false",
        }
        if self.sasl:
            props[f"{prefix}sasl.enabled.mechanisms"] = ",".join(m for m in self.mechanisms if m)
            props["sasl.mechanism.inter.broker.protocol"] = "PLAIN"
            props[f"{prefix}plain.sasl.jaas.config"] = jaas(
                "PLAIN", BROKER_USER, broker_password, **self.passwords
            )
            for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
                props[f"{prefix}{mechanism.lower()}.sasl.jaas.config"] = jaas(
                    mechanism, BROKER_USER, broker_password
                )
        if self.oauth:
            # The JWKS fetch over HTTPS reads its trust store from these JAAS options. With any option
            # set, the broker's own OAUTHBEARER login (Java's unsecured default, unused here: brokers
            # talk PLAIN) builds a token at start and needs a subject.
            tls = self._endpoint_tls_options()
            options = " ".join([f'unsecuredLoginStringClaim_sub="{BROKER_USER}"', *tls] if tls else [])
            props[f"{prefix}oauthbearer.sasl.jaas.config"] = f"{OAUTH_LOGIN_MODULE} required {options};"
            props[f"{prefix}oauthbearer.sasl.server.callback.handler.class"] = OAUTH_VALIDATOR
            props["sasl.oauthbearer.jwks.endpoint.url"] = self.jwks_endpoint_url
            props["sasl.oauthbearer.expected.issuer"] = self.token_server_url
            props["sasl.oauthbearer.clock.skew.seconds"] = OAUTH_CLOCK_SKEW_S
        if self.tls:
            props.update(
                {
                    "ssl.keystore.type": "PEM",
                    "ssl.keystore.location": self.keystore(BROKER_USER),
                    "ssl.truststore.type": "PEM",
                    "ssl.truststore.location": self.ca_file,
                    "ssl.client.auth": {"mtls": "required", "ssl": "requested"}.get(self.protocol, "none"),
                    "ssl.principal.mapping.rules": PRINCIPAL_MAPPING,
                }
            )
        return props

    def client_properties(self, user: str | None, mechanism: str | None = None) -> dict[str, str]:
        """Java client keys (without ``bootstrap.servers``) for ``user``.

        SASL clusters need a ``mechanism`` (SCRAM-SHA-256 unless told); TLS clusters give the user's
        PEM keystore. ``user=None`` is the anonymous TLS client of an ``ssl`` cluster (truststore only).
        """
        props = {"security.protocol": self.security_protocol}
        if self.sasl:
            if user is None:
                raise ValueError(f"a {self.protocol} client needs a user")
            mechanism = mechanism or "SCRAM-SHA-256"
            if mechanism not in self.mechanisms:
                raise ValueError(
                    f"SASL mechanism {mechanism!r}: expected one of {', '.join(m for m in self.mechanisms if m)}"
                )
            props["sasl.mechanism"] = mechanism
            if mechanism == OAUTHBEARER:
                props.update(self.oauth_client_properties(user))
            else:
                props["sasl.jaas.config"] = jaas(mechanism, user, self.passwords[user])
        if self.tls:
            props["ssl.truststore.type"] = "PEM"
            props["ssl.truststore.location"] = str(self.ca_file)
        if self.protocol in ("ssl", "mtls") and user is not None:
            if user not in self.passwords:
                raise KeyError(f"no user {user!r} on this cluster (users: {', '.join(self.users)})")
            props["ssl.keystore.type"] = "PEM"
            props["ssl.keystore.location"] = str(self.keystore(user))
        elif self.protocol == "mtls":
            raise ValueError("an mtls client needs a user (its certificate)")
        return props

    def oauth_client_properties(self, user: str, secret: str | None = None) -> dict[str, str]:
        """Java's client-credentials login for ``user`` (``secret`` instead of the password when given)."""
        options = [
            f'clientId="{user}"',
            f'clientSecret="{self.passwords[user] if secret is None else secret}"',
        ]
        options += ['scope="kafka"', *self._endpoint_tls_options()]
        return {
            "sasl.login.callback.handler.class": OAUTH_LOGIN_HANDLER,
            "sasl.oauthbearer.token.endpoint.url": self.token_endpoint_url,
            "sasl.jaas.config": f"{OAUTH_LOGIN_MODULE} required {' '.join(options)};",
        }

    def describe(self, alias: str, bootstrap_servers: str) -> list[str]:
        """Lines telling a person how to connect: protocol, CA, and one properties file per user."""
        lines = [
            f"{alias}: {self.protocol} on {bootstrap_servers}; super users {', '.join(self.super_users)}"
            + (f"; CA certificate {self.ca_file}" if self.tls else "")
        ]
        if self.oauth:
            lines.append(
                f"{alias}: OAUTHBEARER token endpoint {self.token_endpoint_url} (client id = user, "
                f"secret = password; tokens live {self.token_lifetime_s} s), JWKS {self.jwks_endpoint_url}"
            )
        for user in self.users:
            password = (
                f" password {self.passwords[user]}" if self.sasl else f" keystore {self.keystore(user)}"
            )
            for mechanism in self.mechanisms:
                label = f" {mechanism}" if mechanism else ""
                lines.append(f"{alias}: {user}{label}{password} -> {self.client_file(user, mechanism)}")
        if self.protocol == "ssl":
            lines.append(f"{alias}: {ANONYMOUS} (no certificate) -> {self.client_file(None)}")
        return lines


def _write_private(path: Path, text: str | bytes) -> None:
    """Write a secret readable by its owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(text.encode() if isinstance(text, str) else text)


def _write_certificates(directory: Path, users: Iterable[str]) -> None:
    """``ca.pem`` and one ``<user>.pem`` (key + certificate + CA) per user, ``broker`` included."""
    from cryptography.hazmat.primitives import serialization

    ca_key, ca_cert = _make_ca()
    ca_pem = ca_cert.public_bytes(serialization.Encoding.PEM)
    (directory / "ca.pem").write_bytes(ca_pem)
    for user in users:
        key, cert = issue_certificate(user, ca_key, ca_cert, server=user == BROKER_USER)
        _write_private(directory / f"{user}.pem", _key_pem(key) + cert + ca_pem)


def _new_key() -> Any:
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _name(common_name: str) -> Any:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _make_ca() -> tuple[Any, Any]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    key = _new_key()
    now = datetime.datetime.now(datetime.UTC)
    name = _name(f"pyconnect-test-ca-{secrets.token_hex(4)}")
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def issue_certificate(
    common_name: str,
    ca_key: Any,
    ca_cert: Any,
    *,
    server: bool = False,
    valid: tuple[datetime.datetime, datetime.datetime] | None = None,
) -> tuple[Any, bytes]:
    """A fresh key and the PEM certificate ``CN=<common_name>`` signed by ``ca_key``.

    Every certificate may act as TLS client and server (brokers are both); ``server`` ones carry
    ``127.0.0.1`` and ``localhost`` as subject alternative names, which Java's default
    ``ssl.endpoint.identification.algorithm=https`` and Python's hostname check verify.
    Pass a self-made CA to get a certificate the cluster does not trust; ``valid`` (not before, not
    after) replaces the default validity (from five minutes ago for 30 days), e.g. to make one expired.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509.oid import ExtendedKeyUsageOID

    key = _new_key()
    now = datetime.datetime.now(datetime.UTC)
    not_before, not_after = valid or (now - datetime.timedelta(minutes=5), now + _VALIDITY)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
    cert = builder.sign(ca_key, hashes.SHA256())
    return key, cert.public_bytes(serialization.Encoding.PEM)


def untrusted_material(directory: Path, common_name: str) -> tuple[Path, Path]:
    """An impostor's PEM keystore for ``CN=<common_name>`` and its CA certificate, from a CA no
    cluster trusts: ``(directory/<cn>-untrusted.pem, directory/untrusted-ca.pem)``."""
    from cryptography.hazmat.primitives import serialization

    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = _make_ca()
    ca_pem = ca_cert.public_bytes(serialization.Encoding.PEM)
    key, cert = issue_certificate(common_name, ca_key, ca_cert, server=True)
    keystore, ca = directory / f"{common_name}-untrusted.pem", directory / "untrusted-ca.pem"
    _write_private(keystore, _key_pem(key) + cert + ca_pem)
    ca.write_bytes(ca_pem)
    return keystore, ca


def expired_server_material(directory: Path, common_name: str = BROKER_USER) -> tuple[Path, Path]:
    """A server PEM keystore for ``CN=<common_name>`` (with the ``127.0.0.1`` and ``localhost`` names)
    whose certificate expired a day ago, and its CA certificate (valid):
    ``(directory/<cn>-expired.pem, directory/expired-ca.pem)``. A broker given this keystore, and
    clients trusting this CA, meet a certificate that is trusted but out of date."""
    from cryptography.hazmat.primitives import serialization

    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = _make_ca()
    ca_pem = ca_cert.public_bytes(serialization.Encoding.PEM)
    now = datetime.datetime.now(datetime.UTC)
    valid = (now - datetime.timedelta(days=3), now - datetime.timedelta(days=1))
    key, cert = issue_certificate(common_name, ca_key, ca_cert, server=True, valid=valid)
    keystore, ca = directory / f"{common_name}-expired.pem", directory / "expired-ca.pem"
    _write_private(keystore, _key_pem(key) + cert + ca_pem)
    ca.write_bytes(ca_pem)
    return keystore, ca


E = TypeVar("E", bound=Enum)


class GrantError(ConnectError, RuntimeError):
    """The brokers refused an ACL, or did not apply it in time."""


def _enum_member(enum: type[E], text: str, what: str) -> E:
    """``read``, ``READ``, ``IdempotentWrite`` or ``idempotent_write`` -> the Java enum member."""
    wanted = "".join(ch for ch in text.upper() if ch.isalnum())
    for member in enum:
        if member.name.replace("_", "") == wanted:
            return member
    raise ValueError(f"unknown {what} {text!r}: expected one of {', '.join(m.name.lower() for m in enum)}")


async def grant(
    cluster: SecuredCluster,
    principal: str,
    resource_type: str,
    name: str,
    operations: Iterable[str],
    pattern: str = "LITERAL",
    *,
    host: str = "*",
    timeout: float = 30.0,
) -> None:
    """Allow ``principal`` (``User:alice``) the ``operations`` (``read``, ``write``, ``describe`` ...)
    on one resource (``topic``, ``group``, ``cluster`` named ``kafka-cluster``, ``transactional_id``),
    as the ``admin`` super user through the runtime's own admin client and Java client keys.

    Returns once every broker answers DescribeAcls with the new bindings, i.e. enforces them;
    raises :class:`GrantError` when the brokers refuse a binding or do not show it within ``timeout``.
    """
    import asyncio
    import time

    from pyconnect.kafka.acls import AclBinding, AclOperation, AclPermissionType, PatternType, ResourceType
    from pyconnect.kafka.mirror_admin import MirrorAdmin
    from pyconnect.kafka.probe import SSL_CLOSE_S

    rtype = _enum_member(ResourceType, resource_type, "resource type")
    ptype = _enum_member(PatternType, pattern, "pattern type")
    bindings = {
        AclBinding(
            rtype,
            name,
            ptype,
            principal,
            host,
            _enum_member(AclOperation, op, "operation"),
            AclPermissionType.ALLOW,
        )
        for op in operations
    }
    if not bindings:
        raise ValueError("grant needs at least one operation")
    config = cluster.client_properties(ADMIN_USER)
    admin = MirrorAdmin(config)
    await admin.start()
    try:
        refused = {b: e for b, e in (await admin.create_acls(sorted(bindings, key=repr))).items() if e}
        if refused:
            raise GrantError("; ".join(f"{b.operation.name} on {b.name}: {e}" for b, e in refused.items()))
        deadline = time.monotonic() + timeout
        pending = await admin.node_ids()
        for _ in range(int(timeout / 0.1) + 1):
            shown = [set(await admin.describe_acls(rtype, name, ptype, node_id)) for node_id in pending]
            pending = [n for n, acls in zip(pending, shown, strict=True) if not bindings <= acls]
            if not pending or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        if pending:
            raise GrantError(
                f"brokers {pending} did not apply the ACLs for {principal} within {timeout:.0f}s"
            )
    finally:
        await admin.close()
        if config["security.protocol"].endswith("SSL"):
            await asyncio.sleep(SSL_CLOSE_S)


class SecuredCluster(Protocol):
    """What :func:`grant` needs of a cluster (a :class:`pyconnect.testing.kafka.KafkaCluster`)."""

    def client_properties(self, user: str | None = ..., mechanism: str | None = ...) -> dict[str, str]: ...
