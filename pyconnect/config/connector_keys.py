"""Connector config tables (Kafka Connect 4.3.1 ``ConnectorConfig``, ``SourceConnectorConfig``,
``SinkConnectorConfig``): the framework keys every connector config has, plus the source/sink extras.

Generated once from the Java jar's ``ConfigDef`` (names, types, defaults, importance, documentation,
groups, order, width, display names) and kept by hand since. These rows feed
``GET /connector-plugins/{type}/config`` and ``/config/validate``.

Keys whose Java validator or recommender needs the plugin registry (``key.converter``,
``value.converter``, ``header.converter`` and the ``*.plugin.version`` keys) are declared here without
one; the plugin layer supplies them with ``dataclasses.replace(key, validator=..., recommender=...)``.
Transform/predicate-specific keys (``transforms.<alias>.*``) are added per request by the herder, as
Java's ``EnrichedConnectorConfig`` does.
"""

from __future__ import annotations

import re

from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.javastr import invalid_value
from pyconnect.config.types import Importance, Type, Width
from pyconnect.config.validators import (
    CaseInsensitiveValidString,
    CompositeValidator,
    LambdaValidator,
    NonEmptyString,
    NonEmptyStringWithoutControlChars,
    NonNullValidator,
    Range,
    ValidList,
    ValidString,
)


class UniqueAliases:
    """Rejects a list with a repeated alias: ``Duplicate alias provided.``"""

    def __init__(self, description: str) -> None:
        self.description = description

    def __call__(self, name: str, value: object) -> None:
        assert isinstance(value, list)
        if len(set(value)) < len(value):
            raise invalid_value(name, value, "Duplicate alias provided.")

    def __str__(self) -> str:
        return self.description


def _optional_at_least_zero(name: str, value: object) -> None:
    if value is not None:
        Range.at_least(0)(name, value)


def _valid_regex(name: str, value: object) -> None:
    """Java's ``RegexValidator``; the reason text is Python's, not ``java.util.regex``'s."""
    try:
        re.compile(str(value))
    except re.error as exc:
        raise invalid_value(name, value, f"Invalid regex: {exc}") from exc


OPTIONAL_AT_LEAST_ZERO = LambdaValidator(_optional_at_least_zero, "[0,...]")
VALID_REGEX = LambdaValidator(_valid_regex, "valid regex")

