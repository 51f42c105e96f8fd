"""What the lab mirror serves: ROCm releases, AMD's package names and version strings.

Version strings follow AMD's repositories (apt show output on real hosts):
``<module version>.<release tag>-<build>~<ubuntu version>`` for ROCm packages, e.g.
``rocm-core 6.4.1.60401-83~22.04``, ``rocm-cmake 0.14.0.60401-83~22.04``, and
``1:<amdgpu version>.<release tag>-<driver build>.<ubuntu version>`` for the driver,
e.g. ``amdgpu-dkms 1:6.12.12.60401-2164967.24.04``. ROCm 6.3.x ships amdgpu 6.10.5
and 6.4.x ships 6.12.12 (ROCm/gpu-operator docs/metrics/exporter.md); both support
Debian 12. Module versions marked "modelled" are plausible, not AMD's exact numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

# AMD's Debian instructions reuse the Ubuntu repositories: Debian 12 -> jammy,
# Debian 13 -> noble (ROCm/rocm-install-on-linux docs/conf.py debian_version_numbers).
CODENAMES = {"jammy": "22.04", "noble": "24.04"}
DEBIAN_SUITE = "bookworm"
ARCH = "amd64"
MAINTAINER = "ROCm Dev Support <rocm-dev.support@amd.com>"


@dataclass(frozen=True)
class RocmRelease:
    version: str  # "6.4.1"
    build: int  # AMD's build number of the release, the "-83" in 6.4.1.60401-83~22.04
    amdgpu_version: str  # the amdgpu driver of the release, "6.12.12"
    amdgpu_build: int  # the driver build, the "2164967" in 1:6.12.12.60401-2164967.22.04
    modules: dict[str, str]  # component package -> module version

    @property
    def tag(self) -> str:
        """AMD's release tag: 6.4.1 -> 60401."""
        major, minor, patch = (int(part) for part in self.version.split("."))
        return f"{major}{minor:02d}{patch:02d}"

    @property
    def repo_dir(self) -> str:
        """The directory under rocm/apt and amdgpu: x.y.0 releases drop the trailing .0."""
        return self.version[:-2] if self.version.endswith(".0") else self.version

    @property
    def prefix(self) -> str:
        return f"/opt/rocm-{self.version}"

    def deb_version(self, package: str, codename: str) -> str:
        module = self.version if package in META_PACKAGES or package == "rocm-core" else self.modules[package]
        return f"{module}.{self.tag}-{self.build}~{CODENAMES[codename]}"

    def amdgpu_deb_version(self, codename: str) -> str:
        return f"1:{self.amdgpu_version}.{self.tag}-{self.amdgpu_build}.{CODENAMES[codename]}"

    def dkms_module_version(self, codename: str) -> str:
        """What dkms calls the module version: amdgpu/6.12.12-2164967.22.04."""
        return f"{self.amdgpu_version}-{self.amdgpu_build}.{CODENAMES[codename]}"


# Components the meta packages pull in. Placeholders except rocminfo and rocm-smi-lib,
# which carry Debian's real tools (see amd_packages.py).
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

RELEASES = (
    RocmRelease("6.3.3", 74, "6.10.5", 2119913, _MODULES_633),
    RocmRelease("6.4.1", 83, "6.12.12", 2164967, _MODULES_641),
)

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

# Debian packages that the ROCm packages depend on; served from the distro subset
# together with their dependency closure beyond the lab's base image.
DISTRO_TARGETS = ("rocm-smi", "librocm-smi64-1", "rocminfo", "libhsa-runtime64-1")


def component_packages(release: RocmRelease) -> list[str]:
    return ["rocm-core", *sorted(release.modules)]
