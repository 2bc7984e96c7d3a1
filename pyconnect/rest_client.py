"""Reading a worker's REST API from the command line, including a worker secured as Kafka Connect workers are.

A secured worker has an HTTPS listener (``listeners=https://...``, possibly requiring a client certificate
with ``listeners.https.ssl.client.auth=required``) and HTTP basic auth (``rest.extension.classes`` naming
``BasicAuthSecurityRestExtension``, see :mod:`pyconnect.rest.security`). The command lines that read a
worker (``pyconnect status``, ``pyconnect failover``, ``pyconnect offsets translate``) describe how to
reach it with a :class:`RestAccess`:

* :func:`add_rest_access_arguments` adds ``--rest-cacert FILE`` (the CA that signed the worker's
  certificate, PEM; without it the system's trusted CAs), ``--rest-cert FILE`` and ``--rest-key FILE``
  (the client certificate and its key, PEM; the key may be inside the certificate file),
  ``--rest-key-password-file FILE`` (for an encrypted key; or ``PYCONNECT_REST_KEY_PASSWORD``),
  ``--rest-user USER`` and ``--rest-password-file FILE`` (or ``PYCONNECT_REST_PASSWORD``). A password
  is never taken from the command line (``--rest-password`` is refused): a password file's first line is
  the password.
* :meth:`RestAccess.from_args` reads them (and the password files) once.
* :func:`get_json` sends ``GET url`` with ``Accept: application/json`` and, with a user, an
  ``Authorization: Basic`` header; for ``https`` URLs it verifies the worker's certificate and host name
  (``ssl.create_default_context``) and presents the client certificate when one is given. Credentials over
  plain ``http`` are sent as given. Redirects are not followed, so credentials never leave for another
  address. It returns the decoded JSON body of a 2xx answer. :func:`call_json` does the same for any
  method, with a JSON body (``PUT``, ``PATCH``, ``POST``, ``DELETE`` of the operator commands).

Every failure is a :class:`RestClientError` whose message is one line: a bad input (a missing or unreadable
file, a key without its certificate, a user without a password), the worker unreachable (with the reason),
a TLS failure (named, e.g. ``certificate verify failed: self-signed certificate``), credentials refused
(HTTP 401 or 403, with the worker's message), another HTTP error (with the ``message`` of the Connect
``{"error_code", "message"}`` body), or an answer that is not JSON. Standard library only.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import re
import ssl
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyconnect.errors import ConnectError

__all__ = [
    "KEY_PASSWORD_VARIABLE",
    "PASSWORD_VARIABLE",
    "RestAccess",
    "RestClientError",
    "add_rest_access_arguments",
    "call_json",
    "get_json",
]

PASSWORD_VARIABLE = "PYCONNECT_REST_PASSWORD"
KEY_PASSWORD_VARIABLE = "PYCONNECT_REST_KEY_PASSWORD"
_MAX_ERROR_BODY = 64 * 1024
_SSL_SOURCE = re.compile(r"\s*\(_ssl\.c:\d+\)")


class RestClientError(ConnectError):
    """The worker could not be read, or how to reach it is unusable; the message is one line;
    ``status_code`` is the worker's HTTP status when it answered one."""

    def __init__(self, message: str, http_status: int | None = None) -> None:
        super().__init__(_one_line(message))
        self.status_code = http_status


