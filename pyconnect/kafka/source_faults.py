"""What a mirror's source consumer meets that an operator must hear about: refused READs, topics that
are gone or hidden, and a login the cluster no longer accepts (the fault half of
:class:`~pyconnect.kafka.source_consumer.SourceConsumer`, which owns one :class:`ReadRefusals`).

Contract of :class:`ReadRefusals` (READ refused on a topic, ``TOPIC_AUTHORIZATION_FAILED`` in a fetch
answer, on either fetch path):

- :meth:`~ReadRefusals.refuse` holds the topic's assigned partitions back from fetching: a refused
  fetch is answered at once, so fetching them as usual would spin. They are fetched again as a probe
  :data:`PROBE_FIRST_S` later, then after twice as long each time they are refused again, at most
  :data:`PROBE_MAX_S` apart, so an ACL granted back is seen within that bound. Other partitions are
  never held back: the task's other topics keep flowing.
- :meth:`~ReadRefusals.held` is the set a raw fetch leaves out now; :meth:`~ReadRefusals.due`
  hands the record path the partitions to resume (paused in the client while held) once each.
- :meth:`~ReadRefusals.lift` forgets every partition whose fetch was answered after its last refusal
  (the client stamps each answered fetch) and answers the topics still refused.

Contract of :func:`check_topics`: one Metadata request naming the topics, which never creates one
(a broker with ``auto.create.topics.enable`` would otherwise bring a deleted source topic back), tells
which are missing (``UNKNOWN_TOPIC_OR_PARTITION``: deleted) and which the principal may not DESCRIBE;
when no broker answers, one probe connection per bootstrap server tells a refused login
(:func:`~pyconnect.kafka.access.explain_bootstrap`) from an unreachable cluster. It never raises a
Kafka error: :class:`TopicCheck` says what was found.

:func:`principal_of` names the principal a client config logs in as, for messages (never a secret);
:func:`unreachable` tells a client start that found no broker from other failures.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiokafka.errors import (
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    NodeNotReadyError,
    RequestTimedOutError,
)
from aiokafka.protocol.metadata import MetadataRequest

from pyconnect.kafka.access import access_error, explain_bootstrap

PROBE_FIRST_S = 1.0
"""A partition refused READ is fetched again this long after the first refusal."""
PROBE_MAX_S = 5.0
"""The longest a refused partition waits between two probes."""
UNKNOWN_TOPIC_OR_PARTITION = 3
TOPIC_AUTHORIZATION_FAILED = 29

Partition = tuple[str, int]


def wall_ms() -> int:
    return int(time.time() * 1000)


@dataclass(slots=True)
class _Refusal:
    refused_ms: int
    probe_at_s: float
    backoff_s: float
    released: bool = False


class ReadRefusals:
    """The partitions refused READ, held back between probes (see the module docstring). One event
    loop owns it; ``clock_s`` is monotonic, ``clock_ms`` the wall clock the client stamps answers with."""

    def __init__(
        self, clock_s: Callable[[], float] = time.monotonic, clock_ms: Callable[[], int] = wall_ms
    ) -> None:
        self._clock_s = clock_s
        self._clock_ms = clock_ms
        self._refused: dict[Partition, _Refusal] = {}

    def __bool__(self) -> bool:
        return bool(self._refused)

    def refuse(self, partitions: Iterable[Partition]) -> None:
        """A fetch of ``partitions`` was refused READ: hold them back until their next probe. A refusal
        met while a partition is held (an answer already on its way) keeps its schedule."""
        now_s, now_ms = self._clock_s(), self._clock_ms()
        for tp in partitions:
            found = self._refused.get(tp)
            if found is None:
                self._refused[tp] = _Refusal(now_ms, now_s + PROBE_FIRST_S, PROBE_FIRST_S)
                continue
            found.refused_ms = now_ms
            if now_s >= found.probe_at_s:  # the probe was refused: wait longer
                found.backoff_s = min(PROBE_MAX_S, found.backoff_s * 2)
                found.probe_at_s = now_s + found.backoff_s
                found.released = False

    def held(self) -> frozenset[Partition]:
        """The partitions not to fetch now (their next probe is not due)."""
        if not self._refused:
            return frozenset()
        now = self._clock_s()
        return frozenset(tp for tp, r in self._refused.items() if not r.released and now < r.probe_at_s)

    def due(self) -> list[Partition]:
        """The held partitions whose probe is due, each returned once per hold (to be resumed)."""
        if not self._refused:
            return []
        now = self._clock_s()
        found = []
        for tp, r in self._refused.items():
            if not r.released and now >= r.probe_at_s:
                r.released = True
                found.append(tp)
        return found

    def lift(self, answered_ms: Callable[[Partition], int | None]) -> set[str]:
        """Forget the partitions answered after their last refusal; the topics still refused."""
        if not self._refused:
            return set()
        for tp in [tp for tp, r in self._refused.items() if (answered_ms(tp) or 0) > r.refused_ms]:
            del self._refused[tp]
        return {topic for topic, _ in self._refused}

    def forget(self, keep: Callable[[Partition], bool]) -> None:
        """Drop the partitions ``keep`` rejects (no longer assigned)."""
        for tp in [tp for tp in self._refused if not keep(tp)]:
            del self._refused[tp]


@dataclass(frozen=True, slots=True)
class TopicCheck:
    """What :func:`check_topics` found. ``answered``: a broker answered the Metadata request;
    ``refusal``: the one-line reason the cluster refused the login (``None`` if it did not)."""

    answered: bool
    present: frozenset[str] = frozenset()
    missing: frozenset[str] = frozenset()
    undescribable: frozenset[str] = frozenset()
    refusal: str | None = None
    error: str | None = field(default=None, compare=False)


async def check_topics(
    client: Any, config: Mapping[str, Any], cluster: str, topics: Iterable[str]
) -> TopicCheck:
    """Ask ``client``'s cluster (``cluster`` names it in messages) about ``topics`` without creating any
    (see the module docstring); ``config`` is the Java config the client was built from."""
    wanted = sorted(set(topics))
    try:
        node = client.get_random_node()
        if node is None:
            raise KafkaConnectionError("no broker of the cluster is known")
        response = await client.send(node, MetadataRequest(wanted, allow_auto_topic_creation=False))
    except KafkaError as exc:
        cause = await explain_bootstrap(config)
        refusal = (
            None if cause is None else access_error(cause, cluster, mechanism=config.get("sasl.mechanism"))
        )
        return TopicCheck(False, refusal=None if refusal is None else str(refusal), error=str(exc))
    codes = {topic: error for error, topic, *_ in response.topics}
    return TopicCheck(
        True,
        present=frozenset(
            t for t in wanted if codes.get(t) not in (UNKNOWN_TOPIC_OR_PARTITION, TOPIC_AUTHORIZATION_FAILED)
        ),
        missing=frozenset(t for t in wanted if codes.get(t) == UNKNOWN_TOPIC_OR_PARTITION),
        undescribable=frozenset(t for t in wanted if codes.get(t) == TOPIC_AUTHORIZATION_FAILED),
    )


_JAAS_USER = re.compile(r"""\busername\s*=\s*"([^"]*)\"""")


def principal_of(config: Mapping[str, Any]) -> str:
    """``User:<name>`` for a SASL login naming its user in ``sasl.jaas.config``; otherwise what can be
    said without the broker's principal mapping (a certificate's subject is mapped by the broker)."""
    protocol = str(config.get("security.protocol") or "PLAINTEXT").upper()
    found = _JAAS_USER.search(str(config.get("sasl.jaas.config") or ""))
    if protocol.startswith("SASL") and found:
        return f"User:{found.group(1)}"
    if protocol.startswith("SASL"):
        return f"the {config.get('sasl.mechanism') or 'GSSAPI'} principal of the client"
    if protocol == "SSL":
        return "the principal of the client's certificate"
    return "User:ANONYMOUS"


def unreachable(exc: BaseException) -> bool:
    """Whether a client's failed start says no broker of the cluster could be reached (``Unable to
    bootstrap``, a connection or request timeout), as opposed to a refusal or a bad config."""
    return isinstance(
        exc, KafkaConnectionError | NodeNotReadyError | RequestTimedOutError | KafkaTimeoutError | OSError
    )
