"""SASL/OAUTHBEARER login as Java's ``OAuthBearerLoginModule`` does it: the pure core.

Size: over 600 lines because the OAUTHBEARER client keys, their validation and the token request each
follow Java's login callback handler, which they mirror key by key.

Who calls: :mod:`pyconnect.config.client_configs` turns a Java client config whose ``sasl.mechanism`` is
``OAUTHBEARER`` into :class:`OAuthLoginSettings` (:func:`oauth_settings`); the token provider of
:mod:`pyconnect.kafka.oauth_login` holds one :class:`TokenCache` per client and does the IO (the HTTP
POST of :mod:`pyconnect.kafka.token_endpoint`). Nothing here reads a clock, sleeps, draws randomness or
opens a socket: times are milliseconds passed in, jitter is a number in ``[0, 1)`` passed in.

**Two logins**, chosen as Java chooses them by ``sasl.login.callback.handler.class``:

* ``org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler``: the client
  credentials grant (RFC 6749 4.4). The client id and secret come from
  ``sasl.oauthbearer.client.credentials.client.id`` / ``.client.secret``, else the JAAS options
  ``clientId`` / ``clientSecret``; the scope from ``sasl.oauthbearer.scope``, else JAAS ``scope`` (Kafka
  4's ``ConfigOrJaas`` order). The request (:func:`token_request`) is Java's ``ClientSecretRequestFormatter``:
  ``Authorization: Basic base64(id:secret)`` (each URL-encoded first when
  ``sasl.oauthbearer.header.urlencode=true``), body ``grant_type=client_credentials[&scope=<urlencoded>]``.
  ``sasl.oauthbearer.token.endpoint.url`` is ``http(s)://`` (POST) or ``file:`` (the token is read from
  the file, Java's ``FileJwtRetriever``). For an https endpoint the TLS settings are the ``ssl.*`` JAAS
  options (Java's ``JaasOptionsUtils.createSSLSocketFactory`` reads them there, not from the client's own
  ``ssl.*``), with Java's defaults (the system trust store, hostname verification on).
* none (Java's default for OAUTHBEARER, ``OAuthBearerUnsecuredLoginCallbackHandler``): an unsigned JWS
  built from the JAAS options ``unsecuredLoginStringClaim_<name>``, ``unsecuredLoginNumberClaim_<name>``,
  ``unsecuredLoginListClaim_<name>`` (first character is the separator), ``unsecuredLoginLifetimeSeconds``
  (3600), ``unsecuredLoginPrincipalClaimName`` (``sub``), ``unsecuredLoginScopeClaimName`` (``scope``);
  for brokers that validate with the unsecured validator (tests, simple setups).

JAAS ``extension_<name>="<value>"`` options become SASL extensions (KIP-342) in both cases.

**Responses** (:func:`parse_token_response`, Java ``HttpJwtRetriever``/``JwtResponseParser``): 200 or 201
with a JSON body holding ``access_token`` (else ``id_token``); 400, 401, 402, 403, 404, 405, 406, 407
are final; any other status and any network error are retried. The token is then checked as Java's
``ClientJwtValidator`` does (:func:`parse_jwt`, signature not verified: that is the broker's job): three
sections, a JSON payload, a numeric ``exp``, a non-empty string subject claim
(``sasl.oauthbearer.sub.claim.name``, ``sub``), optional ``iat`` and scope claim
(``sasl.oauthbearer.scope.claim.name``, ``scope``; a string of space-separated scopes or a list).

**Retries** (:func:`retry_wait_ms`, Java ``Retry``): after the n-th failed attempt wait
``sasl.login.retry.backoff.ms * 2^(n-1)`` capped by what remains of ``sasl.login.retry.backoff.max.ms``
since the first attempt; stop when nothing remains. Each attempt is bounded by
``sasl.login.connect.timeout.ms`` and ``sasl.login.read.timeout.ms`` (Java leaves them unbounded; here
10 s and 30 s when unset, so a login never hangs).

**Refresh** (:func:`refresh_at_ms`, Java ``ExpiringCredentialRefreshingLogin.refreshMs``): a token valid
from ``start`` to ``expire`` is replaced at ``start + (expire - start) * (factor + jitter * r)``
(``sasl.login.refresh.window.factor`` 0.8, ``.window.jitter`` 0.05), but not later than
``sasl.login.refresh.buffer.seconds`` (300) before expiry nor sooner than
``sasl.login.refresh.min.period.seconds`` (60) from now; when the remaining life is shorter than those
two buffers together, both are ignored and the window factor applies to the remaining life. A refresh
that fails keeps the current token while it is unexpired and is tried again 10 s later (Java's
``DELAY_SECONDS_BEFORE_NEXT_RETRY_WHEN_RELOGIN_FAILS``). :class:`TokenCache` holds that state.

**Errors** are :class:`ClientConfigError` (a setting cannot be honoured; names the key) and
:class:`TokenEndpointError` (the endpoint refused or could not be reached; names the endpoint URL and
what it said). No message, ``repr`` or ``str`` here ever contains the client secret or a token.
"""

