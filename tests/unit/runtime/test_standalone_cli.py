"""``pyconnect standalone``: StandaloneConfig keys, connector config files, one-line CLI errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pyconnect import cli
from pyconnect.config.standalone import StandaloneConfig
from pyconnect.errors import ConfigError
from pyconnect.protocol.internal_records import TargetState

WORKER = {
    "bootstrap.servers": "127.0.0.1:9092",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "offset.storage.file.filename": "standalone.offsets",
}


def test_standalone_config_has_the_common_keys_and_the_offsets_file() -> None:
    config = StandaloneConfig(WORKER)
    assert config["offset.storage.file.filename"] == "standalone.offsets"
    assert config.offset_storage_file_filename == "standalone.offsets"
    assert config["offset.flush.interval.ms"] == 60000
    assert config["listeners"] == ["http://:8083"]
    assert "ssl.truststore.location" in config
    for distributed_only in (
        "group.id",
        "offset.storage.topic",
        "config.storage.topic",
        "session.timeout.ms",
    ):
        assert distributed_only not in config


def test_standalone_config_requires_the_offsets_file() -> None:
    props = {k: v for k, v in WORKER.items() if k != "offset.storage.file.filename"}
    with pytest.raises(ConfigError, match=re.escape("offset.storage.file.filename")):
        StandaloneConfig(props)


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_properties_file(tmp_path: Path) -> None:
    path = write(tmp_path, "c.properties", "name=c\nconnector.class=X\ntasks.max=2\n")
    assert cli.load_connector_file(path) == (
        "c",
        {"name": "c", "connector.class": "X", "tasks.max": "2"},
        None,
    )


def test_json_plain_map_with_scalars(tmp_path: Path) -> None:
    path = write(tmp_path, "c.json", json.dumps({"name": "c", "tasks.max": 2, "enabled": True}))
    assert cli.load_connector_file(path) == ("c", {"name": "c", "tasks.max": "2", "enabled": "true"}, None)


def test_json_create_connector_request(tmp_path: Path) -> None:
    body = {"name": "c", "config": {"connector.class": "X"}, "initial_state": "paused", "other": 1}
    path = write(tmp_path, "c.json", json.dumps(body))
    assert cli.load_connector_file(path) == ("c", {"connector.class": "X", "name": "c"}, TargetState.PAUSED)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("connector.class=X\n", "missing the mandatory 'name' configuration"),
        (json.dumps({"connector.class": "X"}), "missing the mandatory 'name' configuration"),
        (json.dumps({"name": "a", "config": {"name": "b"}}), "doesn't match the one specified in 'name'"),
        (json.dumps({"name": "a", "config": {}, "initial_state": "gone"}), "'initial_state'"),
        (json.dumps({"name": "a", "config": {"tasks.max": None}}), "'tasks.max'"),
        (json.dumps({"name": "a", "config": [1]}), "'config'"),
        ("name=c\nbad=\\u12\n", "Malformed"),
    ],
)
def test_invalid_connector_files(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        cli.load_connector_file(write(tmp_path, "c.txt", text))


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = cli.main(["standalone", *args])
    return code, capsys.readouterr().err.strip().splitlines()


def test_unreadable_connector_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    worker = write(tmp_path, "worker.properties", "".join(f"{k}={v}\n" for k, v in WORKER.items()))
    code, lines = run_cli([worker, str(tmp_path / "missing.json")], capsys)
    assert code == 1 and len(lines) == 1 and "missing.json" in lines[0], lines


def test_invalid_worker_file_names_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    props = {**WORKER, "offset.flush.interval.ms": "soon"}
    worker = write(tmp_path, "worker.properties", "".join(f"{k}={v}\n" for k, v in props.items()))
    code, lines = run_cli([worker], capsys)
    assert code == 1 and len(lines) == 1 and "offset.flush.interval.ms" in lines[0], lines


def test_missing_offsets_file_key_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    props = {k: v for k, v in WORKER.items() if k != "offset.storage.file.filename"}
    worker = write(tmp_path, "worker.properties", "".join(f"{k}={v}\n" for k, v in props.items()))
    code, lines = run_cli([worker], capsys)
    assert code == 1 and len(lines) == 1 and "offset.storage.file.filename" in lines[0], lines


def test_unreadable_worker_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = run_cli([str(tmp_path / "nope.properties")], capsys)
    assert code == 1 and len(lines) == 1 and "nope.properties" in lines[0], lines
