"""Config providers: ``${provider:[path:]key}`` variables, resolved on use.

Contract (as in Java Connect): what is stored in the config topic and returned by the REST API is the
**raw** text with its ``${...}`` variables. A connector or task receives its config only after
:func:`resolve` (Java ``WorkerConfigTransformer``) has replaced the variables with current values, and
that happens each time the config is used (start, restart, reconfigure). Resolution never mutates its
input; it returns a new mapping.

Variables match ``\\$\\{([^}]*?):(([^}]*?):)?([^}]*?)\\}`` (provider, optional path, key). A variable
whose provider is not configured, or whose key the provider does not return, is left unchanged. A
provider that fails (unreadable file, path given to ``env``) raises :class:`~pyconnect.errors.ConfigError`.

Providers are configured Java's way in the worker config::

    config.providers=file,env,directory
    config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
    config.providers.file.param.allowed.paths=/etc/secrets

``.class`` accepts the Java class name or Connect's plugin aliases (``FileConfigProvider``, ``File``,
``EnvVarConfigProvider``, ``EnvVar``, ``DirectoryConfigProvider``, ``Directory``).

Two code paths exist, as in Java:

* :func:`providers_for` + :func:`resolve` (Java ``Worker`` -> ``WorkerConfigTransformer``) resolve
  connector configs with the providers named by the worker's parsed ``config.providers`` list;
* :func:`resolve_config_variables` (Java ``AbstractConfig`` constructor) resolves a config's *own*
  variables, e.g. ``${file:...}`` inside the worker properties. Like Java it splits
  ``config.providers`` on commas without trimming, and it honours Kafka 4's
  ``org.apache.kafka.automatic.config.providers`` system property, which we read from the environment
  variable ``PYCONNECT_AUTOMATIC_CONFIG_PROVIDERS``: when set, only the listed provider class names
  (comma separated) may be instantiated; an empty value allows none.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pyconnect.config import properties
from pyconnect.config.javastr import invalid_value
from pyconnect.errors import ConfigError

log = logging.getLogger(__name__)

VARIABLE_PATTERN = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")
CONFIG_PROVIDERS_CONFIG = "config.providers"
AUTOMATIC_CONFIG_PROVIDERS_ENV = "PYCONNECT_AUTOMATIC_CONFIG_PROVIDERS"
AUTOMATIC_CONFIG_PROVIDERS_PROPERTY = "org.apache.kafka.automatic.config.providers"


@dataclass(frozen=True)
class ConfigData:
    """What a provider returns for one path: the values found and an optional TTL in milliseconds."""

    data: Mapping[str, str]
    ttl: int | None = None


class ConfigProvider(Protocol):
    """Java ``ConfigProvider``. ``configure`` receives the ``config.providers.<name>.param.*`` values."""

    def configure(self, params: Mapping[str, object]) -> None: ...

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData: ...


class AllowedPaths:
    """``allowed.paths``: absolute, existing, comma-separated roots; ``None``/empty allows every path."""

    def __init__(self, value: object) -> None:
        self.roots: list[Path] | None = None
        if value is None or value == "":
            return
        self.roots = []
        for item in str(value).split(","):
            text = os.path.normpath(item) if item else ""
            if not os.path.isabs(text):
                raise ConfigError(f"Path {text} is not absolute")
            if not os.path.exists(text):
                raise ConfigError(f"Path {text} does not exist")
            self.roots.append(Path(text))

    def parse_untrusted(self, path: str) -> Path | None:
        """The path to open, or ``None`` if it lies outside every allowed root (after normalisation)."""
        if self.roots is None:
            return Path(path)
        normalised = Path(os.path.normpath(path))
        if any(normalised == root or root in normalised.parents for root in self.roots):
            return normalised
        return None


class FileConfigProvider:
    """``${file:/path/to/file.properties:key}``: a key of a properties file (read as UTF-8)."""

    java_class = "org.apache.kafka.common.config.provider.FileConfigProvider"

    def __init__(self) -> None:
        self._allowed: AllowedPaths | None = None

    def configure(self, params: Mapping[str, object]) -> None:
        self._allowed = AllowedPaths(params.get("allowed.paths"))

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        if self._allowed is None:
            raise RuntimeError("The provider has not been configured yet.")
        if not path:
            return ConfigData({})
        target = self._allowed.parse_untrusted(path)
        if target is None:
            return ConfigData({})
        try:
            with open(target, encoding="utf-8", newline="") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"Could not read properties from file {path}") from exc
        values = properties.loads(text, source=path)
        if keys is None:
            return ConfigData(values)
        return ConfigData({k: values[k] for k in keys if k in values})


class EnvVarConfigProvider:
    """``${env:NAME}``: an environment variable whose name fully matches ``allowlist.pattern`` (default ``.*``).

    The pattern is compiled with Python's ``re`` (Java uses ``java.util.regex``; the dialects differ in details).
    """

    java_class = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = dict(os.environ if environ is None else environ)
        self._visible: dict[str, str] = {}

    def configure(self, params: Mapping[str, object]) -> None:
        pattern = re.compile(str(params.get("allowlist.pattern", ".*")))
        self._visible = {k: v for k, v in self._environ.items() if pattern.fullmatch(k)}

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        if path:
            raise ConfigError(f"Path is not supported for EnvVarConfigProvider, invalid value '{path}'")
        if keys is None:
            return ConfigData(dict(self._visible))
        return ConfigData({k: self._visible[k] for k in keys if k in self._visible})


class DirectoryConfigProvider:
    """``${directory:/dir:file}``: the whole content (UTF-8) of a regular file directly inside ``dir``."""

    java_class = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"

    def __init__(self) -> None:
        self._allowed: AllowedPaths | None = None

    def configure(self, params: Mapping[str, object]) -> None:
        self._allowed = AllowedPaths(params.get("allowed.paths"))

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        if self._allowed is None:
            raise RuntimeError("The provider has not been configured yet.")
        if not path:
            return ConfigData({})
        directory = self._allowed.parse_untrusted(path)
        if directory is None or not directory.is_dir():
            return ConfigData({})
        wanted = None if keys is None else set(keys)
        data: dict[str, str] = {}
        try:
            entries = list(directory.iterdir())
        except OSError as exc:
            raise ConfigError(f"Could not list directory {directory}") from exc
        for entry in entries:
            if (wanted is None or entry.name in wanted) and entry.is_file():
                try:
                    data[entry.name] = entry.read_bytes().decode("utf-8", errors="replace")
                except OSError as exc:
                    raise ConfigError(f"Could not read file {entry} for property {entry.name}") from exc
        return ConfigData(data)


_BUILTINS: dict[str, type[Any]] = {
    cls.java_class: cls for cls in (FileConfigProvider, EnvVarConfigProvider, DirectoryConfigProvider)
}
PROVIDER_CLASSES: dict[str, type[Any]] = {}
for _java_class, _cls in _BUILTINS.items():
    _simple = _java_class.rsplit(".", 1)[-1]
    PROVIDER_CLASSES[_java_class] = _cls
    PROVIDER_CLASSES[_simple] = _cls
    PROVIDER_CLASSES[_simple.removesuffix("ConfigProvider")] = _cls


_WARNED_JAVA_ONLY: set[str] = set()


class JavaOnlyProvider:
    """A provider class that exists only in Java (:data:`JAVA_ONLY_PROVIDERS`): configuring it works, so
    a config that declares it but never uses it runs; each variable that uses it is a
    :class:`~pyconnect.errors.ConfigError` naming the class and why pyconnect does not have it."""

    java_class = ""
    reason = ""

    def configure(self, params: Mapping[str, object]) -> None:
        if self.java_class not in _WARNED_JAVA_ONLY:
            _WARNED_JAVA_ONLY.add(self.java_class)
            log.warning(
                "Config provider %s is Java-only (%s): variables that use it cannot be resolved",
                self.java_class,
                self.reason,
            )

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        wanted = ", ".join(sorted(keys or ()))
        raise ConfigError(
            f"Config provider {self.java_class} is not available in pyconnect ({self.reason}): "
            f"cannot resolve {wanted or 'variables'} of path {path!r}"
        )


JAVA_ONLY_PROVIDERS: dict[str, str] = {
    "io.strimzi.kafka.KubernetesSecretConfigProvider": "it reads Secrets from the Kubernetes API in Java",
    "io.strimzi.kafka.KubernetesConfigMapConfigProvider": "it reads ConfigMaps from the Kubernetes API in Java",
}
"""Java provider classes Strimzi's configurations declare, with the reason pyconnect lacks each."""


