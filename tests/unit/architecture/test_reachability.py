"""Every file of module_utils, plugin_utils and src/rocm_fleet is reached from a module, a plugin, the CLI
or a script of the project: none is kept alive by its tests alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fleet_testing import architecture

REPO = Path(__file__).resolve().parents[3]


def test_no_file_is_unreachable():
    assert architecture.orphans(REPO) == []


@pytest.fixture
def copy(tmp_path):
    """The checkout without its history, environments and fixtures, to plant an orphan in."""
    shutil.copytree(REPO, tmp_path / "repo", symlinks=True, ignore=lambda folder, names: [
        name for name in names if name in (".git", ".venv", ".cache", "collections", "fixtures", "__pycache__")])
    return tmp_path / "repo"


@pytest.mark.parametrize("path", [
    "plugins/module_utils/gpu/amd_smi/unused.py",
    "plugins/plugin_utils/decision/unused.py",
    "src/rocm_fleet/lab/unused.py",
])
def test_a_planted_orphan_is_found(copy, path):
    (copy / path).write_text('"""Nothing imports this."""\n')
    assert architecture.orphans(copy) == [path]


def test_a_file_only_a_removed_import_reached_becomes_an_orphan(copy):
    # host/signature_read is reached only through host/secure_boot_read: cut that import.
    reader = copy / "plugins/module_utils/host/secure_boot_read.py"
    text = reader.read_text()
    cut = text.replace("module_utils.host.signature_read import", "module_utils.host.boot_read import")
    assert cut != text
    reader.write_text(cut)
    assert "plugins/module_utils/host/signature_read.py" in architecture.orphans(copy)
