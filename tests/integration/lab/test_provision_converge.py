"""Issue 4 on the lab: from bare hosts to working ones, a second run that changes nothing, bad inventory.

The session's `converged_lab` is the first site.yml run over the bare lab; these
tests read what it left and run site.yml once more (idempotence) and once with
broken role variables (limited to three hosts, failing before any change).
"""

from __future__ import annotations

import re

import pytest
import yaml
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision import data as rocm_data
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.streams import install_root, stream_tools
from fleet_testing.lab_ansible import declared_releases, gpu_facts
from fleet_testing.lab_helpers import REPO
from fleet_testing.lab_site import run_playbook
from fleet_testing.provision_lab import (
    CREATED_USER,
    GPU_HOSTS,
    HOSTS,
    authorize_login_key,
    etc_checksums,
    failure_of,
    login_session,
    overlay_inventory,
    port,
    revoke_login_key,
)

from rocm_fleet.hardware.profile import load_profile

pytestmark = [pytest.mark.lab, pytest.mark.slow]

STREAMS = rocm_data.release_streams()[0]
MATRIX = rocm_data.preflight_data()[1]

# What /etc/profile.d/rocm.sh exports besides PATH, per GPU class: PyTorch builds
# for the class's gfx target; the RX 6700 XT (gfx1031, no ROCm code objects)
# runs as gfx1030 through HSA_OVERRIDE_GFX_VERSION, AMD's documented workaround.
PROFILE_EXPORTS = {
    "mi300x-01": {"ROCM_PATH": "/opt/rocm", "PYTORCH_ROCM_ARCH": "gfx942"},
    "mi300x-02": {"ROCM_PATH": "/opt/rocm", "PYTORCH_ROCM_ARCH": "gfx942"},
    "mi300x-03": {"ROCM_PATH": "/opt/rocm", "PYTORCH_ROCM_ARCH": "gfx942"},
    "mi300x-cpx-01": {"ROCM_PATH": "/opt/rocm", "PYTORCH_ROCM_ARCH": "gfx942"},
    "mi250x-01": {"ROCM_PATH": "/opt/rocm", "PYTORCH_ROCM_ARCH": "gfx90a"},
    "mi210-01": {"ROCM_PATH": "/opt/rocm", "PYTORCH_ROCM_ARCH": "gfx90a"},
    "w7900-01": {"ROCM_PATH": "/opt/rocm", "PYTORCH_ROCM_ARCH": "gfx1100"},
    "rx7900xtx-01": {"ROCM_PATH": "/opt/rocm", "PYTORCH_ROCM_ARCH": "gfx1100"},
    "rx6700xt-01": {"ROCM_PATH": "/opt/rocm", "PYTORCH_ROCM_ARCH": "gfx1030", "HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
    "login-01": {"ROCM_PATH": "/opt/rocm"},
}
EXPORT = re.compile(r"^export (?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:=(?P<value>.*))?$")


def test_the_first_run_converges_every_host(converged_lab):
    assert set(converged_lab.recap) == set(HOSTS)
    assert {host: (r["failed"], r["unreachable"]) for host, r in converged_lab.recap.items()} == {
        host: (0, 0) for host in HOSTS
    }


@pytest.fixture(scope="module")
def releases() -> dict[str, str]:
    default = yaml.safe_load((REPO / "roles" / "preflight" / "defaults" / "main.yml").read_text())
    return declared_releases(default["preflight_rocm_version"])


@pytest.mark.parametrize("host", GPU_HOSTS)
def test_a_listed_user_logs_in_and_runs_the_rocm_tools_from_its_path(lab, converged_lab, releases, host):
    release = releases[host]
    # The tools the release's stream ships (release_streams.yml): ROCm SMI is gone from the Core SDK 10.x.
    tools = stream_tools(STREAMS, MATRIX, release)
    smi = "rocm-smi --showproductname" if "rocm-smi" in tools else "amd-smi list"
    authorize_login_key(lab, host, CREATED_USER)
    try:
        session = login_session(
            lab,
            host,
            CREATED_USER,
            "command -v rocm-smi; command -v amd-smi; readlink -f \"$(command -v rocminfo)\"; id -nG\n"
            f"{smi}\nrocminfo\n",
        )
    finally:
        revoke_login_key(lab, host, CREATED_USER)
    lines = session.splitlines()
    # rocminfo on PATH is the default release's: /opt/rocm/bin on the legacy stream, AMD's alternatives on the Core SDK.
    assert f"{install_root(STREAMS, MATRIX, release)}/bin/rocminfo" in lines, session
    assert {"render", "video"} <= set(next(line for line in lines if CREATED_USER in line.split()).split())
    gpus = len(load_profile(HOSTS[host].profile).gpus)
    if "rocm-smi" in tools:
        assert any(line.endswith("/rocm-smi") for line in lines), session
        # rocm-smi 5.x prints "Card series", 6.1.1 and later "Card Series" (shared captures MANIFEST.md).
        assert len(re.findall(r"^GPU\[\d+\]\s*: Card [Ss]eries:", session, re.MULTILINE)) == gpus, session
    else:
        assert not any(line.endswith("/rocm-smi") for line in lines), session
        # The lab's amd-smi is Debian forky's, which a Debian 12 userland cannot run (docs/lab-mirror.md).
        if HOSTS[host].suite == "trixie":
            assert any(line.endswith("/amd-smi") for line in lines), session
            assert len(re.findall(r"^GPU: \d+$", session, re.MULTILINE)) == gpus, session
    # rocminfo checks the user's access itself; the lab's /dev/kfd has no driver
    # behind it, so opening it ends in ENXIO instead of a permission error.
    assert f"{CREATED_USER} is member of render group" in session, session
    assert "Permission denied" not in session, session


def test_gpu_facts_report_each_hosts_profile(converged_lab):
    facts = gpu_facts("all")
    for host, gpu in facts.items():
        profile = load_profile(HOSTS[host].profile)
        # One logical device per partition (mi300x-cpx-01: 8 MI300X in CPX are 64).
        logical = [g.gfx_target for g in profile.gpus for _ in range(g.partition_count)]
        assert gpu["count"] == len(logical), host
        assert [device["gfx_target"] for device in gpu["devices"]] == logical, host


def test_the_rocm_profile_holds_exactly_the_class_settings(lab, converged_lab):
    for host, expected in PROFILE_EXPORTS.items():
        text = lab.run(port(host), "cat /etc/profile.d/rocm.sh")
        exports = {
            match["name"]: match["value"] for match in map(EXPORT.match, text.splitlines()) if match and match["value"]
        }
        assert exports == expected, (host, text)
        assert "LD_LIBRARY_PATH" not in text, host


def test_a_second_run_changes_nothing(converged_lab):
    second = run_playbook("site.yml")
    assert second.returncode == 0, second.tail()
    assert {host: (r["changed"], r["failed"]) for host, r in second.recap.items()} == {host: (0, 0) for host in HOSTS}
    assert second.changed_tasks == {}


# A wrong type fails the role's argument validation, a misspelling the role's
# preflight; both in the first play, before the play that changes hosts.
BAD_ROLE_VARIABLES = {
    "mi210-01": ({"kernel_sysctl_apply": "sometimes"}, "kernel_sysctl_apply"),
    "rx7900xtx-01": ({"packages_apt_cache_valid_time": "an hour"}, "packages_apt_cache_valid_time"),
    "w7900-01": ({"environment_varaibles": {"OMP_NUM_THREADS": "8"}}, "environment_varaibles"),
    "login-01": ({"access_user": [{"name": "fleet"}]}, "access_user"),
}


def test_bad_role_variables_fail_before_any_change_naming_host_and_variable(lab, converged_lab, tmp_path):
    overlay = overlay_inventory(tmp_path, {host: variables for host, (variables, _) in BAD_ROLE_VARIABLES.items()})
    before = {host: etc_checksums(lab, host) for host in BAD_ROLE_VARIABLES}
    run = run_playbook("site.yml", *overlay, "--limit", ",".join(BAD_ROLE_VARIABLES))
    assert run.returncode != 0, run.tail()
    assert {host: r["failed"] for host, r in run.recap.items()} == {host: 1 for host in BAD_ROLE_VARIABLES}
    assert run.changed_tasks == {}
    assert "PLAY [Provision ROCm]" not in run.output, run.tail()
    for host, (_, variable) in BAD_ROLE_VARIABLES.items():
        failure = failure_of(run, host)
        assert variable in failure, failure
        assert etc_checksums(lab, host) == before[host], host
    assert "did you mean environment_variables?" in run.output
    assert "did you mean access_users?" in run.output
