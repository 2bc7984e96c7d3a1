"""The OpenAPI 3 description of the Connect REST API served at ``GET /openapi.json``.

Hand-written next to the route table (``resources.routes``); ``tests/unit/test_rest_openapi_doc.py``
checks that both name the same operations, and the schemathesis run in
``tests/integration/test_rest_openapi.py`` checks live answers against it. Every operation declares
its success statuses and ``4XX``/``5XX`` with the error body ``{"error_code", "message"}``.
"""

from __future__ import annotations

import functools
from typing import Any

from pyconnect import COMPATIBLE_KAFKA_VERSION

JSON = "application/json"


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _obj(required: list[str], props: dict[str, Any], *, extra: bool = True) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "required": required, "properties": props}
    if not extra:
        schema["additionalProperties"] = False
    return schema


STRING = {"type": "string"}
NULLABLE_STRING = {"type": "string", "nullable": True}
INT = {"type": "integer"}
BOOL = {"type": "boolean"}
STRING_MAP = {"type": "object", "additionalProperties": STRING}
NULLABLE_STRING_MAP = {"type": "object", "additionalProperties": NULLABLE_STRING}
PRIMITIVE_MAP = {
    "type": "object",
    "additionalProperties": {
        "nullable": True,
        "oneOf": [STRING, {"type": "number"}, BOOL],
    },
}
CONNECTOR_TYPE = {"type": "string", "enum": ["source", "sink", "unknown"]}
STATE = {
    "type": "string",
    "enum": ["UNASSIGNED", "RUNNING", "PAUSED", "FAILED", "RESTARTING", "STOPPED"],
}
JAVA_LEVEL = {"type": "string"}

