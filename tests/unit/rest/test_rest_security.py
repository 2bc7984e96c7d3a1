"""HTTPS listeners, client auth, the basic-auth REST extension and CORS, against an in-memory herder.

Certificates (a test CA and one worker certificate for 127.0.0.1, usable as server and client) are
generated once per module with the ``openssl`` command line tool.
"""

from __future__ import annotations

import base64
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from pyconnect.errors import ConfigError
from pyconnect.rest.security import (
    BASIC_AUTH_EXTENSION,
    UNAUTHORIZED,
    SslSettings,
    jaas_config_path,
    parse_jaas_file,
    parse_properties,
)
from pyconnect.rest.server import RestServer
from tests import tls_material
from tests.unit.rest.test_rest_api import MemoryHerder


@dataclass(frozen=True)
class Certs:
    ca: Path
    cert: Path
    key: Path
    keystore: Path
    other_ca: Path


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _ca(directory: Path, name: str) -> None:
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={name}",
        cwd=directory,
    )  # fmt: skip


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    assert shutil.which("openssl"), (
        "these tests make their certificates with the openssl command line tool: install it"
    )
    d = tmp_path_factory.mktemp("certs")
    _ca(d, "ca")
    _ca(d, "other-ca")
    _openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", "worker.key", "-out", "worker.csr", "-subj", "/CN=127.0.0.1",
        cwd=d,
    )  # fmt: skip
    (d / "ext.cnf").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        "extendedKeyUsage=serverAuth,clientAuth\n"
        "basicConstraints=CA:FALSE\n"
    )
    _openssl(
        "x509", "-req", "-in", "worker.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "7",
        "-days", "2", "-extfile", "ext.cnf", "-out", "worker.pem",
        cwd=d,
    )  # fmt: skip
    _openssl(
        "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", "worker.key", "-out", "encrypted.key",
        "-passout", "pass:key-secret",
        cwd=d,
    )  # fmt: skip
    (d / "encrypted-keystore.pem").write_bytes(
        (d / "encrypted.key").read_bytes() + (d / "worker.pem").read_bytes()
    )
    (d / "keystore.pem").write_bytes((d / "worker.key").read_bytes() + (d / "worker.pem").read_bytes())
    return Certs(d / "ca.pem", d / "worker.pem", d / "worker.key", d / "keystore.pem", d / "other-ca.pem")


def tls(certs: Certs, **extra: str) -> SslSettings:
    return SslSettings.from_worker_config(
        {
            "listeners.https.ssl.keystore.type": "PEM",
            "listeners.https.ssl.keystore.location": str(certs.keystore),
            "listeners.https.ssl.truststore.type": "PEM",
            "listeners.https.ssl.truststore.location": str(certs.ca),
            **{f"listeners.https.{k}": v for k, v in extra.items()},
        }
    )


def client_ssl(certs: Certs, *, with_cert: bool = False) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    if with_cert:
        ctx.load_cert_chain(str(certs.cert), str(certs.key))
    return ctx


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.fixture
def jaas(tmp_path: Path) -> dict[str, str]:
    users = tmp_path / "users.properties"
    users.write_text("# Connect REST users\nalice: secret\nbob=hunter2\n")
    conf = tmp_path / "connect_jaas.conf"
    conf.write_text(
        "// the Connect REST login\n"
        "KafkaConnect {\n"
        "  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n"
        f'  file="{users}";\n'
        "};\n"
    )
    return {"KAFKA_OPTS": f"-Xmx1g -Djava.security.auth.login.config={conf}"}


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def url(base: str, path: str) -> str:
    return base.rstrip("/") + path


async def test_https_listener_serves_with_pem_keystore(certs: Certs, http: aiohttp.ClientSession) -> None:
    server = RestServer(MemoryHerder(), ["https://127.0.0.1:0"], ssl_settings=tls(certs))
    await server.start()
    try:
        assert server.advertised_url.startswith("https://127.0.0.1:")
        async with http.get(url(server.advertised_url, "/"), ssl=client_ssl(certs)) as resp:
            assert resp.status == 200 and (await resp.json())["kafka_cluster_id"] == "test-cluster"
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await http.get(
                url(server.advertised_url, "/"), ssl=ssl.create_default_context(cafile=str(certs.other_ca))
            )
    finally:
        await server.stop()


