"""Repository URLs, suites and key handling per OS family, from the repo role's own data."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from fleet_testing.roles import ROLES, evaluate, find_task, load_yaml, provisioning_roles, render


def family_vars(family: str, **facts) -> dict:
    data = load_yaml(f"repo/vars/{family}.yml")
    return render("{{ data }}", data=data, ansible_facts=facts, **data)


@pytest.mark.parametrize(
    ("version", "directory"), [("6.4.0", "6.4"), ("6.4.1", "6.4.1"), ("7.0.0", "7.0"), ("10.0.2", "10.0.2")]
)
def test_x_y_0_releases_drop_the_patch_level(repo_filters, version, directory):
    assert repo_filters.rocm_repo_dir(version) == directory


@pytest.mark.parametrize("bad", ["6.4", "latest", "6.4.1-1", ""])
def test_non_releases_are_refused(repo_filters, bad):
    with pytest.raises(AnsibleFilterError):
        repo_filters.rocm_repo_dir(bad)


def test_debian_family_uses_amds_apt_layout(repo_filters):
    data = family_vars("Debian", distribution_major_version="12")
    urls = repo_filters.rocm_repo_urls(["6.3.3", "6.4.0"], data["__repo_rocm_base_urls"])
    assert urls == ["https://repo.radeon.com/rocm/apt/6.3.3", "https://repo.radeon.com/rocm/apt/6.4"]


def test_rhel_layout_changes_with_rocm_7(repo_filters):
    data = family_vars("RedHat", distribution="RedHat", distribution_major_version="9", distribution_version="9.4",
                       architecture="x86_64")
    urls = repo_filters.rocm_repo_urls(["6.4.1", "7.0.1"], data["__repo_rocm_base_urls"])
    assert urls == ["https://repo.radeon.com/rocm/rhel9/6.4.1", "https://repo.radeon.com/rocm/el9/7.0.1"]
    # The amdgpu directory's OS path follows the driver line: rhel/<version> for 6.x lines, el/ for 30.x ones.
    paths = data["__repo_amdgpu_os_paths"]
    assert repo_filters.rocm_layout(paths, "6.4.1")["path"] == "rhel/9.4/main/x86_64"
    assert repo_filters.rocm_layout(paths, "30.10")["path"] == "el/9.4/main/x86_64"
    assert repo_filters.rocm_repo_entries(["6.4.1", "7.0.1"], data["__repo_graphics_base_urls"]) == [
        {"version": "7.0.1", "url": "https://repo.radeon.com/graphics/7.0.1"}]
    assert data["__repo_graphics_os_path"] == "el/9.4/main/x86_64"
    assert data["__repo_tasks"] == "dnf"


def test_sles_uses_zypper_layout(repo_filters):
    data = family_vars("Suse", distribution_major_version="15", distribution_version="15.6")
    assert repo_filters.rocm_repo_urls(["6.4.1"], data["__repo_rocm_base_urls"]) == [
        "https://repo.radeon.com/rocm/zyp/6.4.1"
    ]
    assert repo_filters.rocm_layout(data["__repo_amdgpu_os_paths"], "30.30.3")["path"] == "sle/15.6/main/x86_64"
    assert data["__repo_tasks"] == "zypper"


def test_a_mirror_replaces_the_base_for_every_release(repo_filters):
    data = family_vars("Debian", distribution_major_version="12")
    urls = repo_filters.rocm_repo_urls(["6.3.3", "6.4.1"], data["__repo_rocm_base_urls"], "http://127.0.0.1:8650/rocm/apt/")
    assert urls == ["http://127.0.0.1:8650/rocm/apt/6.3.3", "http://127.0.0.1:8650/rocm/apt/6.4.1"]


def test_a_release_older_than_every_layout_fails(repo_filters):
    with pytest.raises(AnsibleFilterError, match="no repository layout"):
        repo_filters.rocm_repo_urls(["6.4.1"], [{"since": "7.0.0", "url": "https://example.invalid"}])
    with pytest.raises(AnsibleFilterError, match=r"rocm_layout: no entry covers 6\.4\.1"):
        repo_filters.rocm_layout([{"since": "30.0", "path": "el"}], "6.4.1")
    # Entries (the graphics repositories) leave uncovered releases out instead, and take a mirror's base.
    assert repo_filters.rocm_repo_entries(["6.4.1", "7.2.0"], [{"since": "7.0.0", "url": "https://g"}],
                                          "http://m/graphics/") == [{"version": "7.2.0", "url": "http://m/graphics/7.2"}]


@pytest.mark.parametrize(("major", "suite"), [("12", "jammy"), ("13", "noble"), ("11", "")])
def test_debian_releases_map_to_amds_ubuntu_suites(major, suite):
    assert family_vars("Debian", distribution_major_version=major)["__repo_default_apt_suite"] == suite


def test_ubuntu_uses_its_own_suite():
    data = family_vars("Ubuntu", distribution_release="noble")
    assert data["__repo_default_apt_suite"] == "noble"


def test_every_family_file_names_its_task_file():
    tasks = {"Debian": "apt", "RedHat": "dnf", "Suse": "zypper"}
    for family, task_file in tasks.items():
        assert load_yaml(f"repo/vars/{family}.yml")["__repo_tasks"] == task_file
        assert load_yaml(f"repo/tasks/{task_file}.yml")


def test_key_check_reads_the_shared_verdict():
    task = find_task("repo/tasks/signing_key.yml", "Check the key against the pinned fingerprints")
    assert task["ansible.builtin.assert"]["that"] == "__repo_key_verdict.problem is none"
    verdict = load_yaml("repo/vars/main.yml")["__repo_key_verdict"]
    assert "rocm_fleet.core.rocm_signing_key_verdict(__repo_pinned_fingerprints)" in verdict


def pins(value, lab=False):
    data = load_yaml("repo/vars/main.yml")
    return render(data["__repo_pin_decision"], repo_signing_key_fingerprint=value, repo_lab=lab,
                  __repo_lab_fingerprints=data["__repo_lab_fingerprints"])


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
    assert pins(written) == {"pins": ["CA8BB4727A47B4D09B4EE8969386B48A1A693C5C"], "lab_pins": [], "problem": None}


def test_a_rotation_pins_two_keys():
    decision = pins(["CA8BB4727A47B4D09B4EE8969386B48A1A693C5C", "0x" + "ab" * 20])
    assert decision["pins"] == ["CA8BB4727A47B4D09B4EE8969386B48A1A693C5C", "AB" * 20]
    assert decision["problem"] is None


def test_the_lab_key_is_refused_outside_the_lab_only():
    lab_key = "6BB40CEB51EC0E89B75E7214C2CB197087E7408C"
    refused = pins(["CA8BB4727A47B4D09B4EE8969386B48A1A693C5C", lab_key])
    assert refused["lab_pins"] == [lab_key]
    assert refused["problem"].startswith("repo_signing_key_fingerprint lists %s, a signing key of the rocm-fleet lab"
                                         % lab_key)
    assert "repo_lab: true" in refused["problem"]
    assert pins(lab_key, lab=True)["problem"] is None


def test_the_pin_check_comes_before_any_change():
    task = find_task("repo/tasks/preflight.yml",
                     "Check the pinned signing key fingerprints (a lab key outside the lab is refused)")
    assert task["ansible.builtin.assert"]["that"] == "repo_source == 'distro' or __repo_pin_decision.problem is none"
    assert "{{ inventory_hostname }}" in task["ansible.builtin.assert"]["fail_msg"]


def test_no_repository_disables_signature_checks():
    for task_file in ("apt", "dnf", "zypper", "rpm_key"):
        text = (ROLES / "repo" / "tasks" / f"{task_file}.yml").read_text()
        assert "trusted" not in text
        assert "gpgcheck: false" not in text
        assert "disable_gpg_check: true" not in text


def test_defaults_pin_amds_key_and_priorities():
    defaults = load_yaml("repo/defaults/main.yml")
    assert defaults["repo_signing_key_fingerprint"].endswith("9386B48A1A693C5C")
    assert defaults["repo_apt_pin_priority"] == 600
    assert defaults["repo_rpm_priority"] == 50


@pytest.mark.parametrize(
    ("versions", "valid"),
    [(["6.3.3", "6.4.1"], True), (["6.4"], False), (["latest"], False), (["6.4.1 "], False), ([], False)],
)
def test_release_check_accepts_only_x_y_z(versions, valid):
    task = find_task("repo/tasks/preflight.yml", "Check the ROCm releases and the mirror URLs")
    conditions = task["ansible.builtin.assert"]["that"][:2]
    assert all(evaluate(condition, repo_rocm_versions=versions) for condition in conditions) is valid


@pytest.mark.parametrize(("requested", "valid"), [(["6.4.1"], True), (["6.3.3", "6.4.1"], True), (["6.2.4"], False)])
def test_requested_releases_must_be_served_by_the_mirror(requested, valid):
    task = find_task("repo/tasks/preflight.yml", "Check the ROCm releases and the mirror URLs")
    condition = task["ansible.builtin.assert"]["that"][3]
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
