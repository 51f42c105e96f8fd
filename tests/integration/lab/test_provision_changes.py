"""Issue 4 on the lab: kernel parameters and reboots, the mirror down.

The tests of this module change hosts of the converged session lab and run in
file order; the last one puts every changed host back with ONE site.yml run
limited to them and checks that it converges (for the mirror pass: the rerun
after the mirror returns). If a test fails early, the module's teardown still
runs that restore, so the next module finds the lab converged. That --check --diff
reports each hand change and nothing else (every kind of object: a file's content,
a sysctl, a file removed, a group membership) is test_drift.py's, in the lab's one
batched break-report-repair pass: there --check's changes equal drift's, per host.
"""

from __future__ import annotations

import pytest
from fleet_testing.lab_helpers import rocm_fleet
from fleet_testing.lab_site import run_playbook
from fleet_testing.provision_lab import (
    CREATED_USER,
    boot_id,
    cmdline,
    failed_task,
    failure_of,
    overlay_inventory,
    reboot_pending_report,
    role_task_changes,
    sudo,
)

pytestmark = [pytest.mark.lab, pytest.mark.slow]

# The mirror pass's bystander, changed by hand (a file removed, a group membership) on the ROCm Core SDK (10.0.0):
# each with the one managed object site.yml repairs for it (by its label), while the other host fails.
HAND_CHANGES = [
    ("rm /etc/ld.so.conf.d/rocm.conf", "environment: /etc/ld.so.conf.d/rocm.conf"),
    (f"gpasswd --delete {CREATED_USER} render", f"access: {CREATED_USER} in render, video"),
]
# The lab lets every host reboot; the overlay of the reboot test takes that away from one.
REBOOT_ALLOWED, REBOOT_NOT_ALLOWED = "mi300x-01", "mi210-01"
EXTRA_BOOT_PARAM = "pcie_aspm=off"
MIRROR_HOST, MIRROR_BYSTANDER = "login-01", "rx6700xt-01"
# A package of the hip use case (named rocm-hip-runtime<version> per release), removed on MIRROR_HOST only.
MISSING_PACKAGE = "rocm-hip-runtime"


@pytest.fixture(scope="module")
def touched(lab):
    """Hosts changed by this module's tests; whatever the last test did not restore is restored at teardown."""
    hosts: set[str] = set()
    yield hosts
    rocm_fleet("lab", "fault", "mirror", "up", check=False)
    if hosts:
        restore = run_playbook("site.yml", "--limit", ",".join(sorted(hosts)))
        assert restore.returncode == 0, restore.tail()


def test_a_kernel_parameter_change_reboots_only_where_allowed(lab, converged_lab, touched, tmp_path):
    hosts = [REBOOT_ALLOWED, REBOOT_NOT_ALLOWED]
    touched.update(hosts)
    boot_ids = {host: boot_id(lab, host) for host in hosts}
    wanted = "{{ preflight_decision.tuning.boot_params + ['" + EXTRA_BOOT_PARAM + "'] }}"
    overlay = overlay_inventory(tmp_path, {
        REBOOT_ALLOWED: {"kernel_boot_params": wanted},
        REBOOT_NOT_ALLOWED: {"kernel_boot_params": wanted, "preflight_reboot_allowed": False},
    })
    run = run_playbook("playbooks/provision.yml", *overlay, "--limit", ",".join(hosts))
    assert run.returncode == 0, run.tail()
    assert role_task_changes(run, REBOOT_ALLOWED).count("kernel : Reboot the host") == 1
    assert boot_id(lab, REBOOT_ALLOWED) != boot_ids[REBOOT_ALLOWED]
    assert EXTRA_BOOT_PARAM in cmdline(lab, REBOOT_ALLOWED)

    assert "kernel : Reboot the host" not in role_task_changes(run, REBOOT_NOT_ALLOWED)
    assert boot_id(lab, REBOOT_NOT_ALLOWED) == boot_ids[REBOOT_NOT_ALLOWED]
    assert EXTRA_BOOT_PARAM not in cmdline(lab, REBOOT_NOT_ALLOWED)
    report = reboot_pending_report(run)
    assert f"{REBOOT_NOT_ALLOWED}:" in report and EXTRA_BOOT_PARAM in report, report
    assert f"{REBOOT_ALLOWED}:" not in report, report


def test_a_host_that_needs_a_package_fails_while_the_mirror_is_down(lab, converged_lab, touched):
    touched.update((MIRROR_HOST, MIRROR_BYSTANDER))
    for command, _ in HAND_CHANGES:
        sudo(lab, MIRROR_BYSTANDER, command)
    # Without the package and apt's cached .deb, only this host must download from the mirror.
    package = sudo(lab, MIRROR_HOST, f"dpkg-query -W -f '${{Package}}\\n' '{MISSING_PACKAGE}[0-9]*'").split()[0]
    sudo(lab, MIRROR_HOST, f"apt-get remove -y -q {package} >/dev/null && apt-get clean")
    rocm_fleet("lab", "fault", "mirror", "down")
    try:
        run = run_playbook("site.yml", "--limit", f"{MIRROR_HOST},{MIRROR_BYSTANDER}")
    finally:
        rocm_fleet("lab", "fault", "mirror", "up")
    assert run.returncode != 0, run.tail()
    failure = failure_of(run, MIRROR_HOST)
    assert failed_task(run, MIRROR_HOST).endswith("packages : Install the use cases of each ROCm release")
    assert "Failed to fetch" in failure and package in failure, failure
    # The other host finishes (its own hand change repaired, reaching the final report).
    assert run.recap[MIRROR_BYSTANDER]["failed"] == 0, run.tail()
    assert sorted(run.changed_objects.get(MIRROR_BYSTANDER, [])) == sorted(label for _, label in HAND_CHANGES)
    assert "reboot_pending:" in run.output


def test_one_rerun_converges_every_changed_host(lab, converged_lab, touched):
    hosts = sorted(touched)
    rerun = run_playbook("site.yml", "--limit", ",".join(hosts))
    assert rerun.returncode == 0, rerun.tail()
    touched.clear()
    assert {host: rerun.recap[host]["failed"] for host in hosts} == {host: 0 for host in hosts}
    changes = {host: role_task_changes(rerun, host) for host in hosts}
    assert any(task.startswith("packages : Install the use cases") for task in changes[MIRROR_HOST]), changes
    # The removed boot parameter needs a reboot too; without the overlay both hosts may take it.
    assert EXTRA_BOOT_PARAM not in cmdline(lab, REBOOT_ALLOWED)
    assert EXTRA_BOOT_PARAM not in cmdline(lab, REBOOT_NOT_ALLOWED)
