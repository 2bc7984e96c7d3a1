"""Ports of Java's file connectors (``org.apache.kafka.connect.file``)."""

from connectors.file.sink import FileStreamSinkConnector, FileStreamSinkTask

__all__ = ["FileStreamSinkConnector", "FileStreamSinkTask"]
