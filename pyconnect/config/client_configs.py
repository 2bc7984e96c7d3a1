"""Every Kafka client config the runtime and the MirrorMaker 2 connectors build, and how each becomes
aiokafka keyword arguments. One module, so that "which setting wins" has one answer.

Size: over 600 lines on purpose, for that one answer.

All maps hold Java client keys (``bootstrap.servers``, ``linger.ms``, ``sasl.jaas.config`` ...). Each
builder returns a new flat dict; within a builder, later steps override earlier ones. Pure functions: no
aiokafka import (the clients themselves are made in :mod:`pyconnect.kafka.clients`), and no I/O but the
reading of TLS stores (``ssl.*``, :mod:`pyconnect.config.tls`: PEM, PKCS12 and JKS, Java's rules).

**Java keys to aiokafka** (:func:`producer_kwargs`, :func:`consumer_kwargs`, :func:`admin_kwargs`).
Values may be strings or already typed. Keys with no aiokafka equivalent that cannot change behaviour we
promise (socket buffer sizes, serializers we replace with bytes, metrics reporters, ...) are dropped;
:func:`ignored_keys` lists them so the caller can log them once. A value that cannot be honoured (an
unreadable store or a wrong store password, an unknown SASL mechanism, a malformed number) raises
:class:`ClientConfigError` naming the key.
``sasl.mechanism=OAUTHBEARER`` over ``SASL_*`` gives the login settings under :data:`OAUTH_LOGIN` instead of
a username and password (:mod:`pyconnect.config.oauthbearer`; the client factories turn them into a token
provider).
Kafka 4 client defaults win over aiokafka's where they differ (``linger.ms`` 5, ``enable.idempotence``
true, ``acks`` all).

**The worker's own clients** (group member, cluster-id lookup, internal topics; Java passes the worker's
originals): :func:`worker_client_config` is the worker properties without the ``producer.``,
``consumer.`` and ``admin.`` prefixed keys, ``bootstrap.servers`` as one string. Internal-topic producers
add :func:`internal_producer_config`; client ids start with :func:`client_id_base`.

**Connector clients** (Java ``Worker.baseProducerConfigs`` / ``baseConsumerConfigs`` / ``adminConfigs``):

* source-task producer: Connect's forced defaults < worker ``producer.*`` (stripped) <
  ``metrics.context.*`` < the connector's ``producer.override.*`` (:func:`task_producer_config`);
* sink-task / offsets consumer: forced defaults < worker ``consumer.*`` < ``metrics.context.*`` <
  ``consumer.override.*`` (:func:`task_consumer_config`);
* connector admin: ``bootstrap.servers`` and ``client.id`` < every worker key not starting with
  ``producer.``/``consumer.``/``admin.`` < worker ``admin.*`` < ``admin.override.*`` <
  ``metrics.context.*`` (:func:`connector_admin_config`; the metrics context wins here, as in Java);
* the ``<role>.override.*`` values pass ``connector.client.config.override.policy`` first
  (:func:`client_overrides`).

**MirrorMaker 2 connector clients** (:func:`mirror_connector_client_config`, spec section 1.2), for a
``role`` client (``consumer``/``producer``/``admin``) on ``cluster`` (``source``/``target``):

1. ``<cluster>.cluster.<k>`` restricted to the connectivity keys (:data:`CLIENT_CONFIG_NAMES`:
   ``bootstrap.servers``, ``security.protocol``, ``ssl.*``, ``sasl.*``);
2. ``<role>.<k>``;
3. ``<cluster>.<role>.<k>``;
4. consumers: ``enable.auto.commit=false`` always, ``auto.offset.reset=earliest`` unless set;
5. ``client.id`` = ``[<user client.id>|]<S>-><T>|<connector name>[-<task index or ?>][|<role>]``
   (:func:`mirror_client_id`, KAFKA-14838).

Quirk kept from Java: ``consumer.poll.timeout.ms`` leaks into consumer maps as ``poll.timeout.ms``.

**MirrorClient** (Java ``MirrorClientConfig.clientConfig(prefix)``, :func:`mirror_client_config`): the
connectivity keys, ``admin.``/``consumer.``-prefixed connectivity keys winning; nothing else.

**mm2.properties** (Java ``MirrorMakerConfig``): the cluster properties of ``X``
(:func:`mm2_cluster_props`) are ``X.<k>`` stripped, then each connectivity key found there copied (if
absent) to ``producer.<k>``, ``consumer.<k>``, ``admin.<k>``, then the same for top-level connectivity
keys, which are also copied bare. A flow's connector config carries the cluster properties of each side
as ``<side>.cluster.<k>`` or, for keys starting with ``consumer``/``producer``/``admin``, ``<side>.<k>``
(:func:`mm2_connector_cluster_config`); a MirrorClient for ``X`` gets the top level overlaid with the
cluster properties (:func:`mm2_client_config`).
"""

