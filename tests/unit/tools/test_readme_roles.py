"""README.md's role variable tables match roles/*/meta/argument_specs.yml, and the generator reads specs as written."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("readme_roles", REPO / "tools" / "readme_roles.py")
readme_roles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(readme_roles)


def test_readme_matches_the_argument_specs():
    assert readme_roles.main(["--check"]) == 0, "run .venv/bin/python tools/readme_roles.py"


def test_every_option_of_every_provisioning_role_is_in_the_readme():
    readme = (REPO / "README.md").read_text()
    for role in readme_roles.ROLES:
        specs = (REPO / "roles" / role / "meta" / "argument_specs.yml").read_text()
        for name in yaml.safe_load(specs)["argument_specs"]["main"]["options"]:
            assert f"| `{name}` |" in readme, (role, name)


def test_the_tables_are_the_provisioning_roles_in_the_order_provision_yml_runs_them():
    plays = yaml.safe_load((REPO / "playbooks" / "provision.yml").read_text())
    ran = [entry["role"].removeprefix("rocm_fleet.core.") for play in plays[:2] for entry in play.get("roles", [])]
    assert list(readme_roles.ROLES) == ran
    # The shared common role is applied by the others, has no variables of its own and no table.
    assert not (REPO / "roles" / "common" / "meta" / "argument_specs.yml").exists()
    assert not [role for role in readme_roles.ROLES if role.startswith("_")]
    assert "#### common" not in readme_roles.generated_block()


def test_a_raw_option_shows_its_type_as_raw():
    # preflight_expected_class takes one class or a list of them.
    table = readme_roles.role_table("preflight")
    row = next(line for line in table.splitlines() if line.startswith("| `preflight_expected_class` |"))
    assert row.split(" | ")[1] == "raw"


def test_a_table_row_shows_type_default_and_choices(tmp_path):
    meta = tmp_path / "demo" / "meta"
    meta.mkdir(parents=True)
    (meta / "argument_specs.yml").write_text(
        "argument_specs:\n  main:\n    short_description: Demo | role\n    options:\n"
        "      demo_mode: {type: str, choices: [a, b], default: a, description: [How, it runs.]}\n"
        "      demo_hosts: {type: list, elements: str, default: [x], description: Hosts.}\n"
        "      demo_name: {type: str, required: true, description: Name.}\n"
    )
    table = readme_roles.role_table("demo", tmp_path)
    assert "#### demo: Demo \\| role" in table
    assert "| `demo_mode` | str | `a` | How it runs. One of: `a`, `b`. |" in table
    assert "| `demo_hosts` | list of str | `[x]` | Hosts. |" in table
    assert "| `demo_name` | str | required | Name. |" in table


def test_a_readme_without_markers_is_refused():
    with pytest.raises(ValueError, match="markers"):
        readme_roles.with_block("# no markers here\n", "block")
