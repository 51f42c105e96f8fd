"""docs/compliance-controls.md lists exactly the check IDs the roles' desired state and the GPU checks declare."""

from __future__ import annotations

import re
from pathlib import Path

from ansible_collections.rocm_fleet.core.plugins.action.host_compliance import without_skipped_gpu_checks
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance_gpu import GPU_CHECKS as GPU_CHECK_TITLES

REPO = Path(__file__).resolve().parents[3]
CHECK_ID = re.compile(r"ROCM-[A-Z]+-\d{3}")
# key of gpu_expect -> check ID of the GPU class checks
GPU_CHECKS = {key: check_id for key, (check_id, _title) in GPU_CHECK_TITLES.items()}


def declared_ids() -> set[str]:
    ids = set(GPU_CHECKS.values())
    for path in (REPO / "roles").glob("*/templates/desired_state.json.j2"):
        ids |= set(CHECK_ID.findall(path.read_text()))
    return ids


def test_every_declared_check_is_documented_and_nothing_else():
    table = (REPO / "docs/compliance-controls.md").read_text()
    documented = set(re.findall(r"^\| (ROCM-[A-Z]+-\d{3}) \|", table, re.MULTILINE))
    assert documented == declared_ids()


def test_every_gpu_check_can_be_skipped_by_its_id():
    assert len(GPU_CHECKS) == 8
    expect = dict.fromkeys(GPU_CHECKS, "x")
    for key, check_id in GPU_CHECKS.items():
        assert set(without_skipped_gpu_checks(expect, {check_id})) == set(GPU_CHECKS) - {key}
