"""Strimzi's contract without Kafka: stores from PEM, the MirrorMaker 2 variables, the launcher's
preparation, Java-only findings, and the Strimzi Metrics Reporter's names (pyconnect.strimzi,
pyconnect.metrics.strimzi_reporter)."""

from __future__ import annotations

import datetime
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from pyconnect.config.providers import resolve_config_variables
from pyconnect.config.tls import keystore_material, truststore_certificates
from pyconnect.errors import ConfigError
from pyconnect.metrics import strimzi_reporter
from pyconnect.metrics.registry import MetricName, MetricReading
from pyconnect.strimzi import java_only, launch, mm2_certs, stores


def make_cert(
    name: str, issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None = None
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer[0].subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    return builder.sign(issuer[1] if issuer else key, hashes.SHA256()), key


def pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


@pytest.fixture(scope="module")
def ca() -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    return make_cert("cluster-ca")


def test_truststore_is_a_java_truststore_pyconnect_and_keytool_read(ca, tmp_path: Path) -> None:
    other, _ = make_cert("clients-ca")
    data = stores.truststore([("s/ca.crt", pem(ca[0])), ("s/other.crt", pem(other))], "pw")
    path = tmp_path / "t.p12"
    path.write_bytes(data)
    trusted = truststore_certificates(
        {
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": str(path),
            "ssl.truststore.password": "pw",
        }
    )
    assert trusted is not None and {c.subject for c in trusted} == {ca[0].subject, other.subject}
    keytool = shutil.which("keytool")
    if keytool is None:
        pytest.fail(
            "keytool not found on PATH: install a Java 17 runtime (apt-get install openjdk-17-jre-headless)"
        )
    listed = subprocess.run(
        [keytool, "-list", "-keystore", str(path), "-storetype", "PKCS12", "-storepass", "pw"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert listed.count("trustedCertEntry") == 2, listed


def test_keystore_holds_the_key_and_its_chain(ca, tmp_path: Path) -> None:
    leaf, key = make_cert("alice", ca)
    data = stores.keystore(
        ("u/user.crt", pem(leaf) + pem(ca[0])), ("u/user.key", key_pem(key)), "u/user.crt", "pw"
    )
    path = tmp_path / "k.p12"
    path.write_bytes(data)
    material = keystore_material(
        {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(path), "ssl.keystore.password": "pw"}
    )
    assert material is not None and material.chain[0].subject == leaf.subject and len(material.chain) == 2


def test_bad_pem_names_the_file_never_its_content(ca) -> None:
    leaf, _ = make_cert("alice", ca)
    _, stranger = make_cert("mallory")
    with pytest.raises(stores.StoreInputError, match=r"^s/broken.crt holds no PEM certificate that parses$"):
        stores.truststore(
            [("s/broken.crt", b"-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n")], "pw"
        )
    with pytest.raises(
        stores.StoreInputError, match=r"^u/user.key is not the private key of the certificate in u/user.crt$"
    ):
        stores.keystore(("u/user.crt", pem(leaf)), ("u/user.key", key_pem(stranger)), "a", "pw")
    with pytest.raises(stores.StoreInputError, match=r"^u/user.key holds no unencrypted PEM private key"):
        stores.keystore(("u/user.crt", pem(leaf)), ("u/user.key", b"secret-material"), "a", "pw")


MM2_ENV = {
    "KAFKA_MIRRORMAKER_2_CLUSTERS": "target;source;plain",
    "KAFKA_MIRRORMAKER_2_TRUSTED_CERTS_CLUSTERS": "target=target-ca/ca.crt\nsource=source-ca/*.crt;extra/ca.pem",
    "KAFKA_MIRRORMAKER_2_TLS_AUTH_CLUSTERS": "true",
    "KAFKA_MIRRORMAKER_2_TLS_AUTH_CERTS_CLUSTERS": "source=alice/user.crt",
    "KAFKA_MIRRORMAKER_2_TLS_AUTH_KEYS_CLUSTERS": "source=alice/user.key",
}


def test_the_variables_strimzi_sets_become_one_job_per_cluster_with_certificates() -> None:
    jobs = mm2_certs.plan(MM2_ENV)
    assert jobs == [
        mm2_certs.StoreJob("target", ("target-ca/ca.crt",), None, None),
        mm2_certs.StoreJob("source", ("source-ca/*.crt", "extra/ca.pem"), "alice/user.crt", "alice/user.key"),
    ]
    assert jobs[1].truststore_path == "/tmp/kafka/clusters/source.truststore.p12"


def mount(root: Path, path: str, data: bytes) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def test_prepare_copies_the_config_hides_jaas_makes_stores_and_picks_the_log_level(
    ca, tmp_path: Path
) -> None:
    leaf, key = make_cert("alice", ca)
    mount(tmp_path, "/opt/kafka/custom-config/kafka-connect.properties",
          b"bootstrap.servers=b:9092\nsasl.jaas.config=org.X required password=\"s3cret\";\n"
          b"producer.sasl.jaas.config=org.X required password=\"s3cret\";\nconsumer.interceptor.classes=io.opentelemetry.X\n")  # fmt: skip
    mount(tmp_path, "/opt/kafka/custom-config/log4j2.properties", b"rootLogger.level = WARN\n")
    mount(tmp_path, "/opt/kafka/mm2-certs/target/target-ca/ca.crt", pem(ca[0]))
    mount(tmp_path, "/opt/kafka/mm2-certs/source/source-ca/ca.crt", pem(ca[0]))
    mount(tmp_path, "/opt/kafka/mm2-certs/source/alice/user.crt", pem(leaf))
    mount(tmp_path, "/opt/kafka/mm2-certs/source/alice/user.key", key_pem(key))
    environ = dict(MM2_ENV, STRIMZI_TRACING="opentelemetry")
    prepared = launch.prepare(environ, root=str(tmp_path))
    assert prepared.argv == [
        "/usr/bin/tini", "-w", "-e", "143", "--", "/usr/local/bin/pyconnect", "distributed",
        "/tmp/strimzi-connect.properties", "--log-level", "WARNING",
    ]  # fmt: skip
    assert "s3cret" not in prepared.printed_config
    assert prepared.printed_config.count("sasl.jaas.config=[hidden]") == 2
    assert (tmp_path / "tmp/strimzi-connect.properties").read_bytes().count(b"s3cret") == 2
    assert re.fullmatch(r"[_A-Za-z0-9-]{32}", environ["MIRRORMAKER_2_CERTS_STORE_PASSWORD"])
    assert sorted(Path(p).name for p in prepared.stores) == [
        "source.keystore.p12", "source.truststore.p12", "target.truststore.p12",
    ]  # fmt: skip
    assert [w.split(":")[0] for w in prepared.warnings] == [
        "consumer.interceptor.classes",
        "STRIMZI_TRACING=opentelemetry",
    ]
    assert environ["ADVERTISED_HOSTNAME"]


def test_prepare_refuses_a_missing_config_and_a_bad_certificate_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(
        launch.LaunchError, match=r"^.*/opt/kafka/custom-config/kafka-connect.properties is missing: mount"
    ):
        launch.prepare({}, root=str(tmp_path))
    mount(tmp_path, "/opt/kafka/custom-config/kafka-connect.properties", b"bootstrap.servers=b:9092\n")
    mount(tmp_path, "/opt/kafka/mm2-certs/target/target-ca/ca.crt", b"not a certificate")
    with pytest.raises(launch.LaunchError) as failed:
        launch.prepare(dict(MM2_ENV), root=str(tmp_path))
    assert str(failed.value).endswith(
        "/opt/kafka/mm2-certs/target/target-ca/ca.crt holds no PEM certificate that parses"
    )
    assert "\n" not in str(failed.value)


def test_java_only_classes_and_variables_are_named() -> None:
    found = java_only.findings(
        {
            "producer.interceptor.classes": "io.opentelemetry.instrumentation.kafkaclients.v2_6.TracingProducerInterceptor",
            "metric.reporters": "org.apache.kafka.common.metrics.JmxReporter,io.strimzi.kafka.metrics.prometheus.ClientMetricsReporter",
            "admin.metric.reporters": "com.example.Reporter",
            "config.providers.strimzisecrets.class": "io.strimzi.kafka.KubernetesSecretConfigProvider",
            "config.providers.strimzienv.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
            "config.providers.vault.class": "com.example.VaultConfigProvider",
        },
        {"STRIMZI_JMX_ENABLED": "true", "STRIMZI_JAVA_SYSTEM_PROPERTIES": "-Dx=y"},
    )
    assert [f.split(":")[0] for f in found] == [
        "admin.metric.reporters", "config.providers.vault.class", "producer.interceptor.classes",
        "STRIMZI_JMX_ENABLED=true", "STRIMZI_JAVA_SYSTEM_PROPERTIES",
    ]  # fmt: skip


def test_a_declared_kubernetes_secret_provider_runs_until_a_value_uses_it() -> None:
    declared = {
        "config.providers": "strimzienv,strimzisecrets",
        "config.providers.strimzienv.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
        "config.providers.strimzisecrets.class": "io.strimzi.kafka.KubernetesSecretConfigProvider",
        "rest.advertised.host.name": "${strimzienv:HOST_NAME}",
    }
    assert resolve_config_variables(declared, {"HOST_NAME": "pod-0"})["rest.advertised.host.name"] == "pod-0"
    with pytest.raises(
        ConfigError,
        match=r"KubernetesSecretConfigProvider is not available in pyconnect .*cannot resolve password",
    ):
        resolve_config_variables({**declared, "x": "${strimzisecrets:ns/user:password}"}, {})


def reading(domain: str, group: str, name: str, value: object, **tags: str) -> MetricReading:
    return MetricReading(domain, MetricName(name, group, tuple(tags.items())), value)  # type: ignore[arg-type]


def test_reporter_names_labels_values_and_allowlist() -> None:
    assert strimzi_reporter.series_name("kafka.connect", "connect-worker-metrics", "connector-count") == (
        "kafka_connect_connect_worker_metrics_connector_count"
    )
    assert strimzi_reporter.series_name(
        "kafka.connect", "connect-worker-metrics", "connector-startup-attempts-total"
    ) == ("kafka_connect_connect_worker_metrics_connector_startup_attempts")
    assert strimzi_reporter.series_name("kafka.connect.mirror", "MirrorSourceConnector", "record-count") == (
        "kafka_connect_mirror_mirrorsourceconnector_record_count"
    )
    assert [strimzi_reporter.java_double(v) for v in (1, 0.5, 1.5e9, 12345678.0, 1e-4, 0.0)] == [
        "1.0", "0.5", "1.5E9", "1.2345678E7", "1.0E-4", "0.0",
    ]  # fmt: skip
    config = strimzi_reporter.reporter_config(
        {
            "metric.reporters": "org.apache.kafka.common.metrics.JmxReporter,io.strimzi.kafka.metrics.prometheus.ClientMetricsReporter",
            "prometheus.metrics.reporter.allowlist": "kafka_connect_connector_metrics.*,kafka_connect_mirror_mirrorsourceconnector.*",
        }
    )
    assert config is not None and (config.host, config.port, config.enabled) == ("0.0.0.0", 8080, True)
    text = strimzi_reporter.render(
        strimzi_reporter.samples(
            [
                reading(
                    "kafka.connect",
                    "connector-metrics",
                    "status",
                    "running",
                    connector="A->B.MirrorSourceConnector",
                ),
                reading("kafka.connect", "connect-worker-metrics", "connector-count", 1),
                reading(
                    "kafka.connect.mirror",
                    "MirrorSourceConnector",
                    "record-count",
                    3,
                    target="B",
                    topic="A.t",
                    partition="0",
                    source="A",
                ),
                reading("kafka.connect.mirror", "kafka-metrics-count", "count", 9),
            ],
            config.allowlist,
        )
    )
    assert text.splitlines() == [
        "# HELP kafka_connect_connector_metrics_status_info Use kafka_connect_connector_metrics_status in allowlist",
        "# TYPE kafka_connect_connector_metrics_status_info gauge",
        'kafka_connect_connector_metrics_status_info{connector="A->B.MirrorSourceConnector",status="running"} 1.0',
        "# HELP kafka_connect_mirror_mirrorsourceconnector_record_count Use kafka_connect_mirror_mirrorsourceconnector_record_count in allowlist",
        "# TYPE kafka_connect_mirror_mirrorsourceconnector_record_count gauge",
        'kafka_connect_mirror_mirrorsourceconnector_record_count{partition="0",source="A",target="B",topic="A.t"} 3.0',
    ]


def test_reporter_is_off_unless_named_and_a_bad_listener_names_the_key() -> None:
    assert (
        strimzi_reporter.reporter_config({"metric.reporters": "org.apache.kafka.common.metrics.JmxReporter"})
        is None
    )
    with pytest.raises(ValueError, match=r"prometheus\.metrics\.reporter\.listener"):
        strimzi_reporter.reporter_config(
            {
                "metric.reporters": strimzi_reporter.CLIENT_CLASS,
                "prometheus.metrics.reporter.listener": "https://:1",
            }
        )


STRIMZI_PROVIDERS = {
    "config.providers": "strimzienv,strimzifile,strimzidir,strimzisecrets",
    "config.providers.strimzienv.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
    "config.providers.strimzienv.param.allowlist.pattern": "STRIMZI_.*|ADVERTISED_HOSTNAME",
    "config.providers.strimzifile.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
    "config.providers.strimzidir.class": "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
    "config.providers.strimzidir.param.allowed.paths": "",
    "config.providers.strimzisecrets.class": "io.strimzi.kafka.KubernetesSecretConfigProvider",
}


def test_strimzi_placeholders_resolve_anywhere_in_a_value_within_allowed_paths_and_names(
    tmp_path: Path,
) -> None:
    secrets_dir = tmp_path / "opt" / "kafka" / "connect-password" / "user"
    secrets_dir.mkdir(parents=True)
    (secrets_dir / "password").write_text("s3cret")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "password").write_text("not-allowed")
    props = {
        **STRIMZI_PROVIDERS,
        "config.providers.strimzidir.param.allowed.paths": str(tmp_path / "opt" / "kafka"),
        "sasl.jaas.config": f'org.X required username="u" password="${{strimzidir:{secrets_dir}:password}}";',
        "outside": f"${{strimzidir:{outside}:password}}",
        "rack": "${strimzienv:STRIMZI_RACK_ID}",
        "hidden": "${strimzienv:HOME}",
    }
    resolved = resolve_config_variables(props, {"STRIMZI_RACK_ID": "zone-a", "HOME": "/root"})
    assert resolved["sasl.jaas.config"] == 'org.X required username="u" password="s3cret";'
    assert resolved["outside"] == props["outside"]
    assert resolved["rack"] == "zone-a"
    assert resolved["hidden"] == "${strimzienv:HOME}"
