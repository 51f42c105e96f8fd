"""Onboarding (playbooks/onboard.yml) of new lab hosts, in a lab of their own: an Instinct training node, two
Radeon workstations (a W7900, the RDNA3 workstation class, and the RX 6700 XT AMD never listed) and a login node.
The gates do not differ between profiles of one kind; site.yml converges the MI250X, MI210 and RX 7900 XTX
profiles in inventory/lab, and each host onboarded here costs the CI run a host's provisioning and reboot (the
RX 7900 XTX profile is the mismatched host below, which the preflight gate stops).

The hosts are new to the site: a separate lab instance (own state dir, ports and mirror)
with a temporary inventory that groups them as inventory/lab groups its hosts, so the
site's group_vars apply. One host declares class mi300x but has an RX 7900 XTX: the
preflight gate must stop it and leave it untouched.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from pathlib import Path

import pytest
import yaml
from fleet_testing.lab_helpers import LabShell, lab_available, rocm_fleet
from fleet_testing.lab_site import PlaybookRun, link_site_group_vars, run_playbook
from fleet_testing.provision_lab import SERVED_ROCM_VERSIONS

pytestmark = pytest.mark.lab

FIRST_PORT = 2501
MIRROR_PORT = 8670
STATE_DIR = Path("/var/lib/rocm-fleet/lab-onboard-test")

# Host, lab profile, inventory group, host variables (those inventory/lab keeps in host_vars).
NEW_HOSTS = [
    ("new-mi300x", "mi300x-8", "mi300x_training", {}),
    ("new-w7900", "w7900-2", "radeon_workstations",
     {"preflight_expected_class": "w7900", "preflight_expected_gpu_count": 2, "preflight_workload": "llm"}),
    ("new-rx6700xt", "rx6700xt-1", "radeon_workstations",
     {"preflight_expected_class": "rx6700xt", "preflight_expected_gpu_count": 1,
      "preflight_accept_unsupported": (
          "{{ lab_accept_lab_kernel + lab_accept_debian12_radeon + [{'what': 'gpu', 'value': 'rx6700xt', "
          "'reason': 'consumer RDNA2 card AMD never listed for ROCm; runs as gfx1030 through "
          "HSA_OVERRIDE_GFX_VERSION'}] }}")}),
    ("new-login", "nogpu", "service_nodes", {}),
]
# Declared an MI300X training node (the group says class mi300x, 8 GPUs); racked with one RX 7900 XTX.
MISMATCHED_HOST = ("new-mismatch", "rx7900xtx-1", "mi300x_training", {})
# A stand-in burn-in tool on the login node: the lab has neither RVS nor rocm-bandwidth-test.
FAKE_BURNIN_TOOL = "/usr/local/bin/fake-rocm-bandwidth-test"
FAKE_BURNIN_LOG = "/var/tmp/fake-burnin.args"
FAKE_BURNIN_HOST = "new-login"


def write_onboarding_inventory(directory: Path, first_port: int, mirror_port: int) -> dict[str, int]:
    """An inventory of the new hosts with the lab's group_vars; returns host -> SSH port."""
    directory.mkdir(parents=True, exist_ok=True)
    groups: dict[str, dict] = {}
    ports = {}
    for offset, (host, profile, group, host_vars) in enumerate([*NEW_HOSTS, MISMATCHED_HOST]):
        ports[host] = first_port + offset
        groups.setdefault(group, {"hosts": {}})["hosts"][host] = {
            "lab_profile": profile, "ansible_port": ports[host], **host_vars}
    groups["service_nodes"]["hosts"][FAKE_BURNIN_HOST]["onboard_burnin_tools"] = [
        {"name": "rocm-bandwidth-test", "path": FAKE_BURNIN_TOOL, "args": ["-a"]}]
    gpu_groups = {name: groups.pop(name) for name in list(groups) if name != "service_nodes"}
    hosts = {"all": {
        # New hosts carry no workload yet: onboarding may reboot every one of them.
        "vars": {"onboard_reboot_allowed": True},
        "children": {"gpu_servers": {"children": gpu_groups}, **groups}}}
    (directory / "hosts.yml").write_text("---\n" + yaml.safe_dump(hosts, sort_keys=False))
    # The site's group_vars as they are, plus this instance's mirror port.
    link_site_group_vars(directory, mirror_port)
    return ports


