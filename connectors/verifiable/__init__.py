"""Ports of Java's verifiable source and sink connectors, for system tests of the runtime."""

from connectors.verifiable.sink import VerifiableSinkConnector, VerifiableSinkTask
from connectors.verifiable.source import VerifiableSourceConnector, VerifiableSourceTask

__all__ = [
    "VerifiableSinkConnector",
    "VerifiableSinkTask",
    "VerifiableSourceConnector",
    "VerifiableSourceTask",
]
