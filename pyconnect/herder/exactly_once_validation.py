"""Preflight checks of a source connector's exactly-once keys (KIP-618; Java ``DistributedHerder``'s
``validateSourceConnectorExactlyOnceSupport`` and ``validateSourceConnectorTransactionBoundary``).

Contract: :func:`check_source_exactly_once` adds Java's error messages to the framework's validated
``exactly.once.support`` and ``transaction.boundary`` values, only when those passed their own
validation so far:

- ``exactly.once.support=required`` (any case): an error when the worker does not have
  ``exactly.once.source.support=enabled``, and one when the connector's ``exactly_once_support(config)``
  is not ``SUPPORTED`` (``None``: it does not implement the check; ``UNSUPPORTED``; or it raised);
- ``transaction.boundary=connector`` (any case): an error unless the connector's
  ``can_define_transaction_boundaries(config)`` is ``SUPPORTED``.

Only the distributed herder runs these checks, as in Java. Errors surface as the create/update 400 and
in ``/config/validate``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from pyconnect.api.connector import ConnectorTransactionBoundaries, ExactlyOnceSupport
from pyconnect.config.definition import ConfigValue

log = logging.getLogger(__name__)

EXACTLY_ONCE_SUPPORT = "exactly.once.support"
TRANSACTION_BOUNDARY = "transaction.boundary"

WORKER_NOT_ENABLED = "This worker does not have exactly-once source support enabled."
NOT_IMPLEMENTED = (
    "The connector does not implement the API required for preflight validation of exactly-once source "
    "support. Please consult the documentation for the connector to determine whether it supports "
    'exactly-once semantics, and then consider reconfiguring the connector to use the value "requested" '
    "for this property (which will disable this preflight check and allow the connector to be created)."
)
UNSUPPORTED = "The connector does not support exactly-once semantics with the provided configuration."
NULL_BOUNDARIES = (
    "This connector has returned a null value from its canDefineTransactionBoundaries method, which is not "
    "permitted. The connector will be treated as if it cannot define its own transaction boundaries, and "
    "cannot be configured with 'transaction.boundary' set to 'connector'."
)
NO_CONNECTOR_BOUNDARIES = (
    "The connector does not support connector-defined transaction boundaries with the given configuration. "
    "Please reconfigure it to use a different transaction boundary definition."
)


def _unexpected(exc: Exception) -> str:
    message = str(exc).strip()
    if message:
        return f"An unexpected error occurred during validation: {message}"
    return "An unexpected error occurred during validation; please see the worker logs for more details."


def check_source_exactly_once(
    connector: object,
    config: Mapping[str, str],
    validated: Mapping[str, ConfigValue],
    *,
    worker_exactly_once: bool,
) -> None:
    """Append the exactly-once preflight errors to ``validated`` (see the module docstring)."""
    support = validated.get(EXACTLY_ONCE_SUPPORT)
    if support is not None and not support.errors and str(support.value).lower() == "required":
        if not worker_exactly_once:
            support.errors.append(WORKER_NOT_ENABLED)
        try:
            answer = connector.exactly_once_support(config)  # type: ignore[attr-defined]
            if answer is None:
                support.errors.append(NOT_IMPLEMENTED)
            elif answer != ExactlyOnceSupport.SUPPORTED:
                support.errors.append(UNSUPPORTED)
        except Exception as exc:
            log.error("Failed while validating connector support for exactly-once semantics", exc_info=exc)
            support.errors.append(_unexpected(exc))
    boundary = validated.get(TRANSACTION_BOUNDARY)
    if boundary is not None and not boundary.errors and str(boundary.value).lower() == "connector":
        try:
            can = connector.can_define_transaction_boundaries(config)  # type: ignore[attr-defined]
            if can is None:
                boundary.errors.append(NULL_BOUNDARIES)
            elif can != ConnectorTransactionBoundaries.SUPPORTED:
                boundary.errors.append(NO_CONNECTOR_BOUNDARIES)
        except Exception as exc:
            log.error(
                "Failed while validating connector support for defining its own transaction boundaries",
                exc_info=exc,
            )
            boundary.errors.append(_unexpected(exc))