async def test_inline_pem_keystore_and_top_level_ssl_keys(certs: Certs, http: aiohttp.ClientSession) -> None:
    settings = SslSettings.from_worker_config(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.certificate.chain": certs.cert.read_text(),
            "ssl.keystore.key": certs.key.read_text(),
        }
    )
    server = RestServer(MemoryHerder(), ["https://127.0.0.1:0"], ssl_settings=settings)
    await server.start()
    try:
        async with http.get(url(server.advertised_url, "/connectors"), ssl=client_ssl(certs)) as resp:
            assert resp.status == 200 and await resp.json() == []
    finally:
        await server.stop()


async def test_mixed_listeners_and_the_advertised_scheme(certs: Certs, http: aiohttp.ClientSession) -> None:
    listeners = ["https://127.0.0.1:0", "http://127.0.0.1:0"]
    server = RestServer(MemoryHerder(), listeners, ssl_settings=tls(certs))
    await server.start()
    try:
        assert server.advertised_url == server.url_of("http"), "http wins when any http listener exists"
        for base, ctx in ((server.url_of("http"), None), (server.url_of("https"), client_ssl(certs))):
            async with http.get(url(base, "/"), ssl=ctx if ctx else True) as resp:
                assert resp.status == 200
    finally:
        await server.stop()
    chosen = RestServer(MemoryHerder(), listeners, ssl_settings=tls(certs), advertised_scheme="HTTPS")
    assert chosen.advertised_url.startswith("https://")
    with pytest.raises(ConfigError, match=r"rest\.advertised\.listener"):
        RestServer(MemoryHerder(), ["http://127.0.0.1:0"], advertised_scheme="https")


@pytest.mark.parametrize("mode", ["required", "requested"])
async def test_client_authentication(certs: Certs, http: aiohttp.ClientSession, mode: str) -> None:
    server = RestServer(
        MemoryHerder(), ["https://127.0.0.1:0"], ssl_settings=tls(certs, **{"ssl.client.auth": mode})
    )
    await server.start()
    try:
        target = url(server.advertised_url, "/")
        async with http.get(target, ssl=client_ssl(certs, with_cert=True)) as resp:
            assert resp.status == 200
        if mode == "required":
            with pytest.raises(aiohttp.ClientError):
                async with http.get(target, ssl=client_ssl(certs)) as resp:
                    await resp.read()
        else:
            async with http.get(target, ssl=client_ssl(certs)) as resp:
                assert resp.status == 200
    finally:
        await server.stop()


async def test_basic_auth_accepts_and_rejects(jaas: dict[str, str], http: aiohttp.ClientSession) -> None:
    herder = MemoryHerder()
    server = RestServer(
        herder, ["http://127.0.0.1:0"], extension_classes=[BASIC_AUTH_EXTENSION], environ=jaas
    )
    await server.start()
    try:
        base = server.advertised_url
        for headers in (
            {},
            basic("alice", "wrong"),
            basic("mallory", "secret"),
            {"Authorization": "Bearer x"},
        ):
            async with http.get(url(base, "/connectors"), headers=headers) as resp:
                assert resp.status == 401
                assert await resp.text() == UNAUTHORIZED
                assert "WWW-Authenticate" not in resp.headers
        for headers in (basic("alice", "secret"), basic("bob", "hunter2")):
            async with http.get(url(base, "/connectors"), headers=headers) as resp:
                assert resp.status == 200
        async with http.get(url(base, "/no-such-path")) as resp:
            assert resp.status == 404, "unmatched paths answer before the filter, as in JAX-RS"
        herder.configs["c"] = {}
        async with http.post(
            url(base, "/connectors/c/tasks"),
            data=b'[{"k":"v"}]',
            headers={"Content-Type": "application/json"},
        ) as resp:
            assert resp.status == 204, "signed internal requests skip basic auth (JaasBasicAuthFilter)"
        async with http.get(url(base, "/connectors/c/tasks")) as resp:
            assert resp.status == 401, "only the internal POST is exempt"
    finally:
        await server.stop()


