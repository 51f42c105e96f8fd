"""AMD-named packages of one ROCm release for one Ubuntu codename.

Unversioned packages (rocm-hip-runtime) are AMD's single-version set and upgrade from
release to release; versioned ones (rocm-hip-runtime6.4.1) are the multi-version set
that installs side by side. Both install into /opt/rocm-<version>. AMD's docs forbid
mixing the two sets for one release; the lab enforces it: each unversioned package
Conflicts/Replaces/Provides its versioned twin, so apt refuses a mix instead of dpkg
failing half way on shared files.

Three packages carry Debian's real tools of the release's tool generation
(catalog.ToolSuite): rocminfo repackages Debian's rocminfo binaries into
/opt/rocm-<version>/bin; rocm-smi-lib and amd-smi-lib depend on Debian's rocm-smi and
amd-smi of that generation and link /opt/rocm-<version>/bin/{rocm-smi,amd-smi} to them
(python resolves the link, so their bindings load). Where Debian has no amd-smi
(Debian 12) amd-smi-lib is a placeholder that says so.

Three carry Debian's real runtime libraries of that generation in /opt/rocm-<version>/lib
(libraries.py): hip-runtime-amd libamdhip64, hsa-rocr libhsa-runtime64, amd-smi-lib
libamd_smi (where Debian packages amd-smi), each with its SONAME and development links.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from rocm_fleet.lab.mirror import libraries, scripts
from rocm_fleet.lab.mirror.catalog import META_PACKAGES, DriverLine, RocmRelease, ToolSuite, component_packages
from rocm_fleet.lab.mirror.debs import DebSpec

PLACEHOLDER_NOTE = (
    "rocm-fleet lab placeholder of AMD's {name} {version} (ROCm {release}).\n"
    "It carries the name, version and dependencies of AMD's package, not its software.\n"
)
# Where Debian's packages put the tools' entry points (their /usr/bin links point here).
ROCM_SMI_SCRIPT = "/usr/libexec/rocm_smi/rocm_smi.py"
AMD_SMI_SCRIPT = "/usr/libexec/amdsmi_cli/amdsmi_cli.py"
# AMD's component package -> the runtime library it carries in <prefix>/lib (catalog.ToolSuite.libraries).
RUNTIME_LIBRARIES = {"hip-runtime-amd": "libamdhip64", "hsa-rocr": "libhsa-runtime64", "amd-smi-lib": "libamd_smi"}
AMD_LIBDRM = "libdrm-amdgpu-amdgpu1"  # AMD's libdrm, from the graphics repository of a 7.x release


@dataclass(frozen=True)
class Tools:
    """Debian's tools of one generation, as the AMD packages carry them."""

    suite: ToolSuite
    versions: dict[str, str]  # Debian package -> its version (rocm-smi, amd-smi, rocminfo, ...)
    rocminfo_files: dict[str, tuple[int, bytes]]  # binary name -> (mode, content)
    rocminfo_depends: str  # Debian rocminfo's own Depends: its binaries need them
    # AMD's runtime library (libamdhip64, ...) -> Debian's real one of this generation
    libraries: dict[str, libraries.Library] = field(default_factory=dict)


def tools_from_debs(
    suite: ToolSuite, debs: dict[str, Path], versions: dict[str, str], cache: Path | None = None
) -> Tools:
    """The real rocminfo binaries and dependencies out of Debian's rocminfo package, and the generation's
    runtime libraries out of theirs (``cache``: where each library's extraction is kept)."""
    rocminfo = debs["rocminfo"]
    depends = subprocess.run(
        ["dpkg-deb", "-f", str(rocminfo), "Depends"], capture_output=True, text=True, check=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="rocminfo-") as tmp:
        subprocess.run(["dpkg-deb", "-x", str(rocminfo), tmp], check=True)
        files = {
            name: (0o755, (Path(tmp) / "usr/bin" / name).read_bytes()) for name in ("rocminfo", "rocm_agent_enumerator")
        }
    found = {name: libraries.library_from_deb(name, debs[package], cache) for name, package in suite.libraries.items()}
    return Tools(suite, versions, files, depends, found)


