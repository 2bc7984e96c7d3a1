"""The REST client of the command lines (pyconnect.rest_client) against the worker's own REST server, secured
as Kafka Connect workers are: an HTTPS listener (with and without ``ssl.client.auth=required``) and the
basic-auth extension; and ``pyconnect status``, ``failover`` and ``offsets translate`` through it.

The certificates (a CA, another CA, the worker's and an operator's) are made with openssl
(tests.tls_material: a missing openssl fails with what to install). The server runs on its own event
loop thread because the client under test blocks.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from connectors.mirror.offsets.failover_command import FailoverOptions, load_flow
from connectors.mirror.offsets.failover_flow import FlowConfigError
from pyconnect.cli import main
from pyconnect.rest.security import BASIC_AUTH_EXTENSION, UNAUTHORIZED, SslSettings
from pyconnect.rest.server import RestServer
from pyconnect.rest_client import (
    KEY_PASSWORD_VARIABLE,
    PASSWORD_VARIABLE,
    RestAccess,
    RestClientError,
    add_rest_access_arguments,
    get_json,
)
from tests import tls_material
from tests.unit.rest.test_rest_api import MemoryHerder

TIMEOUT_S = 10.0
CHECKPOINT = {
    "connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
    "source.cluster.alias": "A",
    "target.cluster.alias": "B",
    "source.cluster.bootstrap.servers": "127.0.0.1:1",
    "target.cluster.bootstrap.servers": "127.0.0.1:1",
    "groups": ".*",
}
REFUSED = "credentials of user alice were refused"


@dataclass(frozen=True)
class Certs:
    ca: Path
    other_ca: Path
    worker_keystore: Path
    cert: Path
    key: Path
    encrypted_key: Path
    bundle: Path
    jaas: Path


def _openssl(directory: Path, *args: str) -> None:
    tls_material.run("openssl", *args, cwd=directory)


def _signed(directory: Path, name: str, usage: str) -> None:
    """``name.key`` and ``name.pem``: a P-256 key and its certificate for 127.0.0.1 signed by ``ca``."""
    _openssl(
        directory, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}",
    )  # fmt: skip
    (directory / f"{name}.cnf").write_text(
        f"subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage={usage}\nbasicConstraints=CA:FALSE\n"
    )
    _openssl(
        directory, "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", f"{name}.cnf", "-out", f"{name}.pem",
    )  # fmt: skip


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    d = tmp_path_factory.mktemp("rest-client")
    for name in ("ca", "other-ca"):
        _openssl(
            d, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={name}",
        )  # fmt: skip
    _signed(d, "worker", "serverAuth")
    _signed(d, "operator", "clientAuth")
    _openssl(
        d, "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", "operator.key", "-out", "operator-encrypted.key",
        "-passout", "pass:key-secret",
    )  # fmt: skip
    (d / "worker-keystore.pem").write_bytes((d / "worker.key").read_bytes() + (d / "worker.pem").read_bytes())
    (d / "operator-bundle.pem").write_bytes(
        (d / "operator.key").read_bytes() + (d / "operator.pem").read_bytes()
    )
    (d / "users.properties").write_text("alice: secret\n")
    (d / "connect_jaas.conf").write_text(
        "KafkaConnect {\n"
        "  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n"
        f'  file="{d / "users.properties"}";\n'
        "};\n"
    )
    return Certs(
        ca=d / "ca.pem",
        other_ca=d / "other-ca.pem",
        worker_keystore=d / "worker-keystore.pem",
        cert=d / "operator.pem",
        key=d / "operator.key",
        encrypted_key=d / "operator-encrypted.key",
        bundle=d / "operator-bundle.pem",
        jaas=d / "connect_jaas.conf",
    )


@contextlib.contextmanager
def running(
    certs: Certs, herder: MemoryHerder, *, scheme: str = "https", client_auth: str = "none"
) -> Iterator[str]:
    """The worker's REST server with basic auth (alice/secret) on ``scheme``; yields its URL (no slash)."""
    settings = None
    if scheme == "https":
        settings = SslSettings.from_worker_config(
            {
                "listeners.https.ssl.keystore.type": "PEM",
                "listeners.https.ssl.keystore.location": str(certs.worker_keystore),
                "listeners.https.ssl.truststore.type": "PEM",
                "listeners.https.ssl.truststore.location": str(certs.ca),
                "listeners.https.ssl.client.auth": client_auth,
            }
        )
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="rest-worker", daemon=True)
    thread.start()

    async def start() -> RestServer:
        server = RestServer(
            herder,  # type: ignore[arg-type]  # the in-memory herder serves what these tests read
            [f"{scheme}://127.0.0.1:0"],
            ssl_settings=settings,
            extension_classes=[BASIC_AUTH_EXTENSION],
            environ={"KAFKA_OPTS": f"-Djava.security.auth.login.config={certs.jaas}"},
        )
        server.serve_metrics(lambda: "# no metrics\n")
        await server.start()
        return server

    try:
        server = asyncio.run_coroutine_threadsafe(start(), loop).result(30)
        try:
            yield server.advertised_url.rstrip("/")
        finally:
            asyncio.run_coroutine_threadsafe(server.stop(), loop).result(30)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()


