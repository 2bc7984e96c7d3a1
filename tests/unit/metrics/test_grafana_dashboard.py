"""The Grafana dashboard's shape (deploy/grafana/pyconnect-mirror.json): panels with unique ids that do
not overlap, every query on the dashboard's data source, the flow status and conditions tables, and
only ``pyconnect_mirror_*`` series that pyconnect.metrics.flow_status exports (whether each query
answers on real series is tests/integration/test_grafana_dashboard.py's and test_prometheus_alerts.py's)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pyconnect.metrics import flow_status

DASHBOARD = Path(__file__).resolve().parents[3] / "deploy" / "grafana" / "pyconnect-mirror.json"
EXPORTED = {value for name, value in vars(flow_status).items() if name.isupper() and isinstance(value, str)}


def panels() -> list[dict[str, Any]]:
    return list(json.loads(DASHBOARD.read_text())["panels"])


def test_panels_have_unique_ids_and_do_not_overlap() -> None:
    found = panels()
    assert len({p["id"] for p in found}) == len(found)
    cells: dict[tuple[int, int], str] = {}
    for panel in found:
        box = panel["gridPos"]
        assert box["x"] + box["w"] <= 24, panel["title"]
        for x in range(box["x"], box["x"] + box["w"]):
            for y in range(box["y"], box["y"] + box["h"]):
                assert (x, y) not in cells, (panel["title"], cells.get((x, y)))
                cells[(x, y)] = panel["title"]


def test_every_query_uses_the_dashboards_data_source() -> None:
    for panel in panels():
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert panel["targets"], panel["title"]
        assert all(t["datasource"]["uid"] == "${datasource}" for t in panel["targets"]), panel["title"]


def test_the_flow_status_and_conditions_tables_come_first() -> None:
    by_title = {p["title"]: p for p in panels()}
    status, conditions = by_title["Flow status"], by_title["Conditions"]
    assert status["gridPos"]["y"] == conditions["gridPos"]["y"] == 0
    for table in (status, conditions):
        assert table["type"] == "table"
        assert all(t.get("instant") and t.get("format") == "table" for t in table["targets"])
    (status_query,) = [t["expr"] for t in status["targets"]]
    assert "pyconnect_mirror_flow_status" in status_query and "by (flow, status)" in status_query
    queries = [t["expr"] for t in conditions["targets"]]
    assert any("pyconnect_mirror_condition)" in q for q in queries), queries
    assert all("by (flow, code, cluster, severity)" in q for q in queries), queries


def test_the_mirror_series_queried_are_the_ones_exported() -> None:
    used = {
        name
        for panel in panels()
        for target in panel["targets"]
        for name in re.findall(r"pyconnect_mirror_\w+", target["expr"])
    }
    assert used, "no pyconnect_mirror_* query"
    assert used <= EXPORTED, used - EXPORTED
