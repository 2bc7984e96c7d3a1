"""TLS listeners, the basic-auth REST extension and CORS, as Java's RestServer applies them.

TLS (Java ``SSLUtils``): the ``listeners.https.``-prefixed ``ssl.*`` keys are used if any key has that
prefix, else the top-level ``ssl.*`` keys ("all or nothing"). The same settings build the server
context of every ``https://`` listener and the client context the forwarding client uses, so workers
trust each other through one truststore (and present their keystore when client auth is required).
Stores: ``PEM``, ``PKCS12`` and ``JKS`` (Java's default type), file or inline PEM, read by
:mod:`pyconnect.config.tls` with Java's rules, as for the Kafka clients. ``ssl.client.auth`` is
none | requested | required; ``ssl.endpoint.identification.algorithm`` (default ``https``, empty
disables) controls hostname checks by the client.

Basic auth: ``rest.extension.classes`` naming Java's ``BasicAuthSecurityRestExtension`` reads the JAAS
file given by env ``PYCONNECT_JAAS_CONFIG`` or ``-Djava.security.auth.login.config=...`` in env
``KAFKA_OPTS``; its ``KafkaConnect`` entry must use ``PropertyFileLoginModule`` with a ``file`` option
naming a Java properties file of ``user: password`` lines. As in ``JaasBasicAuthFilter``: an empty
users file permits everything; ``POST /connectors/{c}/tasks`` and ``PUT /connectors/{c}/fence``
(KIP-507 signed internal requests) skip authentication; a failed login answers 401 with the text
``User cannot access the resource.`` and no ``WWW-Authenticate`` header. Unlike Java, an unreadable
JAAS or users file fails at startup instead of failing every request.

CORS (Jetty 9.4 ``CrossOriginFilter`` as configured by RestServer): only when
``access.control.allow.origin`` is set. Allowed methods default to GET,POST,HEAD, allowed headers to
X-Requested-With,Content-Type,Accept,Origin, credentials allowed, preflight max age 1800 s; the
preflight continues to the application, which answers OPTIONS itself (200 with ``Allow``); so, as
in Java, with basic auth enabled a preflight without credentials answers 401 (with the CORS headers).
"""

from __future__ import annotations

import base64
import binascii
import re
import shlex
import ssl
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Middleware

from pyconnect.config import tls
from pyconnect.errors import ConfigError

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

HTTPS_PREFIX = "listeners.https."
BASIC_AUTH_EXTENSION = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
PROPERTY_FILE_LOGIN_MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
JAAS_ENV = "PYCONNECT_JAAS_CONFIG"
UNAUTHORIZED = "User cannot access the resource."


# ----------------------------------------------------------------------------------------------- TLS


class SslSettings:
    """The ``ssl.*`` values in force for the REST server and its client, with the prefix they came from.

    Stores are read by :mod:`pyconnect.config.tls` (PEM, PKCS12 and JKS, Java's rules); its errors
    become :class:`ConfigError` naming the prefixed keys."""

    def __init__(self, values: Mapping[str, Any], prefix: str = "") -> None:
        self.values = {k: ("" if v is None else str(v)) for k, v in values.items()}
        self.prefix = prefix

    @classmethod
    def from_worker_config(cls, originals: Mapping[str, Any]) -> SslSettings:
        prefixed = {k[len(HTTPS_PREFIX) :]: v for k, v in originals.items() if k.startswith(HTTPS_PREFIX)}
        if prefixed:
            return cls(prefixed, HTTPS_PREFIX)
        return cls({k: v for k, v in originals.items() if k.startswith("ssl.")})

    def get(self, key: str, default: str = "") -> str:
        return self.values.get(key, default).strip()

    def name(self, key: str) -> str:
        return self.prefix + key

    def _config_error(self, exc: tls.TlsConfigError) -> ConfigError:
        message = str(exc)
        if self.prefix:
            message = _SSL_KEY.sub(lambda m: self.prefix + m.group(0), message)
        return ConfigError(message)

    def _key_material(self) -> tls.KeyMaterial | None:
        try:
            return tls.keystore_material(self.values)
        except tls.TlsConfigError as exc:
            raise self._config_error(exc) from None

    def _trusted_pem(self) -> str | None:
        try:
            certificates = tls.truststore_certificates(self.values)
        except tls.TlsConfigError as exc:
            raise self._config_error(exc) from None
        return None if certificates is None else tls.certificates_pem(certificates)

    def _load_key(self, ctx: ssl.SSLContext, material: tls.KeyMaterial) -> None:
        try:
            tls.load_key_material(ctx, material)
        except tls.TlsConfigError as exc:
            raise self._config_error(exc) from None

    def server_context(self) -> ssl.SSLContext:
        """The context of every ``https://`` listener; needs a keystore."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        material = self._key_material()
        if material is None:
            raise ConfigError(
                f"Missing required configuration {self.name('ssl.keystore.location')} "
                "for an https:// listener"
            )
        self._load_key(ctx, material)
        client_auth = self.get("ssl.client.auth", "none").lower() or "none"
        if client_auth not in ("none", "requested", "required"):
            raise ConfigError(f"Invalid value {client_auth} for configuration {self.name('ssl.client.auth')}")
        trusted = self._trusted_pem()
        if trusted is not None:
            ctx.load_verify_locations(cadata=trusted)
            ctx.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
        if client_auth != "none":
            if trusted is None:
                raise ConfigError(
                    f"Missing required configuration {self.name('ssl.truststore.location')} "
                    f"for ssl.client.auth={client_auth}"
                )
            ctx.verify_mode = ssl.CERT_REQUIRED if client_auth == "required" else ssl.CERT_OPTIONAL
        return ctx

    def client_context(self) -> ssl.SSLContext:
        """What the forwarding client uses for ``https://`` targets (Java ``RestClient``): the same
        rules as a Kafka client's context."""
        try:
            return tls.client_ssl_context(self.values)
        except tls.TlsConfigError as exc:
            raise self._config_error(exc) from None


