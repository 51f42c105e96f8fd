"""engine.collect's contract with ansible-runner: what it passes, and what it makes of a run without results."""

from __future__ import annotations

import types

import ansible_runner
import pytest

from rocm_fleet.drift import engine


@pytest.fixture
def runs(monkeypatch, tmp_path):
    calls = []

    def run(**options):
        calls.append(options)
        return types.SimpleNamespace(rc=0, stdout=None)

    monkeypatch.setattr(ansible_runner, "run", run)
    monkeypatch.setenv("ROCM_FLEET_FACT_CACHE", "none")
    monkeypatch.setenv("ROCM_FLEET_STATE_CACHE", "none")
    return calls


def test_the_drift_run_turns_set_stats_off_and_runs_the_drift_playbook(runs, tmp_path):
    (tmp_path / "hosts.yml").write_text("all:\n  hosts:\n    gpu-01:\n    gpu-02:\n")
    report, groups = engine.collect(str(tmp_path / "hosts.yml"), None, progress=lambda line: None)
    [options] = runs
    # The report is built from each host's result; the playbook's set_stats summary has no reader here.
    assert options["envvars"]["ROCM_FLEET_DRIFT_SET_STATS"] == "false"
    assert options["playbook"] == engine.PLAYBOOK and options["fact_cache_type"] == "none"
    assert sorted(groups) == ["gpu-01", "gpu-02"]
    # No host result and rc 0: every host is reported as not checked, none as compliant.
    assert set(report.hosts) == {"gpu-01", "gpu-02"}
    assert all(result.status != "compliant" for result in report.hosts.values())