@pytest.fixture(scope="module")
def https_worker(certs: Certs) -> Iterator[str]:
    with running(certs, MemoryHerder()) as url:
        yield url


@pytest.fixture(scope="module")
def mtls_worker(certs: Certs) -> Iterator[str]:
    with running(certs, MemoryHerder(), client_auth="required") as url:
        yield url


@pytest.fixture(autouse=True)
def no_password_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PASSWORD_VARIABLE, raising=False)
    monkeypatch.delenv(KEY_PASSWORD_VARIABLE, raising=False)


def alice(certs: Certs, password: str = "secret", **extra: str) -> RestAccess:
    return RestAccess(cafile=str(certs.ca), user="alice", password=password, **extra)


def failure(url: str, access: RestAccess) -> str:
    """The message of the :class:`RestClientError` that ``GET url`` raises (asserted to be one line)."""
    with pytest.raises(RestClientError) as raised:
        get_json(url, TIMEOUT_S, access)
    message = str(raised.value)
    assert message and "\n" not in message, message
    return message


def options(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_rest_access_arguments(parser)
    return parser.parse_args(list(argv))


def bad_input(*argv: str, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(RestClientError) as raised:
        RestAccess.from_args(options(*argv), environ or {})
    message = str(raised.value)
    assert message and "\n" not in message, message
    return message


def test_the_right_ca_and_credentials_read_the_workers_json(https_worker: str, certs: Certs) -> None:
    assert get_json(https_worker + "/", TIMEOUT_S, alice(certs))["kafka_cluster_id"] == "test-cluster"
    assert get_json(https_worker + "/connectors", TIMEOUT_S, alice(certs)) == []


def test_a_certificate_that_does_not_verify_is_a_named_tls_failure(https_worker: str, certs: Certs) -> None:
    target = https_worker + "/connectors"
    system_cas = failure(target, RestAccess(user="alice", password="secret"))
    assert system_cas.startswith(f"TLS failure with {target}: certificate verify failed: "), system_cas
    assert system_cas.endswith("(give the CA of the worker's certificate with --rest-cacert)")
    other_ca = failure(target, RestAccess(cafile=str(certs.other_ca), user="alice", password="secret"))
    assert other_ca.startswith(f"TLS failure with {target}: certificate verify failed: "), other_ca


def test_refused_credentials_are_one_line_with_the_workers_message(https_worker: str, certs: Certs) -> None:
    target = https_worker + "/connectors"
    assert (
        failure(target, alice(certs, "wrong")) == f"GET {target} answered 401: the {REFUSED}: {UNAUTHORIZED}"
    )
    assert failure(target, RestAccess(cafile=str(certs.ca))) == (
        f"GET {target} answered 401: the worker requires credentials (--rest-user with --rest-password-file "
        f"or {PASSWORD_VARIABLE}): {UNAUTHORIZED}"
    )


def test_other_answers_name_the_workers_message_or_what_is_wrong(https_worker: str, certs: Certs) -> None:
    missing = https_worker + "/connectors/nope/config"
    assert failure(missing, alice(certs)) == f"GET {missing} answered 404: Connector nope not found"
    metrics = https_worker + "/metrics"
    assert failure(metrics, alice(certs)) == f"GET {metrics} did not answer JSON"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    closed = f"http://127.0.0.1:{port}/connectors"
    assert failure(closed, RestAccess()) == f"cannot reach {closed}: Connection refused"


def test_a_listener_requiring_a_client_certificate(mtls_worker: str, certs: Certs) -> None:
    target = mtls_worker + "/connectors"
    for client in (
        alice(certs, certfile=str(certs.cert), keyfile=str(certs.key)),
        alice(certs, certfile=str(certs.bundle)),
        alice(certs, certfile=str(certs.cert), keyfile=str(certs.encrypted_key), key_password="key-secret"),
    ):
        assert get_json(target, TIMEOUT_S, client) == [], client
    without = failure(target, alice(certs))
    assert without.startswith(f"TLS failure with {target}: ") and "--rest-cert" in without, without
    wrong_user = failure(target, alice(certs, "wrong", certfile=str(certs.bundle)))
    assert wrong_user.startswith(f"GET {target} answered 401: the {REFUSED}"), wrong_user
    assert failure(target, alice(certs, certfile=str(certs.cert), keyfile=str(certs.encrypted_key))) == (
        f"the key in {certs.encrypted_key} is encrypted: give its password with --rest-key-password-file "
        f"FILE or {KEY_PASSWORD_VARIABLE}"
    )
    wrong_key_password = failure(
        target, alice(certs, certfile=str(certs.cert), keyfile=str(certs.encrypted_key), key_password="no")
    )
    assert wrong_key_password.startswith(
        f"--rest-cert {certs.cert} with --rest-key {certs.encrypted_key}: cannot load the certificate and key"
    ), wrong_key_password


def test_basic_auth_over_plain_http_is_sent_as_given(certs: Certs) -> None:
    with running(certs, MemoryHerder(), scheme="http") as url:
        assert get_json(url + "/connectors", TIMEOUT_S, RestAccess(user="alice", password="secret")) == []
        assert failure(url + "/connectors", RestAccess()).startswith(f"GET {url}/connectors answered 401")


def test_passwords_come_from_a_file_or_the_environment(
    https_worker: str, certs: Certs, tmp_path: Path
) -> None:
    target = https_worker + "/connectors"
    given = ("--rest-cacert", str(certs.ca), "--rest-user", "alice")
    from_env = RestAccess.from_args(options(*given), {PASSWORD_VARIABLE: "secret"})
    assert from_env == alice(certs) and get_json(target, TIMEOUT_S, from_env) == []
    password_file = tmp_path / "rest-password"
    password_file.write_text("secret\nnot the password\n")
    from_file = RestAccess.from_args(
        options(*given, "--rest-password-file", str(password_file)), {PASSWORD_VARIABLE: "wrong"}
    )
    assert from_file == alice(certs), "the file wins over the environment"
    assert get_json(target, TIMEOUT_S, from_file) == []
    assert "secret" not in repr(from_file)
    client = ("--rest-cert", str(certs.cert), "--rest-key", str(certs.encrypted_key))
    key_password_file = tmp_path / "key-password"
    key_password_file.write_text("key-secret\n")
    for argv, environ in (
        ((*client, "--rest-key-password-file", str(key_password_file)), {}),
        (client, {KEY_PASSWORD_VARIABLE: "key-secret"}),
    ):
        access = RestAccess.from_args(options(*argv), environ)
        assert (access.certfile, access.keyfile, access.key_password) == (
            str(certs.cert),
            str(certs.encrypted_key),
            "key-secret",
        )
        assert access.ssl_context() is not None


def test_bad_inputs_are_one_line_errors(certs: Certs, tmp_path: Path) -> None:
    missing = tmp_path / "missing.pem"
    assert bad_input("--rest-cacert", str(missing)) == f"--rest-cacert {missing}: No such file or directory"
    assert bad_input("--rest-user", "alice", "--rest-password-file", str(tmp_path)) == (
        f"--rest-password-file {tmp_path}: Is a directory"
    )
    empty = tmp_path / "empty"
    empty.write_text("\n")
    assert bad_input("--rest-user", "alice", "--rest-password-file", str(empty)) == (
        f"--rest-password-file {empty}: the first line is empty"
    )
    assert (
        bad_input("--rest-key", str(certs.key))
        == "--rest-key needs --rest-cert (the client certificate of that key)"
    )
    assert bad_input("--rest-password-file", str(empty)) == "--rest-password-file needs --rest-user"
    assert bad_input("--rest-user", "alice") == (
        f"--rest-user alice needs a password: --rest-password-file FILE or {PASSWORD_VARIABLE}"
    )
    assert "has no ':'" in bad_input("--rest-user", "al:ice", environ={PASSWORD_VARIABLE: "x"})
    refused = bad_input("--rest-user", "alice", "--rest-password", "hunter2")
    assert refused.startswith("--rest-password is not accepted") and "hunter2" not in refused
    not_a_ca = tmp_path / "not-a-ca.pem"
    not_a_ca.write_text("not a certificate\n")
    with pytest.raises(RestClientError, match=rf"^--rest-cacert {not_a_ca}: .*no certificate"):
        RestAccess(cafile=str(not_a_ca)).ssl_context()


def test_status_command_reads_a_secured_worker(
    mtls_worker: str,
    certs: Certs,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    password, wrong = tmp_path / "password", tmp_path / "wrong"
    password.write_text("secret\n")
    wrong.write_text("nope\n")
    secured = [
        "status", "--url", mtls_worker, "--rest-cacert", str(certs.ca), "--rest-cert", str(certs.cert),
        "--rest-key", str(certs.key), "--rest-user", "alice",
    ]  # fmt: skip
    assert main([*secured, "--rest-password-file", str(password)]) == 0
    assert capsys.readouterr() == ("No MirrorMaker 2 flows on this cluster.\n", "")
    assert main([*secured, "--rest-password-file", str(password), "--json"]) == 0
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert document["flows"] == [] and isinstance(document["generated_ms"], int) and err == ""
    monkeypatch.setenv(PASSWORD_VARIABLE, "secret")
    assert main(secured) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.delenv(PASSWORD_VARIABLE)
    assert main([*secured, "--rest-password-file", str(wrong)]) == 1
    assert capsys.readouterr() == (
        "",
        f"pyconnect: GET {mtls_worker}/mirrors answered 401: the {REFUSED}: {UNAUTHORIZED}\n",
    )
    unverified = [a for a in secured if a != str(certs.ca) and a != "--rest-cacert"]
    assert main([*unverified, "--rest-password-file", str(password)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"pyconnect: TLS failure with {mtls_worker}/mirrors: certificate verify failed"), (
        err
    )
    assert main([*secured, "--rest-password-file", str(tmp_path / "none")]) == 1
    assert capsys.readouterr() == (
        "",
        f"pyconnect: --rest-password-file {tmp_path / 'none'}: No such file or directory\n",
    )


def test_failover_and_offsets_read_the_flow_from_a_secured_worker(
    certs: Certs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    herder = MemoryHerder()
    herder.configs["mm2-checkpoint"] = dict(CHECKPOINT)
    wrong = tmp_path / "wrong"
    wrong.write_text("nope\n")
    with running(certs, herder, client_auth="required") as url:
        access = alice(certs, certfile=str(certs.cert), keyfile=str(certs.key))
        flow = load_flow(FailoverOptions("plan", url=url, rest_access=access, timeout_s=TIMEOUT_S))
        assert (flow.source, flow.target, flow.origin) == ("A", "B", f"connector mm2-checkpoint at {url}")
        with pytest.raises(FlowConfigError, match=rf"^TLS failure with {url}/connectors\?expand=info: "):
            load_flow(FailoverOptions("plan", url=url, rest_access=alice(certs), timeout_s=TIMEOUT_S))
        secured = [
            "--url", url, "--group", "g", "--rest-cacert", str(certs.ca), "--rest-cert", str(certs.cert),
            "--rest-key", str(certs.key), "--rest-user", "alice", "--rest-password-file", str(wrong),
        ]  # fmt: skip
        refused = f"pyconnect: GET {url}/connectors?expand=info answered 401: the {REFUSED}: {UNAUTHORIZED}\n"
        for argv, code in (
            (["failover", "plan"], 2),
            (["failover", "execute"], 2),
            (["offsets", "translate"], 1),
        ):
            assert main([*argv, *secured]) == code, argv
            assert capsys.readouterr() == ("", refused), argv
        password = tmp_path / "password"
        password.write_text("secret\n")
        for argv in (["failover", "plan"], ["offsets", "translate"]):
            # With the flow read, the command goes on to the clusters, which are not there.
            assert main([*argv, *secured, "--rest-password-file", str(password), "--timeout", "2"]) == 1, argv
            out, err = capsys.readouterr()
            assert out == "" and err.startswith("pyconnect: cannot reach cluster B") and err.count("\n") == 1
    connector_file = tmp_path / "checkpoint.json"
    connector_file.write_text(json.dumps({"name": "mm2-checkpoint", "config": CHECKPOINT}))
    without_url = ["--connector-config", str(connector_file), "--group", "g", "--rest-user", "alice"]
    assert main(["failover", "plan", *without_url]) == 2
    assert capsys.readouterr() == (
        "",
        "pyconnect: --rest-user without --url: the --rest-* options reach the worker of --url\n",
    )


@pytest.mark.parametrize(
    "command", [["status"], ["failover", "plan"], ["failover", "execute"], ["offsets", "translate"]]
)
def test_the_help_of_each_command_names_the_secured_worker_options(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    for option in (
        "--rest-cacert FILE",
        "--rest-cert FILE",
        "--rest-key FILE",
        "--rest-key-password-file FILE",
        "--rest-user USER",
        "--rest-password-file FILE",
        PASSWORD_VARIABLE,
    ):
        assert option in text, option
    assert "--rest-password " not in text and "--rest-password\n" not in text
