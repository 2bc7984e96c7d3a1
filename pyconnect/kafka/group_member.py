"""A classic-protocol group member over raw requests, protocol type ``connect``.

Size: over 600 lines because JoinGroup, SyncGroup, Heartbeat and LeaveGroup share one member state
(generation, member id, coordinator) and its error handling, as Java's ``AbstractCoordinator``.

The membership half of Java's ``AbstractCoordinator`` as ``WorkerGroupMember`` drives it for Connect:
FindCoordinator, JoinGroup, SyncGroup, Heartbeat and LeaveGroup against the classic group coordinator
(no static membership). What the member offers and how the leader assigns is the caller's business
(:mod:`pyconnect.herder.worker_coordinator`); this module moves bytes and tracks membership.

Contract:

- ``start()`` bootstraps a private client; ``stop(leave=True)`` stops the heartbeat, sends
  LeaveGroup when it holds a member id, and closes the client. Both are idempotent.
- ``join()`` is called by one task at a time (the herder's tick). It returns once SyncGroup gave this
  member its assignment, or raises :class:`GroupJoinError` (retriable, retries exhausted) or
  :class:`GroupFatalError` (a broker answer no retry can fix). Retries are bounded, with backoff.
- While joined, the member owns one heartbeat task. It sets :attr:`rejoin_needed` when the broker
  says the group is rebalancing, when the member was fenced (UNKNOWN_MEMBER_ID resets the member id,
  ILLEGAL_GENERATION the generation, as Java does), when no heartbeat succeeded for
  ``session.timeout.ms`` (the member then considers itself out of the group, like Java's
  ``sessionTimeoutExpired``), and when the coordinator stayed unknown for ``heartbeat.interval.ms``
  (Connect's coordinator-discovery timeout, after which the Java worker revokes all its work). Both
  checks run on time even when a coordinator lookup hangs in the client: the loop bounds each lookup
  by the time left until its next check, and any metadata refresh by the request timeout.
- :attr:`in_session` and :attr:`lapses` tell whether the member still belongs to the group and how many
  times it lost its generation; the stale-membership fence of source offset commits reads them
  (:mod:`pyconnect.herder.commit_fence`). A heartbeat counts from the moment it was sent, so a response
  that waited in the socket while the process was paused never makes a stale member look current.
- The heartbeat pauses while JoinGroup/SyncGroup are in flight: the broker answers requests on one
  connection in order, and Java's heartbeat thread is likewise disabled while joining.
- After each completed join the first heartbeats go out sooner (``FOLLOW_UP_BEATS_S``), then every
  ``heartbeat.interval.ms``: a member only learns from a heartbeat that another member started a
  round, and the second round of a cooperative rebalance (members that had work revoked rejoin as
  soon as they stopped it) would otherwise wait for the regular beat, 3 s by default.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaClient
from aiokafka import errors as kafka_errors
from aiokafka.client import ConnectionGroup, CoordinationType
from aiokafka.protocol.group import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    SyncGroupRequest,
)

from pyconnect.concurrency import cancel_and_wait
from pyconnect.errors import ConnectError, RetriableError
from pyconnect.kafka.clients import admin_client_kwargs

log = logging.getLogger(__name__)

PROTOCOL_TYPE = "connect"
UNKNOWN_MEMBER_ID = ""
NO_GENERATION = -1
JOIN_GROUP_TIMEOUT_LAPSE_MS = 5000
"""Java's ``JOIN_GROUP_TIMEOUT_LAPSE``: JoinGroup may block for the rebalance timeout plus this."""

RETRY_BACKOFF_MAX_MS = 1000
DEFAULT_MAX_JOIN_ATTEMPTS = 30
FOLLOW_UP_BEATS_S = (0.1, 0.4)
"""Gaps before the first heartbeats after a completed join (then ``heartbeat.interval.ms``)."""

