"""The OAUTHBEARER login core (pyconnect.config.oauthbearer) and its token provider with fakes and a
manual clock: Java's keys and precedence, the request, the answers, the refresh schedule, the retries."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from aiokafka import AIOKafkaClient

from pyconnect.config import oauthbearer as ob
from pyconnect.config.client_configs import (
    OAUTH_LOGIN,
    ClientConfigError,
    admin_kwargs,
    ignored_keys,
    mirror_connector_client_config,
    mm2_cluster_props,
    mm2_connector_cluster_config,
    oauth_login,
)
from pyconnect.kafka.clients import admin_client_kwargs, consumer_client_kwargs
from pyconnect.kafka.oauth_login import OAuthBearerLogin, OAuthLoginError

SECRET = "s3cr3t-value"
URL = "http://127.0.0.1:1/token"


def jaas(**options: str) -> str:
    return f"{ob.LOGIN_MODULE} required " + " ".join(f'{k}="{v}"' for k, v in options.items()) + ";"


def secured(**extra: str) -> dict[str, str]:
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.login.callback.handler.class": ob.LOGIN_CALLBACK_HANDLER,
        "sasl.oauthbearer.token.endpoint.url": URL,
        "sasl.jaas.config": jaas(clientId="app", clientSecret=SECRET, scope="kafka"),
        **extra,
    }


def jwt(claims: dict[str, Any]) -> str:
    def part(doc: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(doc).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256'})}.{part(claims)}.c2ln"


def test_jaas_parser_reads_java_syntax_quoted_and_bare_values() -> None:
    module, flag, options = ob.parse_jaas_config(
        f'{ob.LOGIN_MODULE}  REQUIRED clientId="a b" clientSecret="q\\"x" scope=bare;'
    )
    assert (module, flag) == (ob.LOGIN_MODULE, "required")
    assert options == {"clientId": "a b", "clientSecret": 'q"x', "scope": "bare"}
    for bad in (
        f"{ob.LOGIN_MODULE} required clientId=",
        f"{ob.LOGIN_MODULE} required a=b",
        "x;",
        "a b; c d;",
    ):
        with pytest.raises(ClientConfigError, match=r"sasl\.jaas\.config"):
            ob.parse_jaas_config(bad)


def test_client_credentials_settings_follow_kafka_4_precedence_and_defaults() -> None:
    settings = ob.oauth_settings(secured())
    assert (settings.client_id, settings.client_secret, settings.scope) == ("app", SECRET, "kafka")
    assert settings.refresh == ob.RefreshConfig(0.8, 0.05, 60, 300)
    assert (settings.retry_backoff_ms, settings.retry_backoff_max_ms) == (100, 10_000)
    keyed = ob.oauth_settings(
        secured(
            **{
                ob.CLIENT_ID: "other",
                ob.CLIENT_SECRET: "other-secret",
                ob.SCOPE: "s1 s2",
                ob.REFRESH_WINDOW_FACTOR: "0.6",
                ob.SUB_CLAIM_NAME: "azp",
            }
        )
    )
    assert (keyed.client_id, keyed.client_secret, keyed.scope) == ("other", "other-secret", "s1 s2")
    assert keyed.refresh.window_factor == 0.6 and keyed.sub_claim_name == "azp"
    assert SECRET not in repr(settings) and "other-secret" not in repr(keyed)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({ob.TOKEN_ENDPOINT_URL: ""}, ob.TOKEN_ENDPOINT_URL),
        ({ob.TOKEN_ENDPOINT_URL: "ftp://x/token"}, ob.TOKEN_ENDPOINT_URL),
        ({"sasl.jaas.config": jaas(clientId="app")}, ob.CLIENT_SECRET),
        ({"sasl.jaas.config": jaas(clientSecret=SECRET)}, ob.CLIENT_ID),
        ({ob.REFRESH_WINDOW_FACTOR: "0.2"}, ob.REFRESH_WINDOW_FACTOR),
        ({ob.REFRESH_BUFFER_SECONDS: "x"}, ob.REFRESH_BUFFER_SECONDS),
        ({ob.REFRESH_MIN_PERIOD_SECONDS: "901"}, "Value must be no more than 900"),
        ({ob.LOGIN_CALLBACK_HANDLER_CLASS: "com.example.Handler"}, ob.LOGIN_CALLBACK_HANDLER_CLASS),
        ({ob.JWT_RETRIEVER_CLASS: "com.example.Retriever"}, ob.JWT_RETRIEVER_CLASS),
        ({"sasl.oauthbearer.assertion.file": "/a.jwt"}, "sasl.oauthbearer.assertion.file"),
        ({"sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required;"}, "jaas"),
    ],
)
def test_a_setting_that_cannot_be_honoured_names_its_key_and_never_the_secret(
    change: dict[str, str], named: str
) -> None:
    with pytest.raises(ClientConfigError) as caught:
        admin_kwargs(secured(**change))
    assert named in str(caught.value)
    assert SECRET not in str(caught.value)


def test_the_translation_hands_the_login_to_the_kafka_side_which_makes_one_provider() -> None:
    kwargs = admin_kwargs(secured())
    assert isinstance(kwargs[OAUTH_LOGIN], ob.OAuthLoginSettings)
    assert "sasl_plain_password" not in kwargs
    client = admin_client_kwargs(secured())
    assert OAUTH_LOGIN not in client
    assert isinstance(client["sasl_oauth_token_provider"], OAuthBearerLogin)
    assert ignored_keys(secured(**{ob.REFRESH_BUFFER_SECONDS: "10"}), "admin") == []
    plaintext = admin_kwargs({**secured(), "security.protocol": "PLAINTEXT"})
    assert OAUTH_LOGIN not in plaintext
    with pytest.raises(TypeError, match=OAUTH_LOGIN):  # a client made around the factories fails loudly
        AIOKafkaClient(**admin_kwargs(secured()))


def test_request_is_basic_auth_and_a_client_credentials_form() -> None:
    headers, body = ob.token_request(ob.oauth_settings(secured(**{ob.SCOPE: "a b"})))
    assert headers["Authorization"] == "Basic " + base64.b64encode(f"app:{SECRET}".encode()).decode()
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert body == "grant_type=client_credentials&scope=a+b"
    encoded = ob.oauth_settings(
        secured(**{ob.HEADER_URLENCODE: "true", "sasl.jaas.config": jaas(clientId="a:b", clientSecret="p&q")})
    )
    assert (
        ob.token_request(encoded)[0]["Authorization"] == "Basic " + base64.b64encode(b"a%3Ab:p%26q").decode()
    )


def test_answers_are_judged_as_java_does() -> None:
    assert ob.parse_token_response(URL, 200, json.dumps({"access_token": "t.o.k"})) == "t.o.k"
    assert ob.parse_token_response(URL, 201, json.dumps({"id_token": "i.d.t"})) == "i.d.t"
    with pytest.raises(ob.TokenEndpointError) as refused:
        ob.parse_token_response(URL, 401, json.dumps({"error": "invalid_client", "error_description": "bad"}))
    assert not refused.value.retriable
    assert (
        str(refused.value) == f"The token endpoint {URL} refused the login: HTTP 401 {{invalid_client - bad}}"
    )
    with pytest.raises(ob.TokenEndpointError) as busy:
        ob.parse_token_response(URL, 503, "")
    assert busy.value.retriable and "HTTP 503" in str(busy.value)
    with pytest.raises(ob.TokenEndpointError, match="did not contain a valid JWT"):
        ob.parse_token_response(URL, 200, "{}")


def test_jwt_claims_are_checked_as_the_client_validator_does() -> None:
    token = ob.parse_jwt(jwt({"sub": "app", "exp": 1000.5, "iat": 900, "scope": "a b"}))
    assert (token.principal, token.start_ms, token.expire_ms, token.scopes) == (
        "app",
        900_000,
        1_000_500,
        frozenset({"a", "b"}),
    )
    assert ob.parse_jwt(jwt({"azp": "x", "exp": 1, "roles": ["r"]}), "azp", "roles").scopes == {"r"}
    for bad in ("a.b", jwt({"sub": "app"}), jwt({"exp": 5}), jwt({"sub": "", "exp": 5}), "!!.!!.x"):
        with pytest.raises(ValueError):
            ob.parse_jwt(bad)


def test_unsecured_login_builds_an_unsigned_jws_from_the_jaas_claims() -> None:
    config = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.jaas.config": jaas(
            unsecuredLoginStringClaim_sub="alice",
            unsecuredLoginListClaim_scope=",r,w",
            unsecuredLoginNumberClaim_n="3",
            unsecuredLoginLifetimeSeconds="15",
            extension_traceId="abc",
        ),
    }
    settings = ob.oauth_settings(config)
    assert settings.unsecured and settings.extensions == {"traceId": "abc"}
    token = ob.unsecured_token(settings, 1_000_000)
    assert token.value.endswith(".") and token.principal == "alice"
    assert (token.start_ms, token.expire_ms, token.scopes) == (1_000_000, 1_015_000, frozenset({"r", "w"}))
    with pytest.raises(ClientConfigError, match="unsecuredLoginStringClaim_sub"):
        ob.oauth_settings({**config, "sasl.jaas.config": jaas(clientId="x")})


def token_of(start_s: float, life_s: float) -> ob.Token:
    return ob.Token("t", "p", frozenset(), int(start_s * 1000), int((start_s + life_s) * 1000))


def test_refresh_schedule_is_javas() -> None:
    config = ob.RefreshConfig()
    # an hour's token: 80% of its life (+ up to 5% jitter)
    assert ob.refresh_at_ms(token_of(0, 3600), 0, config, 0.0) == 2_880_000
    assert ob.refresh_at_ms(token_of(0, 3600), 0, config, 0.999) == 2_880_000 + int(3_600_000 * 0.05 * 0.999)
    # the end buffer (300 s) wins over a late window
    assert ob.refresh_at_ms(token_of(0, 1000), 0, ob.RefreshConfig(window_factor=1.0), 0.0) == 700_000
    # the minimum period (60 s) wins over an early window
    assert (
        ob.refresh_at_ms(token_of(0, 2000), 1000_000, ob.RefreshConfig(window_factor=0.5), 0.0) == 1_060_000
    )
    # a short token (15 s) cannot keep both buffers: the window of what remains
    assert ob.refresh_at_ms(token_of(100, 15), 100_000, config, 0.0) == 112_000
    # already expired: try again 10 s later
    assert ob.refresh_at_ms(token_of(0, 15), 20_000, config, 0.0) == 30_000


def test_retry_waits_double_until_the_max_is_spent() -> None:
    settings = ob.oauth_settings(secured(**{ob.RETRY_BACKOFF_MS: "100", ob.RETRY_BACKOFF_MAX_MS: "1000"}))
    assert [ob.retry_wait_ms(n, 0, settings) for n in (1, 2, 3, 4, 5)] == [100, 200, 400, 800, 1000]
    assert ob.retry_wait_ms(3, 900, settings) == 100
    assert ob.retry_wait_ms(3, 1000, settings) is None


class FakeEndpoint:
    """Answers from a script; a manual clock that the provider's sleeps advance."""

    def __init__(self, answers: list[tuple[int, str] | Exception]) -> None:
        self.answers = answers
        self.now = 1_000.0
        self.posts: list[tuple[str, dict[str, str], str]] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds

    async def post(self, url: str, headers: dict[str, str], body: str, **_: Any) -> tuple[int, str]:
        self.posts.append((url, headers, body))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def issued(endpoint: FakeEndpoint, life_s: float, sub: str = "app") -> tuple[int, str]:
    token = jwt({"sub": sub, "iat": endpoint.now, "exp": endpoint.now + life_s})
    return 200, json.dumps({"access_token": token, "token_type": "bearer", "expires_in": life_s})


