"""Build the lab mirror's tree (idempotent, stamped) and apply faults to it."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rocm_fleet.lab import paths, systems
from rocm_fleet.lab.mirror import amd_packages, archive, core_sdk, distro, kernel_packages, rpm_repos, signing
from rocm_fleet.lab.mirror.archive import Dist
from rocm_fleet.lab.mirror.catalog import (
    CODENAMES,
    CORE_SDK_DIRS,
    CORE_SDK_ORIGIN,
    CORE_SDK_RELEASES,
    CORE_SDK_SUITE,
    DEBIAN_VERSIONS,
    DRIVER_LINES,
    HOST_SUITES,
    RELEASES,
    TOOL_SUITES,
    DriverLine,
    RocmRelease,
    tool_suites_in_use,
)
from rocm_fleet.lab.mirror.debs import DebSpec, build_deb_cached, pool_dir

DEFAULT_PORT = paths.DEFAULT_MIRROR_PORT
# AMD's repositories are pinned by origin in AMD's docs (Pin: release o=repo.radeon.com).
AMD_ORIGIN = "repo.radeon.com"
ROCM_KEY_PATH = "rocm/rocm.gpg.key"  # where AMD serves its key, relative to the site root
# The ROCm Core SDK 10.x: AMD's rocm/core/packages/<dir>/ (dists/stable) and its armored key at
# rocm/gpg/packages.gpg (AMD's 10.0.0 install page), relative to the site root.
CORE_SDK_ROOT = "rocm/core/packages"
CORE_SDK_KEY_PATH = "rocm/gpg/packages.gpg"
DISTRO_KEY_PATH = "lab-keys/distro-lab.gpg.key"
WRONG_KEY_PATH = "lab-keys/wrong-lab.gpg.key"
DISTRO_KEYRING = "/usr/share/keyrings/rocm-fleet-lab-distro.gpg"
DISTRO_SOURCES = "/etc/apt/sources.list.d/rocm-fleet-lab-{archive}.sources"
# Ubuntu's codename -> the lab system: its archive is the Debian subset of the suite underneath (systems.py).
UBUNTU_SYSTEMS = {system.codename: system for system in systems.SYSTEMS.values() if system.family == "ubuntu"}


@dataclass
class MirrorInfo:
    state_dir: Path
    port: int = DEFAULT_PORT
    host: str = "127.0.0.1"
    rocm_versions: list[str] = field(default_factory=lambda: [r.version for r in RELEASES])
    codenames: list[str] = field(default_factory=lambda: list(CODENAMES))
    rocm_key_fingerprint: str = signing.FINGERPRINTS[signing.ROCM_KEY]
    distro_key_fingerprint: str = signing.FINGERPRINTS[signing.DISTRO_KEY]
    wrong_key_fingerprint: str = signing.FINGERPRINTS[signing.WRONG_KEY]

    @property
    def root(self) -> Path:
        return self.state_dir / "mirror"

    @property
    def www(self) -> Path:
        return self.root / "www"

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def rocm_repo_url(self, version: str) -> str:
        return f"{self.base_url}/{rocm_root(_release(version))}"

    def amdgpu_repo_url(self, version: str) -> str:
        """The driver repository of a release: amdgpu/6.4.1/ubuntu, amdgpu/30.30.3/ubuntu (7.x)."""
        return f"{self.base_url}/{amdgpu_root(_release(version))}"

    def graphics_repo_url(self, version: str) -> str | None:
        """graphics/<rocm dir>/ubuntu, which AMD's 7.x instructions add; None for 6.x."""
        root = graphics_root(_release(version))
        return f"{self.base_url}/{root}" if root else None

    def core_sdk_repo_url(self, directory: str) -> str:
        """AMD's 10.x repository of one OS directory (debian12, ubuntu2404, ...), with its trailing slash."""
        if directory not in CORE_SDK_DIRS:
            raise KeyError(f"the lab mirror serves no ROCm Core SDK directory {directory!r}")
        return f"{self.base_url}/{core_sdk_root(directory)}/"

    def driver_line_repo_url(self, line: str) -> str:
        """amdgpu/<line>/ubuntu of a driver line the mirror serves on its own (31.40, 31.50)."""
        return f"{self.base_url}/{amdgpu_line_root(_driver_line(line))}"

    @property
    def core_sdk_key_url(self) -> str:
        return f"{self.base_url}/{CORE_SDK_KEY_PATH}"

    @property
    def debian_url(self) -> str:
        return f"{self.base_url}/debian"

    @property
    def rocm_key_url(self) -> str:
        return f"{self.base_url}/{ROCM_KEY_PATH}"

    @property
    def wrong_key_url(self) -> str:
        return f"{self.base_url}/{WRONG_KEY_PATH}"

    def to_dict(self) -> dict:
        data = asdict(self)
        data["state_dir"] = str(self.state_dir)
        data.update(base_url=self.base_url, rocm_key_url=self.rocm_key_url, debian_url=self.debian_url)
        return data


