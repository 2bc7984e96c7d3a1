"""Which flow a failover moves groups along, read from what the operator already has.

Three sources give the same :class:`FailoverFlow`, because each is (or becomes) the config of the flow's
MirrorCheckpointConnector:

* a worker's REST API (:func:`fetch_connector_config`): ``GET /connectors/{name}/config``; without a
  name, the one MirrorCheckpointConnector of ``GET /connectors?expand=info`` (several: a one-line error
  naming them); a secured worker (HTTPS, client certificate, basic auth) is read with a
  :class:`pyconnect.rest_client.RestAccess`;
* a connector JSON file (:func:`load_connector_file`): the body of ``POST /connectors``
  (``{"name", "config"}``) or the bare config object;
* ``mm2.properties`` and a flow name ``A->B`` (:func:`flow_from_mm2`): the config dedicated mode gives its
  checkpoint connector (:meth:`MirrorMakerConfig.connector_base_config`).

:func:`flow_from_connector_config` (pure) then takes, as the checkpoint task does: the aliases, the
replication policy (``replication.policy.*``, so IdentityReplicationPolicy and custom separators name
the remote, checkpoints and offset-syncs topics as the connector does), ``offset-syncs.topic.location``,
the source connector's ``offset.lag.max`` as given to it, and each side's client settings as MirrorMaker 2
assembles them (:func:`pyconnect.config.client_configs.mirror_connector_client_config`: the connectivity
keys of ``<side>.cluster.``, then ``<role>.`` and ``<side>.<role>.`` overrides; SASL, TLS and OAUTHBEARER
included). A config read from REST holds its config-provider variables (``${file:...}``) as stored: they
are resolved with the providers of ``worker_config`` (the worker's properties) or, without it, those the
config declares itself (``config.providers*``, as dedicated mode writes them). A variable left unresolved
in a setting the failover uses is a :class:`FlowConfigError` naming the key.

Errors are :class:`FlowConfigError`, one line: unreadable file, not a checkpoint connector, missing alias
or bootstrap servers, unknown policy class, a worker that does not answer (unreachable, a TLS failure,
credentials refused, an HTTP error with the worker's message: :mod:`pyconnect.rest_client`).
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from connectors.mirror.policy import (
    REPLICATION_POLICY_CLASS,
    SOURCE_CLUSTER_ALIAS_CONFIG,
    ReplicationPolicy,
    replication_policy,
)
from pyconnect.config import properties
from pyconnect.config.client_configs import CLIENT_CONFIG_NAMES, mirror_connector_client_config
from pyconnect.config.providers import CONFIG_PROVIDERS_CONFIG, VARIABLE_PATTERN, providers_for, resolve
from pyconnect.errors import ConfigError
from pyconnect.rest_client import RestAccess, RestClientError, get_json

__all__ = [
    "CHECKPOINT_CONNECTOR_CLASS",
    "FailoverFlow",
    "FlowConfigError",
    "Location",
    "fetch_connector_config",
    "flow_from_connector_config",
    "flow_from_mm2",
    "load_connector_file",
    "resolve_variables",
]

Location = Literal["source", "target"]
CHECKPOINT_CONNECTOR_CLASS = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
_CHECKPOINT_NAMES = frozenset({CHECKPOINT_CONNECTOR_CLASS, "MirrorCheckpointConnector"})
_ROLES = ("admin", "consumer")


class FlowConfigError(ConfigError, ValueError):
    """The flow cannot be read from what was given; the message is one line."""


@dataclass(frozen=True)
class FailoverFlow:
    """One replication flow ``source -> target`` as its checkpoint connector sees it.

    ``source_config``/``target_config`` are ``MirrorClientConfig`` maps (connectivity keys, ``admin.`` and
    ``consumer.`` overrides) for :class:`~connectors.mirror.offsets.mirror_client.MirrorClient` and
    :func:`~pyconnect.config.client_configs.mirror_client_config`; ``source_config`` is empty when the
    config names no bootstrap servers for the source (then only the checkpoints are read).
    """

    source: str
    target: str
    source_config: dict[str, str]
    target_config: dict[str, str]
    policy_config: dict[str, str] = field(default_factory=dict)
    offset_syncs_location: Location = "source"
    offset_lag_max: int = 100
    origin: str = ""

    @property
    def name(self) -> str:
        return f"{self.source}->{self.target}"

    def policy(self) -> ReplicationPolicy:
        """The flow's replication policy, configured as the connector's (source alias included)."""
        return replication_policy({**self.policy_config, SOURCE_CLUSTER_ALIAS_CONFIG: self.source})

    @property
    def checkpoints_topic(self) -> str:
        return self.policy().checkpoints_topic(self.source)

    @property
    def offset_syncs_topic(self) -> str:
        """``mm2-offset-syncs.<other alias>.internal`` (policy-named) on the cluster of the location."""
        policy = self.policy()
        other = self.target if self.offset_syncs_location == "source" else self.source
        return policy.offset_syncs_topic(other)

    @property
    def state_key(self) -> dict[str, str]:
        """What names the flow in the state files of failover, failback and cutover (a file of another
        flow is refused)."""
        return {"source": self.source, "target": self.target, "checkpoints_topic": self.checkpoints_topic}

    def describe(self) -> dict[str, Any]:
        """The flow for reports: aliases, where it was read, policy, topics (no client settings)."""
        return {
            "source": self.source,
            "target": self.target,
            "origin": self.origin,
            "replication_policy": self.policy_config.get(
                REPLICATION_POLICY_CLASS, "DefaultReplicationPolicy"
            ),
            "checkpoints_topic": self.checkpoints_topic,
            "offset_syncs_topic": self.offset_syncs_topic,
            "offset_syncs_location": self.offset_syncs_location,
        }


def _client_side(config: Mapping[str, str], side: str) -> dict[str, str]:
    """A ``MirrorClientConfig`` map of one side: its connectivity keys as the connector's admin gets them,
    and the consumer's where they differ (``consumer.``-prefixed)."""
    admin = {
        k: v
        for k, v in mirror_connector_client_config(config, side, "admin").items()
        if k in CLIENT_CONFIG_NAMES
    }
    consumer = mirror_connector_client_config(config, side, "consumer")
    result = dict(admin)
    for key, value in consumer.items():
        if key in CLIENT_CONFIG_NAMES and admin.get(key) != value:
            result[f"consumer.{key}"] = value
    return result


