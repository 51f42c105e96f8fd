"""The workload_smoke_verdict filter: the onboard role's judgement of the smoke test, and its documentation."""

import inspect
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from ansible_collections.rocm_fleet.core.plugins.filter.workload_smoke import FilterModule, workload_smoke_verdict

REPO = Path(__file__).resolve().parents[4]
# Printed by files/smoke/rocm_fleet_gpu_smoke.py on the development machine, torch 2.13.0+cpu.
CPU_ONLY = (REPO / "tests" / "fixtures" / "generated" / "workload-smoke" / "cpu-vm_torch-2.13.0-cpu.json").read_text()


def test_the_filter_judges_a_registered_command_result_or_its_stdout():
    assert FilterModule().filters() == {"workload_smoke_verdict": workload_smoke_verdict}
    run = {"rc": 0, "stdout": CPU_ONLY, "stderr": "", "changed": False}
    for given in (run, CPU_ONLY):
        verdict = workload_smoke_verdict(given, 8, "gfx942")
        assert (verdict["status"], verdict["reason"]) == (
            "fail", "PyTorch sees no GPU (torch 2.13.0+cpu, a CPU-only build)")
    timed_out = workload_smoke_verdict({"rc": 124, "stdout": "", "stderr": ""}, 8, [], timeout=300)
    assert timed_out["reason"].startswith("the smoke test did not finish within 300 s")


@pytest.mark.parametrize("bad", [None, 3, ["x"]])
def test_anything_but_a_result_or_text_is_a_filter_error(bad):
    with pytest.raises(AnsibleFilterError, match="command result"):
        workload_smoke_verdict(bad, 8)


def test_a_count_that_is_no_number_is_a_filter_error():
    with pytest.raises(AnsibleFilterError, match="expected_count"):
        workload_smoke_verdict(CPU_ONLY, "eight")


def test_the_documentation_names_the_filter_and_its_arguments():
    doc = yaml.safe_load((REPO / "plugins" / "filter" / "workload_smoke_verdict.yml").read_text())["DOCUMENTATION"]
    assert doc["name"] == "workload_smoke_verdict"
    parameters = list(inspect.signature(workload_smoke_verdict).parameters)
    assert list(doc["options"]) == ["_input", *parameters[1:]]
    assert doc["positional"] == "_input, expected_count, expected_archs"