def provider_class(class_name: str) -> type[Any] | None:
    """The provider implementing a Java class name or Connect alias, a :class:`JavaOnlyProvider` for a
    class of :data:`JAVA_ONLY_PROVIDERS`, or ``None``."""
    name = class_name.strip()
    if name in JAVA_ONLY_PROVIDERS:
        return type(
            name.rsplit(".", 1)[-1],
            (JavaOnlyProvider,),
            {"java_class": name, "reason": JAVA_ONLY_PROVIDERS[name]},
        )
    return PROVIDER_CLASSES.get(name)


@dataclass
class TransformResult:
    """Java ``ConfigTransformerResult``: the resolved configs and TTLs (ms) per provider path."""

    data: dict[str, str | None]
    ttls: dict[str, int] = field(default_factory=dict)


class ConfigTransformer:
    """Java ``ConfigTransformer``: one provider lookup per (provider, path), then textual replacement."""

    def __init__(self, providers: Mapping[str, ConfigProvider | None]) -> None:
        self._providers = providers

    def transform(self, configs: Mapping[str, str | None]) -> TransformResult:
        wanted: dict[str, dict[str, set[str]]] = {}
        for value in configs.values():
            if value is None:
                continue
            for match in VARIABLE_PATTERN.finditer(value):
                provider, path, key = match.group(1), match.group(3) or "", match.group(4)
                wanted.setdefault(provider, {}).setdefault(path, set()).add(key)
        found: dict[str, dict[str, Mapping[str, str]]] = {}
        ttls: dict[str, int] = {}
        for provider_name, by_path in wanted.items():
            provider = self._providers.get(provider_name)
            if provider is None:
                continue
            for path, keys in by_path.items():
                result = provider.get(path, set(keys))
                if result.ttl is not None and result.ttl >= 0:
                    ttls[path] = result.ttl
                found.setdefault(provider_name, {})[path] = result.data
        return TransformResult({k: _replace(v, found) for k, v in configs.items()}, ttls)


