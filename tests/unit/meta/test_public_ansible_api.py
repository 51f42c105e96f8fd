"""No code of the project imports a private part of ansible-core.

A private module (``ansible._internal``, ``ansible.module_utils._internal``) or
a private name (``_template_vars``) may change in any release; the collection
supports every release from meta/runtime.yml's lower bound to the newest.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SOURCES = ("plugins", "src", "tests", "tools", "benchmarks")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))  # __version__ is public


def private_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for module in modules:
            parts = module.split(".")
            if parts[0] == "ansible" and any(_private(part) for part in parts[1:]):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {module}")
    return found


def test_nothing_imports_a_private_ansible_core_module_or_name():
    files = [path for top in SOURCES for path in sorted((REPO / top).rglob("*.py")) if "fixtures" not in path.parts]
    assert files
    found = [hit for path in files for hit in private_imports(path)]
    assert not found, "private ansible-core imports (use a public API):\n" + "\n".join(found)
