"""Which holds and locks block a run: removals (apt holds only), another version, a package kept out."""

from __future__ import annotations

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.package_locks import blocking_locks, lock_problem

DKMS_GLOB = "1:6.16.13.30300300-*"
LEGACY = ["rocm-core7.2.3", "hip-runtime-amd7.2.3", "rocm-core", "libdrm-amdgpu1"]


def hold(name, version="1", installed=True):
    return {"name": name, "version": version if installed else None, "installed": installed, "kind": "hold"}


def names(problems):
    return [problem["name"] for problem in problems]


@pytest.mark.parametrize("held", ["rocm-core7.2.3", "hip-runtime-amd7.2.3"])
def test_a_hold_on_a_release_the_run_removes_blocks_it(held):
    problems = blocking_locks([hold(held)], removes=["rocm-core7.2.3"], installed=LEGACY)
    assert names(problems) == [held]
    assert problems[0]["release"] == f"apt-mark unhold {held}"
    assert "removes rocm-core7.2.3" in problems[0]["reason"]


def test_holds_outside_what_the_run_changes_block_nothing():
    locks = [hold("libdrm-amdgpu1"), hold("rocm-core10.1"), hold("openssh-server")]
    assert blocking_locks(locks, removes=["rocm-core7.2.3"], wanted={"rocm-core10.1": ""}, installed=LEGACY) == []


def test_a_dnf_lock_never_blocks_a_removal():
    lock = {"name": "rocm-core7.2.3", "version": "0:7.2.3.70203-1.el9", "kind": "lock"}
    assert blocking_locks([lock], removes=["rocm-core7.2.3"], installed=LEGACY) == []


def test_a_hold_on_a_package_not_installed_keeps_the_install_out():
    problems = blocking_locks([hold("amdrocm-sysdeps10.1", installed=False)], wanted={"amdrocm-sysdeps10.1": ""})
    assert "keeps from being installed" in problems[0]["reason"]


@pytest.mark.parametrize(
    ("lock", "moves", "blocks"),
    [
        (hold("amdgpu-dkms", "1:6.12.12.60401-2164967.24.04"), True, True),
        (hold("amdgpu-dkms", "1:6.16.13.30300300-2327507.24.04"), False, False),
        (hold("amdgpu-dkms-firmware", "1:6.12.12.60401-2164967.24.04"), True, True),
        (hold("amdgpu-dkms-firmware"), False, False),
        ({"name": "amdgpu-dkms", "version": "1:6.12.12-2164967.el9", "kind": "lock"}, True, True),
        ({"name": "amdgpu-dkms", "version": "1:6.16.13.30300300-2327507.el9", "kind": "lock"}, True, False),
        ({"name": "amdgpu-dkms-firmware", "version": "1:6.12.12-2164967.el9", "kind": "lock"}, True, True),
        ({"name": "amdgpu-dkms", "version": None, "kind": "exclude"}, True, True),
        ({"name": "amdgpu-dkms", "version": "1:6.12.12-2164967.el9", "kind": "exclude"}, True, False),
        ({"name": "amdgpu-*", "version": "1:6.12.12-2164967.el9", "kind": "lock"}, True, True),
    ],
)
def test_a_lock_on_the_driver_blocks_only_a_move_to_another_version(lock, moves, blocks):
    problems = blocking_locks([lock], wanted={"amdgpu-dkms": DKMS_GLOB}, dkms_moves=moves)
    assert bool(problems) is blocks, problems


def test_an_exclusion_of_every_version_blocks_a_release_package():
    lock = {"name": "amdrocm-*", "version": None, "kind": "exclude"}
    assert names(blocking_locks([lock], wanted={"amdrocm-sysdeps10.1": ""})) == ["amdrocm-*"]


def test_the_message_names_the_host_each_lock_why_and_how_to_release_it():
    problems = blocking_locks([hold("rocm-core7.2.3"), {"name": "amdgpu-dkms", "version": "1:6.12.12-1.el9",
                                                         "kind": "lock"}],
                              removes=["rocm-core7.2.3"], wanted={"amdgpu-dkms": DKMS_GLOB}, installed=LEGACY,
                              dkms_moves=True)  # fmt: skip
    message = lock_problem("gpu-07", problems)
    assert message.startswith("gpu-07: 2 package holds or version locks would block this run")
    assert "apt-mark hold on rocm-core7.2.3" in message and "release it: apt-mark unhold rocm-core7.2.3" in message
    assert "dnf versionlock on amdgpu-dkms" in message and "release it: dnf versionlock delete amdgpu-dkms" in message
    assert lock_problem("gpu-07", []) is None


def zypper(name, version=None):
    return {"name": name, "version": version, "kind": "zypper"}


def test_a_zypper_lock_on_a_release_the_run_removes_blocks_it_and_names_removelock():
    problems = blocking_locks([zypper("rocm-core7.2.3")], removes=["rocm-core7.2.3"], installed=LEGACY)
    assert names(problems) == ["rocm-core7.2.3"]
    assert problems[0]["release"] == "zypper removelock rocm-core7.2.3"


def test_a_zypper_lock_on_a_package_not_installed_keeps_the_install_out():
    problems = blocking_locks([zypper("amdrocm*")], wanted={"amdrocm10.1-gfx90a": ""}, installed=LEGACY)
    assert "keeps from being installed" in problems[0]["reason"]
    assert blocking_locks([zypper("amdrocm*")], wanted={"amdrocm10.1-gfx90a": ""},
                          installed=["amdrocm10.1-gfx90a"]) == []  # fmt: skip


@pytest.mark.parametrize("version", [None, "< 6.14"])
def test_a_zypper_lock_on_amdgpu_dkms_blocks_its_move_whatever_its_constraint(version):
    lock = zypper("amdgpu-dkms", version)
    moving = blocking_locks([lock], wanted={"amdgpu-dkms": DKMS_GLOB}, installed=["amdgpu-dkms"], dkms_moves=True)
    assert "moves amdgpu-dkms" in moving[0]["reason"]
    assert blocking_locks([lock], wanted={"amdgpu-dkms": DKMS_GLOB}, installed=["amdgpu-dkms"]) == []
