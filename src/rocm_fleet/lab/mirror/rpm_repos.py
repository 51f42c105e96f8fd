"""The lab mirror's RPM repositories, for its RHEL-family hosts (rocm_fleet.lab.systems, package_format "rpm").

AMD's (signed with the lab's AMD keys, in AMD's layouts):

* rocm/core/packages/rhel<N>/x86_64: the ROCm Core SDK 10.x, the packages of core_sdk.release_packages made RPMs
  (the dev meta package is amdrocm-core-devel<S> on rpm: roles/preflight/vars/release_streams.yml, AMD's table);
* amdgpu/<line>/el/<OS version>/main/x86_64 for RHEL 9, el/<major> otherwise: each 31.x line's amdgpu-dkms and
  amdgpu-dkms-firmware, and the legacy releases' own lines (roles/repo/vars/RedHat.yml gives AMD's source);
* the legacy stream's rocm/el<N> and graphics trees (rpm_legacy.py).

The distribution's, as a site's own mirror serves them (signed with the lab's distribution key):

* rocky/<major>/{BaseOS,AppStream,CRB,extras}/x86_64/os: the kernel packages of the machine's kernel that AMD's
  RHEL instructions install (kernel-headers, kernel-devel, kernel-devel-matched, kernel-modules-extra of
  $(uname -r)), and epel-release in extras, as Rocky ships it;
* epel/<major>/Everything/x86_64: dkms, which amdgpu-dkms requires (why AMD's instructions need EPEL).

What differs from the real packages (docs/lab.md says it for people): the software is the lab's, as in the .deb
trees; an RPM drops each Debian Depends (the Debian userland beneath carries those libraries: systems.
RPM_HOST_LIBRARIES), the lab's kernel packages are named by the machine's kernel, which is no RPM version-release,
so each also provides <name>-$(uname -r) as dnf resolves it, and EPEL's dkms is a placeholder (the lab's
amdgpu-dkms builds itself, as on Debian hosts). Versions and builds of AMD's RPMs are modelled on the deb ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rocm_fleet.lab import base, systems
from rocm_fleet.lab.mirror import amd_packages, core_sdk, scripts
from rocm_fleet.lab.mirror.catalog import CODENAMES, CORE_SDK_RELEASES, DRIVER_LINES, DriverLine
from rocm_fleet.lab.mirror.debs import DebSpec
from rocm_fleet.lab.mirror.distro import CORE_PACKAGES
from rocm_fleet.lab.mirror.rpms import RpmSpec

RPM_SYSTEMS = {key: system for key, system in systems.SYSTEMS.items() if system.package_format == "rpm"}
# What the Debian userland beneath every RPM host has (the base and its essential packages): Depends on these drop.
BENEATH = frozenset((*CORE_PACKAGES, *base.PACKAGES, "libgcc-s1", "libstdc++6", "libc6", "pciutils", "kmod"))
_RELATION = {"=": "=", ">=": ">=", "<=": "<=", "<<": "<", ">>": ">"}
_DEPEND = re.compile(r"^\s*([a-z0-9][a-z0-9+.-]*)(?::\w+)?\s*(?:\(\s*(<<|<=|=|>=|>>)\s*([^)\s]+)\s*\))?\s*$")
DISTRO_MAINTAINER = "rocm-fleet lab"
EPEL_DKMS_VERSION = ("3.2.1", "1.el{major}")  # modelled: EPEL's dkms of late 2026 is not recorded here


@dataclass
class RpmRepo:
    path: str  # under the mirror's www
    key: str  # signing key name (rocm_fleet.lab.mirror.signing)
    specs: list[RpmSpec] = field(default_factory=list)


def dist_tag(system: systems.LabSystem) -> str:
    return f"el{system.major}"


def core_sdk_root(system: systems.LabSystem) -> str:
    return f"rocm/core/packages/{system.core_sdk_directory}/x86_64"


def amdgpu_line_root(driver: DriverLine, system: systems.LabSystem) -> str:
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
    from rocm_fleet.lab.mirror.signing import AMDROCM_KEY

    directory = system.core_sdk_directory
    allowed = BENEATH | frozenset(system.packages)
    repo = RpmRepo(core_sdk_root(system), AMDROCM_KEY)
    for release in CORE_SDK_RELEASES:
        suite = release.tool_suite(directory)
        debs = core_sdk.release_packages(release, directory, tools[suite.suite], amd_smi.get(suite.suite))
        rel = f"{release.build}.{dist_tag(system)}"
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
    from rocm_fleet.lab.mirror.signing import ROCM_KEY

    repos = []
    tag = dist_tag(system)
    codename = next(iter(CODENAMES))  # the payload does not depend on it; the versions are rpm's
    for driver in drivers:
        release = f"{driver.build}.{tag}"
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


# The distribution's repositories -----------------------------------------------------------------------------------


def rpm_kernel_version(kernel: str) -> tuple[str, str]:
    """(version, release) of the lab's kernel packages of ``kernel``: its leading numbers, and the rest with rpm's
    separators ("6.1.0-28-amd64" -> ("6.1.0", "28_amd64"); a RHEL kernel's uname -r is its own version-release)."""
    match = re.match(r"^(\d+(?:\.\d+)*)(?:[-.](.+))?$", kernel)
    if not match:
        raise ValueError(f"unexpected kernel release {kernel!r}")
    return match.group(1), re.sub(r"[^A-Za-z0-9._+~]", "_", match.group(2) or "1")


def kernel_packages(kernel: str, system) -> list[RpmSpec]:
    """kernel-headers, kernel-devel, kernel-devel-matched and kernel-modules-extra of ``kernel``, each also providing
    <name>-<kernel> (what AMD's `dnf install kernel-devel-$(uname -r)` asks for). kernel-devel carries the header
    tree the lab's DKMS build looks for and, standing in for kernel-core (no package of the machine's kernel), the
    /lib/modules/<kernel>/build link."""
    version, release = rpm_kernel_version(kernel)
    tree = f"/usr/src/kernels/{kernel}"
    common = {"license": "GPL-2.0-only", "url": "https://www.kernel.org/", "vendor": DISTRO_MAINTAINER}
    devel = RpmSpec(
        "kernel-devel",
        version,
        release,
        f"Development package for building kernel modules to match the {kernel} kernel (rocm-fleet lab)",
        provides=[f"kernel-devel-{kernel}", f"kernel-devel-uname-r = {version}-{release}"],
        files={
            f"{tree}/Makefile": f"# rocm-fleet lab stub\nKERNELRELEASE = {kernel}\n".encode(),
            f"{tree}/include/config/kernel.release": f"{kernel}\n".encode(),
            f"{tree}/include/generated/utsrelease.h": f'#define UTS_RELEASE "{kernel}"\n'.encode(),
        },
        symlinks={f"/usr/lib/modules/{kernel}/build": tree},
        **common,
    )
    headers = RpmSpec(
        "kernel-headers",
        version,
        release,
        f"Header files for the Linux kernel for use by glibc (rocm-fleet lab, {kernel})",
        provides=[f"kernel-headers-{kernel}"],
        files={f"/usr/include/linux/rocm-fleet-lab-{kernel}.h": b"/* rocm-fleet lab: the kernel's uapi headers */\n"},
        **common,
    )
    matched = RpmSpec(
        "kernel-devel-matched",
        version,
        release,
        f"Meta package to install matching core and devel packages for the {kernel} kernel (rocm-fleet lab)",
        provides=[f"kernel-devel-matched-{kernel}"],
        requires=[f"kernel-devel = {version}-{release}"],
        **common,
    )
    extra = RpmSpec(
        "kernel-modules-extra",
        version,
        release,
        f"Extra kernel modules to match the {kernel} kernel (rocm-fleet lab)",
        provides=[f"kernel-modules-extra-{kernel}", f"kernel-modules-extra-uname-r = {version}-{release}"],
        files={f"/usr/lib/modules/{kernel}/extra/rocm-fleet-lab-extra": b"rocm-fleet lab: the extra modules\n"},
        **common,
    )
    return [headers, devel, matched, extra]


def epel_release(system, base_url: str) -> RpmSpec:
    """epel-release as Rocky's extras serve it: EPEL's repository file, pointing at the site's mirror, and its key."""
    major = system.major
    key_path = f"/etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-{major}"
    repo = (
        f"[epel]\nname=Extra Packages for Enterprise Linux {major} - $basearch\n"
        f"baseurl={base_url}/epel/$releasever/Everything/$basearch/\n"
        f"enabled=1\ngpgcheck=1\ncountme=1\ngpgkey=file://{key_path}\n"
    )
    from rocm_fleet.lab.mirror import signing

    return RpmSpec(
        "epel-release",
        major,
        f"10.{dist_tag(system)}",  # modelled
        f"Extra Packages for Enterprise Linux repository configuration (rocm-fleet lab mirror at {base_url})",
        arch="noarch",
        license="GPL-2.0-only",
        url="https://docs.fedoraproject.org/en-US/epel/",
        vendor="Fedora Project",
        files={
            "/etc/yum.repos.d/epel.repo": repo.encode(),
            key_path: signing.public_key(signing.DISTRO_KEY).read_bytes(),
        },
    )


def dkms_placeholder(system) -> RpmSpec:
    version, release = EPEL_DKMS_VERSION
    return RpmSpec(
        "dkms",
        version,
        release.format(major=system.major),
        "Dynamic Kernel Module Support Framework (rocm-fleet lab placeholder: the lab's amdgpu-dkms builds itself)",
        arch="noarch",
        license="GPL-2.0-or-later",
        url="https://github.com/dell/dkms",
        vendor="Fedora Project",
        files={"/usr/share/doc/dkms/LAB-PLACEHOLDER": b"rocm-fleet lab placeholder of EPEL's dkms\n"},
    )


def distro_repos(system, kernel: str, base_url: str) -> list[RpmRepo]:
    from rocm_fleet.lab.mirror.signing import DISTRO_KEY

    root = f"{system.family}/{system.major}"
    return [
        RpmRepo(f"{root}/BaseOS/x86_64/os", DISTRO_KEY, kernel_packages(kernel, system)),
        RpmRepo(f"{root}/AppStream/x86_64/os", DISTRO_KEY),
        RpmRepo(f"{root}/CRB/x86_64/os", DISTRO_KEY),
        RpmRepo(f"{root}/extras/x86_64/os", DISTRO_KEY, [epel_release(system, base_url)]),
        RpmRepo(f"epel/{system.major}/Everything/x86_64", DISTRO_KEY, [dkms_placeholder(system)]),
    ]


def all_repos(
    tools: dict[str, amd_packages.Tools], amd_smi: dict, kernel: str, base_url: str, tool_debs: dict
) -> list[RpmRepo]:
    """Every RPM repository the mirror serves: per RPM system, AMD's and the distribution's (one of each path)."""
    from rocm_fleet.lab.mirror import rpm_legacy

    found: dict[str, RpmRepo] = {}
    legacy_drivers = list(
        {release.driver.directory: release.driver for release in rpm_legacy.legacy_releases()}.values()
    )
    for system in RPM_SYSTEMS.values():
        for repo in [
            core_sdk_repo(system, tools, amd_smi),
            *driver_line_repos(system),
            *driver_line_repos(system, legacy_drivers),
            *rpm_legacy.legacy_repos(system, tools, tool_debs),
            *distro_repos(system, kernel, base_url),
        ]:
            found.setdefault(repo.path, repo)
    return list(found.values())


def build(
    www, tools: dict[str, amd_packages.Tools], tool_debs: dict, kernel: str, base_url: str, cache=None
) -> list[str]:
    """Build, sign and index every RPM repository under ``www``; returns their paths. ``cache``: <cache>/mirror."""
    from concurrent.futures import ThreadPoolExecutor

    from rocm_fleet.lab.mirror import rpms, signing

    amd_smi = {}
    for suite, debs in tool_debs.items():
        deb = next((d.path for d in debs if d.name == "amd-smi"), None)
        if deb is not None and tools[suite].suite.amd_smi:
            amd_smi[suite] = core_sdk.amd_smi_files(deb, cache)
    repos = all_repos(tools, amd_smi, kernel, base_url, tool_debs) if RPM_SYSTEMS else []
    jobs = [(repo, spec) for repo in repos for spec in repo.specs]

    def one(job):
        repo, spec = job
        return rpms.build_rpm(spec, www / repo.path / "Packages" / spec.name[0].lower(), cache and cache / "built-rpm")

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(one, jobs))
    with signing.Signer() as signer:
        for repo in repos:
            (www / repo.path).mkdir(parents=True, exist_ok=True)
            rpms.publish_repository(www / repo.path, signer, repo.key)
    return [repo.path for repo in repos]


