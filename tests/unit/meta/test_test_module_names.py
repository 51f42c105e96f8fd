"""pytest's default import mode gives a test file outside a package its bare basename as module name.

Two such files with one name abort the whole collection ("import file mismatch"), so CI fails in seconds
with no test run. This guards the layout before that happens.
"""

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]


def module_name(path):
    """The name pytest's prepend import mode imports `path` under: its package chain up to a dir with no __init__."""
    parts = [path.stem]
    parent = path.parent
    while (parent / "__init__.py").exists():
        parts.insert(0, parent.name)
        parent = parent.parent
    return ".".join(parts)


def test_every_test_module_imports_under_its_own_name():
    owners = defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if path.name.startswith("test_") or path.name == "conftest.py":
            owners[module_name(path)].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in owners.items() if len(paths) > 1 and name != "conftest"}
    assert not clashes, f"rename one of each: {clashes}"


def test_the_check_sees_a_clash(tmp_path):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "test_x.py").write_text("")
    names = [module_name(p) for p in tmp_path.rglob("test_x.py")]
    assert names == ["test_x", "test_x"]
