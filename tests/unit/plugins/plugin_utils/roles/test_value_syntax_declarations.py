"""Every string option of every role's argument spec has a file syntax or says why it reaches no file."""

from pathlib import Path

import pytest
import yaml
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.specs import (
    ROLES_DIR,
    RoleSpecsError,
    read_argument_specs,
    read_value_syntax,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.value_syntax import (
    declaration_problems,
    unchecked_options,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.variables import declared_options

SPECS = read_argument_specs(ROLES_DIR)
SYNTAXES = read_value_syntax(ROLES_DIR)


@pytest.mark.parametrize("role", sorted(SPECS))
def test_every_string_option_is_declared(role):
    missing = unchecked_options(declared_options(SPECS[role]), SYNTAXES.get(role, {}))
    assert missing == [], (
        "roles/%s/meta/value_syntax.yml declares no syntax for %s: name the syntax of the file each is written to "
        "(plugins/plugin_utils/roles/value_syntax.py) or {not_written: why}" % (role, ", ".join(missing)))


@pytest.mark.parametrize("role", sorted(SYNTAXES))
def test_declarations_name_known_options_and_syntaxes(role):
    options = declared_options(SPECS[role])
    assert sorted(set(SYNTAXES[role]) - set(options)) == [], "declared, but not in the argument specs"
    assert [problem for name, declaration in SYNTAXES[role].items()
            for problem in declaration_problems(name, declaration)] == []


def test_the_files_named_in_the_issue_are_covered():
    # modprobe.d, sysctl.d, GRUB, systemd/profile.d, ld.so.conf.d, udev, apt sources and pins, adduser.conf.
    assert SYNTAXES["kernel"]["kernel_modprobe_options"] == {
        "keys": "modprobe_module", "values": {"keys": "modprobe_param", "values": "modprobe_value"}}
    assert SYNTAXES["kernel"]["kernel_sysctls"] == {"keys": "sysctl_key", "values": "sysctl_value"}
    assert SYNTAXES["kernel"]["kernel_boot_params"] == "kernel_param"
    assert SYNTAXES["environment"]["environment_variables"] == {"keys": "env_name", "values": "env_value"}
    assert SYNTAXES["environment"]["environment_ld_library_dirs"] == "absolute_path"
    assert SYNTAXES["access"]["access_render_mode"] == "file_mode"
    assert SYNTAXES["access"]["access_gpu_groups"] == "account_name"
    assert SYNTAXES["repo"]["repo_mirrors"] == {"keys": "url", "values": "url"}
    assert SYNTAXES["repo"]["repo_apt_pin_release"] == "apt_pin"


def test_a_new_string_option_without_a_declaration_is_named():
    options = {"kernel_new_file_value": {"type": "str"}, "kernel_flag": {"type": "bool"},
               "kernel_mode": {"type": "str", "choices": ["a", "b"]}, "kernel_untyped": {},
               "kernel_map": {"type": "dict"}, "kernel_paths": {"type": "list", "elements": "path"},
               "kernel_numbers": {"type": "list", "elements": "int"},
               "kernel_users": {"type": "list", "elements": "dict",
                                "options": {"name": {"type": "str"}, "uid": {"type": "int"}}}}
    assert unchecked_options(options, {}) == [
        "kernel_map", "kernel_new_file_value", "kernel_paths", "kernel_untyped", "kernel_users"]
    # A list of mappings must cover each string field, or say the whole option reaches no file.
    assert unchecked_options(options, {"kernel_users": {"options": {}}}) == [
        "kernel_map", "kernel_new_file_value", "kernel_paths", "kernel_untyped", "kernel_users.name"]
    assert unchecked_options(options, {"kernel_users": "account_name"}) == [
        "kernel_map", "kernel_new_file_value", "kernel_paths", "kernel_untyped", "kernel_users"]
    declared = {"kernel_users": {"not_written": "a reason"}, "kernel_map": {"keys": "env_name", "values": "env_value"},
                "kernel_new_file_value": "modprobe_value", "kernel_paths": "absolute_path",
                "kernel_untyped": {"not_written": "compared only"}}
    assert unchecked_options(options, declared) == []


def test_bad_declarations_are_named():
    assert declaration_problems("x", "no_such_syntax") == ["x: unknown syntax 'no_such_syntax'"]
    assert declaration_problems("x", {"not_written": ""}) == ["x: not_written needs the reason"]
    assert declaration_problems("x", {"keys": "env_name", "values": "nope"}) == ["x.values: unknown syntax 'nope'"]
    assert declaration_problems("x", {"syntax": "url"}) == ["x: unknown declaration fields ['syntax']"]
    assert declaration_problems("x", 3) == ["x: a declaration is a syntax name or a mapping"]


def test_an_unreadable_declaration_file_is_named(tmp_path):
    (tmp_path / "role" / "meta").mkdir(parents=True)
    (tmp_path / "role" / "meta" / "value_syntax.yml").write_text(yaml.safe_dump({"other": 1}))
    with pytest.raises(RoleSpecsError, match="must map value_syntax"):
        read_value_syntax(str(tmp_path))
    (tmp_path / "role" / "meta" / "value_syntax.yml").write_text("value_syntax: [\n")
    with pytest.raises(RoleSpecsError, match="cannot read"):
        read_value_syntax(str(tmp_path))
    assert read_value_syntax(str(tmp_path / "absent")) == {}


def test_declaration_files_live_beside_the_argument_specs():
    for role in SYNTAXES:
        assert (Path(ROLES_DIR) / role / "meta" / "argument_specs.yml").is_file()