CONNECTOR_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "name",
        Type.STRING,
        importance=Importance.HIGH,
        documentation="Globally unique name to use for this connector.",
        validator=NonEmptyStringWithoutControlChars(),
        group="Common",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Connector name",
    ),
    ConfigKey(
        "connector.class",
        Type.STRING,
        importance=Importance.HIGH,
        documentation='Name or alias of the class for this connector. Must be a subclass of org.apache.kafka.connect.connector.Connector. If the connector is org.apache.kafka.connect.file.FileStreamSinkConnector, you can either specify this full name,  or use "FileStreamSink" or "FileStreamSinkConnector" to make the configuration a bit shorter',
        group="Common",
        order_in_group=2,
        width=Width.LONG,
        display_name="Connector class",
    ),
    ConfigKey(
        "connector.plugin.version",
        Type.STRING,
        default=None,
        importance=Importance.MEDIUM,
        documentation="Version of the connector.",
        group="Common",
        order_in_group=3,
        width=Width.MEDIUM,
        display_name="Connector version",
    ),
    ConfigKey(
        "tasks.max",
        Type.INT,
        default=1,
        importance=Importance.HIGH,
        documentation="Maximum number of tasks to use for this connector.",
        validator=Range.at_least(1),
        group="Common",
        order_in_group=4,
        width=Width.SHORT,
        display_name="Tasks max",
    ),
    ConfigKey(
        "tasks.max.enforce",
        Type.BOOLEAN,
        default=True,
        importance=Importance.LOW,
        documentation="(Deprecated) Whether to enforce that the tasks.max property is respected by the connector. By default, connectors that generate too many tasks will fail, and existing sets of tasks that exceed the tasks.max property will also be failed. If this property is set to false, then connectors will be allowed to generate more than the maximum number of tasks, and existing sets of tasks that exceed the tasks.max property will be allowed to run. This property is deprecated and will be removed in an upcoming major release.",
        group="Common",
        order_in_group=5,
        width=Width.SHORT,
        display_name="Enforce tasks max",
    ),
    ConfigKey(
        "key.converter",
        Type.CLASS,
        default=None,
        importance=Importance.LOW,
        documentation="Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the keys in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro.",
        group="Common",
        order_in_group=6,
        width=Width.SHORT,
        display_name="Key converter class",
    ),
    ConfigKey(
        "key.converter.plugin.version",
        Type.STRING,
        default=None,
        importance=Importance.LOW,
        documentation="Version of the key converter.",
        group="Common",
        order_in_group=7,
        width=Width.SHORT,
        display_name="Key converter version",
    ),
    ConfigKey(
        "value.converter",
        Type.CLASS,
        default=None,
        importance=Importance.LOW,
        documentation="Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro.",
        group="Common",
        order_in_group=8,
        width=Width.SHORT,
        display_name="Value converter class",
    ),
    ConfigKey(
        "value.converter.plugin.version",
        Type.STRING,
        default=None,
        importance=Importance.LOW,
        documentation="Version of the value converter.",
        group="Common",
        order_in_group=9,
        width=Width.SHORT,
        display_name="Value converter version",
    ),
    ConfigKey(
        "header.converter",
        Type.CLASS,
        default=None,
        importance=Importance.LOW,
        documentation="HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the header values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro. By default, the SimpleHeaderConverter is used to serialize header values to strings and deserialize them by inferring the schemas.",
        group="Common",
        order_in_group=10,
        width=Width.SHORT,
        display_name="Header converter class",
    ),
    ConfigKey(
        "header.converter.plugin.version",
        Type.STRING,
        default=None,
        importance=Importance.LOW,
        documentation="Version of the header converter.",
        group="Common",
        order_in_group=11,
        width=Width.SHORT,
        display_name="Header converter version",
    ),
    ConfigKey(
        "transforms",
        Type.LIST,
        default=[],
        importance=Importance.LOW,
        documentation="Aliases for the transformations to be applied to records.",
        validator=CompositeValidator(NonNullValidator(), UniqueAliases("unique transformation aliases")),
        group="Transforms",
        order_in_group=12,
        width=Width.LONG,
        display_name="Transforms",
    ),
    ConfigKey(
        "predicates",
        Type.LIST,
        default=[],
        importance=Importance.LOW,
        documentation="Aliases for the predicates used by transformations.",
        validator=CompositeValidator(NonNullValidator(), UniqueAliases("unique predicate aliases")),
        group="Predicates",
        order_in_group=13,
        width=Width.LONG,
        display_name="Predicates",
    ),
    ConfigKey(
        "config.action.reload",
        Type.STRING,
        default="restart",
        importance=Importance.LOW,
        documentation="The action that Connect should take on the connector when changes in external configuration providers result in a change in the connector's configuration properties. A value of 'none' indicates that Connect will do nothing. A value of 'restart' indicates that Connect should restart/reload the connector with the updated configuration properties.The restart may actually be scheduled in the future if the external configuration provider indicates that a configuration value will expire in the future.",
        validator=ValidString("none", "restart"),
        group="Common",
        order_in_group=14,
        width=Width.MEDIUM,
        display_name="Reload Action",
    ),
    ConfigKey(
        "errors.retry.timeout",
        Type.LONG,
        default=0,
        importance=Importance.MEDIUM,
        documentation="The maximum duration in milliseconds that a failed operation will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for infinite retries.",
        group="Error Handling",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Retry Timeout for Errors",
    ),
    ConfigKey(
        "errors.retry.delay.max.ms",
        Type.LONG,
        default=60000,
        importance=Importance.MEDIUM,
        documentation="The maximum duration in milliseconds between consecutive retry attempts. Jitter will be added to the delay once this limit is reached to prevent thundering herd issues.",
        group="Error Handling",
        order_in_group=2,
        width=Width.MEDIUM,
        display_name="Maximum Delay Between Retries for Errors",
    ),
    ConfigKey(
        "errors.tolerance",
        Type.STRING,
        default="none",
        importance=Importance.MEDIUM,
        documentation="Behavior for tolerating errors during connector operation. 'none' is the default value and signals that any error will result in an immediate connector task failure; 'all' changes the behavior to skip over problematic records.",
        validator=ValidString("none", "all"),
        group="Error Handling",
        order_in_group=3,
        width=Width.SHORT,
        display_name="Error Tolerance",
    ),
    ConfigKey(
        "errors.log.enable",
        Type.BOOLEAN,
        default=False,
        importance=Importance.MEDIUM,
        documentation="If true, write each error and the details of the failed operation and problematic record to the Connect application log. This is 'false' by default, so that only errors that are not tolerated are reported.",
        group="Error Handling",
        order_in_group=4,
        width=Width.SHORT,
        display_name="Log Errors",
    ),
    ConfigKey(
        "errors.log.include.messages",
        Type.BOOLEAN,
        default=False,
        importance=Importance.MEDIUM,
        documentation="Whether to include in the log the Connect record that resulted in a failure. For sink records, the topic, partition, offset, and timestamp will be logged. For source records, the key and value (and their schemas), all headers, and the timestamp, Kafka topic, Kafka partition, source partition, and source offset will be logged. This is 'false' by default, which will prevent record keys, values, and headers from being written to log files.",
        group="Error Handling",
        order_in_group=5,
        width=Width.SHORT,
        display_name="Log Error Details",
    ),
)

