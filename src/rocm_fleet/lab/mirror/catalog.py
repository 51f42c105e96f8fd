"""What the lab mirror serves: ROCm releases, their drivers, AMD's names and version strings.

Version strings follow AMD's repositories (apt output on real hosts):
``<module version>.<release tag>-<build>~<ubuntu version>`` for ROCm packages, e.g.
``rocm-core 6.4.1.60401-83~22.04``; the driver is ``1:<kernel module version>.<driver
tag>-<driver build>.<ubuntu version>``: ``amdgpu-dkms 1:6.12.12.60401-2164967.24.04``
(6.x: the tag is the ROCm release's) and ``1:6.16.13.30300300-2327507.22.04`` (7.x: the
tag is the amdgpu 30.x driver line's, 30.30.3 -> 30300300). Facts of 7.x: the issue-10
research notes (AMD's ROCm/amdgpu-docs and ROCm/rocm-install-on-linux, real apt output
in public issues), each cited where it is used. Values marked "modelled" are plausible,
not AMD's exact numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rocm_fleet.lab import systems

# AMD's Debian instructions reuse the Ubuntu repositories: Debian 12 -> jammy,
# Debian 13 -> noble (ROCm/rocm-install-on-linux docs/conf.py debian_version_numbers;
# ROCm/amdgpu-docs 7.0.2-release-update docs/conf.py adds ('13', 'noble')).
CODENAMES = {"jammy": "22.04", "noble": "24.04"}
# The Debian release of the lab hosts that use each codename: an Ubuntu host's userland (rocm_fleet.lab.systems),
# which is also the Debian release AMD maps to that codename.
HOST_SUITES = {system.codename: system.suite for system in systems.SYSTEMS.values() if system.family == "ubuntu"}
DEBIAN_VERSIONS = {"bookworm": "12", "trixie": "13"}
ARCH = "amd64"
MAINTAINER = "ROCm Dev Support <rocm-dev.support@amd.com>"


def x_y_dir(version: str) -> str:
    """AMD's directory of a version: x.y.0 drops the trailing .0 (rocm/apt/7.1, amdgpu/30.20)."""
    return version[:-2] if version.endswith(".0") and version.count(".") == 2 else version


@dataclass(frozen=True)
class ToolSuite:
    """One generation of Debian's real GPU tools, which AMD's packages carry in the lab.

    ``suite`` is the Debian release whose archive holds the tools, ``host_suite`` the
    release of the hosts that run them: their dependency closure is computed against
    that host base, and parts the host release lacks are served with the tools.
    """

    suite: str
    host_suite: str
    amd_smi: bool  # whether this Debian release packages amd-smi at all
    note: str
    hip: str  # Debian's HIP runtime package: its name carries the soname's major (libamdhip64-5)
    amd_smi_library: str = ""  # Debian's AMD SMI library package (libamd-smi0); "" without amd-smi

    @property
    def libraries(self) -> dict[str, str]:
        """AMD's runtime library (its name without .so) -> the Debian package of this generation holding it."""
        found = {"libamdhip64": self.hip, "libhsa-runtime64": "libhsa-runtime64-1"}
        if self.amd_smi:
            found["libamd_smi"] = self.amd_smi_library
        return found

    @property
    def targets(self) -> tuple[str, ...]:
        tools = ("rocm-smi", "librocm-smi64-1", "rocminfo", "libhsa-runtime64-1")
        tools = (*tools, "amd-smi") if self.amd_smi else tools
        return tuple(dict.fromkeys((*tools, *self.libraries.values())))


