"""A Kafka cluster's refusal of a client, as an operator reads it: who refused, and what.

Kafka says "no" in two ways a person must act on: authentication (wrong password, unknown user, a SASL
mechanism the broker does not enable, a certificate it does not trust) and authorization (a missing
ACL). aiokafka reports them as its own errors, and a refused bootstrap only as ``Unable to bootstrap
from [...]`` with the reason left in its log. This module turns them into
:class:`~pyconnect.errors.AuthenticationError` / :class:`~pyconnect.errors.AuthorizationError`
whose one-line message names the cluster and says what was refused in Java's words (``Not authorized
to access topics: [t]``, ``Client SASL mechanism 'X' not enabled in the server``), so a connector or
task fails with that line on top of its REST trace instead of retrying or sitting silent.

Contract:

- :func:`cluster_label` names a cluster in messages: ``source cluster S (127.0.0.1:9092)`` or, without
  an alias, ``cluster 127.0.0.1:9092``.
- :func:`access_error` maps one exception to a new access error, or ``None`` when it is not a refusal
  (transient errors, timeouts, anything else): callers keep their own handling for those.
- :func:`start_client` starts an aiokafka client; when the start fails, the client is stopped before
  the error propagates (no unclosed client or socket) and a refused start raises the access error.
  A failed bootstrap is explained by the client's OAUTHBEARER login failure when it had one, else by one
  probe connection per bootstrap server (only after a failure), which reports the broker's own reason.
- :func:`refusals_raised` is a context manager raising the access error in place of a refusal.

Messages carry what the broker or client said, never a config value: passwords cannot leak through here.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from aiokafka import AIOKafkaProducer
from aiokafka import errors as kafka_errors
from aiokafka.conn import create_conn

from pyconnect.config.client_configs import ClientConfigError
from pyconnect.errors import AuthenticationError, AuthorizationError, KafkaAccessError
from pyconnect.kafka.clients import admin_client_kwargs
from pyconnect.kafka.oauth_login import OAuthLoginError, login_of
from pyconnect.kafka.probe import SSL_CLOSE_S

INIT_PRODUCER_ID = (
    "InitProducerId (an idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on a topic)"
)
"""What a producer's start asks the cluster for; named when the cluster refuses it."""
PROBE_TIMEOUT_MS = 10000
"""Bound of the probe connection that explains a failed bootstrap."""

_NO_COORDINATOR = "Unable to get coordinator id for "
"""How aiokafka's admin words a refused FindCoordinator, before the group id."""
_PROBE_ARGUMENTS = (
    "client_id",
    "ssl_context",
    "security_protocol",
    "sasl_mechanism",
    "sasl_plain_username",
    "sasl_plain_password",
    "sasl_kerberos_service_name",
    "sasl_kerberos_domain_name",
    "sasl_oauth_token_provider",
)


class StartableClient(Protocol):
    """An aiokafka producer or consumer (``start``/``stop``); admins are adapted by the caller."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


def cluster_label(config: Mapping[str, Any], alias: str | None = None, side: str | None = None) -> str:
    """``<side> cluster <alias> (<bootstrap.servers>)``, parts left out when unknown."""
    servers = str(config.get("bootstrap.servers") or "").replace(" ", "")
    words = [w for w in (side, "cluster", alias) if w]
    return " ".join(words) + (f" ({servers})" if servers and alias else f" {servers}" if servers else "")


def _quoted_list(names: Any) -> str:
    """Java's ``Set.toString``: ``[a, b]``."""
    if isinstance(names, str | bytes):
        names = [names]
    return "[" + ", ".join(str(n) for n in names) + "]"


