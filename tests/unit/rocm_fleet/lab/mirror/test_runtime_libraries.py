"""The lab mirror's runtime libraries (read from cached debs): AMD's runtime packages carry Debian's real HIP,
HSA runtime and AMD SMI libraries of the release's tool generation, with SONAME and development links, and
depend on what those libraries need. The real debs come from the cache a mirror build fills
(<cache>/mirror/debian/<generation>). Where no build has filled it yet, root fetches them as the build does
(tests/run-all's prepare step is usually at it already, and the fetch waits for it); only a run that cannot
fetch (no root, no debootstrap) skips."""

from __future__ import annotations

import functools
import io
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from rocm_fleet.lab import base, paths
from rocm_fleet.lab.mirror import amd_packages, core_sdk, distro, libraries
from rocm_fleet.lab.mirror.catalog import CORE_SDK_DIRS, CORE_SDK_RELEASES, RELEASES, TOOL_SUITES
from rocm_fleet.lab.mirror.debs import build_deb

# Debian's packages and their real sonames per generation; AMD's releases have others (docs/lab-mirror.md).
REAL = {
    "bookworm": {"libamdhip64": ("libamdhip64-5", "libamdhip64.so.5")},
    "trixie": {"libamdhip64": ("libamdhip64-5", "libamdhip64.so.5"), "libamd_smi": ("libamd-smi0", "libamd_smi.so.0")},
    "forky": {"libamdhip64": ("libamdhip64-6", "libamdhip64.so.6"), "libamd_smi": ("libamd-smi27", "libamd_smi.so.27")},
}
for _libraries in REAL.values():
    _libraries["libhsa-runtime64"] = ("libhsa-runtime64-1", "libhsa-runtime64.so.1")
LEGACY = {"hip-runtime-amd": ("libamdhip64",), "hsa-rocr": ("libhsa-runtime64",), "amd-smi-lib": ("libamd_smi",)}
CORE = {"amdrocm-runtime": ("libamdhip64", "libhsa-runtime64"), "amdrocm-amdsmi": ("libamd_smi",)}
CASES = [(r.version, c) for r in RELEASES for c in ("jammy", "noble")]
CASES += [(r.version, d) for r in CORE_SDK_RELEASES for d in CORE_SDK_DIRS]
DEB_LIBDIR = f"./{libraries.LIBDIR}"


def cached_debs(suite: str) -> dict[str, Path]:
    """Debian package -> its cached .deb of one generation (apt-get download's file names; the last by name)."""
    found = {}
    for deb in sorted((paths.cache_dir() / "mirror" / "debian" / suite).glob("*.deb")):
        found[deb.name.split("_")[0]] = deb
    return found


def missing_debs(suite: str) -> list[str]:
    debs = cached_debs(suite)
    return [name for name in ("rocminfo", *TOOL_SUITES[suite].libraries.values()) if name not in debs]


def real_debs(suite: str) -> dict[str, Path]:
    missing = missing_debs(suite)
    # Only where the lab could build its mirror: root, with debootstrap (the newest-ansible-core controller's root
    # has neither the tool nor the cache, and skips as a run without root does).
    if missing and os.geteuid() == 0 and shutil.which("debootstrap"):
        distro.fetch_tool_suite(TOOL_SUITES[suite], paths.cache_dir() / "mirror" / "debian", log=lambda *_: None)
        missing = missing_debs(suite)
        assert not missing, f"the mirror's fetch of {suite} brought no {', '.join(missing)}"
    if missing:
        pytest.skip(f"no cached {', '.join(missing)} of {suite} and no root or debootstrap to fetch them:"
                    " run rocm-fleet lab up once")
    return cached_debs(suite)


@functools.cache
def tools(suite: str) -> amd_packages.Tools:
    debs = real_debs(suite)
    versions = {name: deb.name.split("_")[1].replace("%3a", ":") for name, deb in debs.items()}
    return amd_packages.tools_from_debs(TOOL_SUITES[suite], debs, versions)


@functools.cache
def control(deb: Path, field: str) -> str:
    return subprocess.run(
        ["dpkg-deb", "-f", str(deb), field], capture_output=True, text=True, check=True
    ).stdout.strip()


@functools.cache
def debian_files(deb: Path) -> dict[str, bytes | str]:
    """The library directory of Debian's package, read with dpkg-deb and tarfile: file -> bytes, link -> target."""
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True, check=True).stdout
    found: dict[str, bytes | str] = {}
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        for member in archive.getmembers():
            if member.name.startswith(f"{DEB_LIBDIR}/") and (member.isfile() or member.issym()):
                name = member.name.rsplit("/", 1)[1]
                found[name] = member.linkname if member.issym() else archive.extractfile(member).read()
    return found