from __future__ import annotations

import base64
import json
import math
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyconnect.config.types import Password
from pyconnect.errors import ConnectError

MECHANISM = "OAUTHBEARER"
LOGIN_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
LOGIN_CALLBACK_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
UNSECURED_LOGIN_CALLBACK_HANDLER = "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler"
_LEGACY_LOGIN_CALLBACK_HANDLER = (
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler"
)
JWT_RETRIEVERS = {
    "org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever": "default",
    "org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever": "client_credentials",
    "org.apache.kafka.common.security.oauthbearer.FileJwtRetriever": "file",
}
JWT_VALIDATORS = (
    "org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator",
    "org.apache.kafka.common.security.oauthbearer.ClientJwtValidator",
)

TOKEN_ENDPOINT_URL = "sasl.oauthbearer.token.endpoint.url"
CLIENT_ID = "sasl.oauthbearer.client.credentials.client.id"
CLIENT_SECRET = "sasl.oauthbearer.client.credentials.client.secret"
SCOPE = "sasl.oauthbearer.scope"
HEADER_URLENCODE = "sasl.oauthbearer.header.urlencode"
SCOPE_CLAIM_NAME = "sasl.oauthbearer.scope.claim.name"
SUB_CLAIM_NAME = "sasl.oauthbearer.sub.claim.name"
JWT_RETRIEVER_CLASS = "sasl.oauthbearer.jwt.retriever.class"
JWT_VALIDATOR_CLASS = "sasl.oauthbearer.jwt.validator.class"
LOGIN_CALLBACK_HANDLER_CLASS = "sasl.login.callback.handler.class"
CONNECT_TIMEOUT_MS = "sasl.login.connect.timeout.ms"
READ_TIMEOUT_MS = "sasl.login.read.timeout.ms"
RETRY_BACKOFF_MS = "sasl.login.retry.backoff.ms"
RETRY_BACKOFF_MAX_MS = "sasl.login.retry.backoff.max.ms"
REFRESH_WINDOW_FACTOR = "sasl.login.refresh.window.factor"
REFRESH_WINDOW_JITTER = "sasl.login.refresh.window.jitter"
REFRESH_MIN_PERIOD_SECONDS = "sasl.login.refresh.min.period.seconds"
REFRESH_BUFFER_SECONDS = "sasl.login.refresh.buffer.seconds"
JAAS_CONFIG = "sasl.jaas.config"
ASSERTION_PREFIX = "sasl.oauthbearer.assertion."
"""The client assertion keys of Kafka 4 (4.3.1 has them): Java prefers them over the client secret; refused here."""

KEYS = (
    TOKEN_ENDPOINT_URL,
    CLIENT_ID,
    CLIENT_SECRET,
    SCOPE,
    HEADER_URLENCODE,
    SCOPE_CLAIM_NAME,
    SUB_CLAIM_NAME,
    JWT_RETRIEVER_CLASS,
    JWT_VALIDATOR_CLASS,
    LOGIN_CALLBACK_HANDLER_CLASS,
    CONNECT_TIMEOUT_MS,
    READ_TIMEOUT_MS,
    RETRY_BACKOFF_MS,
    RETRY_BACKOFF_MAX_MS,
    REFRESH_WINDOW_FACTOR,
    REFRESH_WINDOW_JITTER,
    REFRESH_MIN_PERIOD_SECONDS,
    REFRESH_BUFFER_SECONDS,
)
"""The client keys this login reads (besides ``sasl.jaas.config`` and ``sasl.mechanism``)."""

DEFAULT_CONNECT_TIMEOUT_MS = 10_000
DEFAULT_READ_TIMEOUT_MS = 30_000
RELOGIN_RETRY_DELAY_MS = 10_000
UNRETRYABLE_HTTP_CODES = frozenset({400, 401, 402, 403, 404, 405, 406, 407})
_SNIPPET = 100