SCHEMAS: dict[str, Any] = {
    "Error": _obj(["error_code", "message"], {"error_code": INT, "message": STRING}),
    "ServerInfo": _obj(
        ["version", "commit", "kafka_cluster_id"],
        {"version": STRING, "commit": STRING, "kafka_cluster_id": STRING},
    ),
    "Health": _obj(["status", "message"], {"status": STRING, "message": STRING}),
    "ConnectorTaskId": _obj(["connector", "task"], {"connector": STRING, "task": INT}),
    "ConnectorInfo": _obj(
        ["name", "config", "tasks", "type"],
        {
            "name": STRING,
            "config": STRING_MAP,
            "tasks": {"type": "array", "items": _ref("ConnectorTaskId")},
            "type": CONNECTOR_TYPE,
        },
    ),
    "ConnectorState": _obj(
        ["state", "worker_id"],
        {"state": STATE, "worker_id": NULLABLE_STRING, "version": STRING, "trace": STRING},
    ),
    "TaskState": _obj(
        ["id", "state", "worker_id"],
        {"id": INT, "state": STATE, "worker_id": NULLABLE_STRING, "version": STRING, "trace": STRING},
    ),
    "ConnectorStateInfo": _obj(
        ["name", "connector", "tasks", "type"],
        {
            "name": STRING,
            "connector": _ref("ConnectorState"),
            "tasks": {"type": "array", "items": _ref("TaskState")},
            "type": CONNECTOR_TYPE,
        },
    ),
    "TaskInfo": _obj(["id", "config"], {"id": _ref("ConnectorTaskId"), "config": STRING_MAP}),
    "ConnectorExpansion": _obj(
        [],
        {
            "status": _ref("ConnectorStateInfo"),
            "info": {"nullable": True, "allOf": [_ref("ConnectorInfo")]},
        },
    ),
    "CreateConnectorRequest": _obj(
        ["name", "config"],
        {
            "name": STRING,
            "config": STRING_MAP,
            "initial_state": {"type": "string", "enum": ["RUNNING", "PAUSED", "STOPPED"]},
        },
        extra=False,
    ),
    "PluginInfo": _obj(
        ["class", "type"],
        {
            "class": STRING,
            "type": {
                "type": "string",
                "enum": ["source", "sink", "converter", "header_converter", "transformation", "predicate"],
            },
            "version": STRING,
        },
    ),
    "ConfigKeyInfo": _obj(
        [
            "name",
            "type",
            "required",
            "default_value",
            "importance",
            "documentation",
            "group",
            "order_in_group",
            "width",
            "display_name",
            "dependents",
        ],
        {
            "name": STRING,
            "type": {
                "type": "string",
                "enum": ["BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD"],
            },
            "required": BOOL,
            "default_value": NULLABLE_STRING,
            "importance": {"type": "string", "enum": ["HIGH", "MEDIUM", "LOW"]},
            "documentation": NULLABLE_STRING,
            "group": NULLABLE_STRING,
            "order_in_group": INT,
            "width": {"type": "string", "enum": ["NONE", "SHORT", "MEDIUM", "LONG"]},
            "display_name": STRING,
            "dependents": {"type": "array", "items": STRING},
        },
    ),
    "ConfigValueInfo": _obj(
        ["name", "value", "recommended_values", "errors", "visible"],
        {
            "name": STRING,
            "value": NULLABLE_STRING,
            "recommended_values": {"type": "array", "items": NULLABLE_STRING},
            "errors": {"type": "array", "items": STRING},
            "visible": BOOL,
        },
    ),
    "ConfigInfo": _obj(
        ["definition", "value"],
        {
            "definition": {"nullable": True, "allOf": [_ref("ConfigKeyInfo")]},
            "value": {"nullable": True, "allOf": [_ref("ConfigValueInfo")]},
        },
    ),
    "ConfigInfos": _obj(
        ["name", "error_count", "groups", "configs"],
        {
            "name": STRING,
            "error_count": INT,
            "groups": {"type": "array", "items": STRING},
            "configs": {"type": "array", "items": _ref("ConfigInfo")},
        },
    ),
    "ConnectorOffset": _obj(
        ["partition", "offset"],
        {"partition": PRIMITIVE_MAP, "offset": {"nullable": True, "allOf": [PRIMITIVE_MAP]}},
    ),
    "ConnectorOffsets": _obj(["offsets"], {"offsets": {"type": "array", "items": _ref("ConnectorOffset")}}),
    "Message": _obj(["message"], {"message": STRING}),
    "ActiveTopics": {
        "type": "object",
        "additionalProperties": _obj(["topics"], {"topics": {"type": "array", "items": STRING}}),
    },
    "LoggerLevel": _obj(
        ["level", "last_modified"],
        {"level": JAVA_LEVEL, "last_modified": {"type": "integer", "nullable": True}},
    ),
    "LoggerLevelRequest": _obj(["level"], {"level": JAVA_LEVEL}),
}

_CONNECTOR = {"name": "connector", "in": "path", "required": True, "schema": STRING}
_TASK = {"name": "task", "in": "path", "required": True, "schema": INT}
_PLUGIN = {"name": "plugin", "in": "path", "required": True, "schema": STRING}
_LOGGER = {"name": "logger", "in": "path", "required": True, "schema": STRING}
_FORWARD = {"name": "forward", "in": "query", "required": False, "schema": BOOL}