def provider(endpoint: FakeEndpoint, **extra: str) -> OAuthBearerLogin:
    return OAuthBearerLogin(
        ob.oauth_settings(secured(**extra)),
        clock=endpoint.clock,
        sleep=endpoint.sleep,
        post=endpoint.post,
        draw=lambda: 0.0,
    )


async def test_the_provider_reuses_a_token_until_its_refresh_time_then_fetches_a_new_one() -> None:
    endpoint = FakeEndpoint([])
    endpoint.answers = [issued(endpoint, 15)]
    login = provider(endpoint)
    first = await login.token()
    endpoint.now += 11.9
    assert await login.token() == first and len(endpoint.posts) == 1
    endpoint.now += 0.2  # 12.1 s: past 80% of 15 s
    endpoint.answers.append(issued(endpoint, 15))
    second = await login.token()
    assert second != first and login.fetches == 2
    url, _headers, body = endpoint.posts[1]
    assert url == URL and body == "grant_type=client_credentials&scope=kafka"


async def test_a_failed_refresh_keeps_the_living_token_and_waits_before_trying_again() -> None:
    endpoint = FakeEndpoint([])
    endpoint.answers = [issued(endpoint, 15)]
    login = provider(endpoint, **{ob.RETRY_BACKOFF_MAX_MS: "0"})
    first = await login.token()
    endpoint.now += 13
    endpoint.answers.append(ob.TokenEndpointError("down", URL, retriable=True))
    assert await login.token() == first
    endpoint.now += 1
    assert await login.token() == first and len(endpoint.posts) == 2  # no new attempt within 10 s
    endpoint.now += 2  # expired, and the retry delay not over: the last error
    with pytest.raises(OAuthLoginError, match="down"):
        await login.token()
    endpoint.now += 10
    endpoint.answers.append(issued(endpoint, 15))
    assert await login.token() != first


