"""pyconnect: an asyncio Kafka Connect runtime compatible with Apache Kafka Connect, hosting MirrorMaker 2 ports."""

__version__ = "0.1.0"

COMPATIBLE_KAFKA_VERSION = "4.3.1"
"""The Apache Kafka Connect release whose behaviour, configs and bytes this runtime reproduces."""