class ClientConfigError(ValueError):
    """A client setting cannot be honoured; the message names the key (the same class the client
    config translation raises, see :mod:`pyconnect.config.client_configs`)."""


class TokenEndpointError(ConnectError):
    """The token endpoint refused the login or could not be reached (after the retries). ``retriable``
    says whether another attempt could succeed (network errors, 5xx), ``endpoint`` is the URL."""

    def __init__(self, message: str, endpoint: str, *, retriable: bool) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.retriable = retriable


# -- JAAS -------------------------------------------------------------------------------------------------


def parse_jaas_config(text: str, key: str = JAAS_CONFIG) -> tuple[str, str, dict[str, str]]:
    """The one login module of a client ``sasl.jaas.config`` value: ``(class, flag, options)``.

    Java's syntax: ``<class> <flag> (<name>=<value>)* ;`` where a value is a word or a double-quoted
    string (backslash escapes the next character). Exactly one module, as Java requires of a client.
    """
    tokens: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in "=;":
            tokens.append(ch)
            i += 1
        elif ch == '"':
            out, i = [], i + 1
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                out.append(text[i])
                i += 1
            if i >= n:
                raise ClientConfigError(f"Invalid value for configuration {key}: unterminated quoted string")
            tokens.append("\0" + "".join(out))  # quoted: never an operator
            i += 1
        else:
            start = i
            while i < n and not text[i].isspace() and text[i] not in '=;"':
                i += 1
            tokens.append(text[start:i])
    modules = []
    pos = 0
    while pos < len(tokens):
        if len(tokens) - pos < 2 or tokens[pos] in ("=", ";") or tokens[pos + 1] in ("=", ";"):
            raise ClientConfigError(
                f"Invalid value for configuration {key}: expected '<LoginModule> <flag> name=value ...;'"
            )
        module, flag = tokens[pos], tokens[pos + 1].lower()
        pos += 2
        options: dict[str, str] = {}
        while pos < len(tokens) and tokens[pos] != ";":
            if pos + 2 >= len(tokens) or tokens[pos + 1] != "=" or tokens[pos + 2] in ("=", ";"):
                raise ClientConfigError(
                    f"Invalid value for configuration {key}: malformed option near {tokens[pos].lstrip(chr(0))!r}"
                )
            options[tokens[pos].lstrip("\0")] = tokens[pos + 2].lstrip("\0")
            pos += 3
        if pos >= len(tokens):
            raise ClientConfigError(
                f"Invalid value for configuration {key}: JAAS config entry not terminated by semi-colon"
            )
        pos += 1
        modules.append((module, flag, options))
    if len(modules) != 1:
        raise ClientConfigError(
            f"Invalid value for configuration {key}: JAAS config property contains {len(modules)} login "
            "modules, should be 1 module"
        )
    return modules[0]


# -- settings ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RefreshConfig:
    """Java ``ExpiringCredentialRefreshConfig``: ``sasl.login.refresh.*``."""

    window_factor: float = 0.8
    window_jitter: float = 0.05
    min_period_seconds: int = 60
    buffer_seconds: int = 300


@dataclass(frozen=True)
class OAuthLoginSettings:
    """Everything one OAUTHBEARER login needs, validated. ``repr`` never shows the secret or TLS keys."""

    unsecured: bool
    endpoint: str = ""
    client_id: str = ""
    client_secret: str = field(default="", repr=False)
    scope: str | None = None
    urlencode_header: bool = False
    scope_claim_name: str = "scope"
    sub_claim_name: str = "sub"
    connect_timeout_ms: int = DEFAULT_CONNECT_TIMEOUT_MS
    read_timeout_ms: int = DEFAULT_READ_TIMEOUT_MS
    retry_backoff_ms: int = 100
    retry_backoff_max_ms: int = 10_000
    refresh: RefreshConfig = RefreshConfig()
    tls: Mapping[str, str] = field(default_factory=dict, repr=False)
    extensions: Mapping[str, str] = field(default_factory=dict)
    unsecured_options: Mapping[str, str] = field(default_factory=dict)

    @property
    def from_file(self) -> bool:
        return self.endpoint.startswith("file:")

    @property
    def file_path(self) -> str:
        """The local path of a ``file:`` endpoint."""
        return urllib.parse.unquote(urllib.parse.urlparse(self.endpoint).path)


