"""Issue 9 on the lab: each managed object has one definition, which site.yml applies and drift checks.

- Break each kind of managed item on a converged host (mode, owner, content, absence, an unwanted file,
  membership, a live device node, a link): drift reports it under the label --check prints, site.yml repairs it
  and drift is clean afterwards.
- -e overriding a role's variable gives the same change in drift and in --check.
- One edit to one definition in a copy of the collection (a file mode, a sysctl value of the GPU catalog, one
  object more in a role's list) shows as the same change in --check and in drift, with no other file edited.
"""

from __future__ import annotations

import filecmp
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from fleet_testing.lab_ansible import BIN, LAB_INVENTORY, ansible_env
from fleet_testing.lab_drift import change_labels, check_labels, drift, failed_checks, shell
from fleet_testing.lab_helpers import REPO
from fleet_testing.lab_site import run_playbook

pytestmark = [pytest.mark.lab, pytest.mark.slow]

RULES = "/etc/udev/rules.d/70-rocm-fleet-gpu.rules"
UACCESS = "/etc/udev/rules.d/70-uaccess.rules"
# host -> [(a command run as root, the check it must fail, the change drift and --check must name)]. Every kind
# of break on three hosts (Debian 12, Debian 13, Rocky Linux 9.6): --check and the repair run on those alone, and
# drift on all hosts shows that nothing else is flagged.
BREAKS = {
    "mi300x-01": [
        ("chmod 0600 /etc/profile.d/rocm.sh", "ROCM-ENV-001", "environment: /etc/profile.d/rocm.sh"),
        ("echo '# added by hand' >> /etc/apt/sources.list.d/rocm.sources", "ROCM-REPO-001",
         "repo: /etc/apt/sources.list.d/rocm.sources"),
        ("rm /etc/systemd/system.conf.d/rocm-fleet.conf", "ROCM-ENV-002",
         "environment: /etc/systemd/system.conf.d/rocm-fleet.conf"),
        # udev set the node at boot; a chmod since is only undone by the role applying the rules' mode to it.
        ("chmod 0666 /dev/kfd", "ROCM-ACCESS-004", "access: /dev/kfd"),
        # A legacy host (7.2.3): /opt/rocm straight at the release, past update-alternatives, whose database stays
        # right: the link check alone sees it.
        ('ln -sfn "$(readlink -f /opt/rocm)" /opt/rocm', "ROCM-PKG-001", "packages: /opt/rocm"),
    ],
    "mi300x-03": [
        # A ROCm Core SDK host (10.1.0): /opt/rocm/bin straight at the release's bin, past update-alternatives.
        ('ln -sfn "$(readlink -f /opt/rocm/bin)" /opt/rocm/bin', "ROCM-PKG-001", "packages: /opt/rocm/bin"),
        # The RHEL family (Rocky Linux 9.6): AMD's .repo file loosened by hand, the Core SDK's key dropped from the
        # rpm database (dnf would prompt for it, or refuse), and a kernel's boot entry without iommu=pt.
        ("echo gpgcheck=0 >> /etc/yum.repos.d/amdrocm-stable.repo", "ROCM-REPO-001",
         "repo: /etc/yum.repos.d/amdrocm-stable.repo"),
        ("rpm -e gpg-pubkey-657d9791", "ROCM-REPO-002", "repo: /etc/pki/rpm-gpg/RPM-GPG-KEY-amdrocm"),
        ("grubby --update-kernel=ALL --remove-args=iommu=pt", "ROCM-BOOT-001",
         "kernel: boot parameters iommu=pt pci=realloc=off in every boot entry"),
    ],
    "rx7900xtx-01": [
        (f"chown nobody:nogroup {RULES}", "ROCM-ACCESS-003", f"access: {RULES}"),
        ("echo 'deb http://127.0.0.1:1/ jammy main' > /etc/apt/sources.list.d/rocm.list", "ROCM-REPO-001",
         "repo: /etc/apt/sources.list.d/rocm.list"),
        ("gpasswd --delete fleet video", "ROCM-ACCESS-002", "access: fleet in render, video"),
        # The copy that masks the distribution's uaccess rules, edited by hand: the seat could get the GPUs back.
        (f"sed -i '/GOTO=\"uaccess_end\"/d' {UACCESS}", "ROCM-ACCESS-008",
         f"access: {UACCESS} (the distribution's uaccess rules without the AMD render nodes)"),
        # A legacy host (7.1.1): /opt/rocm at another directory (Debian's ROCm prefix), as a person sets it for a tool
        # that expects /opt/rocm.
        ("ln -sfn /usr /opt/rocm", "ROCM-PKG-001", "packages: /opt/rocm"),
    ],
}
BROKEN = ",".join(BREAKS)


