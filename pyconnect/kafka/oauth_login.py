"""The OAUTHBEARER token provider an aiokafka client authenticates with (Java's ``OAuthBearerLoginModule``).

Who calls: :func:`with_token_provider`, from every place this package builds aiokafka keyword
arguments (:mod:`pyconnect.kafka.clients`), replaces the login settings the config translation left under
:data:`~pyconnect.config.client_configs.OAUTH_LOGIN` with an :class:`OAuthBearerLogin`. aiokafka calls
:meth:`OAuthBearerLogin.token` once per connection it authenticates (and :meth:`extensions`).

Contract:

- One provider per client; calls are serialized by a lock, so concurrent connections share one fetch.
- The token is fetched at the first connection and again when its refresh time has come (the schedule
  of :func:`~pyconnect.config.oauthbearer.refresh_at_ms`, computed from the token's ``iat``/``exp``):
  Java refreshes in a background thread, this provider when a connection asks after that time, which
  presents the same token to the broker. A failed refresh keeps the current token while it lives.
- A fetch is the retry loop of Java's ``Retry`` over :func:`pyconnect.kafka.token_endpoint.post_form`,
  bounded by ``sasl.login.retry.backoff.max.ms``; a refusal (HTTP 4xx) is not retried.
- When no usable token can be had, :meth:`token` raises :class:`OAuthLoginError`, an aiokafka
  ``AuthenticationFailedError``: aiokafka treats it as a failed connection, and
  :func:`pyconnect.kafka.access.access_error` makes it ``Authentication to <cluster> failed: <why>``.
  The message names the token endpoint and what it said, never the client secret or a token.
- Warnings (a failed attempt, a failed refresh) are logged at most once per minute per provider.
- A token the broker rejects ends the exchange as RFC 7628 3.2.2 says: the broker answers the token with
  an error document (``{"status":"invalid_token"}``), the client sends ``%x01`` and the broker fails the
  authentication. aiokafka stops after its token and takes the error document for success (the next
  request then dies on a closed connection, with no reason given); importing this module makes aiokafka's
  connections use :class:`RejectionAwareAuthenticator`, which finishes the exchange, so the refusal is
  aiokafka's ``SaslAuthenticationFailed`` carrying the broker's message and the status it sent.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from typing import Any

from aiokafka.abc import AbstractTokenProvider
from aiokafka.conn import AIOKafkaConnection, OAuthAuthenticator
from aiokafka.errors import AuthenticationFailedError

from pyconnect.config import oauthbearer
from pyconnect.config.client_configs import OAUTH_LOGIN, ClientConfigError, oauth_login
from pyconnect.config.oauthbearer import OAuthLoginSettings, Token, TokenCache, TokenEndpointError
from pyconnect.config.tls import TlsConfigError, client_ssl_context
from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.token_endpoint import post_form

log = logging.getLogger(__name__)

WARN_EVERY_S = 60.0


class OAuthLoginError(AuthenticationFailedError):
    """No OAUTHBEARER token could be had: the message says why and names the token endpoint."""


class OAuthBearerLogin(AbstractTokenProvider):
    """aiokafka's token provider over one :class:`~pyconnect.config.oauthbearer.OAuthLoginSettings`.

    ``clock`` gives wall-clock milliseconds (token times are epoch based), ``sleep`` waits between
    attempts, ``post`` is :func:`post_form` (tests pass fakes of all three).
    """

    def __init__(
        self,
        settings: OAuthLoginSettings,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Any] = asyncio.sleep,
        post: Callable[..., Any] = post_form,
        draw: Callable[[], float] = random.random,
    ) -> None:
        self.settings = settings
        self._clock = clock
        self._sleep = sleep
        self._post = post
        self._draw = draw
        self._cache = TokenCache(settings.refresh)
        self._lock: asyncio.Lock | None = None
        self._warned_at: float | None = None
        self._last_error: str | None = None
        self.fetches = 0
        """How many tokens were obtained (for tests and metrics)."""
        ssl_context = None
        if settings.endpoint.lower().startswith("https:"):
            try:
                ssl_context = client_ssl_context(settings.tls)
            except TlsConfigError as exc:
                raise ClientConfigError(
                    f"{exc} (a JAAS option of sasl.jaas.config, for the token endpoint)"
                ) from None
        self._ssl_context = ssl_context

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def _warn(self, message: str, *args: Any) -> None:
        now = self._clock()
        if self._warned_at is None or now - self._warned_at >= WARN_EVERY_S:
            self._warned_at = now
            log.warning(message, *args)

    async def token(self) -> str:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            now = self._now_ms()
            current = self._cache.usable(now)
            if not self._cache.wanted(now):
                if current is not None:
                    return current.value
                if self._last_error is not None:  # failed less than a retry delay ago
                    raise OAuthLoginError(self._last_error)
            try:
                fresh = await self._login()
            except (TokenEndpointError, ValueError) as exc:
                now = self._now_ms()
                current = self._cache.usable(now)
                self._cache.failed(now)
                self._last_error = str(exc)
                if current is not None:
                    self._warn(
                        "OAUTHBEARER token refresh failed, keeping the current token until it expires: %s",
                        exc,
                    )
                    return current.value
                raise OAuthLoginError(str(exc)) from None
            self.fetches += 1
            self._last_error = None
            self._cache.stored(fresh, self._now_ms(), self._draw())
            return fresh.value

    @property
    def last_error(self) -> str | None:
        """Why the last login failed, while no token has been had since (``None`` otherwise)."""
        return self._last_error

    def extensions(self) -> dict[str, str]:
        return dict(self.settings.extensions)

    async def _login(self) -> Token:
        settings = self.settings
        if settings.unsecured:
            return oauthbearer.unsecured_token(settings, self._now_ms())
        if settings.from_file:
            raw = await asyncio.to_thread(_read_token_file, settings.file_path)
        else:
            raw = await self._fetch()
        try:
            return oauthbearer.parse_jwt(raw, settings.sub_claim_name, settings.scope_claim_name)
        except ValueError as exc:
            raise ValueError(f"The token from {settings.endpoint} is not usable: {exc}") from None

    async def _fetch(self) -> str:
        settings = self.settings
        headers, body = oauthbearer.token_request(settings)
        started = self._now_ms()
        for attempt in range(1, 10_000):
            try:
                status, text = await self._post(
                    settings.endpoint,
                    headers,
                    body,
                    ssl_context=self._ssl_context,
                    connect_timeout_s=settings.connect_timeout_ms / 1000,
                    read_timeout_s=settings.read_timeout_ms / 1000,
                )
                return oauthbearer.parse_token_response(settings.endpoint, status, text)
            except TokenEndpointError as exc:
                if not exc.retriable:
                    raise
                wait = oauthbearer.retry_wait_ms(attempt, self._now_ms() - started, settings)
                if wait is None:
                    raise TokenEndpointError(
                        f"{exc} (gave up after {attempt} attempts in {(self._now_ms() - started) / 1000:.1f} s)",
                        exc.endpoint,
                        retriable=True,
                    ) from None
                self._warn(
                    "OAUTHBEARER token request attempt %d failed, retrying in %d ms: %s", attempt, wait, exc
                )
                await self._sleep(wait / 1000)
        raise TokenEndpointError(
            f"The token endpoint {settings.endpoint} was not reached", settings.endpoint, retriable=True
        )


def _read_token_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError as exc:
        raise TokenEndpointError(
            f"Cannot read the token file {path}: {exc.strerror or exc}", path, retriable=True
        ) from None


def login_of(client: object) -> OAuthBearerLogin | None:
    """The token provider of an aiokafka producer, consumer or admin client, if it has one."""
    provider = seam.client_token_provider(client)
    return provider if isinstance(provider, OAuthBearerLogin) else None


def with_token_provider(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` (output of a ``*_kwargs`` translation) with its OAUTHBEARER login settings replaced by
    an :class:`OAuthBearerLogin` (``sasl_oauth_token_provider``); others are returned unchanged."""
    settings = oauth_login(kwargs)
    if settings is None:
        return kwargs
    out = {k: v for k, v in kwargs.items() if k != OAUTH_LOGIN}
    out["sasl_oauth_token_provider"] = OAuthBearerLogin(settings)
    return out


class RejectionAwareAuthenticator(OAuthAuthenticator):
    """aiokafka's OAUTHBEARER client exchange, answering a broker's error document with ``%x01``."""

    def __init__(self, *, sasl_oauth_token_provider: AbstractTokenProvider) -> None:
        super().__init__(sasl_oauth_token_provider=sasl_oauth_token_provider)
        self._rejection_answered = False

    async def step(self, payload: bytes | None) -> tuple[bytes, bool] | None:
        if seam.oauth_token_sent(self) and payload:
            if self._rejection_answered:
                return None
            self._rejection_answered = True
            return b"\x01", True
        result: tuple[bytes, bool] | None = await super().step(payload)
        return result


def _authenticator_oauth(connection: AIOKafkaConnection) -> OAuthAuthenticator:
    return RejectionAwareAuthenticator(sasl_oauth_token_provider=seam.connection_token_provider(connection))


seam.install_oauth_authenticator(_authenticator_oauth)
