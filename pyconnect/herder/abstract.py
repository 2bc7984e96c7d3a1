"""AbstractHerder: what every herder does the same way (Java's ``AbstractHerder``).

Plugin listing and config validation (create/update 400s, ``/config/validate``), config-provider
resolution, performing a KIP-875 offset modification, the KIP-558 topic-tracking switches and the
logger reads. Subclasses provide ``config`` (the worker config), ``worker`` and ``status_store``.

A connector's ``config`` and ``validate`` are plugin code: they run through the worker's
:class:`~pyconnect.worker.plugin_calls.PluginCalls` (a plain method on a plugin thread) within one
bound of ``validation_timeout_s`` for the whole validation (Java's REST request timeout, 90 s). An
overrun answers 500 with Java's staged message (``Request timed out. The worker is currently
performing multi-property validation for the connector, which began at ...``); the abandoned call goes
on on its thread, as Java's validation goes on in the background.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pyconnect.api.sink import SinkConnector
from pyconnect.config.connector_name import address_problem
from pyconnect.config.definition import ConfigValue
from pyconnect.config.info import config_infos
from pyconnect.config.version_range import VersionRange
from pyconnect.errors import BadRequestError, ConnectError, DataError, ForbiddenError, NotFoundError
from pyconnect.herder.health import Stage
from pyconnect.herder.loggers import LOGGERS
from pyconnect.herder.plugin_versions import check_plugin_version
from pyconnect.herder.sink_offsets import modify_sink_offsets
from pyconnect.herder.sink_validation import check_sink_config
from pyconnect.plugin_desc import PluginType
from pyconnect.protocol.javahash import default_hash_order, hash_order, java_string_hash
from pyconnect.transforms.config import enrich, validate_enriched
from pyconnect.worker.plugin_calls import PluginCallsClosed, PluginCallTimeout
from pyconnect.worker.target_wait_config import check_target_wait

log = logging.getLogger(__name__)

T = TypeVar("T")

CONNECTOR_VERSION_KEY = "connector.plugin.version"
VALIDATION_TIMEOUT_S = 90.0
"""Java's REST request timeout, within which a connector's ``config`` and ``validate`` must return."""
CONFIG_STAGE = "retrieving the configuration definition from the connector"
VALIDATE_STAGE = "performing multi-property validation for the connector"


def _modified_message(handled: bool, verb: str) -> str:
    """KIP-875's reply: who manages the offsets decides the wording (Java's messages)."""
    if handled:
        return f"The offsets for this connector have been {verb} successfully"
    return (
        f"The Connect framework-managed offsets for this connector have been {verb} successfully. "
        "However, if this connector manages offsets externally, they will need to be manually "
        f"{verb} in the system that the connector uses."
    )


class _InvalidConnectorRequest(ConnectError):
    """A connector config without ``connector.class`` (worded per REST path by the caller)."""


class _UnresolvedConnector(ConnectError):
    """``connector.class`` names no connector this worker has (worded by Java's ``CachedConnectors``)."""


class ValidationTimedOut(ConnectError):
    """A connector's ``config`` or ``validate`` did not answer: it overran the validation bound (500,
    Java's wording), or the worker shut down meanwhile."""


def _normalized_plugin(name: str) -> str:
    suffix = "Connector"
    return name[: -len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else name


class AbstractHerder:
    """The shared half of the distributed and standalone herders; see the module docstring."""

    config: Any
    worker: Any
    status_store: Any
    validation_timeout_s: float = VALIDATION_TIMEOUT_S

    def _resolved(self, config: Mapping[str, str | None]) -> dict[str, str]:
        raw = {k: v for k, v in config.items() if v is not None}
        providers = self.config.providers()
        if not providers:
            return raw
        from pyconnect.config.providers import ConfigTransformer

        return {k: v for k, v in ConfigTransformer(providers).transform(raw).data.items() if v is not None}

    async def _validate(self, name: str, config: Mapping[str, str]) -> None:
        """Java's create/update validation (``validateConnectorConfig``), then our name rule.

        Names Java's ConfigDef rejects (empty, control characters) fail the validation with Java's
        message; names Java accepts but no URL can address (pyconnect.config.connector_name
        ``address_problem``) are refused here.
        """
        await self._check_connector_config(config)
        problem = address_problem(name)
        if problem is not None:
            raise BadRequestError(problem)

    def connector_plugins(self, connectors_only: bool = True) -> list[dict[str, str]]:
        return self.worker.plugins.connector_plugins(connectors_only)

    def connector_plugin_config(
        self, plugin: str, version: VersionRange | None = None
    ) -> list[dict[str, Any]]:
        check_plugin_version(self.worker.plugins, plugin, version)
        keys = self.worker.plugins.plugin_config(plugin)
        version = self.worker.plugins.resolve(plugin).version
        for key in keys:
            if key["name"] == CONNECTOR_VERSION_KEY:
                key["default_value"] = version
        return keys

    async def _plugin_call(
        self, owner: str, method: str, fn: Callable[..., Any], *args: Any, stage: str, deadline: float
    ) -> Any:
        """One validation call of plugin code within what is left of the validation bound."""
        started_ms = int(time.time() * 1000)
        try:
            return await self.worker.plugin_calls.call(
                owner, method, fn, *args, timeout=max(0.0, deadline - time.monotonic())
            )
        except PluginCallTimeout:
            raise ValidationTimedOut(f"Request timed out. {Stage(stage, started_ms).summarize()}") from None
        except PluginCallsClosed:
            raise ValidationTimedOut("Request interrupted: the worker is shutting down") from None

    def _new_connector(self, connector_class: str) -> Any:
        """A connector instance for validation, as Java's ``CachedConnectors`` gives it: a class name
        that failed to resolve on this worker is remembered, and every later attempt fails with the
        first failure wrapped, so its message gains the wrapped exception's class name (Java's
        ``new ConnectException(cause)``). Raises :class:`_UnresolvedConnector`."""
        failures: dict[str, str] = self.__dict__.setdefault("_unresolved_connectors", {})
        first = failures.get(connector_class)
        if first is not None:
            raise _UnresolvedConnector(f"org.apache.kafka.connect.errors.ConnectException: {first}")
        try:
            return self.worker.plugins.resolve_connector(connector_class)()
        except ConnectError as exc:
            failures[connector_class] = str(exc)
            raise _UnresolvedConnector(str(exc)) from None

    async def _config_infos(self, config: Mapping[str, str | None]) -> dict[str, Any]:
        """``AbstractHerder.validateConnectorConfig``: framework keys (enriched with the per-alias
        ``transforms.*``/``predicates.*`` keys, pyconnect.transforms.config), then the connector's own.

        Raises ``_InvalidConnectorRequest`` (no ``connector.class``) or ``ConnectError`` (unknown
        class); callers word those as Java does on their path.
        """
        connector_class = config.get("connector.class")
        if not connector_class:
            # Java renders a presized ``new HashMap<>(props)`` copy: its iteration order, not ours.
            order = hash_order(list(config), java_string_hash, int(len(config) / 0.75 + 1))
            rendered = ", ".join(f"{k}={config[k]}" for k in order)
            raise _InvalidConnectorRequest(f"Connector config {{{rendered}}} contains no connector type")
        deadline = time.monotonic() + self.validation_timeout_s
        owner = str(config.get("name") or connector_class)
        plugins = self.worker.plugins
        connector = self._new_connector(connector_class)
        kind = PluginType(plugins.connector_type(connector_class))
        nulls = [k for k, v in config.items() if v is None]
        present = {k: v for k, v in config.items() if v is not None}
        framework = enrich(plugins, plugins.connector_config_def(kind), present)
        own = await self._plugin_call(
            owner, "config", connector.config, stage=CONFIG_STAGE, deadline=deadline
        )
        framework_values = validate_enriched(plugins, framework, present)
        if kind == PluginType.SOURCE:
            self._validate_source_connector(connector, present, framework_values)
            check_target_wait(present, framework_values)
        else:
            check_sink_config(present, framework_values, getattr(self.config, "group_id", None))
        own_values = await self._plugin_call(
            owner, "validate", connector.validate, present, stage=VALIDATE_STAGE, deadline=deadline
        )
        for key in nulls:
            target = framework_values.get(key) or own_values.get(key)
            if target is None:
                target = own_values.setdefault(key, ConfigValue(key))
            target.errors.append("Null value can not be supplied as the configuration value.")
        version = plugins.resolve(plugins.connector_class_name(connector_class)).version
        pinned = framework_values.get(CONNECTOR_VERSION_KEY)
        if pinned is not None:
            pinned.recommended_values = [version]
            if pinned.value is None:
                pinned.value = version
        merged = config_infos(connector_class, framework, framework_values.values())
        for entry in merged["configs"]:
            if entry["definition"] and entry["definition"]["name"] == CONNECTOR_VERSION_KEY:
                entry["definition"]["default_value"] = version
        extra = config_infos(connector_class, own, own_values.values())
        merged["error_count"] += extra["error_count"]
        merged["groups"] += [g for g in extra["groups"] if g not in merged["groups"]]
        merged["configs"] += extra["configs"]
        return merged

    def _validate_source_connector(
        self, connector: Any, config: Mapping[str, str], validated: Mapping[str, ConfigValue]
    ) -> None:
        """Java's ``validateSourceConnectorConfig`` extras: none here; the distributed herder adds the
        exactly-once preflight checks."""

    async def _check_connector_config(self, config: Mapping[str, str | None]) -> None:
        """Create/update: Java's 400 listing every validation error."""
        try:
            infos = await self._config_infos(config)
        except ValidationTimedOut:
            raise
        except (_InvalidConnectorRequest, _UnresolvedConnector) as exc:
            raise BadRequestError(str(exc)) from None
        except ConnectError as exc:
            raise BadRequestError(f"org.apache.kafka.connect.errors.ConnectException: {exc}") from None
        if infos["error_count"] == 0:
            return
        messages = [m for entry in infos["configs"] if entry["value"] for m in entry["value"]["errors"]]
        raise BadRequestError(
            f"Connector configuration is invalid and contains the following {infos['error_count']} error(s):\n"
            + "".join(f"{m}\n" for m in messages)
            + "You can also find the above list of errors at the endpoint "
            "`/connector-plugins/{connectorType}/config/validate`"
        )

    async def validate_connector_config(
        self, plugin: str, config: Mapping[str, str | None]
    ) -> dict[str, Any]:
        """``PUT /connector-plugins/{plugin}/config/validate``: ConfigInfos, errors included (200).

        Java words a missing or unknown class as a wrapped ``BadRequestException`` and answers 500;
        we keep its message and answer 400.
        """
        included = config.get("connector.class")
        if included is not None and not _normalized_plugin(included).endswith(_normalized_plugin(plugin)):
            raise BadRequestError(f"Included connector type {included} does not match request type {plugin}")
        try:
            return await self._config_infos(config)
        except ValidationTimedOut:
            raise
        except ConnectError as exc:
            raise BadRequestError(
                f"org.apache.kafka.connect.runtime.rest.errors.BadRequestException: {exc}"
            ) from None

    async def _modify_offsets(
        self,
        name: str,
        config: Mapping[str, str],
        offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]] | None,
    ) -> str:
        """KIP-875, once the request was accepted (leader; connector STOPPED without tasks): the
        connector's ``alter_offsets`` sees the change first, then the pairs are written (``None``:
        a tombstone for every known partition) to the connector's offsets (its own
        ``offsets.storage.topic`` when it has one); the reply message says who manages the offsets."""
        verb = "altered" if offsets is not None else "reset"
        connector = self.worker.plugins.resolve_connector(config["connector.class"])()
        if isinstance(connector, SinkConnector):

            async def sink_hook(parsed: dict[Any, int | None]) -> bool:
                return await self._alter_offsets_hook(name, config, connector, parsed, offsets is not None)

            handled = await modify_sink_offsets(self.worker, name, self._resolved(config), offsets, sink_hook)
            return _modified_message(handled, verb)
        exactly_once = self.config.exactly_once_source_enabled
        async with self.worker.offsets_opened(name, config, read_only=exactly_once) as view:
            return await self._write_source_offsets(name, config, connector, offsets, view)

    async def _write_source_offsets(
        self,
        name: str,
        config: Mapping[str, str],
        connector: Any,
        offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]] | None,
        view: Any,
    ) -> str:
        verb = "altered" if offsets is not None else "reset"
        pairs: list[tuple[dict[str, Any], dict[str, Any] | None]]
        if offsets is None:
            await view.read_to_end()
            pairs = [(p, None) for p in view.connector_partitions(name)]
        else:
            pairs = [(dict(p), None if o is None else dict(o)) for p, o in offsets]
        handled = await self._alter_offsets_hook(name, config, connector, list(pairs), offsets is not None)
        try:
            if self.config.exactly_once_source_enabled:
                await self.worker.write_offsets_exactly_once(name, config, pairs, view)
            else:
                await view.set(name, pairs)
        except DataError as exc:
            raise BadRequestError(str(exc)) from None
        return _modified_message(handled, verb)

    async def _alter_offsets_hook(
        self, name: str, config: Mapping[str, str], connector: Any, payload: Any, altering: bool
    ) -> bool:
        """The connector's ``alter_offsets(config, payload)`` on a plugin thread; its error is a 400."""
        alter = getattr(connector, "alter_offsets", None)
        if alter is None:
            return False
        try:
            return bool(
                await self.worker.plugin_calls.call(
                    name,
                    "alter_offsets",
                    alter,
                    self._resolved(config),
                    payload,
                    timeout=self.validation_timeout_s,
                )
            )
        except ConnectError:
            raise
        except Exception as exc:
            raise BadRequestError(
                f"Failed to {'alter' if altering else 'reset'} offsets for connector "
                f"{name} because it threw an error: {exc}"
            ) from None

    def _topic_tracking(self, *, reset: bool = False) -> None:
        if not self.config.topic_tracking_enable:
            raise ForbiddenError("Topic tracking is disabled.")
        if reset and not self.config.topic_tracking_allow_reset:
            raise ForbiddenError("Topic tracking reset is disabled.")

    def connector_active_topics(self, name: str) -> dict[str, Any]:
        """KIP-558: ``{"c": {"topics": [...]}}`` from the status store (unknown connector: empty)."""
        self._topic_tracking()
        topics = [t.topic for t in self.status_store.get_topics(name)]
        return {name: {"topics": default_hash_order(topics, java_string_hash)}}

    def reset_connector_active_topics(self, name: str) -> None:
        self._topic_tracking(reset=True)
        for status in self.status_store.get_topics(name):
            self.status_store.delete_topic(name, status.topic)

    def logger_levels(self) -> dict[str, dict[str, Any]]:
        return LOGGERS.levels()

    def logger_level(self, name: str) -> dict[str, Any]:
        level = LOGGERS.level(name)
        if level is None:
            raise NotFoundError(f"Logger {name} not found.")
        return level

    def set_worker_logger_level(self, namespace: str, level: str) -> list[str]:
        return LOGGERS.set_level(namespace, level)
