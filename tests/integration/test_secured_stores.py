"""Java's TLS store types against a real broker: the client key as PKCS12 and as JKS over mTLS, and a JKS
truststore over SSL.

The stores are made from the cluster's PEM material (``ca.pem``, ``admin.pem``) with ``openssl`` and
Java's ``keytool``, as an operator converts them; producer and consumer are built from Java client keys
by the runtime's own factories (``pyconnect.kafka.clients`` over ``client_configs``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pyconnect.testing.kafka import KafkaCluster
from pyconnect.testing.kafka_security import ADMIN_USER
from tests.integration.test_secured_launcher import consume, create_topic, produce
from tests.tls_material import jks_from_pkcs12, pkcs12_from_pem, truststore

pytestmark = pytest.mark.kafka

STORE_PW = "store-secret-1"
KEY_PW = "key-secret-2"


def store_keys(cluster: KafkaCluster, directory: Path, store: str) -> dict[str, str]:
    """Java ``ssl.*`` keys of ``admin`` with the ``store`` type, made from the cluster's PEM material."""
    security = cluster.security
    assert security is not None
    if store == "jks-truststore":
        trust = truststore(security.ca_file, directory / "trust.jks", "JKS", STORE_PW)
        return {
            "ssl.truststore.type": "JKS",
            "ssl.truststore.location": str(trust),
            "ssl.truststore.password": STORE_PW,
        }
    pem = security.keystore(ADMIN_USER)
    p12 = pkcs12_from_pem(pem, pem, directory / "admin.p12", STORE_PW)
    if store == "pkcs12-keystore":
        return {
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(p12),
            "ssl.keystore.password": STORE_PW,
        }
    jks = jks_from_pkcs12(p12, STORE_PW, directory / "admin.jks", STORE_PW, KEY_PW)
    return {
        "ssl.keystore.type": "JKS",
        "ssl.keystore.location": str(jks),
        "ssl.keystore.password": STORE_PW,
        "ssl.key.password": KEY_PW,
    }


CASES = [
    ("mtls", "pkcs12-keystore"),
    ("mtls", "jks-keystore"),
    ("ssl", "jks-truststore"),
]


@pytest.fixture(params=CASES, ids=[f"{p}-{s}" for p, s in CASES])
def case(
    request: pytest.FixtureRequest, secured_cluster: Callable[[str], KafkaCluster]
) -> tuple[KafkaCluster, str]:
    protocol, store = request.param
    return secured_cluster(protocol), store


async def test_store_type_round_trips_a_record(
    case: tuple[KafkaCluster, str], tmp_path: Path, unique
) -> None:
    cluster, store = case
    pem_config = cluster.client_properties(ADMIN_USER)
    replaced = "ssl.keystore." if store.endswith("keystore") else "ssl.truststore."
    config = {k: v for k, v in pem_config.items() if not k.startswith(replaced)}
    config.update(store_keys(cluster, tmp_path, store))
    topic = unique("store")
    await create_topic(pem_config, topic)
    value = f"{cluster.security.protocol} with {store}".encode()  # type: ignore[union-attr]
    await produce(config, topic, value)
    assert await consume(config, topic) == [value]
