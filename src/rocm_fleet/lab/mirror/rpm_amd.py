"""AMD's RPM repositories in the lab mirror, for its RHEL-family hosts (signed with the lab's AMD keys, AMD's layouts).

* rocm/core/packages/rhel<N>/x86_64: the ROCm Core SDK 10.x, the packages of core_sdk.release_packages made RPMs
  (the dev meta package is amdrocm-core-devel<S> on rpm: roles/preflight/vars/release_streams.yml, AMD's table);
* amdgpu/<line>/el/<OS version>/main/x86_64 for RHEL 9, el/<major> otherwise: each 31.x line's amdgpu-dkms and
  amdgpu-dkms-firmware, and the legacy releases' own lines (roles/repo/vars/RedHat.yml gives AMD's source).

The legacy stream's rocm/el<N> and graphics trees are rpm_legacy.py's. What differs from AMD's packages (docs/lab.md
says it for people): the software is the lab's, as in the .deb trees; an RPM drops each Debian Depends (the Debian
userland beneath carries those libraries: systems.RPM_HOST_LIBRARIES); versions and builds are modelled on the deb ones.
"""

from __future__ import annotations

import re

from rocm_fleet.lab import base, systems
from rocm_fleet.lab.mirror import amd_packages, core_sdk, scripts
from rocm_fleet.lab.mirror.catalog import CODENAMES, CORE_SDK_RELEASES, DRIVER_LINES, DriverLine
from rocm_fleet.lab.mirror.debs import DebSpec
from rocm_fleet.lab.mirror.distro import CORE_PACKAGES
from rocm_fleet.lab.mirror.rpms import RpmRepo, RpmSpec
from rocm_fleet.lab.mirror.signing import AMDROCM_KEY, ROCM_KEY

# What the Debian userland beneath every RPM host has (the base and its essential packages): Depends on these drop.
BENEATH = frozenset((*CORE_PACKAGES, *base.PACKAGES, "libgcc-s1", "libstdc++6", "libc6", "pciutils", "kmod"))
_RELATION = {"=": "=", ">=": ">=", "<=": "<=", "<<": "<", ">>": ">"}
_DEPEND = re.compile(r"^\s*([a-z0-9][a-z0-9+.-]*)(?::\w+)?\s*(?:\(\s*(<<|<=|=|>=|>>)\s*([^)\s]+)\s*\))?\s*$")


def dist_tag(system: systems.LabSystem) -> str:
    """The RHEL family's el<N>; none on SLES (AMD's SLES RPMs carry none: amdgpu-install-7.2.1.70201-1.noarch.rpm
    in sle/15.7, -1.el9 in el/9.6)."""
    return "" if system.family == "sles" else f"el{system.major}"


def tagged(build: str | int, system: systems.LabSystem) -> str:
    """An RPM release of AMD's: the build, with the system's dist tag where it has one."""
    tag = dist_tag(system)
    return f"{build}.{tag}" if tag else str(build)


def core_sdk_root(system: systems.LabSystem) -> str:
    return f"rocm/core/packages/{system.core_sdk_directory}/x86_64"


def amdgpu_line_root(driver: DriverLine, system: systems.LabSystem) -> str:
    if system.family == "sles":  # roles/repo/vars/Suse.yml: sle/<OS version>
        return f"amdgpu/{driver.directory}/sle/{system.version}/main/x86_64"
    os_dir = system.version if system.major == "9" else system.major
    return f"amdgpu/{driver.directory}/el/{os_dir}/main/x86_64"


def rpm_name(name: str) -> str:
    """AMD's rpm name of a Core SDK package: Developer Essentials is -devel on rpm, -dev on deb."""
    return re.sub(r"^amdrocm-core-dev(?=\d)", "amdrocm-core-devel", name)


def requires(depends: list[str], evr_of: dict[str, str], allowed_beneath: frozenset[str]) -> list[str]:
    """rpm Requires of Debian Depends: a package of the same repository by its rpm version, a Debian one dropped
    (it must be beneath: the base or the system's packages, else ValueError names it)."""
    found = []
    for field_text in depends:
        for group in filter(None, (part.strip() for part in field_text.split(","))):
            alternatives = [_DEPEND.match(alt) for alt in group.split("|")]
            if not all(alternatives):
                raise ValueError(f"cannot read the dependency {group!r}")
            ours = [m for m in alternatives if rpm_name(m.group(1)) in evr_of]
            if not ours:
                if not any(m.group(1) in allowed_beneath for m in alternatives):
                    raise ValueError(f"Depends {group!r}: no RPM of the repository and not beneath the RPM hosts")
                continue
            name = rpm_name(ours[0].group(1))
            relation = ours[0].group(2)
            found.append(f"{name} {_RELATION[relation]} {evr_of[name]}" if relation else name)
    return list(dict.fromkeys(found))


