"""The roles' data reads only ansible-core's filters and this collection's.

Pull mode (playbooks/pull.yml, roles/pull) evaluates every role's defaults and vars on the host, where only
ansible-core and this collection are installed (not its galaxy dependencies): a filter of another collection in a
vars file ends the host's nightly check in "No filter named ...".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROLES = Path(__file__).resolve().parents[3] / "roles"
DATA_FILES = sorted([*ROLES.glob("*/vars/*.yml"), *ROLES.glob("*/defaults/main.yml")])
FILTER_CALL = re.compile(r"(?:\|\s*|map\(\s*['\"]|select\(\s*['\"]|reject\(\s*['\"])([a-z_]+\.[a-z_]+\.[a-z_]+)")


@pytest.mark.parametrize("path", DATA_FILES, ids=lambda path: str(path.relative_to(ROLES)))
def test_a_data_file_uses_no_other_collections_filter(path):
    foreign = [name for name in FILTER_CALL.findall(path.read_text())
               if not name.startswith(("rocm_fleet.core.", "ansible.builtin."))]
    assert foreign == [], "%s uses %s" % (path.relative_to(ROLES), ", ".join(foreign))


def test_a_planted_foreign_filter_is_found():
    planted = ("x: \"{{ paths | map('community.general.dict_kv', 'path') | list }}\"\n"
               "y: \"{{ a | ansible.utils.ipaddr }}\"")
    assert FILTER_CALL.findall(planted) == ["community.general.dict_kv", "ansible.utils.ipaddr"]
