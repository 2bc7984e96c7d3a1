"""The two commit policies of a source task without Kafka (pyconnect.worker.source_commits): a fake
transactional producer and offset writer record what is committed and when (the Kafka side: the
exactly-once and offset-commit tests of tests/integration/test_worker_source_task.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pyconnect.api.source import SourceRecord, TransactionContext
from pyconnect.kafka.target_watch import TargetWatch
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.source_commits import CommitSite, OffsetCommits, SourceOffsets, TransactionCommits
from pyconnect.worker.submitted_records import SubmittedRecords

TASK = ConnectorTaskId("c", 0)


class FakeSender:
    """What the policies use of a BatchSender when nothing is sent through it here."""

    def observe(self, watch: TargetWatch) -> None:
        self.watch = watch

    def resume(self) -> None:
        return None

    async def wait_settled(self, timeout: float) -> bool:
        return True


class FakeTransactions:
    """What TransactionCommits uses of TaskTransactions: a transaction opens with the first record."""

    def __init__(self) -> None:
        self.open = False
        self.events: list[str] = []
        self.sender = FakeSender()
        self.flushed: list[Callable[[], None]] = []
        """The producer's acknowledgements of the transaction's records, while the commit flushes."""

    async def initialize(self) -> None:
        self.events.append("initialize")

    async def commit(self, offset_records: list[tuple[bytes, bytes | None]]) -> None:
        acknowledged, self.flushed = self.flushed, []
        for ack in acknowledged:
            ack()
        self.events.append(f"commit {[key.decode() for key, _ in offset_records]}")
        self.open = False

    async def abort(self) -> None:
        self.events.append("abort")
        self.open = False

    def refusal(self, exc: BaseException) -> None:
        return None

    def fenced(self, exc: BaseException) -> bool:
        return False


class PlainCommitTask:
    """A task whose ``commit`` is a plain method, as many connectors write it."""

    def __init__(self) -> None:
        self.commits = 0

    def commit(self) -> None:
        self.commits += 1


def site(submitted: SubmittedRecords, task: PlainCommitTask, **kw: Any) -> CommitSite:
    async def commit_plugin() -> None:  # the task's bound commit (a plugin thread in a worker)
        await asyncio.to_thread(task.commit)

    async def settle(grace_s: float) -> None:
        return None

    return CommitSite(
        task_id=TASK,
        sender=FakeSender(),  # type: ignore[arg-type]
        watch=TargetWatch(),
        submitted=submitted,
        stopping=lambda: False,
        commit_plugin=commit_plugin,
        plugin_running=lambda: True,
        settle_hooks=settle,
        record_commit=lambda started, success: None,
        **kw,
    )


def encode(
    pairs: list[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]],
) -> list[tuple[bytes, bytes]]:
    return [(f"{p['p']}:{o['o']}".encode(), b"") for p, o in pairs]  # type: ignore[index]


def record(offset: int, partition: int = 0) -> SourceRecord:
    return SourceRecord({"p": partition}, {"o": offset}, "t", 0, None, None, None, "v")


def dispatcher(
    policy: TransactionCommits, transactions: FakeTransactions, submitted: SubmittedRecords
) -> Callable[[list[SourceRecord]], Awaitable[None]]:
    """The task's dispatch, as the policy sees it: the records sent in the open transaction."""

    async def dispatch(records: list[SourceRecord]) -> None:
        transactions.open = True
        transactions.events.append(f"send {[r.source_offset['o'] for r in records]}")  # type: ignore[index]
        policy.dispatched([submitted.submit(r.source_partition, r.source_offset) for r in records])

    return dispatch


async def test_poll_boundary_commits_each_batch_with_its_offsets_then_hooks_then_a_plain_commit() -> None:
    transactions, submitted, task = FakeTransactions(), SubmittedRecords(), PlainCommitTask()
    policy = TransactionCommits(transactions, encode)  # type: ignore[arg-type]
    policy.attach(site(submitted, task))
    hooks: list[str] = []
    dispatch = dispatcher(policy, transactions, submitted)
    await policy.dispatch([record(1), record(2, partition=1)], dispatch)
    policy.after_commit(lambda: hooks.append("late"))  # acknowledged after that commit: the next one
    assert transactions.events == ["send [1, 2]", "commit ['0:1', '1:2']"]
    assert (policy.commits, task.commits, hooks) == (1, 1, [])
    await policy.finish(failed=False, abandoned=False)
    assert hooks == ["late"] and task.commits == 2, (
        "a clean stop commits (an empty transaction) and runs hooks"
    )


