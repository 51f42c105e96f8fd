"""What a job really gets, on hosts that boot systemd: held-out states drift must find, each on its own host.

Each injection is made by hand, as an operator would (no lab fault), on one converged host of its own:

- a device-visibility variable in /etc/environment: every login session sees only GPU 0 (ROCM-ENV-007);
- a wrong HSA override in the systemd manager's DefaultEnvironment, applied with daemon-reexec (ROCM-ENV-006);
- the same written but not applied: pending until daemon-reexec or the next boot (ROCM-ENV-006);
- another release's library directory in a linker file, unpacked from that release's package, and the loader's
  cache rebuilt (ROCM-ENV-008).

Drift reports each on exactly its host with exactly its check ID; site.yml repairs none of them (each is a
file the roles do not own) and the report's repair text says who does; undone by hand, drift is clean again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fleet_testing.lab_ansible import adhoc
from fleet_testing.lab_drift import drift, failed_checks, shell
from fleet_testing.lab_site import run_playbook

from rocm_fleet.lab import paths

pytestmark = [pytest.mark.lab, pytest.mark.slow]

MANAGER_DROP_IN = "/etc/systemd/system.conf.d/50-site-gfx.conf"


def manager_default(value: str) -> str:
    setting = f"DefaultEnvironment=HSA_OVERRIDE_GFX_VERSION={value}"
    return f"mkdir -p /etc/systemd/system.conf.d && printf '[Manager]\\n{setting}\\n' > {MANAGER_DROP_IN}"


OTHER_RELEASE = "7.1.1"  # unpacked beside mi300x-01's 7.2.3, as a tarball or runfile install leaves it
OTHER_LINKER_FILE = "/etc/ld.so.conf.d/00-rocm-7.1.1.conf"
# host -> (how it is changed, how the change is undone, the check, words its message must have)
INJECTIONS = {
    "mi300x-02": (
        "echo HIP_VISIBLE_DEVICES=0 >> /etc/environment",
        "sed -i '/^HIP_VISIBLE_DEVICES=/d' /etc/environment",
        "ROCM-ENV-007",
        ["HIP_VISIBLE_DEVICES=0", "/etc/environment", "7 of 8 GPUs"],
    ),
    "w7900-01": (
        manager_default("10.3.0") + " && systemctl daemon-reexec",
        f"rm {MANAGER_DROP_IN} && systemctl daemon-reexec",
        "ROCM-ENV-006",
        ["HSA_OVERRIDE_GFX_VERSION=10.3.0", MANAGER_DROP_IN],
    ),
    "mi300x-cpx-01": (
        manager_default("9.4.2"),
        f"rm {MANAGER_DROP_IN}",
        "ROCM-ENV-006",
        ["HSA_OVERRIDE_GFX_VERSION=9.4.2", MANAGER_DROP_IN, "pending", "daemon-reexec"],
    ),
    "mi300x-01": (
        f"dpkg-deb -x /tmp/other-hip.deb / && echo /opt/rocm-{OTHER_RELEASE}/lib > {OTHER_LINKER_FILE} && ldconfig",
        f"rm -rf {OTHER_LINKER_FILE} /opt/rocm-{OTHER_RELEASE} /tmp/other-hip.deb && ldconfig",
        "ROCM-ENV-008",
        [f"/opt/rocm-{OTHER_RELEASE}/lib", OTHER_LINKER_FILE, "libamdhip64"],
    ),
}


def other_release_package() -> Path:
    """The other release's HIP runtime package for mi300x-01's suite, as the lab mirror serves it."""
    pool = paths.state_dir() / "mirror" / "www" / "rocm" / "apt" / OTHER_RELEASE / "pool" / "main" / "h"
    [deb] = sorted(pool.glob(f"hip-runtime-amd{OTHER_RELEASE}/hip-runtime-amd{OTHER_RELEASE}_*~22.04_amd64.deb"))
    return deb


def findings(report: dict) -> dict[str, set[str]]:
    return {name: failed_checks(host) for name, host in report["hosts"].items() if failed_checks(host)}


def check(report: dict, host: str, check_id: str) -> dict:
    return next(item for item in report["hosts"][host]["checks"] if item["id"] == check_id)


def test_each_held_out_state_is_found_on_its_host_alone_and_its_repair_named(compliant_lab, tmp_path):
    adhoc("mi300x-01", "ansible.builtin.copy", f"src={other_release_package()} dest=/tmp/other-hip.deb")
    try:
        for host, (inject, _undo, _check, _words) in INJECTIONS.items():
            shell(host, inject)
        code, report, result = drift(tmp_path / "injected")
        assert code == 2, result.stdout[-3000:]
        assert findings(report) == {host: {check_id} for host, (_i, _u, check_id, _w) in INJECTIONS.items()}
        for host, (_inject, _undo, check_id, words) in INJECTIONS.items():
            found = check(report, host, check_id)
            missing = [word for word in words if word not in found["message"]]
            assert not missing, (host, missing, found["message"])
            # Files no role owns: the report says a person repairs them, never site.yml.
            assert found["repair"].startswith("a person"), (host, found["repair"])

        # site.yml repairs what it says it repairs (none of these) and leaves each finding as it was.
        converge = run_playbook("site.yml", "--limit", ",".join(INJECTIONS))
        assert converge.returncode == 0, converge.tail()
        code, after, result = drift(tmp_path / "after-site")
        assert code == 2 and findings(after) == findings(report), result.stdout[-3000:]
    finally:
        for host, (_inject, undo, _check, _words) in INJECTIONS.items():
            adhoc(host, "ansible.builtin.shell", undo)
    code, clean, result = drift(tmp_path / "undone")
    assert code == 0, json.dumps(findings(clean)) + result.stdout[-2000:]
