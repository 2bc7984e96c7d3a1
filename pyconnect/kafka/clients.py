"""aiokafka clients from Java client configs: the one place a config map becomes a client.

The maps are built, and translated to aiokafka keyword arguments, by :mod:`pyconnect.config.client_configs`
(which states who wins over whom); ``overrides`` are aiokafka keyword arguments applied last. The
``*_client_kwargs`` functions here are those translations with an OAUTHBEARER login turned into its token
provider (:mod:`pyconnect.kafka.oauth_login`): every aiokafka client and connection this package makes
takes its keyword arguments from them, so every client of the runtime authenticates the same way.

A producer also gets Java's two time bounds aiokafka has no keyword for
(:class:`~pyconnect.config.client_configs.ProducerBounds`): ``delivery.timeout.ms`` becomes the life of
its batches (aiokafka expires a batch after its request timeout otherwise, where Java's producer keeps
retrying), and ``max.block.ms`` is kept for :func:`max_block_seconds`, which the batch sender honours.
Its produce requests are written as framing around the batches' own buffers
(:mod:`pyconnect.kafka.produce_writes`).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient

from pyconnect.config.client_configs import (
    JAVA_MAX_BLOCK_MS,
    admin_kwargs,
    consumer_kwargs,
    producer_bounds,
    producer_kwargs,
)
from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.batch_expiry import expire_at_drain
from pyconnect.kafka.oauth_login import with_token_provider
from pyconnect.kafka.produce_writes import write_produce_frames


def producer_client_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    return with_token_provider(producer_kwargs(config))


def consumer_client_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    return with_token_provider(consumer_kwargs(config))


def admin_client_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    """Admin keyword arguments; also those of a bare ``AIOKafkaClient`` or ``create_conn``."""
    return with_token_provider(admin_kwargs(config))


_MAX_BLOCK_S: weakref.WeakKeyDictionary[AIOKafkaProducer, float] = weakref.WeakKeyDictionary()


def create_producer(config: Mapping[str, Any], **overrides: Any) -> AIOKafkaProducer:
    producer = AIOKafkaProducer(**{**producer_client_kwargs(config), **overrides})
    bounds = producer_bounds(config)
    # aiokafka stamps every batch with its accumulator's time to live (its request timeout) and fails a
    # batch past it; Java's equivalent bound is delivery.timeout.ms. Idempotent producers never expire
    # a batch in flight, in both clients.
    seam.set_batch_ttl(producer, bounds.delivery_s)
    expire_at_drain(producer)  # a queued batch past the bound is failed too, as Java's is
    write_produce_frames(producer)  # batches go to the socket as they are, not re-encoded
    _MAX_BLOCK_S[producer] = bounds.max_block_s
    return producer


def max_block_seconds(producer: AIOKafkaProducer) -> float:
    """The ``max.block.ms`` the producer was created with, in seconds (Java's default for a producer
    made elsewhere)."""
    return _MAX_BLOCK_S.get(producer, JAVA_MAX_BLOCK_MS / 1000)


def create_consumer(config: Mapping[str, Any], *topics: str, **overrides: Any) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(*topics, **{**consumer_client_kwargs(config), **overrides})


def create_admin(config: Mapping[str, Any], **overrides: Any) -> AIOKafkaAdminClient:
    return AIOKafkaAdminClient(**{**admin_client_kwargs(config), **overrides})