def _offset_lag_max(config: Mapping[str, str], origin: str) -> int:
    """The source connector's ``offset.lag.max`` as given to the checkpoint connector (Java's default 100)."""
    raw = str(config.get("offset.lag.max", "100")).strip()
    try:
        value = int(raw)
    except ValueError:
        raise FlowConfigError(f"{origin}: invalid offset.lag.max {raw!r}: expected a number") from None
    return max(value, 0)


def _unresolved(config: Mapping[str, str], keys: list[str]) -> tuple[str, str] | None:
    for key in keys:
        value = config.get(key)
        if value is not None:
            match = VARIABLE_PATTERN.search(value)
            if match:
                return key, match.group(0)
    return None


def resolve_variables(config: Mapping[str, str], worker_config: Mapping[str, str] | None) -> dict[str, str]:
    """``config`` with its ``${provider:[path:]key}`` variables resolved by the providers of
    ``worker_config`` (the worker's properties), else by the ``config.providers*`` keys of ``config``
    itself. Variables no provider answers stay as they are."""
    declarer = worker_config if worker_config is not None else config
    names = [n.strip() for n in str(declarer.get(CONFIG_PROVIDERS_CONFIG, "")).split(",") if n.strip()]
    if not names:
        return dict(config)
    try:
        providers = providers_for(declarer, names)
        resolved = resolve(dict(config), providers)
    except ConfigError as exc:
        raise FlowConfigError(f"config providers: {_line(exc)}") from None
    return {k: "" if v is None else v for k, v in resolved.items()}


def flow_from_connector_config(
    config: Mapping[str, str], *, origin: str, worker_config: Mapping[str, str] | None = None
) -> FailoverFlow:
    """The :class:`FailoverFlow` of a MirrorCheckpointConnector config (see the module docstring)."""
    connector_class = str(config.get("connector.class", "")).strip()
    if connector_class not in _CHECKPOINT_NAMES:
        shown = connector_class or "no connector.class"
        raise FlowConfigError(
            f"{origin} is {shown}, not a MirrorCheckpointConnector: give the flow's checkpoint connector"
        )
    resolved = resolve_variables(config, worker_config)
    source = str(resolved.get(SOURCE_CLUSTER_ALIAS_CONFIG, "")).strip()
    target = str(resolved.get("target.cluster.alias", "target")).strip()
    if not source:
        raise FlowConfigError(f"{origin} has no source.cluster.alias")
    if source == target:
        raise FlowConfigError(f"{origin} names the same cluster {source} as source and target")
    target_config = _client_side(resolved, "target")
    source_config = _client_side(resolved, "source")
    if not target_config.get("bootstrap.servers"):
        raise FlowConfigError(f"{origin} has no target.cluster.bootstrap.servers")
    used = [k for k in resolved if k.startswith(("source.", "target.", "admin.", "consumer."))]
    found = _unresolved(resolved, used)
    if found is not None:
        key, variable = found
        raise FlowConfigError(
            f"{origin}: {key} holds the config-provider variable {variable}, which no provider resolved: "
            "give --worker-config with the worker's config.providers settings"
        )
    location = str(resolved.get("offset-syncs.topic.location", "source")).strip()
    if location not in ("source", "target"):
        raise FlowConfigError(f"{origin}: invalid offset-syncs.topic.location {location!r}: source or target")
    policy_config = {k: v for k, v in resolved.items() if k.startswith("replication.policy.")}
    try:
        replication_policy({**policy_config, SOURCE_CLUSTER_ALIAS_CONFIG: source})
    except ConfigError as exc:
        raise FlowConfigError(f"{origin}: {_line(exc)}") from None
    return FailoverFlow(
        source,
        target,
        source_config if source_config.get("bootstrap.servers") else {},
        target_config,
        policy_config,
        "source" if location == "source" else "target",
        _offset_lag_max(resolved, origin),
        origin,
    )


