"""meta/runtime.yml's requires_ansible holds the ansible-core running these tests.

CI runs the unit tests at both ends of that range: on the .venv's ansible-core
and on the newest release (tests/integration/lab/test_newest_ansible_core.py).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml
from ansible.release import __version__ as ansible_core_version
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

REPO = Path(__file__).resolve().parents[3]


def supported() -> SpecifierSet:
    return SpecifierSet(yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())["requires_ansible"])


def lower_bound(specifiers: SpecifierSet) -> Version:
    [bound] = [Version(spec.version) for spec in specifiers if spec.operator == ">="]
    return bound


def test_the_running_ansible_core_is_a_supported_release():
    assert Version(ansible_core_version) in supported(), (
        f"ansible-core {ansible_core_version} is outside meta/runtime.yml's requires_ansible {supported()}"
    )


def test_pip_installs_no_ansible_core_older_than_the_collection_supports():
    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    [core] = [Requirement(item) for item in dependencies if Requirement(item).name == "ansible-core"]
    assert lower_bound(core.specifier) == lower_bound(supported())
