"""The Connect REST calls a failback makes on a worker fleet (a thin async wrapper of
:func:`pyconnect.rest_client.call_json`).

Every call runs the blocking HTTP request in a thread, bounded by ``timeout_s``, and raises
:class:`ConnectApiError` (one line: method, URL, the worker's message) on any failure. Paths and bodies
are the standard Connect API's: ``GET /connectors?expand=info``, ``GET|PUT /connectors/{name}/config``,
``POST /connectors`` with ``initial_state`` (KIP-980), ``PUT /connectors/{name}/stop|resume``,
``GET|PATCH /connectors/{name}/offsets`` (KIP-875) and ``GET /connectors/{name}/status``.
"""

from __future__ import annotations

import asyncio
import time
import urllib.parse
from typing import Any

from connectors.mirror.offsets.failover_calls import FailoverError
from pyconnect.rest_client import RestAccess, RestClientError, call_json

__all__ = ["MIRROR_SOURCE_CLASS", "ConnectApi", "ConnectApiError"]

MIRROR_SOURCE_CLASS = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
_SOURCE_NAMES = frozenset({MIRROR_SOURCE_CLASS, "MirrorSourceConnector"})
POLL_S = 0.1


class ConnectApiError(FailoverError):
    """A Connect REST call failed (one line); ``status_code`` when the worker answered."""

    def __init__(self, message: str, http_status: int | None = None) -> None:
        super().__init__(message)
        self.status_code = http_status


class ConnectApi:
    """One worker of a Connect fleet, reached at ``url`` with ``access``."""

    def __init__(self, url: str, access: RestAccess | None, timeout_s: float) -> None:
        self.url = url.rstrip("/")
        self.access = access or RestAccess()
        self.timeout_s = timeout_s

    async def _call(self, method: str, path: str, body: Any = None) -> Any:
        try:
            return await asyncio.to_thread(
                call_json, method, self.url + path, self.timeout_s, self.access, body
            )
        except RestClientError as exc:
            raise ConnectApiError(str(exc), exc.status_code) from None

    @staticmethod
    def _path(name: str, *rest: str) -> str:
        return "/connectors/" + "/".join([urllib.parse.quote(name, safe=""), *rest])

    async def exists(self, name: str) -> bool:
        listed = await self._call("GET", "/connectors")
        return isinstance(listed, list) and name in listed

    async def config(self, name: str) -> dict[str, str]:
        body = await self._call("GET", self._path(name, "config"))
        if not isinstance(body, dict):
            raise ConnectApiError(f"GET {self.url}{self._path(name, 'config')} gave no config object")
        return {str(k): str(v) for k, v in body.items()}

    async def mirror_sources(self, source: str, target: str) -> list[str]:
        """The MirrorSourceConnectors of the flow ``source -> target`` on this fleet, by name."""
        listed = await self._call("GET", "/connectors?expand=info")
        found = []
        for name, entry in listed.items() if isinstance(listed, dict) else []:
            config = entry.get("info", {}).get("config", {}) if isinstance(entry, dict) else {}
            if (
                str(config.get("connector.class", "")).strip() in _SOURCE_NAMES
                and config.get("source.cluster.alias") == source
                and config.get("target.cluster.alias", "target") == target
            ):
                found.append(str(name))
        return sorted(found)

    async def states(self, name: str) -> tuple[str, list[str]]:
        """The connector's state and its tasks' (``UNKNOWN`` while the fleet has no status of it yet: a
        connector just created answers 404 for a moment)."""
        try:
            body = await self._call("GET", self._path(name, "status"))
        except ConnectApiError as exc:
            if exc.status_code == 404:
                return "UNKNOWN", []
            raise
        if not isinstance(body, dict):
            return "UNKNOWN", []
        tasks = body.get("tasks", [])
        return str(body.get("connector", {}).get("state", "UNKNOWN")), [
            str(t.get("state")) for t in tasks if isinstance(t, dict)
        ]

    async def create(self, name: str, config: dict[str, str], initial_state: str) -> None:
        await self._call(
            "POST", "/connectors", {"name": name, "config": config, "initial_state": initial_state}
        )

    async def stop(self, name: str) -> None:
        await self._call("PUT", self._path(name, "stop"))

    async def resume(self, name: str) -> None:
        await self._call("PUT", self._path(name, "resume"))

    async def offsets(self, name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """The connector's committed offsets as ``(partition, offset)`` pairs."""
        body = await self._call("GET", self._path(name, "offsets"))
        entries = body.get("offsets", []) if isinstance(body, dict) else []
        return [
            (e["partition"], e["offset"])
            for e in entries
            if isinstance(e, dict)
            and isinstance(e.get("partition"), dict)
            and isinstance(e.get("offset"), dict)
        ]

    async def alter_offsets(self, name: str, body: dict[str, Any]) -> None:
        await self._call("PATCH", self._path(name, "offsets"), body)

    async def wait_state(self, name: str, wanted: str, timeout_s: float) -> None:
        """Until the connector reports ``wanted`` (and, for ``STOPPED``, no task is left; for ``RUNNING``,
        every task runs), asked every :data:`POLL_S` (a cutover's producers wait on its promote);
        :class:`ConnectApiError` after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        seen = "UNKNOWN"
        while time.monotonic() < deadline:
            seen, tasks = await self.states(name)
            if seen == wanted and (
                (wanted == "STOPPED" and not tasks)
                or (wanted == "RUNNING" and tasks and all(t == "RUNNING" for t in tasks))
                or wanted not in ("STOPPED", "RUNNING")
            ):
                return
            await asyncio.sleep(POLL_S)
        raise ConnectApiError(
            f"connector {name} at {self.url} is {seen}, not {wanted}, after {timeout_s:.0f} s"
        )