TOOL_SUITES = {
    "bookworm": ToolSuite(
        "bookworm",
        "bookworm",
        amd_smi=False,
        note="Debian 12: rocm-smi 5.2.3, rocminfo 5.2.3, HIP and HSA runtime 5.2.3. Debian 12 packages no amd-smi,"
        " so amd-smi-lib is a placeholder there and /opt/rocm-<v>/bin/amd-smi does not exist.",
        hip="libamdhip64-5",
    ),
    "trixie": ToolSuite(
        "trixie",
        "trixie",
        amd_smi=True,
        note="Debian 13: rocm-smi, amd-smi, rocminfo and HSA runtime 6.1.2; HIP 5.7.1.",
        hip="libamdhip64-5",
        amd_smi_library="libamd-smi0",
    ),
    "forky": ToolSuite(
        "forky",
        "trixie",
        amd_smi=True,
        hip="libamdhip64-6",
        amd_smi_library="libamd-smi27",
        # Checked by distro.py at every fetch: the build fails when forky's tools would need
        # a newer libc, libstdc++ or python than trixie's.
        note="Debian's next release: rocm-smi 6.4.1, amd-smi 27.1 (package 10.1), rocminfo 7.2.4, HIP and HSA"
        " runtime 6.4.3. They install on Debian 13: they need libc6 >= 2.38 and libstdc++6 >= 14 (trixie: 2.41,"
        " 14.2); from forky they add only libamd-smi27, libe-smi64-1, libnl-3-200/libnl-genl-3-200 >= 3.11,"
        " libhsa-runtime64-1 6.4.3, libamdhip64-6 and HIP's comgr (libamd-comgr3 with libllvm21,"
        " libclang-common-21-dev and libxml2-16).",
    ),
}


@dataclass(frozen=True)
class DriverLine:
    """The amdgpu-dkms a release installs: its repository directory and its versions."""

    directory: str  # amdgpu/<directory>/ubuntu: the ROCm release for 6.x, the 30.x line for 7.x
    module_version: str  # the kernel module's own version (modinfo, /sys/module/amdgpu/version)
    tag: str  # the tag inside the package version: 60401 (6.x), 30300300 (driver 30.30.3)
    build: int
    line: str = ""  # the 30.x driver line; empty for 6.x, whose driver is named by ROCm's release

    def dkms_deb_version(self, codename: str) -> str:
        return f"1:{self.module_version}.{self.tag}-{self.build}.{CODENAMES[codename]}"

    def firmware_deb_version(self, codename: str) -> str:
        """7.x: ``30.20.1.0.30200100-2255209.24.04`` (no epoch, the line padded to x.y.z.0); 6.x: dkms's."""
        if not self.line:
            return self.dkms_deb_version(codename)
        padded = ".".join((self.line.split(".") + ["0", "0"])[:3])
        return f"{padded}.0.{self.tag}-{self.build}.{CODENAMES[codename]}"

    def dkms_module_version(self, codename: str) -> str:
        """What dkms calls the module version: amdgpu/6.16.13-2327507.24.04."""
        return f"{self.module_version}-{self.build}.{CODENAMES[codename]}"


def driver_line(line: str, module_version: str, build: int) -> DriverLine:
    parts = [int(part) for part in (line.split(".") + ["0", "0"])[:3]]
    tag = f"{parts[0]}{parts[1]:02d}{parts[2]:02d}00"
    return DriverLine(x_y_dir(line), module_version, tag, build, line)


@dataclass(frozen=True)
class GraphicsRepo:
    """graphics/<rocm dir>/ubuntu, which AMD's 7.x instructions add beside rocm/apt.

    libdrm-amdgpu-common moved there from the amdgpu repository with ROCm 7
    (ROCm/legacy-rocm-build#6144); the lab serves AMD's libdrm packages as placeholders.
    """

    build: int
    libdrm_version: str