NONE = 0
COORDINATOR_LOAD_IN_PROGRESS = kafka_errors.CoordinatorLoadInProgressError.errno
COORDINATOR_NOT_AVAILABLE = kafka_errors.CoordinatorNotAvailableError.errno
NOT_COORDINATOR = kafka_errors.NotCoordinatorError.errno
ILLEGAL_GENERATION = kafka_errors.IllegalGenerationError.errno
UNKNOWN_MEMBER_ID_ERROR = kafka_errors.UnknownMemberIdError.errno
REBALANCE_IN_PROGRESS = kafka_errors.RebalanceInProgressError.errno
MEMBER_ID_REQUIRED = kafka_errors.MemberIdRequired.errno
INCONSISTENT_GROUP_PROTOCOL = kafka_errors.InconsistentGroupProtocolError.errno
INVALID_SESSION_TIMEOUT = kafka_errors.InvalidSessionTimeoutError.errno
INVALID_GROUP_ID = kafka_errors.InvalidGroupIdError.errno
GROUP_AUTHORIZATION_FAILED = kafka_errors.GroupAuthorizationFailedError.errno
GROUP_MAX_SIZE_REACHED = 81
UNSUPPORTED_VERSION = kafka_errors.UnsupportedVersionError.errno

_FATAL_JOIN_ERRORS = frozenset(
    {
        INCONSISTENT_GROUP_PROTOCOL,
        INVALID_SESSION_TIMEOUT,
        INVALID_GROUP_ID,
        GROUP_AUTHORIZATION_FAILED,
        GROUP_MAX_SIZE_REACHED,
        UNSUPPORTED_VERSION,
    }
)
_COORDINATOR_ERRORS = frozenset({COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR})


def error_name(code: int) -> str:
    """``NOT_COORDINATOR`` style name of a Kafka error code (class name when unknown to aiokafka)."""
    cls = kafka_errors.for_code(code)
    if cls is kafka_errors.UnknownError and code != kafka_errors.UnknownError.errno:
        return f"error code {code}"
    return str(getattr(cls, "message", "")) or f"error code {code}"


class GroupJoinError(RetriableError):
    """Joining did not complete within the bounded retries; the caller may try again later."""


