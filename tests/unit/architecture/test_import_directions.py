"""Who may import whom: module_utils (shipped to hosts) never imports plugin_utils or anything but the
standard library, ansible.module_utils and lower module_utils layers; plugin_utils stays on the controller."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fleet_testing import architecture

REPO = Path(__file__).resolve().parents[3]
MODULE_UTILS = "ansible_collections.rocm_fleet.core.plugins.module_utils"
PLUGIN_UTILS = "ansible_collections.rocm_fleet.core.plugins.plugin_utils"


def test_every_import_goes_an_allowed_direction():
    assert architecture.violations(REPO) == []


@pytest.fixture
def copy(tmp_path):
    """The code (plugins/, src/rocm_fleet), copied, to plant a wrong import in."""
    shutil.copytree(REPO / "plugins", tmp_path / "plugins", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "src" / "rocm_fleet", tmp_path / "src" / "rocm_fleet",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


@pytest.mark.parametrize(("path", "line", "found"), [
    ("plugins/module_utils/gpu/model.py", f"from {PLUGIN_UTILS}.decision import preflight",
     "plugins/module_utils/gpu/model.py:{n}: module_utils/gpu may not import " + PLUGIN_UTILS + ".decision"),
    ("plugins/module_utils/gpu/model.py", f"from {MODULE_UTILS}.compliance.core import result",
     "plugins/module_utils/gpu/model.py:{n}: module_utils/gpu may not import " + MODULE_UTILS + ".compliance.core"),
    ("plugins/module_utils/common/runner.py", f"from {MODULE_UTILS}.gpu import model",
     "plugins/module_utils/common/runner.py:{n}: module_utils/common may not import " + MODULE_UTILS + ".gpu"),
    ("plugins/module_utils/host/facts.py", "import yaml",
     "plugins/module_utils/host/facts.py:{n}: runs on hosts and may not import yaml"),
    ("plugins/modules/gpu_facts.py", f"from {PLUGIN_UTILS}.roles import specs",
     "plugins/modules/gpu_facts.py:{n}: modules/ may not import " + PLUGIN_UTILS + ".roles"),
    ("plugins/modules/gpu_facts.py", "from ansible.plugins.loader import filter_loader",
     "plugins/modules/gpu_facts.py:{n}: runs on hosts and may not import ansible.plugins.loader"),
    ("plugins/plugin_utils/roles/specs.py", f"from {PLUGIN_UTILS}.rollout import batches",
     "plugins/plugin_utils/roles/specs.py:{n}: plugin_utils/roles may not import " + PLUGIN_UTILS + ".rollout"),
])
def test_a_planted_wrong_import_is_found(copy, path, line, found):
    target = copy / path
    lines = target.read_text().splitlines()
    lines.append(line)
    target.write_text("\n".join(lines) + "\n")
    assert found.format(n=len(lines)) in architecture.violations(copy)
