"""Kernel updates on the lab (issues 12 and 29): playbooks/kernel_update.yml over hosts of two families.

mi210-01 runs Debian 12 (apt, GRUB's saved entry), mi300x-03 Rocky Linux 9.6 (dnf, Boot Loader Spec entries and
grubby). The mirror serves each family a kernel amdgpu-dkms builds for (GOOD) and one it cannot (BAD), in the
family's own packages (mirror/kernel_packages.py: Debian's linux-image; mirror/kernel_rpms.py: RHEL's kernel,
kernel-core and kernel-modules, whose %posttrans runs kernel-install). rx6700xt-01 is a later host of the rollout.

Rollouts of a canary batch then batches of one: a canary asked for BAD fails at the module step, keeps booting its
working kernel, has BAD removed again, and the rollout stops before the next batch. Then the canary moves to GOOD and
reboots into it, the next batch (the RHEL host, asked for BAD) fails the same way, and the rollout stops there:
rx6700xt-01 is untouched by both. Then the RHEL host moves to GOOD. The boot default is read as the lab's next boot
reads it (rocm_fleet.lab.kernelstate), right after the install step too. The module fixture restores both hosts (the
kernels removed, the distribution's boot defaults back, a reboot into the machine's kernel).
"""

from __future__ import annotations

import json

import pytest
from fleet_testing.lab_helpers import REPO
from fleet_testing.lab_site import run_playbook
from fleet_testing.provision_lab import HOSTS, overlay_inventory, sudo

from rocm_fleet.lab import kernels, kernelstate, paths, systems
from rocm_fleet.lab.mirror import kernel_packages, kernel_rpms

pytestmark = pytest.mark.lab
UPDATE = "playbooks/kernel_update.yml"
MACHINE = kernels.machine_kernel()
DEBIAN, ROCKY, LATER = "mi210-01", "mi300x-03", "rx6700xt-01"
SYSTEM = {host: systems.system(HOSTS[host].system) for host in (DEBIAN, ROCKY, LATER)}
KERNELS = {
    DEBIAN: kernel_packages.lab_kernels(MACHINE),
    ROCKY: kernel_rpms.lab_kernels(MACHINE, SYSTEM[ROCKY]),
}
GOOD = {host: kernels_of["good"] for host, kernels_of in KERNELS.items()}
BAD = {host: kernels_of["bad"] for host, kernels_of in KERNELS.items()}
# What each family's update installs, and how the test takes it away again.
INSTALLED = {
    "deb": "dpkg-query -W -f '${Package} ${db:Status-Abbrev}\\n' 'linux-image-*' | awk '$2 == \"ii\" {print $1}'",
    "rpm": "rpm -qa --qf '%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}\\n' 'kernel*'",
}
RESTORE = {
    DEBIAN: " ".join(f"linux-{kind}-{k}" for k in KERNELS[DEBIAN].values() for kind in ("image", "headers")).join(
        ("dpkg --purge ", "; rm -f /etc/default/grub.d/95-rocm-fleet-default.cfg /boot/grub/grubenv; update-grub")
    ),
    ROCKY: " ".join(f"kernel-{k} kernel-devel-{k}" for k in KERNELS[ROCKY].values()).join(
        ("for package in ", "; do rpm -q $package >/dev/null && echo $package; done | xargs -r dnf -y -q remove"
                            f"; grubby --set-default /boot/vmlinuz-{MACHINE}"
                            "; sed -i 's/^UPDATEDEFAULT=.*/UPDATEDEFAULT=yes/' /etc/sysconfig/kernel")
    ),
}


def running(lab, host: str) -> str:
    return sudo(lab, host, "cat /proc/sys/kernel/osrelease").strip()


def next_boot(host: str) -> str:
    """The kernel the host's next boot runs: its boot loader's default entry, as the lab boots it."""
    root = paths.host_dir(host) / "root"
    return kernels.booted_kernel(kernelstate.kernel_cmdline(root, boot_loader=SYSTEM[host].boot_loader))


def installed(lab, host: str) -> set[str]:
    return set(sudo(lab, host, INSTALLED[SYSTEM[host].package_format]).split())


def reboot(host: str) -> None:
    """A reboot through the kernel role's reboot step (a marker makes it pending), as a maintenance window's."""
    result = run_playbook("playbooks/reboot.yml", "-l", host, "-e", '{"kernel_reboot_allowed": true}')
    assert result.returncode == 0, result.tail()


