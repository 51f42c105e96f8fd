"""AMD-named packages of one ROCm release for one Ubuntu codename.

Unversioned packages (rocm-hip-runtime) are AMD's single-version set and upgrade from
release to release; versioned ones (rocm-hip-runtime6.4.1) are the multi-version set
that installs side by side. Both install into /opt/rocm-<version>. AMD's docs forbid
mixing the two sets for one release; the lab enforces it: each unversioned package
Conflicts/Replaces/Provides its versioned twin, so apt refuses a mix instead of dpkg
failing half way on shared files.

Two packages carry real tools: rocminfo repackages Debian's rocminfo binaries into
/opt/rocm-<version>/bin, and rocm-smi-lib depends on Debian's rocm-smi and links
/opt/rocm-<version>/bin/rocm-smi to it (python resolves the link, so its bindings load).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from rocm_fleet.lab.mirror import scripts
from rocm_fleet.lab.mirror.catalog import META_PACKAGES, RocmRelease, component_packages
from rocm_fleet.lab.mirror.debs import DebSpec

PLACEHOLDER_NOTE = (
    "rocm-fleet lab placeholder of AMD's {name} {version} (ROCm {release}).\n"
    "It carries the name, version and dependencies of AMD's package, not its software.\n"
)


def debian_rocminfo_files(rocminfo_deb: Path) -> dict[str, tuple[int, bytes]]:
    """The real rocminfo and rocm_agent_enumerator out of Debian's package."""
    with tempfile.TemporaryDirectory(prefix="rocminfo-") as tmp:
        subprocess.run(["dpkg-deb", "-x", str(rocminfo_deb), tmp], check=True)
        return {
            name: (0o755, (Path(tmp) / "usr/bin" / name).read_bytes())
            for name in ("rocminfo", "rocm_agent_enumerator")
        }


def release_packages(release: RocmRelease, codename: str, rocminfo_bins: dict[str, tuple[int, bytes]]) -> list[DebSpec]:
    specs = []
    for versioned in (False, True):
        for name in component_packages(release):
            specs.append(_component(release, codename, name, versioned, rocminfo_bins))
        for name in META_PACKAGES:
            specs.append(_meta(release, codename, name, versioned))
    return specs


def driver_packages(release: RocmRelease, codename: str) -> list[DebSpec]:
    version = release.amdgpu_deb_version(codename)
    module_version = release.dkms_module_version(codename)
    firmware = DebSpec(
        name="amdgpu-dkms-firmware",
        version=version,
        architecture="all",
        section="kernel",
        description=f"firmware blobs used by amdgpu driver in DKMS format (lab stub, amdgpu {release.amdgpu_version})",
        homepage="https://github.com/ROCm/ROCK-Kernel-Driver",
        files={f"/lib/firmware/updates/amdgpu/LAB-{release.amdgpu_version}.txt": b"lab firmware placeholder\n"},
    )
    dkms = DebSpec(
        name="amdgpu-dkms",
        version=version,
        architecture="all",
        section="kernel",
        description=f"amdgpu driver in DKMS format (lab simulation of amdgpu {module_version})",
        homepage="https://github.com/ROCm/ROCK-Kernel-Driver",
        depends=[f"amdgpu-dkms-firmware (= {version})"],
        scripts={
            "postinst": scripts.amdgpu_dkms_postinst(module_version, release.amdgpu_version),
            "prerm": scripts.amdgpu_dkms_prerm(module_version),
        },
    )
    return [firmware, dkms]


def _name(name: str, release: RocmRelease, versioned: bool) -> str:
    return f"{name}{release.version}" if versioned else name


def _twin_relations(spec: DebSpec, release: RocmRelease, name: str, codename: str, versioned: bool) -> None:
    if versioned:
        return
    twin = f"{name}{release.version}"
    spec.conflicts.append(twin)
    spec.replaces.append(twin)
    spec.provides.append(f"{twin} (= {release.deb_version(name, codename)})")


def _pinned(release: RocmRelease, codename: str, name: str, versioned: bool) -> str:
    return f"{_name(name, release, versioned)} (= {release.deb_version(name, codename)})"


def _component(
    release: RocmRelease, codename: str, name: str, versioned: bool, rocminfo_bins: dict[str, tuple[int, bytes]]
) -> DebSpec:
    prefix = release.prefix
    version = release.deb_version(name, codename)
    spec = DebSpec(
        name=_name(name, release, versioned),
        version=version,
        description=f"{name} for ROCm {release.version} (rocm-fleet lab)",
    )
    if name == "rocm-core":
        spec.description = "ROCm Runtime software stack"
        spec.files[f"{prefix}/.info/version"] = f"{release.version}-{release.build}\n".encode()
        spec.scripts["postinst"] = scripts.rocm_core_postinst(release.version, prefix)
        spec.scripts["prerm"] = scripts.rocm_core_prerm(prefix)
    else:
        spec.depends.append(_pinned(release, codename, "rocm-core", versioned))
        note = PLACEHOLDER_NOTE.format(name=name, version=version, release=release.version)
        spec.files[f"{prefix}/share/doc/{spec.name}/LAB-PLACEHOLDER"] = note.encode()
    if name == "rocminfo":
        spec.depends += [_pinned(release, codename, "hsa-rocr", versioned), "libhsa-runtime64-1", "python3", "kmod"]
        for binary, content in rocminfo_bins.items():
            spec.files[f"{prefix}/bin/{binary}"] = content
    elif name == "rocm-smi-lib":
        spec.depends += ["rocm-smi", "librocm-smi64-1"]
        spec.symlinks[f"{prefix}/bin/rocm-smi"] = "/usr/libexec/rocm_smi/rocm_smi.py"
    _twin_relations(spec, release, name, codename, versioned)
    return spec


def _meta(release: RocmRelease, codename: str, name: str, versioned: bool) -> DebSpec:
    spec = DebSpec(
        name=_name(name, release, versioned),
        version=release.deb_version(name, codename),
        description="Radeon Open Compute (ROCm) Runtime software stack",
        depends=[_pinned(release, codename, dep, versioned) for dep in ("rocm-core", *META_PACKAGES[name])],
    )
    _twin_relations(spec, release, name, codename, versioned)
    return spec
