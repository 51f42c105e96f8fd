"""What preflight tells the operator about a value a file cannot hold, without the lab.

The lab test tests/integration/lab/test_value_injection.py runs site.yml with a bad value for every written option;
the message its failed task shows is role_variable_problems' (the preflight check runs it with values=False) joined
after "host <host>: " (plugins/action/role_variables.py). Here the same values go through role_variable_problems,
and the message is judged by the same hand-written expectations (fleet_testing.value_injection).
"""

from __future__ import annotations

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.specs import ROLES_DIR, read_argument_specs
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.variables import (
    role_results,
    role_variable_problems,
)
from fleet_testing.value_injection import (
    BAD,
    ISSUE_PROBLEMS,
    ISSUE_VARIABLES,
    assert_every_value_refused,
    bad_values,
    written_options,
)


def preflight_message(host: str, values: dict) -> str:
    problems = role_variable_problems(values, read_argument_specs(ROLES_DIR), known=role_results(), values=False)
    return "host %s: %s" % (host, "; ".join(problems))


def test_every_written_variable_is_refused_naming_the_path_each_character_and_what_to_do():
    options = written_options()
    assert {name for name, _declaration, _spec in options} >= ISSUE_VARIABLES
    values = bad_values(options)
    assert_every_value_refused(preflight_message("mi300x-01", values), "mi300x-01", options, values)


def test_the_issues_variables_word_for_word():
    options = [option for option in written_options() if option[0] in ISSUE_VARIABLES]
    values = bad_values(options)
    problems = role_variable_problems(values, read_argument_specs(ROLES_DIR), known=role_results(), values=False)
    assert sorted(problems) == sorted(ISSUE_PROBLEMS.values())


def test_a_good_value_beside_a_bad_one_is_not_named():
    values = {"kernel_boot_params": ["iommu=pt", BAD], "access_kfd_mode": "0666"}
    problems = role_variable_problems(values, read_argument_specs(ROLES_DIR), known=role_results(), values=False)
    assert problems == [ISSUE_PROBLEMS["kernel_boot_params[0]"].replace("kernel_boot_params[0]",
                                                                         "kernel_boot_params[1]", 1)]