def _fake_burnin_script(exit_code: int) -> str:
    return (f"#!/bin/sh\necho \"$@\" >> {FAKE_BURNIN_LOG}\n"
            f"echo 'Unidirectional copy peak bandwidth GB/s'\nexit {exit_code}\n")


def _install_fake_burnin(shell: LabShell, port: int, exit_code: int) -> None:
    script = _fake_burnin_script(exit_code).replace("'", "'\\''")
    shell.run(port, f"printf '%s' '{script}' | sudo tee {FAKE_BURNIN_TOOL} >/dev/null"
                    f" && sudo chmod 0755 {FAKE_BURNIN_TOOL}")


def _snapshot(shell: LabShell, port: int) -> str:
    """Path, type, mode (and a file's size) of everything under /etc, /opt and /usr: what provisioning touches.

    Python's byte-code caches are left out: running Ansible's modules may write them."""
    listing = ("sudo find /etc /opt /usr -xdev -name __pycache__ -prune"
               " -o -type f -printf '%p f %s %m\\n' -o -printf '%p %y %m\\n' | sort")
    return shell.run(port, listing, timeout=120)


def _traces_of(state_dir: Path) -> dict:
    """Mounts and processes (pid, command line) that still mention the lab's state directory."""
    marker = str(state_dir)
    mounts = [line for line in Path("/proc/self/mountinfo").read_text().splitlines() if marker in line]
    processes = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            texts = [Path(f"/proc/{entry}/{name}").read_bytes() for name in ("cmdline", "environ")]
        except OSError:
            continue
        if int(entry) != os.getpid() and any(marker.encode() in text for text in texts):
            processes.append((int(entry), texts[0].replace(b"\0", b" ").decode(errors="replace")))
    return {"mounts": mounts, "processes": processes}


def _traces_after_down(state_dir: Path, wait: float = 70) -> dict:
    """Traces once they are gone, or after `wait` seconds: Ansible's SSH control masters (ControlPersist
    60s, their command lines name the lab's key) exit when they notice their host's sshd is gone."""
    deadline = time.monotonic() + wait
    while (traces := _traces_of(state_dir)) != {"mounts": [], "processes": []} and time.monotonic() < deadline:
        time.sleep(1)
    return traces


def _problems(run: PlaybookRun) -> str:
    """What went wrong in a run (each failure line and the three after it) and its tail: the tail alone may miss it."""
    lines = run.output.splitlines()
    starts = [index for index, line in enumerate(lines) if "UNREACHABLE!" in line or "fatal:" in line]
    return "\n".join("\n".join(lines[index:index + 4]) for index in starts) + "\n...\n" + run.tail(2000)


class Onboarding:
    """The new-host lab, its shell, ports and results, and the one onboarding run over all its hosts."""

    def __init__(self, shell: LabShell, ports: dict[str, int], inventory: Path, results: Path):
        self.shell, self.ports, self.inventory, self.results = shell, ports, inventory, results
        self.mismatch_before = ""
        self.run: PlaybookRun | None = None

    def result(self, host: str) -> dict:
        return json.loads((self.results / host / "result.json").read_text())

    def baseline(self, host: str) -> dict:
        return json.loads((self.results / host / "baseline.json").read_text())


@pytest.fixture(scope="module")
def onboarding(tmp_path_factory):
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("onboarding")
    inventory = work / "inventory"
    ports = write_onboarding_inventory(inventory, FIRST_PORT, MIRROR_PORT)
    env = {"ROCM_FLEET_LAB_DIR": str(STATE_DIR), "ROCM_FLEET_LAB_INVENTORY": str(inventory),
           "ROCM_FLEET_LAB_MIRROR_PORT": str(MIRROR_PORT)}
    # run_playbook takes the lab's paths from the environment, as the inventory's connection settings do.
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        try:
            # New hosts are bare: drop whatever an interrupted run left on disk.
            rocm_fleet("lab", "reset", env=env, check=False)
            up = rocm_fleet("lab", "up", env=env, check=False)
            assert up.returncode == 0, up.stdout + up.stderr
            yield Onboarding(LabShell(STATE_DIR), ports, inventory, work / "results")
        finally:
            # reset: down, then drop the hosts' disks (provisioned hosts are not worth keeping).
            reset = rocm_fleet("lab", "reset", env=env, check=False)
            assert reset.returncode == 0, reset.stdout + reset.stderr
            assert _traces_after_down(STATE_DIR) == {"mounts": [], "processes": []}


