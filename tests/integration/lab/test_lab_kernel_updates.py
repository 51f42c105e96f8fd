"""Kernel updates on the lab (issue 12): the mirror serves a kernel amdgpu-dkms builds for and one it cannot.

A BAD kernel leaves mi210-01 booting its working kernel, reported with the kernel and DKMS's
reason; a GOOD one becomes the boot default only after amdgpu is installed for it, the host
reboots into it and is compliant, and a second run changes nothing. The module restores the
host (the kernels removed, GRUB's default back, a reboot into the machine's kernel).
"""

from __future__ import annotations

import json

import pytest
from fleet_testing.lab_helpers import REPO
from fleet_testing.lab_site import run_playbook
from fleet_testing.provision_lab import sudo

from rocm_fleet.lab import kernels
from rocm_fleet.lab.mirror import kernel_packages

pytestmark = pytest.mark.lab
HOST = "mi210-01"
MACHINE = kernels.machine_kernel()
GOOD, BAD = kernel_packages.lab_kernels(MACHINE)["good"], kernel_packages.lab_kernels(MACHINE)["bad"]
UPDATE = "playbooks/kernel_update.yml"


def running(lab) -> str:
    return sudo(lab, HOST, "cat /proc/sys/kernel/osrelease").strip()


def reboot(lab) -> None:
    """A reboot through the kernel role's reboot step (a marker makes it pending), as a maintenance window's."""
    sudo(lab, HOST, "mkdir -p /run/rocm-fleet/reboot-required && echo test > /run/rocm-fleet/reboot-required/lab-test")
    result = run_playbook("playbooks/reboot.yml", "-l", HOST, "-e", '{"kernel_reboot_allowed": true}')
    assert result.returncode == 0, result.tail()


@pytest.fixture(scope="module")
def kernel_host(compliant_lab, lab):
    yield lab
    packages = " ".join(f"linux-{kind}-{k}" for k in (GOOD, BAD) for kind in ("image", "headers"))
    sudo(lab, HOST, f"dpkg --purge {packages}; rm -f /etc/default/grub.d/95-rocm-fleet-default.cfg"
                    " /boot/grub/grubenv; update-grub")
    reboot(lab)
    assert running(lab) == MACHINE


def test_the_policy_refuses_the_series_amdgpu_cannot_build_for(kernel_host):
    policy = sudo(kernel_host, HOST, f"apt-cache policy linux-image-{BAD} linux-image-{GOOD}")
    bad, good = policy.split(f"linux-image-{GOOD}:")
    assert "Candidate: (none)" in bad, policy
    assert "Candidate: (none)" not in good, policy


def test_a_kernel_the_policy_refuses_stops_the_run_before_any_change(kernel_host):
    run = run_playbook(UPDATE, "-l", HOST, "-e", f"kernel_update_version={BAD}")
    assert run.returncode != 0, run.tail()
    assert f"kernel_update_version {BAD} is refused" in run.output, run.tail()
    assert run.recap[HOST]["changed"] == 0, run.changed_tasks


def test_a_kernel_amdgpu_cannot_build_for_leaves_the_working_kernel_booting(kernel_host):
    run = run_playbook(UPDATE, "-l", HOST, "-e", "packages_kernel_update_policy=free",
                       "-e", f"kernel_update_version={BAD}")
    assert run.returncode != 0, run.tail()
    assert f"{HOST}: kernel {BAD} is not made the boot default" in run.output, run.tail()
    assert f"keeps booting {MACHINE}" in run.output and "make.log" in run.output, run.tail()
    report = json.loads((REPO / "reports" / "kernel.json").read_text())
    entry = next(h for h in report["hosts"] if h["host"] == HOST)
    assert entry["outcome"] == "failed" and entry["step"] == "module", entry
    assert BAD in entry["reason"] and "Error" in entry["reason"], entry
    assert BAD not in sudo(kernel_host, HOST, "ls /boot; cat /boot/grub/grub.cfg")
    reboot(kernel_host)  # the next boot runs the working kernel
    assert running(kernel_host) == MACHINE


def test_a_kernel_amdgpu_builds_for_becomes_the_default_only_after_its_module(kernel_host):
    run = run_playbook(UPDATE, "-l", HOST, "-e", '{"kernel_reboot_allowed": true}')
    assert run.returncode == 0, run.tail()
    changed = run.changed_tasks[HOST]
    installed = next(i for i, name in enumerate(changed) if "Install the kernel image and headers" in name)
    default = next(i for i, name in enumerate(changed) if "Make the new kernel the boot default" in name)
    rebooted = next(i for i, name in enumerate(changed) if "Reboot the host" in name)
    assert installed < default < rebooted, changed
    assert running(kernel_host) == GOOD
    assert sudo(kernel_host, HOST, f"ls /lib/modules/{GOOD}/updates/dkms/ /sys/module/amdgpu >/dev/null && echo ok")
    compliance = run_playbook("playbooks/compliance.yml", "-l", HOST, "-e", "compliance_fail_on_drift=true")
    assert compliance.returncode == 0, compliance.tail()


def test_a_second_run_changes_nothing(kernel_host):
    run = run_playbook(UPDATE, "-l", HOST)
    assert run.returncode == 0, run.tail()
    assert run.recap[HOST]["changed"] == 0, run.changed_tasks
