"""Cached roots: a recipe's name and digest, and a root built as a copy of its parent's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rocm_fleet.lab import debroot

PARENT = debroot.Recipe(name="parent", suite="bookworm", packages=("python3",), customize=("true",))


def test_a_child_is_named_by_its_parent_too():
    child = debroot.Recipe(name="child", suite="bookworm", packages=(), customize=("true",), parent=PARENT)
    other_parent = debroot.Recipe(name="parent", suite="bookworm", packages=("python3", "sudo"), parent=None)
    moved = debroot.Recipe(name="child", suite="bookworm", packages=(), customize=("true",), parent=other_parent)
    orphan = debroot.Recipe(name="child", suite="bookworm", packages=(), customize=("true",))
    # A change to the parent builds a new child next to the old one.
    assert len({child.digest(), moved.digest(), orphan.digest()}) == 3
    assert child.path().name == f"child-{child.digest()}"


def _minimal_root(root: Path) -> None:
    """A root chroot can run /bin/sh in: this machine's sh and the libraries it loads."""
    shell = Path(shutil.which("sh")).resolve()
    needed = [shell]
    for line in subprocess.run(["ldd", str(shell)], capture_output=True, text=True, check=True).stdout.splitlines():
        path = next((field for field in line.split() if field.startswith("/")), None)
        if path:
            needed.append(Path(path))
    for path in needed:
        target = root / path.relative_to("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    (root / "bin").mkdir(exist_ok=True)
    if not (root / "bin" / "sh").exists():
        (root / "bin" / "sh").symlink_to(shell)


@pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root")
def test_a_child_is_a_copy_of_its_parent_with_its_own_steps_and_the_parent_is_untouched(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCM_FLEET_CACHE", str(tmp_path))
    parent_root = PARENT.path()
    _minimal_root(parent_root)
    (parent_root / "etc").mkdir()
    (parent_root / "etc" / "issue").write_text("Debian\n")
    (parent_root / debroot.STAMP).write_text(json.dumps({"recipe": PARENT.digest()}))
    child = debroot.Recipe(name="child", suite="bookworm", packages=(),
                           customize=("printf Ubuntu > /etc/issue", ": > /etc/child"), parent=PARENT)

    built = debroot.ensure_root(child, log=lambda *_: None)

    assert built == child.path() and (built / "etc" / "issue").read_text() == "Ubuntu"
    assert (built / "etc" / "child").exists()
    assert json.loads((built / debroot.STAMP).read_text())["recipe"] == child.digest()
    assert (parent_root / "etc" / "issue").read_text() == "Debian\n" and not (parent_root / "etc" / "child").exists()
    # Nothing half-built is left beside them.
    assert sorted(path.name for path in built.parent.iterdir() if path.name.startswith(".build-")) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root")
def test_a_failed_step_leaves_no_child_behind(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCM_FLEET_CACHE", str(tmp_path))
    _minimal_root(PARENT.path())
    (PARENT.path() / debroot.STAMP).write_text("{}")
    child = debroot.Recipe(name="child", suite="bookworm", packages=(), customize=("exit 3",), parent=PARENT)

    with pytest.raises(RuntimeError, match=r"building child: 'exit 3' failed \(3\)"):
        debroot.ensure_root(child, log=lambda *_: None)

    assert not child.path().exists()
    assert sorted(path.name for path in child.path().parent.iterdir() if not path.name.startswith(".")) == [
        PARENT.path().name]
