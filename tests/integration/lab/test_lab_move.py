"""The move of GPU hosts from the legacy stream (7.2.3) to the ROCm Core SDK 10.x with playbooks/upgrade.yml: a
canary and two batches, one host of the second batch failing its move (its legacy packages cannot be removed), the
rollout stopping after that batch, a rollback of that host and of a finished one, a rerun that completes.

Hosts, in name order with upgrade_serial=1: mi210-01 (the canary) and rx7900xtx-01 (the third batch), converged
to 7.2.3 by this module (site.yml -e preflight_rocm_version=7.2.3), and mi300x-01 (the second batch), which the
lab's inventory pins to 7.2.3. AMD's 7.14+ instructions: "If you have ROCm 7.2.4 or older installed, please
uninstall it before proceeding" (shared/reference/rocm-core-sdk.md). The module ends with each host back on its
inventory's release.
"""

from __future__ import annotations

import json

import pytest
from fleet_testing.lab_site import run_playbook
from fleet_testing.provision_lab import sudo

pytestmark = [pytest.mark.lab, pytest.mark.slow]

CANARY, SECOND, THIRD = "mi210-01", "mi300x-01", "rx7900xtx-01"
HOSTS = (CANARY, SECOND, THIRD)
LIMIT = ",".join(HOSTS)
LEGACY, TARGET = "7.2.3", "10.1.0"
# A site's hold on its running ROCm (apt-mark hold, as sites keep unattended upgrades off it): apt refuses to remove
# a held package, so the move's first step fails on that host.
HELD = f"rocm-core{LEGACY}"
ON_LEGACY = json.dumps({"preflight_rocm_version": LEGACY})
ON_TARGET = json.dumps({"preflight_rocm_version": TARGET})


def default_release(lab, host: str) -> str:
    """The directory the host's default release resolves to, on either stream."""
    return sudo(lab, host, "if [ -e /opt/rocm/core ]; then readlink -f /opt/rocm/core; else readlink -f /opt/rocm; fi"
                ).strip()


def release_packages(lab, host: str) -> list[str]:
    listing = sudo(lab, host, "dpkg-query -W -f='${db:Status-Abbrev} ${Package}\\n' 'rocm-core*' 'amdrocm-sysdeps*'"
                              " 2>/dev/null || true")
    return sorted(line.split()[1] for line in listing.splitlines() if line.startswith("ii"))


def record_exists(lab, host: str) -> bool:
    return sudo(lab, host, "test -e /var/lib/rocm-fleet/upgrade.json && echo yes || echo no").strip() == "yes"


def move(reports, *args: str, limit: str = LIMIT):
    return run_playbook("playbooks/upgrade.yml", "-l", limit, "-e", f"upgrade_rocm_version={TARGET}",
                        "-e", "upgrade_serial=1", "-e", f"rollout_reports_dir={reports}", *args)


def rollback(reports, host: str, *args: str):
    return run_playbook("playbooks/upgrade.yml", "-l", host, "-e", "upgrade_rollback=true",
                        "-e", f"rollout_reports_dir={reports}", *args)


def compliant(host: str, declared: str) -> None:
    run = run_playbook("playbooks/compliance.yml", "-l", host, "-e", "compliance_fail_on_drift=true", "-e", declared)
    assert run.returncode == 0, run.tail()


def report(reports, name: str = "upgrade") -> dict[str, dict]:
    document = json.loads((reports / f"{name}.json").read_text())
    return {entry["host"]: entry for entry in document["hosts"]}


@pytest.fixture(scope="module")
def reports(compliant_lab, lab, tmp_path_factory):
    """The three hosts on 7.2.3, converged as a site declares them; afterwards each back on its inventory's release."""
    onto_legacy = run_playbook("site.yml", "-l", f"{CANARY},{THIRD}", "-e", ON_LEGACY)
    assert onto_legacy.returncode == 0, onto_legacy.tail()
    directory = tmp_path_factory.mktemp("move-reports")
    yield directory
    sudo(lab, SECOND, f"apt-mark unhold {HELD}")
    for host in HOSTS:
        rollback(directory, host)
    back = run_playbook("site.yml", "-l", LIMIT)
    assert back.returncode == 0, back.tail()


