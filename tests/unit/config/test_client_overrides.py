"""connector.client.config.override.policy: which producer.override.* settings reach the task's producer."""

from __future__ import annotations

import pytest

from pyconnect.config.client_configs import client_overrides

CONFIG = {
    "connector.class": "X",
    "producer.override.linger.ms": "50",
    "producer.override.sasl.jaas.config": "jaas",
    "tasks.max": "1",
}


def test_all_lets_every_override_through() -> None:
    assert client_overrides(CONFIG, "All") == {"linger.ms": "50", "sasl.jaas.config": "jaas"}
    assert client_overrides(
        CONFIG, "org.apache.kafka.connect.connector.policy.AllConnectorClientConfigOverridePolicy"
    ) == {
        "linger.ms": "50",
        "sasl.jaas.config": "jaas",
    }


def test_none_refuses_any_override() -> None:
    assert client_overrides({"connector.class": "X"}, "None") == {}
    with pytest.raises(ValueError, match="does not allow any client overrides"):
        client_overrides(
            CONFIG, "org.apache.kafka.connect.connector.policy.NoneConnectorClientConfigOverridePolicy"
        )


def test_principal_allows_only_the_sasl_settings() -> None:
    assert client_overrides({"producer.override.sasl.jaas.config": "j"}, "Principal") == {
        "sasl.jaas.config": "j"
    }
    with pytest.raises(ValueError, match=r"\['linger\.ms'\]"):
        client_overrides(CONFIG, "Principal")
