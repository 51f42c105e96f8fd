"""The onboarding report filters: one host's summary and the run's table."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.rocm_fleet.core.plugins.filter.onboard_report import onboard_summary, onboard_table

ONBOARDED = {
    "host": "gpu-07", "onboarded": True, "gate": None, "reason": None,
    "passed_gates": ["discover", "preflight", "provision", "reboot", "verify", "burnin"],
    "burnin": {"status": "skipped", "message": "burn-in skipped: none of rocm-validation-suite installed"},
    "started_at": "2026-01-05T10:00:00+00:00", "finished_at": "2026-01-05T10:04:10+00:00",
}
REFUSED = {
    "host": "gpu-08", "onboarded": False, "gate": "preflight",
    "reason": (
        "host gpu-08: not supported\n"
        "  - inventory: inventory expects GPU class mi300x, the host has 1 x RX 7900 XTX\n"
    ),
    "passed_gates": ["discover"], "burnin": None,
    "started_at": "2026-01-05T10:00:00+00:00", "finished_at": "2026-01-05T10:00:20+00:00",
}
COMPLIANCE = {
    "summary": {"pass": 40, "fail": 1, "error": 0, "total": 41},
    "results": [
        {"id": "ROCM-ENV-001", "status": "pass", "message": ""},
        {"id": "ROCM-KRN-001", "status": "fail", "message": "boot parameters not active: iommu=pt"},
    ],
}


def test_summary_of_an_onboarded_host_lists_gates_burnin_and_the_checks_that_failed():
    lines = onboard_summary(ONBOARDED, COMPLIANCE)
    assert lines[0] == "gpu-07: onboarded"
    assert "gates passed: discover, preflight, provision, reboot, verify, burnin" in lines
    assert "burn-in: burn-in skipped: none of rocm-validation-suite installed" in lines
    assert "compliance: 40 passed, 1 failed, 0 errors, 0 unknown, 0 warnings, 0 skipped of 41 checks" in lines
    assert "  ROCM-KRN-001 fail: boot parameters not active: iommu=pt" in lines
    assert not any("ROCM-ENV-001" in line for line in lines)


def test_summary_of_a_refused_host_names_the_gate_and_reason_without_compliance():
    lines = onboard_summary(REFUSED, None)
    assert lines[0] == "gpu-08: NOT onboarded"
    assert lines[1].startswith("stopped at gate preflight: host gpu-08: not supported")
    assert "gates passed: discover" in lines
    assert not any(line.startswith("compliance") for line in lines)


def test_table_lists_onboarded_hosts_first_and_puts_a_multiline_reason_on_one_row():
    lines = onboard_table([REFUSED, ONBOARDED])
    assert lines[0].split() == ["host", "outcome", "gate:", "reason"]
    assert lines[1].split() == ["gpu-07", "onboarded"]
    assert lines[2].startswith(
        "gpu-08  NOT onboarded  preflight: host gpu-08: not supported; - inventory: inventory expects GPU class mi300x"
    )
    assert lines[-1] == "1 of 2 hosts onboarded"
    assert len(lines) == 4


@pytest.mark.parametrize("bad", [[{"host": "x"}], "gpu-07", [None]])
def test_table_refuses_what_is_not_a_list_of_results(bad):
    with pytest.raises(AnsibleFilterError):
        onboard_table(bad)


def test_summary_refuses_a_result_without_its_keys():
    with pytest.raises(AnsibleFilterError, match="onboard_result"):
        onboard_summary({"host": "gpu-07"})