def access_error(
    exc: BaseException,
    cluster: str,
    *,
    group: str | None = None,
    operation: str | None = None,
    mechanism: str | None = None,
) -> KafkaAccessError | None:
    """The access error ``exc`` means on ``cluster``, or ``None`` when it is no refusal.

    ``group`` names the consumer group of a group request (aiokafka's error does not); ``operation``
    says what was being done (``"InitProducerId (needs IDEMPOTENT_WRITE on the cluster or WRITE on a
    topic)"``) and ends the message of a cluster authorization failure; ``mechanism`` is the client's
    ``sasl.mechanism``, named when the broker does not enable it.
    """
    if isinstance(exc, KafkaAccessError):
        return exc
    if isinstance(exc, kafka_errors.SaslAuthenticationFailed):
        reason = (
            str(exc.args[0]) if exc.args and isinstance(exc.args[0], str) else "SASL authentication failed"
        )
        if mechanism == "OAUTHBEARER":
            reason = f"the broker rejected the OAUTHBEARER token: {reason}"
        return AuthenticationError(f"Authentication to {cluster} failed: {reason}")
    if isinstance(exc, kafka_errors.UnsupportedSaslMechanismError):
        name = f"'{mechanism}' " if mechanism else ""
        return AuthenticationError(
            f"Authentication to {cluster} failed: Client SASL mechanism {name}not enabled in the server"
        )
    if isinstance(exc, OAuthLoginError):
        return AuthenticationError(f"Authentication to {cluster} failed: OAUTHBEARER login: {exc.args[0]}")
    if isinstance(exc, kafka_errors.IllegalSaslStateError | kafka_errors.AuthenticationFailedError):
        return AuthenticationError(f"Authentication to {cluster} failed: {exc}")
    if isinstance(exc, ssl.SSLError):
        why = getattr(exc, "verify_message", None) or getattr(exc, "reason", None) or exc
        return AuthenticationError(f"Authentication to {cluster} failed: SSL handshake failed ({why})")
    if isinstance(exc, kafka_errors.TopicAuthorizationFailedError):
        topics = _quoted_list(exc.args[0]) if exc.args else "[]"
        return AuthorizationError(f"Not authorized to access topics: {topics} on {cluster}")
    if isinstance(exc, kafka_errors.GroupAuthorizationFailedError):
        said = str(exc.args[0]) if exc.args else ""
        name = group or said.removeprefix(_NO_COORDINATOR)
        return AuthorizationError(f"Not authorized to access group: {name} on {cluster}")
    if isinstance(exc, kafka_errors.ClusterAuthorizationFailedError):
        doing = f" for {operation}" if operation else ""
        return AuthorizationError(f"Cluster authorization failed{doing} on {cluster}")
    if isinstance(exc, kafka_errors.TransactionalIdAuthorizationFailed):
        name = f" {exc.args[0]}" if exc.args else ""
        return AuthorizationError(f"Transactional Id authorization failed{name} on {cluster}")
    return None


async def explain_bootstrap(config: Mapping[str, Any]) -> BaseException | None:
    """Connect (and authenticate) to each bootstrap server of ``config`` once; the first refusal found
    (see :func:`access_error`), else ``None`` (every server answered, or none could be reached)."""
    try:
        kwargs = admin_client_kwargs(config)
    except ClientConfigError:
        return None
    probe = {k: v for k, v in kwargs.items() if k in _PROBE_ARGUMENTS}
    for server in str(kwargs.get("bootstrap_servers", "")).split(","):
        host, _, port = server.strip().rpartition(":")
        if not host or not port.isdigit():
            continue
        conn = None
        try:
            conn = await create_conn(
                host.strip("[]"), int(port), request_timeout_ms=PROBE_TIMEOUT_MS, **probe
            )
        except (OSError, kafka_errors.KafkaError, TimeoutError) as exc:
            if access_error(exc, "") is not None:
                return exc
        finally:
            if conn is not None:
                conn.close()
            if "ssl_context" in probe:
                await asyncio.sleep(SSL_CLOSE_S)  # the TLS socket is released on the loop
    return None


async def start_client(
    client: StartableClient,
    config: Mapping[str, Any],
    cluster: str,
    *,
    operation: str | None = None,
) -> None:
    """``client.start()``; on failure ``client.stop()`` first, then raise: the access error of a
    refusal (a failed bootstrap explained by :func:`explain_bootstrap`), else the original error.
    ``config`` is the Java config the client was built from; ``operation`` as in :func:`access_error`
    (a producer's is :data:`INIT_PRODUCER_ID` unless told)."""
    if operation is None and isinstance(client, AIOKafkaProducer):
        operation = INIT_PRODUCER_ID
    try:
        await client.start()
    except BaseException as exc:
        with contextlib.suppress(Exception):
            await client.stop()
        if not isinstance(exc, Exception):
            raise
        refusal = access_error(exc, cluster, operation=operation, mechanism=config.get("sasl.mechanism"))
        if refusal is None and isinstance(exc, kafka_errors.KafkaConnectionError):
            login = login_of(client)
            if login is not None and login.last_error is not None:  # the token, not the broker
                cause: BaseException | None = OAuthLoginError(login.last_error)
            else:
                cause = await explain_bootstrap(config)
            mechanism = config.get("sasl.mechanism")
            refusal = None if cause is None else access_error(cause, cluster, mechanism=mechanism)
        if refusal is None:
            raise
        raise refusal from exc


@contextlib.contextmanager
def refusals_raised(cluster: str, *, group: str | None = None) -> Iterator[None]:
    """Raise :func:`access_error`'s error in place of a refusal escaping the block; others pass."""
    try:
        yield
    except Exception as exc:
        refusal = access_error(exc, cluster, group=group)
        if refusal is None or refusal is exc:
            raise
        raise refusal from exc
