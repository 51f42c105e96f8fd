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

from rocm_fleet.lab import paths
from rocm_fleet.lab.mirror import amd_packages, archive, distro, signing
from rocm_fleet.lab.mirror.archive import Dist
from rocm_fleet.lab.mirror.catalog import CODENAMES, DEBIAN_SUITE, RELEASES
from rocm_fleet.lab.mirror.debs import DebSpec, build_deb, pool_dir

DEFAULT_PORT = paths.DEFAULT_MIRROR_PORT
# AMD's repositories are pinned by origin in AMD's docs (Pin: release o=repo.radeon.com).
AMD_ORIGIN = "repo.radeon.com"
ROCM_KEY_PATH = "rocm/rocm.gpg.key"  # where AMD serves its key, relative to the site root
DISTRO_KEY_PATH = "lab-keys/distro-lab.gpg.key"
WRONG_KEY_PATH = "lab-keys/wrong-lab.gpg.key"
DISTRO_KEYRING = "/usr/share/keyrings/rocm-fleet-lab-distro.gpg"
DISTRO_SOURCES = "/etc/apt/sources.list.d/rocm-fleet-lab-debian.sources"


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
        return f"{self.base_url}/rocm/apt/{_release(version).repo_dir}"

    def amdgpu_repo_url(self, version: str) -> str:
        return f"{self.base_url}/amdgpu/{_release(version).repo_dir}/ubuntu"

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


def _release(version: str):
    for release in RELEASES:
        if version in (release.version, release.repo_dir):
            return release
    raise KeyError(f"the lab mirror serves no ROCm {version}")


def dists() -> list[Dist]:
    result = []
    for release in RELEASES:
        for codename, ubuntu in CODENAMES.items():
            for root in (f"rocm/apt/{release.repo_dir}", f"amdgpu/{release.repo_dir}/ubuntu"):
                result.append(Dist(root, codename, AMD_ORIGIN, AMD_ORIGIN, signing.ROCM_KEY, ubuntu))
    result.append(Dist("debian", DEBIAN_SUITE, "Debian", "Debian", signing.DISTRO_KEY, "12"))
    return result


def _source_stamp(debian_debs: list[Path], kernel: str) -> str:
    digest = hashlib.sha256(kernel.encode())
    package_dir = Path(__file__).resolve().parent
    for path in sorted([*package_dir.glob("*.py"), *signing.KEYS_DIR.glob("*.asc")]):
        digest.update(path.name.encode() + path.read_bytes())
    for deb in debian_debs:
        digest.update(deb.name.encode())
    return digest.hexdigest()[:20]


def lab_mirror_info() -> MirrorInfo:
    """The mirror of this lab instance: its state directory and port (rocm_fleet.lab.paths)."""
    return MirrorInfo(paths.state_dir(), port=paths.mirror_port())


def ensure_mirror(state_dir: Path, cache_dir: Path, port: int = DEFAULT_PORT, log=print) -> MirrorInfo:
    """Build the mirror tree under state_dir/mirror/www unless the stamp says it is current."""
    info = MirrorInfo(Path(state_dir), port)
    kernel = platform.release()
    debian_debs = distro.fetch_debian_debs(Path(cache_dir) / "mirror" / "debian", log=log)
    stamp = _source_stamp(debian_debs, kernel)
    stamp_file = info.root / "stamp"
    if stamp_file.exists() and stamp_file.read_text().strip() == stamp and info.www.is_dir():
        return info
    started = time.monotonic()
    info.root.mkdir(parents=True, exist_ok=True)
    staging = info.root / f"www.new-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    indexes = _build_tree(staging, debian_debs, kernel)
    (info.root / "indexes.json").write_text(json.dumps(indexes))
    old = info.root / f"www.old-{os.getpid()}"
    if info.www.exists():
        info.www.rename(old)
    staging.rename(info.www)
    shutil.rmtree(old, ignore_errors=True)
    _publish(info, indexes, read_content_fault(info))
    stamp_file.write_text(stamp + "\n")
    log(f"lab mirror: built {info.www} in {time.monotonic() - started:.1f} s")
    return info


def _build_tree(www: Path, debian_debs: list[Path], kernel: str) -> dict[str, list[str]]:
    """Build every .deb into its pool; return dist path -> Packages stanzas."""
    rocminfo_deb = next(deb for deb in debian_debs if deb.name.startswith("rocminfo_"))
    rocminfo_bins = amd_packages.debian_rocminfo_files(rocminfo_deb)
    jobs: list[tuple[str, DebSpec, Path]] = []  # (dist path, spec, pool dir)
    for release in RELEASES:
        for codename in CODENAMES:
            rocm_root = f"rocm/apt/{release.repo_dir}"
            for spec in amd_packages.release_packages(release, codename, rocminfo_bins):
                jobs.append((f"{rocm_root}/dists/{codename}", spec, www / rocm_root / "pool/main"))
            amdgpu_root = f"amdgpu/{release.repo_dir}/ubuntu"
            for spec in amd_packages.driver_packages(release, codename):
                jobs.append((f"{amdgpu_root}/dists/{codename}", spec, www / amdgpu_root / "pool/main"))
    debian_dist = f"debian/dists/{DEBIAN_SUITE}"
    jobs.append((debian_dist, distro.kernel_headers_package(kernel), www / "debian/pool/main"))

    def build(job: tuple[str, DebSpec, Path]) -> tuple[str, Path]:
        dist_path, spec, pool = job
        return dist_path, build_deb(spec, pool / pool_dir(spec.name) / spec.name)

    with ThreadPoolExecutor(max_workers=(os.cpu_count() or 2) * 2) as pool:
        built = list(pool.map(build, jobs))
    for deb in debian_debs:
        name = deb.name.split("_", 1)[0]
        target = www / "debian/pool/main" / pool_dir(name) / name / deb.name.replace("%3a", ":")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(deb, target)
        built.append((debian_dist, target))
    indexes: dict[str, list[str]] = {dist.path: [] for dist in dists()}
    for dist_path, deb in built:
        repo_root = www / dist_path.split("/dists/", 1)[0]
        indexes[dist_path].append(archive.package_stanza(deb, repo_root))
    for stanzas in indexes.values():
        stanzas.sort()
    keys = www / ROCM_KEY_PATH
    keys.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(signing.public_key(signing.ROCM_KEY), keys)
    (www / "lab-keys").mkdir(exist_ok=True)
    shutil.copy2(signing.public_key(signing.DISTRO_KEY), www / DISTRO_KEY_PATH)
    shutil.copy2(signing.public_key(signing.WRONG_KEY), www / WRONG_KEY_PATH)
    return indexes


# Faults ---------------------------------------------------------------------------


def read_content_fault(info: MirrorInfo) -> str | None:
    """The fault published in the indexes (wrong-key, missing-package:<name>), if any."""
    path = info.root / "fault"
    return (path.read_text().strip() or None) if path.exists() else None


def read_fault(info: MirrorInfo) -> str | None:
    """"down" while the server is held down, else the content fault."""
    return "down" if (info.root / "down").exists() else read_content_fault(info)


def _publish(info: MirrorInfo, indexes: dict[str, list[str]], fault: str | None) -> None:
    missing = fault.split(":", 1)[1] if fault and fault.startswith("missing-package:") else None
    for dist in dists():
        stanzas = [s for s in indexes[dist.path] if archive.stanza_package(s) != missing]
        key = signing.WRONG_KEY if fault == "wrong-key" and dist.key == signing.ROCM_KEY else None
        archive.publish_dist(info.www, dist, stanzas, key)
