"""A Connect group whose rounds a test decides, for driving the real herder without Kafka."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from pyconnect.config.worker import WorkerConfig
from pyconnect.herder.herder import Herder
from pyconnect.herder.modes import DISTRIBUTED, HerderMode
from pyconnect.herder.worker_coordinator import RebalanceOutcome
from pyconnect.protocol.connect_assignment import ExtendedAssignment
from pyconnect.protocol.connect_metadata import ConnectProtocolCompatibility
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores import MemoryConfigStore, MemoryOffsetStore, MemoryStatusStore
from pyconnect.worker.plugins import PluginRegistry
from pyconnect.worker.status import RecordingReporter
from pyconnect.worker.worker import Worker

H = TypeVar("H", bound=Herder)

LEADER_URL = "http://leader:1/"


class ScriptedMembership:
    """Each round returns the next ``play``-ed role; while ``serving`` it answers further rounds
    itself with the last role (as a group whose other members never change anything would).

    Rounds hold nothing: the herder runs no connectors or tasks of its own.
    """

    def __init__(self, herder: Any, *, serving: bool = False, leader: bool = True) -> None:
        self.herder = herder
        self._serving = serving
        self._changed = asyncio.Event()
        self.leader = leader
        self.lost = False
        self.holding: Any = None
        self.client_id = "connect-scripted"
        self.wakeup = asyncio.Event()
        self._plays: asyncio.Queue[tuple[bool, bool]] = asyncio.Queue()
        self._rejoin = True
        self._generation = 0

    @property
    def serving(self) -> bool:
        return self._serving

    @serving.setter
    def serving(self, value: bool) -> None:
        """Switching serving on also answers a round the herder is already waiting in."""
        self._serving = value
        self._changed.set()

    def rejoin_needed(self) -> bool:
        return self._rejoin

    def may_commit(self, task: ConnectorTaskId) -> bool:
        return True

    def owner_url(self, item: str | ConnectorTaskId) -> str | None:
        return None

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def drop_assignment(self, reason: str) -> None:
        self.holding = None

    def play(self, *, leader: bool, revoked: bool = False) -> None:
        """The next round makes this worker leader or follower (``revoked``: it also lost work)."""
        self._plays.put_nowait((leader, revoked))
        self._rejoin = True
        self._changed.set()
        self.wakeup.set()

    async def rebalance(self) -> RebalanceOutcome:
        while self._plays.empty() and not self._serving:
            self._changed.clear()
            await self._changed.wait()
        if self._plays.empty():
            leader, revoked = self.leader, False
        else:
            leader, revoked = self._plays.get_nowait()
        self.leader = leader
        self._rejoin = False
        self.wakeup.clear()
        self._generation += 1
        offset = self.herder.config_store.offset
        assignment = ExtendedAssignment(
            0,
            "leader",
            LEADER_URL,
            offset,
            revoked_connectors=("MirrorHeartbeatConnector",) if revoked else (),
        )
        self.holding = ExtendedAssignment(0, "leader", LEADER_URL, offset)
        return RebalanceOutcome(
            self._generation,
            "me",
            "me" if leader else "other",
            LEADER_URL,
            ConnectProtocolCompatibility.SESSIONED,
            leader,
            assignment,
            self.holding,
        )


def worker_config(**overrides: str) -> WorkerConfig:
    """A real distributed worker config (every default as Java's) for a herder over in-memory stores:
    the Kafka it names is never reached."""
    return WorkerConfig(
        {
            "bootstrap.servers": "unused:9092",
            "group.id": "unit",
            "config.storage.topic": "unit-configs",
            "offset.storage.topic": "unit-offsets",
            "status.storage.topic": "unit-status",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            **overrides,
        }
    )


async def scripted_herder(
    config: WorkerConfig | None = None,
    *,
    configs: MemoryConfigStore | None = None,
    mode: HerderMode = DISTRIBUTED,
    worker_id: str = "127.0.0.1:1",
    herder_type: type[H] = Herder,  # type: ignore[assignment]
    serving: bool = False,
) -> H:
    """A started real herder over in-memory stores whose group is a :class:`ScriptedMembership`
    (``serving``: it answers every round itself, as leader). Stop it with :func:`stop_herder`."""
    config = config or worker_config()
    offsets = MemoryOffsetStore()
    worker = Worker(worker_id, config, PluginRegistry.from_entry_points(), offsets, RecordingReporter())
    herder = herder_type(
        config,
        worker=worker,
        config_store=configs or MemoryConfigStore(),
        status_store=MemoryStatusStore(),
        membership_factory=lambda h: ScriptedMembership(h, serving=serving),
        rest_url="http://127.0.0.1:1/",
        worker_id=worker_id,
        kafka_cluster_id="test-cluster",
        mode=mode,
    )
    await offsets.start()
    await herder.start()
    return herder


async def stop_herder(herder: Herder) -> None:
    await herder.stop()
    await herder.worker.offset_store.stop()


async def play_round(herder: Herder, *, leader: bool, revoked: bool = False) -> None:
    """One completed round as the group would report it; unless it ``revoked`` work (the herder then
    rejoins), wait until the herder applied it and finished any configuration it started."""
    membership = herder.membership
    assert isinstance(membership, ScriptedMembership)
    generation = herder.generation + 1
    membership.play(leader=leader, revoked=revoked)
    deadline = asyncio.get_running_loop().time() + 5
    while herder.generation < generation:
        assert asyncio.get_running_loop().time() < deadline, "the round was not applied"
        await asyncio.sleep(0.005)
    if revoked:
        return
    serving, membership.serving = membership.serving, True
    try:
        await herder.settled()
        await herder.configured()
        await herder.settled()
    finally:
        membership.serving = serving
