"""Task configs keep ``${...}`` variables, never the secrets they resolve to (Java's reverseTransform)."""

from __future__ import annotations

from pyconnect.herder.core import reverse_transform


def test_resolved_values_of_variable_keys_are_replaced_by_the_raw_variable() -> None:
    raw = {
        "connector.class": "X",
        "password": "${file:/etc/secrets.properties:pw}",
        "topic": "t",
        "gone": None,
    }
    generated = [{"password": "hunter2", "topic": "t", "task.class": "Y"}, {"topic": "t"}]
    assert reverse_transform(generated, raw) == [
        {"password": "${file:/etc/secrets.properties:pw}", "topic": "t", "task.class": "Y"},
        {"topic": "t"},
    ]


def test_configs_without_variables_are_returned_as_they_are() -> None:
    generated = [{"topic": "t"}]
    assert reverse_transform(generated, {"topic": "t"}) is generated