@dataclass(frozen=True)
class RocmRelease:
    version: str  # "6.4.1"
    build: int  # AMD's build number of the release, the "-83" in 6.4.1.60401-83~22.04
    driver: DriverLine
    modules: dict[str, str]  # component package -> module version
    graphics: GraphicsRepo | None = None
    # codename -> the Debian tool generation its AMD packages carry (default: the host's own)
    tools: dict[str, str] = field(default_factory=dict)
    default: bool = False  # the lab's default release

    @property
    def tag(self) -> str:
        """AMD's release tag: 6.4.1 -> 60401."""
        major, minor, patch = (int(part) for part in self.version.split("."))
        return f"{major}{minor:02d}{patch:02d}"

    @property
    def repo_dir(self) -> str:
        """The directory under rocm/apt (and graphics): x.y.0 releases drop the trailing .0."""
        return x_y_dir(self.version)

    @property
    def prefix(self) -> str:
        return f"/opt/rocm-{self.version}"

    def deb_version(self, package: str, codename: str) -> str:
        module = self.version if package in META_PACKAGES or package == "rocm-core" else self.modules[package]
        return f"{module}.{self.tag}-{self.build}~{CODENAMES[codename]}"

    def tool_suite(self, codename: str) -> ToolSuite:
        return TOOL_SUITES[self.tools.get(codename, HOST_SUITES[codename])]

    def graphics_deb_version(self, upstream: str, codename: str, epoch: bool = True) -> str:
        """1:2.4.125.70101-2255337.24.04: the graphics build, not the driver's."""
        version = f"{upstream}.{self.tag}-{self.graphics.build}.{CODENAMES[codename]}"
        return f"1:{version}" if epoch else version


# Components the meta packages pull in. Placeholders except rocminfo, rocm-smi-lib and
# amd-smi-lib, which carry Debian's real tools, and hip-runtime-amd, hsa-rocr and amd-smi-lib,
# which carry Debian's real runtime libraries (see amd_packages.py).
_MODULES_633 = {
    "rocminfo": "1.0.0",
    "rocm-smi-lib": "7.4.0",  # modelled
    "amd-smi-lib": "24.7.1",  # modelled
    "hsa-rocr": "1.14.0",  # modelled
    "comgr": "2.8.0",
    "openmp-extras-runtime": "18.63.0",  # modelled
    "hip-runtime-amd": "6.3.42134",  # modelled
    "hipcc": "1.1.1",  # modelled
    "rocm-device-libs": "1.0.0",
    "rocm-cmake": "0.14.0",
    "rocm-opencl": "2.0.0",
    "rocm-opencl-icd-loader": "1.2",
    "rocblas": "4.3.0",
    "hipblas": "2.3.0",
    "rccl": "2.21.5",
    "miopen-hip": "3.3.0",
    "rocprofiler": "2.0.60303",
    "roctracer": "4.1.60303",
    "rocm-dbgapi": "0.77.0",  # modelled
    "rocm-gdb": "15.2",  # modelled
}
_MODULES_641 = {
    **_MODULES_633,
    "rocm-smi-lib": "7.5.0",  # modelled
    "amd-smi-lib": "25.4.2",  # modelled
    "hsa-rocr": "1.15.0",  # modelled
    "comgr": "3.0.0",  # modelled
    "hip-runtime-amd": "6.4.43483",  # modelled
    "rocblas": "4.4.0",  # modelled
    "hipblas": "2.4.0",  # modelled
    "rccl": "2.22.3",  # modelled
    "miopen-hip": "3.4.0",  # modelled
    "rocprofiler": "2.0.60401",
    "roctracer": "4.1.60401",
    "rocm-dbgapi": "0.77.2",  # modelled
}
# 7.1.1: comgr, hip-runtime-amd, hipblas, hipcc from a real `dpkg -l` (public code index
# id 57682051963), rocm-cmake from a real apt error (id 56879318625); the rest modelled.
_MODULES_711 = {
    **_MODULES_641,
    "rocm-smi-lib": "7.8.0",  # modelled
    "amd-smi-lib": "26.2.0",  # modelled
    "hsa-rocr": "1.18.0",  # modelled
    "comgr": "3.0.0",
    "openmp-extras-runtime": "20.71.0",  # modelled
    "hip-runtime-amd": "7.1.52802",
    "hipblas": "3.1.0",
    "rocblas": "5.1.0",  # modelled
    "rccl": "2.27.7",  # modelled
    "miopen-hip": "3.5.1",  # modelled on 7.1.1's MIOpen kernel db 3.5.1.70101-38 (id 54008191022)
    "rocprofiler": "2.0.70101",  # modelled
    "roctracer": "4.1.70101",  # modelled
    "rocm-dbgapi": "0.77.4",  # modelled
    "rocm-gdb": "16.3",  # modelled
}
# 7.2.3: AMD's versions of rocm/apt/7.2.3 packages listed in a public catalog (code index
# id 59413293243) and amd-smi-lib7.2.3 26.2.2.70203-90~24.04 (id 68437750447).
_MODULES_723 = {
    **_MODULES_711,
    "rocm-smi-lib": "7.8.0",
    "amd-smi-lib": "26.2.2",
    "hsa-rocr": "1.18.0",
    "comgr": "3.0.0",
    "openmp-extras-runtime": "20.70.0",
    "hip-runtime-amd": "7.2.53211",
    "hipblas": "3.2.0",
    "rocblas": "5.2.0",
    "rccl": "2.27.7",
    "miopen-hip": "3.5.1",
    "roctracer": "4.1.70203",
    "rocprofiler": "2.0.70203",  # modelled
}

