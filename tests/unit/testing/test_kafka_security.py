"""The launcher's security material without a broker: node properties, format options, client keys."""

from __future__ import annotations

import logging
import re
import ssl
import stat
from pathlib import Path

import pytest

from pyconnect.config import properties
from pyconnect.config.client_configs import consumer_kwargs
from pyconnect.testing import distribution
from pyconnect.testing.kafka import KafkaCluster, _main, render_properties
from pyconnect.testing.kafka_security import ClusterSecurity, expired_server_material, untrusted_material


def node_properties(tmp_path: Path, protocol: str) -> tuple[KafkaCluster, dict[str, str]]:
    security = ClusterSecurity.create(protocol, tmp_path / "security")
    cluster = KafkaCluster("S", tmp_path, distribution.KafkaDistribution(tmp_path), security=security)
    (node,) = cluster.nodes
    return cluster, dict(line.split("=", 1) for line in render_properties(node.properties()).splitlines())


@pytest.mark.parametrize(
    ("protocol", "listener", "client_auth"),
    [("sasl_plaintext", "SASL_PLAINTEXT", None), ("sasl_ssl", "SASL_SSL", "none"), ("ssl", "SSL", "requested"), ("mtls", "SSL", "required")],
)  # fmt: skip
def test_secured_node_properties(
    tmp_path: Path, protocol: str, listener: str, client_auth: str | None
) -> None:
    cluster, props = node_properties(tmp_path, protocol)
    port, controller = cluster.nodes[0].port, cluster.nodes[0].controller_port
    assert props["listeners"] == f"{listener}://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}"
    assert all(host == "127.0.0.1" for host in re.findall(r"//([^:]+):", props["listeners"]))
    assert props["listener.security.protocol.map"] == f"{listener}:{listener},CONTROLLER:SASL_PLAINTEXT"
    assert props["inter.broker.listener.name"] == listener
    assert props["sasl.mechanism.controller.protocol"] == "PLAIN"
    assert props["authorizer.class.name"] == "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    assert props["super.users"] == "User:broker;User:admin"
    assert props["allow.everyone.if.no.acl.found"] == "false"
    assert props.get("ssl.client.auth") == client_auth
    sasl_keys = [k for k in props if k.startswith(f"listener.name.{listener.lower()}.")]
    if protocol.startswith("sasl"):
        assert (
            props[f"listener.name.{listener.lower()}.sasl.enabled.mechanisms"]
            == "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN"
        )
        for user, password in cluster.security.passwords.items():  # type: ignore[union-attr]
            assert (
                f'user_{user}="{password}"'
                in props[f"listener.name.{listener.lower()}.plain.sasl.jaas.config"]
            )
    else:
        assert sasl_keys == []
        assert props["ssl.keystore.type"] == props["ssl.truststore.type"] == "PEM"


def test_plaintext_node_properties_are_unchanged(tmp_path: Path) -> None:
    cluster = KafkaCluster("P", tmp_path, distribution.KafkaDistribution(tmp_path))
    props = cluster.nodes[0].properties()
    assert props["listener.security.protocol.map"] == "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
    assert not any(k.startswith(("sasl.", "ssl.", "authorizer", "super.")) for k in props)
    assert cluster.client_properties() == {"bootstrap.servers": cluster.bootstrap_servers}
    assert "security" not in cluster.state()


def test_scram_users_are_added_at_format_time(tmp_path: Path) -> None:
    security = ClusterSecurity.create("sasl_plaintext", tmp_path)
    args = security.format_arguments()
    pairs = list(zip(args[::2], args[1::2], strict=True))
    assert {flag for flag, _ in pairs} == {"--add-scram"}
    assert {value for _, value in pairs} == {
        f"{mechanism}=[name={user},password={password}]"
        for user, password in security.passwords.items()
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512")
    }
    assert set(security.passwords) == {"broker", "admin", "alice", "bob"}
    assert ClusterSecurity.create("mtls", tmp_path / "m").format_arguments() == []


def test_client_files_hold_java_keys_the_runtime_translates(tmp_path: Path) -> None:
    security = ClusterSecurity.create("sasl_ssl", tmp_path)
    security.write_client_files("127.0.0.1:1")
    path = security.client_file("alice", "PLAIN")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    props = properties.load(path)
    assert props == {
        "bootstrap.servers": "127.0.0.1:1",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="alice" password="{security.passwords["alice"]}";',
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(tmp_path / "ca.pem"),
    }
    kwargs = consumer_kwargs(props)
    assert (kwargs["sasl_plain_username"], kwargs["sasl_plain_password"]) == (
        "alice",
        security.passwords["alice"],
    )
    assert isinstance(kwargs["ssl_context"], ssl.SSLContext)


