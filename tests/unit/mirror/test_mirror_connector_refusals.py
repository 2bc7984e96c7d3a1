"""A mirror connector whose cluster refuses it (connectors.mirror.scheduler.ScheduledConnector): RUNNING
with the condition that names the refusal and the cluster, retrying; once the step passes, the condition
goes, the repeating jobs begin and new task configs are asked for. No Kafka: fake jobs and context."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from connectors.mirror import scheduler as scheduling
from connectors.mirror.scheduler import ScheduledConnector, refusal_code
from pyconnect.conditions import ConditionBoard
from pyconnect.errors import AuthenticationError, AuthorizationError


class Context:
    def __init__(self) -> None:
        self.conditions = ConditionBoard("m", None)
        self.reconfigurations = 0

    def request_task_reconfiguration(self) -> None:
        self.reconfigurations += 1


class Mirror(ScheduledConnector):
    def __init__(self, refusals: int) -> None:
        self.context: Any = Context()
        self._config = SimpleNamespace(source_cluster_alias="A", target_cluster_alias="B")
        self._name = "m"
        self.refusals = refusals
        self.loaded = 0
        self.scheduled = False

    async def load(self) -> None:
        if self.refusals > 0:
            self.refusals -= 1
            raise AuthenticationError("Authentication to source cluster A (127.0.0.1:9) failed: bad password")
        self.loaded += 1


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            AuthenticationError("Authentication to source cluster A (x) failed: no"),
            ("SOURCE_AUTH_FAILED", "source"),
        ),
        (
            AuthenticationError("Authentication to target cluster B (x) failed: no"),
            ("TARGET_AUTH_FAILED", "target"),
        ),
        (
            AuthorizationError("Not authorized to access topics: [t] on source cluster A (x)"),
            ("ACL_DENIED", "source"),
        ),
        (
            AuthorizationError("Cluster authorization failed on target cluster B (x)"),
            ("ACL_DENIED", "target"),
        ),
    ],
)
def test_a_refusal_has_the_code_of_its_kind_and_side(error: Any, expected: tuple[str, str]) -> None:
    assert refusal_code(error) == expected


async def test_a_refused_start_leaves_the_connector_running_with_the_condition_until_it_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scheduling, "START_BACKOFF_S", (0.01,))
    mirror = Mirror(refusals=2)
    scheduler = mirror._scheduler = mirror._scheduler_for("m", 5.0)

    def then() -> None:
        mirror.scheduled = True

    await mirror._start_steps(scheduler, [(mirror.load, "loading topics")], then)
    (condition,) = mirror.context.conditions.active()
    assert (condition.code, condition.cluster, condition.subject) == ("SOURCE_AUTH_FAILED", "A", "")
    assert condition.message.startswith("loading topics: Authentication to source cluster A")
    assert not mirror.scheduled and mirror.loaded == 0
    for _ in range(500):
        if mirror.scheduled:
            break
        await asyncio.sleep(0.01)
    assert mirror.scheduled and mirror.loaded == 1
    assert mirror.context.conditions.active() == [] and mirror.context.reconfigurations == 1
    await mirror.stop()


async def test_a_start_that_passes_at_once_schedules_its_jobs_without_a_reconfiguration() -> None:
    mirror = Mirror(refusals=0)
    scheduler = mirror._scheduler = mirror._scheduler_for("m", 5.0)
    done: list[bool] = []
    await mirror._start_steps(scheduler, [(mirror.load, "loading topics")], lambda: done.append(True))
    assert (
        done == [True] and mirror.context.reconfigurations == 0 and mirror.context.conditions.active() == []
    )
    await mirror.stop()


async def test_a_refused_repeating_job_is_an_acl_condition_of_that_job_until_it_passes() -> None:
    mirror = Mirror(refusals=0)
    mirror._scheduler_for("m", 5.0)
    mirror._refused(
        AuthorizationError("Not authorized to access topics: [t] on target cluster B (x)"),
        "syncing topic ACLs",
    )
    (condition,) = mirror.context.conditions.active()
    assert (condition.code, condition.subject, condition.cluster) == ("ACL_DENIED", "syncing topic ACLs", "B")
    mirror._accepted("refreshing topics")  # another job passing clears nothing
    assert mirror.context.conditions.active() != []
    mirror._accepted("syncing topic ACLs")
    assert mirror.context.conditions.active() == []