async def test_empty_users_file_permits_everything(tmp_path: Path, http: aiohttp.ClientSession) -> None:
    (tmp_path / "users").write_text("# nobody\n")
    (tmp_path / "jaas.conf").write_text(
        'KafkaConnect { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required file="'
        f'{tmp_path / "users"}"; }};'
    )
    server = RestServer(
        MemoryHerder(),
        ["http://127.0.0.1:0"],
        extension_classes=[BASIC_AUTH_EXTENSION],
        environ={"PYCONNECT_JAAS_CONFIG": str(tmp_path / "jaas.conf")},
    )
    await server.start()
    try:
        async with http.get(url(server.advertised_url, "/connectors")) as resp:
            assert resp.status == 200
    finally:
        await server.stop()


async def test_cors_simple_and_preflight(http: aiohttp.ClientSession) -> None:
    server = RestServer(MemoryHerder(), ["http://127.0.0.1:0"], allowed_origins="http://ui.example")
    plain = RestServer(MemoryHerder(), ["http://127.0.0.1:0"])
    methods = RestServer(
        MemoryHerder(),
        ["http://127.0.0.1:0"],
        allowed_origins="*",
        allowed_methods="GET,PUT,DELETE",
    )
    for s in (server, plain, methods):
        await s.start()
    try:
        origin = {"Origin": "http://ui.example"}
        async with http.get(url(server.advertised_url, "/connectors"), headers=origin) as resp:
            assert resp.status == 200
            assert resp.headers["Access-Control-Allow-Origin"] == "http://ui.example"
            assert resp.headers["Access-Control-Allow-Credentials"] == "true"
            assert resp.headers["Vary"] == "Origin"
            assert "Access-Control-Allow-Methods" not in resp.headers
        for target, headers in (
            (server, {"Origin": "http://evil.example"}),
            (server, {}),
            (plain, origin),
        ):
            async with http.get(url(target.advertised_url, "/connectors"), headers=headers) as resp:
                assert resp.status == 200
                assert not [h for h in resp.headers if h.lower().startswith("access-control-")]
        preflight = {
            **origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        }
        async with http.options(url(server.advertised_url, "/connectors"), headers=preflight) as resp:
            assert resp.status == 200 and "POST" in resp.headers["Allow"]
            assert resp.headers["Access-Control-Allow-Methods"] == "GET,POST,HEAD"
            assert (
                resp.headers["Access-Control-Allow-Headers"] == "X-Requested-With,Content-Type,Accept,Origin"
            )
            assert resp.headers["Access-Control-Max-Age"] == "1800"
            assert resp.headers["Access-Control-Allow-Origin"] == "http://ui.example"
        denied = {**origin, "Access-Control-Request-Method": "DELETE"}
        async with http.options(url(server.advertised_url, "/connectors/c"), headers=denied) as resp:
            assert resp.status == 200 and "Access-Control-Allow-Methods" not in resp.headers
        async with http.options(url(methods.advertised_url, "/connectors/c"), headers=denied) as resp:
            assert resp.headers["Access-Control-Allow-Methods"] == "GET,PUT,DELETE"
            assert "Vary" not in resp.headers, "any origin allowed: no Vary"
    finally:
        for s in (server, plain, methods):
            await s.stop()


async def test_forwarding_over_https_with_client_auth_and_basic_auth(
    certs: Certs, jaas: dict[str, str], http: aiohttp.ClientSession
) -> None:
    settings = tls(certs, **{"ssl.client.auth": "required"})
    common = {"ssl_settings": settings, "extension_classes": [BASIC_AUTH_EXTENSION], "environ": jaas}
    leader_herder = MemoryHerder()
    leader = RestServer(leader_herder, ["https://127.0.0.1:0"], **common)  # type: ignore[arg-type]
    await leader.start()
    follower_herder = MemoryHerder(leader.advertised_url, is_leader=False)
    follower = RestServer(follower_herder, ["https://127.0.0.1:0"], **common)  # type: ignore[arg-type]
    await follower.start()
    try:
        ctx = client_ssl(certs, with_cert=True)
        body = {"name": "f", "config": {"a": "b"}}
        target = url(follower.advertised_url, "/connectors")
        async with http.post(target, json=body, ssl=ctx) as resp:
            assert resp.status == 401
        async with http.post(target, json=body, ssl=ctx, headers=basic("alice", "secret")) as resp:
            assert resp.status == 201 and resp.headers["Location"] == target + "/f"
        assert "f" in leader_herder.configs, "the hop carried the Authorization header over TLS"
        async with http.post(
            url(follower.advertised_url, "/connectors/f/tasks"),
            data=b"[]",
            ssl=ctx,
            headers={"Content-Type": "application/json"},
        ) as resp:
            assert resp.status == 204, "internal task-config POSTs reach the leader without credentials"
        await follower.forwarder.post_task_configs(leader.advertised_url, "f", b'[{"x":"y"}]', {})
        assert [c for _, c, _ in leader_herder.task_config_posts][-1] == [{"x": "y"}]
    finally:
        await follower.stop()
        await leader.stop()