def test_check_mode_shows_the_move_and_changes_nothing(lab, reports):
    run = move(reports, "--check")
    assert run.returncode == 0, run.tail()
    assert f"would remove rocm-core{LEGACY} (legacy), install ROCm {TARGET} (core_sdk_10)" in run.output, run.tail()
    planned = report(reports, "upgrade.check")
    assert {host: (entry["from"], entry["from_stream"], entry["to"], entry["to_stream"])
            for host, entry in planned.items()} == dict.fromkeys(HOSTS, (LEGACY, "legacy", TARGET, "core_sdk_10"))
    assert all(default_release(lab, host) == f"/opt/rocm-{LEGACY}" for host in HOSTS)
    assert not any(record_exists(lab, host) for host in HOSTS)


def test_a_failed_move_stops_the_rollout_and_leaves_the_host_on_its_release(lab, reports):
    sudo(lab, SECOND, f"apt-mark hold {HELD}")
    stopped = move(reports)
    assert stopped.returncode != 0
    hosts = report(reports)
    assert hosts[CANARY]["outcome"] == "done", hosts[CANARY]
    assert hosts[SECOND]["outcome"] == "failed" and hosts[SECOND]["step"] == "install", hosts[SECOND]
    # apt's own words, as the package module reports them.
    assert "Held packages were changed" in hosts[SECOND]["reason"], hosts[SECOND]["reason"]
    assert (hosts[SECOND]["from_stream"], hosts[SECOND]["to_stream"]) == ("legacy", "core_sdk_10")
    assert hosts[THIRD]["outcome"] == "not_started", stopped.tail()
    assert THIRD not in stopped.changed_tasks and not record_exists(lab, THIRD)
    assert default_release(lab, THIRD) == f"/opt/rocm-{LEGACY}"
    assert default_release(lab, CANARY) == "/opt/rocm/core-10.1"
    assert release_packages(lab, CANARY) == ["amdrocm-sysdeps10.1"]
    # The failed host still runs 7.2.3, as its inventory declares it, and is compliant against it.
    assert default_release(lab, SECOND) == f"/opt/rocm-{LEGACY}"
    assert release_packages(lab, SECOND) == [HELD]
    compliant(SECOND, ON_LEGACY)
    assert f"-e upgrade_rollback=true -l {SECOND}" in stopped.output, stopped.tail()


def test_a_rollback_of_the_failed_host_leaves_it_compliant_on_its_release(lab, reports):
    back = rollback(reports, SECOND)
    assert back.returncode == 0, back.tail()
    assert report(reports, "rollback")[SECOND]["outcome"] in ("done", "skipped")
    assert default_release(lab, SECOND) == f"/opt/rocm-{LEGACY}"
    assert release_packages(lab, SECOND) == [HELD]
    compliant(SECOND, ON_LEGACY)


def test_a_rollback_target_the_mirror_no_longer_serves_is_refused_before_any_change(lab, reports):
    served = json.dumps({"repo_available_rocm_versions": ["10.0.0", TARGET]})
    refused = rollback(reports, CANARY, "-e", served)
    assert refused.returncode != 0
    assert f"{CANARY}: " in refused.output and LEGACY in refused.output, refused.tail()
    assert not any(refused.changed_tasks.values()), refused.changed_tasks
    assert default_release(lab, CANARY) == "/opt/rocm/core-10.1"


def test_after_the_cause_is_removed_the_move_completes_and_drift_is_clean(lab, reports):
    sudo(lab, SECOND, f"apt-mark unhold {HELD}")
    finished = move(reports)
    assert finished.returncode == 0, finished.tail()
    hosts = report(reports)
    assert {host: entry["outcome"] for host, entry in hosts.items()} == {
        CANARY: "skipped", SECOND: "done", THIRD: "done"}
    for host in HOSTS:
        assert default_release(lab, host) == "/opt/rocm/core-10.1", host
        assert release_packages(lab, host) == ["amdrocm-sysdeps10.1"], host
    compliant(LIMIT, ON_TARGET)


def test_a_rollback_of_a_finished_move_returns_the_host_to_its_legacy_release(lab, reports):
    back = rollback(reports, CANARY)
    assert back.returncode == 0, back.tail()
    assert report(reports, "rollback")[CANARY]["outcome"] == "done"
    assert default_release(lab, CANARY) == f"/opt/rocm-{LEGACY}"
    assert HELD in release_packages(lab, CANARY) and "amdrocm-sysdeps10.1" not in release_packages(lab, CANARY)
    compliant(CANARY, ON_LEGACY)