RELEASES = (
    # amdgpu 6.10.5 / 6.12.12 for ROCm 6.3.x / 6.4.x: ROCm/gpu-operator docs/metrics/exporter.md.
    RocmRelease("6.3.3", 74, DriverLine("6.3.3", "6.10.5", "60303", 2119913), _MODULES_633),
    RocmRelease("6.4.1", 83, DriverLine("6.4.1", "6.12.12", "60401", 2164967), _MODULES_641),
    # 7.1.1 pairs with amdgpu 30.20.1 (ROCm Programming Guide conf.py of 7.1.1 udev_amdgpu_version);
    # amdgpu-dkms 1:6.16.6.30200100-2255209.24.04, amdgpu-core and libdrm-amdgpu-amdgpu1
    # 1:2.4.125.70101-2255337.24.04, rocm 7.1.1.70101-38: real `dpkg -l` (code index id 57682051963,
    # 57023055394).
    RocmRelease(
        "7.1.1",
        38,
        driver_line("30.20.1", "6.16.6", 2255209),
        _MODULES_711,
        graphics=GraphicsRepo(2255337, "2.4.125"),
    ),
    # 7.2.3 pairs with amdgpu 30.30.3 (ROCm/amdgpu-docs conf.py version 30.30.3, rocm_version 7.2.3);
    # amdgpu-dkms 1:6.16.13.30300300-2327507 and module 6.16.13-2327507.24.04 (code index id
    # 62016764605, 68437750447); rocm build 90 (rocm/apt/7.2.3/pool rocm-llvm ...70203-90~22.04).
    # Listed by AMD for Debian 12 and 13 (ROCm compatibility matrix). Its noble packages carry
    # forky's tools (the newest generation); the graphics build is modelled.
    RocmRelease(
        "7.2.3",
        90,
        driver_line("30.30.3", "6.16.13", 2327507),
        _MODULES_723,
        graphics=GraphicsRepo(2327563, "2.4.125"),  # build modelled
        tools={"noble": "forky"},
        default=True,
    ),
)
DEFAULT_RELEASE = next(release for release in RELEASES if release.default)

