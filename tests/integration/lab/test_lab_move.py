"""The move of GPU hosts from the legacy stream (7.2.3) to the ROCm Core SDK 10.x with playbooks/upgrade.yml: a
canary and a batch, the canary failing its move (at the install step: its legacy packages cannot be removed; then
at the driver step), the rollout stopping after it with the later batch untouched, a rollback of the failed host
and of a finished one, a rerun that completes.

A lab of its own (own state dir, ports and mirror, as the onboarding test's), so it runs beside the tests of the
default instance: two GPU hosts grouped as inventory/lab groups them, with the site's group_vars, each declared
on 7.2.3 as a site in mid-move declares the hosts it has not moved yet. In name order with upgrade_serial=1:
move-mi210 (Ubuntu 22.04, the canary: fails twice, moves, is rolled back) and move-mi300x-rocky (Rocky Linux 9.6,
the second batch: dnf removes the legacy stream and installs the Core SDK's RPMs). A batch that fails after a
canary that passed: test_lab_upgrade.py, on the lab's own hosts.
AMD's 7.14+ instructions: "If you have ROCm 7.2.4 or older installed, please uninstall it before proceeding"
(shared/reference/rocm-core-sdk.md).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml
from fleet_testing.lab_helpers import LabShell, lab_available, rocm_fleet
from fleet_testing.lab_site import link_site_group_vars, run_playbook

pytestmark = [pytest.mark.lab, pytest.mark.slow]

FIRST_PORT = 2601
MIRROR_PORT = 8680
STATE_DIR = Path("/var/lib/rocm-fleet/lab-move-test")
LEGACY, TARGET = "7.2.3", "10.1.0"
# host, lab profile, inventory group, host variables (those inventory/lab keeps in host_vars), lab_os
NEW_HOSTS = (
    ("move-mi210", "mi210-4-pcie", "mi210_nodes", {}, "ubuntu22.04"),
    ("move-mi300x-rocky", "mi300x-8", "mi300x_training", {}, "rocky9.6"),
)
CANARY, SECOND = (host for host, *_ in NEW_HOSTS)
SITE_OS_GROUPS = {"rocky9.6": "rocky9"}
HOSTS = (CANARY, SECOND)
LIMIT = ",".join(HOSTS)
# A site's hold on its running ROCm (apt-mark hold, as sites keep unattended upgrades off it) would make apt refuse
# the move's removal: the plan refuses it before any change, on every host.
HELD = f"rocm-core{LEGACY}"
# What fails one host mid-move. The install step: a legacy package whose pre-removal script fails (a site's edit
# of it, as happens to maintainer scripts): dpkg keeps that package, and the move's removal stops there. The driver
# step: a site package owning a file the driver line's amdgpu-dkms ships (its DKMS source tree, as a by-hand build
# of the driver leaves one in a package of its own): dpkg refuses to unpack over it
# ("trying to overwrite ..., which is also in package site-files-driver"). The canary is an Ubuntu 22.04 host, on
# AMD's Ubuntu 22.04 driver packages.
PRERM = f"/var/lib/dpkg/info/{HELD}.prerm"
DRIVER_DEBS = "amdgpu/*/ubuntu/pool/main/a/amdgpu-dkms/*22.04_all.deb"
ON_TARGET = json.dumps({"preflight_rocm_version": TARGET})


def write_inventory(directory: Path) -> dict[str, int]:
    """The two hosts, each declared on 7.2.3, with the site's group_vars and this instance's mirror port."""
    directory.mkdir(parents=True, exist_ok=True)
    groups: dict[str, dict] = {}
    ports = {}
    for offset, (host, profile, group, host_vars, system) in enumerate(NEW_HOSTS):
        ports[host] = FIRST_PORT + offset
        groups.setdefault(group, {"hosts": {}})["hosts"][host] = {
            "lab_profile": profile, "ansible_port": ports[host], "lab_os": system,
            "preflight_rocm_version": LEGACY, **host_vars}
    hosts = {"all": {"children": {"gpu_servers": {"children": groups}}}}
    # inventory/lab's OS groups whose group_vars a host of that system takes (rocky9: repo_enable_epel_crb).
    for host, *_, system in NEW_HOSTS:
        if system in SITE_OS_GROUPS:
            hosts["all"]["children"].setdefault(SITE_OS_GROUPS[system], {"hosts": {}})["hosts"][host] = None
    (directory / "hosts.yml").write_text("---\n" + yaml.safe_dump(hosts, sort_keys=False))
    link_site_group_vars(directory, MIRROR_PORT)
    return ports


class MoveLab:
    def __init__(self, shell: LabShell, ports: dict[str, int], inventory: Path, reports: Path):
        self.shell, self.ports, self.inventory, self.reports = shell, ports, inventory, reports

    def root(self, host: str, command: str) -> str:
        return self.shell.run(self.ports[host], f"sudo sh -c {shlex.quote(command)}", timeout=300)

    def playbook(self, playbook: str, *args: str):
        return run_playbook(playbook, *args, inventory=self.inventory)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("move")
    inventory = work / "inventory"
    ports = write_inventory(inventory)
    env = {"ROCM_FLEET_LAB_DIR": str(STATE_DIR), "ROCM_FLEET_LAB_INVENTORY": str(inventory),
           "ROCM_FLEET_LAB_MIRROR_PORT": str(MIRROR_PORT)}
    # run_playbook takes the lab's paths from the environment, as the inventory's connection settings do.
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        try:
            rocm_fleet("lab", "reset", env=env, check=False)
            up = rocm_fleet("lab", "up", env=env, check=False)
            assert up.returncode == 0, up.stdout + up.stderr
            instance = MoveLab(LabShell(STATE_DIR), ports, inventory, work / "reports")
            converged = instance.playbook("site.yml")
            assert converged.returncode == 0, converged.tail()
            yield instance
        finally:
            reset = rocm_fleet("lab", "reset", env=env, check=False)
            assert reset.returncode == 0, reset.stdout + reset.stderr


def default_release(lab: MoveLab, host: str) -> str:
    """The directory the host's default release resolves to, on either stream."""
    return lab.root(host, "if [ -e /opt/rocm/core ]; then readlink -f /opt/rocm/core; else readlink -f /opt/rocm; fi"
                    ).strip()