async def test_hooks_of_records_acknowledged_by_the_commit_flush_run_after_that_commit() -> None:
    """The producer acknowledges a transaction's records while its commit flushes them: their hooks (a
    mirror's offset syncs) run once that commit is done, before ``task.commit()``, not at a next commit
    that a source gone quiet never makes (Java reads ``committableRecords`` after ``commitTransaction``)."""
    transactions, submitted, task = FakeTransactions(), SubmittedRecords(), PlainCommitTask()
    policy = TransactionCommits(transactions, encode)  # type: ignore[arg-type]
    policy.attach(site(submitted, task))
    hooks: list[str] = []
    transactions.flushed.append(
        lambda: policy.after_commit(lambda: hooks.append(f"record 1, task commits {task.commits}"))
    )
    await policy.dispatch([record(1)], dispatcher(policy, transactions, submitted))
    assert transactions.events == ["send [1]", "commit ['0:1']"]
    assert hooks == ["record 1, task commits 0"] and task.commits == 1
    await policy.idle()
    assert len(transactions.events) == 2 and len(hooks) == 1, "quiet: nothing more to commit or run"


async def test_interval_boundary_waits_and_a_quiet_source_still_commits_when_due() -> None:
    transactions, submitted, task = FakeTransactions(), SubmittedRecords(), PlainCommitTask()
    policy = TransactionCommits(transactions, encode, interval_s=0.2)  # type: ignore[arg-type]
    policy.attach(site(submitted, task))
    policy.begin()
    dispatch = dispatcher(policy, transactions, submitted)
    await policy.dispatch([record(1)], dispatch)
    await policy.idle()
    assert transactions.events == ["send [1]"], "within the interval: still open"
    await asyncio.sleep(0.25)
    await policy.idle()
    assert transactions.events == ["send [1]", "commit ['0:1']"]
    await policy.idle()
    assert len(transactions.events) == 2, "nothing open, nothing to commit"


async def test_connector_boundary_aborts_and_commits_where_the_task_asked() -> None:
    transactions, submitted, task = FakeTransactions(), SubmittedRecords(), PlainCommitTask()
    context = TransactionContext()
    policy = TransactionCommits(transactions, encode, context=context)  # type: ignore[arg-type]
    policy.attach(site(submitted, task))
    dispatch = dispatcher(policy, transactions, submitted)
    records = [record(i) for i in range(5)]
    context.abort_transaction(records[1])
    context.commit_transaction(records[3])
    await policy.dispatch(records, dispatch)
    assert transactions.events == [
        "send [0, 1]",
        "abort",
        "commit ['0:1']",  # an aborted transaction's offsets still commit, in a new one
        "send [2, 3]",
        "commit ['0:3']",
        "send [4]",
    ]
    await policy.before_pause()
    assert transactions.events[-1] == "send [4]", "the connector's boundary: no commit on pause"
    await policy.finish(failed=False, abandoned=False)
    assert transactions.events[-1] == "abort", "a clean stop without a request aborts the open transaction"


async def test_a_stop_during_a_dispatch_aborts_and_a_failed_task_leaves_the_transaction() -> None:
    for failed, abandoned, last in ((False, True, "abort"), (True, False, "send [1]")):
        transactions, submitted, task = FakeTransactions(), SubmittedRecords(), PlainCommitTask()
        policy = TransactionCommits(transactions, encode)  # type: ignore[arg-type]
        policy.attach(site(submitted, task))
        await dispatcher(policy, transactions, submitted)([record(1)])
        await policy.finish(failed=failed, abandoned=abandoned)
        assert transactions.events[-1] == last and policy.commits == 0


async def test_offset_commits_write_acknowledged_offsets_and_drop_them_at_a_refused_final_commit() -> None:
    submitted, task = SubmittedRecords(), PlainCommitTask()
    written: list[SourceOffsets] = []
    allowed = [True]

    async def write(offsets: SourceOffsets) -> None:
        written.append(dict(offsets))

    policy = OffsetCommits(write, interval_s=60.0)
    policy.attach(site(submitted, task, may_commit=lambda: allowed[0]))
    submitted.submit({"p": 0}, {"o": 1}).ack()
    await policy.commit_acknowledged()
    assert [list(w.values()) for w in written] == [[({"p": 0}, {"o": 1})]] and task.commits == 1
    submitted.submit({"p": 0}, {"o": 2}).ack()
    allowed[0] = False
    await policy.commit_acknowledged()
    assert (len(written), policy.commits_refused) == (1, 1), "refused: nothing written, offsets dropped"
    allowed[0] = True
    await policy.commit_acknowledged()
    assert len(written) == 1, "a stopping task's refused offsets are never written later"