def _release(version: str) -> RocmRelease:
    for release in RELEASES:
        if version in (release.version, release.repo_dir):
            return release
    raise KeyError(f"the lab mirror serves no ROCm {version}")


def _driver_line(line: str) -> DriverLine:
    for driver in DRIVER_LINES:
        if line in (driver.line, driver.directory):
            return driver
    raise KeyError(f"the lab mirror serves no amdgpu driver line {line}")


def core_sdk_root(directory: str) -> str:
    return f"{CORE_SDK_ROOT}/{directory}"


def amdgpu_line_root(driver: DriverLine) -> str:
    return f"amdgpu/{driver.directory}/ubuntu"


def rocm_root(release: RocmRelease) -> str:
    return f"rocm/apt/{release.repo_dir}"


def amdgpu_root(release: RocmRelease) -> str:
    return f"amdgpu/{release.driver.directory}/ubuntu"


def graphics_root(release: RocmRelease) -> str | None:
    return f"graphics/{release.repo_dir}/ubuntu" if release.graphics else None


def debian_suites() -> list[str]:
    return list(dict.fromkeys(HOST_SUITES.values()))


def dists() -> list[Dist]:
    result = {}
    for release in RELEASES:
        for codename, ubuntu in CODENAMES.items():
            for root in (rocm_root(release), amdgpu_root(release), graphics_root(release)):
                if root:
                    result[f"{root}/{codename}"] = Dist(
                        root, codename, AMD_ORIGIN, AMD_ORIGIN, signing.ROCM_KEY, ubuntu
                    )
    for driver in DRIVER_LINES:
        for codename, ubuntu in CODENAMES.items():
            root = amdgpu_line_root(driver)
            result[f"{root}/{codename}"] = Dist(root, codename, AMD_ORIGIN, AMD_ORIGIN, signing.ROCM_KEY, ubuntu)
    for directory in CORE_SDK_DIRS:
        root = core_sdk_root(directory)
        result[f"{root}/{CORE_SDK_SUITE}"] = Dist(
            root, CORE_SDK_SUITE, CORE_SDK_ORIGIN, CORE_SDK_ORIGIN, signing.AMDROCM_KEY
        )
    for suite in debian_suites():
        result[f"debian/{suite}"] = Dist(
            "debian", suite, "Debian", "Debian", signing.DISTRO_KEY, DEBIAN_VERSIONS[suite]
        )
    for codename, system in UBUNTU_SYSTEMS.items():
        result[f"ubuntu/{codename}"] = Dist("ubuntu", codename, "Ubuntu", "Ubuntu", signing.DISTRO_KEY, system.version)
    return list(result.values())


def _source_stamp(debian_debs: list[distro.DebianDeb], kernel: str) -> str:
    digest = hashlib.sha256(kernel.encode())
    package_dir = Path(__file__).resolve().parent
    for path in sorted([*package_dir.glob("*.py"), *signing.KEYS_DIR.glob("*.asc")]):
        digest.update(path.name.encode() + path.read_bytes())
    for deb in debian_debs:
        digest.update(f"{deb.suite}/{deb.path.name}".encode())
    return digest.hexdigest()[:20]


def lab_mirror_info() -> MirrorInfo:
    """The mirror of this lab instance: its state directory and port (rocm_fleet.lab.paths)."""
    return MirrorInfo(paths.state_dir(), port=paths.mirror_port())


def fetch_tools(cache_dir: Path, log=print) -> dict[str, list[distro.DebianDeb]]:
    """Tool generation -> the Debian packages that carry it onto its hosts (cached)."""
    cache = Path(cache_dir) / "mirror" / "debian"
    return {tools.suite: distro.fetch_tool_suite(tools, cache, log=log) for tools in tool_suites_in_use()}


