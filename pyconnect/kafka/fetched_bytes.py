"""The bytes of the record sets a consumer fetches, counted once per fetched record set.

Java's consumer counts ``incoming-byte-total`` on its sockets as fetch responses arrive; aiokafka
measures nothing, and measuring every record it hands out (key and value sizes) costs the data path
tens of nanoseconds per record. This counts at the one place a fetched record set passes whole: the
fetcher's buffer of completed fetches.

Contract:
- ``count_fetched_bytes(consumer, on_fetched)`` makes a started ``AIOKafkaConsumer`` call
  ``on_fetched(nbytes)`` for every partition record set its fetcher buffers, with the set's size as
  fetched (compressed batches as on the wire, without the fetch response's own framing). Nothing is
  done per record. Fetch errors and empty sets are not counted.
- It returns ``False`` and changes nothing when the client's fetcher does not have the shape this
  relies on (a different aiokafka); the caller then measures the records it polls instead.
- Calling it again on the same consumer replaces the callback; it never counts a set twice.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable
from typing import Any

from pyconnect.kafka import aiokafka_seam as seam

log = logging.getLogger(__name__)


class _CountingFetchBuffer(collections.OrderedDict[Any, Any]):
    """The fetcher's ``{TopicPartition: FetchResult | FetchError}``; storing a result counts its bytes."""

    def __init__(self, buffered: Any, on_fetched: Callable[[int], None]) -> None:
        super().__init__()
        self.on_fetched = on_fetched
        for tp, result in buffered.items():  # buffered before counting began: kept, not counted
            collections.OrderedDict.__setitem__(self, tp, result)

    def __setitem__(self, tp: Any, result: Any) -> None:
        records = seam.fetch_result_records(result)
        if records is not None:
            size = records.size_in_bytes()
            if size:
                self.on_fetched(size)
        super().__setitem__(tp, result)


def count_fetched_bytes(consumer: Any, on_fetched: Callable[[int], None]) -> bool:
    """See the module docstring."""
    fetcher: Any = seam.consumer_fetcher_or_none(consumer)
    buffered = seam.fetcher_buffer(fetcher)
    if isinstance(buffered, _CountingFetchBuffer):
        buffered.on_fetched = on_fetched
        return True
    if not isinstance(buffered, collections.OrderedDict):
        log.debug("The consumer's fetcher has no buffer of fetched records to count; counting records")
        return False
    seam.install_fetch_buffer(fetcher, _CountingFetchBuffer(buffered, on_fetched))
    return True
