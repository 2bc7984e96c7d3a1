"""The Connect runtime's metric groups, named and computed as Java's (``ConnectMetricsRegistry``).

Domain ``kafka.connect``; groups and tags:

- ``connect-worker-metrics`` (:class:`WorkerMetrics`): ``connector-count``, ``task-count``,
  ``{connector,task}-startup-{attempts,success,failure}-total`` and ``-{success,failure}-percentage``
  (a windowed fraction 0..1, Java's ``Frequencies``). A startup succeeds when the connector or task
  first reports RUNNING; a FAILED report before that is a failed startup (Java's status listeners).
- ``connect-worker-metrics,connector=C`` (:class:`ConnectorTaskCounts`): ``connector-total-task-count``
  and ``connector-{running,paused,failed,unassigned,destroyed,restarting}-task-count`` over the tasks
  of C this worker runs; registered with the first such task, removed with the last.
- ``connect-worker-rebalance-metrics`` (:class:`RebalanceMetrics`): ``connect-protocol``,
  ``leader-name``, ``epoch``, ``rebalancing``, ``completed-rebalances-total``,
  ``rebalance-{max,avg}-time-ms``, ``time-since-last-rebalance-ms`` (+Inf before the first). As in
  Java's ``DistributedHerder``, a rebalance "starts" when an assignment arrives and "succeeds" once the
  work it assigns is started.
- ``connect-coordinator-metrics,client-id=I`` (:class:`CoordinatorMetrics`): ``assigned-connectors``,
  ``assigned-tasks`` (the worker's whole current assignment).
- ``connector-metrics,connector=C`` (:class:`ConnectorMetrics`): ``status`` (lowercase state),
  ``connector-type``, ``connector-class``, ``connector-version``; from the connector's start to its stop.
- ``connector-task-metrics,connector=C,task=N`` (:class:`TaskMetrics`): ``status``, ``running-ratio``,
  ``pause-ratio``, ``offset-commit-{max,avg}-time-ms`` (successful commits), ``offset-commit-{success,
  failure}-percentage``, ``batch-size-{max,avg}``; from the task's creation to its stop.
- ``source-task-metrics,connector=C,task=N`` (:class:`SourceTaskMetrics`): ``source-record-poll-{rate,
  total}``, ``source-record-write-{rate,total}``, ``poll-batch-{max,avg}-time-ms``,
  ``source-record-active-count`` (+ ``-max``, ``-avg``).
- ``app-info,client-id=<worker id>``: ``version``, ``commit-id``, ``start-time-ms`` (Java's
  ``AppInfoParser`` for the worker).

Rates are per second over Kafka's window (``metrics.sample.window.ms`` x ``metrics.num.samples``).
Every recording method is called from the event loop at batch granularity; none blocks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sized

from pyconnect.metrics.registry import MetricGroup, Metrics, MetricsHub, MetricValue, Sensor
from pyconnect.metrics.state_tracker import StateTracker
from pyconnect.metrics.stats import Avg, CumulativeSum, Max, Rate, Value
from pyconnect.protocol.internal_records import State

DOMAIN = "kafka.connect"
WORKER_GROUP = "connect-worker-metrics"
REBALANCE_GROUP = "connect-worker-rebalance-metrics"
COORDINATOR_GROUP = "connect-coordinator-metrics"
CONNECTOR_GROUP = "connector-metrics"
TASK_GROUP = "connector-task-metrics"
SOURCE_TASK_GROUP = "source-task-metrics"
CONNECTOR_TAG, TASK_TAG, CLIENT_ID_TAG = "connector", "task", "client-id"
CONNECT_KAFKA_CLUSTER_ID = "connect.kafka.cluster.id"
CONNECT_GROUP_ID = "connect.group.id"

TASK_COUNT_STATES = (
    ("connector-running-task-count", State.RUNNING),
    ("connector-paused-task-count", State.PAUSED),
    ("connector-failed-task-count", State.FAILED),
    ("connector-unassigned-task-count", State.UNASSIGNED),
    ("connector-destroyed-task-count", State.DESTROYED),
    ("connector-restarting-task-count", State.RESTARTING),
)


class ConnectMetrics:
    """Java's ``ConnectMetrics``: the worker's ``kafka.connect`` registry in ``hub``.

    ``hub.context`` gets ``connect.kafka.cluster.id`` and (distributed) ``connect.group.id``, as Java
    labels its metrics context. ``close`` removes the registry from the hub."""

    def __init__(
        self,
        worker_id: str,
        hub: MetricsHub | None = None,
        *,
        kafka_cluster_id: str = "",
        group_id: str | None = None,
        version: str | None = None,
        commit_id: str | None = None,
    ) -> None:
        self.worker_id = worker_id
        self.hub = hub if hub is not None else MetricsHub()
        if kafka_cluster_id:
            self.hub.context[CONNECT_KAFKA_CLUSTER_ID] = kafka_cluster_id
        if group_id:
            self.hub.context[CONNECT_GROUP_ID] = group_id
        self.registry: Metrics = self.hub.registry(DOMAIN)
        app_info = self.group("app-info", (CLIENT_ID_TAG, worker_id))
        app_info.add_immutable_value_metric("version", version)
        app_info.add_immutable_value_metric("commit-id", commit_id)
        app_info.add_immutable_value_metric("start-time-ms", float(self.registry.now_ms()))

    def group(self, name: str, *tags: tuple[str, str]) -> MetricGroup:
        return MetricGroup(self.registry, name, tags)

    def now_ms(self) -> int:
        return self.registry.now_ms()

    def close(self) -> None:
        self.hub.remove(self.registry)


class WorkerMetrics:
    """``connect-worker-metrics`` of one worker; ``connectors`` and ``tasks`` are the worker's live
    collections (counted at each scrape)."""

    def __init__(self, metrics: ConnectMetrics, connectors: Sized, tasks: Sized) -> None:
        group = self.group = metrics.group(WORKER_GROUP)
        group.add_value_metric("connector-count", lambda now: float(len(connectors)))
        group.add_value_metric("task-count", lambda now: float(len(tasks)))
        self._connector_results = group.sensor("connector-startup-results")
        group.add_frequencies(
            self._connector_results,
            "connector-startup-failure-percentage",
            "connector-startup-success-percentage",
        )
        self._connector_attempts = _total(
            group, "connector-startup-attempts", "connector-startup-attempts-total"
        )
        self._connector_successes = _total(
            group, "connector-startup-successes", "connector-startup-success-total"
        )
        self._connector_failures = _total(
            group, "connector-startup-failures", "connector-startup-failure-total"
        )
        self._task_results = group.sensor("task-startup-results")
        group.add_frequencies(
            self._task_results, "task-startup-failure-percentage", "task-startup-success-percentage"
        )
        self._task_attempts = _total(group, "task-startup-attempts", "task-startup-attempts-total")
        self._task_successes = _total(group, "task-startup-successes", "task-startup-success-total")
        self._task_failures = _total(group, "task-startup-failures", "task-startup-failure-total")

    def record_connector_startup(self, success: bool) -> None:
        self._connector_attempts.record(1.0)
        (self._connector_successes if success else self._connector_failures).record(1.0)
        self._connector_results.record(1.0 if success else 0.0)

    def record_task_startup(self, success: bool) -> None:
        self._task_attempts.record(1.0)
        (self._task_successes if success else self._task_failures).record(1.0)
        self._task_results.record(1.0 if success else 0.0)

    def close(self) -> None:
        self.group.close()


def _total(group: MetricGroup, sensor_name: str, metric: str) -> Sensor:
    sensor = group.sensor(sensor_name)
    group.add_stat(sensor, metric, CumulativeSum())
    return sensor


class ConnectorTaskCounts:
    """``connect-worker-metrics,connector=C`` for each connector with tasks on this worker.

    ``task_states`` gives, at scrape time, the state of every task this worker runs (task id -> state)."""

    def __init__(
        self, metrics: ConnectMetrics, task_states: Callable[[], dict[tuple[str, int], State | None]]
    ) -> None:
        self._metrics = metrics
        self._task_states = task_states
        self._groups: dict[str, MetricGroup] = {}

    def task_added(self, connector: str) -> None:
        if connector in self._groups:
            return
        group = self._metrics.group(WORKER_GROUP, (CONNECTOR_TAG, connector))
        group.add_value_metric("connector-total-task-count", self._counter(connector, None))
        for name, state in TASK_COUNT_STATES:
            group.add_value_metric(name, self._counter(connector, state))
        self._groups[connector] = group

    def task_removed(self, connector: str) -> None:
        """A task of ``connector`` stopped: the group goes when none of its tasks remains."""
        if any(c == connector for c, _ in self._task_states()):
            return
        group = self._groups.pop(connector, None)
        if group is not None:
            group.close()

    def _counter(self, connector: str, state: State | None) -> Callable[[int], MetricValue]:
        def count(now_ms: int) -> float:
            return float(
                sum(
                    1
                    for (c, _), s in self._task_states().items()
                    if c == connector and (state is None or s == state)
                )
            )

        return count

    def close(self) -> None:
        for group in self._groups.values():
            group.close()
        self._groups.clear()


class RebalanceMetrics:
    """``connect-worker-rebalance-metrics``; the suppliers are read at each scrape."""

    def __init__(
        self,
        metrics: ConnectMetrics,
        *,
        protocol: Callable[[], str | None],
        leader_url: Callable[[], str | None],
        generation: Callable[[], int],
    ) -> None:
        self._metrics = metrics
        group = self.group = metrics.group(REBALANCE_GROUP)
        self.rebalancing = False
        self._started_ms = 0
        self._last_completed_ms: int | None = None
        group.add_value_metric("connect-protocol", lambda now: protocol())
        group.add_value_metric("leader-name", lambda now: leader_url())
        group.add_value_metric("epoch", lambda now: float(generation()))
        group.add_value_metric("rebalancing", lambda now: 1.0 if self.rebalancing else 0.0)
        self._completed = _total(group, "completed-rebalance-count", "completed-rebalances-total")
        self._time = group.sensor("rebalance-time")
        group.add_stat(self._time, "rebalance-max-time-ms", Max())
        group.add_stat(self._time, "rebalance-avg-time-ms", Avg())
        group.add_value_metric("time-since-last-rebalance-ms", self._since_last)

    def _since_last(self, now_ms: int) -> float:
        last = self._last_completed_ms
        return math.inf if last is None else float(now_ms - last)

    def rebalance_started(self) -> None:
        self._started_ms = self._metrics.now_ms()
        self.rebalancing = True

    def rebalance_succeeded(self) -> None:
        now = self._metrics.now_ms()
        self.rebalancing = False
        self._completed.record(1.0, now)
        self._time.record(float(max(0, now - self._started_ms)), now)
        self._last_completed_ms = now

    def close(self) -> None:
        self.group.close()


class CoordinatorMetrics:
    """``connect-coordinator-metrics,client-id=I``: the size of the current assignment."""

    def __init__(
        self, metrics: ConnectMetrics, client_id: str, assignment: Callable[[], tuple[int, int] | None]
    ) -> None:
        group = self.group = metrics.group(COORDINATOR_GROUP, (CLIENT_ID_TAG, client_id))

        def size(index: int) -> Callable[[int], MetricValue]:
            def read(now_ms: int) -> float:
                held = assignment()
                return 0.0 if held is None else float(held[index])

            return read

        group.add_value_metric("assigned-connectors", size(0))
        group.add_value_metric("assigned-tasks", size(1))

    def close(self) -> None:
        self.group.close()


class ConnectorMetrics:
    """``connector-metrics,connector=C`` of one running connector (initially ``unassigned``)."""

    def __init__(
        self,
        metrics: ConnectMetrics,
        connector: str,
        *,
        connector_type: str,
        connector_class: str,
        version: str | None,
    ) -> None:
        self.state = State.UNASSIGNED
        group = self.group = metrics.group(CONNECTOR_GROUP, (CONNECTOR_TAG, connector))
        group.close()
        group.add_immutable_value_metric("connector-type", connector_type)
        group.add_immutable_value_metric("connector-class", connector_class)
        group.add_immutable_value_metric("connector-version", version)
        group.add_value_metric("status", lambda now: self.state.value.lower())

    def close(self) -> None:
        self.group.close()


class TaskMetrics:
    """``connector-task-metrics,connector=C,task=N`` of one task; ``record_state`` follows its
    reported states (``RUNNING`` or ``PAUSED`` from its target state at creation, as Java). The batch
    and commit recordings do nothing when the hub does not record."""

    def __init__(self, metrics: ConnectMetrics, connector: str, task: int, initial: State) -> None:
        self._metrics = metrics
        self._recording = metrics.hub.recording
        self.tracker = StateTracker()
        self.tracker.change_state(initial, metrics.now_ms())
        group = self.group = metrics.group(TASK_GROUP, (CONNECTOR_TAG, connector), (TASK_TAG, str(task)))
        group.close()
        group.add_value_metric("status", self._status)
        group.add_value_metric("running-ratio", lambda now: self.tracker.duration_ratio(State.RUNNING, now))
        group.add_value_metric("pause-ratio", lambda now: self.tracker.duration_ratio(State.PAUSED, now))
        self._commit_time = group.sensor("commit-time")
        group.add_stat(self._commit_time, "offset-commit-max-time-ms", Max())
        group.add_stat(self._commit_time, "offset-commit-avg-time-ms", Avg())
        self._batch_size = group.sensor("batch-size")
        group.add_stat(self._batch_size, "batch-size-max", Max())
        group.add_stat(self._batch_size, "batch-size-avg", Avg())
        self._commits = group.sensor("offset-commit-completion")
        group.add_frequencies(
            self._commits, "offset-commit-failure-percentage", "offset-commit-success-percentage"
        )

    def _status(self, now_ms: int) -> str | None:
        state = self.tracker.current_state
        return None if state is None else state.value.lower()

    @property
    def state(self) -> State | None:
        return self.tracker.current_state

    def record_state(self, state: State) -> None:
        self.tracker.change_state(state, self._metrics.now_ms())

    def record_commit(self, duration_ms: float, success: bool) -> None:
        if not self._recording:
            return
        now = self._metrics.now_ms()
        if success:
            self._commit_time.record(duration_ms, now)
        self._commits.record(1.0 if success else 0.0, now)

    def record_batch(self, size: int) -> None:
        if self._recording:
            self._batch_size.record(float(size))

    def close(self) -> None:
        self.group.close()


class SourceTaskMetrics:
    """``source-task-metrics,connector=C,task=N`` of one source task (Java's ``SourceTaskMetricsGroup``);
    the recordings do nothing when the hub does not record."""

    def __init__(self, metrics: ConnectMetrics, connector: str, task: int) -> None:
        self._metrics = metrics
        self._recording = metrics.hub.recording
        group = self.group = metrics.group(
            SOURCE_TASK_GROUP, (CONNECTOR_TAG, connector), (TASK_TAG, str(task))
        )
        group.close()
        self._poll = group.sensor("source-record-poll")
        group.add_stat(self._poll, "source-record-poll-rate", Rate())
        group.add_stat(self._poll, "source-record-poll-total", CumulativeSum())
        self._write = group.sensor("source-record-write")
        group.add_stat(self._write, "source-record-write-rate", Rate())
        group.add_stat(self._write, "source-record-write-total", CumulativeSum())
        self._poll_time = group.sensor("poll-batch-time")
        group.add_stat(self._poll_time, "poll-batch-max-time-ms", Max())
        group.add_stat(self._poll_time, "poll-batch-avg-time-ms", Avg())
        self._active = group.sensor("source-record-active-count")
        group.add_stat(self._active, "source-record-active-count", Value())
        group.add_stat(self._active, "source-record-active-count-max", Max())
        group.add_stat(self._active, "source-record-active-count-avg", Avg())
        self.active_records = 0

    def record_poll(self, batch_size: int, duration_ms: float) -> None:
        if not self._recording:
            return
        now = self._metrics.now_ms()
        self._poll.record(float(batch_size), now)
        self._poll_time.record(duration_ms, now)
        self.active_records += batch_size
        self._active.record(float(self.active_records), now)

    def record_write(self, record_count: int, skipped: int) -> None:
        """``record_count`` records of a batch are done (written or skipped), ``skipped`` of them not written."""
        if not self._recording:
            return
        now = self._metrics.now_ms()
        self._write.record(float(record_count - skipped), now)
        self.active_records = max(0, self.active_records - record_count)
        self._active.record(float(self.active_records), now)

    def close(self) -> None:
        self.group.close()