def ensure_mirror(state_dir: Path, cache_dir: Path, port: int = DEFAULT_PORT, log=print) -> MirrorInfo:
    """Build the mirror tree under state_dir/mirror/www unless the stamp says it is current."""
    info = MirrorInfo(Path(state_dir), port)
    kernel = platform.release()
    tool_debs = fetch_tools(cache_dir, log=log)
    # The port counts: epel-release carries the mirror's address, as a site's own mirror writes it.
    stamp = _source_stamp([deb for debs in tool_debs.values() for deb in debs], kernel + f":{port}")
    stamp_file = info.root / "stamp"
    if stamp_file.exists() and stamp_file.read_text().strip() == stamp and info.www.is_dir():
        return info
    started = time.monotonic()
    info.root.mkdir(parents=True, exist_ok=True)
    staging = info.root / f"www.new-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    cache = Path(cache_dir) / "mirror"
    tools = _tools(tool_debs, cache)
    indexes = _build_tree(staging, tools, tool_debs, kernel, cache)
    # The RHEL family's repositories, signed and indexed as they are built (no content fault touches them).
    rpm_repos.build(staging, tools, tool_debs, kernel, info.base_url, cache)
    (info.root / "indexes.json").write_text(json.dumps(indexes))
    (info.root / "served.json").write_text(json.dumps(served(tool_debs), indent=1))
    old = info.root / f"www.old-{os.getpid()}"
    if info.www.exists():
        info.www.rename(old)
    staging.rename(info.www)
    shutil.rmtree(old, ignore_errors=True)
    _publish(info, indexes, read_content_fault(info))
    stamp_file.write_text(stamp + "\n")
    log(f"lab mirror: built {info.www} in {time.monotonic() - started:.1f} s")
    return info


def _tools(tool_debs: dict[str, list[distro.DebianDeb]], cache: Path | None = None) -> dict[str, amd_packages.Tools]:
    result = {}
    for suite, debs in tool_debs.items():
        paths_by_name = {deb.name: deb.path for deb in debs}
        versions = {deb.name: deb.version for deb in debs}
        result[suite] = amd_packages.tools_from_debs(TOOL_SUITES[suite], paths_by_name, versions, cache)
    return result


def served(tool_debs: dict[str, list[distro.DebianDeb]]) -> dict:
    """What the mirror serves, for people and tests: releases, repositories, tool versions."""
    tool_versions = {
        suite: {deb.name: deb.version for deb in debs if deb.name in TOOL_SUITES[suite].targets}
        for suite, debs in tool_debs.items()
    }
    releases = {}
    for release in RELEASES:
        releases[release.version] = {
            "rocm": rocm_root(release),
            "amdgpu": amdgpu_root(release),
            "graphics": graphics_root(release),
            "kernel_module": release.driver.module_version,
            "default": release.default,
            "codenames": {
                codename: {
                    "dkms_module": release.driver.dkms_module_version(codename),
                    "amdgpu-dkms": release.driver.dkms_deb_version(codename),
                    "rocm-core": release.deb_version("rocm-core", codename),
                    "tools": release.tool_suite(codename).suite,
                }
                for codename in CODENAMES
            },
        }
    core = {
        release.version: {
            "series": release.series,
            "prefix": release.prefix,
            "version": release.deb_version,
            "driver": release.driver,
            "tools": dict(release.tools),
        }
        for release in CORE_SDK_RELEASES
    }
    lines = {
        driver.line: {
            "amdgpu": amdgpu_line_root(driver),
            "kernel_module": driver.module_version,
            "amdgpu-dkms": {codename: driver.dkms_deb_version(codename) for codename in CODENAMES},
        }
        for driver in DRIVER_LINES
    }
    kernels = kernel_packages.lab_kernels(platform.release())
    return {
        "releases": releases,
        "core_sdk": {"repositories": {d: core_sdk_root(d) for d in CORE_SDK_DIRS}, "releases": core},
        "driver_lines": lines,
        "debian": debian_suites(),
        "ubuntu": list(UBUNTU_SYSTEMS),
        "tools": tool_versions,
        "kernels": kernels,
    }