@pytest.fixture(scope="module")
def kernel_hosts(compliant_lab, lab):
    yield lab
    for host in (DEBIAN, ROCKY):
        sudo(lab, host, RESTORE[host], timeout=300)
        sudo(lab, host, "mkdir -p /run/rocm-fleet/reboot-required && echo test > /run/rocm-fleet/reboot-required/t")
        reboot(host)
    assert {host: running(lab, host) for host in (DEBIAN, ROCKY)} == dict.fromkeys((DEBIAN, ROCKY), MACHINE)


def test_the_policy_refuses_the_series_amdgpu_cannot_build_for_on_each_family(kernel_hosts):
    policy = sudo(kernel_hosts, DEBIAN, f"apt-cache policy linux-image-{BAD[DEBIAN]} linux-image-{GOOD[DEBIAN]}")
    bad, good = policy.split(f"linux-image-{GOOD[DEBIAN]}:")
    assert "Candidate: (none)" in bad and "Candidate: (none)" not in good, policy
    # dnf.conf's excludepkgs (ROCM-KERN-004): dnf offers GOOD and not BAD.
    offered = sudo(kernel_hosts, ROCKY, "dnf -q repoquery --qf '%{VERSION}-%{RELEASE}.%{ARCH}' kernel").split()
    assert GOOD[ROCKY] in offered and BAD[ROCKY] not in offered, offered


def test_a_kernel_the_policy_refuses_stops_every_host_before_any_change(kernel_hosts, tmp_path):
    overlay = overlay_inventory(tmp_path, {host: {"kernel_update_version": BAD[host]} for host in (DEBIAN, ROCKY)})
    run = run_playbook(UPDATE, *overlay, "-l", f"{DEBIAN},{ROCKY}")
    assert run.returncode != 0, run.tail()
    assert f"kernel_update_version {BAD[ROCKY]} is refused" in run.output, run.tail()
    assert all(run.recap[host]["changed"] == 0 for host in (DEBIAN, ROCKY)), run.changed_tasks


def test_installing_a_kernel_leaves_the_next_boot_on_the_working_kernel(kernel_hosts, tmp_path):
    """The steps up to the install only: BAD is installed on the RHEL host (kernel-install ran, DKMS failed in its
    hook, which kernel-install does not fail on), and its next boot still runs the working kernel."""
    overlay = overlay_inventory(
        tmp_path, {ROCKY: {"kernel_update_version": BAD[ROCKY], "packages_kernel_update_policy": "free"}}
    )
    steps = [{"step": step, "role": f"rocm_fleet.core.{role}", "tasks_from": step if role == "rollout" else
              f"update_{step}"} for step, role in (("drain", "rollout"), ("pin", "kernel"), ("install", "kernel"),
                                                   ("undrain", "rollout"))]
    run = run_playbook(UPDATE, *overlay, "-l", ROCKY, "-e", json.dumps({"rollout_steps": steps}))
    assert run.returncode == 0, run.tail()
    assert f"kernel-{BAD[ROCKY]}" in installed(kernel_hosts, ROCKY)
    assert f"vmlinuz-{BAD[ROCKY]}" in sudo(kernel_hosts, ROCKY, "ls /boot")  # kernel-install's entry and image
    assert next_boot(ROCKY) == MACHINE


def rollout(tmp_path, host_vars: dict[str, dict]):
    """kernel_update.yml over the three hosts, a canary then batches of one, reboots allowed."""
    overlay = overlay_inventory(tmp_path, host_vars)
    run = run_playbook(UPDATE, *overlay, "-l", f"{DEBIAN},{ROCKY},{LATER}", "-e",
                       json.dumps({"kernel_update_serial": 1, "kernel_reboot_allowed": True}))
    report = {entry["host"]: entry for entry in json.loads((REPO / "reports" / "kernel.json").read_text())["hosts"]}
    return run, report