def _string_config(origin: str, body: Mapping[str, Any]) -> dict[str, str]:
    config: dict[str, str] = {}
    for key, value in body.items():
        if isinstance(value, bool):
            config[str(key)] = "true" if value else "false"
        elif isinstance(value, (str, int, float)):
            config[str(key)] = str(value)
        else:
            raise FlowConfigError(f"{origin}: the value of {key} is not a string")
    return config


def load_connector_file(path: str) -> tuple[str, dict[str, str]]:
    """``(name, config)`` of a connector JSON file: ``{"name": ..., "config": {...}}`` or a bare config."""
    try:
        with open(path, encoding="utf-8") as file:
            document = json.load(file)
    except OSError as exc:
        raise FlowConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise FlowConfigError(f"{path} is not JSON: {_line(exc)}") from None
    if not isinstance(document, dict):
        raise FlowConfigError(f"{path} holds no JSON object")
    body = document.get("config", document)
    if not isinstance(body, dict):
        raise FlowConfigError(f"{path}: 'config' is not an object")
    name = document.get("name", body.get("name", path))
    return str(name), _string_config(path, body)


def _get_json(url: str, timeout_s: float, access: RestAccess) -> Any:
    try:
        return get_json(url, timeout_s, access)
    except RestClientError as exc:
        raise FlowConfigError(str(exc)) from None


def fetch_connector_config(
    url: str, connector: str | None, timeout_s: float, access: RestAccess | None = None
) -> tuple[str, dict[str, str]]:
    """``(name, config)`` of the checkpoint connector ``connector`` (or the only one) of the worker at ``url``,
    read with ``access`` (plain without it)."""
    access = access or RestAccess()
    base = url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise FlowConfigError(f"--url {url!r} is not an http(s) URL")
    if connector is None:
        listed = _get_json(f"{base}/connectors?expand=info", timeout_s, access)
        found = sorted(
            name
            for name, entry in (listed.items() if isinstance(listed, dict) else [])
            if str(entry.get("info", {}).get("config", {}).get("connector.class", "")).strip()
            in _CHECKPOINT_NAMES
        )
        if len(found) != 1:
            which = f"several ({', '.join(found)})" if found else "none"
            raise FlowConfigError(
                f"the worker at {base} runs {which} MirrorCheckpointConnector: name one with --connector"
            )
        connector = found[0]
    body = _get_json(f"{base}/connectors/{urllib.parse.quote(connector, safe='')}/config", timeout_s, access)
    if not isinstance(body, dict):
        raise FlowConfigError(f"GET {base}/connectors/{connector}/config gave no config object")
    return connector, _string_config(f"connector {connector}", body)


def flow_from_mm2(path: str, flow: str) -> FailoverFlow:
    """The flow ``A->B`` of ``mm2.properties`` as dedicated mode configures its checkpoint connector
    (variables resolved with the file's top-level ``config.providers``)."""
    from connectors.mirror.mm2_properties import MirrorMakerConfig, SourceAndTarget

    source, sep, target = flow.partition("->")
    if not sep or not source.strip() or not target.strip():
        raise FlowConfigError(f"--flow expects SOURCE->TARGET (e.g. A->B), got {flow!r}")
    pair = SourceAndTarget(source.strip(), target.strip())
    try:
        mm2 = MirrorMakerConfig(properties.load(path))
    except OSError as exc:
        raise FlowConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ConfigError as exc:
        raise FlowConfigError(f"{path}: {_line(exc)}") from None
    for alias in (pair.source, pair.target):
        if alias not in mm2.clusters:
            raise FlowConfigError(
                f"unknown cluster alias {alias} in --flow {flow}: {path} defines {', '.join(mm2.clusters)}"
            )
    config = mm2.connector_base_config(pair, "MirrorCheckpointConnector")
    return flow_from_connector_config(config, origin=f"flow {pair} of {path}", worker_config=mm2.raw)


def _line(exc: object) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
