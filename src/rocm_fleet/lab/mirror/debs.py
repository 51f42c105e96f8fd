"""Build .deb files with dpkg-deb from a declarative description."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from rocm_fleet.lab.mirror.catalog import ARCH, MAINTAINER


@dataclass
class DebSpec:
    name: str
    version: str
    description: str
    architecture: str = ARCH
    section: str = "devel"
    depends: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    replaces: list[str] = field(default_factory=list)
    provides: list[str] = field(default_factory=list)
    maintainer: str = MAINTAINER
    homepage: str = "https://github.com/ROCm/ROCm"
    # absolute path -> file content (bytes) or (mode, bytes)
    files: dict[str, bytes | tuple[int, bytes]] = field(default_factory=dict)
    symlinks: dict[str, str] = field(default_factory=dict)  # absolute path -> target
    scripts: dict[str, str] = field(default_factory=dict)  # postinst/prerm/... -> shell text

    @property
    def filename(self) -> str:
        """Debian's file name: the epoch is not part of it."""
        return f"{self.name}_{self.version.split(':', 1)[-1]}_{self.architecture}.deb"

    def control(self) -> str:
        fields = [
            ("Package", self.name),
            ("Version", self.version),
            ("Architecture", self.architecture),
            ("Maintainer", self.maintainer),
            ("Section", self.section),
            ("Priority", "optional"),
            ("Depends", ", ".join(self.depends)),
            ("Conflicts", ", ".join(self.conflicts)),
            ("Replaces", ", ".join(self.replaces)),
            ("Provides", ", ".join(self.provides)),
            ("Homepage", self.homepage),
            ("Description", self.description),
        ]
        return "".join(f"{key}: {value}\n" for key, value in fields if value)


def pool_dir(name: str) -> str:
    """Debian's pool sharding: lib packages go under libX/, the rest under their first letter."""
    return name[:4] if name.startswith("lib") else name[0]


def build_deb(spec: DebSpec, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / spec.filename
    with tempfile.TemporaryDirectory(prefix="deb-") as tmp:
        root = Path(tmp) / "root"
        debian = root / "DEBIAN"
        debian.mkdir(parents=True)
        (debian / "control").write_text(spec.control())
        for script, text in spec.scripts.items():
            path = debian / script
            path.write_text(text)
            path.chmod(0o755)
        for path, content in spec.files.items():
            mode, data = content if isinstance(content, tuple) else (0o644, content)
            dest = root / path.lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
            dest.chmod(mode)
        for path, link_target in spec.symlinks.items():
            dest = root / path.lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(link_target, dest)
        for directory, _dirs, _files in os.walk(root):
            os.chmod(directory, 0o755)
        partial = target.with_suffix(".partial")
        subprocess.run(
            ["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(root), str(partial)],
            check=True,
            capture_output=True,
        )
        shutil.move(partial, target)
    return target
