"""KIP-618 preflight checks (pyconnect.herder.exactly_once_validation), Java's messages."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from pyconnect.api.connector import ConnectorTransactionBoundaries, ExactlyOnceSupport
from pyconnect.config.definition import ConfigValue
from pyconnect.herder.exactly_once_validation import (
    NO_CONNECTOR_BOUNDARIES,
    NOT_IMPLEMENTED,
    NULL_BOUNDARIES,
    UNSUPPORTED,
    WORKER_NOT_ENABLED,
    check_source_exactly_once,
)


class Connector:
    def __init__(self, support: object, boundaries: object = ConnectorTransactionBoundaries.UNSUPPORTED):
        self.support = support
        self.boundaries = boundaries

    def exactly_once_support(self, props: Mapping[str, str]) -> object:
        if isinstance(self.support, Exception):
            raise self.support
        return self.support

    def can_define_transaction_boundaries(self, props: Mapping[str, str]) -> object:
        return self.boundaries


def errors(connector: Connector, support: str, boundary: str = "poll", *, enabled: bool = True) -> tuple:
    validated = {
        "exactly.once.support": ConfigValue("exactly.once.support", support),
        "transaction.boundary": ConfigValue("transaction.boundary", boundary),
    }
    check_source_exactly_once(connector, {}, validated, worker_exactly_once=enabled)
    return tuple(validated["exactly.once.support"].errors), tuple(validated["transaction.boundary"].errors)


def test_requested_checks_nothing() -> None:
    assert errors(Connector(ExactlyOnceSupport.UNSUPPORTED), "requested", enabled=False) == ((), ())


@pytest.mark.parametrize(
    ("support", "enabled", "expected"),
    [
        (ExactlyOnceSupport.SUPPORTED, True, ()),
        (ExactlyOnceSupport.SUPPORTED, False, (WORKER_NOT_ENABLED,)),
        (ExactlyOnceSupport.UNSUPPORTED, True, (UNSUPPORTED,)),
        (None, False, (WORKER_NOT_ENABLED, NOT_IMPLEMENTED)),
        (ValueError(" bad props "), True, ("An unexpected error occurred during validation: bad props",)),
        (
            ValueError(""),
            True,
            ("An unexpected error occurred during validation; please see the worker logs for more details.",),
        ),
    ],
)
def test_required_needs_the_worker_and_the_connector(support: object, enabled: bool, expected: tuple) -> None:
    assert errors(Connector(support), "REQUIRED", enabled=enabled) == (expected, ())


def test_a_value_that_already_failed_is_not_checked_again() -> None:
    validated = {"exactly.once.support": ConfigValue("exactly.once.support", "required", errors=["bad"])}
    check_source_exactly_once(Connector(None), {}, validated, worker_exactly_once=False)
    assert validated["exactly.once.support"].errors == ["bad"]


@pytest.mark.parametrize(
    ("boundaries", "expected"),
    [
        (ConnectorTransactionBoundaries.SUPPORTED, ()),
        (ConnectorTransactionBoundaries.UNSUPPORTED, (NO_CONNECTOR_BOUNDARIES,)),
        (None, (NULL_BOUNDARIES,)),
    ],
)
def test_connector_boundaries_need_the_connector(boundaries: object, expected: tuple) -> None:
    connector = Connector(ExactlyOnceSupport.SUPPORTED, boundaries)
    assert errors(connector, "requested", "Connector") == ((), expected)
    assert errors(connector, "requested", "interval") == ((), ())
