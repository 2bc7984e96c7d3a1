"""What ``pyconnect offsets translate`` plans: a :class:`TranslateRequest`, and the ways to make one.

From ``mm2.properties`` with ``--from``/``--to`` (:func:`request_from_mm2`), from bare bootstrap servers
(:func:`request_from_bootstrap`: default replication policy, no security settings), or from a flow read as
``pyconnect failover`` reads it (:func:`request_from_flow`). Bad input is a one-line
:class:`~connectors.mirror.offsets.failover_calls.FailoverError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from connectors.mirror.offsets.failover_calls import FailoverError
from connectors.mirror.offsets.failover_flow import FailoverFlow
from connectors.mirror.policy import SOURCE_CLUSTER_ALIAS_CONFIG, ReplicationPolicy, replication_policy

Location = Literal["source", "target"]


@dataclass(frozen=True)
class TranslateRequest:
    """What to plan. ``source_config`` is ``None`` when A is not configured (planning from checkpoints
    alone). Configs are ``MirrorClientConfig`` maps (connectivity keys, ``replication.policy.*``)."""

    group: str
    source: str
    target: str
    target_config: Mapping[str, str]
    source_config: Mapping[str, str] | None
    policy_config: Mapping[str, str] = field(default_factory=dict)
    offset_syncs_location: Location = "source"
    timeout_s: float = 30.0

    def policy(self) -> ReplicationPolicy:
        """The replication policy of the flow (``source.cluster.alias`` set, as in connector configs)."""
        return replication_policy({**self.policy_config, SOURCE_CLUSTER_ALIAS_CONFIG: self.source})


def parse_bootstrap(values: Sequence[str]) -> dict[str, str]:
    """``["A=host:port", ...]`` -> ``{alias: bootstrap}``; one-line :class:`FailoverError` when malformed."""
    found: dict[str, str] = {}
    for value in values:
        alias, sep, servers = value.partition("=")
        if not sep or not alias.strip() or not servers.strip():
            raise FailoverError(f"invalid --bootstrap {value!r}: expected ALIAS=host:port[,host:port]")
        found[alias.strip()] = servers.strip()
    return found


def request_from_mm2(
    path: str, group: str, source: str, target: str, timeout_s: float, location: str | None = None
) -> TranslateRequest:
    """A request from ``mm2.properties``: each side's ``MirrorMakerConfig.clientConfig(alias)`` (top-level
    and ``<alias>.`` keys, config providers resolved), the policy of B's client config, and the flow's
    ``offset-syncs.topic.location`` unless ``location`` overrides it."""
    from connectors.mirror.mm2_properties import MirrorMakerConfig, SourceAndTarget
    from pyconnect.config import properties

    mm2 = MirrorMakerConfig(properties.load(path))
    for alias, option in ((source, "--from"), (target, "--to")):
        if alias not in mm2.clusters:
            raise FailoverError(
                f"unknown cluster alias {alias} ({option}): {path} defines clusters {', '.join(mm2.clusters)}"
            )

    target_config, source_config = mm2.mirror_client_config(target), mm2.mirror_client_config(source)
    if not target_config.get("bootstrap.servers"):
        raise FailoverError(f"cluster {target} has no bootstrap.servers in {path}")
    flow = mm2.connector_base_config(SourceAndTarget(source, target), "MirrorCheckpointConnector")
    return TranslateRequest(
        group,
        source,
        target,
        target_config,
        source_config if source_config.get("bootstrap.servers") else None,
        {k: v for k, v in target_config.items() if k.startswith("replication.policy.")},
        _location(location or flow.get("offset-syncs.topic.location", "source")),
        timeout_s,
    )


def request_from_bootstrap(
    values: Sequence[str], group: str, source: str, target: str, timeout_s: float, location: str | None = None
) -> TranslateRequest:
    """A request from ``--bootstrap ALIAS=host:port`` options (default replication policy). B is
    required; without A the plan comes from the checkpoints alone."""
    servers = parse_bootstrap(values)
    for alias in servers:
        if alias not in (source, target):
            raise FailoverError(
                f"unknown cluster alias {alias} in --bootstrap: expected {source} (--from) or {target} (--to)"
            )
    if target not in servers:
        raise FailoverError(f"no bootstrap servers for cluster {target}: add --bootstrap {target}=host:port")
    return TranslateRequest(
        group,
        source,
        target,
        {"bootstrap.servers": servers[target]},
        {"bootstrap.servers": servers[source]} if source in servers else None,
        {},
        _location(location or "source"),
        timeout_s,
    )


def request_from_flow(
    flow: FailoverFlow, group: str, timeout_s: float, location: str | None = None
) -> TranslateRequest:
    """A request for ``group`` along ``flow`` (its policy, client settings and offset-syncs location, unless
    ``location`` overrides it), as ``pyconnect failover`` reads it."""
    return TranslateRequest(
        group,
        flow.source,
        flow.target,
        flow.target_config,
        flow.source_config or None,
        flow.policy_config,
        _location(location or flow.offset_syncs_location),
        timeout_s,
    )


def _location(value: str) -> Location:
    if value == "source":
        return "source"
    if value == "target":
        return "target"
    raise FailoverError(f"invalid offset-syncs.topic.location {value!r}: expected source or target")