from __future__ import annotations

import importlib.util
import logging
import re
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pyconnect.config import oauthbearer
from pyconnect.config.oauthbearer import ClientConfigError, OAuthLoginSettings
from pyconnect.config.security_keys import SECURITY_KEYS
from pyconnect.config.tls import TlsConfigError, client_ssl_context

log = logging.getLogger(__name__)

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1


# -- Java keys to aiokafka keyword arguments -------------------------------------------------------------


def _int(key: str, value: Any) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise ClientConfigError(
            f"Invalid value {value} for configuration {key}: Not a number of type INT"
        ) from None


def _bool(key: str, value: Any) -> bool:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ClientConfigError(
            f"Invalid value {value} for configuration {key}: Expected value to be either true or false"
        )
    return text == "true"


def _acks(key: str, value: Any) -> int | str:
    text = str(value).strip().lower()
    if text in ("all", "-1"):
        return "all"
    if text in ("0", "1"):
        return int(text)
    raise ClientConfigError(
        f"Invalid value {value} for configuration {key}: String must be one of: all, -1, 0, 1"
    )


def _compression(key: str, value: Any) -> str | None:
    text = str(value).strip().lower()
    if text == "none":
        return None
    if text in ("gzip", "snappy", "lz4", "zstd"):
        return text
    raise ClientConfigError(
        f"Invalid value {value} for configuration {key}: String must be one of: none, gzip, snappy, lz4, zstd"
    )


def _str(_key: str, value: Any) -> str:
    return str(value).strip()


