"""The Debian packages the lab's ROCm packages need beyond a lab host's base image.

An air-gapped site mirrors its distribution too. For each generation of Debian's real
GPU tools (catalog.TOOL_SUITES) the lab asks apt, in a copy-on-write root of the base
of the hosts that run them, what installing the tools would add, and downloads exactly
that with ``apt-get download``. The root gets its own temporary sources list; this
machine's apt configuration is never touched. Everything lands in the cache (one
directory per generation, with a listing keyed by what decided it), so rebuilds need
no network. A generated linux-headers-<running kernel> package is added, since no
archive carries headers for the lab machine's kernel.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import platform
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rocm_fleet.lab import base, debroot
from rocm_fleet.lab.mirror.catalog import ToolSuite
from rocm_fleet.lab.mirror.debs import DebSpec
from rocm_fleet.lab.mounts import unmount_all_under

# A newer generation may bring libraries the host release lacks, never its core:
# these from another release would be a partial upgrade of the host, not a tool.
CORE_PACKAGES = ("libc6", "libc-bin", "libstdc++6", "libgcc-s1", "python3", "python3-minimal", "libpython3-stdlib")
_INST = re.compile(r"^Inst (\S+) (?:\[\S+\] )?\((\S+) ", re.MULTILINE)
# apt's "Depends: libnl-3-200 (>= 3.11.0) but 3.7.0-2 is to be installed"
_UNMET = re.compile(r"Depends: (\S+) \([<>=]+ [^)]+\) but ")


@dataclass(frozen=True)
class DebianDeb:
    path: Path
    name: str
    version: str
    suite: str  # the Debian release it comes from


def fetch_tool_suite(tools: ToolSuite, cache: Path, log=print) -> list[DebianDeb]:
    """The .debs that make ``tools`` run on a base of ``tools.host_suite``, from the cache or apt."""
    directory = cache / tools.suite
    directory.mkdir(parents=True, exist_ok=True)
    listing = directory / "packages.json"
    key = {
        "targets": list(tools.targets),
        "suite": tools.suite,
        "host_suite": tools.host_suite,
        "host_base": base.recipe(tools.host_suite).digest(),
    }
    # Fetchers of one generation take turns (a lab's mirror build, the background tests, tests/run-all's
    # prepare step): the second finds the first one's listing, never half a download.
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        saved = json.loads(listing.read_text()) if listing.exists() else {}
        if saved.get("key") == key and all(_cached(directory, p["name"], p["version"]) for p in saved["packages"]):
            packages = saved["packages"]
        else:
            packages = _download(tools, directory, log)
            listing.write_text(json.dumps({"key": key, "packages": packages}, indent=1))
    return [
        DebianDeb(_cached(directory, p["name"], p["version"]), p["name"], p["version"], p["suite"]) for p in packages
    ]


def _cached(directory: Path, name: str, version: str) -> Path | None:
    # apt-get download names files <name>_<version, ':' as %3a>_<arch>.deb
    matches = sorted(directory.glob(f"{name}_{version.replace(':', '%3a')}_*.deb"))
    return matches[0] if matches else None


def _download(tools: ToolSuite, directory: Path, log) -> list[dict]:
    newer = tools.suite != tools.host_suite
    log(f"lab mirror: resolving Debian {tools.suite}'s GPU tools on a {tools.host_suite} base (network)")
    with _apt_root(tools.host_suite, [tools.host_suite, tools.suite] if newer else [tools.host_suite]) as root:
        if newer:
            # The host release stays the candidate; the newer one gives only what is asked for.
            (root / "etc/apt/preferences.d/lab-mirror-fetch").write_text(
                f"Package: *\nPin: release n={tools.suite}\nPin-Priority: 100\n"
            )
        chroot(root, "apt-get update -q")
        installs = _plan(root, tools) if newer else _INST.findall(_simulate(root, list(tools.targets))[1])
        host_versions = set(_index(root, tools.host_suite).items())
        packages = [
            {
                "name": name,
                "version": version,
                "suite": tools.host_suite if (name, version) in host_versions else tools.suite,
            }
            for name, version in installs
        ]
        core = [p["name"] for p in packages if p["suite"] != tools.host_suite and _is_core(p["name"])]
        if core:
            raise RuntimeError(
                f"Debian {tools.suite}'s GPU tools do not install on a Debian {tools.host_suite} host: they need"
                f" {', '.join(core)} from {tools.suite}. Carry {tools.host_suite}'s tools instead"
                " (RocmRelease.tools in src/rocm_fleet/lab/mirror/catalog.py)."
            )
        specs = " ".join(f"{p['name']}={p['version']}" for p in packages)
        log(f"lab mirror: downloading {len(packages)} Debian packages for the {tools.suite} tools")
        chroot(root, f"mkdir -p /tmp/lab-debs && cd /tmp/lab-debs && apt-get download -q {specs}")
        for deb in (root / "tmp/lab-debs").glob("*.deb"):
            shutil.copy2(deb, directory / deb.name)
    missing = [p["name"] for p in packages if not _cached(directory, p["name"], p["version"])]
    if missing:
        raise RuntimeError(f"apt-get download did not fetch: {' '.join(missing)}")
    return packages


def _plan(root: Path, tools: ToolSuite) -> list[tuple[str, str]]:
    """What installing the newer suite's tools adds, taking from it only what the host release cannot give.

    apt is asked for the tools at the newer suite's versions; each dependency that the host
    release's version does not satisfy is added at the newer suite's version, until apt agrees.
    """
    newer = _index(root, tools.suite)
    wanted = {name: newer[name] for name in tools.targets}
    for _round in range(20):
        ok, output = _simulate(root, [f"{name}={version}" for name, version in wanted.items()])
        if ok:
            return _INST.findall(output)
        unmet = {name for name in _UNMET.findall(output) if name in newer and name not in wanted}
        if not unmet:
            raise RuntimeError(
                f"Debian {tools.suite}'s GPU tools do not install on Debian {tools.host_suite}:\n{output[-3000:]}"
            )
        wanted.update({name: newer[name] for name in sorted(unmet)})
    raise RuntimeError(f"Debian {tools.suite}'s GPU tools: no installable set found on Debian {tools.host_suite}")


def _simulate(root: Path, specs: list[str]) -> tuple[bool, str]:
    command = f"apt-get install -s -q --no-install-recommends {' '.join(specs)}"
    result = _run_in(root, command)
    if result.returncode != 0 and not _UNMET.search(result.stdout + result.stderr):
        raise RuntimeError(f"in a Debian root, `{command}` failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return result.returncode == 0, result.stdout + result.stderr


def _is_core(name: str) -> bool:
    return name in CORE_PACKAGES or name.startswith(("python3.", "libpython3."))


def _index(root: Path, suite: str) -> dict[str, str]:
    """Package -> version of one suite's index, as apt stored it (the newest where several)."""
    found: dict[str, str] = {}
    for index in (root / "var/lib/apt/lists").glob(f"*_dists_{suite}_main_binary-amd64_Packages"):
        for stanza in index.read_text(errors="replace").split("\n\n"):
            name = re.search(r"^Package: (\S+)$", stanza, re.MULTILINE)
            version = re.search(r"^Version: (\S+)$", stanza, re.MULTILINE)
            if name and version:
                found.setdefault(name.group(1), version.group(1))
    return found