def _plain(value: Any) -> str | None:
    if isinstance(value, Password):
        value = value.value
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _number(config: Mapping[str, Any], key: str, default: float, low: float, high: float) -> float:
    text = _plain(config.get(key))
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ClientConfigError(f"Invalid value {text} for configuration {key}: Not a number") from None
    if not low <= value <= high or math.isnan(value):
        raise ClientConfigError(
            f"Invalid value {text} for configuration {key}: Value must be in the range [{low:g}, {high:g}]"
        )
    return value


def _whole(config: Mapping[str, Any], key: str, default: int, low: int, high: int = 2**63 - 1) -> int:
    text = _plain(config.get(key))
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ClientConfigError(
            f"Invalid value {text} for configuration {key}: Not a number of type LONG"
        ) from None
    if value < low:
        raise ClientConfigError(f"Invalid value {text} for configuration {key}: Value must be at least {low}")
    if value > high:
        raise ClientConfigError(
            f"Invalid value {text} for configuration {key}: Value must be no more than {high}"
        )
    return value


def oauth_settings(config: Mapping[str, Any]) -> OAuthLoginSettings:
    """The OAUTHBEARER login of a Java client config (``sasl.mechanism=OAUTHBEARER``); see the module
    docstring for the keys, their precedence and defaults. Raises :class:`ClientConfigError`."""
    jaas = _plain(config.get(JAAS_CONFIG))
    if jaas is None:
        raise ClientConfigError(
            f"Invalid configuration {JAAS_CONFIG}: OAUTHBEARER needs '{LOGIN_MODULE} required ...;'"
        )
    module, _flag, options = parse_jaas_config(jaas)
    if module.rsplit(".", 1)[-1] != "OAuthBearerLoginModule":
        raise ClientConfigError(
            f"Invalid value for configuration {JAAS_CONFIG}: SASL mechanism OAUTHBEARER needs {LOGIN_MODULE}, "
            f"not {module}"
        )
    extensions = {k[len("extension_") :]: v for k, v in options.items() if k.startswith("extension_")}
    refresh = RefreshConfig(
        window_factor=_number(config, REFRESH_WINDOW_FACTOR, 0.8, 0.5, 1.0),
        window_jitter=_number(config, REFRESH_WINDOW_JITTER, 0.05, 0.0, 0.25),
        min_period_seconds=_whole(config, REFRESH_MIN_PERIOD_SECONDS, 60, 0, 900),
        buffer_seconds=_whole(config, REFRESH_BUFFER_SECONDS, 300, 0, 3600),
    )
    handler = _plain(config.get(LOGIN_CALLBACK_HANDLER_CLASS))
    if handler is None or handler == UNSECURED_LOGIN_CALLBACK_HANDLER:
        unsecured = {k: v for k, v in options.items() if k.startswith("unsecuredLogin")}
        settings = OAuthLoginSettings(
            unsecured=True, refresh=refresh, extensions=extensions, unsecured_options=unsecured
        )
        unsecured_claims(settings, 0)  # fail now on a bad option, not at the first connection
        return settings
    if handler not in (LOGIN_CALLBACK_HANDLER, _LEGACY_LOGIN_CALLBACK_HANDLER):
        raise ClientConfigError(
            f"Invalid value {handler} for configuration {LOGIN_CALLBACK_HANDLER_CLASS}: only "
            f"{LOGIN_CALLBACK_HANDLER} (or none, the unsecured login) is supported here"
        )
    retriever = _plain(config.get(JWT_RETRIEVER_CLASS))
    if retriever is not None and retriever not in JWT_RETRIEVERS:
        raise ClientConfigError(
            f"Invalid value {retriever} for configuration {JWT_RETRIEVER_CLASS}: supported are "
            + ", ".join(JWT_RETRIEVERS)
        )
    validator = _plain(config.get(JWT_VALIDATOR_CLASS))
    if validator is not None and validator not in JWT_VALIDATORS:
        raise ClientConfigError(
            f"Invalid value {validator} for configuration {JWT_VALIDATOR_CLASS}: supported are "
            + ", ".join(JWT_VALIDATORS)
        )
    assertion = sorted(
        k for k, v in config.items() if k.startswith(ASSERTION_PREFIX) and _plain(v) is not None
    )
    if assertion:
        raise ClientConfigError(
            f"Invalid configuration {assertion[0]}: client assertion authentication (a signed JWT instead of "
            "the client secret) is not supported here; use the client secret"
        )
    endpoint = _plain(config.get(TOKEN_ENDPOINT_URL))
    if endpoint is None:
        raise ClientConfigError(
            f"Invalid configuration {TOKEN_ENDPOINT_URL}: required by {LOGIN_CALLBACK_HANDLER}"
        )
    scheme = urllib.parse.urlparse(endpoint).scheme.lower()
    if scheme not in ("http", "https", "file"):
        raise ClientConfigError(
            f"Invalid value {endpoint} for configuration {TOKEN_ENDPOINT_URL}: expected an http, https or file URL"
        )
    if retriever is not None and JWT_RETRIEVERS[retriever] == "file" and scheme != "file":
        raise ClientConfigError(
            f"Invalid value {endpoint} for configuration {TOKEN_ENDPOINT_URL}: FileJwtRetriever needs a file URL"
        )
    client_id = _plain(config.get(CLIENT_ID)) or _plain(options.get("clientId"))
    client_secret = _plain(config.get(CLIENT_SECRET)) or _plain(options.get("clientSecret"))
    if scheme != "file":
        if client_id is None:
            raise ClientConfigError(
                f"Invalid configuration {CLIENT_ID}: the client id is required (or the JAAS option clientId)"
            )
        if client_secret is None:
            raise ClientConfigError(
                f"Invalid configuration {CLIENT_SECRET}: the client secret is required (or the JAAS option clientSecret)"
            )
    urlencode = (_plain(config.get(HEADER_URLENCODE)) or "false").lower()
    if urlencode not in ("true", "false"):
        raise ClientConfigError(
            f"Invalid value {urlencode} for configuration {HEADER_URLENCODE}: Expected value to be either true or false"
        )
    return OAuthLoginSettings(
        unsecured=False,
        endpoint=endpoint,
        client_id=client_id or "",
        client_secret=client_secret or "",
        scope=_plain(config.get(SCOPE)) or _plain(options.get("scope")),
        urlencode_header=urlencode == "true",
        scope_claim_name=_plain(config.get(SCOPE_CLAIM_NAME)) or "scope",
        sub_claim_name=_plain(config.get(SUB_CLAIM_NAME)) or "sub",
        connect_timeout_ms=_whole(config, CONNECT_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, 1),
        read_timeout_ms=_whole(config, READ_TIMEOUT_MS, DEFAULT_READ_TIMEOUT_MS, 1),
        retry_backoff_ms=_whole(config, RETRY_BACKOFF_MS, 100, 0),
        retry_backoff_max_ms=_whole(config, RETRY_BACKOFF_MAX_MS, 10_000, 0),
        refresh=refresh,
        tls={k: v for k, v in options.items() if k.startswith("ssl.")},
        extensions=extensions,
    )


