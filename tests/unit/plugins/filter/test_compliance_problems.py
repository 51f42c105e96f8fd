"""compliance_problems: the results that make a host differ, shared by the compliance role and onboarding."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.rocm_fleet.core.plugins.filter.compliance import FilterModule

problems = FilterModule().filters()["compliance_problems"]


def test_failed_unreadable_and_unknown_results_are_problems_passed_skipped_and_warnings_are_not():
    results = [
        {"id": "ROCM-ENV-001", "status": "pass", "message": "as expected"},
        {"id": "ROCM-GPU-001", "status": "fail", "message": "1 GPU, expected 2"},
        {"id": "ROCM-TOPO-001", "status": "skipped", "message": "not measurable while amdgpu is not loaded"},
        {"id": "ROCM-SYSCTL-001", "status": "error", "message": "cannot read /proc/sys/x"},
        {"id": "ROCM-HEALTH-003", "status": "unknown", "message": "GPU 0: umc_err_count: EINVAL"},
        {"id": "ROCM-ACCESS-006", "status": "warn", "message": "guest is in render, not listed"},
    ]
    assert problems(results) == [
        "ROCM-GPU-001 fail: 1 GPU, expected 2",
        "ROCM-SYSCTL-001 error: cannot read /proc/sys/x",
        "ROCM-HEALTH-003 unknown: GPU 0: umc_err_count: EINVAL",
    ]


def test_anything_but_a_results_list_is_refused():
    with pytest.raises(AnsibleFilterError, match="results list"):
        problems({"results": []})


def test_an_unknown_health_reading_is_a_problem_a_warning_is_not():
    results = [
        {"id": "ROCM-HEALTH-003", "status": "unknown", "message": "GPU 0 (0000:05:00.0): no uncorrectable count"},
        {"id": "ROCM-KERN-001", "status": "warn", "message": "installed kernel 6.8.0-61 (not the default): ..."},
    ]
    assert problems(results) == ["ROCM-HEALTH-003 unknown: GPU 0 (0000:05:00.0): no uncorrectable count"]
