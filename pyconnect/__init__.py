"""pyconnect: an asyncio Kafka Connect runtime compatible with Apache Kafka Connect, hosting MirrorMaker 2 ports."""

__version__ = "0.1.0"