@functools.cache
def shipped(deb: Path) -> frozenset[str]:
    """The names (files and links) a Debian package puts into the library directory, as dpkg-deb lists them."""
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    return frozenset(re.findall(rf"{re.escape(DEB_LIBDIR)}/([^/\s]+)(?: -> \S+)?$", listing, re.MULTILINE))


def specs(version: str, where: str) -> tuple[str, str, dict, dict[str, tuple[str, ...]]]:
    """(generation, library directory, package -> spec, carrier -> its libraries) of a release's packages."""
    for release in RELEASES:
        if release.version == version:
            suite = release.tool_suite(where).suite
            built = amd_packages.release_packages(release, where, tools(suite))
            carriers = {f"{name}{twin}": libs for name, libs in LEGACY.items() for twin in ("", version)}
            return suite, f"{release.prefix}/lib", {spec.name: spec for spec in built}, carriers
    release = next(release for release in CORE_SDK_RELEASES if release.version == version)
    suite = release.tool_suite(where).suite
    amd_smi = ({}, "amd-smi-needs") if TOOL_SUITES[suite].amd_smi else None
    built = core_sdk.release_packages(release, where, tools(suite), amd_smi)
    carriers = {f"{name}{release.series}": libs for name, libs in CORE.items()}
    return suite, f"{release.prefix}/lib", {spec.name: spec for spec in built}, carriers


def test_each_generation_fetches_its_library_packages():
    for suite, real in REAL.items():
        assert TOOL_SUITES[suite].libraries == {name: package for name, (package, _soname) in real.items()}
        assert set(TOOL_SUITES[suite].libraries.values()) <= set(TOOL_SUITES[suite].targets)


@pytest.mark.parametrize(("version", "where"), CASES, ids=[f"{v}-{w}" for v, w in CASES])
def test_each_runtime_package_carries_its_generations_real_library(version, where):
    suite, libdir, packages, carriers = specs(version, where)
    for name, carried in carriers.items():
        spec = packages[name]
        for library in carried:
            files = [path for path in spec.files if re.fullmatch(rf"{libdir}/{re.escape(library)}\.so\.[0-9.]+", path)]
            if library not in REAL[suite]:  # Debian 12 packages no amd-smi: the package stays a placeholder
                assert not files and not any(path.startswith(f"{libdir}/") for path in spec.symlinks), name
                assert any(path.endswith("/LAB-PLACEHOLDER") for path in spec.files), name
                continue
            package, soname = REAL[suite][library]
            deb = cached_debs(suite)[package]
            real = debian_files(deb)
            assert len(files) == 1, (name, files)
            file = files[0].rsplit("/", 1)[1]
            mode, content = spec.files[files[0]]
            assert content == real[file] and content[:4] == b"\x7fELF" and mode == 0o644, (name, file)
            assert real[soname] == file  # Debian's own SONAME link names the same file
            assert spec.symlinks[f"{libdir}/{soname}"] == file, name
            assert spec.symlinks[f"{libdir}/{library}.so"] == soname, name  # AMD ships the development link
            assert control(deb, "Depends") in spec.depends, name  # what the file needs comes from Debian
        assert not any(path.endswith("LAB-PLACEHOLDER") for path in spec.files if path.startswith(f"{libdir}/")), name


def test_a_library_without_its_debian_package_fails_the_build():
    with pytest.raises(KeyError):
        amd_packages.release_packages(RELEASES[0], "jammy", amd_packages.Tools(TOOL_SUITES["bookworm"], {}, {}, ""))


READELF = pytest.mark.skipif(not shutil.which("readelf") or not shutil.which("dpkg-deb"), reason="needs binutils, dpkg")


def dynamic(path: Path) -> tuple[str | None, list[str]]:
    """(DT_SONAME, DT_NEEDED entries) as readelf prints them."""
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    soname = re.findall(r"\(SONAME\)\s+Library soname: \[(.+)\]", out)
    return (soname[0] if soname else None), re.findall(r"\(NEEDED\)\s+Shared library: \[(.+)\]", out)


@READELF
@pytest.mark.slow
@pytest.mark.parametrize(("version", "where"), [("7.2.3", "jammy"), ("7.1.1", "noble"), ("7.2.3", "noble"),
                                                ("10.1.0", "debian13")])  # fmt: skip
def test_the_soname_link_names_the_elf_file_it_points_to(tmp_path, version, where):
    """Built, unpacked by dpkg: <soname> -> the real file, whose DT_SONAME is the link's name; <name>.so -> <soname>."""
    suite, libdir, packages, carriers = specs(version, where)
    root = tmp_path / "root"
    seen = set()
    for name, carried in carriers.items():
        if name.endswith(version):  # the versioned twin carries the same files
            continue
        deb = build_deb(packages[name], tmp_path / "debs")
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
        for library in carried:
            if library not in REAL[suite]:
                continue
            soname = REAL[suite][library][1]
            link = root / libdir.lstrip("/") / soname
            assert link.is_symlink() and "/" not in str(link.readlink()), link
            target = link.resolve()
            assert target.is_file() and target.parent == link.parent and target.read_bytes()[:4] == b"\x7fELF"
            assert dynamic(target)[0] == soname == link.name
            assert (link.parent / f"{library}.so").resolve() == target
            seen.add(library)
    assert seen == set(REAL[suite])


