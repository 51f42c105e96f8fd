"""Values stay values: every string option that a role writes into a file is refused in preflight when the file could
not hold it as a value, naming the host, the variable and the character, and nothing on the host changes.

The variables come from the same walk as the unit test that keeps the declarations complete: every option of every
role's meta/value_syntax.yml that is written to a file (not_written ones are left out), with the shape its argument
spec gives it (a list, a mapping's keys and values, a list of mappings' fields). One site.yml run feeds them all at
once as extra vars; a second puts the issue's two injections into the inventory, one of them read only once
preflight has decided (so the environment role's own check, the last of play 1, is the one that stops the host).
"""

from __future__ import annotations

import hashlib
import json

import pytest
import yaml
from ansible_collections.rocm_fleet.core.plugins.module_utils.value_syntax import declared_problems, shown_character
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.role_specs import (
    ROLES_DIR,
    read_argument_specs,
    read_value_syntax,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.role_variables import declared_options
from lab_site import run_playbook
from provision_lab import GPU_HOSTS, overlay_inventory

from rocm_fleet.lab import paths

# Every bad kind of the issue in one value: a newline, a double quote, $(), backticks, ;, NUL, and over-long
# (longer than the longest value any syntax takes, the 64 KiB armored key).
BAD = "x\n\"$(id)`id`;\x00" + "y" * 70000
# Two hosts are enough to show per-host messages; a host's disk is its overlay's upper layer.
HOSTS = GPU_HOSTS[:2]
# What an SSH login and Ansible's module runs write on a host, whatever the play does.
LOGIN_WRITES = ("/tmp", "/var/log", "/home/fleet/.ansible", "/root/.ansible")
PREFLIGHT_CHECK = "Fail on role variables that no role declares"


def written_options():
    """[(variable, declaration, spec)] of every option some file gets, from the roles' declarations."""
    specs, syntaxes = read_argument_specs(ROLES_DIR), read_value_syntax(ROLES_DIR)
    options = []
    for role, declarations in sorted(syntaxes.items()):
        spec_options = declared_options(specs[role])
        for name, declaration in sorted(declarations.items()):
            if not (isinstance(declaration, dict) and "not_written" in declaration):
                options.append((name, declaration, spec_options[name]))
    return options


def bad_value(declaration, spec):
    """A value of the option's shape whose every string (and every mapping key) is BAD."""
    if isinstance(declaration, str):
        value = BAD
    elif "not_written" in declaration:
        value = "1"
    elif "options" in declaration:
        value = {field: bad_value(inner, (spec.get("options") or {}).get(field) or {})
                 for field, inner in declaration["options"].items()}
    else:
        value = {"rocm_fleet_t": bad_value(declaration["values"], {}), BAD: good_value(declaration["values"])}
    return [value] if spec.get("type") == "list" else value


def good_value(declaration):
    return {} if isinstance(declaration, dict) and "not_written" not in declaration else "1"


def host_disk(host: str) -> dict[str, str]:
    """{path: kind, mode, owner and content hash} of the host's disk (its upper layer), less what a login writes."""
    upper = paths.host_dir(host) / "upper"
    assert upper.is_dir(), upper
    state = {}
    for path in sorted(upper.rglob("*")):
        relative = "/" + str(path.relative_to(upper))
        if any(relative == top or relative.startswith(top + "/") for top in LOGIN_WRITES):
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
    names = [name for name, _declaration, _spec in options]
    assert {"kernel_modprobe_options", "kernel_sysctls", "kernel_boot_params", "environment_variables",
            "environment_ld_library_dirs", "access_kfd_mode", "access_gpu_groups", "repo_rocm_base_url",
            "repo_apt_pin_release"} <= set(names)
    values = {name: bad_value(declaration, spec) for name, declaration, spec in options}
    extra_vars = tmp_path / "bad.json"
    extra_vars.write_text(json.dumps(values))

    run = run_playbook("site.yml", "-e", f"@{extra_vars}", "-l", ",".join(HOSTS), timeout=600)

    assert run.returncode != 0
    for host in HOSTS:
        assert run.recap[host]["changed"] == 0 and run.recap[host]["failed"] == 1, run.recap
        [failure] = run.failed_tasks[host]
        assert failure["task"] == "rocm_fleet.core.preflight : " + PREFLIGHT_CHECK, failure
        message = failure["message"]
        assert message.startswith(f"host {host}: ")
        for name, declaration, _spec in options:
            # Each variable is named with every refused character, escaped, and its length.
            for expected in declared_problems(name, values[name], declaration):
                assert expected in message, (name, expected)
            assert f"{name}" in message and shown_character("\x00") in message
        for character in "\n\"$`;\x00":
            assert shown_character(character) in message
        assert message.count("characters long") >= len(options)
        assert host_disk(host) == disks_before[host], f"{host} changed on disk"


def test_the_issues_injections_from_the_inventory_stop_each_host_before_any_change(disks_before, tmp_path):
    modprobe_host, environment_host = HOSTS
    # The environment value reads preflight_decision, so only the environment role's own preflight (the last check
    # of play 1) can template it: that host passes the repo, packages and kernel checks and is still stopped there.
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
    assert environment_check.startswith("rocm_fleet.core.environment : Fail on environment_"), environment_check
    for host in HOSTS:
        assert run.recap[host]["changed"] == 0 and not run.changed_tasks.get(host), run.changed_tasks
        assert host_disk(host) == disks_before[host], f"{host} changed on disk"