# Meta packages and what they depend on, modelled on AMD's package-manager-integration
# page (rocm-hip-runtime runs HIP apps, rocm-hip-sdk builds them, ...). rocm-dev's
# dependencies on rocm-cmake, rocm-device-libs and rocm-utils are AMD's (apt output in
# ROCm/ROCm issues). Every meta also depends on rocm-core, added in amd_packages.py.
META_PACKAGES: dict[str, tuple[str, ...]] = {
    "rocm-language-runtime": ("hsa-rocr", "comgr", "openmp-extras-runtime"),
    "rocm-hip-runtime": ("rocm-language-runtime", "hip-runtime-amd", "rocminfo"),
    "rocm-opencl-runtime": ("rocm-language-runtime", "rocm-opencl", "rocm-opencl-icd-loader"),
    "rocm-hip-libraries": ("rocm-hip-runtime", "rocblas", "hipblas", "rccl"),
    "rocm-ml-libraries": ("rocm-hip-libraries", "miopen-hip"),
    "rocm-hip-sdk": ("rocm-hip-libraries", "hipcc", "rocm-device-libs", "rocm-cmake"),
    "rocm-ml-sdk": ("rocm-ml-libraries", "rocm-hip-sdk"),
    "rocm-opencl-sdk": ("rocm-opencl-runtime",),
    "rocm-openmp-sdk": ("rocm-language-runtime", "openmp-extras-runtime", "rocm-device-libs"),
    "rocm-utils": ("rocminfo", "rocm-cmake"),
    "rocm-developer-tools": (
        "rocm-language-runtime",
        "rocm-smi-lib",
        "amd-smi-lib",
        "rocprofiler",
        "roctracer",
        "rocm-dbgapi",
        "rocm-gdb",
    ),
    "rocm-dev": ("rocm-utils", "rocm-developer-tools", "hipcc", "rocm-device-libs", "rocm-cmake"),
    "rocm": ("rocm-utils", "rocm-developer-tools", "rocm-opencl-sdk", "rocm-openmp-sdk", "rocm-ml-sdk"),
}

# amdgpu-install --usecase -> the package it installs. asan and the graphics stacks
# (graphics, multimedia, workstation, amf) are not served by the lab.
USECASE_PACKAGES = {
    "dkms": "amdgpu-dkms",
    "rocm": "rocm",
    "rocmdev": "rocm-dev",
    "lrt": "rocm-language-runtime",
    "opencl": "rocm-opencl-runtime",
    "openclsdk": "rocm-opencl-sdk",
    "hip": "rocm-hip-runtime",
    "hiplibsdk": "rocm-hip-sdk",
    "openmpsdk": "rocm-openmp-sdk",
    "mllib": "rocm-ml-libraries",
    "mlsdk": "rocm-ml-sdk",
}


def component_packages(release: RocmRelease) -> list[str]:
    return ["rocm-core", *sorted(release.modules)]


def tool_suites_in_use() -> list[ToolSuite]:
    """Every tool generation some release carries (legacy and ROCm Core SDK), in a stable order."""
    names = {release.tool_suite(codename).suite for release in RELEASES for codename in CODENAMES}
    names |= {release.tool_suite(directory).suite for release in CORE_SDK_RELEASES for directory in CORE_SDK_DIRS}
    return [TOOL_SUITES[name] for name in TOOL_SUITES if name in names]


# The amdgpu 31.x driver lines, served beside the releases' own drivers in the same layout
# (amdgpu/<line>/ubuntu <codename> main, the legacy key). AMD pairs 31.40 with ROCm 7.14 and 31.50
# with 10.0.0 (AMD's 7.14.0 and 10.0.0 install pages). Module versions: 6.19.14 "(packaged release
# 31.40)" (ROCm/gpu-operator#610) and 7.1.3 (AMD's 10.0.0 page: "amdgpu version: 7.1.3.31500000").
# Builds: third-party, not confirmed by AMD: 2364437 (31.40, code index id 59748565568) and 2390945
# (31.50, amdgpu-install_31.50.0.0.31500000-2390945.24.04_all.deb, code index id 69469353324).
# They are no release's driver here: kernel_packages' "bad" kernel stays relative to the legacy
# releases' drivers, as before.
DRIVER_LINES = (
    driver_line("31.40", "6.19.14", 2364437),
    driver_line("31.50", "7.1.3", 2390945),
)