LDD_CASES = [("7.2.3", "jammy"), ("7.1.1", "noble"), ("7.2.3", "noble"), ("10.1.0", "debian13")]


@READELF
@pytest.mark.slow
@pytest.mark.parametrize(("version", "where"), LDD_CASES, ids=[f"{v}-{w}" for v, w in LDD_CASES])
def test_what_each_library_needs_is_declared_and_served(tmp_path, version, where):
    """An ldd without a root: every DT_NEEDED of a carried library is in the host's base or in a package that
    the carrying AMD package's Depends reach through the generation's cached debs (what the mirror serves)."""
    suite, libdir, packages, carriers = specs(version, where)
    host = base.recipe(TOOL_SUITES[suite].host_suite).path()
    if not host.is_dir():
        pytest.skip(f"no cached lab base of {TOOL_SUITES[suite].host_suite}")
    in_base = {p.name for d in ("usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu") for p in (host / d).glob("*.so*")}
    debs = cached_debs(suite)
    checked = set()
    for name, carried in carriers.items():
        reached = closure(", ".join(packages[name].depends), debs)
        served = {file for package in reached for file in shipped(debs[package])}
        for library in (lib for lib in carried if lib in REAL[suite]):
            path = tmp_path / library
            path.write_bytes(packages[name].files[f"{libdir}/{tools(suite).libraries[library].file}"][1])
            soname, needed = dynamic(path)
            missing = [lib for lib in needed if lib not in served and lib not in in_base]
            assert soname and not missing, (name, library, missing, sorted(reached))
            checked.add(library)
    assert checked == set(REAL[suite])


def closure(depends: str, debs: dict[str, Path]) -> set[str]:
    """The cached packages that ``depends`` reaches (every alternative, transitively)."""
    reached: set[str] = set()
    todo = [depends]
    while todo:
        for name in re.findall(r"(?:^|[,|]\s*)([a-z0-9][a-z0-9+.-]+)", todo.pop()):
            if name in debs and name not in reached:
                reached.add(name)
                todo.append(control(debs[name], "Depends"))
    return reached


@READELF
def test_elf_soname_reads_what_readelf_reads():
    system = [p for p in sorted(Path("/lib/x86_64-linux-gnu").glob("lib*.so.*")) if not p.is_symlink()][:20]
    if not system:
        pytest.skip("no system libraries to compare with")
    for path in system:
        assert libraries.elf_soname(path.read_bytes()) == dynamic(path)[0], path
    with pytest.raises(ValueError):
        libraries.elf_soname(b"#!/bin/sh\n")


def test_carry_lays_the_library_out_as_amd_does():
    spec = amd_packages.DebSpec(name="hip-runtime-amd", version="1", description="x", depends=["rocm-core"])
    needs = "libamd-comgr2, libnuma1 (>= 2.0.11)"
    library = libraries.Library("libamdhip64", "libamdhip64-5", "5.2.3-8", "libamdhip64.so.5.2.21153",
                                "libamdhip64.so.5", 0o644, needs, b"\x7fELF")  # fmt: skip
    libraries.carry(spec, "/opt/rocm-7.2.3/lib", library)
    assert spec.files == {"/opt/rocm-7.2.3/lib/libamdhip64.so.5.2.21153": (0o644, b"\x7fELF")}
    assert spec.symlinks == {"/opt/rocm-7.2.3/lib/libamdhip64.so.5": "libamdhip64.so.5.2.21153",
                             "/opt/rocm-7.2.3/lib/libamdhip64.so": "libamdhip64.so.5"}  # fmt: skip
    assert spec.depends == ["rocm-core", "libamd-comgr2, libnuma1 (>= 2.0.11)"]


def test_an_extraction_is_kept_and_read_back(tmp_path):
    debs = real_debs("bookworm")
    first = libraries.library_from_deb("libhsa-runtime64", debs["libhsa-runtime64-1"], tmp_path)
    kept = tmp_path / "libraries" / debs["libhsa-runtime64-1"].name
    assert sorted(p.name for p in kept.iterdir()) == sorted(["library.json", first.file])
    (kept / first.file).write_bytes(b"from the cache")
    second = libraries.library_from_deb("libhsa-runtime64", debs["libhsa-runtime64-1"], tmp_path)
    assert second.content == b"from the cache" and second.soname == first.soname == "libhsa-runtime64.so.1"
    assert (second.package, second.version, second.depends) == (first.package, first.version, first.depends)
