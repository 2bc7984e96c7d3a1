"""How a source task commits what it copied: one protocol, two policies, chosen by the task plan.

- :class:`OffsetCommits` (at-least-once; spec §5.3): offsets of records the target acknowledged go to
  the offset writer every ``interval_s`` (first after one interval), bounded by ``timeout_s``; offsets
  that fail to commit are retried next time, newer ones winning; ``task.commit()`` follows each
  flush. Every commit, the final one too, first asks ``may_commit()`` (the worker's stale-membership
  fence, :mod:`pyconnect.herder.commit_fence`; beyond Java, which always commits): when refused nothing
  is written and ``task.commit()`` is not called; a running task keeps its offsets for its next
  commit, a stopping task drops them (committing them could rewind what the task's new owner
  committed). Logged at WARN once per refusal streak. At the end: wait up to ``timeout_s`` for the
  records handed to the producer, let the hooks settle, commit; after the producer closed, commit what
  it acknowledged while closing (without ``task.commit()``: the plugin has stopped).
- :class:`TransactionCommits` (exactly-once, KIP-618; the worker has
  ``exactly.once.source.support=enabled``): before the plugin starts, ``preflight`` (the herder's
  zombie fencing of older task generations and the start of the producer), the initialisation of the
  task's transactional producer (fencing an older instance of the task), then ``postflight`` (the
  herder checks the task is still current and assigned here); a stop request skips what is left.
  Records go through the transaction; the offsets of records the producer accepted are written to the
  offsets topic in the same transaction (serialized by ``encode_offsets``), committed at each boundary:
  after every dispatched ``poll()`` batch (``poll``, the default), or at the first batch end
  ``interval_s`` after the last commit (``interval``; a ``poll()`` that returns nothing ends a batch
  too, so a quiet source's records still commit); also before pausing and on a clean stop. With a
  ``context`` (``transaction.boundary=connector``) the task's own requests end transactions: a commit
  or an abort (whose offsets are still committed, in a new transaction) after a given record or at the
  end of a batch; no commit on pause, and at a clean stop only when requested (an open transaction is
  aborted). Hooks of sent records and ``task.commit()`` run after the transaction commits. A failed
  commit raises (the task fails, nothing of the transaction visible to ``read_committed``); a failed
  task abandons its open transaction; a stop during a dispatch aborts it (its records' next owner
  copies them). At the end the hooks still running get ``settle_s`` (the offset flush timeout).

The task gives its policy a :class:`CommitSite` once (``attach``): the task's sender and submitted
records, the plugin's ``commit`` and whether the plugin still runs, and where to record a commit.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pyconnect.api.source import TransactionContext
from pyconnect.concurrency import cancel_and_wait
from pyconnect.kafka.batch_sender import BatchSender, OutgoingRecord, SentBatch
from pyconnect.kafka.target_watch import TargetWatch
from pyconnect.kafka.task_transactions import TaskTransactions
from pyconnect.log_guard import is_retriable
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.submitted_records import SubmittedRecord, SubmittedRecords

log = logging.getLogger(__name__)

SourceOffsets = dict[str, tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]
"""Source offsets by submitted-record key: ``(source partition, source offset)``."""
OffsetWriter = Callable[[SourceOffsets], Awaitable[None]]
OffsetEncoder = Callable[
    [list[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]], list[tuple[bytes, bytes | None]]
]
"""Serializes ``(source partition, source offset)`` pairs into offsets-topic records (key, value)."""
Dispatch = Callable[[list[Any]], Awaitable[None]]


@dataclass(frozen=True)
class CommitSite:
    """What a commit policy works on, given by the task it serves."""

    task_id: ConnectorTaskId
    sender: BatchSender
    watch: TargetWatch
    """The task's view of its target (a transactional sender reports its waits there too)."""
    submitted: SubmittedRecords
    stopping: Callable[[], bool]
    commit_plugin: Callable[[], Awaitable[None]]
    """``task.commit()`` through the task's plugin calls (its errors are the policy's to log)."""
    plugin_running: Callable[[], bool]
    settle_hooks: Callable[[float], Awaitable[None]]
    """Give the acknowledgement hooks still running up to this many seconds to finish."""
    record_commit: Callable[[float, bool], None]
    """``(started, success)``: a commit attempt, for the task's metrics."""
    may_commit: Callable[[], bool] | None = None
    """The worker's stale-membership fence (offset commits ask it before each commit)."""