def _build_tree(
    www: Path,
    tools: dict[str, amd_packages.Tools],
    tool_debs: dict[str, list[distro.DebianDeb]],
    kernel: str,
    cache: Path | None = None,
) -> dict[str, list[str]]:
    """Build every .deb into its pool; return dist path -> Packages stanzas.

    ``cache`` (<cache>/mirror) keeps what is costly and never changes for the same input: the ROCm Core SDK's
    amd-smi tree and the runtime libraries out of Debian's packages, and the large packages built from them
    (debs.build_deb_cached).
    """
    jobs: list[tuple[str, DebSpec, Path]] = []  # (dist path, spec, pool dir)
    copies: dict[tuple[str, str], tuple[Path, Path]] = {}  # (dist path, file name) -> (deb, pool dir)
    for release in RELEASES:
        for codename in CODENAMES:
            carried = tools[release.tool_suite(codename).suite]
            groups = [
                (rocm_root(release), amd_packages.release_packages(release, codename, carried)),
                (amdgpu_root(release), amd_packages.driver_packages(release, codename)),
                (graphics_root(release), amd_packages.graphics_packages(release, codename)),
            ]
            for root, specs in groups:
                for spec in specs:
                    jobs.append((f"{root}/dists/{codename}", spec, www / root / "pool/main"))
            # A generation newer than the host release: what that release lacks comes with
            # the ROCm release that carries it, the way AMD's repositories carry their own;
            # never under one of AMD's names (Debian's rocminfo 7.2.4 would shadow AMD's).
            amd_names = {spec.name for spec in groups[0][1]}
            for deb in tool_debs[carried.suite.suite]:
                if deb.suite != carried.suite.host_suite and deb.name not in amd_names:
                    dist_path = f"{rocm_root(release)}/dists/{codename}"
                    copies[(dist_path, deb.path.name)] = (deb.path, www / rocm_root(release) / "pool/main")
    for driver in DRIVER_LINES:
        root = amdgpu_line_root(driver)
        for codename in CODENAMES:
            for spec in amd_packages.driver_line_packages(driver, codename):
                jobs.append((f"{root}/dists/{codename}", spec, www / root / "pool/main"))
    _core_sdk_jobs(www, tools, tool_debs, jobs, copies, cache)
    for suite in debian_suites():
        dist_path = f"debian/dists/{suite}"
        jobs.append((dist_path, distro.kernel_headers_package(kernel), www / "debian/pool/main"))
        # Kernel updates: one amdgpu-dkms builds for (good), one it cannot build for (bad).
        for spec in kernel_packages.kernel_update_packages(kernel):
            jobs.append((dist_path, spec, www / "debian/pool/main"))
        for debs in tool_debs.values():
            for deb in debs:
                if deb.suite == suite:
                    copies[(dist_path, deb.path.name)] = (deb.path, www / "debian/pool/main")
    # An Ubuntu archive: the Debian subset of the suite underneath, and Ubuntu's kernel packages of the
    # machine's kernel (AMD's Ubuntu instructions install linux-headers- and linux-modules-extra-$(uname -r)).
    for codename, system in UBUNTU_SYSTEMS.items():
        dist_path = f"ubuntu/dists/{codename}"
        for spec in (distro.kernel_headers_package(kernel), distro.kernel_modules_extra_package(kernel)):
            jobs.append((dist_path, spec, www / "ubuntu/pool/main"))
        for debs in tool_debs.values():
            for deb in debs:
                if deb.suite == system.suite:
                    copies[(dist_path, deb.path.name)] = (deb.path, www / "ubuntu/pool/main")

    def build(job: tuple[str, DebSpec, Path]) -> tuple[str, str]:
        dist_path, spec, pool = job
        deb = build_deb_cached(spec, pool / pool_dir(spec.name) / spec.name, cache and cache / "built")
        return dist_path, archive.package_stanza(deb, www / dist_path.split("/dists/", 1)[0], spec.control())

    def copy(item: tuple[tuple[str, str], tuple[Path, Path]]) -> tuple[str, str]:
        (dist_path, file_name), (deb, pool) = item
        name = file_name.split("_", 1)[0]
        target = pool / pool_dir(name) / name / file_name.replace("%3a", ":")
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            try:  # one file for every archive that serves it (debian/ and ubuntu/ share Debian's packages)
                os.link(deb, target)
            except OSError:
                shutil.copy2(deb, target)
        return dist_path, archive.package_stanza(target, www / dist_path.split("/dists/", 1)[0])

    with ThreadPoolExecutor(max_workers=(os.cpu_count() or 2) * 2) as pool:
        stanzas = list(pool.map(build, jobs)) + list(pool.map(copy, copies.items()))
    indexes: dict[str, list[str]] = {dist.path: [] for dist in dists()}
    for dist_path, stanza in stanzas:
        indexes[dist_path].append(stanza)
    for entries in indexes.values():
        entries.sort()
    # rocm.gpg.key is published with the signatures (_publish): a key rotation changes both.
    (www / "lab-keys").mkdir(exist_ok=True)
    shutil.copy2(signing.public_key(signing.DISTRO_KEY), www / DISTRO_KEY_PATH)
    shutil.copy2(signing.public_key(signing.WRONG_KEY), www / WRONG_KEY_PATH)
    return indexes


