"""Values stay values: every string option that a role writes into a file is refused in preflight when the file could
not hold it as a value, naming the host, the variable and the character, and nothing on the host changes.

The variables come from the same walk as the unit test that keeps the declarations complete: every option of every
role's meta/value_syntax.yml that is written to a file (not_written ones are left out), with the shape its argument
spec gives it (a list, a mapping's keys and values, a list of mappings' fields). One site.yml run feeds them all at
once as extra vars; a second puts the issue's two injections into the inventory, one of them read only once
preflight has decided (so the converge plan, which renders every role's objects from the decision after preflight,
is the check of play 1 that stops the host, with the roles' own validation).
"""

from __future__ import annotations

import hashlib
import json

import pytest
import yaml
from fleet_testing.lab_site import run_playbook
from fleet_testing.provision_lab import GPU_HOSTS, overlay_inventory
from fleet_testing.value_injection import (
    ISSUE_VARIABLES,
    assert_every_value_refused,
    bad_values,
    written_options,
)

from rocm_fleet.lab import paths

# Two hosts are enough to show per-host messages; a host's disk is its overlay's upper layer.
HOSTS = GPU_HOSTS[:2]
# What an SSH login and Ansible's module runs write on a host, whatever the play does; node_compliance keeps its
# compiled module_utils in /var/cache/rocm-fleet/bytecode (module_utils/common/bytecode_cache.py), which its first
# run on a host that was never converged creates.
LOGIN_WRITES = ("/tmp", "/var/log", "/home/fleet/.ansible", "/root/.ansible", "/var/cache/rocm-fleet/bytecode")
PREFLIGHT_CHECK = "Fail on role variables that no role declares"
PLAN_CHECK = "rocm_fleet.core.compliance : Prove which roles' objects already hold as their tasks would leave them"


def host_disk(host: str) -> dict[str, str]:
    """{path: kind, mode, owner and content hash} of the host's disk (its upper layer), less what a login writes."""
    upper = paths.host_dir(host) / "upper"
    assert upper.is_dir(), upper
    state = {}
    for path in sorted(upper.rglob("*")):
        relative = "/" + str(path.relative_to(upper))
        if any(relative == top or relative.startswith(top + "/") for top in LOGIN_WRITES):
            continue
        # The overlay copies a directory up, unchanged, to hold what is written below it.
        if path.is_dir() and any(top.startswith(relative + "/") for top in LOGIN_WRITES):
            continue
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else ""
        state[relative] = f"{info.st_mode:o} {info.st_uid}:{info.st_gid} {digest}"
    return state


def failures(run, host):
    return [failure["message"] for failure in run.failed_tasks.get(host, [])]


@pytest.fixture(scope="module")
def disks_before(lab):
    return {host: host_disk(host) for host in HOSTS}


def test_every_written_variable_is_refused_at_once_naming_host_variable_and_character(disks_before, tmp_path):
    options = written_options()
    # The walk finds what the issue names (and whatever option is added later).
    assert {name for name, _declaration, _spec in options} >= ISSUE_VARIABLES
    values = bad_values(options)
    extra_vars = tmp_path / "bad.json"
    extra_vars.write_text(json.dumps(values))

    run = run_playbook("site.yml", "-e", f"@{extra_vars}", "-l", ",".join(HOSTS), timeout=600)

    assert run.returncode != 0
    for host in HOSTS:
        assert run.recap[host]["changed"] == 0 and run.recap[host]["failed"] == 1, run.recap
        [failure] = run.failed_tasks[host]
        assert failure["task"] == "rocm_fleet.core.preflight : " + PREFLIGHT_CHECK, failure
        # Expectations written by hand (fleet_testing.value_injection), not taken from the code under test: the
        # host, every bad string by its variable path, once, with its length, each refused character escaped and
        # named, the file's rule and what to do; the issue's variables word for word.
        assert_every_value_refused(failure["message"], host, options, values)
        assert host_disk(host) == disks_before[host], f"{host} changed on disk"


def test_the_issues_injections_from_the_inventory_stop_each_host_before_any_change(disks_before, tmp_path):
    modprobe_host, environment_host = HOSTS
    # The environment value reads preflight_decision, so only a check after preflight's decision can template it: the
    # converge plan (play 1, before any change) validates every role's values as the roles' own checks do.
    injected_environment = ("{{ {'ROCM_FLEET_T': 'x\"\nDefaultEnvironment=LD_PRELOAD=/tmp/x.so'"
                            " ~ preflight_decision.rocm_version[:0]} }}")
    overlay = overlay_inventory(tmp_path, {
        modprobe_host: {"kernel_modprobe_options": {"amdgpu": {"noretry": "0\ninstall amdgpu /bin/sh -c id"}}},
        environment_host: {"environment_variables": injected_environment},
    })
    assert yaml.safe_load((tmp_path / "overlay.yml").read_text())

    run = run_playbook("site.yml", *overlay, "-l", ",".join(HOSTS), timeout=600)

    assert run.returncode != 0
    [modprobe_failure] = failures(run, modprobe_host)
    assert modprobe_failure.startswith(
        f"host {modprobe_host}: kernel_modprobe_options.amdgpu.noretry contains '\\n' (newline), ' ' (blank)")
    assert run.failed_tasks[modprobe_host][0]["task"] == "rocm_fleet.core.preflight : " + PREFLIGHT_CHECK
    [environment_failure] = failures(run, environment_host)
    assert environment_failure.startswith(
        f"host {environment_host}: environment_variables.ROCM_FLEET_T contains '\"' (double quote), '\\n' (newline)")
    environment_check = run.failed_tasks[environment_host][0]["task"]
    assert environment_check == PLAN_CHECK, environment_check
    for host in HOSTS:
        assert run.recap[host]["changed"] == 0 and not run.changed_tasks.get(host), run.changed_tasks
        assert host_disk(host) == disks_before[host], f"{host} changed on disk"