# -- the token request and response -----------------------------------------------------------------------


def token_request(settings: OAuthLoginSettings) -> tuple[dict[str, str], str]:
    """Headers and form body of the client-credentials POST (Java ``ClientSecretRequestFormatter``)."""
    client_id, secret = settings.client_id, settings.client_secret
    if settings.urlencode_header:
        client_id = urllib.parse.quote_plus(client_id)
        secret = urllib.parse.quote_plus(secret)
    basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode("ascii")
    headers = {
        "Accept": "application/json",
        "Authorization": f"Basic {basic}",
        "Cache-Control": "no-cache",
        "Content-Type": "application/x-www-form-urlencoded",
    }
    body = "grant_type=client_credentials"
    if settings.scope:
        body += "&scope=" + urllib.parse.quote_plus(settings.scope)
    return headers, body


def _error_summary(body: str) -> str:
    """Java ``formatErrorMessage``: ``{error - error_description}`` of an RFC 6749 5.2 error body."""
    if not body.strip():
        return "{}"
    try:
        doc = json.loads(body)
    except ValueError:
        return "{" + _snippet(body) + "}"
    if not isinstance(doc, dict):
        return "{" + _snippet(body) + "}"
    error = doc.get("error") or doc.get("errorCode")
    description = doc.get("error_description") or doc.get("errorSummary")
    if error and description:
        return f"{{{error} - {description}}}"
    if error or description:
        return f"{{{error or description}}}"
    return "{" + _snippet(body) + "}"


def _snippet(text: str) -> str:
    text = text.strip()
    if len(text) <= _SNIPPET:
        return text
    return f"{text[:_SNIPPET]} (trimmed to first {_SNIPPET} characters out of {len(text)} total)"