@dataclass(frozen=True)
class RestAccess:
    """How to reach a worker: TLS files (PEM) and basic-auth credentials; all empty means plain access.

    ``certfile`` may hold the key too (then ``keyfile`` is ``None``); ``key_password`` decrypts an encrypted
    key. Passwords are left out of the ``repr``.
    """

    cafile: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    key_password: str | None = field(default=None, repr=False)
    user: str | None = None
    password: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.keyfile is not None and self.certfile is None:
            raise RestClientError("--rest-key needs --rest-cert (the client certificate of that key)")
        if self.user is not None:
            if not self.user or ":" in self.user:
                raise RestClientError(
                    f"--rest-user {self.user!r}: a basic-auth user is not empty and has no ':'"
                )
            if self.password is None:
                raise RestClientError(
                    f"--rest-user {self.user} needs a password: --rest-password-file FILE or {PASSWORD_VARIABLE}"
                )

    @classmethod
    def from_args(cls, args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> RestAccess:
        """The access given by the options of :func:`add_rest_access_arguments` (and the environment).

        The password is the first line of ``--rest-password-file`` or else ``PYCONNECT_REST_PASSWORD``,
        and is only read with ``--rest-user``; a password file without ``--rest-user`` is an error. The
        key password likewise comes from ``--rest-key-password-file`` or ``PYCONNECT_REST_KEY_PASSWORD``.
        Every file named must be readable; :class:`RestClientError` otherwise.
        """
        env = os.environ if environ is None else environ
        if getattr(args, "rest_password", None) is not None:
            raise RestClientError(
                f"--rest-password is not accepted (a password on the command line is visible to every user of "
                f"the host): give --rest-password-file FILE or {PASSWORD_VARIABLE}"
            )
        user = getattr(args, "rest_user", None)
        password_file = getattr(args, "rest_password_file", None)
        if password_file is not None and user is None:
            raise RestClientError("--rest-password-file needs --rest-user")
        password = None
        if user is not None:
            password = (
                _first_line(password_file, "--rest-password-file")
                if password_file is not None
                else env.get(PASSWORD_VARIABLE)
            )
        key_password_file = getattr(args, "rest_key_password_file", None)
        key_password = (
            _first_line(key_password_file, "--rest-key-password-file")
            if key_password_file is not None
            else env.get(KEY_PASSWORD_VARIABLE)
        )
        files = {
            "--rest-cacert": getattr(args, "rest_cacert", None),
            "--rest-cert": getattr(args, "rest_cert", None),
            "--rest-key": getattr(args, "rest_key", None),
        }
        for option, path in files.items():
            if path is not None:
                _check_readable(path, option)
        return cls(
            cafile=files["--rest-cacert"],
            certfile=files["--rest-cert"],
            keyfile=files["--rest-key"],
            key_password=key_password if files["--rest-cert"] is not None else None,
            user=user,
            password=password,
        )

    def ssl_context(self) -> ssl.SSLContext:
        """A client context verifying the worker against ``cafile`` (else the system's CAs) and presenting
        the client certificate, if any; unusable files are a :class:`RestClientError` naming the option."""
        try:
            context = ssl.create_default_context(cafile=self.cafile)
        except (OSError, ValueError) as exc:
            raise RestClientError(f"--rest-cacert {self.cafile}: {_reason(exc)}") from None
        if self.certfile is not None:
            key = self.keyfile or self.certfile

            def no_key_password() -> str:
                raise RestClientError(
                    f"the key in {key} is encrypted: give its password with --rest-key-password-file FILE "
                    f"or {KEY_PASSWORD_VARIABLE}"
                )

            try:
                context.load_cert_chain(
                    self.certfile, self.keyfile, password=self.key_password or no_key_password
                )
            except (OSError, ValueError) as exc:
                which = (
                    self.certfile
                    if self.keyfile is None
                    else f"{self.certfile} with --rest-key {self.keyfile}"
                )
                reason = _reason(exc)
                if reason == "[SSL] PEM lib":
                    reason += " (not PEM, no key, or a wrong key password)"
                raise RestClientError(
                    f"--rest-cert {which}: cannot load the certificate and key: {reason}"
                ) from None
        return context

    def headers(self) -> dict[str, str]:
        """The request headers: ``Accept`` and, with a user, ``Authorization: Basic``."""
        headers = {"Accept": "application/json"}
        if self.user is not None:
            token = base64.b64encode(f"{self.user}:{self.password or ''}".encode()).decode("ascii")
            headers["Authorization"] = f"Basic {token}"
        return headers


def add_rest_access_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of a secured worker (see the module docstring) to ``parser``, in their own group."""
    group = parser.add_argument_group(
        "secured worker (with --url)",
        f"HTTPS and basic auth of the worker's REST API. The password comes from --rest-password-file or "
        f"the environment variable {PASSWORD_VARIABLE}, never from the command line.",
    )
    group.add_argument(
        "--rest-cacert", metavar="FILE", help="CA certificate(s), PEM, that signed the worker's certificate"
    )
    group.add_argument(
        "--rest-cert",
        metavar="FILE",
        help="client certificate, PEM, for a listener with ssl.client.auth=required (may hold the key too)",
    )
    group.add_argument("--rest-key", metavar="FILE", help="the client certificate's private key, PEM")
    group.add_argument(
        "--rest-key-password-file",
        metavar="FILE",
        help=f"file whose first line decrypts --rest-key (or {KEY_PASSWORD_VARIABLE})",
    )
    group.add_argument("--rest-user", metavar="USER", help="basic-auth user (BasicAuthSecurityRestExtension)")
    group.add_argument(
        "--rest-password-file",
        metavar="FILE",
        help=f"file whose first line is the password of --rest-user (or {PASSWORD_VARIABLE})",
    )
    # Refused by RestAccess.from_args without echoing it; also keeps argparse from taking
    # "--rest-password SECRET" as an abbreviation of --rest-password-file.
    group.add_argument("--rest-password", help=argparse.SUPPRESS)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def get_json(url: str, timeout_s: float, access: RestAccess) -> Any:
    """The decoded JSON body of ``GET url`` (a 2xx answer); :class:`RestClientError` otherwise."""
    return call_json("GET", url, timeout_s, access)


def call_json(method: str, url: str, timeout_s: float, access: RestAccess, body: Any = None) -> Any:
    """The decoded JSON body of ``method url`` with ``body`` sent as JSON when not ``None`` (a 2xx answer;
    ``None`` for an empty one, as ``PUT /connectors/{name}/stop`` gives); :class:`RestClientError`
    otherwise, one line naming the method, the URL and the worker's message."""
    handlers: list[urllib.request.BaseHandler] = [_NoRedirects()]
    if url.lower().startswith("https://"):
        handlers.append(urllib.request.HTTPSHandler(context=access.ssl_context()))
    opener = urllib.request.build_opener(*handlers)
    headers = access.headers()
    data = None
    if body is not None:
        data = json.dumps(body).encode("utf-8")
        headers = {**headers, "Content-Type": "application/json"}
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with opener.open(request, timeout=timeout_s) as answer:
            payload = answer.read()
    except urllib.error.HTTPError as exc:
        raise _http_error(method, url, exc, access) from None
    except urllib.error.URLError as exc:
        raise _transport_error(url, exc.reason, access, timeout_s) from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise _transport_error(url, exc, access, timeout_s) from None
    if not payload.strip():
        return None
    try:
        return json.loads(payload)
    except ValueError:
        raise RestClientError(f"{method} {url} did not answer JSON") from None


def _http_error(method: str, url: str, exc: urllib.error.HTTPError, access: RestAccess) -> RestClientError:
    message = _worker_message(exc)
    if exc.code in (401, 403):
        who = (
            f"the credentials of user {access.user} were refused"
            if access.user is not None
            else "the worker requires credentials (--rest-user with --rest-password-file or "
            f"{PASSWORD_VARIABLE})"
        )
        return RestClientError(f"{method} {url} answered {exc.code}: {who}: {message}", exc.code)
    return RestClientError(f"{method} {url} answered {exc.code}: {message}", exc.code)


def _worker_message(exc: urllib.error.HTTPError) -> str:
    """The ``message`` of a Connect error body, else the first line of a text body, else the HTTP reason."""
    try:
        body = exc.read(_MAX_ERROR_BODY)
    except (OSError, http.client.HTTPException):
        body = b""
    try:
        document = json.loads(body)
    except ValueError:
        document = None
    if isinstance(document, dict) and document.get("message"):
        return _one_line(str(document["message"]))
    content_type = exc.headers.get("Content-Type", "") if exc.headers else ""
    text = body.decode("utf-8", "replace").strip() if content_type.startswith("text/plain") else ""
    return _one_line(text) if text else str(exc.reason)


def _transport_error(url: str, reason: object, access: RestAccess, timeout_s: float) -> RestClientError:
    if isinstance(reason, ssl.SSLCertVerificationError):
        hint = (
            ""
            if access.cafile is not None
            else " (give the CA of the worker's certificate with --rest-cacert)"
        )
        detail = reason.verify_message or _reason(reason)
        return RestClientError(f"TLS failure with {url}: certificate verify failed: {detail}{hint}")
    if isinstance(reason, ssl.SSLError):
        name = str(reason.reason or _reason(reason))
        hint = ""
        if access.certfile is None and ("CERTIFICATE_REQUIRED" in name or "HANDSHAKE_FAILURE" in name):
            hint = " (the worker requires a client certificate: --rest-cert and --rest-key)"
        elif "WRONG_VERSION_NUMBER" in name or "RECORD_LAYER_FAILURE" in name:
            hint = " (is it an https listener?)"
        return RestClientError(f"TLS failure with {url}: {name}{hint}")
    if isinstance(reason, TimeoutError):
        return RestClientError(f"cannot reach {url}: timed out after {timeout_s:g}s")
    if (
        isinstance(reason, (ConnectionResetError, http.client.RemoteDisconnected))
        and url.lower().startswith("https://")
        and access.certfile is None
    ):
        return RestClientError(
            f"TLS failure with {url}: the worker closed the connection without answering, as a listener with "
            "ssl.client.auth=required does to a client without a certificate (--rest-cert, --rest-key)"
        )
    return RestClientError(f"cannot reach {url}: {_reason(reason)}")


def _first_line(path: str, option: str) -> str:
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as exc:
        raise RestClientError(f"{option} {path}: {_reason(exc)}") from None
    except UnicodeDecodeError:
        raise RestClientError(f"{option} {path}: not UTF-8 text") from None
    lines = text.splitlines()
    if not lines or not lines[0]:
        raise RestClientError(f"{option} {path}: the first line is empty")
    return lines[0]


def _check_readable(path: str, option: str) -> None:
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise RestClientError(f"{option} {path}: {_reason(exc)}") from None


def _reason(exc: object) -> str:
    if isinstance(exc, OSError) and exc.strerror and not isinstance(exc, ssl.SSLError):
        return exc.strerror
    text = _SSL_SOURCE.sub("", str(exc)).strip()
    return _one_line(text) if text else type(exc).__name__


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else text.strip()