async def test_encrypted_pem_key_uses_ssl_key_password(certs: Certs, http: aiohttp.ClientSession) -> None:
    encrypted = str(certs.keystore.parent / "encrypted-keystore.pem")
    settings = tls(certs, **{"ssl.keystore.location": encrypted, "ssl.key.password": "key-secret"})
    server = RestServer(MemoryHerder(), ["https://127.0.0.1:0"], ssl_settings=settings)
    await server.start()
    try:
        async with http.get(url(server.advertised_url, "/"), ssl=client_ssl(certs)) as resp:
            assert resp.status == 200
    finally:
        await server.stop()
    wrong = tls(certs, **{"ssl.keystore.location": encrypted, "ssl.key.password": "nope"})
    with pytest.raises(ConfigError, match=r"listeners\.https\.ssl\.keystore\.location"):
        RestServer(MemoryHerder(), ["https://127.0.0.1:0"], ssl_settings=wrong)


def test_config_errors(certs: Certs, tmp_path: Path) -> None:
    https = ["https://127.0.0.1:0"]
    jks = SslSettings.from_worker_config({"listeners.https.ssl.keystore.location": str(certs.keystore)})
    # No type: Java's default JKS, which needs its store password (the PEM file is then refused).
    with pytest.raises(ConfigError, match=r"listeners\.https\.ssl\.keystore\.password: not set, but the JKS"):
        RestServer(MemoryHerder(), https, ssl_settings=jks)
    missing = tls(certs, **{"ssl.keystore.location": str(tmp_path / "nope.pem")})
    with pytest.raises(ConfigError, match=r"listeners\.https\.ssl\.keystore\.location"):
        RestServer(MemoryHerder(), https, ssl_settings=missing)
    with pytest.raises(ConfigError, match=r"ssl\.keystore\.location"):
        RestServer(MemoryHerder(), https)
    no_trust = SslSettings.from_worker_config(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(certs.keystore),
            "ssl.client.auth": "required",
        }
    )
    with pytest.raises(ConfigError, match=r"ssl\.truststore\.location"):
        RestServer(MemoryHerder(), https, ssl_settings=no_trust)
    chain_only = SslSettings.from_worker_config(
        {"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": certs.cert.read_text()}
    )
    with pytest.raises(ConfigError, match=r"ssl\.keystore\.key"):
        RestServer(MemoryHerder(), https, ssl_settings=chain_only)
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate")
    with pytest.raises(ConfigError, match=r"listeners\.https\.ssl\.keystore\.location"):
        RestServer(MemoryHerder(), https, ssl_settings=tls(certs, **{"ssl.keystore.location": str(garbage)}))
    with pytest.raises(ConfigError, match=r"rest\.extension\.classes"):
        RestServer(MemoryHerder(), ["http://127.0.0.1:0"], extension_classes=["com.example.Other"])
    with pytest.raises(ConfigError, match="PYCONNECT_JAAS_CONFIG"):
        RestServer(
            MemoryHerder(), ["http://127.0.0.1:0"], extension_classes=[BASIC_AUTH_EXTENSION], environ={}
        )
    with pytest.raises(ConfigError, match="listeners"):
        RestServer(MemoryHerder(), ["ftp://127.0.0.1:0"])
    # A JKS keystore on an http-only worker is only a problem once an https target is contacted.
    RestServer(MemoryHerder(), ["http://127.0.0.1:0"], ssl_settings=jks)