def _replace(value: str | None, found: Mapping[str, Mapping[str, Mapping[str, str]]]) -> str | None:
    if value is None:
        return None

    def substitute(match: re.Match[str]) -> str:
        by_path = found.get(match.group(1))
        if by_path is None:
            return match.group(0)
        replacement = by_path.get(match.group(3) or "", {}).get(match.group(4))
        return match.group(0) if replacement is None else replacement

    return VARIABLE_PATTERN.sub(substitute, value)


def _params(props: Mapping[str, object], name: str) -> dict[str, object]:
    prefix = f"{CONFIG_PROVIDERS_CONFIG}.{name}.param."
    return {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix) and len(k) > len(prefix)}


def _instantiate(cls: type[Any], environ: Mapping[str, str] | None) -> ConfigProvider:
    if cls is EnvVarConfigProvider:
        return EnvVarConfigProvider(environ)
    provider: ConfigProvider = cls()
    return provider


def providers_for(
    props: Mapping[str, object], names: Iterable[str], environ: Mapping[str, str] | None = None
) -> dict[str, ConfigProvider]:
    """Configured providers for ``names`` (the worker's parsed ``config.providers`` list).

    A name without ``config.providers.<name>.class`` is skipped (its variables stay unresolved); an
    unknown class raises :class:`ConfigError` with Java's ``Failed to find any class ...`` message.
    """
    result: dict[str, ConfigProvider] = {}
    for name in names:
        class_name = props.get(f"{CONFIG_PROVIDERS_CONFIG}.{name}.class")
        if class_name is None:
            continue
        cls = provider_class(str(class_name))
        if cls is None:
            available = ", ".join(_BUILTINS)
            raise ConfigError(
                f"Failed to find any class that implements ConfigProvider and which name matches {class_name}, "
                f"available ConfigProviders are: {available}"
            )
        provider = _instantiate(cls, environ)
        provider.configure(_params(props, name))
        result[name] = provider
    return result


def resolve(
    configs: Mapping[str, str | None], providers: Mapping[str, ConfigProvider]
) -> dict[str, str | None]:
    """A new mapping with every resolvable ``${provider:[path:]key}`` replaced (see module contract)."""
    return ConfigTransformer(providers).transform(configs).data


def _automatic_allowlist(environ: Mapping[str, str]) -> set[str] | None:
    value = environ.get(AUTOMATIC_CONFIG_PROVIDERS_ENV)
    if value is None:
        return None
    return {item.strip() for item in value.split(",")}


def resolve_config_variables(
    originals: Mapping[str, object], environ: Mapping[str, str] | None = None
) -> dict[str, object]:
    """Resolve a config's own variables with the providers it declares (Java ``AbstractConfig``).

    Only string values are transformed; everything else is copied. Raises :class:`ConfigError` when a
    provider class is not allowed by ``PYCONNECT_AUTOMATIC_CONFIG_PROVIDERS`` or cannot be found.
    """
    env = os.environ if environ is None else environ
    resolved = dict(originals)
    declared = originals.get(CONFIG_PROVIDERS_CONFIG)
    if not isinstance(declared, str) or not declared:
        return resolved
    allowlist = _automatic_allowlist(env)
    providers: dict[str, ConfigProvider] = {}
    for name in declared.split(","):
        class_key = f"{CONFIG_PROVIDERS_CONFIG}.{name}.class"
        class_name = originals.get(class_key)
        if not isinstance(class_name, str):
            continue
        if allowlist is not None and class_name not in allowlist:
            raise ConfigError(
                f"{class_name} is not allowed. Update System property '{AUTOMATIC_CONFIG_PROVIDERS_PROPERTY}' "
                f"(environment variable {AUTOMATIC_CONFIG_PROVIDERS_ENV}) to allow {class_name}"
            )
        cls = provider_class(class_name)
        if cls is None:
            raise invalid_value(
                class_key, class_name, "Could not load config provider class or one of its dependencies"
            )
        provider = _instantiate(cls, env)
        provider.configure(_params(originals, name))
        providers[name] = provider
    if not providers:
        return resolved
    strings = {k: v for k, v in originals.items() if isinstance(v, str)}
    resolved.update(ConfigTransformer(providers).transform(strings).data)
    return resolved
