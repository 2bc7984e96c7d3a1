"""Config providers and variable resolution, with the behaviour of Kafka 4.3.1's ConfigTransformer,
File/EnvVar/DirectoryConfigProvider and AbstractConfig (checked with the jars)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyconnect.config.providers import (
    ConfigData,
    ConfigTransformer,
    DirectoryConfigProvider,
    EnvVarConfigProvider,
    FileConfigProvider,
    provider_class,
    providers_for,
    resolve,
    resolve_config_variables,
)
from pyconnect.config.worker import WorkerConfig
from pyconnect.errors import ConfigError

FILE_CLASS = "org.apache.kafka.common.config.provider.FileConfigProvider"
ENV_CLASS = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
DIR_CLASS = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"


@pytest.fixture
def secrets(tmp_path):
    (tmp_path / "secret.properties").write_bytes("a=1\nb=caf\u00e9\n".encode())
    (tmp_path / "pwfile").write_text("pw\n")
    (tmp_path / "sub").mkdir()
    return tmp_path


@pytest.fixture
def providers():
    file_provider = FileConfigProvider()
    file_provider.configure({})
    env_provider = EnvVarConfigProvider({"HOME_X": "hx", "OTHER": "o"})
    env_provider.configure({"allowlist.pattern": "HOME.*"})
    dir_provider = DirectoryConfigProvider()
    dir_provider.configure({})
    return {"file": file_provider, "env": env_provider, "dir": dir_provider}


def _one(providers, value: str) -> str | None:
    return resolve({"k": value}, providers)["k"]


def test_java_transform_cases(secrets, providers) -> None:
    f = secrets / "secret.properties"
    cases = {
        f"${{file:{f}:a}}": "1",
        f"${{file:{f}:b}}": "café",
        f"x${{file:{f}:a}}y${{file:{f}:zz}}z": f"x1y${{file:{f}:zz}}z",
        "${nope:/x:a}": "${nope:/x:a}",
        f"${{nope:/x:a}}${{file:{f}:a}}": "${nope:/x:a}1",
        "${env:HOME_X}": "hx",
        "${env:OTHER}": "${env:OTHER}",
        f"${{dir:{secrets}:pwfile}}": "pw\n",
        f"${{dir:{secrets}:nofile}}": f"${{dir:{secrets}:nofile}}",
        f"${{dir:{secrets}:sub}}": f"${{dir:{secrets}:sub}}",
        f"${{dir:{secrets}/nodir:pwfile}}": f"${{dir:{secrets}/nodir:pwfile}}",
        "${file::a}": "${file::a}",
        "${file:a}": "${file:a}",
        "${env:}": "${env:}",
        "$${env:HOME_X}": "$hx",
        "${env:HOME_X": "${env:HOME_X",
        "${a:b:c:d}": "${a:b:c:d}",
        "plain": "plain",
    }
    for raw, expected in cases.items():
        assert _one(providers, raw) == expected, raw


def test_resolve_returns_new_mapping_and_keeps_none(secrets, providers) -> None:
    raw = {"x": f"${{file:{secrets / 'secret.properties'}:a}}", "n": None}
    resolved = resolve(raw, providers)
    assert resolved == {"x": "1", "n": None}
    assert raw["x"].startswith("${file:")


def test_provider_errors_are_config_errors(secrets, providers) -> None:
    with pytest.raises(ConfigError) as info:
        _one(providers, f"${{file:{secrets}/missing.properties:a}}")
    assert str(info.value) == f"Could not read properties from file {secrets}/missing.properties"
    with pytest.raises(ConfigError) as info:
        _one(providers, "${env:/p:HOME_X}")
    assert str(info.value) == "Path is not supported for EnvVarConfigProvider, invalid value '/p'"


def test_file_provider_reads_utf8_and_java_escapes(tmp_path) -> None:
    path = tmp_path / "s.properties"
    path.write_text("k = caf\u00e9 \\u20ac\\\n   more\n", encoding="utf-8")
    provider = FileConfigProvider()
    provider.configure({})
    assert provider.get(str(path), {"k", "absent"}) == ConfigData({"k": "café €more"})
    assert provider.get(str(path)).data == {"k": "café €more"}
    assert provider.get("").data == {}


def test_allowed_paths(secrets, tmp_path_factory) -> None:
    other = tmp_path_factory.mktemp("other")
    provider = FileConfigProvider()
    provider.configure({"allowed.paths": str(other)})
    target = f"${{file:{secrets / 'secret.properties'}:a}}"
    assert _one({"file": provider}, target) == target
    provider.configure({"allowed.paths": f"{other},{secrets}"})
    assert _one({"file": provider}, target) == "1"
    sneaky = f"${{file:{secrets}/../{secrets.name}/secret.properties:a}}"
    assert _one({"file": provider}, sneaky) == "1"
    with pytest.raises(ConfigError, match=r"^Path rel/path is not absolute$"):
        provider.configure({"allowed.paths": "rel/path"})
    with pytest.raises(ConfigError, match=r"^Path /no/such does not exist$"):
        provider.configure({"allowed.paths": "/no/such"})
    directory = DirectoryConfigProvider()
    directory.configure({"allowed.paths": str(other)})
    assert directory.get(str(secrets), {"pwfile"}).data == {}


def test_env_provider_without_pattern_sees_everything() -> None:
    provider = EnvVarConfigProvider({"A": "1", "B": "2"})
    provider.configure({})
    assert provider.get("").data == {"A": "1", "B": "2"}
    assert provider.get("", {"B", "C"}).data == {"B": "2"}


def test_directory_provider_lists_only_regular_files(secrets) -> None:
    provider = DirectoryConfigProvider()
    provider.configure({})
    assert provider.get(str(secrets)).data == {"secret.properties": "a=1\nb=café\n", "pwfile": "pw\n"}


def test_ttls_are_reported_per_path() -> None:
    class Ttl:
        def configure(self, params) -> None:
            pass

        def get(self, path, keys=None):
            return ConfigData({"k": "v"}, ttl=500)

    result = ConfigTransformer({"t": Ttl()}).transform({"x": "${t:p:k}"})
    assert result.data == {"x": "v"}
    assert result.ttls == {"p": 500}


def test_provider_class_accepts_java_names_and_connect_aliases() -> None:
    for name in (FILE_CLASS, "FileConfigProvider", "File"):
        assert provider_class(name) is FileConfigProvider
    for name in (ENV_CLASS, "EnvVarConfigProvider", "EnvVar"):
        assert provider_class(name) is EnvVarConfigProvider
    for name in (DIR_CLASS, "DirectoryConfigProvider", "Directory"):
        assert provider_class(name) is DirectoryConfigProvider
    assert provider_class("file") is None


def test_providers_for_worker_path(secrets) -> None:
    props = {
        "config.providers.file.class": "File",
        "config.providers.env.class": ENV_CLASS,
        "config.providers.env.param.allowlist.pattern": "X.*",
    }
    built = providers_for(props, ["file", "env", "unconfigured"], environ={"XA": "1", "YB": "2"})
    assert sorted(built) == ["env", "file"]
    assert resolve({"a": "${env:XA}", "b": "${env:YB}", "c": "${unconfigured:k}"}, built) == {
        "a": "1",
        "b": "${env:YB}",
        "c": "${unconfigured:k}",
    }
    with pytest.raises(
        ConfigError,
        match=r"^Failed to find any class that implements ConfigProvider and which name matches nope",
    ):
        providers_for({"config.providers.x.class": "nope"}, ["x"])


def test_resolve_config_variables_like_abstract_config(secrets) -> None:
    f = secrets / "secret.properties"
    props = {
        "config.providers": "file",
        "config.providers.file.class": FILE_CLASS,
        "x": f"${{file:{f}:a}}",
        "n": 5,
    }
    assert resolve_config_variables(props, environ={}) == {**props, "x": "1"}
    assert resolve_config_variables({"x": "${file:/a:b}"}, environ={}) == {"x": "${file:/a:b}"}


def test_abstract_config_does_not_trim_provider_names() -> None:
    props = {
        "config.providers": "file, env",
        "config.providers.file.class": FILE_CLASS,
        "config.providers.env.class": ENV_CLASS,
        "x": "${env:HOME}",
    }
    env = {"HOME": "/root"}
    assert resolve_config_variables(props, environ=env)["x"] == "${env:HOME}"
    assert resolve_config_variables({**props, "config.providers": "file,env"}, environ=env)["x"] == "/root"


def test_automatic_config_providers_allowlist(secrets) -> None:
    f = secrets / "secret.properties"
    props = {"config.providers": "file", "config.providers.file.class": FILE_CLASS, "x": f"${{file:{f}:a}}"}
    with pytest.raises(ConfigError) as info:
        resolve_config_variables(props, environ={"PYCONNECT_AUTOMATIC_CONFIG_PROVIDERS": ""})
    assert str(info.value).startswith(
        f"{FILE_CLASS} is not allowed. Update System property 'org.apache.kafka.automatic.config.providers'"
    )
    allowed = {"PYCONNECT_AUTOMATIC_CONFIG_PROVIDERS": f" {FILE_CLASS} , {ENV_CLASS}"}
    assert resolve_config_variables(props, environ=allowed)["x"] == "1"


def test_unknown_provider_class_in_own_config() -> None:
    props = {"config.providers": "x", "config.providers.x.class": "com.example.Nope", "y": "${x:k}"}
    with pytest.raises(ConfigError) as info:
        resolve_config_variables(props, environ={})
    assert str(info.value) == (
        "Invalid value com.example.Nope for configuration config.providers.x.class: "
        "Could not load config provider class or one of its dependencies"
    )


def test_worker_config_providers_for_connector_configs(secrets) -> None:
    base = {
        "group.id": "g",
        "bootstrap.servers": "k:9092",
        "config.storage.topic": "c",
        "offset.storage.topic": "o",
        "status.storage.topic": "s",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "config.providers": "file, env,directory",
        "config.providers.file.class": FILE_CLASS,
        "config.providers.env.class": "EnvVar",
        "config.providers.directory.class": DIR_CLASS,
    }
    worker = WorkerConfig(base, environ={"TOKEN": "t0k"})
    assert worker.config_providers == ["file", "env", "directory"]
    connector = {
        "name": "c",
        "a": f"${{file:{secrets / 'secret.properties'}:a}}",
        "b": "${env:TOKEN}",
        "c": f"${{directory:{secrets}:pwfile}}",
    }
    assert resolve(connector, worker.providers()) == {"name": "c", "a": "1", "b": "t0k", "c": "pw\n"}


@given(st.text(max_size=40))
def test_values_without_configured_providers_are_unchanged(text: str) -> None:
    assert resolve({"k": text}, {}) == {"k": text}


@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_.]{0,11}", fullmatch=True), st.text(max_size=12))
def test_env_variables_substitute_anywhere_in_text(name: str, around: str) -> None:
    provider = EnvVarConfigProvider({name: "VALUE"})
    provider.configure({})
    raw = f"{around}${{env:{name}}}{around}"
    expected = f"{around}VALUE{around}"
    if "${" not in around:
        assert resolve({"k": raw}, {"env": provider})["k"] == expected
