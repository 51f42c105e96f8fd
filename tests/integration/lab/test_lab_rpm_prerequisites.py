"""AMD's RHEL-family prerequisites (EPEL for dkms, CodeReady Builder) missing: every run stops before any change,
naming the host, what is missing and the distribution's command that enables it (roles/repo/vars/RedHat.yml).

mi300x-cpx-01 runs RHEL 10.0 with both enabled by the site's Satellite and kickstart (inventory/lab: rhel10), so
the repo role may not enable them: without CodeReady Builder, subscription-manager's command is the fix.
mi300x-03 runs Rocky Linux 9.6, whose group lets the role enable them; with that taken away for one run, EPEL
missing names its release package. On a converged host site.yml changes nothing and checks nothing more, so the
test also removes AMD's repository file: the run that would put it back stops first, and puts it back once the
prerequisite is enabled again.

On SLES (mi300x-02, inventory/lab: sles15) rocm-fleet writes no zypper locks for the kernel update policy: a policy
other than free stops the host before any change, naming the lock to add by hand.
"""

from __future__ import annotations

import base64
import json

import pytest
from fleet_testing.lab_site import run_playbook
from fleet_testing.provision_lab import sudo

pytestmark = pytest.mark.lab

CASES = {
    # host: (repository file, section disabled by hand, what the error must name)
    "mi300x-cpx-01": (
        "/etc/yum.repos.d/redhat.repo",
        "codeready-builder-for-rhel-10-x86_64-rpms",
        "RedHat 10.0 need CodeReady Linux Builder, which dnf does not list as enabled. Enable them (CodeReady Linux"
        " Builder: subscription-manager repos --enable codeready-builder-for-rhel-10-x86_64-rpms)",
    ),
    "mi300x-03": (
        "/etc/yum.repos.d/epel.repo",
        "epel",
        "Rocky 9.6 need EPEL, which dnf does not list as enabled. Enable them (EPEL: dnf install epel-release)",
    ),
}
# For the run that must stop: the Rocky group's repo_enable_epel_crb taken away (rhel10 never sets it).
EXTRA_VARS = {"repo_enable_epel_crb": False}
AMD_REPO = "/etc/yum.repos.d/amdrocm-stable.repo"
SAVED = "/root/amdrocm-stable.repo.saved"


def test_a_missing_prerequisite_stops_each_host_before_any_change_with_the_command_that_enables_it(
    lab, compliant_lab
):
    """Both hosts in one run (and one repair): each stops on its own missing prerequisite, with its own command."""
    hosts = ",".join(sorted(CASES))
    before = {host: sudo(lab, host, f"cat {path}") for host, (path, _, _) in CASES.items()}
    try:
        for host, (_, section, _) in CASES.items():
            sudo(lab, host, f"dnf config-manager --set-disabled {section} && mv {AMD_REPO} {SAVED}")
            assert section not in sudo(lab, host, "dnf -q repolist --enabled")
        run = run_playbook("site.yml", "-l", hosts, "-e", json.dumps(EXTRA_VARS))
        assert run.returncode != 0, run.tail()
        text = " ".join(run.output.split())
        for host, (_, _, message) in CASES.items():
            assert f"{host}: AMD's ROCm packages for {message}" in text, (host, run.tail())
            assert run.recap[host]["changed"] == 0, run.changed_tasks
            assert sudo(lab, host, f"test -e {AMD_REPO} && echo present || echo absent").strip() == "absent"
    finally:
        for host, (path, _, _) in CASES.items():
            saved = base64.b64encode(before[host].encode()).decode()
            sudo(lab, host, f"echo {saved} | base64 -d > {path}")
    for host, (path, section, _) in CASES.items():
        assert sudo(lab, host, f"cat {path}") == before[host]
        assert section in sudo(lab, host, "dnf -q repolist --enabled")
    repaired = run_playbook("site.yml", "-l", hosts)
    assert repaired.returncode == 0, repaired.tail()
    same = f"cmp {AMD_REPO} {SAVED} && rm {SAVED} && echo same"
    for host in CASES:
        assert repaired.recap[host]["changed"] >= 1, repaired.tail()
        assert sudo(lab, host, same).strip() == "same"


def test_a_kernel_update_policy_sles_cannot_apply_stops_the_host_before_any_change(lab, compliant_lab):
    host = "mi300x-02"
    run = run_playbook("site.yml", "-l", host, "-e", "packages_kernel_update_policy=allowed_series")
    assert run.returncode != 0, run.tail()
    text = " ".join(run.output.split())
    assert f"{host}: packages_kernel_update_policy allowed_series is not applied on SLES yet" in text, run.tail()
    assert "zypper addlock 'kernel-default >= " in text and "set packages_kernel_update_policy: free" in text
    assert run.recap[host]["changed"] == 0, run.changed_tasks
