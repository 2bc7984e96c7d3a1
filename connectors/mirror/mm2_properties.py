"""Dedicated MirrorMaker mode: ``mm2.properties`` -> flows, worker configs and connector configs
(Kafka 4.3.1 ``MirrorMakerConfig``; checked against it in ``tests/golden/mirror_policy``).

Grammar: ``clusters = A, B`` (required); ``A.<key>`` per-cluster; ``A->B.<key>`` per-flow; anything else is
a top-level default. Rules (later wins):

* **Herders** (:meth:`MirrorMakerConfig.cluster_pairs`): one per ordered pair ``S != T`` for which
  ``S->T.enabled`` is true *or* heartbeats are on (``S->T.emit.heartbeats.enabled``, else top-level
  ``emit.heartbeats.enabled``, else true); booleans use ``Boolean.parseBoolean`` (``TRUE`` counts).
* **Cluster properties** of ``X`` (:meth:`cluster_props`) and every client config: the rules of
  :mod:`pyconnect.config.client_configs`.
* **Worker config** of ``S->T`` (:meth:`worker_config`): cluster properties of ``T``, plus top-level keys
  starting with ``offset.storage``, ``config.storage``, ``status.storage``, ``key.converter``,
  ``value.converter``, ``header.converter``, ``task``, ``worker``, ``replication.policy`` (plain string
  prefixes); ``${provider:...}`` variables resolved with the top-level ``config.providers``; then the
  ``config.providers*`` keys; then defaults ``client.id=S->T``, ``group.id=S-mm2``,
  ``offset/status/config.storage.topic = mm2-offsets/status/configs.S.internal`` and the three converters
  ``ByteArrayConverter``.
* **Connector config** of ``S->T`` (:meth:`connector_base_config`): top-level keys that are keys of any of
  the three connector tables, ``config.providers*``, ``replication.policy*``; cluster properties of ``S``
  as ``source.cluster.<k>`` (non-client keys) / ``source.<k>`` (keys starting with ``consumer``,
  ``producer``, ``admin``), same for ``T``; ``name``/``connector.class``/aliases if absent; every
  ``S->T.<k>`` stripped; ``enabled=false`` if absent. Variables are left for the worker to resolve.

Values are strings exactly as written; nothing here compiles filters (a bad ``groups = *`` fails when
the checkpoint connector starts, as in Java).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from connectors.mirror.config import ALL_CONNECTOR_CONFIG_NAMES, MIRROR_SOURCE_CONFIG_DEF
from pyconnect.config import properties
from pyconnect.config.client_configs import (
    mirror_client_originals,
    mm2_client_config,
    mm2_cluster_props,
    mm2_connector_cluster_config,
)
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.providers import providers_for, resolve
from pyconnect.config.security_keys import SECURITY_KEYS
from pyconnect.config.types import Importance, Type

BYTE_ARRAY_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"
CONNECTOR_CLASSES = {
    "MirrorSourceConnector": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
    "MirrorCheckpointConnector": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
    "MirrorHeartbeatConnector": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
}
_WORKER_TOP_LEVEL_PREFIXES = (
    "offset.storage",
    "config.storage",
    "status.storage",
    "key.converter",
    "value.converter",
    "header.converter",
    "task",
    "worker",
    "replication.policy",
)

MM2_CONFIG_DEF = ConfigDef(
    (
        ConfigKey(
            "clusters", Type.LIST, importance=Importance.HIGH, documentation="List of cluster aliases."
        ),
        ConfigKey(
            "dedicated.mode.enable.internal.rest",
            Type.BOOLEAN,
            default=False,
            importance=Importance.HIGH,
            documentation="Whether to bring up an internal-only REST server that allows multi-node clusters to "
            "operate correctly.",
        ),
        ConfigKey(
            "config.providers",
            Type.LIST,
            default=[],
            importance=Importance.LOW,
            documentation="Names of ConfigProviders to use.",
        ),
        MIRROR_SOURCE_CONFIG_DEF["security.protocol"],
        *SECURITY_KEYS,
    )
)


@dataclass(frozen=True, order=True)
class SourceAndTarget:
    """A replication flow ``source->target``."""

    source: str
    target: str

    def __str__(self) -> str:
        return f"{self.source}->{self.target}"


def _parse_boolean(value: str | None) -> bool:
    return value is not None and value.lower() == "true"


class MirrorMakerConfig:
    """The parsed ``mm2.properties`` (raw strings kept as written). Raises ConfigError like Java's
    constructor (e.g. missing ``clusters``)."""

    def __init__(self, props: Mapping[str, str], environ: Mapping[str, str] | None = None) -> None:
        self.raw: dict[str, str] = dict(props)
        self.values = MM2_CONFIG_DEF.parse(self.raw)
        self._environ = environ

    @property
    def clusters(self) -> list[str]:
        """Aliases in declaration order, duplicates removed (Java holds them in a set)."""
        value = self.values["clusters"]
        assert isinstance(value, list)
        return list(dict.fromkeys(str(v) for v in value))

    @property
    def enable_internal_rest(self) -> bool:
        return bool(self.values["dedicated.mode.enable.internal.rest"])

    @property
    def config_providers(self) -> list[str]:
        value = self.values["config.providers"]
        assert isinstance(value, list)
        return [str(v) for v in value]

    def flow_enabled(self, flow: SourceAndTarget) -> bool:
        """``S->T.enabled`` (replication on); heartbeat-only herders exist even when this is false."""
        return _parse_boolean(self.raw.get(f"{flow}.enabled"))

    def heartbeats_enabled(self, flow: SourceAndTarget) -> bool:
        key = f"{flow}.emit.heartbeats.enabled"
        if key in self.raw:
            return _parse_boolean(self.raw[key])
        if "emit.heartbeats.enabled" in self.raw:
            return _parse_boolean(self.raw["emit.heartbeats.enabled"])
        return True

    def cluster_pairs(self) -> list[SourceAndTarget]:
        """Every flow that gets a herder (KAFKA-10710), in ``clusters`` order."""
        pairs = []
        for source in self.clusters:
            for target in self.clusters:
                if source == target:
                    continue
                flow = SourceAndTarget(source, target)
                if self.flow_enabled(flow) or self.heartbeats_enabled(flow):
                    pairs.append(flow)
        return pairs

    def enabled_flows(self) -> list[SourceAndTarget]:
        """The herders whose source and checkpoint connectors replicate (``S->T.enabled`` true)."""
        return [flow for flow in self.cluster_pairs() if self.flow_enabled(flow)]

    def _stripped(self, prefix: str) -> dict[str, str]:
        return {k[len(prefix) :]: v for k, v in self.raw.items() if k.startswith(prefix)}

    def _with_prefix(self, prefix: str) -> dict[str, str]:
        return {k: v for k, v in self.raw.items() if k.startswith(prefix)}

    def cluster_props(self, alias: str) -> dict[str, str]:
        """:func:`~pyconnect.config.client_configs.mm2_cluster_props` of this file."""
        return mm2_cluster_props(self.raw, alias)

    def _transform(self, props: dict[str, str]) -> dict[str, str]:
        names = self.config_providers
        if not names:
            return props
        env = os.environ if self._environ is None else self._environ
        providers = providers_for(self.raw, names, env)
        resolved = resolve(props, providers)
        return {k: ("" if v is None else v) for k, v in resolved.items()}

    def worker_config(self, flow: SourceAndTarget) -> dict[str, str]:
        """The Connect distributed-worker config of the herder for ``flow`` (bound to the target cluster)."""
        props = self.cluster_props(flow.target)
        for prefix in _WORKER_TOP_LEVEL_PREFIXES:
            props.update(self._with_prefix(prefix))
        props = self._transform(props)
        props.update(self._with_prefix("config.providers"))
        props.setdefault("client.id", str(flow))
        props.setdefault("group.id", f"{flow.source}-mm2")
        props.setdefault("offset.storage.topic", f"mm2-offsets.{flow.source}.internal")
        props.setdefault("status.storage.topic", f"mm2-status.{flow.source}.internal")
        props.setdefault("config.storage.topic", f"mm2-configs.{flow.source}.internal")
        props.setdefault("key.converter", BYTE_ARRAY_CONVERTER)
        props.setdefault("value.converter", BYTE_ARRAY_CONVERTER)
        props.setdefault("header.converter", BYTE_ARRAY_CONVERTER)
        return props

    def connector_base_config(self, flow: SourceAndTarget, connector: str) -> dict[str, str]:
        """The config the herder of ``flow`` submits for ``connector`` (simple or Java class name)."""
        simple = connector.rsplit(".", 1)[-1]
        if simple not in CONNECTOR_CLASSES:
            raise ValueError(f"Unknown MirrorMaker connector {connector}")
        props = {k: v for k, v in self.raw.items() if k in ALL_CONNECTOR_CONFIG_NAMES}
        props.update(self._with_prefix("config.providers"))
        props.update(self._with_prefix("replication.policy"))
        for alias, side in ((flow.source, "source"), (flow.target, "target")):
            props.update(mm2_connector_cluster_config(self.cluster_props(alias), side))
        props.setdefault("name", simple)
        props.setdefault("connector.class", CONNECTOR_CLASSES[simple])
        props.setdefault("source.cluster.alias", flow.source)
        props.setdefault("target.cluster.alias", flow.target)
        props.update(self._stripped(f"{flow}."))
        props.setdefault("enabled", "false")
        return props

    def connector_configs(self, flow: SourceAndTarget) -> dict[str, dict[str, str]]:
        """The three connector configs of ``flow``, keyed by connector name."""
        return {name: self.connector_base_config(flow, name) for name in CONNECTOR_CLASSES}

    def client_config(self, alias: str) -> dict[str, str]:
        """Originals of ``MirrorClientConfig`` for ``alias`` (``MirrorMakerConfig.clientConfig``), variables
        resolved: feed to a MirrorClient that talks to cluster ``alias``."""
        return self._transform(mm2_client_config(self.raw, alias))

    def mirror_client_config(self, alias: str) -> dict[str, str]:
        """:meth:`client_config` cut to what a ``MirrorClientConfig`` reads (connectivity, ``admin.*``,
        ``consumer.*``, ``replication.policy.*``) before variables are resolved, so that a provider
        failing on an unrelated key does not stop a fail-over."""
        return self._transform(mirror_client_originals(mm2_client_config(self.raw, alias)))


def load(path: str | os.PathLike[str], environ: Mapping[str, str] | None = None) -> MirrorMakerConfig:
    """Read ``mm2.properties`` (ISO-8859-1, ``java.util.Properties`` rules) into a :class:`MirrorMakerConfig`."""
    return MirrorMakerConfig(properties.load(path), environ)
