"""The errors of a failover and the bounded, retried cluster calls every step of it makes.

Errors (each message one line): :class:`FailoverError` (a cluster unreachable, a commit failed),
:class:`FailoverRefused` (the group has members on the target: nothing committed for it),
:class:`UnknownGroup` (the flow has checkpoints, none of this group), :class:`NoCheckpoints` (the flow has
no checkpoints yet). Each carries the command's exit code for it.

Calls: :func:`bounded` waits at most ``timeout_s``; :func:`retrying` calls again after errors Kafka marks
retriable (a coordinator loading or moving) until ``timeout_s`` has passed; :func:`described` and
:func:`commit_offsets` are the group describe and admin commit with "coordinator not ready" made
retriable. Never swallows ``asyncio.CancelledError``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TypeVar

from pyconnect.config.client_configs import mirror_client_config
from pyconnect.errors import ConnectError, RetriableError
from pyconnect.kafka.group_admin import CommittedOffset, GroupAdmin
from pyconnect.kafka.group_view import UNKNOWN, GroupView
from pyconnect.kafka.mirror_admin import MirrorAdmin
from pyconnect.kafka.record_offsets import partition_bounds

T = TypeVar("T")

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_REFUSED = 3
EXIT_UNKNOWN_GROUP = 5
EXIT_NO_CHECKPOINTS = 6
RETRY_BACKOFF_S = 0.5
COORDINATOR_NOT_READY = frozenset({14, 15, 16})
"""COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: retried."""


class FailoverError(ConnectError, RuntimeError):
    """The plan cannot be made or committed; the message is one line."""

    exit_code = EXIT_ERROR


class FailoverRefused(FailoverError):
    """The group has members on the target cluster: nothing was committed for it."""

    exit_code = EXIT_REFUSED


class UnknownGroup(FailoverError):
    """The flow has checkpoints, but none of this group: nothing to translate, nothing committed."""

    exit_code = EXIT_UNKNOWN_GROUP


class NoCheckpoints(FailoverError):
    """The flow has no checkpoints yet (no checkpoints topic, or an empty one): nothing committed."""

    exit_code = EXIT_NO_CHECKPOINTS


class _NotReady(RetriableError):
    """A coordinator that is loading or moving: :func:`retrying` calls again."""


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


async def bounded(awaitable: Awaitable[T], timeout_s: float, cluster: str) -> T:
    try:
        return await asyncio.wait_for(awaitable, timeout_s)
    except TimeoutError:
        raise FailoverError(f"cluster {cluster} did not answer within {timeout_s:.0f} s") from None


async def retrying(call: Callable[[], Awaitable[T]], timeout_s: float, cluster: str) -> T:
    """``call()`` again after retriable errors until ``timeout_s`` has passed; others propagate at once."""
    deadline = time.monotonic() + timeout_s
    while True:
        remaining = deadline - time.monotonic()
        try:
            return await asyncio.wait_for(call(), max(remaining, 0.001))
        except TimeoutError:
            raise FailoverError(f"cluster {cluster} did not answer within {timeout_s:.0f} s") from None
        except Exception as exc:
            if not getattr(exc, "retriable", False) or time.monotonic() + RETRY_BACKOFF_S >= deadline:
                raise
        await asyncio.sleep(RETRY_BACKOFF_S)


async def cluster_bounds(
    config: Mapping[str, str], cluster: str, partitions: Sequence[tuple[str, int]], timeout_s: float
) -> dict[tuple[str, int], tuple[int, int]]:
    """``(log start, last stable offset)`` of each partition of ``cluster`` (a ``MirrorClientConfig`` map),
    read with its consumer settings; :class:`FailoverError` (one line) when it does not answer in time or
    refuses."""
    try:
        return await partition_bounds(mirror_client_config(config, "consumer"), partitions, timeout_s)
    except TimeoutError:
        raise FailoverError(f"cluster {cluster} did not answer within {timeout_s:.0f} s") from None
    except Exception as exc:
        raise FailoverError(f"cannot read the partitions of cluster {cluster}: {one_line(exc)}") from None


async def cluster_topics(config: Mapping[str, str], cluster: str, timeout_s: float) -> dict[str, list[int]]:
    """The topics of ``cluster`` (a ``MirrorClientConfig`` map) and their partitions; :class:`FailoverError`
    (one line) when it does not answer in time or refuses."""
    admin = MirrorAdmin(mirror_client_config(config, "admin"), cluster)
    try:
        await asyncio.wait_for(admin.start(), timeout_s)
        return await asyncio.wait_for(admin.topic_partitions(), timeout_s)
    except TimeoutError:
        raise FailoverError(f"cluster {cluster} did not answer within {timeout_s:.0f} s") from None
    except Exception as exc:
        raise FailoverError(f"cannot list the topics of cluster {cluster}: {one_line(exc)}") from None
    finally:
        await admin.close()


async def busy_groups(
    config: Mapping[str, str], cluster: str, groups: Sequence[str], timeout_s: float
) -> dict[str, GroupView]:
    """The views of those of ``groups`` that are not idle on ``cluster`` (members, or rebalancing)."""
    admin = GroupAdmin(mirror_client_config(config, "admin"))
    try:
        await bounded(admin.start(), timeout_s, cluster)
        views = await retrying(lambda: described(admin, list(groups)), timeout_s, cluster)
    finally:
        await close_quietly(admin)
    return {g: v for g, v in views.items() if not v.idle}


async def close_quietly(admin: GroupAdmin) -> None:
    try:
        await admin.close()
    except Exception:
        return


async def described(admin: GroupAdmin, groups: list[str]) -> dict[str, GroupView]:
    """The groups' views; a describe the coordinator did not answer (loading, moving) is retried."""
    views = await admin.describe_groups(groups)
    unanswered = [g for g, view in views.items() if view.state == UNKNOWN]
    if unanswered:
        raise _NotReady(f"group {unanswered[0]} could not be described: {views[unanswered[0]].error}")
    return views


async def commit_offsets(
    admin: GroupAdmin, group: str, offsets: Mapping[tuple[str, int], CommittedOffset]
) -> dict[tuple[str, int], int]:
    """Per-partition error codes of an admin commit (empty on success); "not ready" answers are retried."""
    errors = await admin.alter_offsets(group, offsets)
    if errors and set(errors.values()) <= COORDINATOR_NOT_READY:
        raise _NotReady(f"coordinator not ready (error codes {sorted(set(errors.values()))})")
    return errors
