"""A host without an AMD GPU gets no GPU driver nor amdgpu repository; ROCm as packages_rocm_without_gpu says."""

from __future__ import annotations

import pytest
from fleet_testing.roles import evaluate, find_task, load_yaml, render

PACKAGES_DEFAULTS = load_yaml("packages/defaults/main.yml")
PACKAGES_VARS = load_yaml("packages/vars/main.yml")
REPO_DEFAULTS = load_yaml("repo/defaults/main.yml")


def decision(gpu_count: int) -> dict:
    return {"preflight_decision": {"gpu_count": gpu_count, "rocm_version": "6.4.1"}}


@pytest.mark.parametrize(("gpu_count", "driver"), [(0, False), (1, True), (8, True)])
def test_the_driver_follows_the_gpu_count(gpu_count, driver):
    assert render(PACKAGES_DEFAULTS["packages_amdgpu_dkms"], **decision(gpu_count)) is driver


def test_without_a_preflight_decision_the_host_counts_as_a_gpu_host():
    assert render(PACKAGES_DEFAULTS["packages_amdgpu_dkms"]) is True


@pytest.mark.parametrize(("dkms", "enabled"), [(True, True), (False, False)])
def test_the_amdgpu_repository_follows_the_driver(dkms, enabled):
    assert render(REPO_DEFAULTS["repo_amdgpu_enabled"], packages_amdgpu_dkms=dkms, **decision(4)) is enabled


def test_the_amdgpu_repository_without_the_packages_role_follows_the_gpu_count():
    assert render(REPO_DEFAULTS["repo_amdgpu_enabled"], **decision(0)) is False
    assert render(REPO_DEFAULTS["repo_amdgpu_enabled"], **decision(2)) is True


@pytest.mark.parametrize(
    ("gpu_count", "without_gpu", "wanted"),
    [(0, True, True), (0, False, False), (4, False, True), (4, True, True)],
)
def test_rocm_on_a_gpuless_host_is_a_choice(gpu_count, without_gpu, wanted):
    assert (
        render(PACKAGES_VARS["__packages_rocm_wanted"], packages_rocm_without_gpu=without_gpu, **decision(gpu_count))
        is wanted
    )


def test_the_driver_and_rocm_tasks_are_gated_by_those_decisions():
    main = load_yaml("packages/tasks/main.yml")
    imports = [task for task in main if "ansible.builtin.import_tasks" in task]
    gates = {task["ansible.builtin.import_tasks"]: task.get("when") for task in imports}
    assert gates["rocm.yml"] == gates["versions.yml"] == "__packages_rocm_wanted"
    assert evaluate(gates["driver.yml"], packages_amdgpu_dkms=False, packages_source="mirror") is False
    assert evaluate(gates["driver.yml"], packages_amdgpu_dkms=True, packages_source="mirror") is True
    assert find_task("packages/tasks/driver.yml", "Install amdgpu-dkms of the decided driver line")
