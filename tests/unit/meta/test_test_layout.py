"""The test tree collects in any order and any subset: pytest imports each test file by its path
(--import-mode=importlib), and what tests share is the fleet_testing package, never another test module,
a conftest or a folder put on sys.path."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
TESTS = REPO / "tests"
UNIT_FOLDERS = sorted(str(path.relative_to(REPO)) for path in (TESTS / "unit").iterdir()
                      if path.is_dir() and path.name != "__pycache__")


def test_pytest_imports_test_files_by_path():
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "--import-mode=importlib" in options["addopts"].split()
    assert options["pythonpath"] == ["tests"]


def shared_imports(path: Path, root: Path = TESTS) -> list[str]:
    """Imports of a test module that reach another test module, a conftest, or sys.path."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        found.extend("%s:%d imports %s" % (path.relative_to(root), node.lineno, name) for name in names
                     if name.split(".")[-1].startswith("test_") or name.split(".")[0] == "conftest"
                     or (isinstance(node, ast.ImportFrom) and node.level))
        if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", "") == "sys":
            parent = next((n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                           and n.func.value is node), None)
            if parent is not None and parent.func.attr in ("insert", "append"):
                found.append("%s:%d changes sys.path" % (path.relative_to(root), node.lineno))
    return found


def test_no_test_imports_another_test_a_conftest_or_changes_sys_path():
    # tests/conftest.py puts collections/ on sys.path; tests/compliance is the operators' testinfra suite, run
    # from a checkout where rocm_fleet may not be installed, so its conftest puts src/ there.
    own = {TESTS / "conftest.py", TESTS / "compliance" / "conftest.py", Path(__file__).resolve()}
    found = [line for path in sorted(TESTS.rglob("*.py")) if "fixtures" not in path.parts and path not in own
             and not path.is_relative_to(TESTS / "fleet_testing") for line in shared_imports(path)
             if "bytecode_cache" not in str(path)]  # that test's child interpreter loads a zip, as AnsiballZ does
    assert found == []


def test_the_check_sees_a_test_importing_a_conftest(tmp_path):
    (tmp_path / "test_x.py").write_text("from conftest import render\nimport sys\nsys.path.insert(0, 'x')\n")
    found = shared_imports(tmp_path / "test_x.py", tmp_path)
    assert found == ["test_x.py:1 imports conftest", "test_x.py:3 changes sys.path"]


def collect(*folders: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *folders],
                          cwd=REPO, capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("folders", [*([folder] for folder in UNIT_FOLDERS), UNIT_FOLDERS, UNIT_FOLDERS[::-1],
                                     ["tests/unit/roles", "tests/unit/plugins/modules"]],
                         ids=lambda folders: "+".join(Path(folder).name for folder in folders))
def test_any_subset_of_unit_folders_in_any_order_collects(folders):
    result = collect(*folders)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " collected" in result.stdout or "tests collected" in result.stdout
