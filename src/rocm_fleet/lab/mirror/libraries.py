"""Debian's real ROCm runtime libraries (HIP, the HSA runtime, AMD SMI), as AMD's packages carry them.

AMD's packages put a library in the release's own lib directory (/opt/rocm-<v>/lib,
/opt/rocm/core-<series>/lib) with its SONAME link and the development link:

    libamdhip64.so -> libamdhip64.so.5 -> libamdhip64.so.5.2.21153

(ROCm/clr hipamd/packaging and ROCm/ROCR-Runtime install the whole target, name link included,
into the runtime package; amdsmi's single package and TheRock's ``lib`` component, which takes
``**/*.so``, do the same). The lab copies the real file out of Debian's package of the release's
tool generation and names the link after the file's own DT_SONAME, so it may differ from AMD's
release (Debian's libamdhip64.so.5 in a package of ROCm 7.2.3, whose HIP is .so.7): the file
and its soname are never renamed. What the file needs at run time (libamd_comgr, libnuma,
libdrm, libelf, ...) comes from Debian: the AMD package depends on what Debian's library
package depends on, as the rocminfo binaries do, and the mirror serves that closure.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field, fields
from pathlib import Path

from rocm_fleet.lab.mirror.debs import DebSpec

LIBDIR = "usr/lib/x86_64-linux-gnu"  # where Debian's packages put them (amd64)
_SHT_DYNAMIC, _DT_NULL, _DT_SONAME = 6, 0, 14


@dataclass(frozen=True)
class Library:
    """One real shared library out of one Debian package."""

    name: str  # libamdhip64: the development link is <name>.so
    package: str  # the Debian package it comes from: libamdhip64-5
    version: str  # that package's version: 5.2.3-8
    file: str  # the real file: libamdhip64.so.5.2.21153
    soname: str  # its DT_SONAME, which ld.so looks it up by: libamdhip64.so.5
    mode: int
    depends: str  # the Debian package's own Depends: what the file needs at run time
    content: bytes = field(default=b"", repr=False)  # megabytes: kept out of messages

    @property
    def link(self) -> str:
        return f"{self.name}.so"


def carry(spec: DebSpec, libdir: str, library: Library) -> None:
    """Put ``library`` into ``libdir`` of ``spec`` as AMD lays it out, with what it needs to load."""
    spec.files[f"{libdir}/{library.file}"] = (library.mode, library.content)
    spec.symlinks[f"{libdir}/{library.soname}"] = library.file
    spec.symlinks[f"{libdir}/{library.link}"] = library.soname
    spec.depends.append(library.depends)


def elf_soname(data: bytes) -> str | None:
    """DT_SONAME of a 64-bit little-endian ELF file, read from its dynamic section (None: it has none)."""
    if data[:6] != b"\x7fELF\x02\x01":
        raise ValueError("not a 64-bit little-endian ELF file")
    (section_table,) = struct.unpack_from("<Q", data, 0x28)
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    # Elf64_Shdr: name, type, flags, addr, offset, size, link, info, addralign, entsize
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, section_table + i * entry_size) for i in range(count)]
    for _name, kind, _flags, _addr, offset, size, link, *_rest in sections:
        if kind != _SHT_DYNAMIC:
            continue
        strings = sections[link][4]
        for entry in range(offset, offset + size, 16):
            tag, value = struct.unpack_from("<qQ", data, entry)
            if tag == _DT_SONAME:
                start = strings + value
                return data[start : data.index(b"\0", start)].decode()
            if tag == _DT_NULL:
                break
    return None


def library_from_deb(name: str, deb: Path, cache: Path | None = None) -> Library:
    """The library ``name`` (libamdhip64) out of Debian's package ``deb``; ``cache``: where one extraction is kept."""
    kept = cache / "libraries" / deb.name if cache else None
    if kept and (kept / "library.json").is_file():
        described = json.loads((kept / "library.json").read_text())
        return Library(**described, content=(kept / described["file"]).read_bytes())
    library = _extract(name, deb)
    if kept:
        _keep(library, kept)
    return library


def _extract(name: str, deb: Path) -> Library:
    control = {
        key: subprocess.run(
            ["dpkg-deb", "-f", str(deb), key], capture_output=True, text=True, check=True
        ).stdout.strip()
        for key in ("Package", "Version", "Depends")
    }
    with tempfile.TemporaryDirectory(prefix="lab-library-") as tmp:
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True)
        files = [p for p in (Path(tmp) / LIBDIR).glob(f"{name}.so.*") if p.is_file() and not p.is_symlink()]
        if len(files) != 1:
            raise ValueError(f"{deb.name}: expected one {name}.so.* file in /{LIBDIR}, found {len(files)}")
        content = files[0].read_bytes()
        mode = files[0].stat().st_mode & 0o777
    soname = elf_soname(content)
    if not soname or not soname.startswith(f"{name}.so."):
        raise ValueError(f"{deb.name}: {files[0].name} has DT_SONAME {soname!r}, not {name}.so.<major>")
    return Library(
        name, control["Package"], control["Version"], files[0].name, soname, mode, control["Depends"], content
    )


def _keep(library: Library, kept: Path) -> None:
    """Write the extraction beside its siblings and rename it into place: a reader never sees half of it."""
    kept.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{kept.name}.", dir=kept.parent))
    described = {each.name: getattr(library, each.name) for each in fields(Library) if each.name != "content"}
    (partial / library.file).write_bytes(library.content)
    (partial / "library.json").write_text(json.dumps(described, indent=1))
    try:
        os.rename(partial, kept)
    except OSError:  # another build kept it first
        shutil.rmtree(partial, ignore_errors=True)
