"""The alert rules in deploy/prometheus: promtool accepts them and the scrape config loading them, their
unit tests (pyconnect-alerts.test.yml) pass, and every condition code of pyconnect.conditions has an
alert of its own aggregated over the workers, with a catch-all for codes added later."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from pyconnect.conditions import CODES
from pyconnect.metrics import flow_status
from tests.promtool import promtool

PROMETHEUS = Path(__file__).resolve().parents[3] / "deploy" / "prometheus"
RULES = PROMETHEUS / "pyconnect-alerts.yml"
BY = "flow, source, target, code, cluster, severity"
_CODE_RULE = re.compile(
    r"- alert: (\w+)\n\s+expr: max by \("
    + re.escape(BY)
    + r'\) \(pyconnect_mirror_condition\{code="(\w+)"\}\)\n'
)
_CATCH_ALL = re.compile(
    r"- alert: PyconnectMirrorCondition\n\s+expr: max by \("
    + re.escape(BY)
    + r'\) \(pyconnect_mirror_condition\{code!~"([\w|]+)"\}\)\n'
)


def run_promtool(*args: str) -> str:
    done = subprocess.run([promtool(), *args], cwd=PROMETHEUS, capture_output=True, timeout=60, check=False)
    output = (done.stdout + done.stderr).decode(errors="replace")
    assert done.returncode == 0, output
    return output


def test_the_rules_and_the_config_loading_them_are_valid() -> None:
    assert "SUCCESS" in run_promtool("check", "rules", RULES.name)
    assert "1 rule files found" in run_promtool("check", "config", "prometheus.yml")


def test_the_rules_unit_tests_pass() -> None:
    assert "SUCCESS" in run_promtool("test", "rules", "pyconnect-alerts.test.yml")


def camel(code: str) -> str:
    return "".join(part.capitalize() for part in code.split("_"))


def test_every_condition_code_has_its_alert_and_the_rest_the_catch_all() -> None:
    text = RULES.read_text()
    rules = _CODE_RULE.findall(text)
    assert rules, "no per-code rule found"
    by_code = {code: alert for alert, code in rules}
    assert len(by_code) == len(rules), rules
    assert set(by_code) == set(CODES)
    assert all(alert == "PyconnectMirror" + camel(code) for code, alert in by_code.items())
    (excluded,) = _CATCH_ALL.findall(text)
    assert set(excluded.split("|")) == set(by_code)
    assert text.count("- alert: ") == len(rules) + 1 + 3


def test_the_rules_query_only_series_that_are_exported() -> None:
    exported = {v for k, v in vars(flow_status).items() if k.isupper() and isinstance(v, str)}
    used = set(re.findall(r"pyconnect_mirror_\w+", RULES.read_text()))
    assert used and used <= exported, used - exported
