"""docs/compliance-controls.md lists exactly the check IDs the roles' managed objects and the GPU checks declare."""

from __future__ import annotations

import re
from pathlib import Path

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.health import HEALTH_CHECKS
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.compliance.gpu_class import GPU_CHECKS
from fleet_testing.roles import provisioning_roles

REPO = Path(__file__).resolve().parents[3]
CHECK_ID = r"ROCM-[A-Z]+-\d{3}"
# The ID fields of a managed object, as YAML (id: ROCM-X-001, file_id: ...) or as Jinja dict literals ('id': '...').
ID_FIELD = re.compile(rf"""(?:^\s*(?:-\s+)?(?:id|file_id):\s*["']?|['"](?:id|file_id)['"]:\s*['"])({CHECK_ID})\b""",
                      re.MULTILINE)


def managed_ids(text: str) -> set[str]:
    return set(ID_FIELD.findall(text))


def declared_ids() -> set[str]:
    ids = {check_id for check_id, _title in GPU_CHECKS.values()} | set(HEALTH_CHECKS)
    for path in (REPO / "roles").glob("*/vars/main.yml"):
        ids |= managed_ids(path.read_text())
    return ids


def test_the_id_fields_are_read_in_both_forms_and_nothing_else():
    text = (
        "  - kind: sysctl\n    id: ROCM-SYSCTL-001\n    file_id: ROCM-SYSCTL-002\n"
        "  {%- set _ = objects.append({'kind': 'package', 'id': 'ROCM-PKG-002'}) -%}\n"
        "  # Whether they exist is the driver check's finding (ROCM-DRV-001), not this one's.\n"
        "    title: see ROCM-GPU-001\n"
    )
    assert managed_ids(text) == {"ROCM-SYSCTL-001", "ROCM-SYSCTL-002", "ROCM-PKG-002"}


def test_every_provisioning_role_declares_its_checks_in_its_managed_objects():
    for role in provisioning_roles():
        assert managed_ids((REPO / "roles" / role / "vars" / "main.yml").read_text()), role
    # IDs built in Jinja (one object per release) and the sysctl file's own ID count too.
    ids = declared_ids()
    assert {"ROCM-PKG-002", "ROCM-PKG-003", "ROCM-ENV-004", "ROCM-SYSCTL-002"} <= ids


def test_every_declared_check_is_documented_and_nothing_else():
    table = (REPO / "docs/compliance-controls.md").read_text()
    documented = set(re.findall(rf"^\| ({CHECK_ID}) \|", table, re.MULTILINE))
    assert documented == declared_ids()