# ROCm Core SDK 10.x ------------------------------------------------------------------------------
#
# AMD's 10.x stream, built by TheRock (research: shared core-sdk-10 notes, sections 2, 3, 5, 7):
# one repository for every 10.x release, rocm/core/packages/<dir>/ with dists/stable (Suite and
# Codename "stable"), component main, amd64, signed with its own key (served armored at
# rocm/gpg/packages.gpg; AMD's page dearmors it into /etc/apt/keyrings/amdrocm.gpg). The version is
# in the package names (series = major.minor: amdrocm10.0-gfx942, amdrocm10.1-gfx942), so releases
# install side by side under /opt/rocm/core-<series>, and amdrocm-core's postinst makes the newest
# the default with update-alternatives (core, core-<major>, rocm-bin, rocm-lib, ..., /usr/bin/<tool>).
# ROCm SMI is gone ("As of ROCm 10.0, ROCm SMI is no longer included in TheRock builds").
#
# How the lab's stand-in differs from AMD's packages (each also said where it is built):
# * Contents: only rocminfo/rocm_agent_enumerator, amd-smi and the runtime libraries (amdrocm-runtime:
#   libamdhip64, libhsa-runtime64; amdrocm-amdsmi: libamd_smi) are real software, Debian's of a
#   generation (Debian 13: forky's amd-smi 27.1, Debian package 10.1, rocminfo 7.2.4, HIP and ROCr 6.4.3
#   (libamdhip64.so.6, not AMD's .so.7 of HIP 7.15), libamd_smi.so.27; Debian 12: bookworm's rocminfo,
#   HIP and ROCr 5.2.3 (libamdhip64.so.5) and no amd-smi, since forky's need glibc 2.38 and Debian 12
#   packages none); the rest are placeholders with AMD's names and dependency shape. AMD's packages are
#   self-contained (sysdeps and comgr bundled); the lab's depend on Debian's libraries (libamd-smi27,
#   libhsa-runtime64-1, libamd-comgr3, ...), served with the repository where the host release lacks them.
# * amd-smi reports the Debian build's own version (27.1.x); AMD's 10.0.0 ships AMD SMI 27.0.0.
# * The package set is a subset of AMD's: per release amdrocm-sysdeps, -llvm, -runtime, -base,
#   -amdsmi, -opencl, -runtime-dev, -llvm-dev, -developer-tools (without AMD's profiler, debugger,
#   emulation and rdc packages) and per GPU target (and for every target) amdrocm-blas (the one
#   device library), amdrocm-core, amdrocm, amdrocm-core-dev, amdrocm-core-sdk.
# * Versions: <release>-<build> as TheRock writes them (build_package.py --version-suffix); the
#   builds are modelled. Release files: Origin/Label "stable.repo.amd.com" (modelled).
# * Legacy guard: AMD's packages (TheRock @ 89553ce3: no preinst, no Conflicts in package.json)
#   do not stop an install beside the legacy stream, whose /opt/rocm is an update-alternatives
#   link: dpkg would unpack /opt/rocm/core-10.x through that link into /opt/rocm-<legacy>/ and the
#   10.x install would vanish with the legacy one. The lab's packages refuse instead (a preinst,
#   scripts.amdrocm_preinst) with AMD's words, "If you have ROCm 7.2.4 or older installed, please
#   uninstall it before proceeding." That refusal is the lab's, not AMD's.
# * AMD's -devel postinst (the MIOpenDriver alternative) is not reproduced: no MIOpenDriver is served.
# * The alternatives scripts are AMD's (rendered for a deb, the long comment shortened) and keep AMD's
#   behaviour: every GPU-target variant of amdrocm-core<S> carries them, so removing one variant removes
#   the release's alternatives while another variant of it stays installed, as with AMD's packages.
#   The same version string is served in debian12 and debian13 (TheRock's versions carry no OS part).
# AMD's deb directory of each lab system's release (release_streams.yml's os_dirs: debian12, ubuntu2404) -> the
# Debian suite of the hosts that read it: an Ubuntu host runs the Debian release its own was branched from.
CORE_SDK_DIRS = {
    f"{system.family}{system.version.replace('.', '')}": system.suite
    for system in systems.SYSTEMS.values()
    if system.family in ("debian", "ubuntu")
}
CORE_SDK_SUITE = "stable"
CORE_SDK_ORIGIN = "stable.repo.amd.com"  # modelled: the origin of AMD's 10.x Release files is not known
# The GPU targets of the lab's hardware profiles (src/rocm_fleet/hardware/profiles: gfx90a, gfx942,
# gfx1100; the RX 6700 XT's gfx1031 runs as gfx1030, which AMD builds) plus gfx950 (MI350X/MI355X in
# the collection's GPU catalog); AMD builds 15 (gfx950 ... gfx1153), the lab serves these.
CORE_SDK_TARGETS = ("gfx950", "gfx942", "gfx90a", "gfx1100", "gfx1030")
# A target the lab's hardware reports that AMD builds no package for -> the target it runs as.
CORE_SDK_TARGET_OF = {"gfx1031": "gfx1030"}


