"""unknown_role_vars and closest_name: misspelled role variables are named with the nearest declared one."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.rocm_fleet.core.plugins.filter.role_variables import (
    FilterModule,
    closest_name,
    unknown_role_vars,
)

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


def test_misspelled_name_is_reported_with_the_nearest_declared_name():
    found = unknown_role_vars(["preflight_rocm_verison", "preflight_rocm_version"], SPECS)
    assert found == [{"name": "preflight_rocm_verison", "role": "preflight", "suggestion": "preflight_rocm_version"}]


def test_options_of_every_entry_point_count_as_declared():
    assert unknown_role_vars(["kernel_boot_params", "kernel_reboot_allowed"], SPECS) == []


def test_names_without_a_role_prefix_and_known_names_are_ignored():
    names = ["ansible_host", "lab_profile", "kernel_reboot_pending", "preflightish"]
    assert unknown_role_vars(names, SPECS, known=["kernel_reboot_pending"]) == []


def test_a_role_without_specs_declares_nothing_so_its_prefix_is_still_checked():
    found = unknown_role_vars(["repo_source"], SPECS)
    assert found == [{"name": "repo_source", "role": "repo", "suggestion": None}]


def test_longest_role_prefix_owns_the_name():
    specs = {"kernel": {"main": {"options": {}}}, "kernel_tuning": {"main": {"options": {}}}}
    assert unknown_role_vars(["kernel_tuning_x"], specs)[0]["role"] == "kernel_tuning"


def test_results_are_sorted_and_deduplicated():
    found = unknown_role_vars(["preflight_b", "preflight_a", "preflight_b"], SPECS)
    assert [item["name"] for item in found] == ["preflight_a", "preflight_b"]


def test_closest_name_returns_none_when_nothing_is_close():
    assert closest_name("mi300z", ["mi300x", "mi250x"]) == "mi300x"
    assert closest_name("quantum", ["mi300x", "mi250x"]) is None


@pytest.mark.parametrize(
    "names, specs",
    [("preflight_x", SPECS), (["preflight_x"], ["preflight"]), (["preflight_x"], {"preflight": ["main"]})],
)
def test_bad_input_raises_a_filter_error(names, specs):
    with pytest.raises(AnsibleFilterError):
        unknown_role_vars(names, specs)


def test_filters_are_registered():
    assert set(FilterModule().filters()) == {"unknown_role_vars", "closest_name"}
