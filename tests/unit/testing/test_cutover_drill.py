"""The cutover drill's pure parts: the delivery ledger's verdict, the kill rotation, the connectors."""

from __future__ import annotations

from pyconnect.testing.cutover_drill import KILL_STEPS, connector_configs, kill_plan
from pyconnect.testing.cutover_traffic import Ledger


def test_a_ledger_of_every_number_once_has_nothing_lost_or_duplicated() -> None:
    ledger = Ledger()
    ledger.add(0, list(range(0, 40)))
    ledger.add(0, list(range(40, 100)))
    ledger.add(1, list(range(50)))
    assert ledger.runs[0] == [(0, 99)]
    assert ledger.verdict([100, 50]) == (0, 0)


def test_gaps_are_lost_and_rereads_are_duplicates_once_per_extra_delivery() -> None:
    ledger = Ledger()
    ledger.add(0, [0, 1, 2, 5, 6])  # 3 and 4 never delivered
    ledger.add(0, [5, 6, 7, 8, 9])  # 5 and 6 again (a group resumed before its position)
    ledger.add(0, [6])  # 6 a third time
    assert ledger.verdict([10]) == (2, 3)


def test_a_partition_never_read_loses_everything_and_numbers_past_the_acknowledged_count_are_duplicates() -> (
    None
):
    ledger = Ledger()
    ledger.add(0, [0, 1, 2, 3, 4])  # 3 and 4 were never acknowledged: not a record of the drill
    assert ledger.verdict([3, 7]) == (7, 2)


def test_out_of_order_deliveries_count_like_in_order_ones() -> None:
    ledger = Ledger()
    ledger.add(0, [3, 4, 0, 1, 2, 2])
    assert ledger.verdict([5]) == (0, 1)


def test_every_second_run_is_killed_after_the_next_step_in_rotation() -> None:
    plan = kill_plan(2 * len(KILL_STEPS) + 2)
    assert plan[0::2] == [None] * (len(KILL_STEPS) + 1)
    assert plan[1::2] == [*KILL_STEPS, KILL_STEPS[0]]
    assert kill_plan(3, every=0) == [None, None, None]
    assert kill_plan(2, every=1) == [KILL_STEPS[0], KILL_STEPS[1]]
    assert "promoted" in KILL_STEPS and "audited" not in KILL_STEPS


def test_the_forward_flow_is_identity_with_offset_syncs_on_the_target_and_no_group_offset_sync() -> None:
    configs = connector_configs("a:1", "b:1", "orders", "app-.*")
    for config in configs.values():
        assert config["replication.policy.class"].endswith("IdentityReplicationPolicy")
        assert config["offset-syncs.topic.location"] == "target"
    assert configs["checkpoint"]["sync.group.offsets.enabled"] == "false"
    assert configs["checkpoint"]["groups"] == "app-.*" and configs["source"]["topics"] == "orders"