class CommitPolicy(Protocol):
    """What the source loop asks of its commit policy (see the module docstring)."""

    commits: int
    last_commit_error: BaseException | None
    commits_refused: int
    transactional: bool
    """Commits are transactions: the offsets of dispatched records go in the open one
    (:meth:`dispatched`) and acknowledgement hooks wait for its commit (:meth:`after_commit`); when
    ``False`` both are no-ops the dispatcher may skip (hooks run at once)."""

    def attach(self, site: CommitSite) -> None: ...

    async def prepare(self, unless_stopping: Callable[[Awaitable[None]], Awaitable[None]]) -> None:
        """Before the plugin starts (the caller checks for a stop request after it)."""

    def begin(self) -> None:
        """The plugin started and the loop begins."""

    async def before_pause(self) -> None: ...

    async def dispatch(self, records: list[Any], dispatch: Dispatch) -> None:
        """Dispatch one poll batch through ``dispatch``, committing where a boundary says."""

    async def idle(self) -> None:
        """A ``poll()`` returned nothing."""

    @property
    def raw_sender(self) -> BatchSender: ...

    @property
    def send(self) -> Callable[[list[OutgoingRecord]], Awaitable[list[SentBatch]]]:
        """Hands records to the producer (the sender's own method: no wrapper on the data path)."""

    @property
    def send_raw(self) -> Callable[[str, int, Any], Awaitable[asyncio.Future[Any]]]:
        """Hands one raw batch to the producer, as :attr:`send`."""

    def dispatched(self, entries: Iterable[SubmittedRecord]) -> None:
        """The producer accepted the records of these entries."""

    def after_commit(self, hook: Callable[[], object]) -> None:
        """Run ``hook`` once what was just acknowledged is committed (now, or with the transaction)."""

    def explain(self, raised: BaseException) -> tuple[BaseException | None, bool]:
        """For a failure of the task: an error that says it better (or ``None``), and whether it is a
        fence by a newer instance of the task (a zombie's end, logged as a warning)."""

    async def end(self) -> None:
        """The loop ended (stop the policy's own background work)."""

    async def finish(self, *, failed: bool, abandoned: bool) -> None:
        """The final commit of a task whose plugin started, before the plugin stops; raises when it
        fails the task."""

    async def commit_acknowledged(self) -> None:
        """What the target acknowledged since the last commit (the producer closed, a cancelled task)."""

    def abandon(self) -> None: ...

    async def close(self) -> None: ...


