"""roles.specs: the collection's argument specs, and role-prefixed names that none of them declares."""

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.specs import (
    ROLES_DIR,
    RoleSpecsError,
    read_argument_specs,
    unknown_role_vars,
)

REPO = Path(__file__).resolve().parents[5]
SPECS = {
    "preflight": {"argument_specs": {"main": {"options": {"preflight_rocm_version": {}, "preflight_workload": {}}}}},
    "kernel": {
        "argument_specs": {
            "main": {"options": {"kernel_boot_params": {}}},
            "reboot": {"options": {"kernel_reboot_allowed": {}}},
        }
    },
    "repo": None,
}


def test_reads_every_role_of_the_collection_that_has_specs():
    specs = read_argument_specs()
    assert Path(ROLES_DIR).resolve() == (REPO / "roles").resolve()
    assert "preflight_rocm_version" in specs["preflight"]["argument_specs"]["main"]["options"]
    expected = sorted(path.parent.parent.name for path in (REPO / "roles").glob("*/meta/argument_specs.yml"))
    assert sorted(specs) == expected


def test_roles_without_specs_are_left_out(tmp_path):
    (tmp_path / "plain" / "tasks").mkdir(parents=True)
    (tmp_path / "typed" / "meta").mkdir(parents=True)
    specs = "argument_specs: {main: {options: {typed_x: {}}}}\n"
    (tmp_path / "typed" / "meta" / "argument_specs.yml").write_text(specs)
    assert read_argument_specs(str(tmp_path)) == {"typed": {"argument_specs": {"main": {"options": {"typed_x": {}}}}}}


def test_unreadable_specs_and_missing_directories_fail_naming_them(tmp_path):
    (tmp_path / "broken" / "meta").mkdir(parents=True)
    (tmp_path / "broken" / "meta" / "argument_specs.yml").write_text("argument_specs: [unclosed\n")
    with pytest.raises(RoleSpecsError, match="broken"):
        read_argument_specs(str(tmp_path))
    with pytest.raises(RoleSpecsError, match="not a directory"):
        read_argument_specs(str(tmp_path / "absent"))


def test_misspelled_name_is_reported_with_the_nearest_declared_name():
    found = unknown_role_vars(["preflight_rocm_verison", "preflight_rocm_version"], SPECS)
    assert found == [{"name": "preflight_rocm_verison", "role": "preflight", "suggestion": "preflight_rocm_version"}]


def test_options_of_every_entry_point_count_as_declared():
    assert unknown_role_vars(["kernel_boot_params", "kernel_reboot_allowed"], SPECS) == []


def test_names_without_a_role_prefix_and_known_names_are_ignored():
    names = ["ansible_host", "lab_profile", "kernel_reboot_pending", "preflightish"]
    assert unknown_role_vars(names, SPECS, known=["kernel_reboot_pending"]) == []


def test_a_role_without_specs_declares_nothing_so_its_prefix_is_still_checked():
    assert unknown_role_vars(["repo_source"], SPECS) == [{"name": "repo_source", "role": "repo", "suggestion": None}]


def test_longest_role_prefix_owns_the_name():
    specs = {"kernel": {"main": {"options": {}}}, "kernel_tuning": {"main": {"options": {}}}}
    assert unknown_role_vars(["kernel_tuning_x"], specs)[0]["role"] == "kernel_tuning"


def test_results_are_sorted_and_deduplicated():
    found = unknown_role_vars(["preflight_b", "preflight_a", "preflight_b"], SPECS)
    assert [item["name"] for item in found] == ["preflight_a", "preflight_b"]


def test_specs_that_are_no_mapping_of_entry_points_are_refused():
    with pytest.raises(RoleSpecsError, match="preflight"):
        unknown_role_vars(["preflight_x"], {"preflight": ["main"]})