def parse_token_response(endpoint: str, status: int, body: str) -> str:
    """The token of a token-endpoint answer; :class:`TokenEndpointError` (naming ``endpoint``) otherwise."""
    if status in (200, 201):
        if not body.strip():
            raise TokenEndpointError(
                f"The token endpoint {endpoint} answered {status} with an empty body",
                endpoint,
                retriable=True,
            )
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        token = None
        if isinstance(doc, dict):
            token = doc.get("access_token") or doc.get("id_token")
        if not isinstance(token, str) or not token.strip():
            raise TokenEndpointError(
                f"The token endpoint {endpoint} response did not contain a valid JWT "
                "(no access_token or id_token)",
                endpoint,
                retriable=False,
            )
        return token.strip()
    summary = _error_summary(body)
    if status in UNRETRYABLE_HTTP_CODES:
        raise TokenEndpointError(
            f"The token endpoint {endpoint} refused the login: HTTP {status} {summary}",
            endpoint,
            retriable=False,
        )
    raise TokenEndpointError(
        f"The token endpoint {endpoint} answered HTTP {status} {summary}", endpoint, retriable=True
    )


# -- the token --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    """A login's credential. ``repr`` hides the token itself."""

    value: str = field(repr=False)
    principal: str
    scopes: frozenset[str]
    start_ms: int | None
    expire_ms: int


def _b64url_json(part: str, what: str) -> Any:
    try:
        raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        return json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise ValueError(f"Malformed JWT provided; the {what} is not base64url-encoded JSON") from None


def parse_jwt(token: str, sub_claim: str = "sub", scope_claim: str = "scope") -> Token:
    """Java ``ClientJwtValidator.validate``: the claims of ``token``; ``ValueError`` when it is no
    usable JWT (the message never holds the token)."""
    parts = token.strip().split(".")
    if len(parts) != 3:
        raise ValueError("Malformed JWT provided; expected three sections (header, payload, and signature)")
    _b64url_json(parts[0], "header")
    payload = _b64url_json(parts[1], "payload")
    if not isinstance(payload, dict):
        raise ValueError("Malformed JWT provided; the payload is not a JSON object")
    exp = payload.get("exp")
    if not isinstance(exp, int | float) or isinstance(exp, bool):
        raise ValueError("The token has no numeric exp claim")
    subject = payload.get(sub_claim)
    if not isinstance(subject, str) or not subject.strip():
        raise ValueError(f"The token has no {sub_claim} claim (the subject)")
    iat = payload.get("iat")
    start = int(iat * 1000) if isinstance(iat, int | float) and not isinstance(iat, bool) else None
    raw_scope = payload.get(scope_claim)
    if isinstance(raw_scope, str):
        scopes = frozenset(s for s in raw_scope.split(" ") if s)
    elif isinstance(raw_scope, list):
        scopes = frozenset(str(s).strip() for s in raw_scope if str(s).strip())
    else:
        scopes = frozenset()
    return Token(token.strip(), subject.strip(), scopes, start, int(exp * 1000))