def release_packages(lab: MoveLab, host: str) -> list[str]:
    """The release packages installed, from the host's own package database (rpm on the RHEL family)."""
    patterns = "'rocm-core*' 'amdrocm-sysdeps*'"
    rpm = f"rpm -qa --qf 'ii %{{NAME}}\\n' {patterns}"
    dpkg = f"dpkg-query -W -f='${{db:Status-Abbrev}} ${{Package}}\\n' {patterns} 2>/dev/null || true"
    listing = lab.root(host, f"if [ -e /etc/redhat-release ]; then {rpm}; else {dpkg}; fi")
    # db:Status-Abbrev: the wanted state (i install, h hold), then the current one (i installed).
    return sorted(line.split()[1] for line in listing.splitlines() if line[1:2] == "i")


def record_exists(lab: MoveLab, host: str) -> bool:
    return lab.root(host, "test -e /var/lib/rocm-fleet/upgrade.json && echo yes || echo no").strip() == "yes"


def move(lab: MoveLab, *args: str):
    return lab.playbook("playbooks/upgrade.yml", "-l", LIMIT, "-e", f"upgrade_rocm_version={TARGET}",
                        "-e", "upgrade_serial=1", "-e", f"rollout_reports_dir={lab.reports}", *args)


def rollback(lab: MoveLab, host: str, *args: str):
    return lab.playbook("playbooks/upgrade.yml", "-l", host, "-e", "upgrade_rollback=true",
                        "-e", f"rollout_reports_dir={lab.reports}", *args)