@dataclass(frozen=True)
class CoreSdkRelease:
    """One ROCm Core SDK release: its packages carry the series (10.0) in their names."""

    version: str  # "10.0.0"
    build: int  # modelled: the -<build> of <release>-<build>
    amd_smi: str  # the AMD SMI version AMD ships with it (its changelog); the lab's amd-smi is Debian's
    driver: str  # the amdgpu driver line AMD pairs it with (DRIVER_LINES)
    # AMD directory -> the Debian tool generation its packages carry
    tools: dict[str, str] = field(
        default_factory=lambda: {
            "debian12": "bookworm",
            "debian13": "forky",
            "ubuntu2204": "bookworm",
            "ubuntu2404": "forky",
            # RHEL-family hosts run on Debian 12's userland (rocm_fleet.lab.systems).
            "rhel9": "bookworm",
            "rhel10": "bookworm",
            "sles15": "bookworm",  # so do SLES hosts
        }
    )

    @property
    def numbers(self) -> tuple[int, int, int]:
        major, minor, patch = (int(part) for part in self.version.split("."))
        return major, minor, patch

    @property
    def series(self) -> str:
        """major.minor, the version in the package names (TheRock packaging_utils.update_package_name)."""
        return ".".join(self.version.split(".")[:2])

    @property
    def prefix(self) -> str:
        """/opt/rocm/core-<series> (TheRock build_package.py; AMD's transition guide: /opt/rocm/core-10.0)."""
        return f"/opt/rocm/core-{self.series}"

    @property
    def deb_version(self) -> str:
        return f"{self.version}-{self.build}"

    @property
    def altscore(self) -> int:
        """The version part of AMD's update-alternatives priority (amdrocm-core-postinst.j2), before the
        install time: priority = altscore * 1000000 + (now - 1600000000) // 60."""
        major, minor, patch = self.numbers
        return ((major - 3) * 14 + minor) * 14 + patch

    def tool_suite(self, directory: str) -> ToolSuite:
        return TOOL_SUITES[self.tools[directory]]


CORE_SDK_RELEASES = (
    # AMD SMI 27.0.0 (docs-10.0.0 changelog), driver 31.50 (the 10.0.0 install page's driver links).
    CoreSdkRelease("10.0.0", 4, "27.0.0", "31.50"),  # build modelled (runfile rocm-installer-10.0.0-4.run)
    # AMD SMI 27.1.0 (docs-10.1.0 changelog); the driver that of 10.0.0 (inferred).
    CoreSdkRelease("10.1.0", 1, "27.1.0", "31.50"),  # build modelled
)