SASL_MECHANISMS = ("GSSAPI", "OAUTHBEARER", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
"""The SASL mechanisms a client here can speak (Java accepts any name and fails when connecting)."""


def _sasl_mechanism(key: str, value: Any) -> str:
    """A mechanism this client can speak; GSSAPI only with the Python ``gssapi`` package (Kerberos)."""
    text = str(value).strip()
    if text not in SASL_MECHANISMS:
        raise ClientConfigError(
            f"Invalid value {text} for configuration {key}: unknown SASL mechanism; "
            f"expected one of {', '.join(SASL_MECHANISMS)}"
        )
    if text == "GSSAPI" and importlib.util.find_spec("gssapi") is None:
        raise ClientConfigError(
            f"Invalid value {text} for configuration {key}: GSSAPI (Kerberos) needs the Python package "
            "'gssapi', which is not installed; install it, or use SCRAM-SHA-512 (or PLAIN over SASL_SSL)"
        )
    return text


def _reset(key: str, value: Any) -> str:
    text = str(value).strip().lower()
    if text not in ("earliest", "latest", "none"):
        raise ClientConfigError(
            f"Invalid value {value} for configuration {key}: Invalid value for auto.offset.reset"
        )
    return text


Converter = Callable[[str, Any], Any]

_COMMON: dict[str, tuple[str, Converter]] = {
    "bootstrap.servers": ("bootstrap_servers", _str),
    "client.id": ("client_id", _str),
    "request.timeout.ms": ("request_timeout_ms", _int),
    "retry.backoff.ms": ("retry_backoff_ms", _int),
    "metadata.max.age.ms": ("metadata_max_age_ms", _int),
    "connections.max.idle.ms": ("connections_max_idle_ms", _int),
    "security.protocol": ("security_protocol", _str),
    "sasl.mechanism": ("sasl_mechanism", _str),
}

_PRODUCER: dict[str, tuple[str, Converter]] = {
    "acks": ("acks", _acks),
    "compression.type": ("compression_type", _compression),
    "batch.size": ("max_batch_size", _int),
    "max.request.size": ("max_request_size", _int),
    "linger.ms": ("linger_ms", _int),
    "enable.idempotence": ("enable_idempotence", _bool),
    "transactional.id": ("transactional_id", _str),
    "transaction.timeout.ms": ("transaction_timeout_ms", _int),
}

_CONSUMER: dict[str, tuple[str, Converter]] = {
    "group.id": ("group_id", _str),
    "group.instance.id": ("group_instance_id", _str),
    "fetch.max.wait.ms": ("fetch_max_wait_ms", _int),
    "fetch.max.bytes": ("fetch_max_bytes", _int),
    "fetch.min.bytes": ("fetch_min_bytes", _int),
    "max.partition.fetch.bytes": ("max_partition_fetch_bytes", _int),
    "auto.offset.reset": ("auto_offset_reset", _reset),
    "enable.auto.commit": ("enable_auto_commit", _bool),
    "auto.commit.interval.ms": ("auto_commit_interval_ms", _int),
    "check.crcs": ("check_crcs", _bool),
    "max.poll.interval.ms": ("max_poll_interval_ms", _int),
    "session.timeout.ms": ("session_timeout_ms", _int),
    "heartbeat.interval.ms": ("heartbeat_interval_ms", _int),
    "max.poll.records": ("max_poll_records", _int),
    "isolation.level": ("isolation_level", _str),
    "client.rack": ("client_rack", _str),
}

_PRODUCER_DEFAULTS: dict[str, Any] = {"acks": "all", "linger_ms": 5, "enable_idempotence": True}

_SSL_KEYS = (
    "ssl.truststore.location",
    "ssl.truststore.type",
    "ssl.truststore.certificates",
    "ssl.keystore.location",
    "ssl.keystore.type",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.key.password",
    "ssl.keystore.password",
    "ssl.truststore.password",
    "ssl.endpoint.identification.algorithm",
)

_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def parse_jaas_credentials(jaas: str) -> tuple[str, str]:
    """username and password of a PlainLoginModule / ScramLoginModule ``sasl.jaas.config`` value."""
    options = {k: re.sub(r"\\(.)", r"\1", v) for k, v in _JAAS_OPTION.findall(jaas)}
    if "username" not in options or "password" not in options:
        raise ClientConfigError(
            'Invalid value for configuration sasl.jaas.config: expected username="..." password="..."'
        )
    return options["username"], options["password"]


OAUTH_LOGIN = "sasl_oauth_login"
"""The keyword under which the ``*_kwargs`` functions hand an OAUTHBEARER client its
:class:`~pyconnect.config.oauthbearer.OAuthLoginSettings`. aiokafka has no such keyword: the client
factories of :mod:`pyconnect.kafka.clients` replace it with a token provider (``sasl_oauth_token_provider``),
so a client made without them fails at once instead of connecting without a login."""


def oauth_login(kwargs: Mapping[str, Any]) -> OAuthLoginSettings | None:
    """The OAUTHBEARER login settings in ``<role>_kwargs`` output, if any."""
    value = kwargs.get(OAUTH_LOGIN)
    return value if isinstance(value, OAuthLoginSettings) else None


def _ssl_context(config: Mapping[str, Any]) -> ssl.SSLContext:
    try:
        return client_ssl_context(config)
    except TlsConfigError as exc:
        raise ClientConfigError(str(exc)) from None


def _translate(config: Mapping[str, Any], table: Mapping[str, tuple[str, Converter]]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for key, (target, convert) in table.items():
        if key in config and config[key] is not None and str(config[key]) != "":
            kwargs[target] = convert(key, config[key])
    if str(kwargs.get("security_protocol", "")).startswith("SASL_") and "sasl_mechanism" in kwargs:
        _sasl_mechanism("sasl.mechanism", kwargs["sasl_mechanism"])
    if "security_protocol" in kwargs and kwargs["security_protocol"] in ("SSL", "SASL_SSL"):
        kwargs["ssl_context"] = _ssl_context(config)
    if kwargs.get("sasl_mechanism") == oauthbearer.MECHANISM:
        if str(kwargs.get("security_protocol", "")).startswith("SASL_"):
            kwargs[OAUTH_LOGIN] = oauthbearer.oauth_settings(config)
    elif "sasl.jaas.config" in config:
        kwargs["sasl_plain_username"], kwargs["sasl_plain_password"] = parse_jaas_credentials(
            str(config["sasl.jaas.config"])
        )
    return kwargs


def ignored_keys(config: Mapping[str, Any], role: str) -> list[str]:
    """The keys of ``config`` that ``<role>_kwargs`` drops (role: producer, consumer, admin)."""
    known = set(_COMMON) | set(_SSL_KEYS) | {"sasl.jaas.config"}
    if str(config.get("sasl.mechanism", "")).strip() == oauthbearer.MECHANISM:
        known |= set(oauthbearer.KEYS)
    known |= set(_PRODUCER) if role == "producer" else set(_CONSUMER) if role == "consumer" else set()
    return sorted(k for k in config if k not in known)


def producer_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    return {**_PRODUCER_DEFAULTS, **_translate(config, {**_COMMON, **_PRODUCER})}


JAVA_DELIVERY_TIMEOUT_MS = 120_000
JAVA_MAX_BLOCK_MS = 60_000


@dataclass(frozen=True, slots=True)
class ProducerBounds:
    """Java's two producer time bounds that aiokafka has no keyword for (both in seconds).

    - ``delivery_s`` (``delivery.timeout.ms``, Java default 120 s): how long a batch may wait for an
      acknowledgement, retries included, before its future fails. aiokafka uses its request timeout.
    - ``max_block_s`` (``max.block.ms``, Java default 60 s): how long handing a batch to the producer
      may wait for metadata or for room in the queue before a retriable timeout.

    Connect gives task producers ``Integer.MAX_VALUE`` and ``Long.MAX_VALUE``: retry, never fail.
    """

    delivery_s: float
    max_block_s: float


def producer_bounds(config: Mapping[str, Any]) -> ProducerBounds:
    """The :class:`ProducerBounds` of a Java producer config (defaults as in Java)."""
    delivery = config.get("delivery.timeout.ms")
    block = config.get("max.block.ms")
    return ProducerBounds(
        delivery_s=(JAVA_DELIVERY_TIMEOUT_MS if delivery is None else _int("delivery.timeout.ms", delivery))
        / 1000,
        max_block_s=(JAVA_MAX_BLOCK_MS if block is None else _int("max.block.ms", block)) / 1000,
    )


def consumer_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    return _translate(config, {**_COMMON, **_CONSUMER})


def admin_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    return _translate(config, _COMMON)


# -- the worker's own clients and its internal topics ------------------------------------------------------


class WorkerSettings(Protocol):
    """What the builders below read of a worker config; :class:`~pyconnect.config.worker.WorkerConfig`
    is the one the runtime passes (it builds its task clients' configs with them, so this module does
    not import it)."""

    @property
    def originals(self) -> dict[str, Any]:
        """Every property given, config variables resolved."""
        ...

    @property
    def bootstrap_servers_string(self) -> str:
        """``bootstrap.servers`` as one comma-separated string."""
        ...

    @property
    def group_id(self) -> str | None: ...

    @property
    def client_id(self) -> str | None: ...

    def with_prefix(self, prefix: str, strip: bool = True) -> dict[str, Any]:
        """The originals whose key starts with ``prefix`` (Java ``originalsWithPrefix``)."""
        ...


CLIENT_PREFIXES = ("producer.", "consumer.", "admin.")
METRICS_CONTEXT_PREFIX = "metrics.context."


def worker_client_config(worker: WorkerSettings) -> dict[str, Any]:
    """The worker's own Kafka clients (group member, admin, internal-topic logs): its originals without
    the ``producer.``, ``consumer.`` and ``admin.`` prefixed keys, ``bootstrap.servers`` as one string."""
    config = {
        k: v for k, v in worker.originals.items() if v is not None and not k.startswith(CLIENT_PREFIXES)
    }
    config["bootstrap.servers"] = worker.bootstrap_servers_string
    return config


def client_id_base(worker: WorkerSettings) -> str:
    """Java's ``ConnectUtils.clientIdBase``: ``<group.id>-`` or ``<group.id>-<client.id>-``."""
    group = worker.group_id or ""
    client = worker.client_id or ""
    return f"{group}-{client}-" if client else f"{group}-"


def internal_producer_config(
    client_id: str, *, status: bool = False, give_up_after_ms: int | None = None
) -> dict[str, Any]:
    """Internal-topic producer settings over :func:`worker_client_config` (Java: no idempotence,
    acks=all; the status store's producer keeps client retries bounded).

    ``give_up_after_ms`` (beyond Java, for source offsets: the worker's ``offset.flush.timeout.ms``)
    bounds delivery instead of Java's endless retries: a write the worker gave up on is not retried
    later by the client, where it could land after a newer owner's commit and rewind the offsets (a
    worker cut off mid-commit, whose tasks moved while the write waited)."""
    settings: dict[str, Any] = {"client.id": client_id, "enable.idempotence": "false", "acks": "all"}
    if give_up_after_ms is not None:
        settings["delivery.timeout.ms"] = str(give_up_after_ms)
    elif not status:
        settings["delivery.timeout.ms"] = str(INT_MAX)
    return settings


def transactional_producer_id(group_id: str) -> str:
    """Java's ``DistributedConfig.transactionalProducerId``: the leader's config-topic writer."""
    return f"connect-cluster-{group_id}"


def fencable_producer_config(worker: WorkerSettings, client_id: str) -> dict[str, Any]:
    """The leader's transactional config-topic producer (Java ``fencableProducerProps``): the worker's
    client config, ``<client id>-leader``, acks=all, idempotence on and
    ``transactional.id=connect-cluster-<group.id>`` (a user's own ``transactional.id`` is overridden,
    as Java does)."""
    return {
        **worker_client_config(worker),
        "client.id": f"{client_id}-leader",
        "acks": "all",
        "enable.idempotence": "true",
        "delivery.timeout.ms": str(INT_MAX),
        "transactional.id": transactional_producer_id(worker.group_id or ""),
    }


# -- connector clients ------------------------------------------------------------------------------------

PRINCIPAL_OVERRIDES = ("sasl.jaas.config", "sasl.mechanism", "security.protocol")


def client_overrides(
    connector_config: Mapping[str, str], policy: str, role: str = "producer"
) -> dict[str, str]:
    """The connector's ``<role>.override.*`` settings (stripped) that the override policy lets through.

    ``policy`` is ``connector.client.config.override.policy``: ``All`` passes everything, ``None`` refuses
    any override, ``Principal`` only the SASL/security keys; a refusal raises ``ValueError``.
    """
    prefix = f"{role}.override."
    overrides = {k[len(prefix) :]: v for k, v in connector_config.items() if k.startswith(prefix)}
    simple = policy.rsplit(".", 1)[-1].removesuffix("ConnectorClientConfigOverridePolicy").lower()
    if simple == "none":
        if overrides:
            raise ValueError(f"The 'None' policy does not allow any client overrides: {sorted(overrides)}")
        return {}
    if simple == "principal":
        forbidden = sorted(k for k in overrides if k not in PRINCIPAL_OVERRIDES)
        if forbidden:
            raise ValueError(f"The 'Principal' policy does not allow these client overrides: {forbidden}")
    return overrides


def metrics_context(worker: WorkerSettings, cluster_id: str) -> dict[str, Any]:
    """``metrics.context.*`` for clients (Java ``ConnectUtils.addMetricsContextProperties``)."""
    context = worker.with_prefix(METRICS_CONTEXT_PREFIX, strip=False)
    context[METRICS_CONTEXT_PREFIX + "connect.kafka.cluster.id"] = cluster_id
    group_id = worker.originals.get("group.id")
    if group_id is not None:
        context[METRICS_CONTEXT_PREFIX + "connect.group.id"] = group_id
    return context


def task_producer_config(
    worker: WorkerSettings, client_id: str, cluster_id: str, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A source task's producer config (Java ``Worker.baseProducerConfigs``)."""
    result: dict[str, Any] = {
        "bootstrap.servers": worker.bootstrap_servers_string,
        "key.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
        "value.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
        "max.block.ms": str(LONG_MAX),
        "enable.idempotence": "false",
        "acks": "all",
        "max.in.flight.requests.per.connection": "1",
        "delivery.timeout.ms": str(INT_MAX),
        "client.id": client_id,
    }
    result.update(worker.with_prefix("producer."))
    result.update(metrics_context(worker, cluster_id))
    result.update(overrides or {})
    return result


def task_transactional_id(group_id: str, connector: str, task: int) -> str:
    """Java's ``Worker.taskTransactionalId``: ``<group.id>-<connector>-<task>`` (KIP-618)."""
    return f"{group_id}-{connector}-{task}"


def ensure_property(
    props: dict[str, Any], key: str, expected: str, justification: str, *, case_sensitive: bool
) -> None:
    """Java ``ConnectUtils.ensureProperty``: set ``key`` to ``expected``, warning (Java's words) when
    that replaces a different value."""
    if key in props:
        value = str(props[key])
        if value == expected or (not case_sensitive and value.lower() == expected.lower()):
            return
        log.warning(
            "The value '%s' for the '%s' property will be ignored as it cannot be overridden %s. "
            "The value '%s' will be used instead.",
            value,
            key,
            justification,
            expected,
        )
    props[key] = expected


def exactly_once_task_producer_config(
    worker: WorkerSettings,
    connector: str,
    task: int,
    cluster_id: str,
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """An exactly-once source task's producer (Java ``Worker.exactlyOnceSourceTaskProducerConfigs``):
    :func:`task_producer_config`, then idempotence and ``transactional.id`` forced; a user's
    conflicting value is replaced with a warning (Java ``ConnectUtils.ensureProperty``)."""
    result = task_producer_config(worker, f"connector-producer-{connector}-{task}", cluster_id, overrides)
    if (
        "enable.idempotence" not in (overrides or {})
        and "producer.enable.idempotence" not in worker.originals
    ):
        del result["enable.idempotence"]  # Connect's own "false" default, not the user's choice
    justification = "for connectors when exactly-once source support is enabled"
    ensure_property(result, "enable.idempotence", "true", justification, case_sensitive=False)
    ensure_property(
        result,
        "transactional.id",
        task_transactional_id(worker.group_id or "", connector, task),
        justification,
        case_sensitive=True,
    )
    return result


def task_consumer_config(
    worker: WorkerSettings,
    group_id: str,
    client_id: str,
    cluster_id: str,
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A sink task's or offsets consumer's config (Java ``Worker.baseConsumerConfigs``); ``group_id`` is
    ``connect-<connector>`` for sink connectors."""
    result: dict[str, Any] = {
        "group.id": group_id,
        "client.id": client_id,
        "bootstrap.servers": worker.bootstrap_servers_string,
        "enable.auto.commit": "false",
        "auto.offset.reset": "earliest",
        "key.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
        "value.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
    }
    result.update(worker.with_prefix("consumer."))
    result.update(metrics_context(worker, cluster_id))
    result.update(overrides or {})
    return result


def connector_admin_config(
    worker: WorkerSettings, client_id: str, cluster_id: str, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A connector's admin client config (Java ``Worker.adminConfigs``)."""
    result: dict[str, Any] = {"bootstrap.servers": worker.bootstrap_servers_string, "client.id": client_id}
    result.update({k: v for k, v in worker.originals.items() if not k.startswith(CLIENT_PREFIXES)})
    result.update(worker.with_prefix("admin."))
    result.update(overrides or {})
    result.update(metrics_context(worker, cluster_id))
    return result


# -- MirrorMaker 2 ----------------------------------------------------------------------------------------

#: ``MirrorClientConfig.CLIENT_CONFIG_DEF.names()``: the keys ``source.cluster.``/``target.cluster.`` may carry.
CLIENT_CONFIG_NAMES: frozenset[str] = frozenset(
    ["bootstrap.servers", "security.protocol"] + [key.name for key in SECURITY_KEYS]
)
MIRROR_ROLES = ("producer", "consumer", "admin")
#: What ``MirrorClientConfig`` reads besides :data:`CLIENT_CONFIG_NAMES`.
MIRROR_CLIENT_PREFIXES = ("admin.", "consumer.", "replication.policy.")
_MM2_CLIENT_KEY = re.compile("(?:consumer|producer|admin)[^\n\r\u0085\u2028\u2029]*")


def _stripped(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """``Utils.entriesWithPrefix(props, prefix)``: matching keys with the prefix stripped."""
    return {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}


def mirror_connector_client_config(originals: Mapping[str, str], cluster: str, role: str) -> dict[str, str]:
    """Steps 1-4 for a ``role`` client of a mirror connector or task on ``cluster`` (no ``client.id``)."""
    props = {k: v for k, v in _stripped(originals, f"{cluster}.cluster.").items() if k in CLIENT_CONFIG_NAMES}
    props.update(_stripped(originals, f"{role}."))
    props.update(_stripped(originals, f"{cluster}.{role}."))
    if role == "consumer":
        props["enable.auto.commit"] = "false"
        props.setdefault("auto.offset.reset", "earliest")
    return props


def mirror_client_id(props: dict[str, str], label: str, role: str | None) -> dict[str, str]:
    """Step 5, in place: ``client.id`` becomes ``[<user client.id>|]<label>[|<role>]``; returns ``props``."""
    label += "" if role is None else "|" + role
    user = props.get("client.id")
    props["client.id"] = label if user is None else f"{user}|{label}"
    return props


def mirror_client_config(config: Mapping[str, Any], role: str) -> dict[str, str]:
    """Java ``MirrorClientConfig.clientConfig(<role>.)``: connectivity keys, ``<role>.``-prefixed ones winning."""
    props = {k: str(v) for k, v in config.items() if k in CLIENT_CONFIG_NAMES and v is not None}
    props.update(
        {
            k: str(v)
            for k, v in _stripped(config, role + ".").items()
            if k in CLIENT_CONFIG_NAMES and v is not None
        }
    )
    return props


def mirror_client_originals(props: Mapping[str, str]) -> dict[str, str]:
    """The part of ``props`` a ``MirrorClientConfig`` reads (connectivity, ``admin.*``, ``consumer.*``,
    ``replication.policy.*``)."""
    return {
        k: v for k, v in props.items() if k in CLIENT_CONFIG_NAMES or k.startswith(MIRROR_CLIENT_PREFIXES)
    }


def mm2_cluster_props(raw: Mapping[str, str], alias: str) -> dict[str, str]:
    """Java ``MirrorMakerConfig.clusterProps(alias)`` over the ``mm2.properties`` map ``raw``."""
    props = _stripped(raw, alias + ".")
    for source, bare in ((dict(props), False), (raw, True)):
        for key in sorted(CLIENT_CONFIG_NAMES):
            value = source.get(key)
            if value is None:
                continue
            for role in MIRROR_ROLES:
                props.setdefault(f"{role}.{key}", value)
            if bare:
                props.setdefault(key, value)
    return props


def mm2_client_config(raw: Mapping[str, str], alias: str) -> dict[str, str]:
    """Originals of Java's ``MirrorMakerConfig.clientConfig(alias)``, variables not yet resolved."""
    return {**raw, **mm2_cluster_props(raw, alias)}


def mm2_connector_cluster_config(cluster_props: Mapping[str, str], side: str) -> dict[str, str]:
    """The cluster properties of one side (``source``/``target``) of a flow as connector keys: first
    ``<side>.cluster.<k>`` for the non-client keys, then ``<side>.<k>`` for the keys starting with
    ``consumer``/``producer``/``admin`` (that order is the order of the config Java writes)."""
    props = {f"{side}.cluster.{k}": v for k, v in cluster_props.items() if not _MM2_CLIENT_KEY.fullmatch(k)}
    props.update({f"{side}.{k}": v for k, v in cluster_props.items() if _MM2_CLIENT_KEY.fullmatch(k)})
    return props