def from_deb(spec: DebSpec, version: str, release: str, epoch: int | None = None) -> RpmSpec:
    """The RpmSpec of a DebSpec's payload and scripts; Requires are set by the caller (requires())."""
    return RpmSpec(
        name=rpm_name(spec.name),
        version=version,
        release=release,
        epoch=epoch,
        summary=spec.description.splitlines()[0],
        arch="noarch" if spec.architecture == "all" else "x86_64",
        url=spec.homepage,
        files=dict(spec.files),
        symlinks=dict(spec.symlinks),
        scripts=dict(spec.scripts),
    )


def core_sdk_repo(system, tools: dict[str, amd_packages.Tools], amd_smi: dict) -> RpmRepo:
    """Every Core SDK release's packages for the system's AMD directory (rhel9)."""
    directory = system.core_sdk_directory
    allowed = BENEATH | frozenset(system.packages)
    repo = RpmRepo(core_sdk_root(system), AMDROCM_KEY)
    for release in CORE_SDK_RELEASES:
        suite = release.tool_suite(directory)
        debs = core_sdk.release_packages(release, directory, tools[suite.suite], amd_smi.get(suite.suite))
        rel = tagged(release.build, system)
        evr_of = {rpm_name(deb.name): f"{release.version}-{rel}" for deb in debs}
        for deb in debs:
            rpm = from_deb(deb, release.version, rel)
            rpm.requires = requires(deb.depends, evr_of, allowed)
            rpm.vendor = "Advanced Micro Devices, Inc."
            # AMD's %pre guard as rpm runs it; %preun only on erase ($1 == 0), since rpm runs the old package's
            # %preun after the new one's %post: an upgrade in the series must keep the links it just registered.
            rpm.scripts["preinst"] = scripts.amdrocm_preinst_rpm(release.prefix)
            if "prerm" in rpm.scripts:
                shebang, _, rest = rpm.scripts["prerm"].partition("\n")
                rpm.scripts["prerm"] = f'{shebang}\n[ "$1" = 0 ] || exit 0  # rpm: 0 on erase, 1 on upgrade\n{rest}'
            repo.specs.append(rpm)
    return repo


def driver_line_repos(system, drivers=DRIVER_LINES) -> list[RpmRepo]:
    """amdgpu-dkms and its firmware of each 31.x line, as AMD's el trees carry them (versions as
    roles/preflight/vars/amdgpu_drivers.yml records AMD's: amdgpu-dkms 1:<module>-<build>.el9,
    amdgpu-dkms-firmware <line>.0.<tag>-<build>.el9)."""
    repos = []
    codename = next(iter(CODENAMES))  # the payload does not depend on it; the versions are rpm's
    for driver in drivers:
        release = tagged(driver.build, system)
        module_version = f"{driver.module_version}-{release}"
        firmware_version = driver.firmware_deb_version(codename).split("-", 1)[0]
        firmware_deb, dkms_deb = amd_packages.driver_line_packages(driver, codename)
        firmware = from_deb(firmware_deb, firmware_version, release)
        dkms = from_deb(dkms_deb, driver.module_version, release, epoch=1)
        # The deb's source tree is named by dkms's version of the deb; the rpm's by that of the rpm.
        dkms.files = {path: body for path, body in dkms.files.items() if not path.startswith("/usr/src/")}
        dkms.files[f"/usr/src/amdgpu-{module_version}/{scripts.LAB_BUILD}"] = (
            0o755,
            scripts.amdgpu_dkms_build(module_version, driver.module_version).encode(),
        )
        dkms.requires = [f"amdgpu-dkms-firmware = {firmware_version}-{release}", "dkms"]
        dkms.scripts = {
            "postinst": scripts.amdgpu_dkms_postinst(module_version, driver.module_version, "rpm"),
            "prerm": scripts.amdgpu_dkms_prerm(module_version, "rpm"),
        }
        repos.append(RpmRepo(amdgpu_line_root(driver, system), ROCM_KEY, [firmware, dkms]))
    return repos
