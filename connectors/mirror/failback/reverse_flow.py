"""The reverse flow of a failback: the forward MirrorSourceConnector's config turned around (pure).

:func:`reverse_source_config` swaps the two sides of the forward (A->B) MirrorSourceConnector's config:
the aliases and every ``source.``/``target.``-prefixed key (``source.cluster.bootstrap.servers``,
``target.cluster.sasl.jaas.config``, ``source.consumer.*``...), so the reverse flow (B->A) reads B with
the settings the forward flow wrote B with, and writes A with those it read A with. Config-provider
variables stay as written (the reverse fleet's providers resolve them). Everything else is kept: the
topics (under IdentityReplicationPolicy B's topics have A's names; under another policy the
applications' own topics on B), the policy, the consumer settings (``read_committed``), and
``offset-syncs.topic.location``, which must stay the same: the forward syncs of ``source`` live on A as
``mm2-offset-syncs.B.internal`` and the reverse ones on B as ``mm2-offset-syncs.A.internal`` (swapping the
location would make both flows write one topic, whose compaction mixes their syncs).

:func:`copy_starts` is the ``PATCH /connectors/{name}/offsets`` body (KIP-875) that makes a connector copy
each partition from a given offset: the reverse flow from the forward copy's end ``M`` on B, the forward
flow (when the applications are back on A) from A's end, so that the orphans and the copies back are not
copied to B again. Offset ``s`` is Connect offset ``s - 1`` (MirrorSourceTask resumes after its committed
offset); ``s = 0`` is no offset (the consumer starts at the log start): the connector refuses negative
offsets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["copy_starts", "reverse_source_config"]

_SIDES = {"source.": "target.", "target.": "source."}


def reverse_source_config(forward: Mapping[str, str]) -> dict[str, str]:
    """The reverse MirrorSourceConnector's config (see the module docstring); ``name`` is left out."""
    reverse: dict[str, str] = {}
    for key, value in forward.items():
        if key == "name":
            continue
        prefix = next((p for p in _SIDES if key.startswith(p)), None)
        reverse[_SIDES[prefix] + key[len(prefix) :] if prefix else key] = value
    return reverse


def copy_starts(cluster: str, starts: Mapping[tuple[str, int], int]) -> dict[str, Any]:
    """The ``PATCH /connectors/{name}/offsets`` body that makes a MirrorSourceConnector copy
    ``(topic, partition)`` of cluster ``cluster`` from offset ``starts[...]`` on."""
    return {
        "offsets": [
            {
                "partition": {"cluster": cluster, "partition": partition, "topic": topic},
                "offset": {"offset": start - 1} if start > 0 else None,
            }
            for (topic, partition), start in sorted(starts.items())
        ]
    }
