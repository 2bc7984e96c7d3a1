"""aiokafka clients from Java client configs: the one place a config map becomes a client.

The maps are built, and translated to aiokafka keyword arguments, by :mod:`pyconnect.config.client_configs`
(which states who wins over whom); ``overrides`` are aiokafka keyword arguments applied last.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient

from pyconnect.config.client_configs import admin_kwargs, consumer_kwargs, producer_kwargs


def create_producer(config: Mapping[str, Any], **overrides: Any) -> AIOKafkaProducer:
    return AIOKafkaProducer(**{**producer_kwargs(config), **overrides})


def create_consumer(config: Mapping[str, Any], *topics: str, **overrides: Any) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(*topics, **{**consumer_kwargs(config), **overrides})


def create_admin(config: Mapping[str, Any], **overrides: Any) -> AIOKafkaAdminClient:
    return AIOKafkaAdminClient(**{**admin_kwargs(config), **overrides})
