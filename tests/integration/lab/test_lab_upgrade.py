"""Rolling ROCm upgrades on the lab (playbooks/upgrade.yml): a canary and a batch, a failed host that stops the
rollout (at the install step, then after the switch at the driver step), a rerun that continues, a rollback, --check
and bad input.

Two hosts the lab's inventory pins to older legacy releases move to the legacy stream's newest served release
(7.2.3), in name order with upgrade_serial=1: mi210-01 (6.4.1, the canary) and mi250x-01 (6.3.3, the second
batch). That a batch after a failed one is never touched, test_lab_move.py shows in a lab of its own (its Rocky
host after its canary failed); a third host here cost the lab's own stream an upgrade and a rollback every CI run.
The module ends by rolling every host back, so later tests find the lab as site.yml leaves it.
"""

from __future__ import annotations

import json

import pytest
from fleet_testing.lab_site import run_playbook
from fleet_testing.provision_lab import sudo

pytestmark = pytest.mark.lab

CANARY, SECOND = "mi210-01", "mi250x-01"
HOSTS = (CANARY, SECOND)
LIMIT = ",".join(HOSTS)
TARGET = "7.2.3"
# A site's apt pin that keeps the target's rocm-core from installing: the cause of the second batch's first failure.
PIN = "/etc/apt/preferences.d/00-hold-rocm-core"
PIN_TEXT = f"Package: rocm-core{TARGET}\nPin: version *\nPin-Priority: -1\n"
# The driver the failed host must still have after its restore.
DRIVER = "amdgpu-dkms"


def default_release(lab, host: str) -> str:
    return sudo(lab, host, "readlink -f /opt/rocm").strip()


def driver_version(lab, host: str) -> str:
    return sudo(lab, host, f"dpkg-query -W -f='${{Version}}' {DRIVER}").strip()


def record_exists(lab, host: str) -> bool:
    return sudo(lab, host, "test -e /var/lib/rocm-fleet/upgrade.json && echo yes || echo no").strip() == "yes"


@pytest.fixture(scope="module")
def reports(compliant_lab, lab, tmp_path_factory):
    directory = tmp_path_factory.mktemp("rollout-reports")
    yield directory
    sudo(lab, SECOND, f"rm -f {PIN}")
    back = run_playbook("playbooks/upgrade.yml", "-l", LIMIT, "-e", "upgrade_rollback=true",
                        "-e", f"rollout_reports_dir={directory}")
    assert back.returncode == 0, back.tail()


def upgrade(reports, *args: str):
    return run_playbook("playbooks/upgrade.yml", "-l", LIMIT, "-e", f"upgrade_rocm_version={TARGET}",
                        "-e", "upgrade_serial=1", "-e", f"rollout_reports_dir={reports}", *args)


def report(reports, name: str = "upgrade") -> dict[str, dict]:
    document = json.loads((reports / f"{name}.json").read_text())
    return {entry["host"]: entry for entry in document["hosts"]}


def test_bad_input_fails_every_host_before_any_change(lab, reports):
    before = {host: default_release(lab, host) for host in HOSTS}
    unserved = upgrade(reports, "-e", "upgrade_rocm_version=7.2.4")
    assert unserved.returncode != 0
    served = "The repository serves 6.3.3, 6.4.1, 7.1.1, 7.2.3, 10.0.0, 10.1.0"
    assert "7.2.4" in unserved.output and served in unserved.output, unserved.tail()
    downgrade = run_playbook("playbooks/upgrade.yml", "-l", CANARY, "-e", "upgrade_rocm_version=6.3.3")
    assert downgrade.returncode != 0
    assert "6.3.3 is older than the host's 6.4.1: set upgrade_allow_downgrade=true" in downgrade.output
    for run in (unserved, downgrade):
        assert not any(run.changed_tasks.values()), run.changed_tasks
    assert {host: default_release(lab, host) for host in HOSTS} == before


