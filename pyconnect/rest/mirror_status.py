"""``GET /mirrors``: the mirror status document (pyconnect.mirror_status.core), gathered over the fleet.

Any worker answers. The connectors, their configs and statuses come from this worker's config snapshot
and status cache (cluster-wide, as ``GET /connectors/{c}/status``). The per-partition metrics live in
the worker that runs each task, so this worker reads its own and asks every other worker that the
status topic names as running a MirrorMaker 2 task for its ``GET /mirrors/progress`` (concurrently,
each bounded by :data:`PEER_TIMEOUT_S`, with the caller's ``Authorization``; the URL is the worker id
under the scheme the caller used). A worker that does not answer is listed, and the flows with a
task there are ``UNKNOWN`` rather than claimed in sync. Nothing is forwarded to the leader: every
worker sees the same configs and statuses.

``GET /mirrors/progress`` is this worker's own part, never forwarded: the MirrorSource and
MirrorCheckpoint task metrics it holds, as :class:`~pyconnect.mirror_status.core.Progress` JSON.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import aiohttp
from aiohttp import web

from pyconnect.errors import ConnectError, NotFoundError
from pyconnect.herder.interface import HerderApi
from pyconnect.mirror_status.core import ConnectorView, Progress, flow_of, mirror_status, task_worker_ids
from pyconnect.rest.forwarding import Forwarder

PEER_TIMEOUT_S = 5.0
PROGRESS_PATH = "/mirrors/progress"

ReadProgress = Callable[[], Progress]


class MirrorProgressSlot:
    """This worker's mirror task metrics, set by the composition root (empty until then)."""

    def __init__(self) -> None:
        self.read: ReadProgress | None = None

    def local(self) -> Progress:
        return self.read() if self.read is not None else Progress()


async def connector_views(herder: HerderApi) -> tuple[list[ConnectorView], set[str]]:
    """Every MirrorMaker 2 connector with its config and status JSON, and the password-type keys of
    their plugins' config tables (masked in the document)."""
    views: list[ConnectorView] = []
    password_keys: set[str] = set()
    classes: set[str] = set()
    for name in herder.connectors():
        try:
            config = await herder.connector_config(name)
        except NotFoundError:
            continue
        if flow_of(config) is None:
            continue
        try:
            status: dict[str, Any] | None = herder.connector_status(name).to_json()
        except NotFoundError:
            status = None
        views.append(ConnectorView(name, config, status))
        if "connector.class" in config:
            classes.add(config["connector.class"])
    for plugin in classes:
        try:
            keys = herder.connector_plugin_config(plugin)
        except ConnectError:  # an unknown plugin: only the name heuristics mask its secrets
            continue
        password_keys.update(k["name"] for k in keys if k.get("type") == "PASSWORD")
    return views, password_keys


async def peer_progress(
    forwarder: Forwarder, url: str, authorization: str | None
) -> tuple[Progress | None, str | None]:
    """One worker's ``GET /mirrors/progress``: its progress, or why it could not be read."""
    headers = {"Accept": "application/json"}
    if authorization:
        headers["Authorization"] = authorization
    try:
        status, payload = await forwarder.fetch(url, headers, PEER_TIMEOUT_S)
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        return None, str(exc) or type(exc).__name__
    if status != 200:
        return None, f"HTTP {status}"
    try:
        return Progress.from_json(json.loads(payload)), None
    except ValueError as exc:
        return None, f"unreadable answer: {exc}"


async def status_document(
    herder: HerderApi, forwarder: Forwarder, slot: MirrorProgressSlot, request: web.Request
) -> dict[str, Any]:
    scheme = request.url.scheme if request.url.scheme in ("http", "https") else "http"
    return await gather_status(herder, forwarder, slot, scheme, request.headers.get("Authorization"))


async def gather_status(
    herder: HerderApi,
    forwarder: Forwarder,
    slot: MirrorProgressSlot,
    scheme: str,
    authorization: str | None,
) -> dict[str, Any]:
    """The status document of ``GET /mirrors``, asking peers under ``scheme`` with ``authorization``."""
    views, password_keys = await connector_views(herder)
    progress = slot.local()
    own = herder.worker_id
    peers = sorted(task_worker_ids(views) - {own})
    answers = await asyncio.gather(
        *(peer_progress(forwarder, f"{scheme}://{peer}{PROGRESS_PATH}", authorization) for peer in peers)
    )
    unreachable: dict[str, str] = {}
    for peer, (theirs, error) in zip(peers, answers, strict=True):
        if theirs is None:
            unreachable[peer] = error or "no answer"
        else:
            progress.extend(theirs)
    return mirror_status(
        views,
        progress,
        now_ms=int(time.time() * 1000),
        unreachable=unreachable,
        password_keys=password_keys,
    )