def unsecured_claims(settings: OAuthLoginSettings, now_ms: int) -> dict[str, Any]:
    """The claims of Java's unsecured login at ``now_ms`` (``iat``, ``exp`` and the JAAS claims)."""
    options = settings.unsecured_options
    principal_claim = options.get("unsecuredLoginPrincipalClaimName", "sub").strip() or "sub"
    lifetime_text = options.get("unsecuredLoginLifetimeSeconds", "3600")
    try:
        lifetime = float(lifetime_text)
    except ValueError:
        raise ClientConfigError(
            f"Invalid value for configuration {JAAS_CONFIG}: unsecuredLoginLifetimeSeconds "
            f"'{lifetime_text}' is not a number"
        ) from None
    claims: dict[str, Any] = {}
    for name, value in options.items():
        if name.startswith("unsecuredLoginStringClaim_"):
            claims[name[len("unsecuredLoginStringClaim_") :]] = value
        elif name.startswith("unsecuredLoginNumberClaim_"):
            try:
                number = float(value)
            except ValueError:
                raise ClientConfigError(
                    f"Invalid value for configuration {JAAS_CONFIG}: {name} '{value}' is not a number"
                ) from None
            claims[name[len("unsecuredLoginNumberClaim_") :]] = int(number) if number.is_integer() else number
        elif name.startswith("unsecuredLoginListClaim_"):
            separator, rest = (value[:1], value[1:]) if value else (" ", "")
            claims[name[len("unsecuredLoginListClaim_") :]] = [s for s in rest.split(separator) if s]
    for reserved in ("iat", "exp"):
        if reserved in claims:
            raise ClientConfigError(
                f"Invalid value for configuration {JAAS_CONFIG}: the {reserved} claim is set by the login"
            )
    subject = claims.get(principal_claim)
    if not isinstance(subject, str) or not subject.strip():
        raise ClientConfigError(
            f"Invalid value for configuration {JAAS_CONFIG}: the unsecured OAUTHBEARER login needs "
            f'unsecuredLoginStringClaim_{principal_claim}="<principal>" (or set {LOGIN_CALLBACK_HANDLER_CLASS}='
            f"{LOGIN_CALLBACK_HANDLER} and {TOKEN_ENDPOINT_URL})"
        )
    iat = now_ms / 1000.0
    return {"iat": iat, "exp": iat + lifetime, **claims}


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def unsecured_token(settings: OAuthLoginSettings, now_ms: int) -> Token:
    """Java ``OAuthBearerUnsecuredLoginCallbackHandler``: an unsigned JWS (``alg: none``)."""
    claims = unsecured_claims(settings, now_ms)
    header = _b64url(json.dumps({"alg": "none"}, separators=(",", ":")).encode())
    payload = _b64url(json.dumps(claims, separators=(",", ":")).encode())
    principal_claim = (
        settings.unsecured_options.get("unsecuredLoginPrincipalClaimName", "sub").strip() or "sub"
    )
    scope_claim = settings.unsecured_options.get("unsecuredLoginScopeClaimName", "scope").strip() or "scope"
    return parse_jwt(f"{header}.{payload}.", principal_claim, scope_claim)


# -- retries and refresh ----------------------------------------------------------------------------------


def retry_wait_ms(attempt: int, elapsed_ms: int, settings: OAuthLoginSettings) -> int | None:
    """How long to wait after failed attempt number ``attempt`` (1-based), ``elapsed_ms`` after the
    first attempt started; ``None`` when the retries are exhausted (Java ``Retry.execute``)."""
    remaining = settings.retry_backoff_max_ms - elapsed_ms
    wait = min(settings.retry_backoff_ms * 2 ** (attempt - 1), remaining)
    return None if wait <= 0 else int(wait)


def refresh_at_ms(token: Token, now_ms: int, config: RefreshConfig, draw: float) -> int:
    """When to replace ``token`` (Java ``ExpiringCredentialRefreshingLogin.refreshMs``); ``draw`` in [0, 1)."""
    expire = token.expire_ms
    if now_ms > expire:
        return now_ms + RELOGIN_RETRY_DELAY_MS
    pct = config.window_factor + config.window_jitter * draw
    if now_ms + 1000 * (config.min_period_seconds + config.buffer_seconds) > expire:
        return now_ms + int((expire - now_ms) * pct)
    start = token.start_ms if token.start_ms is not None else now_ms
    proposed = start + int((expire - start) * pct)
    end_buffer = expire - config.buffer_seconds * 1000
    if proposed > end_buffer:
        return end_buffer
    min_refresh = now_ms + 1000 * config.min_period_seconds
    return max(proposed, min_refresh)


@dataclass
class TokenCache:
    """One client's current token and when to replace it. Not thread-safe; the provider serializes.

    - :meth:`wanted` is true when the refresh time has come (at once for a new cache): fetch one.
    - :meth:`usable` is the token to present now: the current one while unexpired, else ``None``.
    - :meth:`stored` after a successful fetch; :meth:`failed` after a failed one (the next try is
      :data:`RELOGIN_RETRY_DELAY_MS` later while the current token lives).
    """

    refresh: RefreshConfig
    token: Token | None = None
    refresh_at: int = 0

    def wanted(self, now_ms: int) -> bool:
        return now_ms >= self.refresh_at

    def usable(self, now_ms: int) -> Token | None:
        return self.token if self.token is not None and now_ms < self.token.expire_ms else None

    def stored(self, token: Token, now_ms: int, draw: float) -> None:
        self.token = token
        self.refresh_at = refresh_at_ms(token, now_ms, self.refresh, draw)

    def failed(self, now_ms: int) -> None:
        self.refresh_at = now_ms + RELOGIN_RETRY_DELAY_MS