@contextlib.contextmanager
def _apt_root(host_suite: str, suites: list[str]) -> Iterator[Path]:
    """A throwaway overlay of the host base whose apt reads ``suites`` from the Debian archive."""
    archive = debroot.debian_mirror()
    if not archive:
        raise RuntimeError("this machine's apt names no Debian archive to fetch the lab mirror's Debian packages from")
    lower = base.ensure_base(host_suite)
    work = Path(tempfile.mkdtemp(prefix="lab-mirror-apt-"))
    upper, scratch, root = work / "upper", work / "work", work / "root"
    for path in (upper, scratch, root):
        path.mkdir()
    try:
        options = f"lowerdir={lower},upperdir={upper},workdir={scratch}"
        subprocess.run(["mount", "-t", "overlay", "overlay", "-o", options, str(root)], check=True)
        subprocess.run(["mount", "-t", "proc", "proc", str(root / "proc")], check=True)
        shutil.copy2("/etc/resolv.conf", root / "etc/resolv.conf", follow_symlinks=True)
        (root / "etc/apt/sources.list.d/lab-mirror-fetch.sources").write_text(
            f"Types: deb\nURIs: {archive}\nSuites: {' '.join(suites)}\nComponents: main\n"
        )
        # Downloads land in root-owned scratch directories of this throwaway root. A frozen
        # archive snapshot serves a testing Release past its Valid-Until: signatures still count.
        (root / "etc/apt/apt.conf.d/99lab-mirror-fetch").write_text(
            'APT::Sandbox::User "root";\nAcquire::Check-Valid-Until "false";\n'
        )
        yield root
    finally:
        if unmount_all_under(root):
            raise RuntimeError(f"cannot unmount everything under {root}; remove {work} by hand")
        shutil.rmtree(work, ignore_errors=True)


def _run_in(root: Path, command: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C", "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(["chroot", str(root), "/bin/sh", "-ec", command], capture_output=True, text=True, env=env)


def chroot(root: Path, command: str) -> str:
    result = _run_in(root, command)
    if result.returncode != 0:
        output = result.stdout[-2000:] + result.stderr[-2000:]
        raise RuntimeError(f"in a Debian root, `{command}` failed ({result.returncode}):\n{output}")
    return result.stdout


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


def kernel_modules_extra_package(kernel: str | None = None) -> DebSpec:
    """linux-modules-extra-<kernel>: Ubuntu's package of the modules its image leaves out, which AMD's Ubuntu
    instructions install (its amdgpu, in the lab, is amdgpu-dkms's). Unlike Ubuntu's, it depends on no
    linux-modules-<kernel>: no lab host has a package of the machine's kernel."""
    kernel = kernel or platform.release()
    headers = kernel_headers_package(kernel)
    return DebSpec(
        name=f"linux-modules-extra-{kernel}".lower(),
        version=headers.version,
        section="kernel",
        maintainer=headers.maintainer,
        homepage=headers.homepage,
        description=f"Linux kernel extra modules for {kernel} (rocm-fleet lab stub for the lab machine's kernel)",
        files={f"/usr/lib/modules/{kernel}/kernel/rocm-fleet-lab-extra": b"rocm-fleet lab: the extra modules\n"},
    )