def compliant(lab: MoveLab, hosts: str, *args: str) -> None:
    """compliance.yml fails on any drift: the hosts as the inventory declares them (7.2.3), or as ``args`` do."""
    run = lab.playbook("playbooks/compliance.yml", "-l", hosts, "-e", "compliance_fail_on_drift=true", *args)
    assert run.returncode == 0, run.tail()


def shipped_files(pattern: str) -> list[str]:
    """The regular files the mirror's packages matching ``pattern`` ship (dpkg-deb -c on the controller)."""
    debs = sorted((STATE_DIR / "mirror" / "www").glob(pattern))
    assert debs, pattern
    listing = subprocess.run(["sh", "-c", " ".join(f"dpkg-deb -c {shlex.quote(str(deb))};" for deb in debs)],
                             capture_output=True, text=True, check=True).stdout
    return sorted({line.split()[5].lstrip(".") for line in listing.splitlines() if line.startswith("-")})


def own_files(lab: MoveLab, host: str, package: str, files: list[str]) -> None:
    """A site package named ``package`` owning those of ``files`` the host lacks, built and installed on the host."""
    script = "\n".join([
        "set -e", "d=$(mktemp -d)", "mkdir -p $d/pkg/DEBIAN",
        *(f"[ -e {shlex.quote(path)} ] || install -D /dev/null $d/pkg{shlex.quote(path)}" for path in files),
        f"printf 'Package: {package}\\nVersion: 1.0\\nArchitecture: all\\nMaintainer: site\\n"
        f"Description: site files\\n' > $d/pkg/DEBIAN/control",
        "dpkg-deb -b $d/pkg $d/site.deb >/dev/null", "dpkg -i $d/site.deb >/dev/null", "rm -rf $d"])
    lab.root(host, script)


def break_prerm(lab: MoveLab, host: str) -> None:
    """The legacy release package's pre-removal script fails (the package's own is kept aside)."""
    lab.root(host, f"[ ! -e {PRERM} ] || mv {PRERM} {PRERM}.kept; printf '#!/bin/sh\\necho site prerm refuses >&2\\n"
                   f"exit 1\\n' > {PRERM}; chmod 755 {PRERM}")


def mend_prerm(lab: MoveLab, host: str) -> None:
    lab.root(host, f"rm -f {PRERM}; [ ! -e {PRERM}.kept ] || mv {PRERM}.kept {PRERM}")


def report(lab: MoveLab, name: str = "upgrade") -> dict[str, dict]:
    document = json.loads((lab.reports / f"{name}.json").read_text())
    return {entry["host"]: entry for entry in document["hosts"]}


def test_check_mode_shows_the_move_and_changes_nothing(lab):
    run = move(lab, "--check")
    assert run.returncode == 0, run.tail()
    assert f"would remove rocm-core{LEGACY} (legacy), install ROCm {TARGET} (core_sdk_10)" in run.output, run.tail()
    planned = report(lab, "upgrade.check")
    assert {host: (entry["from"], entry["from_stream"], entry["to"], entry["to_stream"])
            for host, entry in planned.items()} == dict.fromkeys(HOSTS, (LEGACY, "legacy", TARGET, "core_sdk_10"))
    assert all(default_release(lab, host) == f"/opt/rocm-{LEGACY}" for host in HOSTS)
    assert not any(record_exists(lab, host) for host in HOSTS)