SOURCE_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "topic.creation.groups",
        Type.LIST,
        default=[],
        importance=Importance.LOW,
        documentation="Groups of configurations for topics created by source connectors",
        validator=CompositeValidator(NonNullValidator(), UniqueAliases("unique topic creation groups")),
        group="Topic Creation",
        order_in_group=1,
        width=Width.LONG,
        display_name="Topic Creation Groups",
    ),
    ConfigKey(
        "exactly.once.support",
        Type.STRING,
        default="requested",
        importance=Importance.MEDIUM,
        documentation='Permitted values are requested, required. If set to "required", forces a preflight check for the connector to ensure that it can provide exactly-once semantics with the given configuration. Some connectors may be capable of providing exactly-once semantics but not signal to Connect that they support this; in that case, documentation for the connector should be consulted carefully before creating it, and the value for this property should be set to "requested". Additionally, if the value is set to "required" but the worker that performs preflight validation does not have exactly-once support enabled for source connectors, requests to create or validate the connector will fail.',
        validator=CaseInsensitiveValidString("REQUIRED", "REQUESTED"),
        group="Exactly Once Support",
        order_in_group=2,
        width=Width.SHORT,
        display_name="Exactly once support",
    ),
    ConfigKey(
        "transaction.boundary",
        Type.STRING,
        default="poll",
        importance=Importance.MEDIUM,
        documentation="Permitted values are: poll, interval, connector. If set to 'poll', a new producer transaction will be started and committed for every batch of records that each task from this connector provides to Connect. If set to 'connector', relies on connector-defined transaction boundaries; note that not all connectors are capable of defining their own transaction boundaries, and in that case, attempts to instantiate a connector with this value will fail. Finally, if set to 'interval', commits transactions only after a user-defined time interval has passed.",
        validator=CaseInsensitiveValidString("INTERVAL", "POLL", "CONNECTOR"),
        group="Exactly Once Support",
        order_in_group=3,
        width=Width.SHORT,
        display_name="Transaction Boundary",
    ),
    ConfigKey(
        "transaction.boundary.interval.ms",
        Type.LONG,
        default=None,
        importance=Importance.LOW,
        documentation="If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction commits by connector tasks. If unset, defaults to the value of the worker-level 'offset.flush.interval.ms' property. It has no effect if a different transaction.boundary is specified.",
        validator=OPTIONAL_AT_LEAST_ZERO,
        group="Exactly Once Support",
        order_in_group=4,
        width=Width.SHORT,
        display_name="Transaction boundary interval",
    ),
    ConfigKey(
        "offsets.storage.topic",
        Type.STRING,
        default=None,
        importance=Importance.LOW,
        documentation="The name of a separate offsets topic to use for this connector. If empty or not specified, the worker\u2019s global offsets topic name will be used. If specified, the offsets topic will be created if it does not already exist on the Kafka cluster targeted by this connector (which may be different from the one used for the worker's global offsets topic if the bootstrap.servers property of the connector's producer has been overridden from the worker's). Only applicable in distributed mode; in standalone mode, setting this property will have no effect.",
        validator=NonEmptyString(),
        group="offsets.topic",
        order_in_group=1,
        width=Width.LONG,
        display_name="Offsets topic",
    ),
)

