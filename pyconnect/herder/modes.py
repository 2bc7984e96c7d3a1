"""The three ways a worker runs the one herder: distributed, standalone, dedicated MirrorMaker.

A :class:`HerderMode` is configuration, not a subclass: the loop and the core are the same code.

- ``distributed``: a member of a Connect group (``GroupMembership``) over the Kafka-backed stores;
  only the leader writes connector configs, deletions and STOPPED; followers publish task configs
  to the leader's internal endpoint.
- ``standalone``: a group of one (``SoloMembership``) over the in-memory stores; every write is
  answered once the work it causes is applied (Java's standalone herder runs writes synchronously),
  task configs from outside are refused, and ``/health`` turns healthy when the runtime marks the
  herder ready (after the connectors named on the command line exist).
- ``dedicated``: a distributed member of one MirrorMaker flow ``S->T`` that also owns the configs of
  its flow's connectors (written by a member that has just become leader, KAFKA-15372).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class HerderMode:
    name: str
    accepts_task_configs: bool = True
    reply_when_settled: bool = False
    ready_when_marked: bool = False
    flow: str | None = None
    managed_connectors: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Dedicated mode: connector name -> the config the leader keeps, in the order they are written."""


DISTRIBUTED = HerderMode("distributed")
STANDALONE = HerderMode(
    "standalone", accepts_task_configs=False, reply_when_settled=True, ready_when_marked=True
)


def dedicated(flow: str, connector_configs: Mapping[str, Mapping[str, str]]) -> HerderMode:
    """The mode of flow ``flow``'s herder keeping ``connector_configs`` (Source, Heartbeat, Checkpoint)."""
    return HerderMode(
        "dedicated",
        flow=flow,
        managed_connectors={name: dict(config) for name, config in connector_configs.items()},
    )