def test_a_hold_or_lock_that_would_block_the_move_stops_every_host_before_any_change(lab):
    lab.root(CANARY, f"apt-mark hold {HELD}")
    lab.root(SECOND, "dnf versionlock add amdgpu-dkms")
    refused = move(lab)
    lab.root(CANARY, f"apt-mark unhold {HELD}")
    lab.root(SECOND, "dnf versionlock clear")
    assert refused.returncode != 0
    assert f"{CANARY}: a package hold or version lock would block this run" in refused.output, refused.tail()
    assert f"apt-mark hold on {HELD}" in refused.output and f"apt-mark unhold {HELD}" in refused.output
    assert f"{SECOND}: a package hold or version lock would block" in refused.output, refused.tail()
    assert "dnf versionlock on amdgpu-dkms" in refused.output and "dnf versionlock delete amdgpu-dkms" in refused.output
    assert not any(refused.changed_tasks.values()), refused.changed_tasks
    assert all(default_release(lab, host) == f"/opt/rocm-{LEGACY}" for host in HOSTS)
    assert not any(record_exists(lab, host) for host in HOSTS)


def test_a_failed_move_stops_the_rollout_and_leaves_the_host_on_its_release(lab):
    break_prerm(lab, CANARY)
    stopped = move(lab)
    assert stopped.returncode != 0
    assert (lab.reports / "upgrade.json").exists(), stopped.tail()
    hosts = report(lab)
    assert hosts[CANARY]["outcome"] == "failed" and hosts[CANARY]["step"] == "install", hosts[CANARY]
    # dpkg's own words, as the package module reports them.
    assert f"installed {HELD} package pre-removal script subprocess returned error exit status 1" in hosts[CANARY][
        "reason"], hosts[CANARY]["reason"]
    assert (hosts[CANARY]["from_stream"], hosts[CANARY]["to_stream"]) == ("legacy", "core_sdk_10")
    # The later batch was never touched: no task ran on it.
    assert hosts[SECOND]["outcome"] == "not_started", stopped.tail()
    assert SECOND not in stopped.changed_tasks and not record_exists(lab, SECOND)
    assert default_release(lab, SECOND) == f"/opt/rocm-{LEGACY}"
    # The failed host still runs 7.2.3, as its inventory declares it, and is compliant against it.
    assert default_release(lab, CANARY) == f"/opt/rocm-{LEGACY}"
    assert release_packages(lab, CANARY) == [HELD]
    compliant(lab, CANARY)
    context = json.loads((lab.reports / "upgrade.json").read_text())["context"]
    assert context["rollback_command"].endswith(f"-e upgrade_rollback=true -l {CANARY}"), context


def test_a_rollback_of_the_failed_host_leaves_it_compliant_on_its_release(lab):
    back = rollback(lab, CANARY)
    assert back.returncode == 0, back.tail()
    assert report(lab, "rollback")[CANARY]["outcome"] in ("done", "skipped")
    assert default_release(lab, CANARY) == f"/opt/rocm-{LEGACY}"
    assert release_packages(lab, CANARY) == [HELD]
    compliant(lab, CANARY)


def test_a_move_that_fails_at_the_driver_puts_the_legacy_release_back(lab):
    """The legacy packages went, the target came, then the driver step fails (dpkg will not unpack the driver line's
    amdgpu-dkms over a site package's file): the host gets its legacy release back (the target's stream removed,
    7.2.3 installed again) with its driver, compliant."""
    driver = lab.root(CANARY, "dpkg-query -W -f='${Version}' amdgpu-dkms").strip()
    mend_prerm(lab, CANARY)
    sources = [path for path in shipped_files(DRIVER_DEBS) if path.startswith("/usr/src/amdgpu-")]
    own_files(lab, CANARY, "site-files-driver", sources)
    stopped = move(lab)
    assert stopped.returncode != 0
    hosts = report(lab)
    assert hosts[CANARY]["outcome"] == "failed" and hosts[CANARY]["step"] == "driver", hosts[CANARY]
    assert "which is also in package site-files-driver" in hosts[CANARY]["reason"], hosts[CANARY]["reason"]
    assert hosts[SECOND]["outcome"] == "not_started" and SECOND not in stopped.changed_tasks, stopped.tail()
    assert default_release(lab, CANARY) == f"/opt/rocm-{LEGACY}", stopped.tail()
    assert release_packages(lab, CANARY) == [HELD]
    assert lab.root(CANARY, "dpkg-query -W -f='${Version}' amdgpu-dkms").strip() == driver
    compliant(lab, CANARY)


