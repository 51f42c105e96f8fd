"""plugins/module_utils and plugins/plugin_utils are packages by domain, each saying what it holds and who
may import it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PACKAGES = sorted(path.parent for part in ("module_utils", "plugin_utils")
                  for path in (REPO / "plugins" / part).rglob("__init__.py"))


@pytest.mark.parametrize("part", ["module_utils", "plugin_utils"])
def test_no_module_at_the_top_level(part):
    assert sorted(path.name for path in (REPO / "plugins" / part).glob("*.py")) == ["__init__.py"]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda path: str(path.relative_to(REPO / "plugins")))
def test_every_package_says_what_it_holds_and_who_may_import_it(package):
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    assert len(docstring.split()) >= 15, f"{package.relative_to(REPO)}/__init__.py: say what it holds"
    assert "may import it" in docstring, f"{package.relative_to(REPO)}/__init__.py: say who may import it"


def test_every_folder_of_code_is_a_package():
    for part in ("module_utils", "plugin_utils"):
        for folder in (REPO / "plugins" / part).rglob("*"):
            if folder.is_dir() and folder.name != "__pycache__" and any(folder.glob("*.py")):
                assert (folder / "__init__.py").is_file(), folder