def test_each_broken_item_is_reported_repaired_by_site_yml_and_clean_afterwards(compliant_lab, tmp_path):
    for host, breaks in BREAKS.items():
        for command, _, _ in breaks:
            shell(host, command)
    code, report, result = drift(tmp_path / "broken")
    assert code == 2, result.stdout + result.stderr[-3000:]
    assert {name for name, found in report["hosts"].items() if found["status"] != "compliant"} == set(BREAKS)
    check_run = run_playbook("site.yml", "--check", "--diff", "--limit", BROKEN)
    for host, breaks in BREAKS.items():
        found = report["hosts"][host]
        labels = sorted({label for _, _, label in breaks})
        assert failed_checks(found) == {check for _, check, _ in breaks}, (host, found["checks"])
        assert change_labels(found) == labels == check_labels(check_run, host), (host, check_run.tail(3000))
    kfd = next(check for check in report["hosts"]["mi300x-01"]["checks"] if check["id"] == "ROCM-ACCESS-004")
    assert "/dev/kfd mode 0666, expected 0660" in kfd["message"]
    # The hand-made link of either stream: drift names the release it should reach and who sets it; --diff shows the
    # change. The Core SDK's /opt/rocm/bin is the rocm-bin alternative of /opt/rocm/core-<series>/bin.
    for host, link, target, alternative in (
            ("mi300x-01", "/opt/rocm", "/opt/rocm-{release}", "rocm"),
            ("mi300x-03", "/opt/rocm/bin", "/opt/rocm/core-{series}/bin", "rocm-bin"),
            ("rx7900xtx-01", "/opt/rocm", "/usr", "rocm")):
        message = next(check for check in report["hosts"][host]["checks"] if check["id"] == "ROCM-PKG-001")["message"]
        release = re.search(r"the default release ROCm ((\d+\.\d+)\.\d+) \(packages_rocm_default_version\); site.yml"
                            r" sets the link", message)
        assert release, (host, message)
        before = target.format(release=release[1], series=release[2])
        assert message.startswith(f"{link} points to {before}, expected /etc/alternatives/{alternative}: the"
                                  " alternative that selects"), (host, message)
        assert re.search(rf"-\s+src: {re.escape(before)}\n\+\s+src: /etc/alternatives/{alternative}\n",
                         check_run.output), host

    repair = run_playbook("site.yml", "--limit", BROKEN)
    assert repair.returncode == 0, repair.tail()
    for host, breaks in BREAKS.items():
        assert check_labels(repair, host) == sorted({label for _, _, label in breaks}), (
            host, repair.changed_objects.get(host))
    # Clean afterwards: drift checks the objects site.yml's compliance step proves before it runs a role (the same
    # rendering). That a second site.yml then changes nothing is test_provision_converge's, over the whole lab.
    code, report, result = drift(tmp_path / "repaired")
    assert code == 0, {host: failed_checks(found) for host, found in report.get("hosts", {}).items()}


def test_an_extra_var_gives_the_same_changes_in_drift_and_check_mode(compliant_lab, tmp_path):
    """-e wins over a role default and over a role's vars/main.yml, in a provisioning play and in drift alike."""
    host = "w7900-01"
    overrides = [json.dumps({"environment_profile_path": "/etc/profile.d/rocm-site.sh"}),
                 json.dumps({"__environment_variables": {"ROCM_FLEET_SITE": "lab"}})]
    extra = [option for value in overrides for option in ("-e", value)]
    code, report, result = drift(tmp_path, "--limit", host, *extra)
    check_run = run_playbook("site.yml", "--check", "--limit", host, *extra)
    assert code == 2 and check_run.returncode == 0, result.stderr[-3000:] + check_run.tail(3000)
    assert change_labels(report["hosts"][host]) == check_labels(check_run, host) == [
        "environment: /etc/profile.d/rocm-site.sh", "environment: /etc/systemd/system.conf.d/rocm-fleet.conf"]


