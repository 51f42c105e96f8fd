"""docs/compliance-controls.md lists exactly the check IDs the roles' desired state and the GPU checks declare."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
CHECK_ID = re.compile(r"ROCM-[A-Z]+-\d{3}")
# key -> check ID of the GPU class checks, read from the module code (this directory's conftest owns the
# collection loader, so the module_utils are read, not imported).
GPU_CODE = (REPO / "plugins/module_utils/compliance_gpu.py").read_text()
GPU_CHECKS = dict(re.findall(r'^    "(\w+)": \("(ROCM-[A-Z]+-\d{3})"', GPU_CODE, re.M))


def declared_ids() -> set[str]:
    ids = set(GPU_CHECKS.values())
    for path in (REPO / "roles").glob("*/templates/desired_state.json.j2"):
        ids |= set(CHECK_ID.findall(path.read_text()))
    return ids


def test_every_declared_check_is_documented_and_nothing_else():
    table = (REPO / "docs/compliance-controls.md").read_text()
    documented = set(re.findall(r"^\| (ROCM-[A-Z]+-\d{3}) \|", table, re.MULTILINE))
    assert documented == declared_ids()


def test_the_compliance_role_maps_every_gpu_check_it_can_skip():
    text = (REPO / "roles/compliance/vars/main.yml").read_text()
    assert len(GPU_CHECKS) == 8
    for key, check_id in GPU_CHECKS.items():
        assert f"  {key}: {check_id}" in text