def test_after_the_cause_is_removed_the_move_completes_and_drift_is_clean(lab):
    lab.root(CANARY, "dpkg -r site-files-driver")
    finished = move(lab)
    assert finished.returncode == 0, finished.tail()
    hosts = report(lab)
    assert {host: entry["outcome"] for host, entry in hosts.items()} == {CANARY: "done", SECOND: "done"}
    for host in HOSTS:
        assert default_release(lab, host) == "/opt/rocm/core-10.1", host
        assert release_packages(lab, host) == ["amdrocm-sysdeps10.1"], host
    # The canary is an Ubuntu 22.04 host: it moved to AMD's Core SDK directory of its own release.
    identity = lab.root(CANARY, ". /etc/os-release && echo $ID $VERSION_ID"
                                " && cat /etc/apt/sources.list.d/amdrocm-stable.sources")
    assert identity.startswith("ubuntu 22.04\n") and "/rocm/core/packages/ubuntu2204/" in identity, identity
    # The Rocky host moved through dnf to AMD's RHEL 9 directory of the Core SDK, its legacy repository file gone.
    repos = lab.root(SECOND, "ls /etc/yum.repos.d && cat /etc/yum.repos.d/amdrocm-stable.repo")
    assert "/rocm/core/packages/rhel9/x86_64" in repos and "rocm.repo" not in repos.split(), repos
    compliant(lab, LIMIT, "-e", ON_TARGET)


def test_a_rollback_target_the_mirror_no_longer_serves_is_refused_before_any_change(lab):
    served = json.dumps({"repo_available_rocm_versions": ["10.0.0", TARGET]})
    refused = rollback(lab, CANARY, "-e", served)
    assert refused.returncode != 0
    assert f"{CANARY}: " in refused.output and LEGACY in refused.output, refused.tail()
    assert not any(refused.changed_tasks.values()), refused.changed_tasks
    assert default_release(lab, CANARY) == "/opt/rocm/core-10.1"


def test_a_rollback_that_fails_at_its_install_leaves_the_package_manager_working(lab):
    """dpkg refuses to unpack rocm-core7.2.3 over a site package's file, after apt unpacked packages that depend on
    it: what the failed install brought goes again, so apt works (its later calls would otherwise refuse, "Unmet
    dependencies"), and the report has dpkg's own words."""
    own_files(lab, CANARY, "site-files-legacy", [f"/opt/rocm-{LEGACY}/.info/version"])
    failed = rollback(lab, CANARY)
    lab.root(CANARY, "dpkg -r site-files-legacy")
    assert failed.returncode != 0
    entry = report(lab, "rollback")[CANARY]
    assert (entry["outcome"], entry["step"]) == ("failed", "rollback"), entry
    assert f"trying to overwrite '/opt/rocm-{LEGACY}/.info/version', which is also in package site-files-legacy" in \
        entry["reason"], entry["reason"]
    half_installed = lab.root(CANARY, "dpkg-query -W -f='${db:Status-Abbrev} ${Package}\\n' | grep '^.[UFHWt]' || true")
    assert half_installed.strip() == "", half_installed
    lab.root(CANARY, "apt-get check")


def test_a_rollback_of_a_finished_move_returns_the_host_to_its_legacy_release(lab):
    back = rollback(lab, CANARY)
    assert back.returncode == 0, back.tail()
    assert report(lab, "rollback")[CANARY]["outcome"] == "done"
    assert default_release(lab, CANARY) == f"/opt/rocm-{LEGACY}"
    assert HELD in release_packages(lab, CANARY) and "amdrocm-sysdeps10.1" not in release_packages(lab, CANARY)
    compliant(lab, CANARY)