@pytest.fixture(scope="module")
def onboarded(onboarding) -> Onboarding:
    """One onboarding run over every new host, with a stand-in burn-in tool on the login node."""
    _install_fake_burnin(onboarding.shell, onboarding.ports[FAKE_BURNIN_HOST], exit_code=0)
    onboarding.mismatch_before = _snapshot(onboarding.shell, onboarding.ports[MISMATCHED_HOST[0]])
    onboarding.run = run_playbook("playbooks/onboard.yml", "-e", f"onboard_results_dir={onboarding.results}",
                                  inventory=onboarding.inventory)
    return onboarding


def test_every_profile_is_onboarded_with_a_passing_baseline(onboarded):
    run = onboarded.run
    for host, profile, _group, _vars in NEW_HOSTS:
        assert run.recap[host]["failed"] == 0 and run.recap[host]["unreachable"] == 0, (host, _problems(run))
        result = onboarded.result(host)
        assert result["onboarded"] is True, (host, result)
        assert result["passed_gates"] == ["discover", "preflight", "provision", "reboot", "verify", "burnin"]
        baseline_file = onboarded.results / host / "baseline.json"
        assert stat.S_IMODE(baseline_file.stat().st_mode) == 0o644
        baseline = onboarded.baseline(host)
        compliance = baseline["compliance"]
        assert compliance["summary"]["total"] > 0
        assert compliance["summary"]["fail"] == compliance["summary"]["error"] == 0, (host, compliance["summary"])
        # Skipped: what does not apply to the host (no RAS on a Radeon, no systemd as PID 1 in the lab); no
        # unknown, warning or failure.
        assert {check["status"] for check in compliance["results"]} <= {"pass", "skipped"}, (host, [
            (check["id"], check["status"]) for check in compliance["results"] if check["status"] != "pass"])
        assert baseline["gpu"]["count"] == baseline["gpu_discovered"]["count"], (host, profile)
        assert baseline["preflight_decision"]["rocm_version"] in SERVED_ROCM_VERSIONS
        assert f"{host}: onboarded" in (onboarded.results / host / "summary.txt").read_text()
    assert f"{len(NEW_HOSTS)} of {len(NEW_HOSTS) + 1} hosts onboarded" in run.output


def test_burnin_runs_the_installed_tool_and_is_skipped_where_none_is(onboarded):
    login = onboarded.result(FAKE_BURNIN_HOST)["burnin"]
    assert login["status"] == "pass" and login["tool"] == "rocm-bandwidth-test", login
    assert onboarded.shell.run(onboarded.ports[FAKE_BURNIN_HOST], f"cat {FAKE_BURNIN_LOG}").split() == ["-a"]
    for host, *_ in NEW_HOSTS:
        if host != FAKE_BURNIN_HOST:
            burnin = onboarded.result(host)["burnin"]
            assert burnin["status"] == "skipped", (host, burnin)
            assert "rocm-validation-suite, rocm-bandwidth-test" in burnin["message"]


