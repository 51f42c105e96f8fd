"""The Prometheus rules and the Grafana dashboard shipped for pull mode, checked against what is written.

promtool (Debian's prometheus package, which ./dev installs) checks the rules and runs their test cases;
every rocm_fleet_* metric a rule or a dashboard query reads must be one that the drift writer or the pull
role's interval textfile emits, so a renamed metric cannot leave an alert that never fires.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import jinja2
import pytest
import yaml

from rocm_fleet.drift import AppliedWaiver, CheckResult, DriftReport, HostResult, RunInfo
from rocm_fleet.drift.writers.prometheus import render_prometheus

REPO = Path(__file__).resolve().parents[3]
RULES = REPO / "files" / "prometheus" / "rocm-fleet.rules.yml"
RULE_TESTS = REPO / "files" / "prometheus" / "rocm-fleet.rules.test.yml"
DASHBOARD = REPO / "files" / "grafana" / "rocm-fleet.dashboard.json"
PULL_TEXTFILE = REPO / "roles" / "pull" / "templates" / "rocm_fleet_pull.prom.j2"
METRIC = re.compile(r"\brocm_fleet_[a-z_]+\b")


def promtool(*args: str) -> subprocess.CompletedProcess:
    binary = shutil.which("promtool")
    if not binary:
        pytest.fail("promtool is missing: ./dev setup installs Debian's prometheus package, which has it")
    return subprocess.run([binary, *args], cwd=RULES.parent, capture_output=True, text=True, timeout=120)


def every_status_report() -> DriftReport:
    """A report with every host status and a failed, an unknown, a warning and a waived check."""
    waiver = AppliedWaiver("vendor RMA", "2099-12-31", "h-waived")
    return DriftReport(
        run=RunInfo(started="2026-01-01T00:00:00+00:00", finished="2026-01-01T00:01:00+00:00", inventory="inv",
                    command="rocm-fleet drift", rocm_fleet_version="0.1.0"),
        hosts={
            "h-ok": HostResult(checks=[CheckResult("ROCM-GPU-001", "GPUs", "pass")]),
            "h-drift": HostResult(checks=[CheckResult("ROCM-ENV-001", "profile", "fail")]),
            "h-unverified": HostResult(checks=[CheckResult("ROCM-GPU-001", "GPUs", "unknown")]),
            "h-warn": HostResult(checks=[CheckResult("ROCM-ACCESS-003", "members", "warn")]),
            "h-waived": HostResult(checks=[CheckResult("ROCM-FW-001", "firmware", "waived", waiver=waiver)]),
            "h-down": HostResult.unreachable("ssh: timed out"),
            "h-error": HostResult(error="task failed"),
        },
    )


def emitted_metrics() -> set[str]:
    text = render_prometheus(every_status_report())
    text += jinja2.Template(PULL_TEXTFILE.read_text()).render(pull_interval_seconds=3600)
    return {line.split("{")[0].split()[0] for line in text.splitlines() if line and not line.startswith("#")}


def rule_expressions() -> dict[str, str]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return {rule["alert"]: rule["expr"] for group in groups for rule in group["rules"]}


def dashboard_expressions() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [target["expr"] for panel in panels for target in panel.get("targets", [])]


def test_promtool_accepts_the_rules():
    result = promtool("check", "rules", str(RULES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 3 rules found" in result.stdout


def test_promtool_rule_tests_pass():
    result = promtool("test", "rules", str(RULE_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_rule_tests_fail_on_a_wrong_expectation(tmp_path):
    """The test cases can fail: the same file expecting the drifted host's alert on the compliant one."""
    shutil.copy(RULES, tmp_path / RULES.name)
    wrong = RULE_TESTS.read_text().replace("host: gpu-02, instance", "host: gpu-01, instance", 1)
    assert wrong != RULE_TESTS.read_text()
    (tmp_path / RULE_TESTS.name).write_text(wrong)
    result = subprocess.run([shutil.which("promtool") or "promtool", "test", "rules", RULE_TESTS.name],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and "FAILED" in result.stdout + result.stderr


def test_the_rules_cover_the_three_alerts_of_pull_mode():
    expressions = rule_expressions()
    assert set(expressions) == {"RocmFleetHostNotCompliant", "RocmFleetCheckFailed", "RocmFleetReportStale"}
    assert "rocm_fleet_pull_interval_seconds" in expressions["RocmFleetReportStale"]


@pytest.mark.parametrize("source", ["rules", "dashboard"])
def test_every_queried_metric_is_written(source):
    expressions = list(rule_expressions().values()) if source == "rules" else dashboard_expressions()
    assert expressions
    queried = {name for expression in expressions for name in METRIC.findall(expression)}
    assert queried, expressions
    assert queried - emitted_metrics() == set()


def test_the_dashboard_lists_the_firing_alerts_of_the_rules():
    assert 'ALERTS{alertstate="firing", alertname=~"RocmFleet.*"}' in dashboard_expressions()
    assert all(name.startswith("RocmFleet") for name in rule_expressions())


def test_the_metric_check_sees_a_metric_nobody_writes():
    assert METRIC.findall("rocm_fleet_host_compliant_total == 0") == ["rocm_fleet_host_compliant_total"]
    assert "rocm_fleet_host_compliant_total" not in emitted_metrics()
