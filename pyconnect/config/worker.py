"""The distributed worker's configuration: one table (:data:`WORKER_CONFIG_DEF`) and a typed view.

Prefix rules, as Java Connect applies them:

* ``producer.*`` / ``consumer.*`` / ``admin.*`` and ``metrics.context.*`` shape the clients of
  connectors and tasks (:meth:`WorkerConfig.producer_configs`, :meth:`WorkerConfig.consumer_configs`,
  :meth:`WorkerConfig.admin_configs`); the precedence of every client config is written down once, in
  :mod:`pyconnect.config.client_configs`;
* ``config.storage.*`` / ``offset.storage.*`` / ``status.storage.*``, minus ``topic``, ``partitions``,
  ``replication.factor`` and ``cleanup.policy``, are topic-level configs for creating the internal
  topics (:meth:`WorkerConfig.topic_settings`); internal-topic clients use the un-prefixed config.

Variables (``${provider:path:key}``) inside the worker properties are resolved once, at construction,
with the providers the properties declare (see :mod:`pyconnect.config.providers`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from pyconnect.config import client_configs, properties
from pyconnect.config.definition import ConfigDef
from pyconnect.config.javastr import invalid_value
from pyconnect.config.providers import ConfigProvider, providers_for, resolve_config_variables
from pyconnect.config.security_keys import SECURITY_KEYS
from pyconnect.config.worker_keys import WORKER_KEYS
from pyconnect.errors import ConfigError

log = logging.getLogger(__name__)

WORKER_CONFIG_DEF = ConfigDef(WORKER_KEYS + SECURITY_KEYS)
"""Every key of Kafka 4.3.1's ``DistributedConfig``."""

CONFIG_STORAGE_PREFIX = "config.storage."
OFFSET_STORAGE_PREFIX = "offset.storage."
STATUS_STORAGE_PREFIX = "status.storage."
REMOVED_KEYS = ("internal.key.converter", "internal.value.converter")

_ATTRIBUTES = WORKER_CONFIG_DEF.attribute_names()


class WorkerConfig:
    """Parsed, validated, immutable worker config.

    Every key is an attribute named with ``_`` for ``.`` (``config.group_id``,
    ``config.offset_storage_partitions``) or reachable with ``config["group.id"]``. Construction raises
    :class:`~pyconnect.errors.ConfigError` with Java's message for the first invalid or missing key.
    """

    definition = WORKER_CONFIG_DEF

    def __init__(self, props: Mapping[str, Any], *, environ: Mapping[str, str] | None = None) -> None:
        self._environ = dict(os.environ if environ is None else environ)
        self._originals = resolve_config_variables(props, self._environ)
        values: dict[str, Any] = self.definition.parse(self._originals)
        self._values = values
        signature = values["inter.worker.signature.algorithm"]
        if signature not in values["inter.worker.verification.algorithms"]:
            raise invalid_value(
                "inter.worker.signature.algorithm",
                signature,
                "Signature algorithm must be present in inter.worker.verification.algorithms list",
            )
        key_size = values["inter.worker.key.size"]
        if key_size is not None and key_size < 40:
            raise ConfigError(
                "Unable to create key generator with algorithm "
                f"{values['inter.worker.key.generation.algorithm']} and key size {key_size}: "
                "Key length must be at least 40 bits"
            )
        for removed in REMOVED_KEYS:
            if removed in self._originals:
                log.warning(
                    "The worker has been configured with the removed property %r; it is ignored", removed
                )

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None
    ) -> WorkerConfig:
        """Load a worker ``.properties`` file (ISO-8859-1, as ``Utils.loadProps``) and parse it."""
        return cls(properties.load(path), environ=environ)

    def __getattr__(self, attribute: str) -> Any:
        name = _ATTRIBUTES.get(attribute)
        if name is None:
            raise AttributeError(attribute)
        return self._values[name]

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __contains__(self, name: object) -> bool:
        return name in self._values

    @property
    def values(self) -> dict[str, Any]:
        """Parsed value of every declared key (defaults filled in)."""
        return dict(self._values)

    @property
    def originals(self) -> dict[str, Any]:
        """Every property given (declared or not), with config variables resolved."""
        return dict(self._originals)

    def with_prefix(self, prefix: str, strip: bool = True) -> dict[str, Any]:
        """Originals whose key starts with ``prefix`` and is longer than it (Java ``originalsWithPrefix``)."""
        return {
            (key[len(prefix) :] if strip else key): value
            for key, value in self._originals.items()
            if key.startswith(prefix) and len(key) > len(prefix)
        }

    @property
    def bootstrap_servers_string(self) -> str:
        return ",".join(self._values["bootstrap.servers"])

    @property
    def exactly_once_source_enabled(self) -> bool:
        """``exactly.once.source.support=enabled`` (a standalone worker has no such key: False)."""
        return str(self._values.get("exactly.once.source.support", "disabled")).lower() == "enabled"

    #: Java ``WorkerConfig.connectorOffsetsTopicsPermitted``: a connector may name its own
    #: ``offsets.storage.topic`` (distributed and dedicated mode; a standalone worker: False).
    connector_offsets_topics_permitted = True

    def topic_settings(self, prefix: str) -> dict[str, Any]:
        """Topic-level configs for the internal topic ``prefix`` (one of the ``*_STORAGE_PREFIX``)."""
        settings = self.with_prefix(prefix)
        if prefix == CONFIG_STORAGE_PREFIX and "partitions" in settings:
            log.warning(
                "Ignoring '%spartitions=%s' setting, since config topic partitions is always 1",
                prefix,
                settings["partitions"],
            )
        policy = settings.pop("cleanup.policy", None)
        if policy is not None:
            log.warning(
                "Ignoring '%scleanup.policy=%s' setting, since compaction is always used", prefix, policy
            )
        for suffix in ("topic", "replication.factor", "partitions"):
            settings.pop(suffix, None)
        return settings

    def producer_configs(
        self, client_id: str, cluster_id: str, overrides: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """A source task's producer config: :func:`~pyconnect.config.client_configs.task_producer_config`."""
        return client_configs.task_producer_config(self, client_id, cluster_id, overrides)

    def consumer_configs(
        self, group_id: str, client_id: str, cluster_id: str, overrides: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """A sink task's or offsets consumer's config: :func:`~pyconnect.config.client_configs.task_consumer_config`."""
        return client_configs.task_consumer_config(self, group_id, client_id, cluster_id, overrides)

    def admin_configs(
        self, client_id: str, cluster_id: str, overrides: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """A connector's admin client config: :func:`~pyconnect.config.client_configs.connector_admin_config`."""
        return client_configs.connector_admin_config(self, client_id, cluster_id, overrides)

    def providers(self) -> dict[str, ConfigProvider]:
        """The config providers for connector configs, named by the parsed ``config.providers`` list."""
        return providers_for(self._originals, self._values["config.providers"], self._environ)