def test_declared_mi300x_with_other_hardware_stops_at_preflight_unchanged(onboarded):
    host = MISMATCHED_HOST[0]
    run = onboarded.run
    assert run.returncode != 0, "the run must fail when a host is not onboarded"
    assert run.recap[host]["failed"] == 1
    result = onboarded.result(host)
    assert result["onboarded"] is False and result["gate"] == "preflight", result
    assert "inventory expects GPU class mi300x, the host has 1 x AMD Radeon RX 7900 XTX" in result["reason"]
    assert result["passed_gates"] == ["discover"]
    assert not (onboarded.results / host / "baseline.json").exists()
    # Only the controller changed: the host's results were written there.
    on_the_host = [name for name in run.changed_tasks.get(host, []) if not any(
        record in name for record in ("Create the host's results directory", "Write the host's result and summary"))]
    assert on_the_host == []
    port = onboarded.ports[host]
    # The repo role's sources and pin, the environment role's profile (the lab's own Debian source stays).
    present = onboarded.shell.run(port, "ls -d /etc/apt/sources.list.d/rocm.* /etc/apt/sources.list.d/amdgpu.*"
                                  " /etc/apt/sources.list.d/amdrocm* /etc/apt/keyrings/*"
                                  " /etc/apt/preferences.d/rocm* /etc/profile.d/rocm.sh 2>/dev/null || true")
    assert present == "", present
    assert _snapshot(onboarded.shell, port) == onboarded.mismatch_before
    assert re.search(rf"{host} +NOT onboarded  preflight: host {host}:", run.output), run.tail()


def test_onboarded_hosts_pass_a_compliance_run_afterwards(onboarded):
    run = run_playbook("playbooks/compliance.yml", "-e", "compliance_fail_on_drift=true",
                       "--limit", f"all:!{MISMATCHED_HOST[0]}", inventory=onboarded.inventory)
    assert run.returncode == 0, _problems(run)
    assert set(run.recap) == {host for host, *_ in NEW_HOSTS}


def test_a_second_run_stops_a_failed_burnin_and_a_reboot_that_is_not_allowed(onboarded):
    """Runs after the others, on two onboarded hosts: the login node's stand-in tool now fails, and the
    W7900 host has a reboot marker while this run may not reboot. Earlier baselines stay."""
    login, workstation = FAKE_BURNIN_HOST, "new-w7900"
    earlier_baseline = onboarded.baseline(login)
    _install_fake_burnin(onboarded.shell, onboarded.ports[login], exit_code=3)
    onboarded.shell.run(onboarded.ports[workstation], "sudo mkdir -p /run/rocm-fleet/reboot-required"
                        " && sudo touch /run/rocm-fleet/reboot-required/firmware-update")
    run = run_playbook("playbooks/onboard.yml", "-e", f"onboard_results_dir={onboarded.results}",
                       "-e", "onboard_reboot_allowed=false", "--limit", f"{login},{workstation}",
                       inventory=onboarded.inventory)
    assert run.returncode != 0, run.tail()
    assert run.recap[login]["failed"] == run.recap[workstation]["failed"] == 1, _problems(run)

    result = onboarded.result(login)
    assert result["onboarded"] is False and result["gate"] == "burnin", result
    assert result["reason"].startswith("rocm-bandwidth-test failed (exit 3)"), result["reason"]
    assert result["passed_gates"] == ["discover", "preflight", "provision", "reboot", "verify"]
    assert onboarded.baseline(login) == earlier_baseline

    result = onboarded.result(workstation)
    assert result["gate"] == "reboot", result
    assert result["reason"].startswith("reboot needed but not allowed for this host (firmware-update)"), result
    assert result["passed_gates"] == ["discover", "preflight", "provision"]


def test_a_host_that_does_not_answer_stops_at_discover(tmp_path):
    """No lab needed: nothing listens on the port, and the run still reports the host."""
    inventory = tmp_path / "hosts.yml"
    inventory.write_text("---\nall:\n  hosts:\n    ghost-01:\n      ansible_host: 127.0.0.1\n"
                         "      ansible_port: 9\n      ansible_user: fleet\n")
    run = run_playbook("playbooks/onboard.yml", "-e", f"onboard_results_dir={tmp_path / 'results'}",
                       inventory=inventory, timeout=300)
    assert run.returncode != 0 and run.recap["ghost-01"]["failed"] == 1, run.tail()
    result = json.loads((tmp_path / "results" / "ghost-01" / "result.json").read_text())
    assert result["gate"] == "discover" and result["reason"].startswith("host unreachable:"), result
    assert "0 of 1 hosts onboarded" in run.output
