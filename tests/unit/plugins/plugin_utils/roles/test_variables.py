"""role_variable_problems: misspelled role variables, lists given as strings and values that do not fit their specs."""

from pathlib import Path

import pytest
import yaml
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.specs import ROLES_DIR, read_argument_specs
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.variables import (
    RESULTS_FILE,
    checked_roles,
    declared_options,
    role_results,
    role_variable_problems,
)

REPO = Path(__file__).resolve().parents[5]
SPECS = read_argument_specs(ROLES_DIR)


def test_a_misspelled_name_is_reported_with_the_nearest_declared_name():
    problems = role_variable_problems({"kernel_bootparams": "x", "kernel_boot_params": ["iommu=pt"]}, SPECS)
    assert problems == [
        "unknown variable kernel_bootparams, not declared in roles/kernel/meta/argument_specs.yml;"
        " did you mean kernel_boot_params?"
    ]


def test_a_name_nothing_is_like_gets_no_suggestion():
    assert role_variable_problems({"access_zzzzzzzzzzzzzzzz": 1}, SPECS) == [
        "unknown variable access_zzzzzzzzzzzzzzzz, not declared in roles/access/meta/argument_specs.yml"
    ]


def test_the_results_roles_set_are_not_reported_when_known():
    results = {name: True for name in role_results()}
    assert role_variable_problems(results, SPECS, known=role_results()) == []
    assert "unknown variable kernel_reboot_pending" in "; ".join(role_variable_problems(results, SPECS))


def test_the_results_are_one_list_in_the_common_role():
    assert Path(RESULTS_FILE).resolve() == REPO / "roles" / "common" / "vars" / "main.yml"
    assert role_results() == yaml.safe_load(Path(RESULTS_FILE).read_text())["__common_role_results"]
    assert {"preflight_decision", "kernel_reboot_pending", "kernel_reboot_reasons"} <= set(role_results())


def test_an_unreadable_results_file_is_named(tmp_path):
    path = tmp_path / "main.yml"
    path.write_text("__common_role_results: preflight_decision\n")
    with pytest.raises(ValueError, match="__common_role_results as a list"):
        role_results(str(path))
    with pytest.raises(ValueError, match="cannot read"):
        role_results(str(tmp_path / "absent.yml"))


def test_a_list_given_as_a_string_is_named():
    # Argument validation would split "a,b" for its own copy only; the role would see the string.
    assert role_variable_problems({"kernel_boot_params": "iommu=pt,pci=realloc=off"}, SPECS) == [
        "kernel_boot_params must be a YAML list, not a string"
    ]
    assert role_variable_problems({"kernel_boot_params": ["iommu=pt"]}, SPECS) == []


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("kernel_sysctl_apply", "sometimes", ["kernel_sysctl_apply must be bool", "got str 'sometimes'"]),
        ("kernel_reboot_timeout", "an hour", ["kernel_reboot_timeout must be int", "got str 'an hour'"]),
        ("environment_variables", ["A=1"], ["environment_variables must be dict", "got list ['A=1']"]),
        ("access_users", [{"nam": "fleet"}], ["access_users must be list of dict", "missing required arguments: name"]),
    ],
)
def test_a_value_of_the_wrong_type_names_variable_expected_type_and_value(name, value, words):
    problems = role_variable_problems({name: value}, SPECS)
    assert len(problems) == 1
    for word in words:
        assert word in problems[0]


def test_values_argument_validation_converts_pass_as_it_does():
    fitting = {"kernel_reboot_timeout": "600", "kernel_sysctl_apply": "yes", "preflight_rocm_version": 6.4}
    assert role_variable_problems(fitting, SPECS) == []


def test_the_role_filter_checks_only_those_roles():
    variables = {"kernel_bootparams": "x", "access_user": [], "preflight_expected_gpu_count": "eight"}
    assert len(role_variable_problems(variables, SPECS)) == 3
    only_kernel = role_variable_problems(variables, SPECS, roles=["kernel"])
    assert len(only_kernel) == 1 and "kernel_bootparams" in only_kernel[0]
    assert role_variable_problems(variables, SPECS, roles=["onboard"]) == []
    assert role_variable_problems({}, SPECS, roles=["kernal"]) == ["role kernal has no meta/argument_specs.yml"]


def test_every_role_but_the_private_ones_is_checked_by_default():
    specs = dict(SPECS, _common={"argument_specs": {"main": {"options": {}}}})
    assert "common" not in checked_roles(specs)
    assert set(checked_roles(specs)) == set(SPECS) - {"common"}
    assert role_variable_problems({"__common_role_results": []}, specs) == []


def test_options_of_every_entry_point_count_and_the_longest_prefix_owns_a_name():
    specs = {
        "kernel": {"argument_specs": {"main": {"options": {"kernel_a": {"type": "int"}}},
                                      "reboot": {"options": {"kernel_b": {"type": "bool"}}}}},
        "kernel_tuning": {"argument_specs": {"main": {"options": {"kernel_tuning_x": {"type": "str"}}}}},
    }
    assert set(declared_options(specs["kernel"])) == {"kernel_a", "kernel_b"}
    assert role_variable_problems({"kernel_b": "no", "kernel_tuning_y": 1}, specs, roles=["kernel"]) == []
    assert role_variable_problems({"kernel_b": "maybe"}, specs)[0].startswith("kernel_b must be bool")