SINK_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "topics",
        Type.LIST,
        default=[],
        importance=Importance.HIGH,
        documentation="List of topics to consume, separated by commas",
        validator=ValidList.any_non_duplicate_values(allow_empty=True, allow_null=False),
        group="Common",
        order_in_group=4,
        width=Width.LONG,
        display_name="Topics",
    ),
    ConfigKey(
        "topics.regex",
        Type.STRING,
        default="",
        importance=Importance.HIGH,
        documentation="Regular expression giving topics to consume. Under the hood, the regex is compiled to a <code>java.util.regex.Pattern</code>. Only one of topics or topics.regex should be specified.",
        validator=VALID_REGEX,
        group="Common",
        order_in_group=4,
        width=Width.LONG,
        display_name="Topics regex",
    ),
    ConfigKey(
        "errors.deadletterqueue.topic.name",
        Type.STRING,
        default="",
        importance=Importance.MEDIUM,
        documentation="The name of the topic to be used as the dead letter queue (DLQ) for messages that result in an error when processed by this sink connector, or its transformations or converters. The topic name is blank by default, which means that no messages are to be recorded in the DLQ.",
        group="Error Handling",
        order_in_group=6,
        width=Width.MEDIUM,
        display_name="Dead Letter Queue Topic Name",
    ),
    ConfigKey(
        "errors.deadletterqueue.topic.replication.factor",
        Type.SHORT,
        default=3,
        importance=Importance.MEDIUM,
        documentation="Replication factor used to create the dead letter queue topic when it doesn't already exist.",
        group="Error Handling",
        order_in_group=7,
        width=Width.MEDIUM,
        display_name="Dead Letter Queue Topic Replication Factor",
    ),
    ConfigKey(
        "errors.deadletterqueue.context.headers.enable",
        Type.BOOLEAN,
        default=False,
        importance=Importance.MEDIUM,
        documentation="If true, add headers containing error context to the messages written to the dead letter queue. To avoid clashing with headers from the original record, all error context header keys, all error context header keys will start with <code>__connect.errors.</code>",
        group="Error Handling",
        order_in_group=8,
        width=Width.MEDIUM,
        display_name="Enable Error Context Headers",
    ),
)

CONNECTOR_CONFIG_DEF = ConfigDef(CONNECTOR_KEYS)
SOURCE_CONNECTOR_CONFIG_DEF = ConfigDef(CONNECTOR_KEYS + SOURCE_KEYS)
SINK_CONNECTOR_CONFIG_DEF = ConfigDef(CONNECTOR_KEYS + SINK_KEYS)