def release_packages(release: RocmRelease, codename: str, tools: Tools) -> list[DebSpec]:
    specs = []
    for versioned in (False, True):
        for name in component_packages(release):
            specs.append(_component(release, codename, name, versioned, tools))
        for name in META_PACKAGES:
            specs.append(_meta(release, codename, name, versioned))
    return specs


def driver_packages(release: RocmRelease, codename: str) -> list[DebSpec]:
    return driver_line_packages(release.driver, codename)


def driver_line_packages(driver: DriverLine, codename: str) -> list[DebSpec]:
    """amdgpu-dkms and its firmware of one driver line (a release's own, or a 31.x line of catalog.DRIVER_LINES)."""
    version = driver.dkms_deb_version(codename)
    firmware_version = driver.firmware_deb_version(codename)
    label = f"amdgpu {driver.line or driver.module_version}"
    firmware = DebSpec(
        name="amdgpu-dkms-firmware",
        version=firmware_version,
        architecture="all",
        section="kernel",
        description=f"firmware blobs used by amdgpu driver in DKMS format (lab stub, {label})",
        homepage="https://github.com/ROCm/ROCK-Kernel-Driver",
        files={f"/lib/firmware/updates/amdgpu/LAB-{driver.directory}.txt": b"lab firmware placeholder\n"},
    )
    dkms = DebSpec(
        name="amdgpu-dkms",
        version=version,
        architecture="all",
        section="kernel",
        description=f"amdgpu driver in DKMS format (lab simulation of {label}, kernel module {driver.module_version})",
        homepage="https://github.com/ROCm/ROCK-Kernel-Driver",
        depends=[f"amdgpu-dkms-firmware (= {firmware_version})"],
        files={
            f"/usr/src/amdgpu-{driver.dkms_module_version(codename)}/{scripts.LAB_BUILD}": (
                0o755,
                scripts.amdgpu_dkms_build(driver.dkms_module_version(codename), driver.module_version).encode(),
            ),
            scripts.AUTOINSTALL: (0o755, scripts.dkms_autoinstall().encode()),
            "/etc/kernel/postinst.d/dkms": (0o755, scripts.dkms_kernel_hook("postinst").encode()),
            "/etc/kernel/header_postinst.d/dkms": (0o755, scripts.dkms_kernel_hook("header_postinst").encode()),
            "/etc/kernel/postrm.d/dkms": (0o755, scripts.dkms_kernel_hook("postrm").encode()),
        },
        scripts={
            "postinst": scripts.amdgpu_dkms_postinst(driver.dkms_module_version(codename), driver.module_version),
            "prerm": scripts.amdgpu_dkms_prerm(driver.dkms_module_version(codename)),
        },
    )
    return [firmware, dkms]


def graphics_packages(release: RocmRelease, codename: str) -> list[DebSpec]:
    """AMD's graphics repository of a 7.x release: its libdrm (placeholders), for hsa-rocr."""
    if release.graphics is None:
        return []
    major_minor = ".".join(release.version.split(".")[:2])
    core = DebSpec(
        name="amdgpu-core",
        version=release.graphics_deb_version(major_minor, codename),
        architecture="all",
        section="metapackages",
        description="Core meta package for unified amdgpu driver.",
    )
    common = DebSpec(
        name="libdrm-amdgpu-common",
        # modelled: AMD's version of this package in 7.x is not known to the lab
        version=release.graphics_deb_version("1.0.0", codename, epoch=False),
        architecture="all",
        section="libs",
        description="List of AMD/ATI cards' device IDs, revision IDs and marketing names",
        depends=[f"amdgpu-core (= {core.version})"],
    )
    libdrm = DebSpec(
        name=AMD_LIBDRM,
        version=release.graphics_deb_version(release.graphics.libdrm_version, codename),
        section="libs",
        description="Userspace interface to amdgpu-specific kernel DRM services -- runtime",
        depends=[f"amdgpu-core (= {core.version})", f"libdrm-amdgpu-common (= {common.version})"],
    )
    for spec in (core, common, libdrm):
        note = PLACEHOLDER_NOTE.format(name=spec.name, version=spec.version, release=release.version)
        spec.files[f"/usr/share/doc/{spec.name}/LAB-PLACEHOLDER"] = note.encode()
    return [core, common, libdrm]


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


