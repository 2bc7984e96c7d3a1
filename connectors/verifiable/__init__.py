"""Port of Java's verifiable source connector, for system tests of the runtime."""

from connectors.verifiable.source import VerifiableSourceConnector, VerifiableSourceTask

__all__ = ["VerifiableSourceConnector", "VerifiableSourceTask"]
