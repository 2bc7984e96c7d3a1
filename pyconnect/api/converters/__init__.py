"""Converters between Connect data and record bytes, byte-compatible with Kafka 4.3.1's."""

from pyconnect.api.converters.base import BaseConverter, Converter, ConverterType, HeaderConverter
from pyconnect.api.converters.bytearray import ByteArrayConverter
from pyconnect.api.converters.header import SimpleHeaderConverter
from pyconnect.api.converters.json_converter import JsonConverter
from pyconnect.api.converters.string import StringConverter

__all__ = [
    "BaseConverter",
    "ByteArrayConverter",
    "Converter",
    "ConverterType",
    "HeaderConverter",
    "JsonConverter",
    "SimpleHeaderConverter",
    "StringConverter",
]