_SSL_KEY = re.compile(r"(?<![\w.])ssl\.(?:keystore|truststore|key|endpoint)\.[a-z.]*[a-z]")


# ------------------------------------------------------------------------------------------ basic auth

_INTERNAL_REQUESTS = (
    ("POST", re.compile(r"/?connectors/([^/]+)/tasks/?")),
    ("PUT", re.compile(r"/?connectors/[^/]+/fence/?")),
)


def jaas_config_path(environ: Mapping[str, str]) -> str | None:
    """``PYCONNECT_JAAS_CONFIG``, else ``-Djava.security.auth.login.config=`` inside ``KAFKA_OPTS``."""
    if environ.get(JAAS_ENV):
        return environ[JAAS_ENV]
    try:
        words = shlex.split(environ.get("KAFKA_OPTS", ""))
    except ValueError:
        words = environ.get("KAFKA_OPTS", "").split()
    for word in words:
        if word.startswith("-Djava.security.auth.login.config="):
            return word.split("=", 1)[1].lstrip("=")
    return None


def parse_jaas_file(text: str, entry: str = "KafkaConnect") -> list[tuple[str, str, dict[str, str]]]:
    """The login modules ``(class, flag, options)`` of one entry of a JAAS configuration file."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"(?m)//.*$", " ", text)
    text = re.sub(r"(?m)^\s*#.*$", " ", text)
    match = re.search(r"(?:^|[\s;}])" + re.escape(entry) + r"\s*\{(.*?)\}\s*;", text, flags=re.S)
    if match is None:
        raise ConfigError(f"JAAS configuration has no entry named {entry}")
    modules = []
    for part in match.group(1).split(";"):
        tokens = re.findall(r'[^\s=]+\s*=\s*"(?:[^"\\]|\\.)*"|[^\s=]+\s*=\s*[^\s"]+|\S+', part)
        if not tokens:
            continue
        if len(tokens) < 2:
            raise ConfigError(f"Malformed login module in JAAS entry {entry}: {part.strip()}")
        options: dict[str, str] = {}
        for token in tokens[2:]:
            if "=" not in token:
                raise ConfigError(f"Malformed option {token} in JAAS entry {entry}")
            key, value = (s.strip() for s in token.split("=", 1))
            if value.startswith('"') and value.endswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            options[key] = value
        modules.append((tokens[0], tokens[1].lower(), options))
    return modules


def parse_properties(text: str) -> dict[str, str]:
    """A ``java.util.Properties`` file: ``key=value``, ``key: value`` or ``key value`` lines."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].lstrip()
        i += 1
        while line.endswith("\\") and not line.endswith("\\\\") and i < len(lines):
            line = line[:-1] + lines[i].lstrip()
            i += 1
        if not line or line[0] in "#!":
            continue
        match = re.match(r"((?:[^\\:=\s]|\\.)*)\s*[:=]?\s*(.*)$", line)
        if match is None:
            continue
        key, value = (re.sub(r"\\(.)", r"\1", g) for g in match.groups())
        out[key] = value
    return out


