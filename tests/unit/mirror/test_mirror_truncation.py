"""The pure decision of connectors.mirror.truncation: which gap, how many records lost, where to resume."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connectors.mirror import truncation
from connectors.mirror.policy import replication_policy
from connectors.mirror.source import MirrorSourceConnector, MirrorSourceTask
from connectors.mirror.truncation import DELETED, RECREATED, TARGET_REBUILT, Gap, source_gap, target_gap
from pyconnect.errors import ConnectError
from pyconnect.kafka.source_consumer import OutOfRange, PositionOutOfRange


def test_records_deleted_before_copied() -> None:
    gap = source_gap("orders", 2, 100, 150, 200)
    assert gap == Gap(DELETED, "orders", 2, 100, 150, 200, 50, 150)
    assert gap.message().startswith("records 100..149 of orders-2 were deleted before they were copied")
    assert "50 records lost" in gap.message()


def test_position_in_range_is_no_gap() -> None:
    assert source_gap("t", 0, 150, 150, 200) is None
    assert source_gap("t", 0, 200, 150, 200) is None, "at the log end: nothing to copy yet"
    assert source_gap("t", 0, 0, 0, 0) is None
    assert source_gap("t", 0, -1, 5, 9) is None, "no position: the reset policy applies"


def test_recreated_topic_ends_before_the_position() -> None:
    gap = source_gap("t", 0, 100, 0, 30)
    assert gap == Gap(RECREATED, "t", 0, 100, 0, 30, 0, 0)
    assert "recreated" in gap.message() and "0..29" in gap.message()


def test_recreated_and_trimmed_resumes_at_log_start() -> None:
    gap = source_gap("t", 0, 100, 10, 30)
    assert gap is not None and gap.kind == RECREATED and gap.resume == 10


def test_target_rebuilt_empty() -> None:
    gap = target_gap("t", 1, 199, 0, 150, 210)
    assert gap == Gap(TARGET_REBUILT, "t", 1, 200, 150, 210, 50, 200)
    assert "source records 150..199 (50 records) are not on the target" in gap.message()
    missing = target_gap("t", 1, 199, None, 0, 210)
    assert missing is not None and missing.lost == 200


def test_target_holding_records_or_nothing_committed_is_no_gap() -> None:
    assert target_gap("t", 0, 199, 1, 0, 210) is None
    assert target_gap("t", 0, -1, 0, 0, 210) is None


def test_target_rebuilt_after_source_deleted_everything_copied() -> None:
    gap = target_gap("t", 0, 99, 0, 150, 160)
    assert gap is not None and gap.lost == 0 and gap.resume == 100


@given(
    position=st.integers(0, 10_000),
    start=st.integers(0, 10_000),
    length=st.integers(0, 10_000),
)
def test_source_gap_resume_is_always_readable(position: int, start: int, length: int) -> None:
    end = start + length
    gap = source_gap("t", 0, position, start, end)
    if gap is None:
        assert start <= position <= end
        return
    assert start <= gap.resume <= end, "the mirror always resumes inside the log"
    assert gap.lost >= 0
    if gap.kind == DELETED:
        assert gap.position + gap.lost == gap.resume, "every skipped offset is counted"
    else:
        assert position > end and gap.lost == 0


def test_policy_values() -> None:
    assert truncation.policy(None) == "continue"
    assert truncation.policy(" FAIL ") == "fail"
    with pytest.raises(ValueError, match=r"pyconnect.mirror.truncation.policy: String must be one of"):
        truncation.policy("skip")
    assert truncation.policy_error("continue") is None
    assert "Invalid value skip" in (truncation.policy_error("skip") or "")


def test_validate_reports_a_bad_policy_on_its_key() -> None:
    base = {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": "127.0.0.1:1",
        "target.cluster.bootstrap.servers": "127.0.0.1:1",
    }
    connector = MirrorSourceConnector()
    plain = connector.validate(base)
    key = truncation.TRUNCATION_POLICY_CONFIG
    assert key not in plain
    assert key not in connector.validate({**base, key: "fail"})
    bad = connector.validate({**base, key: "skip"})
    assert bad[key].errors == [truncation.policy_error("skip")]
    assert {k: v.errors for k, v in bad.items() if k != key} == {k: v.errors for k, v in plain.items()}


class _Seeks:
    """Stands in for the task's SourceConsumer: records the seeks the gap handling makes."""

    def __init__(self) -> None:
        self.seeks: list[tuple[str, int, int]] = []

    def seek(self, topic: str, partition: int, offset: int) -> None:
        self.seeks.append((topic, partition, offset))


def _task(policy: str) -> tuple[MirrorSourceTask, _Seeks]:
    task = MirrorSourceTask()
    seeks = _Seeks()
    task._consumer = seeks  # type: ignore[assignment]
    task._truncation_policy = policy
    task._name = "mirror-0"
    task._source_alias = "A"
    task._policy = replication_policy({})
    return task, seeks


REFUSED = PositionOutOfRange(
    [
        OutOfRange("t", 0, 10, 40, 90),  # deleted: 30 lost
        OutOfRange("t", 1, 10, 5, 50),  # in range again: fetched again at 10
        OutOfRange("t", 2, 100, 0, 30),  # recreated
    ]
)


def test_all_refused_positions_of_a_poll_are_handled_together_under_continue() -> None:
    task, seeks = _task(truncation.CONTINUE)
    task._out_of_range(REFUSED)
    assert sorted(seeks.seeks) == [("t", 0, 40), ("t", 1, 10), ("t", 2, 0)]


def test_the_fail_policy_names_every_gap_of_the_poll_and_moves_past_none() -> None:
    task, seeks = _task(truncation.FAIL)
    with pytest.raises(ConnectError) as failed:
        task._out_of_range(REFUSED)
    message = str(failed.value)
    assert "records 10..39 of t-0 were deleted" in message and "t-2 ends at 30" in message, message
    assert "t-1" not in message and message.endswith(f"({truncation.TRUNCATION_POLICY_CONFIG}=fail)")
    assert seeks.seeks == [("t", 1, 10)], "only the partition in range again is fetched again"


def test_the_start_check_of_the_target_holds_polls_for_one_poll_timeout_at_a_time() -> None:
    async def run() -> None:
        release = asyncio.Event()

        async def check(failing: bool) -> None:
            await release.wait()
            if failing:
                raise ConnectError("the target was rebuilt")

        for policy in (truncation.CONTINUE, truncation.FAIL):
            release.clear()
            task, _ = _task(policy)
            task._poll_timeout_ms = 50
            task._target_check = asyncio.create_task(check(policy == truncation.FAIL))
            started = asyncio.get_running_loop().time()
            assert not await task._target_checked(), "nothing copied before the check is done"
            assert asyncio.get_running_loop().time() - started >= 0.04, "it waited one poll timeout"
            release.set()
            if policy == truncation.FAIL:
                with pytest.raises(ConnectError, match="rebuilt"):
                    await task._target_checked()
            else:
                assert await task._target_checked() and task._target_check is None
                assert await task._target_checked(), "done once: no more waiting"

    asyncio.run(run())