def collection_copy(destination: Path) -> Path:
    """What a maintainer edits: the collection's roles, plugins and playbooks, with ansible.cfg and the link."""
    destination.mkdir()
    for name in ("ansible.cfg", "galaxy.yml", "site.yml"):
        shutil.copy2(REPO / name, destination / name)
    for name in ("meta", "plugins", "roles", "playbooks"):
        shutil.copytree(REPO / name, destination / name, ignore=shutil.ignore_patterns("__pycache__"))
    link = destination / "collections" / "ansible_collections" / "rocm_fleet" / "core"
    link.parent.mkdir(parents=True)
    link.symlink_to(Path("../../.."))
    return destination


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) >= 1, (path, old)
    path.write_text(text.replace(old, new, 1))


def edited_files(copy: Path) -> set[str]:
    changed = set()
    for path in copy.rglob("*"):
        relative = path.relative_to(copy)
        mine = path.is_file() and not path.is_symlink() and "collections" not in relative.parts
        if mine and not filecmp.cmp(path, REPO / relative, shallow=False):
            changed.add(str(relative))
    return changed


def test_one_definition_changed_shows_as_the_same_change_in_check_mode_and_drift(compliant_lab, tmp_path):
    host = "mi300x-01"
    copy = collection_copy(tmp_path / "collection")
    edit(copy / "roles/environment/vars/main.yml", "    path: \"{{ environment_profile_path }}\"\n",
         "    path: \"{{ environment_profile_path }}\"\n    mode: \"0640\"\n")
    # The first class of the catalog is the MI300X: its sysctl value is the kernel role's wanted value.
    edit(copy / "roles/preflight/vars/gpu_catalog.yml", "sysctls: {kernel.numa_balancing: 0}",
         "sysctls: {kernel.numa_balancing: 1}")
    edit(copy / "roles/access/vars/main.yml", "__access_managed:\n",
         "__access_managed:\n  - kind: directory\n    id: ROCM-ACCESS-003\n    title: a directory for site rules\n"
         "    path: /etc/udev/rules.d/rocm-fleet.d\n")
    assert edited_files(copy) == {"roles/environment/vars/main.yml", "roles/preflight/vars/gpu_catalog.yml",
                                  "roles/access/vars/main.yml"}
    env = ansible_env({"ANSIBLE_CONFIG": str(copy / "ansible.cfg"), "ROCM_FLEET_COLLECTION_ROOT": str(copy)})
    check_run = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", str(LAB_INVENTORY), "site.yml", "--check", "--limit", host],
        cwd=copy, env=changes_env(env, tmp_path / "changes.json"), capture_output=True, text=True, timeout=900)
    assert check_run.returncode == 0, check_run.stdout[-3000:]
    printed = sorted(set(json.loads((tmp_path / "changes.json").read_text())["objects"].get(host, [])))
    out = tmp_path / "report"
    result = subprocess.run([str(BIN / "rocm-fleet"), "drift", "-i", str(LAB_INVENTORY), "--limit", host,
                             "--output-dir", str(out)], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 2, result.stdout + result.stderr[-3000:]
    found = json.loads((out / "drift.json").read_text())["hosts"][host]
    assert change_labels(found) == printed == [
        "access: /etc/udev/rules.d/rocm-fleet.d", "environment: /etc/profile.d/rocm.sh",
        "kernel: kernel.numa_balancing=1"]


def changes_env(env: dict, log: Path) -> dict:
    callbacks = Path(__file__).parent / "callbacks"
    return {**env, "ANSIBLE_CALLBACKS_ENABLED": "rocm_fleet_changes", "ROCM_FLEET_CHANGES_LOG": str(log),
            "ANSIBLE_CALLBACK_PLUGINS": str(callbacks), "ANSIBLE_NOCOLOR": os.environ.get("ANSIBLE_NOCOLOR", "1")}