class BasicAuth:
    """Java's ``JaasBasicAuthFilter`` over one ``PropertyFileLoginModule`` users file."""

    def __init__(self, users: Mapping[str, str]) -> None:
        self.users = dict(users)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> BasicAuth:
        path = jaas_config_path(environ)
        if not path:
            raise ConfigError(
                f"{BASIC_AUTH_EXTENSION} needs a JAAS configuration: set {JAAS_ENV} or "
                "-Djava.security.auth.login.config in KAFKA_OPTS"
            )
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise ConfigError(f"Cannot read JAAS configuration {path}: {exc.strerror or exc}") from None
        modules = parse_jaas_file(text)
        if len(modules) != 1 or modules[0][0] != PROPERTY_FILE_LOGIN_MODULE:
            raise ConfigError(
                f"JAAS entry KafkaConnect in {path} must hold exactly one {PROPERTY_FILE_LOGIN_MODULE}"
            )
        users_file = modules[0][2].get("file", "").strip()
        if not users_file:
            raise ConfigError("Property Credentials file must be specified")
        try:
            users = parse_properties(Path(users_file).read_text(encoding="latin-1"))
        except OSError:
            raise ConfigError("Error loading Property Credentials file") from None
        return cls(users)

    def authenticate(self, header: str | None) -> bool:
        if not self.users:
            return True
        if not header:
            return False
        space = header.find(" ")
        if space <= 0 or header[:space].lower() != "basic":
            return False
        try:
            decoded = base64.b64decode(header[space + 1 :], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return False
        username, sep, password = decoded.partition(":")
        if not sep:
            return False
        return self.users.get(username) == password

    @staticmethod
    def is_internal(request: web.Request) -> bool:
        return any(request.method == m and p.fullmatch(request.path) for m, p in _INTERNAL_REQUESTS)

    def middleware(self) -> Middleware:
        @web.middleware
        async def basic_auth(request: web.Request, handler: Handler) -> web.StreamResponse:
            unmatched = request.match_info.http_exception
            auto_options = request.method == "OPTIONS" and isinstance(unmatched, web.HTTPMethodNotAllowed)
            if (unmatched is None or auto_options) and not self.is_internal(request):
                if not self.authenticate(request.headers.get("Authorization")):
                    return web.Response(status=401, text=UNAUTHORIZED)
            return await handler(request)

        return basic_auth


def rest_extension_middlewares(classes: list[str], environ: Mapping[str, str]) -> list[Middleware]:
    out: list[Middleware] = []
    for name in classes:
        if name.strip() != BASIC_AUTH_EXTENSION:
            raise ConfigError(
                f"Invalid value {name} for configuration rest.extension.classes: "
                f"only {BASIC_AUTH_EXTENSION} is supported"
            )
        out.append(BasicAuth.from_environment(environ).middleware())
    return out


@web.middleware
async def options_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """OPTIONS on a known path answers 200 with ``Allow`` (JAX-RS's automatic OPTIONS)."""
    unmatched = request.match_info.http_exception
    if request.method == "OPTIONS" and isinstance(unmatched, web.HTTPMethodNotAllowed):
        allowed = sorted({*unmatched.allowed_methods, "OPTIONS"})
        return web.Response(status=200, headers={"Allow": ",".join(allowed)})
    return await handler(request)


# ------------------------------------------------------------------------------------------------ CORS

_SIMPLE_METHODS = ("GET", "POST", "HEAD")
_DEFAULT_ALLOWED_HEADERS = ("X-Requested-With", "Content-Type", "Accept", "Origin")


class CrossOrigin:
    """Jetty 9.4 ``CrossOriginFilter`` with RestServer's parameters."""

    def __init__(self, allowed_origins: str, allowed_methods: str = "") -> None:
        origins = [o.strip() for o in allowed_origins.split(",") if o.strip()]
        self.any_origin = "*" in origins
        self.patterns = [
            re.compile(re.escape(o).replace(r"\*", ".*")) if "*" in o else re.compile(re.escape(o))
            for o in origins
        ]
        methods = [m.strip() for m in allowed_methods.split(",") if m.strip()]
        self.methods = methods or list(_SIMPLE_METHODS)
        self.headers = list(_DEFAULT_ALLOWED_HEADERS)
        self.max_age = 1800

    def origin_matches(self, origin: str) -> bool:
        if self.any_origin:
            return True
        return any(p.fullmatch(o) for o in origin.split(" ") if o for p in self.patterns)

    def headers_for(self, request: web.Request) -> dict[str, str]:
        origin = request.headers.get("Origin")
        if origin is None or not self.origin_matches(origin):
            return {}
        requested_method = request.headers.get("Access-Control-Request-Method")
        simple = request.method in _SIMPLE_METHODS and requested_method is None
        out = {"Access-Control-Allow-Origin": origin}
        if not simple and request.method == "OPTIONS" and requested_method is not None:
            if requested_method.strip() not in self.methods:
                return {}
            requested = [
                h.strip() for h in request.headers.get("Access-Control-Request-Headers", "").split(",")
            ]
            allowed = {h.lower() for h in self.headers}
            if any(h and h.lower() not in allowed for h in requested):
                return {}
            out["Access-Control-Allow-Credentials"] = "true"
            out["Access-Control-Max-Age"] = str(self.max_age)
            out["Access-Control-Allow-Methods"] = ",".join(self.methods)
            out["Access-Control-Allow-Headers"] = ",".join(self.headers)
        else:
            out["Access-Control-Allow-Credentials"] = "true"
        return out

    def middleware(self) -> Middleware:
        @web.middleware
        async def cors(request: web.Request, handler: Handler) -> web.StreamResponse:
            headers = self.headers_for(request)
            response = await handler(request)
            if headers:
                response.headers.update(headers)
                if not self.any_origin:
                    response.headers.add("Vary", "Origin")
            return response

        return cors
