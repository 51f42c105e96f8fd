"""The real dpkg on a private root: packages built with dpkg-deb, installed, held or refused as on a host."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

needs_dpkg = pytest.mark.skipif(not shutil.which("dpkg-deb"), reason="dpkg is not installed")


def new_root(directory: Path) -> Path:
    """An empty dpkg database under ``directory``/root."""
    root = directory / "root"
    for part in ("var/lib/dpkg/updates", "var/lib/dpkg/info"):
        (root / part).mkdir(parents=True)
    for name in ("status", "available"):
        (root / "var/lib/dpkg" / name).touch()
    return root


def dpkg_query(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["dpkg-query", f"--admindir={root}/var/lib/dpkg", *args],
                          text=True, check=True, capture_output=True)  # fmt: skip


def dpkg(root: Path, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["dpkg", f"--root={root}", "--force-script-chrootless", "--force-not-root", *args],
                          input=stdin, text=True, check=check, capture_output=True)  # fmt: skip


def build_deb(directory: Path, name: str, version: str, files: dict[str, str] | None = None,
              scripts: dict[str, str] | None = None, conffiles: tuple[str, ...] = ()) -> Path:
    """A package of ``name`` and ``version`` shipping ``files`` ({path: text}), with maintainer ``scripts``
    ({"postinst": text}) and ``conffiles`` (paths among ``files``)."""
    package = directory / f"{name}-{version}-build"
    (package / "DEBIAN").mkdir(parents=True)
    for script, text in (scripts or {}).items():
        (package / "DEBIAN" / script).write_text(text)
        (package / "DEBIAN" / script).chmod(0o755)
    if conffiles:
        (package / "DEBIAN" / "conffiles").write_text("".join(f"{path}\n" for path in conffiles))
    (package / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: {version}\nArchitecture: all\nMaintainer: lab <lab@example.org>\nDescription: t\n"
    )
    for path, text in (files or {}).items():
        (package / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (package / path.lstrip("/")).write_text(text)
    deb = directory / f"{name}_{version}.deb"
    subprocess.run(["dpkg-deb", "-b", str(package), str(deb)], check=True, capture_output=True)
    return deb
