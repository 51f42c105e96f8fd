"""Build .deb files from a declarative description, without a subprocess per package.

A .deb is an ar archive of ``debian-binary``, ``control.tar.gz`` and ``data.tar.gz``
(deb(5)); writing it here instead of calling ``dpkg-deb --build`` keeps a mirror
rebuild of several hundred packages at about a second. dpkg and apt read every one
of them in the lab's tests, so a malformed archive fails there.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from rocm_fleet.lab.mirror.catalog import ARCH, MAINTAINER

_MTIME = 1_700_000_000  # fixed, so an unchanged spec builds a byte-identical file


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

    def installed_size(self) -> int:
        """KiB, as dpkg-gencontrol counts it: file sizes rounded up, one per link and directory."""
        files = sum((len(c[1] if isinstance(c, tuple) else c) + 1023) // 1024 for c in self.files.values())
        return files + len(self.symlinks) + len(_directories(self))

    def control(self) -> str:
        fields = [
            ("Package", self.name),
            ("Version", self.version),
            ("Architecture", self.architecture),
            ("Maintainer", self.maintainer),
            ("Installed-Size", str(self.installed_size())),
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


def _directories(spec: DebSpec) -> list[str]:
    dirs = set()
    for path in [*spec.files, *spec.symlinks]:
        dirs.update(str(parent) for parent in PurePosixPath(path).parents if str(parent) != "/")
    return sorted(dirs)


def _tar_gz(entries: list[tuple[str, int, bytes | None, str | None]]) -> bytes:
    """(name, mode, content or None for a directory, link target or None) -> a gzipped tar."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, mode, content, link in entries:
            info = tarfile.TarInfo(name)
            info.mtime, info.mode, info.uname, info.gname = _MTIME, mode, "root", "root"
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            elif content is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    return gzip.compress(raw.getvalue(), compresslevel=6, mtime=0)


def _ar_member(name: str, data: bytes) -> bytes:
    header = f"{name:<16}{_MTIME:<12}{0:<6}{0:<6}{0o100644:<8o}{len(data):<10}`\n".encode()
    return header + data + (b"\n" if len(data) % 2 else b"")


def deb_bytes(spec: DebSpec) -> bytes:
    control = [("./", 0o755, None, None), ("./control", 0o644, spec.control().encode(), None)]
    control += [(f"./{script}", 0o755, text.encode(), None) for script, text in sorted(spec.scripts.items())]
    data = [("./", 0o755, None, None)] + [(f".{path}/", 0o755, None, None) for path in _directories(spec)]
    for path, content in sorted(spec.files.items()):
        mode, body = content if isinstance(content, tuple) else (0o644, content)
        data.append((f".{path}", mode, body, None))
    data += [(f".{path}", 0o777, None, target) for path, target in sorted(spec.symlinks.items())]
    return (
        b"!<arch>\n"
        + _ar_member("debian-binary", b"2.0\n")
        + _ar_member("control.tar.gz", _tar_gz(control))
        + _ar_member("data.tar.gz", _tar_gz(data))
    )


# A package whose payload is at least this large is built once and kept (build_deb_cached): gzip is
# what costs, and the same spec always makes the same bytes.
CACHED_PAYLOAD = 256 * 1024


def _payload_size(spec: DebSpec) -> int:
    return sum(len(c[1] if isinstance(c, tuple) else c) for c in spec.files.values())


def spec_digest(spec: DebSpec) -> str:
    """What decides a package's bytes: its control, scripts, files (with modes) and links."""
    digest = hashlib.sha256(spec.control().encode())
    for name, text in sorted(spec.scripts.items()):
        digest.update(f"\0script {name}\0".encode() + text.encode())
    for path, content in sorted(spec.files.items()):
        mode, body = content if isinstance(content, tuple) else (0o644, content)
        digest.update(f"\0file {path} {mode:o} {len(body)}\0".encode() + body)
    for path, target in sorted(spec.symlinks.items()):
        digest.update(f"\0link {path} {target}\0".encode())
    return digest.hexdigest()[:24]


def build_deb_cached(spec: DebSpec, out_dir: Path, cache: Path | None) -> Path:
    """build_deb, taking a large package from ``cache`` (by spec_digest) where an earlier build left it."""
    if cache is None or _payload_size(spec) < CACHED_PAYLOAD:
        return build_deb(spec, out_dir)
    cached = cache / f"{spec.name}_{spec_digest(spec)}.deb"
    if not cached.is_file():
        built = build_deb(spec, cache)
        os.replace(built, cached)
    out_dir.mkdir(parents=True, exist_ok=True)
    return copy_published(cached, out_dir / spec.filename)


def copy_published(source: Path, target: Path) -> Path:
    """Copy a cached package to ``target`` as a mirror publishes it: world-readable, whole or not at all (a
    reader never sees half a file; two builds of the same package may copy at once)."""
    handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(handle)
    shutil.copyfile(source, partial)
    os.chmod(partial, 0o644)
    os.replace(partial, target)
    return target


def build_deb(spec: DebSpec, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / spec.filename
    # Unique per call: two dists may build the same package (the kernel headers) at once.
    handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=out_dir)
    with os.fdopen(handle, "wb") as out:
        out.write(deb_bytes(spec))
    os.chmod(partial, 0o644)
    os.replace(partial, target)
    return target