@pytest.mark.parametrize("role", sorted(SPECS))
def test_each_roles_defaults_pass_the_validation_ansible_runs_on_the_role(role):
    """What ``validate_argument_spec`` does when the role starts: every default, null ones too, against the spec
    (``choices`` on a null default refuses every host, which no role-variable check above would notice)."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    defaults_file = Path(ROLES_DIR) / role / "defaults" / "main.yml"
    defaults = (yaml.safe_load(defaults_file.read_text()) or {}) if defaults_file.exists() else {}
    for entry_point, document in sorted(SPECS[role].get("argument_specs", {}).items()):
        # The spec's own "default" documents the templated default; defaults/main.yml holds the value.
        options = {name: {key: value for key, value in spec.items() if key != "default"}
                   for name, spec in (document.get("options") or {}).items()}
        # A templated default is checked once templated (role_variable_problems); the literal ones here.
        given = {name: value for name, value in defaults.items()
                 if name in options and not (isinstance(value, str) and "{{" in value)}
        errors = ArgumentSpecValidator(options).validate(given).error_messages
        assert errors == [], "%s entry point %s: %s" % (role, entry_point, errors)


def test_the_issues_injections_are_refused_naming_the_variable_and_the_character():
    problems = role_variable_problems({
        "kernel_modprobe_options": {"amdgpu": {"noretry": "0\ninstall amdgpu /bin/sh -c id"}},
        "environment_variables": {"ROCM_FLEET_T": 'x"\nDefaultEnvironment=LD_PRELOAD=/tmp/x.so'},
    }, SPECS)
    assert len(problems) == 2
    assert problems[0].startswith("environment_variables.ROCM_FLEET_T contains '\"' (double quote), '\\n' (newline)")
    assert problems[1].startswith("kernel_modprobe_options.amdgpu.noretry contains '\\n' (newline), ' ' (blank)")


def test_the_file_syntax_is_checked_only_once_the_type_fits():
    problems = role_variable_problems({"kernel_boot_params": "a;b"}, SPECS)
    assert problems == ["kernel_boot_params must be a YAML list, not a string"]
    assert role_variable_problems({"kernel_boot_params": ["a;b"]}, SPECS)[0].startswith(
        "kernel_boot_params[0] contains ';' (semicolon)")


def test_names_only_still_checks_the_file_syntax_of_the_values_given():
    problems = role_variable_problems({"access_kfd_mode": '0660", RUN+="/bin/sh', "kernel_sysctl_apply": "x"},
                                      SPECS, values=False)
    assert len(problems) == 1 and problems[0].startswith("access_kfd_mode is 20 characters long (at most 4) and "
                                                         "contains '\"' (double quote), ',', ' ' (blank), 'R', 'U'")
    assert "other characters, but must be a file mode in a udev rule" in problems[0]


def test_the_inventorys_real_values_pass():
    values = {"kernel_boot_params": ["iommu=pt", "amdgpu.ppfeaturemask=0xffffffff"],
              "kernel_sysctls": {"kernel.numa_balancing": 0, "vm.max_map_count": 262144},
              "kernel_modprobe_options": {"amdgpu": {"noretry": 0, "lockup_timeout": "10000,10000"}},
              "environment_hsa_overrides": {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
              "environment_pytorch_rocm_arch": "gfx90a;gfx942", "repo_mirrors": {"https://repo.radeon.com": "http://127.0.0.1:8752"},
              "repo_signing_keys": {"rocm": {"fingerprints": "CA8B B472 7A47 B4D0 9B4E  E896 9386 B48A 1A69 3C5C"}},
              "access_users": [{"name": "fleet", "create": False}], "access_gpu_groups": ["render", "video"]}
    assert role_variable_problems(values, SPECS) == []


def _set_fact_names(node):
    """Every name an ansible.builtin.set_fact (or register) in a task tree sets."""
    if isinstance(node, list):
        for item in node:
            yield from _set_fact_names(item)
    elif isinstance(node, dict):
        for key in ("ansible.builtin.set_fact", "set_fact"):
            if isinstance(node.get(key), dict):
                yield from (name for name in node[key] if name != "cacheable")
        if isinstance(node.get("register"), str):
            yield node["register"]
        for key in ("block", "rescue", "always"):
            yield from _set_fact_names(node.get(key))


def test_every_role_prefixed_fact_a_role_sets_is_a_declared_result():
    # A fact named like a setting (packages_taken_back) that is not listed fails every later play's variable check
    # on that host: a restore after a failed install stopped on "unknown variable packages_taken_back".
    names = set()
    for path in sorted((REPO / "roles").glob("*/tasks/*.yml")):
        names.update(_set_fact_names(yaml.safe_load(path.read_text())))
    problems = role_variable_problems({name: None for name in names}, SPECS, known=role_results(), values=False)
    assert [problem for problem in problems if problem.startswith("unknown variable")] == []
