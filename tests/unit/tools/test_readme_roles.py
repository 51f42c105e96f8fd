"""README.md's role variable tables match roles/*/meta/argument_specs.yml, and the generator reads specs as written."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import yaml
from fleet_testing.roles import provisioning_roles

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
    first = [entry["role"].removeprefix("rocm_fleet.core.") for entry in plays[0].get("roles", [])]
    assert list(readme_roles.ROLES) == first + provisioning_roles()
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


# Every role's own README.md: its variable table (a table headed "| Variable |") against the role's argument specs.
ROLES_DIR = REPO / "roles"
ROLE_DIRS = sorted(path for path in ROLES_DIR.iterdir() if path.is_dir())
# What these READMEs lack today; a strict xfail fails once a README is fixed, so the entry goes with the fix.
README_GAPS: dict[str, str] = {}  # role -> what its README lacks (an xfail that must be fixed)


def _declared_options(role_dir: Path) -> dict:
    """{option: spec} over all entry points of the role (the tables cover the role, not one entry point)."""
    specs = role_dir / "meta" / "argument_specs.yml"
    options: dict = {}
    if specs.is_file():
        for entry_point in yaml.safe_load(specs.read_text())["argument_specs"].values():
            options.update(entry_point.get("options") or {})
    return options


def _variable_rows(readme: str) -> list[dict]:
    """The rows of every "| Variable | ... |" table, each as {column header: cell}."""
    rows, header = [], None
    for line in readme.splitlines():
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]] if line.startswith("|") else None
        if cells and cells[0] == "Variable":
            header = cells
        elif cells is None:
            header = None
        elif header and not set(line) <= set("|-: "):
            rows.append(dict(zip(header, cells, strict=True)))
    return rows


def _readme_roles(with_table: bool = False) -> list:
    roles = []
    for role_dir in ROLE_DIRS:
        readme = role_dir / "README.md"
        if not readme.is_file() or (with_table and not _variable_rows(readme.read_text())):
            continue
        gap = README_GAPS.get(role_dir.name)
        roles.append(pytest.param(role_dir.name, marks=pytest.mark.xfail(reason=gap, strict=True)) if gap
                     else role_dir.name)
    return roles


def test_every_role_has_a_readme():
    assert [path.name for path in ROLE_DIRS if not (path / "README.md").is_file()] == []


@pytest.mark.parametrize("role", [path.name for path in ROLE_DIRS if (path / "README.md").is_file()])
def test_a_role_readme_table_names_only_declared_options_with_their_type(role):
    declared = _declared_options(ROLES_DIR / role)
    for row in _variable_rows((ROLES_DIR / role / "README.md").read_text()):
        name = row["Variable"].strip("`")
        assert name in declared, f"roles/{role}/README.md lists {name}, which meta/argument_specs.yml does not declare"
        # A raw option may be described in words ("str or list of str").
        if "Type" in row and declared[name].get("type") != "raw":
            assert row["Type"] == readme_roles._type(declared[name]), (role, name)


@pytest.mark.parametrize("role", _readme_roles(with_table=True))
def test_a_role_readme_table_lists_every_option_with_its_default(role):
    declared = _declared_options(ROLES_DIR / role)
    rows = {row["Variable"].strip("`"): row for row in _variable_rows((ROLES_DIR / role / "README.md").read_text())}
    assert [name for name in declared if name not in rows] == [], f"roles/{role}/README.md"
    for name, row in rows.items():
        shown = row["Default"]
        if shown == readme_roles._default(declared[name]):
            continue
        # Also a YAML value written another way (`null` for no default, `"25%"`); words ("all four") are not compared.
        if re.fullmatch(r"`[^`]*`", shown):
            assert yaml.safe_load(shown.strip("`")) == declared[name].get("default"), (role, name, shown)


def test_the_readme_table_reader_reads_rows_and_stops_at_the_table_end():
    readme = (
        "| Variable | Type | Default | Meaning |\n|---|---|---|---|\n| `a_b` | str | `x` | A \\| b. |\n"
        "text\n| x | y |\n"
    )
    assert _variable_rows(readme) == [{"Variable": "`a_b`", "Type": "str", "Default": "`x`", "Meaning": "A \\| b."}]