class OffsetCommits:
    """At-least-once commits through the offset writer (see the module docstring)."""

    transactional = False

    def __init__(
        self,
        write_offsets: OffsetWriter,
        *,
        interval_s: float = 60.0,
        timeout_s: float = 5.0,
    ) -> None:
        self._write_offsets = write_offsets
        self._interval_s = interval_s
        self._timeout_s = timeout_s
        self._unflushed: SourceOffsets = {}
        self._refusing = False
        self._committer: asyncio.Task[None] | None = None
        self._site: CommitSite | None = None
        self.commits = 0
        self.commits_refused = 0
        self.last_commit_error: BaseException | None = None

    def attach(self, site: CommitSite) -> None:
        self._site = site

    @property
    def site(self) -> CommitSite:
        assert self._site is not None, "attach() first"
        return self._site

    async def prepare(self, unless_stopping: Callable[[Awaitable[None]], Awaitable[None]]) -> None:
        return None

    def begin(self) -> None:
        task_id = self.site.task_id
        self._committer = asyncio.create_task(
            self._commit_loop(), name=f"offset-commit-{task_id.connector}-{task_id.task}"
        )

    async def before_pause(self) -> None:
        return None

    async def dispatch(self, records: list[Any], dispatch: Dispatch) -> None:
        await dispatch(records)

    async def idle(self) -> None:
        return None

    @property
    def raw_sender(self) -> BatchSender:
        return self.site.sender

    @property
    def send(self) -> Callable[[list[OutgoingRecord]], Awaitable[list[SentBatch]]]:
        return self.site.sender.send

    @property
    def send_raw(self) -> Callable[[str, int, Any], Awaitable[asyncio.Future[Any]]]:
        return self.site.sender.send_raw

    def dispatched(self, entries: Iterable[SubmittedRecord]) -> None:
        return None

    def after_commit(self, hook: Callable[[], object]) -> None:
        hook()

    def explain(self, raised: BaseException) -> tuple[BaseException | None, bool]:
        return None, False

    async def end(self) -> None:
        committer, self._committer = self._committer, None
        await cancel_and_wait(committer, log=log)

    async def finish(self, *, failed: bool, abandoned: bool) -> None:
        site = self.site
        await site.sender.wait_settled(self._timeout_s)
        await site.settle_hooks(self._timeout_s)
        await self._commit(final=True)

    async def commit_acknowledged(self) -> None:
        self._unflushed.update(self.site.submitted.committable().offsets)
        if self._unflushed:
            await self._commit(final=True)

    def abandon(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def _commit_loop(self) -> None:
        while True:
            await asyncio.sleep(self._interval_s)
            await self._commit()

    async def _commit(self, *, final: bool = False) -> None:
        """Flush acknowledged offsets (and earlier failures), then call ``task.commit()``; nothing at
        all while ``may_commit()`` refuses."""
        site = self.site
        self._unflushed.update(site.submitted.committable().offsets)
        if site.may_commit is not None and not site.may_commit():
            self._refused(final)
            return
        self._refusing = False
        started = time.monotonic()
        if self._unflushed:
            pending, self._unflushed = self._unflushed, {}
            try:
                await asyncio.wait_for(self._write_offsets(pending), self._timeout_s)
                self.commits += 1
                self.last_commit_error = None
            except asyncio.CancelledError:
                # Stopping: the final commit writes these again (newer offsets win).
                self._keep(pending)
                raise
            except Exception as exc:
                self.last_commit_error = exc
                self._failed(exc, len(pending), started)
                self._keep(pending)
                site.record_commit(started, False)
                return
        site.record_commit(started, True)
        if not site.plugin_running():  # offsets of records acknowledged after the plugin stopped
            return
        try:
            await site.commit_plugin()
        except Exception:
            log.exception("Task %s: commit() failed", site.task_id)

    def _keep(self, pending: SourceOffsets) -> None:
        for key, value in pending.items():
            self._unflushed.setdefault(key, value)

    def _refused(self, final: bool) -> None:
        self.commits_refused += 1
        if final or not self._refusing:
            log.warning(
                "Task %s: %s the offsets of %d partition(s): this worker's group membership lapsed "
                "and the task is not (yet) confirmed as still assigned to it",
                self.site.task_id,
                "dropping" if final else "not committing",
                len(self._unflushed),
            )
        self._refusing = True
        if final:
            self._unflushed = {}

    def _failed(self, exc: Exception, partitions: int, started: float) -> None:
        log.log(  # a timeout or a retriable error (a broker restarting) heals at the next commit
            logging.WARNING if isinstance(exc, TimeoutError) or is_retriable(exc) else logging.ERROR,
            "Task %s: offset commit of %d partition(s) failed after %.1f s: %s; the offsets are "
            "committed again at the next commit",
            self.site.task_id,
            partitions,
            time.monotonic() - started,
            "timed out (offset.flush.timeout.ms)"
            if isinstance(exc, TimeoutError)
            else (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__),
        )


class TransactionCommits:
    """Exactly-once commits in the task's transactions (see the module docstring)."""

    commits_refused = 0
    transactional = True

    def __init__(
        self,
        transactions: TaskTransactions,
        encode_offsets: OffsetEncoder,
        *,
        interval_s: float | None = None,
        settle_s: float = 5.0,
        context: TransactionContext | None = None,
        preflight: Callable[[], Awaitable[None]] | None = None,
        postflight: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._transactions = transactions
        self._encode_offsets = encode_offsets
        self._interval_s = interval_s
        self._settle_s = settle_s
        self._context = context
        self._preflight = preflight
        self._postflight = postflight
        self._last_commit = 0.0
        self._offsets: SourceOffsets = {}
        self._after_commit: list[Callable[[], object]] = []
        self._site: CommitSite | None = None
        self.commits = 0
        self.last_commit_error: BaseException | None = None

    def attach(self, site: CommitSite) -> None:
        self._site = site
        self._transactions.sender.observe(site.watch)

    @property
    def site(self) -> CommitSite:
        assert self._site is not None, "attach() first"
        return self._site

    async def prepare(self, unless_stopping: Callable[[Awaitable[None]], Awaitable[None]]) -> None:
        stopping = self.site.stopping
        if self._preflight is not None:
            await unless_stopping(self._preflight())
        if stopping():
            return
        await self._transactions.initialize()
        if self._postflight is not None:
            await self._postflight()

    def begin(self) -> None:
        self._last_commit = time.monotonic()

    async def before_pause(self) -> None:
        if self._context is None:
            await self._commit()  # no transaction hangs open while paused

    async def dispatch(self, records: list[Any], dispatch: Dispatch) -> None:
        context = self._context
        if context is None:
            await dispatch(records)
            if self._boundary():
                await self._commit()
            return
        # transaction.boundary=connector: segments ending at each record the task asked to commit or
        # abort on, each such transaction ended there; then the batch's own request, if any (Java's
        # ExactlyOnceWorkerSourceTask connector boundary manager)
        start = 0
        for index, record in enumerate(records):
            abort = context.should_abort_on(record)
            if abort or context.should_commit_on(record):
                await dispatch(records[start : index + 1])
                start = index + 1
                if abort:
                    await self._abort_requested()
                await self._commit()
        if start < len(records):
            await dispatch(records[start:])
        await self._end_connector_transaction(context)

    async def idle(self) -> None:
        """After a poll that returned nothing, commit when due (Java calls ``batchDispatched`` then
        too), so that with ``interval`` the records of a source gone quiet commit within the interval
        instead of waiting for the next records (or the transaction timeout, which would abort them
        and fail the task)."""
        if self._context is not None or not (self._transactions.open or self._offsets):
            return
        if self._boundary():
            await self._commit()

    @property
    def raw_sender(self) -> BatchSender:
        return self._transactions.sender

    @property
    def send(self) -> Callable[[list[OutgoingRecord]], Awaitable[list[SentBatch]]]:
        return self._transactions.send

    @property
    def send_raw(self) -> Callable[[str, int, Any], Awaitable[asyncio.Future[Any]]]:
        return self._transactions.send_raw

    def dispatched(self, entries: Iterable[SubmittedRecord]) -> None:
        offsets = self._offsets  # offsets of records the producer accepted (recordDispatched)
        for entry in entries:
            offsets[entry.key] = (entry.partition, entry.offset)

    def after_commit(self, hook: Callable[[], object]) -> None:
        self._after_commit.append(hook)

    def explain(self, raised: BaseException) -> tuple[BaseException | None, bool]:
        return self._transactions.refusal(raised), self._transactions.fenced(raised)

    async def end(self) -> None:
        return None

    async def finish(self, *, failed: bool, abandoned: bool) -> None:
        try:
            if failed:  # a failed task abandons its open transaction (Java)
                return
            if abandoned:  # part of a dispatch was never sent: its offsets must not commit
                await self._abort_abandoned()
                return
            self._transactions.sender.resume()  # the offsets of the final transaction
            if self._context is None:
                await self._commit()
            else:
                await self._end_connector_transaction(self._context, final=True)
        finally:
            await self.site.settle_hooks(self._settle_s)

    async def commit_acknowledged(self) -> None:
        return None

    def abandon(self) -> None:
        self._transactions.sender.abandon()

    async def close(self) -> None:
        await self._transactions.sender.close()

    def _boundary(self) -> bool:
        """Whether the batch just dispatched ends the transaction: always for ``poll``; for
        ``interval``, the first batch end at least ``interval_s`` after the last commit."""
        if self._interval_s is None:
            return True
        now = time.monotonic()
        if now >= self._last_commit + self._interval_s:
            self._last_commit = now
            return True
        return False

    async def _commit(self) -> None:
        """Java ``ExactlyOnceWorkerSourceTask.commitTransaction``: the offsets of the records dispatched
        since the last commit go to the offsets topic in the open transaction, which is then
        committed; hooks and ``task.commit()`` follow. Failures raise. The hooks are taken once the
        transaction committed (Java reads ``committableRecords`` after ``commitTransaction``): the commit's
        flush acknowledges most of the transaction's records, and their hooks (a mirror's offset syncs)
        must not wait for a next commit that a source gone quiet never makes."""
        site = self.site
        started = time.monotonic()
        offsets, self._offsets = self._offsets, {}
        if offsets or self._transactions.open:
            try:
                records = self._encode_offsets(list(offsets.values())) if offsets else []
                await self._transactions.commit(records)
            except Exception as exc:
                self.last_commit_error = exc
                site.record_commit(started, False)
                raise
            self.commits += 1
            self.last_commit_error = None
        site.record_commit(started, True)
        hooks, self._after_commit = self._after_commit, []
        for hook in hooks:
            hook()
        try:
            await site.commit_plugin()
        except Exception:
            log.exception("Task %s: commit() failed", site.task_id)

    async def _end_connector_transaction(self, context: TransactionContext, *, final: bool = False) -> None:
        """The batch-level request of the task: abort (offsets still committed), commit, or nothing. At
        a clean stop without a request the open transaction is aborted rather than left to expire."""
        if context.should_abort_batch():
            await self._abort_requested()
            await self._commit()
        elif context.should_commit_batch():
            await self._commit()
        elif final and self._transactions.open:
            await self._transactions.abort()

    async def _abort_requested(self) -> None:
        if not self._transactions.open:
            log.warning(
                "Task %s: ignoring the task's request to abort the transaction: it is empty",
                self.site.task_id,
            )
            return
        log.info("Task %s: aborting the transaction as requested by the connector", self.site.task_id)
        await self._transactions.abort()

    async def _abort_abandoned(self) -> None:
        """A stop interrupted a dispatch: the open transaction (records of that dispatch included) is
        aborted, nothing of it visible to ``read_committed``; the task's next owner copies it."""
        self._offsets, self._after_commit = {}, []
        if self._transactions.open:
            log.info(
                "Task %s: aborting the open transaction: the task stopped during a dispatch",
                self.site.task_id,
            )
            await self._transactions.abort()