class GroupFatalError(ConnectError):
    """The coordinator rejected the member in a way no retry fixes (protocol, auth, group size...)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class MemberState(enum.Enum):
    UNJOINED = "unjoined"
    REBALANCING = "rebalancing"
    STABLE = "stable"


@dataclass(frozen=True, slots=True)
class JoinResult:
    """One completed JoinGroup + SyncGroup round, as seen by this member."""

    generation: int
    member_id: str
    leader_id: str
    protocol: str
    is_leader: bool
    assignment: bytes


Assign = Callable[[str, Sequence[tuple[str, bytes]]], Awaitable[Mapping[str, bytes]]]
"""Leader callback: ``(selected protocol, [(member id, metadata)] in JoinGroup order) -> assignments``."""


class _Retry(RetriableError):
    """One join attempt failed in a way the loop retries; ``backoff`` says whether to wait first."""

    def __init__(self, reason: str, *, backoff: bool = True) -> None:
        super().__init__(reason)
        self.backoff = backoff


class ConnectGroupMember:
    """One member of a Connect group (see the module docstring for the contract).

    ``client_config`` holds Java client keys (``bootstrap.servers``, ``security.protocol``, ...).
    ``clock`` returns seconds on a monotonic scale; it times heartbeats and the session timeout.
    """

    def __init__(
        self,
        client_config: Mapping[str, Any],
        group_id: str,
        *,
        session_timeout_ms: int = 10000,
        rebalance_timeout_ms: int = 60000,
        heartbeat_interval_ms: int = 3000,
        retry_backoff_ms: int = 100,
        client_id: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_join_attempts: int = DEFAULT_MAX_JOIN_ATTEMPTS,
    ) -> None:
        if heartbeat_interval_ms >= session_timeout_ms:
            raise ValueError("heartbeat.interval.ms must be lower than session.timeout.ms")
        self.group_id = group_id
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.max_join_attempts = max_join_attempts
        self._clock = clock
        kwargs = admin_client_kwargs(client_config)
        if client_id is not None:
            kwargs["client_id"] = client_id
        request_timeout_ms = int(kwargs.get("request_timeout_ms", 40000))
        self._request_timeout_s = request_timeout_ms / 1000
        # The connection-level timeout must outlast a JoinGroup parked for the rebalance timeout.
        kwargs["request_timeout_ms"] = max(
            request_timeout_ms, rebalance_timeout_ms + JOIN_GROUP_TIMEOUT_LAPSE_MS
        )
        kwargs.setdefault("retry_backoff_ms", retry_backoff_ms)
        self._client_kwargs = kwargs
        self.client_id: str = str(kwargs.get("client_id", "")) or f"pyconnect-{group_id}"
        self._client_kwargs["client_id"] = self.client_id

        self._client: AIOKafkaClient | None = None
        self._coordinator: int | None = None
        self._coordinator_unknown_since: float | None = None
        self._member_id = UNKNOWN_MEMBER_ID
        self._generation = NO_GENERATION
        self._protocol: str | None = None
        self._leader_id: str | None = None
        self._state = MemberState.UNJOINED
        self._heartbeat_task: asyncio.Task[None] | None = None
        self._last_heartbeat_ok = 0.0
        self._lapses = 0
        self._coordinator_lost = False
        self._closed = False
        self.rejoin_needed = asyncio.Event()
        """Set when the member must run :meth:`join` again; cleared when :meth:`join` starts."""
        self.rejoin_reason = "initial join"

    # -- properties -------------------------------------------------------------------------------

    @property
    def member_id(self) -> str:
        """The broker-assigned member id ("" before the first JoinGroup answer)."""
        return self._member_id

    @property
    def generation(self) -> int:
        """The generation of the last JoinGroup answer (-1 when none or after a reset)."""
        return self._generation

    @property
    def protocol(self) -> str | None:
        return self._protocol

    @property
    def leader_id(self) -> str | None:
        return self._leader_id

    @property
    def leader(self) -> bool:
        """Whether this member led the last completed JoinGroup."""
        return bool(self._member_id) and self._leader_id == self._member_id

    @property
    def coordinator(self) -> int | None:
        """Node id of the group coordinator, None while unknown."""
        return self._coordinator

    @property
    def state(self) -> MemberState:
        return self._state

    @property
    def in_session(self) -> bool:
        """Whether this member still belongs to the group as far as it can tell.

        It holds a generation and either a JoinGroup/SyncGroup round is in flight (the coordinator keeps
        a joining member for the rebalance timeout) or a heartbeat sent within ``session.timeout.ms``
        succeeded. Read on the clock when asked: a member waking from a pause longer than the session
        timeout is out at once, before its heartbeat loop runs.
        """
        if self._generation == NO_GENERATION:
            return False
        if self._state is MemberState.REBALANCING:
            return True
        return self._clock() - self._last_heartbeat_ok <= self.session_timeout_ms / 1000

    @property
    def lapses(self) -> int:
        """How many times this member lost the generation it held (fenced, session timed out, stopped)."""
        return self._lapses

    @property
    def coordinator_lost(self) -> bool:
        """True once the coordinator stayed unknown for ``heartbeat.interval.ms`` while joined.

        Java's ``WorkerCoordinator.poll`` revokes all work at that point; cleared by the next join.
        """
        return self._coordinator_lost

    # -- lifecycle --------------------------------------------------------------------------------

    async def start(self) -> None:
        """Bootstrap the member's client (idempotent)."""
        if self._client is not None:
            return
        if self._closed:
            raise ConnectError(f"group member of {self.group_id} was stopped and cannot restart")
        client = AIOKafkaClient(**self._client_kwargs)
        try:
            await client.bootstrap()
        except BaseException:
            await client.close()
            raise
        self._client = client

    async def stop(self, leave: bool = True) -> None:
        """Stop heartbeating, leave the group if asked and a member id is held, close (idempotent)."""
        if self._closed:
            return
        self._closed = True
        await self._stop_heartbeat()
        client, self._client = self._client, None
        if client is None:
            return
        try:
            if leave and self._member_id and self._coordinator is not None:
                await self._leave(client)
        finally:
            self._reset(reset_member_id=True, reason="member stopped")
            await client.close()

    async def _leave(self, client: AIOKafkaClient) -> None:
        request = LeaveGroupRequest(self.group_id, self._member_id)
        try:
            async with asyncio.timeout(self._request_timeout_s):
                resp = await client.send(self._coordinator, request, group=ConnectionGroup.COORDINATION)
        except (kafka_errors.KafkaError, OSError, TimeoutError) as exc:
            log.warning("LeaveGroup of %s in group %s failed: %s", self._member_id, self.group_id, exc)
            return
        if resp.error_code != NONE:
            log.info(
                "LeaveGroup of %s in group %s answered %s",
                self._member_id, self.group_id, error_name(resp.error_code),
            )  # fmt: skip
        else:
            log.info("Member %s left group %s", self._member_id, self.group_id)

    def request_rejoin(self, reason: str = "requested") -> None:
        """Ask for a new round (e.g. after applying revocations); the next :meth:`join` runs it."""
        self.rejoin_reason = reason
        self.rejoin_needed.set()

    # -- join ---------------------------------------------------------------------------------------

    async def join(self, protocols: Sequence[tuple[str, bytes]], assign: Assign) -> JoinResult:
        """Run JoinGroup then SyncGroup until this member has an assignment (bounded retries).

        ``protocols`` are ``(name, metadata)`` in preference order. When the coordinator elects this
        member leader, ``assign(protocol, members)`` is awaited and its result sent in SyncGroup;
        followers send no assignments. :attr:`member_id` and :attr:`generation` already hold the new
        round's values while ``assign`` runs.
        """
        if self._client is None:
            raise ConnectError("group member not started")
        await self._stop_heartbeat()
        self._state = MemberState.REBALANCING
        self.rejoin_needed.clear()  # a request arriving while this round runs asks for another one
        failures = 0
        last = "no attempt"
        while failures < self.max_join_attempts:
            try:
                result = await self._join_once(protocols, assign)
            except _Retry as retry:
                failures += 1
                last = str(retry)
                log.info("Joining group %s: %s (attempt %d)", self.group_id, last, failures)
                if retry.backoff:
                    await asyncio.sleep(self._backoff_s(failures))
                continue
            except BaseException:
                self._state = MemberState.UNJOINED
                raise
            self._state = MemberState.STABLE
            self._coordinator_lost = False
            self._last_heartbeat_ok = self._clock()
            self._heartbeat_task = asyncio.create_task(
                self._heartbeat_loop(), name=f"heartbeat-{self.group_id}-{self._member_id}"
            )
            return result
        self._state = MemberState.UNJOINED
        raise GroupJoinError(
            f"could not join group {self.group_id} after {failures} attempts; last error: {last}"
        )

    def _backoff_s(self, attempt: int) -> float:
        return (
            min(self.retry_backoff_ms * 2 ** (attempt - 1), max(RETRY_BACKOFF_MAX_MS, self.retry_backoff_ms))
            / 1000
        )

    async def _join_once(self, protocols: Sequence[tuple[str, bytes]], assign: Assign) -> JoinResult:
        coordinator = await self._ensure_coordinator()
        request = JoinGroupRequest(
            self.group_id,
            self.session_timeout_ms,
            self.rebalance_timeout_ms,
            self._member_id,
            None,
            PROTOCOL_TYPE,
            [(name, bytes(metadata)) for name, metadata in protocols],
        )
        log.info(
            "(Re-)joining group %s as %r (reason: %s)", self.group_id, self._member_id, self.rejoin_reason
        )
        resp = await self._send(coordinator, request, timeout_s=None)
        code = resp.error_code
        if code == MEMBER_ID_REQUIRED:
            self._member_id = resp.member_id
            self._generation = NO_GENERATION
            raise _Retry(f"MEMBER_ID_REQUIRED, rejoining with member id {resp.member_id}", backoff=False)
        if code == UNKNOWN_MEMBER_ID_ERROR:
            self._reset(reset_member_id=True, reason="UNKNOWN_MEMBER_ID from JoinGroup")
            raise _Retry("UNKNOWN_MEMBER_ID, rejoining with an empty member id", backoff=False)
        if code in _COORDINATOR_ERRORS:
            self._mark_coordinator_unknown(error_name(code))
            raise _Retry(f"JoinGroup answered {error_name(code)}")
        if code in (REBALANCE_IN_PROGRESS, COORDINATOR_LOAD_IN_PROGRESS, ILLEGAL_GENERATION):
            if code == ILLEGAL_GENERATION:
                self._drop_generation()
            raise _Retry(f"JoinGroup answered {error_name(code)}")
        if code in _FATAL_JOIN_ERRORS:
            raise GroupFatalError(f"JoinGroup to group {self.group_id} failed: {error_name(code)}", code)
        if code != NONE:
            raise GroupFatalError(f"Unexpected error in JoinGroup response: {error_name(code)}", code)

        self._member_id = resp.member_id
        self._generation = resp.generation_id
        self._protocol = resp.group_protocol
        self._leader_id = resp.leader_id
        is_leader = resp.leader_id == resp.member_id
        log.info(
            "Joined group %s with generation %d as %s (leader %s, protocol %s)",
            self.group_id, resp.generation_id, resp.member_id, resp.leader_id, resp.group_protocol,
        )  # fmt: skip
        assignments: list[tuple[str, bytes]] = []
        if is_leader:
            members = [(m[0], bytes(m[-1])) for m in resp.members]
            result = await assign(resp.group_protocol, members)
            assignments = [(member, bytes(data)) for member, data in result.items()]
        sync = SyncGroupRequest(self.group_id, self._generation, self._member_id, None, assignments)
        sresp = await self._send(coordinator, sync, timeout_s=None)
        code = sresp.error_code
        if code == NONE:
            return JoinResult(
                self._generation, self._member_id, resp.leader_id, resp.group_protocol, is_leader,
                bytes(sresp.member_assignment),
            )  # fmt: skip
        if code == REBALANCE_IN_PROGRESS:
            raise _Retry("SyncGroup answered REBALANCE_IN_PROGRESS", backoff=False)
        if code in (UNKNOWN_MEMBER_ID_ERROR, ILLEGAL_GENERATION):
            self._reset(
                reset_member_id=code == UNKNOWN_MEMBER_ID_ERROR, reason=f"{error_name(code)} from SyncGroup"
            )
            raise _Retry(f"SyncGroup answered {error_name(code)}", backoff=False)
        if code in _COORDINATOR_ERRORS:
            self._mark_coordinator_unknown(error_name(code))
            raise _Retry(f"SyncGroup answered {error_name(code)}")
        if code == GROUP_AUTHORIZATION_FAILED:
            raise GroupFatalError(f"SyncGroup to group {self.group_id} failed: {error_name(code)}", code)
        raise GroupFatalError(f"Unexpected error from SyncGroup: {error_name(code)}", code)

    async def _send(self, node: int, request: Any, *, timeout_s: float | None) -> Any:
        """Send to the coordinator; transport failures mark it unknown and become a retry."""
        client = self._client
        if client is None:
            raise ConnectError("group member not started")
        try:
            if timeout_s is None:
                return await client.send(node, request, group=ConnectionGroup.COORDINATION)
            async with asyncio.timeout(timeout_s):
                return await client.send(node, request, group=ConnectionGroup.COORDINATION)
        except (kafka_errors.KafkaError, OSError, TimeoutError) as exc:
            self._mark_coordinator_unknown(f"{type(exc).__name__}: {exc}")
            raise _Retry(
                f"{type(request).__name__} to node {node} failed: {type(exc).__name__} {exc}"
            ) from exc

    async def _ensure_coordinator(self) -> int:
        if self._coordinator is not None:
            return self._coordinator
        client = self._client
        if client is None:
            raise ConnectError("group member not started")
        try:
            async with asyncio.timeout(self._request_timeout_s):
                node = await client.coordinator_lookup(CoordinationType.GROUP, self.group_id)
                ready = await client.ready(node, group=ConnectionGroup.COORDINATION)
        except kafka_errors.GroupAuthorizationFailedError as exc:
            raise GroupFatalError(
                f"Not authorized to access group {self.group_id}", GROUP_AUTHORIZATION_FAILED
            ) from exc
        except (kafka_errors.KafkaError, OSError, TimeoutError) as exc:
            with contextlib.suppress(kafka_errors.KafkaError, OSError, TimeoutError):
                async with asyncio.timeout(self._request_timeout_s):
                    await client.force_metadata_update()
            raise _Retry(f"FindCoordinator failed: {type(exc).__name__} {exc}") from exc
        if not ready:
            raise _Retry(f"coordinator node {node} is not reachable")
        if self._coordinator != node:
            log.info("Discovered group coordinator %s for group %s", node, self.group_id)
        self._coordinator = node
        self._coordinator_unknown_since = None
        return node

    def _mark_coordinator_unknown(self, cause: str) -> None:
        if self._coordinator is not None:
            log.info(
                "Group coordinator %s of group %s marked unknown: %s", self._coordinator, self.group_id, cause
            )
            self._coordinator_unknown_since = self._clock()
        self._coordinator = None

    def _reset(self, *, reset_member_id: bool, reason: str) -> None:
        if self._state is not MemberState.UNJOINED or self._generation != NO_GENERATION:
            log.info("Resetting generation%s of group %s due to: %s",
                     " and member id" if reset_member_id else "", self.group_id, reason)  # fmt: skip
        self._drop_generation()
        if reset_member_id:
            self._member_id = UNKNOWN_MEMBER_ID
        self._state = MemberState.UNJOINED

    def _drop_generation(self) -> None:
        if self._generation != NO_GENERATION:
            self._lapses += 1
        self._generation = NO_GENERATION

    # -- heartbeat ----------------------------------------------------------------------------------

    async def _stop_heartbeat(self) -> None:
        task, self._heartbeat_task = self._heartbeat_task, None
        await cancel_and_wait(task, log=log)

    async def _heartbeat_loop(self) -> None:
        """Heartbeat every ``heartbeat.interval.ms`` until fenced, out of the group, or cancelled.

        A cancellation that reaches the loop while nobody cancelled its task (one swallowed or leaked
        by a client call) is a failure like any other, never a silent end of the heartbeats."""
        try:
            await self._heartbeats()
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is None or task.cancelling():
                raise
            self._heartbeat_failed(exc)
        except Exception as exc:
            self._heartbeat_failed(exc)

    def _heartbeat_failed(self, exc: BaseException) -> None:
        log.error(
            "Heartbeat of %s in group %s failed unexpectedly", self._member_id, self.group_id, exc_info=exc
        )
        self._reset(reset_member_id=False, reason=f"heartbeat failure {exc!r}")
        self.request_rejoin(f"heartbeat failed unexpectedly: {exc!r}")

    async def _heartbeats(self) -> None:
        interval_s = self.heartbeat_interval_ms / 1000
        retry_s = self.retry_backoff_ms / 1000
        follow_ups = [s for s in FOLLOW_UP_BEATS_S if s < interval_s]
        next_beat = self._clock() + (follow_ups.pop(0) if follow_ups else interval_s)
        while True:
            now = self._clock()
            if now - self._last_heartbeat_ok > self.session_timeout_ms / 1000:
                self._mark_coordinator_unknown("session timed out without receiving a heartbeat response")
                self._reset(reset_member_id=True, reason="session timeout expired")
                self.request_rejoin("session timed out; member considers itself out of the group")
                return
            if self._coordinator is None:
                self._check_coordinator_lost(now)
                try:
                    async with asyncio.timeout(self._lookup_budget_s(now)):
                        await self._ensure_coordinator()
                except TimeoutError:
                    log.debug(
                        "Heartbeat of group %s: coordinator lookup still running; checking", self.group_id
                    )
                    continue
                except _Retry as retry:
                    log.debug("Heartbeat of group %s: %s", self.group_id, retry)
                    await asyncio.sleep(retry_s)
                    continue
                next_beat = now
            if now < next_beat:
                await asyncio.sleep(min(next_beat - now, interval_s))
                continue
            next_beat = now + (follow_ups.pop(0) if follow_ups else interval_s)
            if not await self._heartbeat_once():
                return

    def _lookup_budget_s(self, now: float) -> float:
        """How long one coordinator lookup of the heartbeat loop may take: until the loop's next check
        is due (the coordinator unknown for ``heartbeat.interval.ms``, the session's end), so that a
        lookup stuck in the client never delays them (Java's heartbeat thread never waits on one)."""
        deadlines = [self._last_heartbeat_ok + self.session_timeout_ms / 1000]
        since = self._coordinator_unknown_since
        if not self._coordinator_lost and since is not None:
            deadlines.append(since + self.heartbeat_interval_ms / 1000)
        floor = self.retry_backoff_ms / 1000
        return max(floor, min(deadlines) - now + floor)

    def _check_coordinator_lost(self, now: float) -> None:
        since = self._coordinator_unknown_since
        if since is None:
            self._coordinator_unknown_since = since = now
        if not self._coordinator_lost and now - since >= self.heartbeat_interval_ms / 1000:
            self._coordinator_lost = True
            self.request_rejoin(f"coordinator unreachable for {self.heartbeat_interval_ms} ms")

    async def _heartbeat_once(self) -> bool:
        """One Heartbeat; returns False when the loop must end (fenced or fatal)."""
        coordinator = self._coordinator
        if coordinator is None:
            return True
        request = HeartbeatRequest(self.group_id, self._generation, self._member_id)
        timeout_s = min(self._request_timeout_s, self.session_timeout_ms / 1000)
        sent_at = self._clock()
        try:
            resp = await self._send(coordinator, request, timeout_s=timeout_s)
        except _Retry as retry:
            log.info("Heartbeat of %s in group %s failed: %s", self._member_id, self.group_id, retry)
            return True
        code = resp.error_code
        if code == NONE:
            self._last_heartbeat_ok = sent_at
            return True
        if code == REBALANCE_IN_PROGRESS:
            # The member stays alive while the group waits for it to rejoin: keep heartbeating.
            self._last_heartbeat_ok = sent_at
            if not self.rejoin_needed.is_set():
                self.request_rejoin("group is already rebalancing")
            return True
        if code in _COORDINATOR_ERRORS:
            self._mark_coordinator_unknown(error_name(code))
            return True
        if code in (UNKNOWN_MEMBER_ID_ERROR, ILLEGAL_GENERATION):
            self._reset(
                reset_member_id=code == UNKNOWN_MEMBER_ID_ERROR, reason=f"{error_name(code)} from Heartbeat"
            )
            self.request_rejoin(f"heartbeat answered {error_name(code)}")
            return False
        log.error("Heartbeat of %s in group %s failed: %s", self._member_id, self.group_id, error_name(code))
        self._reset(reset_member_id=False, reason=f"{error_name(code)} from Heartbeat")
        self.request_rejoin(f"heartbeat answered {error_name(code)}")
        return False


async def describe_group(
    client_config: Mapping[str, Any], group_id: str, *, timeout_s: float = 30.0
) -> dict[str, Any]:
    """DescribeGroups for one group, via its coordinator: state, protocol type/name, members' bytes.

    Returns ``{"error_code", "group_id", "state", "protocol_type", "protocol", "members": [{"member_id",
    "client_id", "client_host", "metadata", "assignment"}]}`` (bytes values).
    """
    from aiokafka.protocol.admin import DescribeGroupsRequest

    client = AIOKafkaClient(**admin_client_kwargs(client_config))
    try:
        async with asyncio.timeout(timeout_s):
            await client.bootstrap()
            node = await client.coordinator_lookup(CoordinationType.GROUP, group_id)
            resp = await client.send(node, DescribeGroupsRequest([group_id]))
    finally:
        await client.close()
    group = resp.groups[0]
    return {
        "error_code": group[0],
        "group_id": group[1],
        "state": group[2],
        "protocol_type": group[3],
        "protocol": group[4],
        "members": [
            {
                "member_id": m[0],
                "client_id": m[1],
                "client_host": m[2],
                "metadata": bytes(m[3]),
                "assignment": bytes(m[4]),
            }
            for m in group[5]
        ],
    }