def test_check_mode_shows_the_plan_and_changes_nothing(lab, reports):
    run = upgrade(reports, "--check")
    assert run.returncode == 0, run.tail()
    assert f"would install ROCm {TARGET} beside 6.4.1" in run.output
    planned = report(reports, "upgrade.check")
    assert {host: (entry["from"], entry["to"]) for host, entry in planned.items()} == {
        CANARY: ("6.4.1", TARGET), SECOND: ("6.3.3", TARGET)}
    assert default_release(lab, CANARY) == "/opt/rocm-6.4.1"
    assert not any(record_exists(lab, host) for host in HOSTS)


def test_a_failed_host_stops_the_rollout_and_a_rerun_continues(lab, reports):
    # The first run stops the host at the pin.
    sudo(lab, SECOND, f"printf '{PIN_TEXT}' > {PIN}")
    driver = driver_version(lab, SECOND)
    stopped = upgrade(reports)
    assert stopped.returncode != 0
    hosts = report(reports)
    assert hosts[CANARY]["outcome"] == "done"
    assert hosts[SECOND]["outcome"] == "failed" and hosts[SECOND]["step"] == "install", hosts[SECOND]
    # apt's own words, as the apt module reports them.
    assert f"rocm-core{TARGET}" in hosts[SECOND]["reason"], hosts[SECOND]["reason"]
    assert default_release(lab, CANARY) == f"/opt/rocm-{TARGET}"
    assert default_release(lab, SECOND) == "/opt/rocm-6.3.3"
    assert f"-e upgrade_rollback=true -l {SECOND}" in stopped.output, stopped.tail()

    # The failed host is back on its release (the run's restore), with its driver, and compliant as its inventory
    # declares it (6.3.3; the target's packages stay installed beside it). A hold or lock that would block a run is
    # refused before any change: test_lab_move.py, on a Debian and a Rocky host.
    sudo(lab, SECOND, f"rm -f {PIN}")
    assert default_release(lab, SECOND) == "/opt/rocm-6.3.3", stopped.tail()
    assert driver_version(lab, SECOND) == driver
    compliant = run_playbook("playbooks/compliance.yml", "-l", SECOND, "-e", "compliance_fail_on_drift=true")
    assert compliant.returncode == 0, compliant.tail()

    finished = upgrade(reports)
    assert finished.returncode == 0, finished.tail()
    hosts = report(reports)
    assert {host: entry["outcome"] for host, entry in hosts.items()} == {
        CANARY: "skipped", SECOND: "done"}
    assert all(default_release(lab, host) == f"/opt/rocm-{TARGET}" for host in HOSTS)
    # Each host passed its verify step (every compliance check against the target). Checked once more on its own,
    # as an inventory that moved to the target and keeps the old release beside it declares the canary.
    declared = {"preflight_rocm_version": TARGET, "packages_rocm_versions": ["6.4.1", TARGET]}
    compliant = run_playbook("playbooks/compliance.yml", "-l", CANARY, "-e", "compliance_fail_on_drift=true",
                             "-e", json.dumps(declared))
    assert compliant.returncode == 0, compliant.tail()

    again = upgrade(reports)
    assert again.returncode == 0, again.tail()
    assert all(again.recap[host]["changed"] == 0 for host in HOSTS), again.recap


def test_a_rollback_returns_the_failed_host_to_its_release_compliant(lab, reports):
    back = run_playbook("playbooks/upgrade.yml", "-l", SECOND, "-e", "upgrade_rollback=true",
                        "-e", f"rollout_reports_dir={reports}")
    assert back.returncode == 0, back.tail()
    assert report(reports, "rollback")[SECOND]["outcome"] == "done"
    assert default_release(lab, SECOND) == "/opt/rocm-6.3.3"
    assert "rocm-core7.2.3" not in sudo(lab, SECOND, "dpkg-query -W -f='${Package}\\n' 'rocm-core*'")
    # mi250x-01's inventory pins 6.3.3: compliant again as the inventory declares it, its 6.3.3 driver loaded.
    compliant = run_playbook("playbooks/compliance.yml", "-l", SECOND, "-e", "compliance_fail_on_drift=true")
    assert compliant.returncode == 0, compliant.tail()