async def test_a_refusal_is_not_retried_and_names_the_endpoint_never_the_secret() -> None:
    endpoint = FakeEndpoint([(401, json.dumps({"error": "invalid_client"}))])
    login = provider(endpoint)
    with pytest.raises(OAuthLoginError) as caught:
        await login.token()
    assert len(endpoint.posts) == 1
    assert caught.value.args[0] == f"The token endpoint {URL} refused the login: HTTP 401 {{invalid_client}}"
    assert SECRET not in str(caught.value)


async def test_an_unreachable_endpoint_is_retried_with_backoff_within_the_max() -> None:
    down = ob.TokenEndpointError(f"Cannot reach the token endpoint {URL}: refused", URL, retriable=True)
    endpoint = FakeEndpoint([down] * 20)
    login = provider(endpoint, **{ob.RETRY_BACKOFF_MS: "100", ob.RETRY_BACKOFF_MAX_MS: "1000"})
    started = endpoint.now
    with pytest.raises(OAuthLoginError, match="gave up after 5 attempts"):
        await login.token()
    assert len(endpoint.posts) == 5
    assert endpoint.now - started == pytest.approx(1.0)


def test_mm2_cluster_keys_and_mirror_prefixes_carry_the_login_to_every_role() -> None:
    raw = {"clusters": "A, B", "A.bootstrap.servers": "a:1", **{f"A.{k}": v for k, v in secured().items()}}
    connector = mm2_connector_cluster_config(mm2_cluster_props(raw, "A"), "source")
    for role in ("consumer", "producer", "admin"):
        client = mirror_connector_client_config(connector, "source", role)
        settings = oauth_login(admin_kwargs(client))
        assert settings is not None and settings.endpoint == URL and settings.client_secret == SECRET
        assert isinstance(consumer_client_kwargs(client)["sasl_oauth_token_provider"], OAuthBearerLogin)
