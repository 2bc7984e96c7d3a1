"""The cutover's fence on the source cluster: DENY WRITE ACLs that stop named producers writing there.

:func:`raise_fence` creates, for every principal and mirrored topic, a literal DENY WRITE binding on any
host (``kafka-acls --add --deny-principal P --operation Write --topic T``); a deny wins over every allow,
so the principals' producers get TOPIC_AUTHORIZATION_FAILED from then on (their retries fail, nothing
lands). :func:`lift_fence` deletes exactly those bindings. Both are idempotent (a binding already there,
or already gone, is no error). A cluster without an authorizer cannot be fenced this way:
:class:`~connectors.mirror.offsets.failover_calls.FailoverError` says so in one line, as it does for a
refused request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from connectors.mirror.offsets.failover_calls import FailoverError, one_line
from connectors.mirror.offsets.failover_flow import FailoverFlow
from pyconnect.config.client_configs import mirror_client_config
from pyconnect.kafka.acls import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    SecurityDisabled,
)
from pyconnect.kafka.mirror_admin import MirrorAdmin

__all__ = ["fence_bindings", "lift_fence", "raise_fence"]


def fence_bindings(principals: Sequence[str], topics: Sequence[str]) -> list[AclBinding]:
    """The DENY WRITE bindings of the fence (pure)."""
    return [
        AclBinding(
            ResourceType.TOPIC,
            topic,
            PatternType.LITERAL,
            principal,
            "*",
            AclOperation.WRITE,
            AclPermissionType.DENY,
        )
        for principal in principals
        for topic in topics
    ]


async def _apply(flow: FailoverFlow, bindings: list[AclBinding], create: bool, timeout_s: float) -> None:
    verb = "raise" if create else "lift"
    admin = MirrorAdmin(mirror_client_config(flow.source_config, "admin"), flow.source)
    try:
        await asyncio.wait_for(admin.start(), timeout_s)
        call = admin.create_acls(bindings) if create else admin.delete_acls(bindings)
        results = await asyncio.wait_for(call, timeout_s)
    except SecurityDisabled:
        raise FailoverError(
            f"cannot {verb} the fence: cluster {flow.source} runs no authorizer (stop the producers yourself and "
            "leave out --fence-principal)"
        ) from None
    except FailoverError:
        raise
    except TimeoutError:
        raise FailoverError(
            f"cannot {verb} the fence: cluster {flow.source} did not answer within {timeout_s:.0f} s"
        ) from None
    except Exception as exc:
        raise FailoverError(f"cannot {verb} the fence on cluster {flow.source}: {one_line(exc)}") from None
    finally:
        await admin.close()
    failed = {b: e for b, e in results.items() if e}
    if failed:
        binding, error = next(iter(failed.items()))
        raise FailoverError(
            f"cannot {verb} the fence on cluster {flow.source}: {binding.principal} on topic {binding.name}: {error}"
        )


async def raise_fence(
    flow: FailoverFlow, principals: Sequence[str], topics: Sequence[str], timeout_s: float
) -> None:
    await _apply(flow, fence_bindings(principals, topics), True, timeout_s)


async def lift_fence(
    flow: FailoverFlow, principals: Sequence[str], topics: Sequence[str], timeout_s: float
) -> None:
    await _apply(flow, fence_bindings(principals, topics), False, timeout_s)
