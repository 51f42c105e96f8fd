"""The distro subset: Debian packages the ROCm packages need beyond the lab's base image.

An air-gapped site mirrors its distribution too; the lab serves the dependency closure
of Debian's rocm-smi, rocminfo and their libraries minus what the base image already
has, downloaded once with this machine's apt and kept in the cache so rebuilds need no
network. It adds a generated linux-headers-<running kernel> package, since no
archive carries headers for the lab machine's kernel.
"""

from __future__ import annotations

import json
import platform
import re
import subprocess
from pathlib import Path

from rocm_fleet.lab import base
from rocm_fleet.lab.mirror.catalog import DISTRO_TARGETS
from rocm_fleet.lab.mirror.debs import DebSpec

_DEPENDS_FLAGS = ("--no-recommends", "--no-suggests", "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances")


def _closure(names: list[str]) -> set[str]:
    result = subprocess.run(
        ["apt-cache", "depends", "--recurse", *_DEPENDS_FLAGS, *names], capture_output=True, text=True, check=True
    )
    # Unindented lines are the packages visited; <name> lines are virtual packages.
    return {line.strip() for line in result.stdout.splitlines() if line and not line[0].isspace() and "<" not in line}


def _required_packages() -> list[str]:
    """Priority: required, the packages debootstrap's minbase installs besides apt."""
    available = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True, check=True).stdout
    names = set(re.findall(r"^Package: (\S+)\n(?:[^\n]+\n)*?Priority: required$", available, re.MULTILINE))
    if not names:
        raise RuntimeError("apt knows no Priority: required package: run apt-get update")
    return sorted(names)


def closure_beyond_base() -> list[str]:
    """Debian packages to serve: the targets' closure minus the base image's closure."""
    in_base = _closure([*_required_packages(), "apt", *base.PACKAGES])
    return sorted(_closure(list(DISTRO_TARGETS)) - in_base)


def fetch_debian_debs(cache: Path, log=print) -> list[Path]:
    """The subset's .debs, from the cache or downloaded with apt-get download."""
    cache.mkdir(parents=True, exist_ok=True)
    listing = cache / "packages.json"
    key = {"targets": list(DISTRO_TARGETS), "base": list(base.PACKAGES), "suite": base.SUITE}
    names = None
    if listing.exists():
        saved = json.loads(listing.read_text())
        if saved.get("key") == key:
            names = saved["packages"]
    if names is None:
        names = closure_beyond_base()
    debs = {name: _cached_deb(cache, name) for name in names}
    missing = [name for name, path in debs.items() if path is None]
    if missing:
        log(f"lab mirror: downloading {len(missing)} Debian packages: {' '.join(missing)}")
        subprocess.run(
            ["apt-get", "download", "-q", "-o", "APT::Sandbox::User=root", *missing],
            cwd=cache,
            check=True,
            capture_output=True,
        )
        debs = {name: _cached_deb(cache, name) for name in names}
        still = [name for name, path in debs.items() if path is None]
        if still:
            raise RuntimeError(f"apt-get download did not fetch: {' '.join(still)}")
    listing.write_text(json.dumps({"key": key, "packages": names}, indent=1))
    return sorted(path for path in debs.values() if path)


def _cached_deb(cache: Path, name: str) -> Path | None:
    # apt-get download names files <name>_<version with %3a for :>_<arch>.deb
    matches = sorted(cache.glob(f"{name}_*.deb"))
    return matches[-1] if matches else None


def kernel_headers_package(kernel: str | None = None) -> DebSpec:
    """linux-headers-<kernel>: just enough of a header tree for the simulated DKMS build."""
    kernel = kernel or platform.release()
    if not re.fullmatch(r"[A-Za-z0-9.+_~-]+", kernel):
        raise ValueError(f"unexpected kernel release {kernel!r}")
    tree = f"/usr/src/linux-headers-{kernel}"
    major_minor = ".".join(kernel.split(".")[:2])
    return DebSpec(
        name=f"linux-headers-{kernel}".lower(),
        version=f"{re.split(r'[^0-9.]', kernel)[0]}-1~lab",
        section="kernel",
        maintainer="rocm-fleet lab <lab@rocm-fleet.invalid>",
        homepage="https://www.kernel.org/",
        description=f"Header files for Linux {kernel} (rocm-fleet lab stub for the lab machine's kernel)",
        files={
            f"{tree}/Makefile": f"# rocm-fleet lab stub, Linux {major_minor}\nKERNELRELEASE = {kernel}\n".encode(),
            f"{tree}/include/config/kernel.release": f"{kernel}\n".encode(),
            f"{tree}/include/generated/utsrelease.h": f'#define UTS_RELEASE "{kernel}"\n'.encode(),
        },
        symlinks={f"/lib/modules/{kernel}/build": tree},
    )