def install_sources(root, base_url: str, system) -> None:
    """Point a RHEL-family root at the mirror's distribution repositories as the distribution's own repository files
    name them (Rocky 9's rocky.repo and rocky-extras.repo: baseos, appstream, crb disabled, extras), trusting the lab's
    distribution key, imported into the rpm database as the installer does. Once: a root that has them keeps them."""
    import subprocess
    from pathlib import Path

    from rocm_fleet.lab.mirror import signing

    root = Path(root)
    key = f"/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-{system.major}"
    (root / key.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
    (root / key.lstrip("/")).write_bytes(signing.public_key(signing.DISTRO_KEY).read_bytes())

    def section(ident: str, title: str, directory: str, enabled: bool) -> str:
        return (
            f"[{ident}]\nname=Rocky Linux $releasever - {title}\n"
            f"baseurl={base_url}/{system.family}/$releasever/{directory}/$basearch/os/\n"
            f"gpgcheck=1\nenabled={int(enabled)}\ncountme=1\nmetadata_expire=6h\ngpgkey=file://{key}\n"
        )

    repos = root / "etc/yum.repos.d"
    repos.mkdir(parents=True, exist_ok=True)
    if (repos / "rocky.repo").exists():
        return  # written once, as the installer does: the host's own changes (crb enabled) stay
    header = "# The lab's Rocky Linux mirror (rocm-fleet lab; its key is lab-only).\n"
    (repos / "rocky.repo").write_text(
        header
        + section("baseos", "BaseOS", "BaseOS", True)
        + "\n"
        + section("appstream", "AppStream", "AppStream", True)
        + "\n"
        + section("crb", "CRB", "CRB", False)
    )
    (repos / "rocky-extras.repo").write_text(header + section("extras", "Extras", "extras", True))
    subprocess.run(
        ["rpm", "--root", str(root), "--dbpath", "/var/lib/rpm", "--import", str(root / key.lstrip("/"))],
        check=True,
        capture_output=True,
    )
