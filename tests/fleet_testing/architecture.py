"""The import graph of the collection's plugins and the rocm_fleet package, read from the source (ast).

Used by tests/unit/architecture: which package may import which (``violations``) and which files nothing
runnable reaches (``orphans``). Every function takes the repository root, so a test can plant a wrong
import or an orphan in a copy and watch it be found.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

COLLECTION = "ansible_collections.rocm_fleet.core."

# The layers of module_utils, each with the module_utils packages it may import besides itself. Code that
# runs on hosts imports downwards only, so a host never receives more than the call needs.
MODULE_UTILS_LAYERS = {
    "common": set(),
    "gpu": {"common"},
    "health": {"common", "gpu"},
    "host": {"common", "gpu", "health"},
    "repo": {"common"},
    "compliance": {"common", "gpu", "health", "host", "repo"},
}
# plugin_utils packages, each with the plugin_utils packages it may import besides itself (all may import
# module_utils: the controller reads what hosts return with the same code).
PLUGIN_UTILS_LAYERS = {
    "roles": set(),
    "decision": {"roles"},
    "compliance": {"roles", "decision"},
    "rollout": {"roles", "decision"},
    "pull": set(),
}


def dotted(repo: Path, path: Path) -> str:
    """The import name of a file of the collection (plugins/...) or of src/."""
    relative = path.relative_to(repo)
    parts = list(relative.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    if parts[0] == "src":
        return ".".join(parts[1:])
    return COLLECTION + ".".join(parts)


def python_files(repo: Path) -> list[Path]:
    return sorted([*(repo / "plugins").rglob("*.py"), *(repo / "src" / "rocm_fleet").rglob("*.py")])


def script_roots(repo: Path) -> list[Path]:
    """The project's scripts, which import the collection and rocm_fleet as any user would."""
    return sorted([*(repo / "benchmarks").glob("*.py"), *(repo / "tools").glob("*.py")])



def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in ``path``, ``from x import y`` giving x.y (which may be a module)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found.extend((node.lineno, "%s.%s" % (node.module, alias.name)) for alias in node.names)
    return found


def area(name: str) -> tuple[str, str] | None:
    """(kind, package) of a collection or rocm_fleet module name: ("module_utils", "gpu"), ("filter", ""), ..."""
    if name.startswith(COLLECTION + "plugins."):
        parts = name[len(COLLECTION + "plugins."):].split(".")
        return parts[0], parts[1] if len(parts) > 1 and parts[0] in ("module_utils", "plugin_utils") else ""
    if name == "rocm_fleet" or name.startswith("rocm_fleet."):
        return "src", ""
    return None


def allowed(source: tuple[str, str], target: tuple[str, str]) -> bool:
    kind, package = source
    target_kind, target_package = target
    if kind == "module_utils":
        return target_kind == "module_utils" and (
            target_package in ("", package) or target_package in MODULE_UTILS_LAYERS.get(package, set()))
    if kind == "modules":
        return target_kind == "module_utils"
    if kind == "plugin_utils":
        return target_kind == "module_utils" or (target_kind == "plugin_utils" and (
            target_package in ("", package) or target_package in PLUGIN_UTILS_LAYERS.get(package, set())))
    if kind in ("filter", "action", "doc_fragments", "src"):
        return target_kind in ("module_utils", "plugin_utils", "src") or (kind, target_kind) == ("filter", "filter")
    return False


def host_side_foreign(name: str) -> bool:
    """An import that code shipped to hosts cannot rely on: neither the standard library, ansible.module_utils
    nor this collection's module_utils."""
    top = name.split(".")[0]
    return not (top in sys.stdlib_module_names or top == "__future__" or name == "ansible"
                or name.startswith("ansible.module_utils") or (area(name) or ("",))[0] == "module_utils")


def violations(repo: Path) -> list[str]:
    """Every import that goes against the allowed directions, as 'file:line: what'."""
    found = []
    for path in python_files(repo):
        source = area(dotted(repo, path))
        if source is None:
            continue
        relative = path.relative_to(repo)
        for line, name in imports(path):
            target = area(name)
            if target is not None and target != source and not allowed(source, target):
                found.append("%s:%d: %s/%s may not import %s" % (relative, line, *source, name))
            if source[0] in ("module_utils", "modules") and target is None and host_side_foreign(name):
                found.append("%s:%d: runs on hosts and may not import %s" % (relative, line, name))
    return sorted(set(found))


def run_as_script(repo: Path) -> set[str]:
    """rocm_fleet modules run by name (``python -m rocm_fleet.x``) or as a console script, from anywhere in the repo."""
    names = set()
    for path in repo.rglob("*"):
        relative = path.relative_to(repo)
        if relative.parts[0] in (".git", ".venv", ".cache", "collections") or (
                relative.parts[0] == "tests" and path.suffix == ".py"):  # a test reaches nothing for the product
            continue
        if path.is_file() and path.suffix in ("", ".py", ".sh", ".yml", ".yaml", ".toml", ".j2", ".service", ".cfg"):
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            names.update(re.findall(r"""-m["',\s]+(rocm_fleet(?:\.\w+)+)""", text))
            names.update(re.findall(r'= "(rocm_fleet(?:\.\w+)+):\w+"', text))
    return names


def orphans(repo: Path) -> list[str]:
    """Files of plugins/module_utils, plugins/plugin_utils and src/rocm_fleet that no module, plugin, role
    or the CLI reaches through imports."""
    files = {dotted(repo, path): path for path in python_files(repo)}
    roots = {name for name, path in files.items()
             if path.relative_to(repo).parts[1] not in ("module_utils", "plugin_utils", "rocm_fleet")}
    roots |= run_as_script(repo) & set(files)
    seen, stack = set(), list(roots)
    stack.extend(target for path in script_roots(repo) for _, target in imports(path) if target in files)
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        parents = (".".join(parts[:depth]) for depth in range(1, len(parts)))
        stack.extend(parent for parent in parents if parent in files)
        stack.extend(target for _, target in imports(files[name]) if target in files)
    return sorted(str(path.relative_to(repo)) for name, path in files.items()
                  if name not in seen and path.name != "__init__.py")
