"""project_dir and runnable_name: a checkout's playbook keeps its results in the checkout and is named by its
path; an installed collection's playbook (run by FQCN) writes where the command ran and is named by its FQCN."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.rocm_fleet.core.plugins.filter import project

INSTALLED = "/opt/site/collections/ansible_collections/rocm_fleet/core/playbooks"


@pytest.mark.parametrize(("playbook_dir", "cwd", "expected"), [
    ("/srv/rocm-fleet/playbooks", "/home/op", "/srv/rocm-fleet"),
    ("/srv/rocm-fleet/playbooks/", "/home/op", "/srv/rocm-fleet"),
    ("/srv/rocm-fleet", "/home/op", "/srv/rocm-fleet"),  # site.yml at the top
    (INSTALLED, "/home/op/site", "/home/op/site"),
    ("/srv/venv/lib/python3.11/site-packages/rocm_fleet/_collection/ansible_collections/rocm_fleet/core/playbooks",
     "/home/op/site", "/home/op/site"),
])
def test_results_go_to_the_checkout_or_where_the_command_ran(playbook_dir, cwd, expected):
    assert project.project_dir_of(playbook_dir, cwd) == expected


@pytest.mark.parametrize(("playbook_dir", "cwd", "expected"), [
    ("/srv/rocm-fleet/playbooks", "/srv/rocm-fleet", "playbooks/upgrade.yml"),
    ("/srv/rocm-fleet/playbooks", "/srv/rocm-fleet/playbooks", "upgrade.yml"),
    ("/srv/rocm-fleet/playbooks", "/home/op", "/srv/rocm-fleet/playbooks/upgrade.yml"),
    (INSTALLED, "/home/op", "rocm_fleet.core.upgrade"),
])
def test_a_printed_command_names_the_playbook_as_it_can_be_run_from_there(playbook_dir, cwd, expected):
    assert project.runnable_name_of(playbook_dir, "upgrade", cwd) == expected


def test_the_filters_use_the_controllers_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    filters = project.FilterModule().filters()
    assert filters["project_dir"](INSTALLED) == str(tmp_path)
    assert filters["runnable_name"](str(tmp_path / "playbooks"), "kernel_update") == "playbooks/kernel_update.yml"


@pytest.mark.parametrize("value", [None, "", 3])
def test_a_missing_playbook_dir_is_a_filter_error(value):
    with pytest.raises(AnsibleFilterError, match="playbook_dir must be a non-empty path"):
        project.project_dir(value)