def _component(release: RocmRelease, codename: str, name: str, versioned: bool, tools: Tools) -> DebSpec:
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
        _twin_relations(spec, release, name, codename, versioned)
        return spec
    spec.depends.append(_pinned(release, codename, "rocm-core", versioned))
    carries = tools.suite.amd_smi or name != "amd-smi-lib"
    if name in RUNTIME_LIBRARIES and carries:
        libraries.carry(spec, f"{prefix}/lib", tools.libraries[RUNTIME_LIBRARIES[name]])
    elif name not in ("rocminfo", "rocm-smi-lib"):
        note = PLACEHOLDER_NOTE.format(name=name, version=version, release=release.version)
        if not carries:
            note += f"Debian {tools.suite.suite} packages no amd-smi: this package carries no amd-smi binary.\n"
        spec.files[f"{prefix}/share/doc/{spec.name}/LAB-PLACEHOLDER"] = note.encode()
    if name == "rocminfo":
        spec.depends += [_pinned(release, codename, "hsa-rocr", versioned), tools.rocminfo_depends]
        for binary, content in tools.rocminfo_files.items():
            spec.files[f"{prefix}/bin/{binary}"] = content
    elif name == "rocm-smi-lib":
        spec.depends += [_at_least(tools, "rocm-smi"), _at_least(tools, "librocm-smi64-1")]
        spec.symlinks[f"{prefix}/bin/rocm-smi"] = ROCM_SMI_SCRIPT
    elif name == "amd-smi-lib" and carries:
        spec.depends.append(_at_least(tools, "amd-smi"))
        spec.symlinks[f"{prefix}/bin/amd-smi"] = AMD_SMI_SCRIPT
    elif name == "hsa-rocr" and release.graphics:
        spec.depends = _amd_libdrm_first(spec.depends)
    _twin_relations(spec, release, name, codename, versioned)
    return spec


def _amd_libdrm_first(depends: list[str]) -> list[str]:
    """ROCr's libdrm as AMD declares it: an alternative with AMD's first (modelled on ROCm/amdsmi#142).

    It goes right after rocm-core, before what Debian's library needs: apt resolves a package's Depends in order,
    so a libdrm-amdgpu1 reached first (Debian's libhsa-runtime64-1 or libhsakmt1 need it) would satisfy the
    alternative, and AMD's package from the graphics repository would never be installed, as it is on a real
    7.x host. Debian's libdrm-amdgpu1 is still installed for those: AMD's here is a placeholder without the file.
    """
    return [*depends[:1], f"{AMD_LIBDRM} | libdrm-amdgpu1", *depends[1:]]


def _at_least(tools: Tools, package: str) -> str:
    """The tool of exactly this generation or newer: a later release's newer tools still serve it."""
    return f"{package} (>= {tools.versions[package]})"


def _meta(release: RocmRelease, codename: str, name: str, versioned: bool) -> DebSpec:
    spec = DebSpec(
        name=_name(name, release, versioned),
        version=release.deb_version(name, codename),
        description="Radeon Open Compute (ROCm) Runtime software stack",
        depends=[_pinned(release, codename, dep, versioned) for dep in ("rocm-core", *META_PACKAGES[name])],
    )
    _twin_relations(spec, release, name, codename, versioned)
    return spec
