"""`rocm-fleet drift` on the lab: compliant after site.yml, each hand change found on its host, exit 3 with a host down.

One batched pass over the whole lab: hand changes and lab faults on nine hosts (one left as converged), then ONE
drift run and ONE `site.yml --check --diff` run over the changed hosts: per host, drift's pending changes must be
exactly the tasks --check reports as changed, and its failed checks exactly the ones the changes break. With a
host stopped, drift exits 3 and checks the others. Then the lab clears its faults and ONE site.yml run limited
to the changed hosts repairs them (on three hosts, every kind of managed item broken, each reported exactly once
as repaired: issue 9), and drift is clean.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from fleet_testing.lab_ansible import BIN, LAB_INVENTORY, ansible_env
from fleet_testing.lab_drift import (
    change_labels,
    check_labels,
    compliance_task,
    drift,
    failed_checks,
    reboot,
    shell_each,
)
from fleet_testing.lab_helpers import REPO, clear_faulted, rocm_fleet
from fleet_testing.lab_site import run_playbook

pytestmark = [pytest.mark.lab, pytest.mark.slow]
GRUB_DROPIN = "/etc/default/grub.d/90-rocm-fleet.cfg"
RULES = "/etc/udev/rules.d/70-rocm-fleet-gpu.rules"
UACCESS = "/etc/udev/rules.d/70-uaccess.rules"
# host -> (commands run as root on the host, lab faults, the checks the change must fail). A lab fault is
# cleared by the lab and site.yml has nothing to do for it: on the hosts with both, --check agrees with drift.
SCENARIOS = {
    # SLES on the ROCm Core SDK: its repository file gone, so zypper no longer installs or updates from it; the
    # role's block in /etc/default/grub (SLES has no GRUB drop-in directory) without iommu=pt, as an admin edits
    # the file. And XGMI down: ROCM-HEALTH-002 names the GPUs and links; the KFD table (ROCM-TOPO-001) is its
    # consequence.
    "mi300x-02": (["rm /etc/zypp/repos.d/amdrocm-stable.repo", "sed -i 's/ iommu=pt//' /etc/default/grub"],
                  [["degrade-link", "0", "1"]], {"ROCM-REPO-001", "ROCM-BOOT-001", "ROCM-HEALTH-002"}),
    # The driver unloaded beside a live sysctl changed by hand.
    "mi250x-01": (["sysctl -qw kernel.numa_balancing=1"], [["unload-amdgpu"]], {"ROCM-SYSCTL-001", "ROCM-DRV-001"}),
    # As an admin would: the drop-in loses iommu=pt and grub.cfg is regenerated; active until the next boot.
    "mi210-01": ([f"sed -i 's/ iommu=pt//' {GRUB_DROPIN}", "update-grub"], [], {"ROCM-BOOT-001"}),
    "w7900-01": ([], [["remove-gpu", "1"]], {"ROCM-GPU-001"}),
    # Left as site.yml converged it (CPX/NPS4 on RHEL 10): nothing found, nothing to change.
    "mi300x-cpx-01": ([], [], set()),
    # Changes that cannot interfere: a file's content, a file removed and a group membership.
    "rx6700xt-01": (
        ["echo 'export HSA_ENABLE_SDMA=0' >> /etc/profile.d/rocm.sh", "rm /etc/ld.so.conf.d/rocm.conf",
         "gpasswd --delete researcher render"],
        [],
        {"ROCM-ENV-001", "ROCM-ENV-003", "ROCM-ACCESS-002"},
    ),
    # rocminfo<version> of whichever release the host got; and, on the legacy stream (7.2.3), AMD's pin gone:
    # without it apt would prefer the distribution's own ROCm packages.
    "login-01": (
        ["dpkg --remove --force-depends $(dpkg-query -W -f '${Package} ' 'rocminfo[0-9]*')",
         "rm /etc/apt/preferences.d/rocm-pin-600"],
        [],
        {"ROCM-PKG-002", "ROCM-REPO-003"},
    ),
}
# Every kind of managed item broken (mode, owner, content, absence, an unwanted file, membership, a live device
# node, a link) on three hosts of three families (Debian 12, Debian 13, Rocky Linux 9.6), no lab fault beside
# them: host -> [(a command run as root, the check it must fail, the change drift and --check must name, which
# is also the one site.yml's repair reports)].
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
SLES_BOOT_BLOCK = "kernel: the rocm-fleet boot parameters (rocm_fleet.core.kernel) block in /etc/default/grub"
ALL_HOSTS = sorted({*SCENARIOS, *BREAKS})
STOPPED = "login-01"
# The hosts changed by hand, which site.yml repairs; a lab fault is cleared by the lab, and site.yml has
# nothing to do for it.
HAND_CHANGED = sorted({host for host, (commands, _, _) in SCENARIOS.items() if commands} | set(BREAKS))


def broken_labels(host: str) -> list[str]:
    return sorted({label for _, _, label in BREAKS[host]})


def test_drift_reports_every_host_compliant_after_site_yml(compliant_lab, tmp_path):
    code, report, result = drift(tmp_path)
    problems = {
        name: {"checks": failed_checks(host), "changes": change_labels(host), "error": host["error"]}
        for name, host in report.get("hosts", {}).items() if host["status"] != "compliant"
    }
    assert code == 0 and not problems, (problems, result.stderr[-3000:])
    assert sorted(report["hosts"]) == ALL_HOSTS
    assert {path.name for path in (tmp_path / "report").iterdir()} == {
        "drift.json", "drift.junit.xml", "drift.html", "drift.prom"}
    assert "mi300x-01: done" in result.stderr  # progress while it runs


def test_known_facts_save_a_module_call_and_never_hide_a_change(compliant_lab, tmp_path):
    """With cached facts the play reads none first and host_compliance confirms them in its one call; a change
    since costs the second call."""
    host = "w7900-01"
    cache = {"ANSIBLE_CACHE_PLUGIN": "ansible.builtin.jsonfile", "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(tmp_path)}

    def calls(run: tuple[bool, dict]) -> int:
        gathered, evaluated = run
        return int(gathered) + evaluated["module_calls"]

    first, second = compliance_task(host, cache), compliance_task(host, cache)
    assert (calls(first), calls(second)) == (2, 1)
    assert second[1]["results"] == first[1]["results"] and second[1]["decision"] == first[1]["decision"]
    assert second[1]["summary"]["fail"] == 0
    rocm_fleet("lab", "fault", host, "remove-gpu", "1")
    try:
        changed, uncached = compliance_task(host, cache), compliance_task(host)
    finally:
        rocm_fleet("lab", "fault", host, "clear")
    assert calls(changed) == 2 and calls(uncached) == 2 and not changed[0] and uncached[0]
    assert changed[1]["results"] == uncached[1]["results"] and changed[1]["decision"] == uncached[1]["decision"]
    assert changed[1]["decision"]["gpu_count"] == first[1]["decision"]["gpu_count"] - 1
    assert {item["id"] for item in changed[1]["results"] if item["status"] == "fail"} == {"ROCM-GPU-001"}


def test_each_change_is_found_on_its_host_and_matches_check_mode(compliant_lab, tmp_path):
    commands = {host: scenario[0] for host, scenario in SCENARIOS.items()}
    for host, breaks in BREAKS.items():
        commands[host] = [command for command, _, _ in breaks]
    shell_each(commands)
    for host, (_, faults, _) in SCENARIOS.items():
        for fault in faults:
            rocm_fleet("lab", "fault", host, *fault)
    code, report, result = drift(tmp_path)
    assert code == 2, result.stdout + result.stderr[-3000:]
    check_run = run_playbook("site.yml", "--check", "--diff", "--limit", ",".join(HAND_CHANGED))
    assert check_run.returncode == 0, check_run.tail(3000)
    for host in ALL_HOSTS:
        found = report["hosts"][host]
        expected = SCENARIOS[host][2] if host in SCENARIOS else {check for _, check, _ in BREAKS[host]}
        assert failed_checks(found) == expected, (host, found["checks"])
        if host in HAND_CHANGED:
            assert change_labels(found) == check_labels(check_run, host), (host, check_run.tail(3000))
        else:
            assert change_labels(found) == [], (host, found["changes"])
    for host in BREAKS:
        assert change_labels(report["hosts"][host]) == broken_labels(host), host
    assert change_labels(report["hosts"]["mi250x-01"]) == ["kernel: kernel.numa_balancing=0"]
    # SLES: the block is a managed object, found and shown as blockinfile would change it.
    block = next(c for c in report["hosts"]["mi300x-02"]["changes"] if c["label"] == SLES_BOOT_BLOCK)
    assert '+GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} iommu=pt' in block["diff"], block
    profile = next(c for c in report["hosts"]["rx6700xt-01"]["changes"]
                   if c["label"] == "environment: /etc/profile.d/rocm.sh")
    # drift's diff and --diff's alike show the line going away.
    assert "-export HSA_ENABLE_SDMA=0" in profile["diff"]
    assert "-export HSA_ENABLE_SDMA=0" in check_run.output and "+export HSA_ENABLE_SDMA=0" not in check_run.output
    checks = {c["id"]: c for c in report["hosts"]["mi300x-02"]["checks"]}
    xgmi, topology = checks["ROCM-HEALTH-002"], checks["ROCM-TOPO-001"]
    assert "GPU 0 (" in xgmi["message"] and "GPU 1 (" in xgmi["message"] and "XGMI links to 6" in xgmi["message"]
    # One cause, one failed check: the KFD link table's difference is folded into HEALTH-002's finding.
    assert topology["status"] == "skipped" and "ROCM-HEALTH-002" in topology["message"], topology
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


def test_a_removed_boot_parameter_is_missing_after_the_reboot(compliant_lab, tmp_path):
    reboot("mi210-01")
    code, report, _ = drift(tmp_path, "--limit", "mi210-01")
    checks = {check["id"]: check for check in report["hosts"]["mi210-01"]["checks"]}
    assert code == 2
    assert checks["ROCM-BOOT-002"]["status"] == "fail"
    assert checks["ROCM-BOOT-002"]["message"].startswith("missing: iommu=pt"), checks["ROCM-BOOT-002"]
    assert failed_checks(report["hosts"]["mi210-01"]) == {"ROCM-BOOT-001", "ROCM-BOOT-002"}
    # No task repairs an inactive boot parameter: the report says what does.
    assert checks["ROCM-BOOT-002"]["repair"].startswith("a reboot"), checks["ROCM-BOOT-002"]


def test_an_unreachable_host_exits_3_and_the_others_are_checked_then_all_is_restored(compliant_lab, tmp_path):
    rocm_fleet("lab", "fault", STOPPED, "stop")
    code, report, result = drift(tmp_path)
    out = tmp_path / "report"
    assert code == 3, result.stderr[-3000:]
    assert report["hosts"][STOPPED]["status"] == "unreachable"
    # The others were checked: drift.json lists a passed check by its ID only (schema 3).
    assert all(report["hosts"][host]["passed"] for host in ALL_HOSTS if host != STOPPED)
    junit = ET.parse(out / "drift.junit.xml").getroot()
    assert any(case.get("classname") == STOPPED and case.find("error") is not None
               for case in junit.iter("testcase") if case.get("name", "").startswith("HOST-REACHABLE"))
    assert STOPPED in (out / "drift.html").read_text()
    assert f'rocm_fleet_host_unreachable{{host="{STOPPED}"}} 1' in (out / "drift.prom").read_text()

    # The hosts a fault touched (the stopped one among them) started and cleared; a clear re-renders a host's
    # hardware, so the untouched hosts are left as they are.
    clear_faulted()
    restore = run_playbook("site.yml", "--limit", ",".join(HAND_CHANGED))
    assert restore.returncode == 0, restore.tail()
    for host in BREAKS:
        assert check_labels(restore, host) == broken_labels(host), (host, restore.changed_objects.get(host))
    # Clean afterwards: drift checks the objects site.yml's compliance step proves before it runs a role (the same
    # rendering). That a second site.yml then changes nothing is test_provision_converge's, over the whole lab.
    code, report, result = drift(tmp_path / "after")
    assert code == 0, {h: failed_checks(r) for h, r in report.get("hosts", {}).items()}


def test_the_declared_state_cache_serves_an_unchanged_host_and_never_an_edited_inventory(compliant_lab, tmp_path):
    """A nightly drift reads each host's declared state from the run before; an inventory edit renders it again."""
    host = "w7900-01"
    inventory = tmp_path / "inventory"
    shutil.copytree(LAB_INVENTORY, inventory)
    caches = {"ROCM_FLEET_FACT_CACHE": str(tmp_path / "facts"), "ROCM_FLEET_STATE_CACHE": str(tmp_path / "state")}

    def run() -> tuple[str, set[str], float, subprocess.CompletedProcess]:
        out = tmp_path / "report"
        result = subprocess.run(
            [str(BIN / "rocm-fleet"), "drift", "-i", str(inventory), "--limit", host, "--output-dir", str(out)],
            cwd=REPO, env=ansible_env(caches), capture_output=True, text=True, timeout=600)
        report = json.loads((out / "drift.json").read_text())["hosts"][host]
        [entry] = (tmp_path / "state").glob(f"{host}-*.json")
        return report["status"], failed_checks(report), json.loads(entry.read_text())["stored"], result

    first, served = run(), run()
    assert first[:2] == served[:2] == ("compliant", set()), first[3].stderr[-2000:]
    assert served[2] == first[2]  # the second run rendered nothing: the entry is the first run's
    # The site declares one more variable for the host: its profile must hold it, so the state is rendered again.
    # In the host's host_vars directory: Ansible reads a host_vars/<host>.yml beside it no more.
    added = inventory / "host_vars" / host / "environment.yml"
    added.parent.mkdir(parents=True, exist_ok=True)
    added.write_text("environment_variables:\n  MIOPEN_USER_DB_PATH: /scratch\n")
    edited = run()
    # The profile and the systemd drop-in lack it (and what checks the environment a job gets, if anything).
    assert edited[0] == "drift" and {"ROCM-ENV-001", "ROCM-ENV-002"} <= edited[1], edited[3].stderr[-2000:]
    assert all(check.startswith("ROCM-ENV-") for check in edited[1]) and edited[2] > first[2], edited[1]
    added.unlink()
    assert run()[:2] == ("compliant", set())
