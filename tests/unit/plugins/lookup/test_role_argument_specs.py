"""role_argument_specs reads every role's meta/argument_specs.yml under a roles directory."""

from pathlib import Path

import pytest
from ansible.errors import AnsibleLookupError
from ansible_collections.rocm_fleet.core.plugins.lookup.role_argument_specs import (
    COLLECTION_ROLES,
    LookupModule,
    read_argument_specs,
)

REPO = Path(__file__).resolve().parents[4]


def test_reads_the_collection_roles_by_default():
    specs = LookupModule().run([])[0]
    assert Path(COLLECTION_ROLES).resolve() == (REPO / "roles").resolve()
    assert "preflight_rocm_version" in specs["preflight"]["argument_specs"]["main"]["options"]
    expected = sorted(path.parent.parent.name for path in (REPO / "roles").glob("*/meta/argument_specs.yml"))
    assert sorted(specs) == expected


def test_roles_without_specs_are_left_out(tmp_path):
    (tmp_path / "plain" / "tasks").mkdir(parents=True)
    (tmp_path / "typed" / "meta").mkdir(parents=True)
    specs = "argument_specs: {main: {options: {typed_x: {}}}}\n"
    (tmp_path / "typed" / "meta" / "argument_specs.yml").write_text(specs)
    assert read_argument_specs(str(tmp_path)) == {"typed": {"argument_specs": {"main": {"options": {"typed_x": {}}}}}}


def test_unreadable_specs_and_missing_directories_fail(tmp_path):
    (tmp_path / "broken" / "meta").mkdir(parents=True)
    (tmp_path / "broken" / "meta" / "argument_specs.yml").write_text("argument_specs: [unclosed\n")
    with pytest.raises(AnsibleLookupError, match="broken"):
        read_argument_specs(str(tmp_path))
    with pytest.raises(AnsibleLookupError, match="not a directory"):
        read_argument_specs(str(tmp_path / "absent"))