def test_a_canary_whose_kernel_amdgpu_cannot_build_for_stops_the_rollout_before_the_next_batch(
    kernel_hosts, tmp_path
):
    before = {host: (installed(kernel_hosts, host), next_boot(host)) for host in (ROCKY, LATER)}
    run, report = rollout(tmp_path, {
        DEBIAN: {"kernel_update_version": BAD[DEBIAN], "packages_kernel_update_policy": "free"},
        ROCKY: {"kernel_update_version": GOOD[ROCKY]},
    })
    assert run.returncode != 0, run.tail()
    assert f"{DEBIAN}: kernel {BAD[DEBIAN]} is not made the boot default" in run.output, run.tail()
    assert f"keeps booting {MACHINE}" in run.output and "make.log" in run.output, run.tail()
    assert report[DEBIAN]["outcome"] == "failed" and report[DEBIAN]["step"] == "module", report[DEBIAN]
    assert BAD[DEBIAN] not in sudo(kernel_hosts, DEBIAN, "ls /boot; cat /boot/grub/grub.cfg")
    assert running(kernel_hosts, DEBIAN) == MACHINE == next_boot(DEBIAN)
    assert {host: report[host]["outcome"] for host in (ROCKY, LATER)} == dict.fromkeys((ROCKY, LATER), "not_started")
    assert {host: (installed(kernel_hosts, host), next_boot(host)) for host in (ROCKY, LATER)} == before


def test_after_the_canary_the_batch_whose_kernel_amdgpu_cannot_build_for_stops_the_rollout(kernel_hosts, tmp_path):
    later_before = (installed(kernel_hosts, LATER), next_boot(LATER))
    run, report = rollout(tmp_path, {
        DEBIAN: {"kernel_update_version": GOOD[DEBIAN]},
        ROCKY: {"kernel_update_version": BAD[ROCKY], "packages_kernel_update_policy": "free"},
    })
    assert run.returncode != 0, run.tail()
    # The canary batch: Debian's GOOD is the default only after its module, then the host runs it.
    assert report[DEBIAN]["outcome"] == "done", report[DEBIAN]
    assert running(kernel_hosts, DEBIAN) == GOOD[DEBIAN] == next_boot(DEBIAN)
    assert sudo(kernel_hosts, DEBIAN, f"ls /lib/modules/{GOOD[DEBIAN]}/updates/dkms/ /sys/module/amdgpu && echo ok")
    # The next batch: the RHEL host's BAD fails at the module step with DKMS's reason, is removed again, and the
    # host keeps booting and running its working kernel.
    assert report[ROCKY]["outcome"] == "failed" and report[ROCKY]["step"] == "module", report[ROCKY]
    assert BAD[ROCKY] in report[ROCKY]["reason"] and "make.log" in report[ROCKY]["reason"], report[ROCKY]
    assert f"{ROCKY}: kernel {BAD[ROCKY]} is not made the boot default" in run.output, run.tail()
    assert f"kernel-{BAD[ROCKY]}" not in installed(kernel_hosts, ROCKY)
    assert BAD[ROCKY] not in sudo(kernel_hosts, ROCKY, "ls /boot /boot/loader/entries")
    assert running(kernel_hosts, ROCKY) == MACHINE == next_boot(ROCKY)
    # The batch after it: never started, nothing changed.
    assert report[LATER]["outcome"] == "not_started", report[LATER]
    assert run.recap.get(LATER, {}).get("changed", 0) == 0, run.changed_tasks
    assert (installed(kernel_hosts, LATER), next_boot(LATER)) == later_before


def test_the_rhel_host_moves_to_a_kernel_amdgpu_builds_for_and_is_compliant(kernel_hosts, tmp_path):
    overlay = overlay_inventory(tmp_path, {ROCKY: {"kernel_update_version": GOOD[ROCKY]}})
    run = run_playbook(UPDATE, *overlay, "-l", ROCKY, "-e", '{"kernel_reboot_allowed": true}')
    assert run.returncode == 0, run.tail()
    changed = run.changed_tasks[ROCKY]
    steps = [name for name in changed if "Install the kernel image and headers" in name
             or "Make the new kernel the boot default" in name]
    assert steps and "Install" in steps[0] and "boot default" in steps[-1], changed
    assert running(kernel_hosts, ROCKY) == GOOD[ROCKY] == next_boot(ROCKY)
    assert sudo(kernel_hosts, ROCKY, "cat /sys/module/amdgpu/version").strip()
    compliance = run_playbook("playbooks/compliance.yml", "-l", f"{DEBIAN},{ROCKY}",
                              "-e", "compliance_fail_on_drift=true")
    assert compliance.returncode == 0, compliance.tail()


def test_a_second_run_changes_nothing(kernel_hosts):
    run = run_playbook(UPDATE, "-l", f"{DEBIAN},{ROCKY}")
    assert run.returncode == 0, run.tail()
    assert all(run.recap[host]["changed"] == 0 for host in (DEBIAN, ROCKY)), run.changed_tasks