def test_jaas_and_properties_parsing(tmp_path: Path) -> None:
    text = """
    /* other entries are ignored */
    KafkaServer { org.example.Other required; };
    KafkaConnect {
      org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
      file="/etc/connect/users.properties" debug=true;
    };
    """
    assert parse_jaas_file(text) == [
        (
            "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule",
            "required",
            {"file": "/etc/connect/users.properties", "debug": "true"},
        )
    ]
    with pytest.raises(ConfigError, match="KafkaConnect"):
        parse_jaas_file("KafkaServer { x required; };")
    assert parse_properties(
        "! c\n# c\nalice: secret\nbob=p:w\ncarol  pw with space\n  dave : \\\n  cont\n"
    ) == {
        "alice": "secret",
        "bob": "p:w",
        "carol": "pw with space",
        "dave": "cont",
    }
    assert (
        jaas_config_path(
            {"PYCONNECT_JAAS_CONFIG": "/a", "KAFKA_OPTS": "-Djava.security.auth.login.config=/b"}
        )
        == "/a"
    )
    assert jaas_config_path({"KAFKA_OPTS": '-Xmx1g "-Djava.security.auth.login.config=/b c"'}) == "/b c"
    assert jaas_config_path({}) is None


async def test_https_listener_serves_with_pkcs12_stores(
    certs: Certs, tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    keystore, truststore = tmp_path / "server.p12", tmp_path / "trust.p12"
    _openssl(
        "pkcs12", "-export", "-in", str(certs.cert), "-inkey", str(certs.key), "-out", str(keystore),
        "-passout", "pass:s3cret", cwd=tmp_path,
    )  # fmt: skip
    _openssl(
        "pkcs12", "-export", "-nokeys", "-in", str(certs.ca), "-out", str(truststore), "-passout", "pass:trust",
        cwd=tmp_path,
    )  # fmt: skip
    settings = SslSettings.from_worker_config(
        {
            "listeners.https.ssl.keystore.type": "PKCS12",
            "listeners.https.ssl.keystore.location": str(keystore),
            "listeners.https.ssl.keystore.password": "s3cret",
            "listeners.https.ssl.truststore.type": "PKCS12",
            "listeners.https.ssl.truststore.location": str(truststore),
            "listeners.https.ssl.truststore.password": "trust",
        }
    )
    server = RestServer(MemoryHerder(), ["https://127.0.0.1:0"], ssl_settings=settings)
    await server.start()
    try:
        async with http.get(url(server.advertised_url, "/"), ssl=client_ssl(certs)) as resp:
            assert resp.status == 200
    finally:
        await server.stop()
    wrong = SslSettings.from_worker_config(
        {
            "listeners.https.ssl.keystore.type": "PKCS12",
            "listeners.https.ssl.keystore.location": str(keystore),
            "listeners.https.ssl.keystore.password": "wrong",
        }
    )
    with pytest.raises(ConfigError, match=r"wrong listeners\.https\.ssl\.keystore\.password"):
        RestServer(MemoryHerder(), ["https://127.0.0.1:0"], ssl_settings=wrong)


@pytest.fixture
def jks_stores(certs: Certs, tmp_path: Path) -> tuple[Path, Path]:
    """The worker's key as a JKS keystore (password ``s3cret``) and the CA in a JKS truststore (``trusted``)."""
    p12 = tls_material.pkcs12_from_pem(certs.key, certs.cert, tmp_path / "server.p12", "s3cret")
    keystore = tls_material.jks_from_pkcs12(p12, "s3cret", tmp_path / "server.jks", "s3cret", "s3cret")
    return keystore, tls_material.truststore(certs.ca, tmp_path / "trust.jks", "JKS", "trusted")


async def test_https_listener_serves_with_a_jks_keystore_and_truststore(
    certs: Certs, jks_stores: tuple[Path, Path], http: aiohttp.ClientSession
) -> None:
    """Java's default store type works for the REST listener as for the Kafka clients."""
    keystore, truststore = jks_stores
    settings = SslSettings.from_worker_config(
        {
            "listeners.https.ssl.keystore.location": str(keystore),
            "listeners.https.ssl.keystore.password": "s3cret",
            "listeners.https.ssl.truststore.location": str(truststore),
            "listeners.https.ssl.truststore.password": "trusted",
            "listeners.https.ssl.client.auth": "required",
        }
    )
    server = RestServer(MemoryHerder(), ["https://127.0.0.1:0"], ssl_settings=settings)
    await server.start()
    try:
        async with http.get(url(server.advertised_url, "/"), ssl=client_ssl(certs, with_cert=True)) as resp:
            assert resp.status == 200
        with pytest.raises(aiohttp.ClientError):
            async with http.get(url(server.advertised_url, "/"), ssl=client_ssl(certs)):
                pass  # client auth is required: no certificate, no answer
    finally:
        await server.stop()