def _core_sdk_jobs(
    www: Path,
    tools: dict[str, amd_packages.Tools],
    tool_debs: dict[str, list[distro.DebianDeb]],
    jobs: list[tuple[str, DebSpec, Path]],
    copies: dict[tuple[str, str], tuple[Path, Path]],
    cache: Path | None = None,
) -> None:
    """The ROCm Core SDK repositories: every release's packages per directory, and what the host release lacks."""
    amd_smi: dict[str, tuple[dict, str] | None] = {}
    for directory, host_suite in CORE_SDK_DIRS.items():
        root = core_sdk_root(directory)
        dist_path = f"{root}/dists/{CORE_SDK_SUITE}"
        pool = www / root / "pool/main"
        for release in CORE_SDK_RELEASES:
            suite = release.tool_suite(directory)
            if suite.host_suite != host_suite:
                raise ValueError(
                    f"ROCm {release.version} on {directory}: Debian {suite.suite}'s tools run on {suite.host_suite}"
                )
            if suite.suite not in amd_smi:
                deb = next((d.path for d in tool_debs[suite.suite] if d.name == "amd-smi"), None)
                amd_smi[suite.suite] = core_sdk.amd_smi_files(deb, cache) if suite.amd_smi and deb else None
            specs = core_sdk.release_packages(release, directory, tools[suite.suite], amd_smi[suite.suite])
            jobs += [(dist_path, spec, pool) for spec in specs]
            # As for the legacy releases: a newer generation brings what the host release lacks; no rocm-smi.
            for deb in tool_debs[suite.suite]:
                if deb.suite != host_suite and deb.name not in core_sdk.NOT_SERVED:
                    copies[(dist_path, deb.path.name)] = (deb.path, pool)


# Faults ---------------------------------------------------------------------------


def read_content_fault(info: MirrorInfo) -> str | None:
    """The fault published in the indexes (wrong-key, missing-package:<name>), if any."""
    path = info.root / "fault"
    return (path.read_text().strip() or None) if path.exists() else None


def read_fault(info: MirrorInfo) -> str | None:
    """ "down" while the server is held down, else the content fault."""
    return "down" if (info.root / "down").exists() else read_content_fault(info)


# The ROCm key that signs the AMD repositories in each content fault (None: the ROCm key).
AMD_SIGNING_KEY = {"wrong-key": signing.WRONG_KEY, "rotated-key": signing.ROCM_NEXT_KEY}
# A key rotation in two steps: publish the next key beside the current one, then sign with it.
SERVES_BOTH_KEYS = ("next-key", "rotated-key")


def _publish(info: MirrorInfo, indexes: dict[str, list[str]], fault: str | None) -> None:
    missing = fault.split(":", 1)[1] if fault and fault.startswith("missing-package:") else None
    amd_key = AMD_SIGNING_KEY.get(fault or "")
    served_key = info.www / ROCM_KEY_PATH
    served_key.parent.mkdir(parents=True, exist_ok=True)
    with signing.Signer() as signer:
        if fault in SERVES_BOTH_KEYS:
            # Mid-rotation, as a repository moving to a new key serves it: both keys in rocm.gpg.key.
            served_key.write_text(signer.export([signing.ROCM_KEY, signing.ROCM_NEXT_KEY]))
        else:
            shutil.copy2(signing.public_key(signing.ROCM_KEY), served_key)
        # The ROCm Core SDK's own key, armored as AMD serves it; no fault of the legacy key touches it.
        core_key = info.www / CORE_SDK_KEY_PATH
        core_key.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(signing.public_key(signing.AMDROCM_KEY), core_key)
        for dist in dists():
            stanzas = [s for s in indexes[dist.path] if archive.stanza_package(s) != missing]
            key = amd_key if amd_key and dist.key == signing.ROCM_KEY else None
            archive.publish_dist(info.www, dist, stanzas, signer, key)