def test_tls_material_makes_python_contexts(tmp_path: Path) -> None:
    security = ClusterSecurity.create("mtls", tmp_path)
    props = security.client_properties("bob")
    assert props["ssl.keystore.location"] == str(tmp_path / "bob.pem")
    assert stat.S_IMODE((tmp_path / "bob.pem").stat().st_mode) == 0o600
    assert consumer_kwargs(props)["ssl_context"].verify_mode == ssl.CERT_REQUIRED
    with pytest.raises(ValueError, match="needs a user"):
        security.client_properties(None)
    keystore, ca = untrusted_material(tmp_path / "other", "admin")
    assert b"PRIVATE KEY" in keystore.read_bytes() and ca.read_bytes() != security.ca_file.read_bytes()
    anonymous = ClusterSecurity.create("ssl", tmp_path / "ssl").client_properties(None)
    assert "ssl.keystore.location" not in anonymous


def test_grant_on_a_plaintext_cluster_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "clusters.json").write_text('{"P": {"bootstrap_servers": "127.0.0.1:1", "nodes": []}}')
    args = ["grant", "--dir", str(tmp_path), "--cluster", "P", "--principal", "User:x"]
    logger = logging.getLogger("aiokafka")
    level = logger.level
    try:
        code = _main([*args, "--resource-type", "topic", "--name", "t", "--operations", "read"])
    finally:
        logger.setLevel(level)  # _main quiets aiokafka for the CLI
    assert code == 1
    err = capsys.readouterr().err.splitlines()
    assert err == ["error: cluster P runs without security (plaintext): there are no ACLs to grant"]


def test_oauthbearer_brokers_validate_against_the_token_server_and_clients_get_javas_keys(
    tmp_path: Path,
) -> None:
    security = ClusterSecurity.create("sasl_ssl", tmp_path / "security", oauth_port=4321, token_lifetime_s=15)
    cluster = KafkaCluster("S", tmp_path, distribution.KafkaDistribution(tmp_path), security=security)
    props = {k: str(v) for k, v in cluster.nodes[0].properties().items()}
    prefix = "listener.name.sasl_ssl."
    assert props[prefix + "sasl.enabled.mechanisms"] == "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN,OAUTHBEARER"
    assert props[prefix + "oauthbearer.sasl.server.callback.handler.class"] == (
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
    )
    assert props["sasl.oauthbearer.jwks.endpoint.url"] == "https://127.0.0.1:4321/jwks"
    assert f'ssl.truststore.location="{security.ca_file}"' in props[prefix + "oauthbearer.sasl.jaas.config"]
    assert cluster.jvm_options == (
        "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls="
        "https://127.0.0.1:4321/jwks,https://127.0.0.1:4321/token",
    )
    assert stat.S_IMODE((tmp_path / "security" / "oauth-key.pem").stat().st_mode) == 0o600
    assert ClusterSecurity.load(tmp_path / "security") == security
    client = security.client_properties("alice", "OAUTHBEARER")
    assert client["sasl.oauthbearer.token.endpoint.url"] == "https://127.0.0.1:4321/token"
    kwargs = consumer_kwargs(client)
    login = kwargs["sasl_oauth_login"]
    assert (login.client_id, login.client_secret, login.scope) == (
        "alice",
        security.passwords["alice"],
        "kafka",
    )
    assert login.tls == {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(security.ca_file)}
    assert "--tls" in security.token_server_command("tag")
    with pytest.raises(ValueError, match="OAUTHBEARER needs a SASL protocol"):
        ClusterSecurity.create("mtls", tmp_path / "m", oauth_port=1)


def test_up_with_oauthbearer_on_plaintext_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logger = logging.getLogger("aiokafka")
    level = logger.level
    try:
        code = _main(["up", "--clusters", "X", "--dir", str(tmp_path), "--oauthbearer"])
    finally:
        logger.setLevel(level)
    assert code == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: OAUTHBEARER needs security sasl_plaintext or sasl_ssl, not 'plaintext'"
    ]


def test_expired_server_material_is_trusted_but_out_of_date(tmp_path: Path) -> None:
    import datetime

    from cryptography import x509

    keystore, ca = expired_server_material(tmp_path)
    cert = x509.load_pem_x509_certificates(keystore.read_bytes())[0]
    ca_cert = x509.load_pem_x509_certificate(ca.read_bytes())
    now = datetime.datetime.now(datetime.UTC)
    assert cert.not_valid_after_utc < now < ca_cert.not_valid_after_utc
    assert cert.issuer == ca_cert.subject
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in names.get_values_for_type(x509.DNSName)
    assert stat.S_IMODE(keystore.stat().st_mode) == 0o600
    ssl.create_default_context(cafile=str(ca)).load_cert_chain(str(keystore))  # a usable keystore