def _query_flag(name: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": BOOL}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {JSON: {"schema": schema}}}


def _json(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"description": description}
    if schema is not None:
        response["content"] = {JSON: {"schema": schema}}
    return response


def _op(
    summary: str,
    responses: dict[str, dict[str, Any]],
    *,
    params: list[dict[str, Any]] | None = None,
    body: dict[str, Any] | None = None,
) -> dict[str, Any]:
    error = _json("Error", _ref("Error"))
    op: dict[str, Any] = {
        "summary": summary,
        "responses": {**responses, "4XX": error, "5XX": error},
    }
    if params:
        op["parameters"] = params
    if body is not None:
        op["requestBody"] = body
    return op


def _paths() -> dict[str, Any]:
    info = _json("Connector info", _ref("ConnectorInfo"))
    return {
        "/": {"get": _op("Worker version and Kafka cluster id", {"200": _json("OK", _ref("ServerInfo"))})},
        "/health": {
            "get": _op(
                "Worker health (KIP-1017)",
                {"200": _json("Healthy", _ref("Health")), "503": _json("Starting", _ref("Health"))},
            )
        },
        "/metrics": {
            "get": _op(
                "This worker's metrics in the Prometheus text format 0.0.4 (never forwarded)",
                {
                    "200": {
                        "description": "The exposition",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    }
                },
            )
        },
        "/mirrors": {
            "get": _op(
                "The MirrorMaker 2 flows and their status, gathered from every worker running a mirror task",
                {"200": _json("OK", {"type": "object"})},
            )
        },
        "/mirrors/progress": {
            "get": _op(
                "This worker's own MirrorMaker 2 task metrics (never forwarded)",
                {"200": _json("OK", {"type": "object"})},
            )
        },
        "/mirrors/ui": {
            "get": _op(
                "The mirror status page (HTML)",
                {
                    "200": {
                        "description": "The page",
                        "content": {"text/html": {"schema": {"type": "string"}}},
                    }
                },
            )
        },
        "/openapi.json": {
            "get": _op("This document", {"200": _json("OpenAPI 3 document", {"type": "object"})})
        },
        "/connectors": {
            "get": _op(
                "Connector names, or a map with their status and/or info",
                {
                    "200": _json(
                        "OK",
                        {
                            "oneOf": [
                                {"type": "array", "items": STRING},
                                {"type": "object", "additionalProperties": _ref("ConnectorExpansion")},
                            ]
                        },
                    )
                },
                params=[
                    {
                        "name": "expand",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "array", "items": STRING},
                        "style": "form",
                        "explode": True,
                    }
                ],
            ),
            "post": _op(
                "Create a connector (KIP-980 initial_state)",
                {"201": _json("Created", _ref("ConnectorInfo"))},
                params=[_FORWARD],
                body=_body(_ref("CreateConnectorRequest")),
            ),
        },
        "/connectors/{connector}": {
            "get": _op("Connector info", {"200": info}, params=[_CONNECTOR]),
            "delete": _op("Delete a connector", {"204": _json("Deleted")}, params=[_CONNECTOR, _FORWARD]),
        },
        "/connectors/{connector}/config": {
            "get": _op("Connector config", {"200": _json("OK", STRING_MAP)}, params=[_CONNECTOR]),
            "put": _op(
                "Create or replace a connector's config",
                {"200": info, "201": _json("Created", _ref("ConnectorInfo"))},
                params=[_CONNECTOR, _FORWARD],
                body=_body(STRING_MAP),
            ),
            "patch": _op(
                "Patch a connector's config (KIP-477; null removes a key)",
                {"200": info},
                params=[_CONNECTOR, _FORWARD],
                body=_body(NULLABLE_STRING_MAP),
            ),
        },
        "/connectors/{connector}/status": {
            "get": _op(
                "Connector status", {"200": _json("OK", _ref("ConnectorStateInfo"))}, params=[_CONNECTOR]
            )
        },
        "/connectors/{connector}/tasks": {
            "get": _op(
                "Task configs",
                {"200": _json("OK", {"type": "array", "items": _ref("TaskInfo")})},
                params=[_CONNECTOR],
            ),
            "post": _op(
                "Internal: publish task configs to the leader (KIP-507 signed)",
                {"204": _json("Written")},
                params=[_CONNECTOR, _FORWARD],
                body=_body({"type": "array", "items": STRING_MAP}),
            ),
        },
        "/connectors/{connector}/fence": {
            "put": _op(
                "Internal: fence the previous task generation of an exactly-once source connector (KIP-618, signed)",
                {"204": _json("Fenced and recorded")},
                params=[_CONNECTOR, _FORWARD],
            )
        },
        "/connectors/{connector}/tasks/{task}/status": {
            "get": _op("Task status", {"200": _json("OK", _ref("TaskState"))}, params=[_CONNECTOR, _TASK])
        },
        "/connectors/{connector}/restart": {
            "post": _op(
                "Restart a connector (KIP-745 includeTasks/onlyFailed)",
                {"202": _json("Restart plan", _ref("ConnectorStateInfo")), "204": _json("Restarted")},
                params=[_CONNECTOR, _query_flag("includeTasks"), _query_flag("onlyFailed"), _FORWARD],
            )
        },
        "/connectors/{connector}/tasks/{task}/restart": {
            "post": _op("Restart a task", {"204": _json("Restarted")}, params=[_CONNECTOR, _TASK, _FORWARD])
        },
        "/connectors/{connector}/pause": {
            "put": _op("Pause a connector", {"202": _json("Accepted")}, params=[_CONNECTOR])
        },
        "/connectors/{connector}/resume": {
            "put": _op("Resume a connector", {"202": _json("Accepted")}, params=[_CONNECTOR])
        },
        "/connectors/{connector}/stop": {
            "put": _op("Stop a connector (KIP-875)", {"204": _json("Stopped")}, params=[_CONNECTOR, _FORWARD])
        },
        "/connectors/{connector}/offsets": {
            "get": _op(
                "Committed source offsets (KIP-875)",
                {"200": _json("OK", _ref("ConnectorOffsets"))},
                params=[_CONNECTOR],
            ),
            "patch": _op(
                "Alter offsets of a STOPPED connector",
                {"200": _json("Altered", _ref("Message"))},
                params=[_CONNECTOR, _FORWARD],
                body=_body(_ref("ConnectorOffsets")),
            ),
            "delete": _op(
                "Reset offsets of a STOPPED connector",
                {"200": _json("Reset", _ref("Message"))},
                params=[_CONNECTOR, _FORWARD],
            ),
        },
        "/connectors/{connector}/topics": {
            "get": _op(
                "Active topics (KIP-558)", {"200": _json("OK", _ref("ActiveTopics"))}, params=[_CONNECTOR]
            )
        },
        "/connectors/{connector}/topics/reset": {
            "put": _op("Forget the active topics", {"202": _json("Accepted")}, params=[_CONNECTOR])
        },
        "/connector-plugins": {
            "get": _op(
                "Installed plugins",
                {"200": _json("OK", {"type": "array", "items": _ref("PluginInfo")})},
                params=[_query_flag("connectorsOnly")],
            )
        },
        "/connector-plugins/{plugin}/config": {
            "get": _op(
                "A plugin's config definition; with version (KIP-891: latest, a version, or a Maven "
                "range such as [1.0,2.0)), 400 unless an installed version of the plugin satisfies it",
                {"200": _json("OK", {"type": "array", "items": _ref("ConfigKeyInfo")})},
                params=[
                    _PLUGIN,
                    {
                        "name": "version",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string", "default": "latest"},
                    },
                ],
            )
        },
        "/connector-plugins/{plugin}/config/validate": {
            "put": _op(
                "Validate a connector config",
                {"200": _json("Validation result (errors included)", _ref("ConfigInfos"))},
                params=[_PLUGIN],
                body=_body(NULLABLE_STRING_MAP),
            )
        },
        "/admin/loggers": {
            "get": _op(
                "Loggers with an explicit level",
                {"200": _json("OK", {"type": "object", "additionalProperties": _ref("LoggerLevel")})},
            )
        },
        "/admin/loggers/{logger}": {
            "get": _op("A logger's level", {"200": _json("OK", _ref("LoggerLevel"))}, params=[_LOGGER]),
            "put": _op(
                "Set a logger's level on this worker (scope=worker) or the whole cluster (scope=cluster)",
                {
                    "200": _json("Affected loggers", {"type": "array", "items": STRING}),
                    "204": _json("Cluster-wide level written"),
                },
                params=[
                    _LOGGER,
                    {"name": "scope", "in": "query", "required": False, "schema": STRING},
                ],
                body=_body(_ref("LoggerLevelRequest")),
            ),
        },
    }


@functools.cache
def openapi() -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "Kafka Connect REST API (pyconnect)",
            "version": COMPATIBLE_KAFKA_VERSION,
            "description": "Apache Kafka Connect's distributed-mode REST API: same paths, JSON and statuses.",
        },
        "paths": _paths(),
        "components": {"schemas": SCHEMAS},
    }
