"""Repository URLs, suites and key handling per OS family, from the repo role's own data."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from fleet_testing.roles import ROLES, evaluate, find_task, load_yaml, provisioning_roles, render


def family_vars(family: str, **facts) -> dict:
    data = load_yaml(f"repo/vars/{family}.yml")
    return render("{{ data }}", data=data, ansible_facts=facts, **data)


def test_the_amdgpu_directory_follows_the_driver_line_per_family(repo_filters):
    data = family_vars("RedHat", distribution="RedHat", distribution_major_version="9", distribution_version="9.4",
                       architecture="x86_64")
    # The amdgpu directory's OS path follows the driver line: rhel/<version> for 6.x lines, el/ for 30.x ones.
    paths = data["__repo_amdgpu_os_paths"]
    assert repo_filters.rocm_layout(paths, "6.4.1")["path"] == "rhel/9.4/main/x86_64"
    assert repo_filters.rocm_layout(paths, "30.10")["path"] == "el/9.4/main/x86_64"
    assert data["__repo_tasks"] == "dnf"
    sles = family_vars("Suse", distribution_major_version="15", distribution_version="15.6")
    assert repo_filters.rocm_layout(sles["__repo_amdgpu_os_paths"], "30.30.3")["path"] == "sle/15.6/main/x86_64"
    assert sles["__repo_tasks"] == "zypper"


def test_a_release_older_than_every_layout_fails(repo_filters):
    with pytest.raises(AnsibleFilterError, match=r"rocm_layout: no entry covers 6\.4\.1"):
        repo_filters.rocm_layout([{"since": "30.0", "path": "el"}], "6.4.1")


@pytest.mark.parametrize(("major", "suite"), [("12", "jammy"), ("13", "noble"), ("11", "")])
def test_debian_releases_map_to_amds_ubuntu_suites(major, suite):
    assert family_vars("Debian", distribution_major_version=major)["__repo_amdgpu_suite"] == suite


def test_ubuntu_uses_its_own_suite():
    data = family_vars("Ubuntu", distribution_release="noble")
    assert data["__repo_amdgpu_suite"] == "noble"


def test_every_family_file_names_its_task_file():
    tasks = {"Debian": "apt", "RedHat": "dnf", "Suse": "zypper"}
    for family, task_file in tasks.items():
        assert load_yaml(f"repo/vars/{family}.yml")["__repo_tasks"] == task_file
        assert load_yaml(f"repo/tasks/{task_file}.yml")


def test_each_key_check_reads_the_shared_verdict():
    task = find_task("repo/tasks/signing_key.yml", "Check each key against its pinned fingerprints")
    assert "rocm_fleet.core.rocm_signing_key_verdict(item.pins, item.variable)).problem is none" in (
        task["ansible.builtin.assert"]["that"])
    assert task["loop"] == "{{ __repo_keys }}"


PLAN_KEYS = {"rocm": {"title": "AMD's key", "url": "https://repo.radeon.com/rocm/rocm.gpg.key",
                      "fingerprints": ["CA8BB4727A47B4D09B4EE8969386B48A1A693C5C"], "apt_keyring": "/k/rocm.asc",
                      "rpm_path": "/p/rocm", "driver": True},
             "amdrocm": {"title": "the Core SDK key", "url": "https://stable.repo.amd.com/rocm/gpg/packages.gpg",
                         "fingerprints": None, "apt_keyring": "/k/amdrocm.asc", "rpm_path": "/p/amdrocm"}}


def keys(settings=None, lab=False, plan_keys=None):
    data = load_yaml("repo/vars/main.yml")
    plan = {"keys": plan_keys or {"rocm": PLAN_KEYS["rocm"]}, "known_keys": sorted(PLAN_KEYS)}
    return {key["name"]: key for key in render(
        data["__repo_keys"], __repo_plan=plan, repo_signing_keys=settings or {}, repo_lab=lab,
        __repo_lab_fingerprints=data["__repo_lab_fingerprints"])}


@pytest.mark.parametrize(
    "written",
    [
        "CA8B B472 7A47 B4D0 9B4E  E896 9386 B48A 1A69 3C5C",
        "0xca8bb4727a47b4d09b4ee8969386b48a1a693c5c",
        "CA8BB4727A47B4D09B4EE8969386B48A1A693C5C",
        ["CA8BB4727A47B4D09B4EE8969386B48A1A693C5C"],
    ],
)
def test_pinned_fingerprint_is_normalized(written):
    key = keys({"rocm": {"fingerprints": written}})["rocm"]
    assert (key["pins"], key["lab_pins"], key["problem"]) == (["CA8BB4727A47B4D09B4EE8969386B48A1A693C5C"], [], None)


def test_a_key_the_inventory_does_not_pin_is_pinned_to_amds_published_fingerprint():
    assert keys()["rocm"]["pins"] == ["CA8BB4727A47B4D09B4EE8969386B48A1A693C5C"]
    # AMD prints no fingerprint of that key: the host fails, naming the variable to pin it in.
    unpublished = keys(plan_keys=PLAN_KEYS)["amdrocm"]
    assert unpublished["problem"].startswith("repo_signing_keys.amdrocm.fingerprints: AMD publishes no fingerprint of "
                                             "the Core SDK key (https://stable.repo.amd.com/rocm/gpg/packages.gpg)")
    assert keys({"typo": {"fingerprints": "AB" * 20}})["rocm"]["problem"] == (
        "repo_signing_keys names typo, which is not a repository key (known: amdrocm, rocm)")


def test_a_rotation_pins_two_keys():
    decision = keys({"rocm": {"fingerprints": ["CA8BB4727A47B4D09B4EE8969386B48A1A693C5C", "0x" + "ab" * 20]}})["rocm"]
    assert decision["pins"] == ["CA8BB4727A47B4D09B4EE8969386B48A1A693C5C", "AB" * 20]
    assert decision["problem"] is None


def test_the_lab_key_is_refused_outside_the_lab_only():
    lab_key = "6BB40CEB51EC0E89B75E7214C2CB197087E7408C"
    refused = keys({"rocm": {"fingerprints": ["CA8BB4727A47B4D09B4EE8969386B48A1A693C5C", lab_key]}})["rocm"]
    assert refused["lab_pins"] == [lab_key]
    assert refused["problem"].startswith("repo_signing_keys.rocm.fingerprints lists %s, a signing key of the "
                                         "rocm-fleet lab" % lab_key)
    assert "repo_lab: true" in refused["problem"]
    assert keys({"rocm": {"fingerprints": lab_key}}, lab=True)["rocm"]["problem"] is None


def test_the_pin_check_comes_before_any_change():
    task = find_task("repo/tasks/preflight.yml",
                     "Check the pinned signing key fingerprints (a lab key outside the lab is refused)")
    assert task["ansible.builtin.assert"]["that"] == "repo_source == 'distro' or __repo_key_problems | length == 0"
    assert "{{ inventory_hostname }}" in task["ansible.builtin.assert"]["fail_msg"]


def test_no_repository_disables_signature_checks():
    for task_file in ("apt", "dnf", "zypper", "rpm_key"):
        text = (ROLES / "repo" / "tasks" / f"{task_file}.yml").read_text()
        assert "trusted" not in text
        assert "gpgcheck: false" not in text
        assert "disable_gpg_check: true" not in text


def test_defaults_pin_amds_key_and_priorities():
    defaults = load_yaml("repo/defaults/main.yml")
    assert defaults["repo_signing_keys"] == {}  # AMD's published fingerprints (release_streams.yml)
    assert defaults["repo_apt_pin_priority"] == 600
    assert defaults["repo_rpm_priority"] == 50


@pytest.mark.parametrize(
    ("versions", "valid"),
    [(["6.3.3", "6.4.1"], True), (["6.4"], False), (["latest"], False), (["6.4.1 "], False), ([], False)],
)
def test_release_check_accepts_only_x_y_z(versions, valid):
    task = find_task("repo/tasks/preflight.yml", "Check the releases against what the repository serves")
    conditions = task["ansible.builtin.assert"]["that"][:2]
    assert all(evaluate(condition, repo_rocm_versions=versions) for condition in conditions) is valid


@pytest.mark.parametrize(("requested", "valid"), [(["6.4.1"], True), (["6.3.3", "6.4.1"], True), (["6.2.4"], False)])
def test_requested_releases_must_be_served_by_the_mirror(requested, valid):
    task = find_task("repo/tasks/preflight.yml", "Check the releases against what the repository serves")
    condition = task["ansible.builtin.assert"]["that"][2]
    assert "repo_available_rocm_versions" in condition
    served = {"repo_available_rocm_versions": ["6.3.3", "6.4.1"], "repo_source": "mirror"}
    assert evaluate(condition, repo_rocm_versions=requested, **served) is valid


@pytest.mark.parametrize("role", provisioning_roles())
def test_every_role_first_checks_its_own_variables_against_its_own_spec(role):
    # The check itself (names, lists given as strings, types) is tested with plugin_utils/roles/variables.py.
    tasks = load_yaml(f"{role}/tasks/preflight.yml")
    loads_os_data = (ROLES / role / "tasks" / "os_vars.yml").exists()
    if loads_os_data:
        # The OS data comes first: the checks after the validation read it (a provisioning play runs this file alone).
        assert tasks[0] == {"name": "Load the OS data", "ansible.builtin.import_tasks": "os_vars.yml"}
        tasks = tasks[1:]
    first = tasks[0]
    assert first["name"] == f"Fail on {role}_* variables that the argument specs do not declare or that do not fit them"
    assert first["rocm_fleet.core.role_variables"] == {"roles": [role]}
    # One validation per role, and no other task imports the OS data again.
    validations = [task for task in tasks if "rocm_fleet.core.role_variables" in task]
    assert validations == [first]
    assert not [task for task in tasks[1:] if task.get("ansible.builtin.import_tasks") == "os_vars.yml"]
    assert load_yaml(f"{role}/meta/argument_specs.yml")["argument_specs"]["main"]["options"]


@pytest.mark.parametrize("role", provisioning_roles())
def test_readme_documents_every_option_with_its_default(role):
    options = load_yaml(f"{role}/meta/argument_specs.yml")["argument_specs"]["main"]["options"]
    defaults = load_yaml(f"{role}/defaults/main.yml")
    readme = (ROLES / role / "README.md").read_text()
    assert set(options) == set(defaults), role
    for name in options:
        assert f"| `{name}` |" in readme, name
